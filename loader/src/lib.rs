//! The Vulkan loader runtime: `libvulkan.so.1`.
//!
//! The generated crate (`vk-generated`, with its `trampolines` feature) provides the exported
//! trampolines and default terminators; this crate holds the policy, one module per concern.

#![allow(non_snake_case, non_camel_case_types, clippy::missing_safety_doc)]
// Loader objects handed out as handles are boxed inside their owners' Vecs so that their
// addresses, which are the handles, stay put while the Vecs change.
#![allow(clippy::vec_box)]

#[macro_use]
mod log;
mod debug;
mod debug_objects;
mod device;
mod device_filter;
mod direct_loading;
mod discovery;
mod driver;
mod elf;
mod emulation;
#[doc(hidden)]
pub mod explain;
mod ffi;
mod file_cache;
#[doc(hidden)]
pub mod fuzzing;
mod gpa;
mod handles;
mod host_alloc;
mod instance;
mod layer;
mod layer_catalog;
mod layer_chain;
mod layer_device_chain;
mod layer_extensions;
mod layer_load;
mod layer_manifest;
mod layer_pre_instance;
mod library_cache;
mod loader_abi;
mod manifest;
mod physical_device;
mod plan;
mod platform;
mod settings;
mod surface;
mod terminators;
mod unknown;

/// The generated trampolines and default terminators. Compiled into this crate only: they carry
/// the exported `vk*` symbols of `libvulkan.so.1`.
#[rustfmt::skip]
#[allow(clippy::all)] // generator output: its shape is the generator's concern
#[path = "../../generated/src/gen/trampolines.rs"]
mod trampolines;

/// Every allocation of the loader's Rust code: the application's `VkAllocationCallbacks` where a
/// command received them (see `host_alloc`).
#[global_allocator]
static ALLOCATOR: host_alloc::LoaderAllocator = host_alloc::LoaderAllocator;

/// The names the generated trampolines use (`crate::types`, `crate::loader_abi`).
use vk_generated::types;

/// Exports the hand-written commands under their C names, and from the same list builds
/// `hand_written`, which `vkGet*ProcAddr` answers them with.
macro_rules! export {
    ($($name:ident = $path:path : fn($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        $(
            #[no_mangle]
            pub unsafe extern "system" fn $name($($arg: $ty),*) $(-> $ret)? { $path($($arg),*) }
        )*

        /// The loader's implementation of a hand-written command, by canonical name: the exported
        /// function itself, so that `vkGet*ProcAddr` and `dlsym` agree on the address.
        pub(crate) fn hand_written(name: &std::ffi::CStr) -> PFN_vkVoidFunction {
            $(
                if name.to_bytes() == stringify!($name).as_bytes() {
                    // SAFETY: handed out as PFN_vkVoidFunction; callers cast back to the real type.
                    return Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>($name as *const ()) });
                }
            )*
            None
        }
    };
}

use std::ffi::c_char;
use types::*;

export! {
    vkCreateInstance = instance::vkCreateInstance: fn(a: *const VkInstanceCreateInfo, b: *const VkAllocationCallbacks, c: *mut VkInstance) -> VkResult;
    vkDestroyInstance = instance::vkDestroyInstance: fn(a: VkInstance, b: *const VkAllocationCallbacks);
    vkEnumerateInstanceVersion = instance::vkEnumerateInstanceVersion: fn(a: *mut u32) -> VkResult;
    vkEnumerateInstanceExtensionProperties = instance::vkEnumerateInstanceExtensionProperties: fn(a: *const c_char, b: *mut u32, c: *mut VkExtensionProperties) -> VkResult;
    vkEnumerateInstanceLayerProperties = instance::vkEnumerateInstanceLayerProperties: fn(a: *mut u32, b: *mut VkLayerProperties) -> VkResult;
    vkGetInstanceProcAddr = gpa::vkGetInstanceProcAddr: fn(a: VkInstance, b: *const c_char) -> PFN_vkVoidFunction;
    vkGetDeviceProcAddr = device::vkGetDeviceProcAddr: fn(a: VkDevice, b: *const c_char) -> PFN_vkVoidFunction;
    vkEnumeratePhysicalDevices = physical_device::vkEnumeratePhysicalDevices: fn(a: VkInstance, b: *mut u32, c: *mut VkPhysicalDevice) -> VkResult;
    vkEnumeratePhysicalDeviceGroups = physical_device::vkEnumeratePhysicalDeviceGroups: fn(a: VkInstance, b: *mut u32, c: *mut VkPhysicalDeviceGroupProperties) -> VkResult;
    vkEnumerateDeviceExtensionProperties = physical_device::vkEnumerateDeviceExtensionProperties: fn(a: VkPhysicalDevice, b: *const c_char, c: *mut u32, d: *mut VkExtensionProperties) -> VkResult;
    vkEnumerateDeviceLayerProperties = physical_device::vkEnumerateDeviceLayerProperties: fn(a: VkPhysicalDevice, b: *mut u32, c: *mut VkLayerProperties) -> VkResult;
    vkCreateDevice = device::vkCreateDevice: fn(a: VkPhysicalDevice, b: *const VkDeviceCreateInfo, c: *const VkAllocationCallbacks, d: *mut VkDevice) -> VkResult;
    vkDestroyDevice = device::vkDestroyDevice: fn(a: VkDevice, b: *const VkAllocationCallbacks);
}
