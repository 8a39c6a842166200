//! The device id filters (`VK_LOADER_{DEVICE,VENDOR,DRIVER}_ID_FILTER`) applied where the Khronos
//! loader applies them: in `vkEnumeratePhysicalDevices(Groups)` itself, on what the top of the
//! instance chain returns. Layers below see every device: Mesa's device-select layer, which
//! every Mesa system runs, crashes when the devices it is told about are all hidden from it.

use vk_generated::types::*;

use crate::ffi;
use crate::loader_abi::{self, TerminatorPhysicalDevice};
use crate::plan::device_filter::DeviceFilters;

/// The application's `vkEnumeratePhysicalDevices`: `enumerate` (the chain's or the terminator's)
/// asked for every device, then those the filters reject left out.
///
/// # Safety
/// `enumerate` returns physical devices this loader handed out; `count` and `out` as the API says.
pub unsafe fn enumerate(
    filters: &DeviceFilters,
    enumerate: impl FnMut(*mut u32, *mut VkPhysicalDevice) -> VkResult,
    count: *mut u32,
    out: *mut VkPhysicalDevice,
) -> VkResult {
    let mut devices = match ffi::query(enumerate) {
        Ok(devices) => devices,
        Err(e) => return e,
    };
    devices.retain(|&d| admitted(filters, d));
    ffi::fill(&devices, count, out)
}

/// The application's `vkEnumeratePhysicalDeviceGroups`: every group asked for, then those with
/// a rejected member left out. The application's structs keep their `sType` and `pNext`.
///
/// # Safety
/// As for [`enumerate`].
pub unsafe fn enumerate_groups(
    filters: &DeviceFilters,
    enumerate: impl FnMut(*mut u32, *mut VkPhysicalDeviceGroupProperties) -> VkResult,
    count: *mut u32,
    out: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    let mut groups = match ffi::query(enumerate) {
        Ok(groups) => groups,
        Err(e) => return e,
    };
    groups.retain(|g| g.physicalDevices.iter().take(g.physicalDeviceCount as usize).all(|&d| admitted(filters, d)));
    ffi::fill_groups(&groups, count, out)
}

/// Whether `device` (a handle the application would get) passes the filters: its ids as the
/// chain reports them (a layer may change them), the driver id from its driver.
unsafe fn admitted(filters: &DeviceFilters, device: VkPhysicalDevice) -> bool {
    let mut properties = VkPhysicalDeviceProperties::default();
    if let Some(get) = (*loader_abi::instance_table(device.0)).vkGetPhysicalDeviceProperties {
        get(loader_abi::unwrap_physical_device(device), &mut properties);
    }
    filters.rejecting(properties.vendorID, properties.deviceID, || driver_id(device)).is_none()
}

/// `VkPhysicalDeviceDriverProperties::driverID` from the device's driver, where it can say.
unsafe fn driver_id(device: VkPhysicalDevice) -> Option<u32> {
    let (table, handle) = (*(device.0 as *const TerminatorPhysicalDevice)).driver();
    if handle.is_null() || table.is_null() {
        return None;
    }
    let get2 = (*table).vkGetPhysicalDeviceProperties2?;
    let mut driver = VkPhysicalDeviceDriverProperties::default();
    let mut properties = VkPhysicalDeviceProperties2 { pNext: &mut driver as *mut _ as *mut _, ..Default::default() };
    get2(handle, &mut properties);
    Some(driver.driverID.0 as u32)
}
