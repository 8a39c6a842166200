//! What a loader-managed `VkDevice`'s first word points to: its dispatch table and the loader's
//! data about it.

use vk_generated::DeviceDispatchTable;
use vk_generated::types::*;

use crate::load::calls::DeviceCalls;
use crate::loader_abi::UnknownSlots;

/// What the first word of a loader-managed `VkDevice` points to. The table comes first, so the
/// trampolines (which read a `DeviceDispatchTable` there) and this module agree; the unknown
/// device-command slots follow it at the constant offset the assembly trampolines use.
#[repr(C)]
pub struct DeviceData {
    pub table: DeviceDispatchTable,
    /// Commands the generated table does not know, by the slot `dispatch::unknown` gave their name.
    pub unknown: UnknownSlots,
    /// The driver's `vkGetDeviceProcAddr`, for names the generated table does not know.
    pub driver_gdpa: PFN_vkGetDeviceProcAddr,
    /// With layers: the top layer's `vkGetDeviceProcAddr`, asked instead of the driver's.
    pub chain_gdpa: PFN_vkGetDeviceProcAddr,
    /// The driver's swapchain commands where the loader unwraps surfaces for it.
    pub wsi: DeviceWsi,
    /// The functions behind the loader's for the commands that name objects by handle.
    pub debug_objects: DeviceDebugObjects,
    /// With `maintenance5` enabled, the instance's API version: core commands of newer versions
    /// are not handed out (`u32::MAX`: no limit).
    pub core_version_limit: u32,
}

impl DeviceData {
    /// The loader's data of `device`; `None` for a NULL handle or a device whose dispatch pointer
    /// is NULL.
    ///
    /// # Safety
    /// `device` must be NULL or a live `VkDevice` created through this loader (its first word
    /// points to the `DeviceData` the loader installed), and that device must outlive `'a`.
    pub unsafe fn of<'a>(device: VkDevice) -> Option<&'a DeviceData> {
        if device.is_null() {
            return None;
        }
        // SAFETY: a live loader device's first word is NULL or points to its `DeviceData`, built
        // before it is installed there and freed only by vkDestroyDevice (after which the handle
        // is not live); once installed it changes only through its atomic unknown slots.
        unsafe { (*(device.0 as *const *const DeviceData)).as_ref() }
    }
}

/// The loader's data for a device being created: owned here until the device points to it
/// ([`install`](Self::install)), from then on the device's (freed by `vkDestroyDevice`); freed
/// here if the creation fails. Kept as the pointer `Box::into_raw` gave, the one the device's
/// first word gets, so that every later use derives from it.
pub(crate) struct NewDeviceData(std::ptr::NonNull<DeviceData>);

impl NewDeviceData {
    /// Empty data for a device about to be created (the table is filled once it exists), with
    /// `unknown` its unknown-command slots; `chain_gdpa` is the top layer's `vkGetDeviceProcAddr`
    /// when there are layers.
    pub fn new(chain_gdpa: PFN_vkGetDeviceProcAddr, unknown: UnknownSlots) -> NewDeviceData {
        let data = Box::new(DeviceData {
            table: DeviceDispatchTable::default(),
            unknown,
            driver_gdpa: None,
            chain_gdpa,
            wsi: Default::default(),
            debug_objects: Default::default(),
            core_version_limit: u32::MAX,
        });
        NewDeviceData(std::ptr::NonNull::from(Box::leak(data)))
    }

    /// The data, to fill. Not while the layers' chain runs: its terminator fills it then through
    /// [`as_ptr`](Self::as_ptr).
    pub fn get_mut(&mut self) -> &mut DeviceData {
        // SAFETY: a live box of ours, which no device points to yet (or whose device is not handed
        // out yet), so nothing else refers to it while this borrow of `self` lasts.
        unsafe { self.0.as_mut() }
    }

    /// The data's address, for the terminator of the layers' chain and for the device's first word.
    pub fn as_ptr(&self) -> *mut DeviceData {
        self.0.as_ptr()
    }

    /// Hands the data over to `device`, whose first word now points to it.
    pub fn install(self, device: DeviceCalls) {
        device.set_dispatch(self.as_ptr().cast_const().cast());
        std::mem::forget(self);
    }

    /// Hands the data over to the device the driver created, which the terminator of the layers'
    /// chain pointed to it (the device the layers return is their own).
    pub fn leave_to_driver_device(self) {
        std::mem::forget(self);
    }
}

impl Drop for NewDeviceData {
    fn drop(&mut self) {
        // SAFETY: the box `new` leaked, which no device was handed out with.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// The surface commands of a device, where its driver creates its own surfaces: the driver's
/// functions, called by the loader's after swapping in the driver's surface handles. Devices of
/// other drivers keep the driver's functions in their table (no loader code on that path).
#[derive(Default)]
pub struct DeviceWsi {
    pub(crate) driver: usize,
    pub(crate) create_swapchain: PFN_vkCreateSwapchainKHR,
    pub(crate) create_shared_swapchains: PFN_vkCreateSharedSwapchainsKHR,
    pub(crate) group_surface_present_modes: PFN_vkGetDeviceGroupSurfacePresentModesKHR,
}

/// The four commands, as a device table names them.
#[derive(Default, Clone, Copy)]
pub(crate) struct Functions {
    pub(crate) vkSetDebugUtilsObjectNameEXT: PFN_vkSetDebugUtilsObjectNameEXT,
    pub(crate) vkSetDebugUtilsObjectTagEXT: PFN_vkSetDebugUtilsObjectTagEXT,
    pub(crate) vkDebugMarkerSetObjectNameEXT: PFN_vkDebugMarkerSetObjectNameEXT,
    pub(crate) vkDebugMarkerSetObjectTagEXT: PFN_vkDebugMarkerSetObjectTagEXT,
}

impl Functions {
    pub(crate) fn of(table: &DeviceDispatchTable) -> Functions {
        Functions {
            vkSetDebugUtilsObjectNameEXT: table.vkSetDebugUtilsObjectNameEXT,
            vkSetDebugUtilsObjectTagEXT: table.vkSetDebugUtilsObjectTagEXT,
            vkDebugMarkerSetObjectNameEXT: table.vkDebugMarkerSetObjectNameEXT,
            vkDebugMarkerSetObjectTagEXT: table.vkDebugMarkerSetObjectTagEXT,
        }
    }
}

/// One device's part: the functions the loader's call after swapping handles.
#[derive(Default)]
pub struct DeviceDebugObjects {
    /// The top of the device's layer chain (empty without device layers).
    pub(crate) layers: Functions,
    /// The driver's own functions.
    pub(crate) driver: Functions,
    /// The driver's index in its instance (whose surface handle to use) and its instance handle.
    pub(crate) driver_index: usize,
    pub(crate) driver_instance: VkInstance,
}

