//! The Rust layer SDK: write a Vulkan layer as two objects with hook methods.
//!
//! A layer implements [`Layer`]: a per-instance object ([`InstanceHooks`]) and a per-device object
//! ([`DeviceHooks`]), each with a `#[vk_layer::hooks]` block of the hook methods it implements;
//! the commands those methods hook are listed from them ([`hooks`]), so a hook cannot be written
//! and forgotten. Every hook method has a pass-through default and gets the next level's dispatch
//! table: `pre_call_validate_*` may skip the call with a result, `pre_call_record_*` runs before
//! the call goes down, `call_down_*` is the call (and may change what goes down or answer itself),
//! `post_call_record_*` runs after, with its result. [`declare_layer!`] exports the
//! layer's entry points; [`Manifest`] writes its JSON manifest.
//!
//! A hooks block without `#[vk_layer::hooks]` is no layer object (no hook of it could be left
//! out of the list silently), so this does not compile:
//!
//! ```compile_fail
//! # use vk_layer::vk::types::*;
//! struct Device;
//! impl vk_layer::DeviceHooks for Device {
//!     fn pre_call_record_cmd_draw(&self, _: &vk_layer::vk::DeviceDispatchTable, _: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {}
//! }
//! fn device_object<T: vk_layer::DeviceHooks + vk_layer::DeviceHooked>() {}
//! device_object::<Device>();
//! ```
//!
//! and neither does an `intercept` of a command that has no hooks at that level:
//!
//! ```compile_fail
//! struct Device;
//! #[vk_layer::hooks(intercept(enumerate_physical_devices))]
//! impl vk_layer::DeviceHooks for Device {}
//! ```
//!
//! nor a family of `intercept` that names no command of its level:
//!
//! ```compile_fail
//! struct Device;
//! #[vk_layer::hooks(intercept(cmd_drew*))]
//! impl vk_layer::DeviceHooks for Device {}
//! const _: &[u16] = <Device as vk_layer::DeviceHooked>::COMMANDS;
//! ```
//!
//! The hook traits and their entry points are generated from `vk.xml` (`layer/src/gen/`, by
//! `cargo xtask regen`); the chassis around them ([`chassis`]) is written by hand: negotiation, the
//! chain-info walk, state per dispatch pointer ([`dispatch_map`]), `vkGet*ProcAddr` answering only
//! the hooked commands, and a guard on every entry point so that no panic reaches the caller.

// The generator documents what it emits (hook methods, hook ids), so the whole public surface is
// held to this, generated or not.
#![warn(missing_docs)]

// `#[vk_layer::hooks]` names this crate as `::vk_layer`, also in its own tests.
extern crate self as vk_layer;

// The README's example layer compiles as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub mod chain;
pub mod chassis;
mod chassis_report;
pub mod create_info;
pub mod dispatch_map;
mod entries;
mod guard;
mod hooks;
mod manifest;
pub mod report;
pub mod settings;
mod scratch;
mod state;
mod templates;
mod unknown;
mod unwrap;
mod wrap;
mod wrappers;

pub use chain::{DeviceLink, InstanceLink};
pub use chassis_report::report;
pub use create_info::{DeviceCreateInfo, InstanceCreateInfo};
pub use entries::hook_entries;
pub use guard::{guard, Fallback};
pub use hooks::{
    check_hooks, device_hook_ids, instance_hook_ids, selected_hooks, selected_hooks_len,
    DeviceHooked, DeviceHooks, InstanceHooked, InstanceHooks, DEVICE_HOOKABLE, DEVICE_HOOK_NAMES,
    INSTANCE_HOOKABLE, INSTANCE_HOOK_NAMES,
};
pub use manifest::{
    write_manifest_beside, Manifest, ManifestExtension, LAYER_SETTINGS_EXTENSION,
    TOOLING_INFO_EXTENSION,
};
pub use settings::{Setting, SettingType, Settings};
pub use state::{
    extension_properties, fill_array, Chassis, DeviceState, InstanceState, Layer, LayerProperties,
    NextInstanceExtensions, NextInstanceLayers, NextInstanceVersion, ProcAddr, Registered,
};
pub use unwrap::{DispatchableHandle, NonDispatchableHandle, NOT_UNWRAPPED};
pub use wrap::{NOT_WRAPPED, WRAP_EXCEPTIONS};
pub use wrappers::Wrappers;
pub use vk_generated as vk;
/// On `impl InstanceHooks for T` / `impl DeviceHooks for T`: the commands whose hook methods the
/// block implements become the layer's hooked commands; `#[vk_layer::hooks(intercept(cmd, ...))]`
/// adds commands without hook methods (a handle-wrapping layer's unwrapping), `intercept(cmd_*)`
/// every hookable command of the level whose method suffix starts with `cmd_`, `intercept(*)`
/// every one of the level. Every hooks block
/// needs it: without it the type lacks [`InstanceHooked`] / [`DeviceHooked`] and the layer does
/// not compile.
pub use vk_layer_macros::hooks;

/// Exports a layer's entry points from the library it is built into (a `cdylib`), with the
/// layer's static [`Chassis`]. Fails to compile when a hook list names a command without
/// generated hooks at its level.
///
/// `declare_layer!(MyLayer)` exports the three names the loader looks for by default:
/// `vkNegotiateLoaderLayerInterfaceVersion`, `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`.
/// With a list, exactly the listed entry points are exported, under the given names (which the
/// manifest's `functions` and `pre_instance_functions` then name):
///
/// ```ignore
/// vk_layer::declare_layer!(MyLayer {
///     negotiate: vkNegotiateLoaderLayerInterfaceVersion,
///     get_instance_proc_addr: MyLayer_GetInstanceProcAddr,
///     get_device_proc_addr: MyLayer_GetDeviceProcAddr,
///     // An implicit layer's pre-instance interceptors (`Layer::enumerate_instance_*`):
///     enumerate_instance_extension_properties: MyLayer_EnumerateInstanceExtensionProperties,
///     enumerate_instance_layer_properties: MyLayer_EnumerateInstanceLayerProperties,
///     enumerate_instance_version: MyLayer_EnumerateInstanceVersion,
/// });
/// ```
#[macro_export]
macro_rules! declare_layer {
    ($layer:ty) => {
        $crate::declare_layer!($layer {
            negotiate: vkNegotiateLoaderLayerInterfaceVersion,
            get_instance_proc_addr: vkGetInstanceProcAddr,
            get_device_proc_addr: vkGetDeviceProcAddr,
        });
    };
    ($layer:ty { $($entry:ident : $name:ident),* $(,)? }) => {
        const _: () = {
            static CHASSIS: $crate::Chassis<$layer> = $crate::Chassis::new();
            const INSTANCE_HOOKS: &[u16] =
                <<$layer as $crate::Layer>::Instance as $crate::InstanceHooked>::COMMANDS;
            const DEVICE_HOOKS: &[u16] =
                <<$layer as $crate::Layer>::Device as $crate::DeviceHooked>::COMMANDS;
            static INSTANCE_ENTRIES: [$crate::vk::types::PFN_vkVoidFunction; INSTANCE_HOOKS.len()] =
                $crate::hook_entries::<$layer, { INSTANCE_HOOKS.len() }>(INSTANCE_HOOKS);
            static DEVICE_ENTRIES: [$crate::vk::types::PFN_vkVoidFunction; DEVICE_HOOKS.len()] =
                $crate::hook_entries::<$layer, { DEVICE_HOOKS.len() }>(DEVICE_HOOKS);
            // SAFETY: one static per layer type.
            unsafe impl $crate::Registered for $layer {
                fn chassis() -> &'static $crate::Chassis<Self> {
                    &CHASSIS
                }
                fn instance_entries() -> &'static [$crate::vk::types::PFN_vkVoidFunction] {
                    &INSTANCE_ENTRIES
                }
                fn device_entries() -> &'static [$crate::vk::types::PFN_vkVoidFunction] {
                    &DEVICE_ENTRIES
                }
            }
            const _: () = $crate::check_hooks(INSTANCE_HOOKS, DEVICE_HOOKS);
        };
        $($crate::declare_layer!(@export $layer, $entry, $name);)*
    };
    (@export $layer:ty, negotiate, $name:ident) => {
        /// The loader-layer interface negotiation.
        ///
        /// # Safety
        /// `interface` is null or the loader's negotiation structure.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            interface: *mut $crate::vk::layer_abi::VkNegotiateLayerInterface,
        ) -> $crate::vk::types::VkResult {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe { $crate::chassis::negotiate::<$layer>(interface) }
        }
    };
    (@export $layer:ty, get_instance_proc_addr, $name:ident) => {
        /// The layer's `vkGetInstanceProcAddr`.
        ///
        /// # Safety
        /// As `vkGetInstanceProcAddr`.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            instance: $crate::vk::types::VkInstance,
            name: *const ::core::ffi::c_char,
        ) -> $crate::vk::types::PFN_vkVoidFunction {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe { $crate::chassis::get_instance_proc_addr::<$layer>(instance, name) }
        }
    };
    (@export $layer:ty, get_device_proc_addr, $name:ident) => {
        /// The layer's `vkGetDeviceProcAddr`.
        ///
        /// # Safety
        /// As `vkGetDeviceProcAddr`.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            device: $crate::vk::types::VkDevice,
            name: *const ::core::ffi::c_char,
        ) -> $crate::vk::types::PFN_vkVoidFunction {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe { $crate::chassis::get_device_proc_addr::<$layer>(device, name) }
        }
    };
    (@export $layer:ty, enumerate_instance_extension_properties, $name:ident) => {
        /// The layer's pre-instance `vkEnumerateInstanceExtensionProperties` interceptor.
        ///
        /// # Safety
        /// As the loader calls a pre-instance function: `chain` is the loader's chain, the rest
        /// as `vkEnumerateInstanceExtensionProperties`.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            chain: *const $crate::vk::layer_abi::VkEnumerateInstanceExtensionPropertiesChain,
            layer_name: *const ::core::ffi::c_char,
            count: *mut u32,
            properties: *mut $crate::vk::types::VkExtensionProperties,
        ) -> $crate::vk::types::VkResult {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe {
                $crate::chassis::pre_instance_extension_properties::<$layer>(
                    chain, layer_name, count, properties,
                )
            }
        }
    };
    (@export $layer:ty, enumerate_instance_layer_properties, $name:ident) => {
        /// The layer's pre-instance `vkEnumerateInstanceLayerProperties` interceptor.
        ///
        /// # Safety
        /// As the loader calls a pre-instance function: `chain` is the loader's chain, the rest
        /// as `vkEnumerateInstanceLayerProperties`.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            chain: *const $crate::vk::layer_abi::VkEnumerateInstanceLayerPropertiesChain,
            count: *mut u32,
            properties: *mut $crate::vk::types::VkLayerProperties,
        ) -> $crate::vk::types::VkResult {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe { $crate::chassis::pre_instance_layer_properties::<$layer>(chain, count, properties) }
        }
    };
    (@export $layer:ty, enumerate_instance_version, $name:ident) => {
        /// The layer's pre-instance `vkEnumerateInstanceVersion` interceptor.
        ///
        /// # Safety
        /// As the loader calls a pre-instance function: `chain` is the loader's chain and
        /// `version` writable.
        #[no_mangle]
        pub unsafe extern "system" fn $name(
            chain: *const $crate::vk::layer_abi::VkEnumerateInstanceVersionChain,
            version: *mut u32,
        ) -> $crate::vk::types::VkResult {
            // SAFETY: the caller's contract is the chassis function's.
            unsafe { $crate::chassis::pre_instance_version::<$layer>(chain, version) }
        }
    };
}
