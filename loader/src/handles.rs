//! Handle validation for the loader's own dispatchable objects (`VkInstance`, `VkPhysicalDevice`):
//! each carries a magic word right after its dispatch pointer, and every loader entry point taking
//! one checks it first. A bad handle stops the process with the command and the valid-usage ID
//! (`vkEnumeratePhysicalDevices: Invalid instance [VUID-vkEnumeratePhysicalDevices-instance-parameter]`)
//! instead of crashing somewhere below. NULL and misaligned pointers are caught before any read;
//! a wild pointer that happens to be aligned is read once, at the magic word.
//!
//! Device-level handles belong to drivers and are not checked: that path stays one load and one jump.

use core::ffi::c_void;

use crate::debug::log::{self, Level};

/// "VkLdInst" in memory: easy to spot in a debugger.
pub const INSTANCE_MAGIC: u64 = u64::from_le_bytes(*b"VkLdInst");
/// "VkLdPhys" in memory.
pub const PHYSICAL_DEVICE_MAGIC: u64 = u64::from_le_bytes(*b"VkLdPhys");

/// The start of every loader-owned dispatchable object: the dispatch pointer (the loader ABI's
/// first word), then the magic word. The objects declare the two fields themselves; const
/// assertions beside them keep the offsets equal to these.
#[repr(C)]
pub struct HandleHeader {
    pub dispatch: *const c_void,
    pub magic: u64,
}

/// Whether `handle` points to a live loader object whose magic word is `magic`.
///
/// # Safety
/// `handle` is NULL, misaligned, or readable for a `HandleHeader` (Vulkan's valid usage makes a
/// dispatchable handle a pointer to an object whose first word is the dispatch pointer; a loader
/// object's second word is the magic).
#[inline(always)]
pub unsafe fn has_magic(handle: *mut c_void, magic: u64) -> bool {
    let header = handle as *const HandleHeader;
    // SAFETY: not NULL and aligned, so by the caller's contract readable for a `HandleHeader`.
    !header.is_null() && header.is_aligned() && unsafe { (*header).magic } == magic
}

/// The magic word of what `handle` points to, read as a loader object's (`None`: NULL or
/// misaligned, nothing read).
///
/// # Safety
/// As for [`has_magic`].
pub unsafe fn magic_word(handle: *mut c_void) -> Option<u64> {
    let header = handle as *const HandleHeader;
    // SAFETY: not NULL and aligned, so by the caller's contract readable for a `HandleHeader`.
    (!header.is_null() && header.is_aligned()).then(|| unsafe { (*header).magic })
}

/// Reports an invalid handle and aborts (the Khronos loader's behaviour: there is no safe way on).
#[cold]
#[inline(never)]
pub fn invalid_handle(command: &str, param: &str) -> ! {
    log::fatal(Level::Error, &format!("{command}: Invalid {param} [VUID-{command}-{param}-parameter]"));
    // The command's other names (`...KHR`, `...EXT`) share its trampoline, which cannot tell by
    // which one it was called: each is named too, with its own valid-usage ID, then why.
    let aliases = vk_generated::lookup::command(command.as_bytes()).map(|name| name.info().aliases());
    if let Some(aliases) = aliases.filter(|a| a.len() > 0) {
        let mut names = vec![command.to_string()];
        for alias in aliases {
            let alias = alias.to_string_lossy();
            log::fatal(Level::Error, &format!("{alias}: Invalid {param} [VUID-{alias}-{param}-parameter]"));
            names.push(alias.into_owned());
        }
        log::fatal(Level::Error, &format!("({} are one function: the name it was called by is not known)", names.join(", ")));
    }
    std::process::abort()
}

/// A device command called through a function the device lacks (its extension or Vulkan version
/// was not enabled on it, or the driver does not have it): reported and stopped, as calling
/// through the driver's NULL pointer would crash with no word of why (the Khronos loader crashes
/// or aborts here too).
#[cold]
#[inline(never)]
pub fn missing_device_function(command: &str) -> ! {
    log::fatal(
        Level::Error,
        &format!("{command}: the device has no such function (was its extension or Vulkan version enabled on the device?); stopping"),
    );
    std::process::abort()
}

/// Stops unless `handle` is a `VkInstance` of this loader.
///
/// # Safety
/// As for [`has_magic`].
#[inline(always)]
pub unsafe fn check_instance(handle: *mut c_void, command: &str, param: &str) {
    // SAFETY: the caller's contract is `has_magic`'s.
    if !unsafe { has_magic(handle, INSTANCE_MAGIC) } {
        invalid_handle(command, param)
    }
}

/// Stops unless `handle` is a `VkPhysicalDevice` of this loader.
///
/// # Safety
/// As for [`has_magic`].
#[inline(always)]
pub unsafe fn check_physical_device(handle: *mut c_void, command: &str, param: &str) {
    // SAFETY: the caller's contract is `has_magic`'s.
    if !unsafe { has_magic(handle, PHYSICAL_DEVICE_MAGIC) } {
        invalid_handle(command, param)
    }
}
