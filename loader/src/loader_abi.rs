//! The seam between the generated trampolines/terminators (`generated/src/gen/trampolines.rs`,
//! included by this crate alone so that nothing else built on the tables exports `vk*` symbols)
//! and the hand-written runtime: the wrapper layouts they read, defined once here.

use core::ffi::c_void;

use vk_generated::types::VkPhysicalDevice;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};

/// The loader's physical device at the end of the instance chain: what default terminators
/// receive. Its first word is the terminator dispatch table, like every dispatchable object.
/// Its first three words are shared with the layer module's trampoline-level physical device
/// (see [`unwrap_physical_device`]).
#[repr(C)]
pub struct TerminatorPhysicalDevice {
    /// The owning instance's dispatch table: the terminators without layers, the top of the layer
    /// chain with them (layers key their data by this word).
    pub dispatch: *const InstanceDispatchTable,
    /// The handle the next level receives: this object itself.
    pub unwrapped: VkPhysicalDevice,
    /// The loader's `Instance` owning this device.
    pub instance: *const c_void,
    /// The owning driver's own functions.
    pub driver_table: *const InstanceDispatchTable,
    /// The driver's handle for this physical device.
    pub driver_handle: VkPhysicalDevice,
}

/// The instance dispatch table of a `VkInstance` or `VkPhysicalDevice` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn instance_table(handle: *mut c_void) -> *const InstanceDispatchTable {
    *(handle as *const *const InstanceDispatchTable)
}

/// The handle a physical-device trampoline passes down its table: the second word of the loader's
/// physical device (itself for a terminator-level one, the top layer's handle for a
/// trampoline-level one, since layers may wrap physical devices).
///
/// # Safety
/// `handle` must be a `VkPhysicalDevice` the loader returned.
#[inline(always)]
pub unsafe fn unwrap_physical_device(handle: VkPhysicalDevice) -> VkPhysicalDevice {
    *(handle.0 as *const VkPhysicalDevice).add(1)
}

/// The device dispatch table of a `VkDevice`, `VkQueue` or `VkCommandBuffer` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn device_table(handle: *mut c_void) -> *const DeviceDispatchTable {
    *(handle as *const *const DeviceDispatchTable)
}

/// Gives a driver-created dispatchable object (queue, command buffer) its dispatch table. The
/// driver must have put `ICD_LOADER_MAGIC` in its first word (or the loader already set it: a
/// queue is returned again by every `vkGetDeviceQueue`); anything else is the driver's data, which
/// the loader leaves alone and reports.
///
/// # Safety
/// `object` must be a dispatchable object whose first word belongs to the loader.
#[inline(always)]
pub unsafe fn set_dispatch(object: *mut c_void, table: *const c_void) {
    if object.is_null() {
        return;
    }
    let first_word = object as *mut *const c_void;
    let current = *first_word;
    if current == table || vk_generated::layer_abi::valid_loader_magic_value(object) {
        *first_word = table;
    } else {
        crate::log::write(
            crate::log::Level::Error,
            &format!("a driver returned a queue or command buffer ({object:p}) without ICD_LOADER_MAGIC in its first word; its calls will not reach the driver"),
        );
    }
}
