//! The project's test driver (ICD): a small, configurable Vulkan driver that loader tests point
//! their manifests at. It draws nothing; it reports the physical devices the environment asks
//! for, creates real dispatchable objects, and counts draws so a test can see calls arrive.
//!
//! It exports only the `vk_icd*` entry points; every Vulkan command is reached through them.
//! See README.md for the environment variables.

#![warn(missing_docs)]
#![allow(non_snake_case)]
// Objects are boxed inside their owners' Vecs so that their addresses, which are their handles,
// stay put while the Vecs change.
#![allow(clippy::vec_box)]

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};

use vk_generated::types::{PFN_vkVoidFunction, VkInstance, VkResult};

mod config;
mod debug;
mod device;
mod display;
mod ffi;
mod instance;
mod surface;
pub mod synthetic;

/// No interface version negotiated yet: the loader is a legacy one (interface 0 or 1).
const NOT_NEGOTIATED: u32 = u32::MAX;
static NEGOTIATED_VERSION: AtomicU32 = AtomicU32::new(NOT_NEGOTIATED);

/// The interface version agreed with the loader (1 for a loader that never negotiated).
pub(crate) fn interface_version() -> u32 {
    match NEGOTIATED_VERSION.load(Ordering::Relaxed) {
        NOT_NEGOTIATED => 1,
        v => v,
    }
}

/// Runs `f`, turning a panic into `on_panic`: no panic may unwind into the caller.
pub(crate) fn guard<R>(on_panic: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// `vk_icdNegotiateLoaderICDInterfaceVersion`: `*pSupportedVersion` is the loader's newest
/// version in, the version both sides use out.
///
/// # Safety
/// The loader interface's requirement: `pSupportedVersion` is valid for a read and a write. A
/// NULL one is answered with `VK_ERROR_INCOMPATIBLE_DRIVER`.
#[no_mangle]
pub unsafe extern "system" fn vk_icdNegotiateLoaderICDInterfaceVersion(
    pSupportedVersion: *mut u32,
) -> VkResult {
    guard(VkResult::ERROR_INCOMPATIBLE_DRIVER, || {
        if pSupportedVersion.is_null() || config::fail_negotiate() {
            return VkResult::ERROR_INCOMPATIBLE_DRIVER;
        }
        // SAFETY: a non-NULL `pSupportedVersion` is readable and writable (this function's
        // contract).
        let version = unsafe {
            let version = pSupportedVersion.read().min(config::max_interface_version());
            pSupportedVersion.write(version);
            version
        };
        NEGOTIATED_VERSION.store(version, Ordering::Relaxed);
        VkResult::SUCCESS
    })
}

/// `vk_icdGetInstanceProcAddr`: global commands (and the `vk_icd*` entry points) for a NULL
/// instance; every command the driver implements, device-level ones included, for a real one.
///
/// # Safety
/// Valid usage of `vkGetInstanceProcAddr`: `pName` is a NUL-terminated string (NULL is answered
/// with NULL). `instance` is only compared with NULL.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetInstanceProcAddr(
    instance: VkInstance,
    pName: *const c_char,
) -> PFN_vkVoidFunction {
    guard(None, || {
        // SAFETY: `pName` is NULL or NUL-terminated (this function's contract).
        unsafe {
            find(pName, |level| {
                matches!(level, Level::Global | Level::Icd) || !instance.is_null()
            })
        }
    })
}

/// `vk_icdGetPhysicalDeviceProcAddr`: only commands whose first parameter is a `VkPhysicalDevice`.
///
/// # Safety
/// The loader interface's requirement: `pName` is a NUL-terminated string (NULL is answered with
/// NULL). `instance` is not used.
#[no_mangle]
pub unsafe extern "system" fn vk_icdGetPhysicalDeviceProcAddr(
    _instance: VkInstance,
    pName: *const c_char,
) -> PFN_vkVoidFunction {
    // SAFETY: `pName` is NULL or NUL-terminated (this function's contract).
    guard(None, || unsafe { find(pName, |level| level == Level::PhysicalDevice) })
}

/// `vkGetDeviceProcAddr`: only commands whose first parameter is a `VkDevice`, `VkQueue` or
/// `VkCommandBuffer`, including the test-only `vkGetTestDriverDrawCountTEST`.
///
/// # Safety
/// `pName` is NULL or a NUL-terminated string.
pub(crate) unsafe fn device_proc_addr(pName: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: this function's contract.
    unsafe { find(pName, |level| level == Level::Device) }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Level {
    /// The loader interface itself (`vk_icd*`, `vkGetInstanceProcAddr`).
    Icd,
    Global,
    Instance,
    PhysicalDevice,
    Device,
}

struct Entry {
    name: &'static CStr,
    level: Level,
    function: unsafe extern "system" fn(),
}

/// The function named `name` if its level is one `accept` takes (none for a NULL `name`).
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
unsafe fn find(name: *const c_char, accept: impl Fn(Level) -> bool) -> PFN_vkVoidFunction {
    // SAFETY: this function's contract.
    let name = unsafe { ffi::c_str(name) }?;
    entries_named(name)
        .iter()
        .map(|&i| &ENTRIES[i])
        .find(|e| accept(e.level))
        .filter(|e| !matches!(e.level, Level::Instance | Level::PhysicalDevice) || provided(name))
        .filter(|_| !config::withholds(name.to_bytes()))
        .map(|e| e.function)
        .or_else(|| synthetic::find(name, &accept))
}

/// The entries with this name (indices into `ENTRIES`), through a hash map: real drivers answer
/// GetProcAddr from generated hash tables, and a linear scan here would make every name a loader
/// asks about (benchmarks ask hundreds) cost the driver far more than it does in practice.
fn entries_named(name: &CStr) -> &'static [usize] {
    type ByName = std::collections::HashMap<&'static [u8], Vec<usize>, std::hash::BuildHasherDefault<NameHasher>>;
    static BY_NAME: std::sync::OnceLock<ByName> = std::sync::OnceLock::new();
    let map = BY_NAME.get_or_init(|| {
        let mut map = ByName::default();
        for (i, e) in ENTRIES.iter().enumerate() {
            map.entry(e.name.to_bytes()).or_default().push(i);
        }
        map
    });
    map.get(name.to_bytes()).map_or(&[], Vec::as_slice)
}

/// The generated lookup's name hash as a `Hasher` (std's default SipHash would be most of the cost
/// of a GetProcAddr here).
#[derive(Default)]
struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = self.0.rotate_left(5) ^ u64::from(vk_generated::lookup::hash(bytes));
    }

    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Whether the driver's API version and advertised extensions provide a registry command (always,
/// unless `VK_TEST_DRIVER_STRICT_ENTRY_POINTS=1`; names the registry does not know always are).
fn provided(name: &CStr) -> bool {
    if !config::strict_entry_points() {
        return true;
    }
    let Some(command) = vk_generated::lookup::command(name.to_bytes()) else { return true };
    let mut advertised = vk_generated::lookup::ExtensionSet::new();
    for extension in config::instance_extensions().iter().chain(&config::device_extensions()) {
        advertised.insert_name(extension.as_bytes());
    }
    command.is_available(config::api_version(), &advertised)
}

macro_rules! entries {
    ($($level:ident $name:literal => $function:path,)*) => {
        static ENTRIES: &[Entry] = &[$(
            Entry {
                name: $name,
                level: Level::$level,
                // SAFETY: only ever called back through the signature its name gives it.
                function: unsafe {
                    std::mem::transmute::<*const (), unsafe extern "system" fn()>($function as *const ())
                },
            },
        )*];
    };
}

entries! {
    Icd c"vk_icdNegotiateLoaderICDInterfaceVersion" => vk_icdNegotiateLoaderICDInterfaceVersion,
    Icd c"vk_icdGetInstanceProcAddr" => vk_icdGetInstanceProcAddr,
    Icd c"vk_icdGetPhysicalDeviceProcAddr" => vk_icdGetPhysicalDeviceProcAddr,
    Icd c"vkGetInstanceProcAddr" => vk_icdGetInstanceProcAddr,
    Global c"vkCreateInstance" => instance::vkCreateInstance,
    Global c"vkEnumerateInstanceExtensionProperties" => instance::vkEnumerateInstanceExtensionProperties,
    Global c"vkEnumerateInstanceVersion" => instance::vkEnumerateInstanceVersion,
    Instance c"vkDestroyInstance" => instance::vkDestroyInstance,
    Instance c"vkEnumeratePhysicalDevices" => instance::vkEnumeratePhysicalDevices,
    Instance c"vkCreateDebugUtilsMessengerEXT" => debug::vkCreateDebugUtilsMessengerEXT,
    Instance c"vkDestroyDebugUtilsMessengerEXT" => debug::vkDestroyDebugUtilsMessengerEXT,
    Instance c"vkEnumeratePhysicalDeviceGroups" => instance::vkEnumeratePhysicalDeviceGroups,
    Instance c"vkEnumeratePhysicalDeviceGroupsKHR" => instance::vkEnumeratePhysicalDeviceGroups,
    PhysicalDevice c"vkGetPhysicalDeviceProperties" => instance::vkGetPhysicalDeviceProperties,
    PhysicalDevice c"vkGetPhysicalDeviceProperties2" => instance::vkGetPhysicalDeviceProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceProperties2KHR" => instance::vkGetPhysicalDeviceProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceFeatures" => instance::vkGetPhysicalDeviceFeatures,
    PhysicalDevice c"vkGetPhysicalDeviceFeatures2" => instance::vkGetPhysicalDeviceFeatures2,
    PhysicalDevice c"vkGetPhysicalDeviceFeatures2KHR" => instance::vkGetPhysicalDeviceFeatures2,
    PhysicalDevice c"vkGetPhysicalDeviceQueueFamilyProperties" => instance::vkGetPhysicalDeviceQueueFamilyProperties,
    PhysicalDevice c"vkGetPhysicalDeviceQueueFamilyProperties2" => instance::vkGetPhysicalDeviceQueueFamilyProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceQueueFamilyProperties2KHR" => instance::vkGetPhysicalDeviceQueueFamilyProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceMemoryProperties" => instance::vkGetPhysicalDeviceMemoryProperties,
    PhysicalDevice c"vkGetPhysicalDeviceMemoryProperties2" => instance::vkGetPhysicalDeviceMemoryProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceMemoryProperties2KHR" => instance::vkGetPhysicalDeviceMemoryProperties2,
    PhysicalDevice c"vkGetPhysicalDeviceFormatProperties" => instance::vkGetPhysicalDeviceFormatProperties,
    PhysicalDevice c"vkGetPhysicalDeviceImageFormatProperties" => instance::vkGetPhysicalDeviceImageFormatProperties,
    PhysicalDevice c"vkGetPhysicalDeviceSparseImageFormatProperties" => instance::vkGetPhysicalDeviceSparseImageFormatProperties,
    PhysicalDevice c"vkEnumerateDeviceExtensionProperties" => instance::vkEnumerateDeviceExtensionProperties,
    PhysicalDevice c"vkCreateDevice" => device::vkCreateDevice,
    PhysicalDevice c"vkGetTestDriverRequestedApiVersionTEST" => instance::vkGetTestDriverRequestedApiVersionTEST,
    Instance c"vkCreateHeadlessSurfaceEXT" => surface::vkCreateHeadlessSurfaceEXT,
    Instance c"vkCreateXcbSurfaceKHR" => surface::vkCreateXcbSurfaceKHR,
    Instance c"vkCreateDisplayPlaneSurfaceKHR" => surface::vkCreateDisplayPlaneSurfaceKHR,
    Instance c"vkDestroySurfaceKHR" => surface::vkDestroySurfaceKHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfaceSupportKHR" => surface::vkGetPhysicalDeviceSurfaceSupportKHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR" => surface::vkGetPhysicalDeviceSurfaceCapabilitiesKHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfaceFormatsKHR" => surface::vkGetPhysicalDeviceSurfaceFormatsKHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfacePresentModesKHR" => surface::vkGetPhysicalDeviceSurfacePresentModesKHR,
    PhysicalDevice c"vkGetPhysicalDevicePresentRectanglesKHR" => surface::vkGetPhysicalDevicePresentRectanglesKHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfaceCapabilities2KHR" => surface::vkGetPhysicalDeviceSurfaceCapabilities2KHR,
    PhysicalDevice c"vkGetPhysicalDeviceSurfaceFormats2KHR" => surface::vkGetPhysicalDeviceSurfaceFormats2KHR,
    PhysicalDevice c"vkGetPhysicalDeviceDisplayPropertiesKHR" => display::vkGetPhysicalDeviceDisplayPropertiesKHR,
    PhysicalDevice c"vkGetPhysicalDeviceDisplayPlanePropertiesKHR" => display::vkGetPhysicalDeviceDisplayPlanePropertiesKHR,
    PhysicalDevice c"vkGetDisplayModePropertiesKHR" => display::vkGetDisplayModePropertiesKHR,
    PhysicalDevice c"vkGetDisplayPlaneCapabilitiesKHR" => display::vkGetDisplayPlaneCapabilitiesKHR,
    PhysicalDevice c"vkGetPhysicalDeviceDisplayProperties2KHR" => display::vkGetPhysicalDeviceDisplayProperties2KHR,
    PhysicalDevice c"vkGetPhysicalDeviceDisplayPlaneProperties2KHR" => display::vkGetPhysicalDeviceDisplayPlaneProperties2KHR,
    PhysicalDevice c"vkGetDisplayModeProperties2KHR" => display::vkGetDisplayModeProperties2KHR,
    PhysicalDevice c"vkGetDisplayPlaneCapabilities2KHR" => display::vkGetDisplayPlaneCapabilities2KHR,
    Device c"vkCreateSwapchainKHR" => surface::vkCreateSwapchainKHR,
    Device c"vkCreateSharedSwapchainsKHR" => surface::vkCreateSharedSwapchainsKHR,
    Device c"vkDestroySwapchainKHR" => surface::vkDestroySwapchainKHR,
    Device c"vkGetDeviceGroupSurfacePresentModesKHR" => surface::vkGetDeviceGroupSurfacePresentModesKHR,
    Device c"vkGetDeviceProcAddr" => device::vkGetDeviceProcAddr,
    Device c"vkDestroyDevice" => device::vkDestroyDevice,
    Device c"vkGetDeviceQueue" => device::vkGetDeviceQueue,
    Device c"vkDeviceWaitIdle" => device::vkDeviceWaitIdle,
    Device c"vkQueueWaitIdle" => device::vkQueueWaitIdle,
    Device c"vkQueueSubmit" => device::vkQueueSubmit,
    Device c"vkCreateCommandPool" => device::vkCreateCommandPool,
    Device c"vkDestroyCommandPool" => device::vkDestroyCommandPool,
    Device c"vkAllocateCommandBuffers" => device::vkAllocateCommandBuffers,
    Device c"vkFreeCommandBuffers" => device::vkFreeCommandBuffers,
    Device c"vkBeginCommandBuffer" => device::vkBeginCommandBuffer,
    Device c"vkEndCommandBuffer" => device::vkEndCommandBuffer,
    Device c"vkCmdDraw" => device::vkCmdDraw,
    Device c"vkCmdDispatch" => device::vkCmdDispatch,
    Device c"vkCmdPipelineBarrier" => device::vkCmdPipelineBarrier,
    Device c"vkGetTestDriverDrawCountTEST" => device::vkGetTestDriverDrawCountTEST,
    Device c"vkSetDebugUtilsObjectNameEXT" => debug::vkSetDebugUtilsObjectNameEXT,
    Device c"vkSetDebugUtilsObjectTagEXT" => debug::vkSetDebugUtilsObjectTagEXT,
    Device c"vkDebugMarkerSetObjectNameEXT" => debug::vkDebugMarkerSetObjectNameEXT,
    Device c"vkDebugMarkerSetObjectTagEXT" => debug::vkDebugMarkerSetObjectTagEXT,
}

/// Copies `src` into a fixed C string field, zero-filled and always NUL-terminated.
pub(crate) fn write_c_string(dst: &mut [c_char], src: &str) {
    dst.fill(0);
    let n = src.len().min(dst.len().saturating_sub(1));
    for (d, &s) in dst.iter_mut().zip(&src.as_bytes()[..n]) {
        *d = s as c_char;
    }
}

/// Copies a device or extension name into its fixed field as [`write_c_string`] does, or, with
/// the fault `unterminated_names`, padded with `#` to the field's last byte and no NUL (a
/// driver that fills the field whole: whoever reads it must stop at its end).
pub(crate) fn write_name(dst: &mut [c_char], src: &str) {
    if !config::fault("unterminated_names") {
        return write_c_string(dst, src);
    }
    dst.fill(b'#' as c_char);
    for (d, &s) in dst.iter_mut().zip(src.as_bytes()) {
        *d = s as c_char;
    }
}
