//! The layer's state: the [`Layer`] a layer author implements, the [`Registered`] layer that
//! `declare_layer!` makes of it, and its [`Chassis`]: per-instance and per-device state keyed by
//! the dispatch pointer, in [`DispatchMap`]s (read without a lock; see there why).

use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};

use crate::chain::{Gdpa, Gipa};
use crate::dispatch_map::DispatchMap;
use crate::hooks::{DeviceHooks, InstanceHooks};

/// A layer: its per-instance and per-device objects and the commands it hooks.
pub trait Layer: Sized + 'static {
    /// Made at `vkCreateInstance`, dropped at `vkDestroyInstance` (after the next level's call).
    type Instance: InstanceHooks;
    /// Made at `vkCreateDevice`, dropped at `vkDestroyDevice` (after the next level's call).
    type Device: DeviceHooks;
    /// The hooked commands (`vk_generated::command_id::vkCmdDraw`, ...): their hook methods run,
    /// every other command goes straight to the next level.
    const HOOKS: &'static [u16];

    /// The layer's object for a new instance, after the next level created it; an error destroys
    /// the instance again and fails `vkCreateInstance` with it.
    fn create_instance(
        info: &VkInstanceCreateInfo,
        instance: VkInstance,
        next: &InstanceDispatchTable,
    ) -> Result<Self::Instance, VkResult>;

    /// The layer's object for a new device, as [`create_instance`](Self::create_instance).
    fn create_device(
        instance: &Self::Instance,
        physical_device: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        device: VkDevice,
        next: &DeviceDispatchTable,
    ) -> Result<Self::Device, VkResult>;
}

/// A layer with its chassis, as [`declare_layer!`](crate::declare_layer) declares it.
///
/// # Safety
/// `chassis` returns the same static every time.
pub unsafe trait Registered: Layer {
    /// The layer's state.
    fn chassis() -> &'static Chassis<Self>;
    /// The entry points of [`Layer::HOOKS`], in that order ([`hook_entries`](crate::hook_entries)).
    fn hook_entries() -> &'static [PFN_vkVoidFunction];
}

/// What the chassis keeps per instance.
pub struct InstanceState<L: Layer> {
    /// The next level's instance-level functions.
    pub next: InstanceDispatchTable,
    pub(crate) gipa: Gipa,
    /// The layer's object.
    pub hooks: L::Instance,
}

/// What the chassis keeps per device.
pub struct DeviceState<L: Layer> {
    /// The next level's device-level functions.
    pub next: DeviceDispatchTable,
    pub(crate) gdpa: Gdpa,
    /// The layer's object.
    pub hooks: L::Device,
}

/// A layer's state: instances and devices by dispatch pointer.
pub struct Chassis<L: Layer> {
    pub(crate) instances: DispatchMap<InstanceState<L>>,
    pub(crate) devices: DispatchMap<DeviceState<L>>,
}

impl<L: Layer> Default for Chassis<L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L: Layer> Chassis<L> {
    /// No instances, no devices; usable in a `static`.
    pub const fn new() -> Self {
        Chassis {
            instances: DispatchMap::new(),
            devices: DispatchMap::new(),
        }
    }

    /// The state of the instance that `handle` (a `VkInstance` or `VkPhysicalDevice`) belongs to.
    ///
    /// # Safety
    /// `handle` is null or a live dispatchable handle.
    pub unsafe fn instance(&self, handle: *mut std::ffi::c_void) -> Option<&InstanceState<L>> {
        // SAFETY: per the caller's contract.
        self.instances.get(unsafe { dispatch_key(handle) }?)
    }

    /// The state of the device that `handle` (a `VkDevice`, `VkQueue` or `VkCommandBuffer`)
    /// belongs to.
    ///
    /// # Safety
    /// `handle` is null or a live dispatchable handle.
    pub unsafe fn device(&self, handle: *mut std::ffi::c_void) -> Option<&DeviceState<L>> {
        // SAFETY: per the caller's contract.
        self.devices.get(unsafe { dispatch_key(handle) }?)
    }
}

/// The loader's dispatch pointer, the first word of a dispatchable handle: one per instance (its
/// physical devices share it) and one per device (its queues and command buffers share it).
///
/// # Safety
/// `handle` is null or points to at least one readable word.
pub(crate) unsafe fn dispatch_key(handle: *mut std::ffi::c_void) -> Option<usize> {
    // SAFETY: per the caller's contract.
    (!handle.is_null()).then(|| unsafe { *(handle as *const usize) })
}
