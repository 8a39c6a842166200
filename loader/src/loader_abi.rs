//! The seam between the generated trampolines/terminators (`generated/src/gen/trampolines.rs`,
//! included by this crate alone so that nothing else built on the tables exports `vk*` symbols)
//! and the hand-written runtime: the wrapper layouts they read, defined once here.

use core::ffi::c_void;
use core::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use vk_generated::types::{VkInstance, VkPhysicalDevice};
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};

/// How many commands unknown to the generated tables the loader dispatches, per level
/// (physical-device and device): one assembly trampoline each, see `dispatch::unknown`.
pub const UNKNOWN_SLOTS: usize = 512;

/// Function pointers for commands unknown to the generated tables, by slot. Atomic because a slot
/// is filled (by `vkGetInstanceProcAddr`) while other threads may call through other slots.
pub type UnknownSlots = [AtomicUsize; UNKNOWN_SLOTS];

/// An instance dispatch table followed by its unknown physical-device command slots: what the
/// first word of a `VkInstance` or `VkPhysicalDevice` points to (terminators and the unknown-command
/// terminators, or a layer chain), and each driver's own functions. The assembly trampolines read
/// the slots at a constant offset from the start (`unknown::arch`).
#[repr(C)]
pub struct InstanceDispatch {
    pub table: InstanceDispatchTable,
    pub unknown: UnknownSlots,
}

impl InstanceDispatch {
    /// `table` with every unknown slot empty (0).
    pub fn new(table: InstanceDispatchTable) -> Box<InstanceDispatch> {
        Box::new(InstanceDispatch { table, unknown: [const { AtomicUsize::new(0) }; UNKNOWN_SLOTS] })
    }
}

impl core::ops::Deref for InstanceDispatch {
    type Target = InstanceDispatchTable;
    fn deref(&self) -> &InstanceDispatchTable {
        &self.table
    }
}

/// The loader's physical device at the end of the instance chain: what default terminators
/// receive. Its first word is the instance's dispatch table, like every dispatchable object.
/// With layers, the application's physical devices have the same layout (see `chain::instance_layers`):
/// `unwrapped` then names the top layer's handle.
#[repr(C)]
pub struct TerminatorPhysicalDevice {
    /// The owning instance's dispatch table: the terminators without layers, the top of the layer
    /// chain with them (layers key their data by this word).
    pub dispatch: *const InstanceDispatchTable,
    /// `handles::PHYSICAL_DEVICE_MAGIC`: the trampolines check it.
    pub magic: u64,
    /// The handle the next level receives: this object itself at the end of the chain.
    pub unwrapped: VkPhysicalDevice,
    /// The loader's `Instance` owning this device.
    pub instance: *const c_void,
    /// The owning driver's own functions: the `table` of an `InstanceDispatch` (at its start),
    /// whose unknown slots the unknown-command terminators read. Atomic (the layout of a pointer):
    /// a lazy driver's device is pointed at the live driver while other threads call through it.
    /// Read with [`driver`](Self::driver).
    pub driver_table: AtomicPtr<InstanceDispatchTable>,
    /// The driver's handle for this physical device (a `VkPhysicalDevice`), atomic for the same reason.
    pub driver_handle: AtomicPtr<c_void>,
}

const _: () = assert!(
    core::mem::size_of::<AtomicPtr<InstanceDispatchTable>>() == core::mem::size_of::<*const InstanceDispatchTable>()
        && core::mem::size_of::<AtomicPtr<c_void>>() == core::mem::size_of::<VkPhysicalDevice>()
);

const _: () = assert!(
    core::mem::offset_of!(TerminatorPhysicalDevice, magic) == core::mem::offset_of!(crate::handles::HandleHeader, magic)
);

impl TerminatorPhysicalDevice {
    /// The driver's table and handle for this device. A driver the loader has not loaded yet
    /// (a lazy driver) gets both replaced once it is loaded, while other threads may be calling:
    /// the handle is stored first and the table last (release), and read here table first
    /// (acquire), so a live table always comes with the live handle (a not-yet-live table may come
    /// with either handle; its functions accept both).
    #[inline(always)]
    pub fn driver(&self) -> (*const InstanceDispatchTable, VkPhysicalDevice) {
        let table = self.driver_table.load(Ordering::Acquire);
        let handle = self.driver_handle.load(Ordering::Relaxed);
        (table, VkPhysicalDevice(handle))
    }

    /// Points this device at its now loaded driver (see [`driver`](Self::driver)).
    ///
    /// # Safety
    /// `table` must outlive the device (callers through it read it as the driver's table);
    /// `handle` must be the driver's handle for it.
    pub unsafe fn set_driver(&self, table: *const InstanceDispatchTable, handle: VkPhysicalDevice) {
        self.driver_handle.store(handle.0, Ordering::Relaxed);
        self.driver_table.store(table.cast_mut(), Ordering::Release);
    }
}

/// The start of the loader's `VkInstance` (`Instance` declares the same fields; const
/// assertions beside it keep the offsets equal): what the generated instance trampolines read.
#[repr(C)]
pub struct InstanceHeader {
    pub dispatch: *const InstanceDispatchTable,
    /// `handles::INSTANCE_MAGIC` while the instance lives.
    pub magic: u64,
    /// The handle the next level of the chain knows this instance by: the instance itself, or
    /// what the top layer's `vkCreateInstance` returned (a layer may wrap it).
    pub chain_handle: VkInstance,
}

pub use crate::handles::{check_instance, check_physical_device, missing_device_function};

/// The handle an instance trampoline passes down its table (see [`InstanceHeader::chain_handle`]).
///
/// # Safety
/// `handle` must be a `VkInstance` the loader returned.
#[inline(always)]
pub unsafe fn unwrap_instance(handle: VkInstance) -> VkInstance {
    // SAFETY: a loader's `VkInstance` starts with an `InstanceHeader` (this function's contract).
    unsafe { (*(handle.0 as *const InstanceHeader)).chain_handle }
}

/// The instance dispatch table of a `VkInstance` or `VkPhysicalDevice` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn instance_table(handle: *mut c_void) -> *const InstanceDispatchTable {
    // SAFETY: a live dispatchable object's first word is its dispatch table (this function's contract).
    unsafe { *(handle as *const *const InstanceDispatchTable) }
}

/// The handle a physical-device trampoline passes down its table: the loader's physical device
/// itself at the end of the chain; with layers, what the top layer returned for it (layers may
/// wrap physical devices).
///
/// # Safety
/// `handle` must be a `VkPhysicalDevice` the loader returned.
#[inline(always)]
pub unsafe fn unwrap_physical_device(handle: VkPhysicalDevice) -> VkPhysicalDevice {
    // SAFETY: a loader's `VkPhysicalDevice`, at either level, has the layout of a
    // `TerminatorPhysicalDevice` (this function's contract).
    unsafe { (*(handle.0 as *const TerminatorPhysicalDevice)).unwrapped }
}

/// The device dispatch table of a `VkDevice`, `VkQueue` or `VkCommandBuffer` (its first word).
///
/// # Safety
/// `handle` must be a live dispatchable object created through the loader.
#[inline(always)]
pub unsafe fn device_table(handle: *mut c_void) -> *const DeviceDispatchTable {
    // SAFETY: a live dispatchable object's first word is its dispatch table (this function's contract).
    unsafe { *(handle as *const *const DeviceDispatchTable) }
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
    // SAFETY: a dispatchable object's first word, the loader's to read and write (this function's
    // contract).
    let current = unsafe { *first_word };
    // SAFETY: as above: a dispatchable object, whose first word `valid_loader_magic_value` reads.
    if current == table || unsafe { vk_generated::layer_abi::valid_loader_magic_value(object) } {
        // SAFETY: as above.
        unsafe { *first_word = table };
    } else {
        crate::debug::log::write(
            crate::debug::log::Level::ErrorDriver,
            &format!("a driver returned a queue or command buffer ({object:p}) without ICD_LOADER_MAGIC in its first word; its calls will not reach the driver"),
        );
    }
}
