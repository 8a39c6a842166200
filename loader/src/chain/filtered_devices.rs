//! The device id filters (`VK_LOADER_{DEVICE,VENDOR,DRIVER}_ID_FILTER`) applied where the Khronos
//! loader applies them: in `vkEnumeratePhysicalDevices(Groups)` itself, on what the top of the
//! instance chain returns. Layers below see every device: Mesa's device-select layer, which
//! every Mesa system runs, crashes when the devices it is told about are all hidden from it.

use vk_generated::types::*;

use crate::ffi;
use crate::load::calls::PhysicalDeviceCalls;
use crate::loader_abi::{self, TerminatorPhysicalDevice};
use crate::plan::device_filter::DeviceFilters;

/// The application's `vkEnumeratePhysicalDevices`: `enumerate` (the chain's or the terminator's)
/// asked for every device, then those the filters reject left out.
///
/// # Safety
/// `enumerate` returns physical devices this loader handed out; `count` and `out` as the API says
/// (the count NULL or valid for reading and writing a `u32`, the array NULL or valid for
/// writing `*count` handles).
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
    // SAFETY: the caller's promise: physical devices this loader handed out.
    devices.retain(|&d| unsafe { admitted(filters, d) });
    // SAFETY: the caller's promise for the count and the array.
    unsafe { ffi::fill(&devices, count, out) }
}

/// The application's `vkEnumeratePhysicalDeviceGroups`: every group asked for, then those with
/// a rejected member left out. The application's structs keep their `sType` and `pNext`.
///
/// # Safety
/// As for [`enumerate`], with an array of `*count` structures whose `sType` and `pNext` are set.
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
    // SAFETY: the caller's promise: physical devices this loader handed out.
    groups.retain(|g| g.physicalDevices.iter().take(g.physicalDeviceCount as usize).all(|&d| unsafe { admitted(filters, d) }));
    // SAFETY: the caller's promise for the count and the array.
    unsafe { ffi::fill_groups(&groups, count, out) }
}

/// Whether `device` (a handle the application would get) passes the filters: its ids as the
/// chain reports them (a layer may change them), the driver id from its driver.
///
/// # Safety
/// `device` must be a physical device this loader handed out (at either level).
unsafe fn admitted(filters: &DeviceFilters, device: VkPhysicalDevice) -> bool {
    // SAFETY: the caller's promise: a loader physical device, whose first word is its instance's
    // dispatch table (the layer chain's or the terminators'), live with the instance, whose
    // functions take the handle it unwraps to.
    let chain = unsafe { PhysicalDeviceCalls::new(&*loader_abi::instance_table(device.0), loader_abi::unwrap_physical_device(device)) };
    let properties = chain.properties();
    // SAFETY: as above: at either level its driver fields are its driver's table and handle (the
    // trampoline-level ones copied from the terminator-level device), or an empty table and NULL.
    let (table, handle) = unsafe { (*(device.0 as *const TerminatorPhysicalDevice)).driver() };
    // SAFETY: the table and handle read together: the driver's for this device.
    let driver = unsafe { table.as_ref() }.filter(|_| !handle.is_null()).map(|table| unsafe { PhysicalDeviceCalls::new(table, handle) });
    filters.rejecting(properties.vendorID, properties.deviceID, || driver_id(driver?)).is_none()
}

/// `VkPhysicalDeviceDriverProperties::driverID` from the device's driver, where it can say.
fn driver_id(driver: PhysicalDeviceCalls) -> Option<u32> {
    let properties: VkPhysicalDeviceDriverProperties = driver.properties2()?;
    Some(properties.driverID.0 as u32)
}
