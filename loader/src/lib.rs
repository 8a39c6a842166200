//! The Vulkan loader runtime: `libvulkan.so.1`.
//!
//! The generated crate (`vk-generated`, with its `trampolines` feature) provides the exported
//! trampolines and default terminators; this crate holds the policy, one module per concern.

#![allow(non_snake_case, non_camel_case_types)]
// Loader objects handed out as handles are boxed inside their owners' Vecs so that their
// addresses, which are the handles, stay put while the Vecs change.
#![allow(clippy::vec_box)]

// The stages, each using only those above it in this list (`cargo xtask modules --check`).
#[doc(hidden)]
pub mod reference;
#[macro_use]
mod debug;
mod sort;
mod platform;
mod app_callbacks;
mod ffi;
mod plain;
mod given;
mod handles;
mod loader_abi;
mod manifest;
mod plan;
mod discover;
mod cache;
mod load;
mod lazy;
mod object;
mod wsi;
mod dispatch;
mod chain;
#[doc(hidden)]
pub mod api;
#[doc(hidden)]
pub mod fuzzing;

/// The generated trampolines and default terminators. Compiled into this crate only: they carry
/// the exported `vk*` symbols of `libvulkan.so.1`.
#[rustfmt::skip]
#[allow(clippy::all)] // generator output: its shape is the generator's concern
#[path = "../../generated/src/gen/trampolines.rs"]
mod trampolines;

/// Every allocation of the loader's Rust code: the application's `VkAllocationCallbacks` where a
/// command received them (see `platform::host_alloc`).
#[global_allocator]
static ALLOCATOR: platform::host_alloc::LoaderAllocator = platform::host_alloc::LoaderAllocator;

/// The names the generated trampolines use (`crate::types`, `crate::loader_abi`).
use vk_generated::types;

/// Exports the hand-written commands under their C names, and from the same list builds
/// `hand_written`, which `vkGet*ProcAddr` answers them with.
macro_rules! export {
    ($($name:ident = $path:path : fn($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`, exported: `", stringify!($path), "`.")]
            ///
            /// # Safety
            /// The contract of the function it forwards to: Vulkan's valid usage of the command.
            #[no_mangle]
            pub unsafe extern "system" fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: the caller keeps the contract of this function, which is the callee's.
                unsafe { $path($($arg),*) }
            }
        )*

        /// The loader's implementation of a hand-written command, by command id: the exported
        /// function itself, so that `vkGet*ProcAddr` and `dlsym` agree on the address. (One
        /// match on the id the name lookup found, not a string compare per command.) Each export
        /// is checked against its command's `PFN_*` type here (`vk_generated::erase`).
        pub(crate) fn hand_written(command: u16) -> PFN_vkVoidFunction {
            match command {
                $(vk_generated::command_id::$name => vk_generated::erase::$name(Some($name)),)*
                _ => None,
            }
        }
    };
}

use std::ffi::c_char;
use types::*;

export! {
    vkCreateInstance = api::instance::vkCreateInstance: fn(a: *const VkInstanceCreateInfo, b: *const VkAllocationCallbacks, c: *mut VkInstance) -> VkResult;
    vkDestroyInstance = api::instance::vkDestroyInstance: fn(a: VkInstance, b: *const VkAllocationCallbacks);
    vkEnumerateInstanceVersion = api::instance::vkEnumerateInstanceVersion: fn(a: *mut u32) -> VkResult;
    vkEnumerateInstanceExtensionProperties = api::instance::vkEnumerateInstanceExtensionProperties: fn(a: *const c_char, b: *mut u32, c: *mut VkExtensionProperties) -> VkResult;
    vkEnumerateInstanceLayerProperties = api::instance::vkEnumerateInstanceLayerProperties: fn(a: *mut u32, b: *mut VkLayerProperties) -> VkResult;
    vkGetInstanceProcAddr = api::gpa::vkGetInstanceProcAddr: fn(a: VkInstance, b: *const c_char) -> PFN_vkVoidFunction;
    vkGetDeviceProcAddr = api::device::vkGetDeviceProcAddr: fn(a: VkDevice, b: *const c_char) -> PFN_vkVoidFunction;
    vkEnumeratePhysicalDevices = api::physical_device::vkEnumeratePhysicalDevices: fn(a: VkInstance, b: *mut u32, c: *mut VkPhysicalDevice) -> VkResult;
    vkEnumeratePhysicalDeviceGroups = api::physical_device::vkEnumeratePhysicalDeviceGroups: fn(a: VkInstance, b: *mut u32, c: *mut VkPhysicalDeviceGroupProperties) -> VkResult;
    vkEnumerateDeviceExtensionProperties = api::physical_device::vkEnumerateDeviceExtensionProperties: fn(a: VkPhysicalDevice, b: *const c_char, c: *mut u32, d: *mut VkExtensionProperties) -> VkResult;
    vkEnumerateDeviceLayerProperties = chain::physical_devices::terminator_EnumerateDeviceLayerProperties: fn(a: VkPhysicalDevice, b: *mut u32, c: *mut VkLayerProperties) -> VkResult;
    vkCreateDevice = api::device::vkCreateDevice: fn(a: VkPhysicalDevice, b: *const VkDeviceCreateInfo, c: *const VkAllocationCallbacks, d: *mut VkDevice) -> VkResult;
    vkDestroyDevice = api::device::vkDestroyDevice: fn(a: VkDevice, b: *const VkAllocationCallbacks);
}
