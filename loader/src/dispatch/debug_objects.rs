//! The device commands that name an object by a bare 64-bit handle (`vkSetDebugUtilsObjectNameEXT`,
//! `vkSetDebugUtilsObjectTagEXT`, `vkDebugMarkerSetObjectNameEXT`, `vkDebugMarkerSetObjectTagEXT`).
//! Where that object is an instance, a physical device or a surface, each level below the
//! application knows it by another handle, so the loader swaps it on the way down, as the Khronos
//! loader does:
//! - at the application's end, when layers intercept device commands: the application's instance
//!   and physical devices become the handles the top layer returned (a layer may wrap them);
//! - at the driver's end: the loader's instance and physical devices become the driver's, and a
//!   surface the driver's own (interface 3+ drivers create their own surfaces).
//!
//! Devices whose table holds these commands get the loader's functions there instead, which call
//! the saved ones; devices of drivers without the commands are not touched.

use std::ffi::CStr;

use vk_generated::DeviceDispatchTable;
use vk_generated::types::*;

use crate::ffi::erased;
use crate::ffi;
use crate::handles::{has_magic, INSTANCE_MAGIC, PHYSICAL_DEVICE_MAGIC};
use crate::loader_abi::{unwrap_instance, unwrap_physical_device};
use crate::object::device::{DeviceData, DeviceDebugObjects, Functions};
use crate::object::instance::PhysicalDevice;

/// The kinds of objects whose handles differ from level to level.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Object {
    Instance,
    PhysicalDevice,
    Surface,
    Other,
}

impl From<VkObjectType> for Object {
    fn from(t: VkObjectType) -> Object {
        match t {
            VkObjectType::INSTANCE => Object::Instance,
            VkObjectType::PHYSICAL_DEVICE => Object::PhysicalDevice,
            VkObjectType::SURFACE_KHR => Object::Surface,
            _ => Object::Other,
        }
    }
}

impl From<VkDebugReportObjectTypeEXT> for Object {
    fn from(t: VkDebugReportObjectTypeEXT) -> Object {
        match t {
            VkDebugReportObjectTypeEXT::INSTANCE_EXT => Object::Instance,
            VkDebugReportObjectTypeEXT::PHYSICAL_DEVICE_EXT => Object::PhysicalDevice,
            VkDebugReportObjectTypeEXT::SURFACE_KHR_EXT => Object::Surface,
            _ => Object::Other,
        }
    }
}

/// A create-info-like struct naming one object.
trait NamesObject: Copy {
    fn object(&self) -> (Object, u64);
    fn set_handle(&mut self, handle: u64);
}

macro_rules! names_object {
    ($($info:ty => $handle:ident),*) => {$(
        impl NamesObject for $info {
            fn object(&self) -> (Object, u64) {
                (self.objectType.into(), self.$handle)
            }
            fn set_handle(&mut self, handle: u64) {
                self.$handle = handle;
            }
        }
    )*};
}

names_object!(
    VkDebugUtilsObjectNameInfoEXT => objectHandle,
    VkDebugUtilsObjectTagInfoEXT => objectHandle,
    VkDebugMarkerObjectNameInfoEXT => object,
    VkDebugMarkerObjectTagInfoEXT => object
);

/// A copy of `*info` with the object's handle passed through `swap` (pNext kept); `None` for NULL.
///
/// # Safety
/// `info` must be NULL or valid for reading a `T`.
unsafe fn swapped<T: NamesObject>(info: *const T, swap: impl Fn(Object, u64) -> u64) -> Option<T> {
    // SAFETY: NULL or valid for reading a `T` (the caller's contract); copied at once.
    let mut copy = *unsafe { info.as_ref() }?;
    let (object, handle) = copy.object();
    copy.set_handle(swap(object, handle));
    Some(copy)
}

/// The handle the top layer knows an application's instance or physical device by.
///
/// # Safety
/// For an instance or a physical device, `handle` must be a valid handle of that type as the
/// application holds it (Vulkan's valid usage of the commands naming objects): a loader object.
unsafe fn for_top_layer(object: Object, handle: u64) -> u64 {
    let pointer = handle as usize as *mut std::ffi::c_void;
    // SAFETY: a valid dispatchable handle is readable as a `HandleHeader` (the caller's contract);
    // one with the loader's magic word is an instance or physical device the loader returned.
    unsafe {
        match object {
            Object::Instance if has_magic(pointer, INSTANCE_MAGIC) => unwrap_instance(VkInstance(pointer)).0 as u64,
            Object::PhysicalDevice if has_magic(pointer, PHYSICAL_DEVICE_MAGIC) => unwrap_physical_device(VkPhysicalDevice(pointer)).0 as u64,
            _ => handle,
        }
    }
}

/// Puts `$end`'s functions in `table` where it has the command.
macro_rules! replace_in {
    ($table:expr, $end:ident) => {{
        let table: &mut DeviceDispatchTable = $table;
        if table.vkSetDebugUtilsObjectNameEXT.is_some() {
            table.vkSetDebugUtilsObjectNameEXT = Some($end::vkSetDebugUtilsObjectNameEXT);
        }
        if table.vkSetDebugUtilsObjectTagEXT.is_some() {
            table.vkSetDebugUtilsObjectTagEXT = Some($end::vkSetDebugUtilsObjectTagEXT);
        }
        if table.vkDebugMarkerSetObjectNameEXT.is_some() {
            table.vkDebugMarkerSetObjectNameEXT = Some($end::vkDebugMarkerSetObjectNameEXT);
        }
        if table.vkDebugMarkerSetObjectTagEXT.is_some() {
            table.vkDebugMarkerSetObjectTagEXT = Some($end::vkDebugMarkerSetObjectTagEXT);
        }
    }};
}

impl DeviceDebugObjects {
    /// For a device of `pd`: remembers the driver's functions (from `driver_table`, the driver's
    /// own) and the driver's handles.
    pub fn of_driver(driver_table: &DeviceDispatchTable, pd: &PhysicalDevice) -> DeviceDebugObjects {
        let instance = pd.instance();
        let driver_instance = instance.and_then(|i| i.drivers.get(pd.driver)).map_or(VkInstance::NULL, |d| d.live().1);
        DeviceDebugObjects {
            layers: Functions::default(),
            driver: Functions::of(driver_table),
            driver_index: pd.driver,
            driver_instance,
        }
    }

    /// A device whose table holds the driver's functions: the loader's driver-end functions
    /// go in their place (the application's handles and the loader's are the same objects).
    pub fn route_to_driver(&self, table: &mut DeviceDispatchTable) {
        replace_in!(table, driver_end);
    }

    /// A device whose table holds the top layer's functions: they move here, and the loader's
    /// application-end functions go in their place.
    pub fn route_through_layers(&mut self, table: &mut DeviceDispatchTable) {
        self.layers = Functions::of(table);
        replace_in!(table, application_end);
    }

    /// The loader's driver-end function for `name` where the driver has the command: what the end
    /// of a layer chain's device functions must be.
    pub fn terminator(&self, name: &CStr) -> PFN_vkVoidFunction {
        let d = &self.driver;
        match name.to_bytes() {
            b"vkSetDebugUtilsObjectNameEXT" if d.vkSetDebugUtilsObjectNameEXT.is_some() => erased!(vkSetDebugUtilsObjectNameEXT => driver_end::vkSetDebugUtilsObjectNameEXT),
            b"vkSetDebugUtilsObjectTagEXT" if d.vkSetDebugUtilsObjectTagEXT.is_some() => erased!(vkSetDebugUtilsObjectTagEXT => driver_end::vkSetDebugUtilsObjectTagEXT),
            b"vkDebugMarkerSetObjectNameEXT" if d.vkDebugMarkerSetObjectNameEXT.is_some() => erased!(vkDebugMarkerSetObjectNameEXT => driver_end::vkDebugMarkerSetObjectNameEXT),
            b"vkDebugMarkerSetObjectTagEXT" if d.vkDebugMarkerSetObjectTagEXT.is_some() => erased!(vkDebugMarkerSetObjectTagEXT => driver_end::vkDebugMarkerSetObjectTagEXT),
            _ => None,
        }
    }

    /// The handle the driver knows one of the loader's instances, physical devices or surfaces by.
    ///
    /// # Safety
    /// For an instance, a physical device or a surface, `handle` must be a valid handle of that
    /// type as the bottom of the chain holds it (Vulkan's valid usage, layers unwrapping what they
    /// wrapped): the loader's own object.
    unsafe fn for_driver(&self, object: Object, handle: u64) -> u64 {
        let pointer = handle as usize as *mut std::ffi::c_void;
        match object {
            // SAFETY: a valid instance handle is readable as a `HandleHeader`.
            Object::Instance if unsafe { has_magic(pointer, INSTANCE_MAGIC) } => self.driver_instance.0 as u64,
            Object::PhysicalDevice => {
                // SAFETY: a physical device the loader or a layer returned (the caller's contract).
                let pd = unsafe { PhysicalDevice::from_any_handle(VkPhysicalDevice(pointer)) };
                pd.map_or(handle, |pd| pd.term.driver().1 .0 as u64)
            }
            // SAFETY: a surface this loader created and has not destroyed (the caller's contract).
            Object::Surface => unsafe { crate::object::surface::for_driver(VkSurfaceKHR(handle), self.driver_index) }.0,
            _ => handle,
        }
    }
}

/// Defines, for each command, the loader's function at one end: it finds the device's
/// `DeviceDebugObjects`, swaps the handle with `$swap` (an `unsafe fn` call whose contract is a
/// valid handle of the object's type) and calls the saved function of `$saved`.
macro_rules! end {
    ($module:ident, $saved:ident, |$objects:ident, $object:ident, $handle:ident| $swap:expr; $($command:ident($info:ty)),*) => {
        mod $module {
            use super::*;
            $(
                #[doc = concat!("The loader's `", stringify!($command), "` at one end of the device's chain.")]
                ///
                /// # Safety
                /// Vulkan's valid usage of the command: `device` a device created through this
                /// loader and not destroyed; `pInfo` NULL or a valid info whose object handle is a
                /// valid handle of its object type. Checked anyway: a NULL `device` returns
                /// `VK_ERROR_INITIALIZATION_FAILED`; a NULL `pInfo` is passed down as it is.
                pub(super) unsafe extern "system" fn $command(device: VkDevice, pInfo: *const $info) -> VkResult {
                    ffi::guard(stringify!($command), VkResult::ERROR_INITIALIZATION_FAILED, || {
                        // SAFETY: NULL or a device of this loader (the contract).
                        let Some(data) = (unsafe { DeviceData::of(device) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                        let $objects = &data.debug_objects;
                        let Some(f) = $objects.$saved.$command else { return VkResult::SUCCESS };
                        // SAFETY: the info's handle is a valid handle of its object type (the contract).
                        let swap = |$object: Object, $handle: u64| unsafe { $swap };
                        // SAFETY: `pInfo` is NULL or valid (the contract).
                        match unsafe { swapped(pInfo, swap) } {
                            // SAFETY: the saved function of this device's next level, with the
                            // device and a copy of the application's valid info.
                            Some(info) => unsafe { f(device, &info) },
                            // SAFETY: as above, with the application's NULL passed down.
                            None => unsafe { f(device, pInfo) },
                        }
                    })
                }
            )*
        }
    };
}

end!(application_end, layers, |_objects, object, handle| for_top_layer(object, handle);
    vkSetDebugUtilsObjectNameEXT(VkDebugUtilsObjectNameInfoEXT),
    vkSetDebugUtilsObjectTagEXT(VkDebugUtilsObjectTagInfoEXT),
    vkDebugMarkerSetObjectNameEXT(VkDebugMarkerObjectNameInfoEXT),
    vkDebugMarkerSetObjectTagEXT(VkDebugMarkerObjectTagInfoEXT));

end!(driver_end, driver, |objects, object, handle| objects.for_driver(object, handle);
    vkSetDebugUtilsObjectNameEXT(VkDebugUtilsObjectNameInfoEXT),
    vkSetDebugUtilsObjectTagEXT(VkDebugUtilsObjectTagInfoEXT),
    vkDebugMarkerSetObjectNameEXT(VkDebugMarkerObjectNameInfoEXT),
    vkDebugMarkerSetObjectTagEXT(VkDebugMarkerObjectTagInfoEXT));

/// The loader's functions for the `VK_EXT_debug_utils` device commands a driver lacks (the
/// extension is the loader's and the layers', so a driver need not have them): they do nothing,
/// successfully, as the Khronos loader's terminators do.
pub fn absent_from_driver(name: &CStr) -> PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkSetDebugUtilsObjectNameEXT" => erased!(vkSetDebugUtilsObjectNameEXT => absent::vkSetDebugUtilsObjectNameEXT),
        b"vkSetDebugUtilsObjectTagEXT" => erased!(vkSetDebugUtilsObjectTagEXT => absent::vkSetDebugUtilsObjectTagEXT),
        b"vkQueueBeginDebugUtilsLabelEXT" => erased!(vkQueueBeginDebugUtilsLabelEXT => absent::vkQueueBeginDebugUtilsLabelEXT),
        b"vkQueueEndDebugUtilsLabelEXT" => erased!(vkQueueEndDebugUtilsLabelEXT => absent::vkQueueEndDebugUtilsLabelEXT),
        b"vkQueueInsertDebugUtilsLabelEXT" => erased!(vkQueueInsertDebugUtilsLabelEXT => absent::vkQueueInsertDebugUtilsLabelEXT),
        b"vkCmdBeginDebugUtilsLabelEXT" => erased!(vkCmdBeginDebugUtilsLabelEXT => absent::vkCmdBeginDebugUtilsLabelEXT),
        b"vkCmdEndDebugUtilsLabelEXT" => erased!(vkCmdEndDebugUtilsLabelEXT => absent::vkCmdEndDebugUtilsLabelEXT),
        b"vkCmdInsertDebugUtilsLabelEXT" => erased!(vkCmdInsertDebugUtilsLabelEXT => absent::vkCmdInsertDebugUtilsLabelEXT),
        _ => None,
    }
}

/// Each does nothing, successfully.
mod absent {
    use super::*;

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkSetDebugUtilsObjectNameEXT(_: VkDevice, _: *const VkDebugUtilsObjectNameInfoEXT) -> VkResult {
        VkResult::SUCCESS
    }

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkSetDebugUtilsObjectTagEXT(_: VkDevice, _: *const VkDebugUtilsObjectTagInfoEXT) -> VkResult {
        VkResult::SUCCESS
    }

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkQueueBeginDebugUtilsLabelEXT(_: VkQueue, _: *const VkDebugUtilsLabelEXT) {}

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkQueueEndDebugUtilsLabelEXT(_: VkQueue) {}

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkQueueInsertDebugUtilsLabelEXT(_: VkQueue, _: *const VkDebugUtilsLabelEXT) {}

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkCmdBeginDebugUtilsLabelEXT(_: VkCommandBuffer, _: *const VkDebugUtilsLabelEXT) {}

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkCmdEndDebugUtilsLabelEXT(_: VkCommandBuffer) {}

    /// # Safety
    /// None: no argument is read.
    pub(super) unsafe extern "system" fn vkCmdInsertDebugUtilsLabelEXT(_: VkCommandBuffer, _: *const VkDebugUtilsLabelEXT) {}
}

