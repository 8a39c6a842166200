//! The device id filters (`VK_LOADER_{DEVICE,VENDOR,DRIVER}_ID_FILTER`) applied where the Khronos
//! loader applies them: in `vkEnumeratePhysicalDevices(Groups)` itself, on what the top of the
//! instance chain returns. Layers below see every device: Mesa's device-select layer, which
//! every Mesa system runs, crashes when the devices it is told about are all hidden from it.

use vk_generated::types::*;

use crate::load::calls::PhysicalDeviceCalls;
use crate::object::handed_out::HandedOutPhysicalDevice;
use crate::plan::device_filter::DeviceFilters;

/// The application's `vkEnumeratePhysicalDevices`: of every device the chain returned, those the
/// filters admit, in order.
pub fn admitted_devices(filters: &DeviceFilters, devices: &[HandedOutPhysicalDevice]) -> Vec<VkPhysicalDevice> {
    devices.iter().filter(|&&d| admitted(filters, d)).map(|d| d.handle()).collect()
}

/// The application's `vkEnumeratePhysicalDeviceGroups`: of every group the chain returned (each
/// with its members), those whose members the filters all admit, in order.
pub fn admitted_groups(filters: &DeviceFilters, groups: &[(VkPhysicalDeviceGroupProperties, Vec<HandedOutPhysicalDevice>)]) -> Vec<VkPhysicalDeviceGroupProperties> {
    groups.iter().filter(|(_, members)| members.iter().all(|&d| admitted(filters, d))).map(|(group, _)| *group).collect()
}

/// Whether `device` passes the filters: its ids as the chain reports them (a layer may change
/// them), the driver id from its driver.
fn admitted(filters: &DeviceFilters, device: HandedOutPhysicalDevice) -> bool {
    let properties = device.chain_calls().properties();
    filters.rejecting(properties.vendorID, properties.deviceID, || driver_id(device.driver_calls()?)).is_none()
}

/// `VkPhysicalDeviceDriverProperties::driverID` from the device's driver, where it can say.
fn driver_id(driver: PhysicalDeviceCalls) -> Option<u32> {
    let properties: VkPhysicalDeviceDriverProperties = driver.properties2()?;
    Some(properties.driverID.0 as u32)
}
