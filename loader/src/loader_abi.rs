//! The seam between the generated trampolines/terminators (`generated/src/gen/trampolines.rs`,
//! included by this crate alone so that nothing else built on the tables exports `vk*` symbols)
//! and the hand-written runtime: the wrapper layouts they read, defined once here.

use core::ffi::c_void;

use vk_generated::types::VkPhysicalDevice;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};

/// The loader's physical device at the end of the instance chain: what default terminators
/// receive. Its first word is the terminator dispatch table, like every dispatchable object.
#[repr(C)]
pub struct TerminatorPhysicalDevice {
    pub dispatch: *const InstanceDispatchTable,
    /// `handles::PHYSICAL_DEVICE_MAGIC`: the trampolines check it.
    pub magic: u64,
    /// The owning driver's own functions.
    pub driver_table: *const InstanceDispatchTable,
    /// The driver's handle for this physical device.
    pub driver_handle: VkPhysicalDevice,
}

const _: () = assert!(
    core::mem::offset_of!(TerminatorPhysicalDevice, magic) == core::mem::offset_of!(crate::handles::HandleHeader, magic)
);

pub use crate::handles::{check_instance, check_physical_device};

/// The instance dispatch table of a `VkInstance` or `VkPhysicalDevice` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn instance_table(handle: *mut c_void) -> *const InstanceDispatchTable {
    *(handle as *const *const InstanceDispatchTable)
}

/// The device dispatch table of a `VkDevice`, `VkQueue` or `VkCommandBuffer` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn device_table(handle: *mut c_void) -> *const DeviceDispatchTable {
    *(handle as *const *const DeviceDispatchTable)
}

/// Gives a driver-created dispatchable object (queue, command buffer) its dispatch table.
///
/// # Safety
/// `object` must be a dispatchable object whose first word belongs to the loader.
#[inline(always)]
pub unsafe fn set_dispatch(object: *mut c_void, table: *const c_void) {
    if !object.is_null() {
        *(object as *mut *const c_void) = table;
    }
}
