//! What a loader-managed `VkDevice`'s first word points to: its dispatch table and the loader's
//! data about it.

use vk_generated::DeviceDispatchTable;
use vk_generated::types::*;

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

