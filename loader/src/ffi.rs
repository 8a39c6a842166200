//! Helpers for the `extern "system"` boundary: no panic crosses it, and array queries follow
//! Vulkan's two-call idiom with `VK_INCOMPLETE`.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use vk_generated::types::{VkBaseInStructure, VkExtensionProperties, VkPhysicalDeviceGroupProperties, VkResult, VkStructureType};

use crate::debug::log::{self, Level};

/// Runs an entry point's body; a panic becomes a logged `fallback` instead of unwinding into C.
pub fn guard<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            log::write(Level::Error, &format!("{name}: internal error (panic caught at the API boundary)"));
            fallback
        }
    }
}

/// Vulkan's two-call idiom: with `out` NULL, report the count; else copy up to `*count` items and
/// return `VK_INCOMPLETE` if that was not all of them.
///
/// # Safety
/// `count` must be valid; `out`, if non-null, must hold `*count` items.
pub unsafe fn fill<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> VkResult {
    if count.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if out.is_null() {
        *count = items.len() as u32;
        return VkResult::SUCCESS;
    }
    let n = (*count as usize).min(items.len());
    std::ptr::copy_nonoverlapping(items.as_ptr(), out, n);
    *count = n as u32;
    if n < items.len() { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
}

/// How often [`query`] asks again after `VK_INCOMPLETE` (the list grew between the calls) before
/// it gives up on a driver or layer that never completes.
const QUERY_ATTEMPTS: usize = 8;

/// Calls a driver's two-call query until it stops returning `VK_INCOMPLETE` (at most
/// [`QUERY_ATTEMPTS`] times; then `Err(VK_INCOMPLETE)`).
pub fn query<T: Copy + Default>(mut call: impl FnMut(*mut u32, *mut T) -> VkResult) -> Result<Vec<T>, VkResult> {
    for _ in 0..QUERY_ATTEMPTS {
        let mut count = 0u32;
        let result = call(&mut count, std::ptr::null_mut());
        if result != VkResult::SUCCESS {
            return Err(result);
        }
        let mut items = vec![T::default(); count as usize];
        match call(&mut count, items.as_mut_ptr()) {
            VkResult::SUCCESS => {
                items.truncate(count as usize);
                return Ok(items);
            }
            VkResult::INCOMPLETE => continue,
            error => return Err(error),
        }
    }
    Err(VkResult::INCOMPLETE)
}

/// `$f` as the `PFN_vkVoidFunction` of command `$name` (usable in constants): it compiles only if
/// `$f` is a function of the command's `PFN_*` type (`vk_generated::erase`), so no signature is
/// erased unchecked.
macro_rules! erased {
    ($name:ident => $f:path) => {
        vk_generated::erase::$name(Some($f))
    };
}

pub(crate) use erased;

/// A loader terminator as `(command id, erased function)`: the name is checked against the
/// registry and the function against the command's `PFN_*` type when this compiles, and the table
/// is filled without a name lookup.
macro_rules! terminator {
    ($name:ident => $f:path) => {
        (vk_generated::command_id::$name, $crate::ffi::erased!($name => $f))
    };
}

pub(crate) use terminator;

/// A string a driver or layer wrote into a fixed-size array (`deviceName`, `extensionName`): its
/// bytes up to the first NUL, or the first `N - 1` where the array holds none (what a
/// NUL-terminated copy in such an array keeps). Nothing past the array is read.
pub fn fixed_str<const N: usize>(array: &[c_char; N]) -> &[u8] {
    // SAFETY: `c_char` and `u8` have the same size and alignment; the view covers the array only.
    let bytes = unsafe { &*(array as *const [c_char; N] as *const [u8; N]) };
    match CStr::from_bytes_until_nul(bytes) {
        Ok(name) => name.to_bytes(),
        Err(_) => &bytes[..N.saturating_sub(1)],
    }
}

/// An extension's name, bounded by its array (see [`fixed_str`]).
pub fn name_of(props: &VkExtensionProperties) -> &[u8] {
    fixed_str(&props.extensionName)
}

pub fn extension_properties(name: &CStr, spec_version: u32) -> VkExtensionProperties {
    extension_properties_of(name.to_bytes(), spec_version)
}

/// [`extension_properties`] from the name's bytes (no NUL among them), cut where the array must
/// keep its terminating NUL.
pub fn extension_properties_of(name: &[u8], spec_version: u32) -> VkExtensionProperties {
    let mut props = VkExtensionProperties { specVersion: spec_version, ..Default::default() };
    let room = props.extensionName.len() - 1;
    for (dst, &src) in props.extensionName[..room].iter_mut().zip(name) {
        *dst = src as c_char;
    }
    props
}

/// The names in an array of C strings.
pub unsafe fn names<'a>(list: *const *const c_char, count: u32) -> Vec<&'a CStr> {
    if list.is_null() {
        return Vec::new();
    }
    (0..count as usize).filter_map(|i| (*list.add(i)).as_ref().map(|p| CStr::from_ptr(p))).collect()
}

/// A create-info `pNext` without the loader's own chain structures at its head (drivers do not
/// need them).
pub unsafe fn skip_loader_structs(mut next: *const c_void, loader_type: VkStructureType) -> *const c_void {
    while let Some(header) = (next as *const VkBaseInStructure).as_ref() {
        if header.sType != loader_type {
            break;
        }
        next = header.pNext as *const c_void;
    }
    next
}

/// Writes physical-device groups into the application's structures, keeping their sType and
/// pNext; `VK_INCOMPLETE` when they are fewer than the groups.
///
/// # Safety
/// `count` must be valid; `out` NULL or an array of `*count` structures.
pub unsafe fn fill_groups(all: &[VkPhysicalDeviceGroupProperties], count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties) -> VkResult {
    if out.is_null() {
        *count = all.len() as u32;
        return VkResult::SUCCESS;
    }
    let n = (*count as usize).min(all.len());
    for (i, group) in all.iter().take(n).enumerate() {
        let target = &mut *out.add(i);
        target.physicalDeviceCount = group.physicalDeviceCount;
        target.physicalDevices = group.physicalDevices;
        target.subsetAllocation = group.subsetAllocation;
    }
    *count = n as u32;
    if n < all.len() { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
}

#[cfg(test)]
mod tests {
    use super::guard;

    /// A panic in the body becomes the fallback (the unwinder linked in from libgcc_eh.a, see
    /// build.rs, unwinds it); a body that returns is its own value.
    #[test]
    fn guard_turns_a_panic_into_the_fallback() {
        // (The default hook prints the panic; replacing it would hide other tests' panics.)
        assert_eq!(guard("test", 7, || -> i32 { panic!("boom") }), 7);
        assert_eq!(guard("test", 7, || 3), 3);
    }

    /// A name that fills its array to the last byte is cut where a terminated copy must end.
    #[test]
    fn fixed_str_stops_at_the_nul_or_the_end_of_the_array() {
        let mut array = [b'x' as std::ffi::c_char; 8];
        assert_eq!(super::fixed_str(&array), b"xxxxxxx");
        array[3] = 0;
        assert_eq!(super::fixed_str(&array), b"xxx");
        assert_eq!(super::fixed_str(&[0; 4]), b"");
    }
}
