//! The Rust layer SDK: write a Vulkan layer as two objects with hook methods.
//!
//! A layer implements [`Layer`]: a per-instance object ([`InstanceHooks`]), a per-device object
//! ([`DeviceHooks`]) and the list of hooked commands ([`Layer::HOOKS`]). Every hook method has a
//! pass-through default: `pre_call_validate_*` may skip the call with a result, `pre_call_record_*`
//! runs before the call goes down, `post_call_record_*` after, with its result. [`declare_layer!`]
//! exports the layer's entry points; [`Manifest`] writes its JSON manifest.
//!
//! The hook traits and their entry points are generated from `vk.xml` (`layer/src/gen/`, by
//! `cargo xtask regen`); the chassis around them ([`chassis`]) is written by hand: negotiation, the
//! chain-info walk, state per dispatch pointer ([`dispatch_map`]), `vkGet*ProcAddr` answering only
//! the hooked commands, and a guard on every entry point so that no panic reaches the caller.

pub mod chain;
pub mod chassis;
pub mod dispatch_map;
mod entries;
mod guard;
mod hooks;
mod manifest;
mod state;

pub use entries::hook_entries;
pub use hooks::{check_hooks, DeviceHooks, InstanceHooks, DEVICE_HOOKABLE, INSTANCE_HOOKABLE};
pub use manifest::Manifest;
pub use state::{Chassis, DeviceState, InstanceState, Layer, Registered};
pub use vk_generated as vk;

/// Exports a layer's entry points from the library it is built into (a `cdylib`):
/// `vkNegotiateLoaderLayerInterfaceVersion`, `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`,
/// with the layer's static [`Chassis`]. Fails to compile when [`Layer::HOOKS`] names a command
/// without generated hooks.
///
/// ```ignore
/// vk_layer::declare_layer!(MyLayer);
/// ```
#[macro_export]
macro_rules! declare_layer {
    ($layer:ty) => {
        const _: () = {
            static CHASSIS: $crate::Chassis<$layer> = $crate::Chassis::new();
            const HOOK_COUNT: usize = <$layer as $crate::Layer>::HOOKS.len();
            static HOOK_ENTRIES: [$crate::vk::types::PFN_vkVoidFunction; HOOK_COUNT] =
                $crate::hook_entries::<$layer, HOOK_COUNT>();
            // SAFETY: one static per layer type.
            unsafe impl $crate::Registered for $layer {
                fn chassis() -> &'static $crate::Chassis<Self> {
                    &CHASSIS
                }
                fn hook_entries() -> &'static [$crate::vk::types::PFN_vkVoidFunction] {
                    &HOOK_ENTRIES
                }
            }
            $crate::check_hooks(<$layer as $crate::Layer>::HOOKS);
        };

        /// The loader-layer interface negotiation.
        #[no_mangle]
        pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
            interface: *mut $crate::vk::layer_abi::VkNegotiateLayerInterface,
        ) -> $crate::vk::types::VkResult {
            unsafe { $crate::chassis::negotiate::<$layer>(interface) }
        }

        /// The layer's `vkGetInstanceProcAddr`.
        #[no_mangle]
        pub unsafe extern "system" fn vkGetInstanceProcAddr(
            instance: $crate::vk::types::VkInstance,
            name: *const ::core::ffi::c_char,
        ) -> $crate::vk::types::PFN_vkVoidFunction {
            unsafe { $crate::chassis::get_instance_proc_addr::<$layer>(instance, name) }
        }

        /// The layer's `vkGetDeviceProcAddr`.
        #[no_mangle]
        pub unsafe extern "system" fn vkGetDeviceProcAddr(
            device: $crate::vk::types::VkDevice,
            name: *const ::core::ffi::c_char,
        ) -> $crate::vk::types::PFN_vkVoidFunction {
            unsafe { $crate::chassis::get_device_proc_addr::<$layer>(device, name) }
        }
    };
}
