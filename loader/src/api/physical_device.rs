//! `vkEnumeratePhysicalDevices(Groups)` and the device extension and layer queries: through the
//! instance's layer chain when it has one, else straight to the loader's terminators. The device
//! id filters act here, above the layers, as in the Khronos loader.

use std::ffi::CStr;

use vk_generated::types::*;

use crate::chain::physical_devices::{instance_of, terminator_EnumerateDeviceExtensionProperties, terminator_EnumeratePhysicalDeviceGroups, terminator_EnumeratePhysicalDevices};
use crate::chain::filtered_devices;
use crate::ffi;
use crate::object::instance::Instance;
use crate::plan::device_filter::DeviceFilters;

pub unsafe extern "system" fn vkEnumeratePhysicalDevices(
    instance: VkInstance,
    pPhysicalDeviceCount: *mut u32,
    pPhysicalDevices: *mut VkPhysicalDevice,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDevices", VkResult::ERROR_UNKNOWN, || {
        crate::handles::check_instance(instance.0, "vkEnumeratePhysicalDevices", "instance");
        let Some(inst) = Instance::from_handle(instance) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pPhysicalDeviceCount.is_null() {
            crate::object::instance::with_messengers_of(Some(inst), || {
                crate::debug::log::validation_error(
                    "vkEnumeratePhysicalDevices: Received NULL pointer for physical device count return value. [VUID-vkEnumeratePhysicalDevices-pPhysicalDeviceCount-parameter]",
                )
            });
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let all = |count: *mut u32, out: *mut VkPhysicalDevice| match &inst.layers {
            Some(layers) => crate::chain::instance_layers::enumerate_physical_devices(inst, layers, count, out),
            None => terminator_EnumeratePhysicalDevices(instance, count, out),
        };
        let filters = DeviceFilters::from_env();
        match filters.any() {
            true => filtered_devices::enumerate(&filters, all, pPhysicalDeviceCount, pPhysicalDevices),
            false => all(pPhysicalDeviceCount, pPhysicalDevices),
        }
    })
}

pub unsafe extern "system" fn vkEnumeratePhysicalDeviceGroups(
    instance: VkInstance,
    pPhysicalDeviceGroupCount: *mut u32,
    pPhysicalDeviceGroupProperties: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDeviceGroups", VkResult::ERROR_UNKNOWN, || {
        crate::handles::check_instance(instance.0, "vkEnumeratePhysicalDeviceGroups", "instance");
        let Some(inst) = Instance::from_handle(instance) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let all = |count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties| match &inst.layers {
            Some(layers) => crate::chain::instance_layers::enumerate_physical_device_groups(inst, layers, count, out),
            None => terminator_EnumeratePhysicalDeviceGroups(instance, count, out),
        };
        let filters = DeviceFilters::from_env();
        match filters.any() && !pPhysicalDeviceGroupCount.is_null() {
            true => filtered_devices::enumerate_groups(&filters, all, pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties),
            false => all(pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties),
        }
    })
}

pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    physicalDevice: VkPhysicalDevice,
    pLayerName: *const std::ffi::c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateDeviceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        crate::handles::check_physical_device(physicalDevice.0, "vkEnumerateDeviceExtensionProperties", "physicalDevice");
        let Some(instance) = instance_of(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if !pLayerName.is_null() && *pLayerName != 0 {
            // Answered from the layer's manifest, as the Khronos loader does.
            return match crate::chain::instance_layers::device_extensions_of_layer(instance, CStr::from_ptr(pLayerName)) {
                Some(list) => ffi::fill(&list, pPropertyCount, pProperties),
                None => VkResult::ERROR_LAYER_NOT_PRESENT,
            };
        }
        if instance.layers.is_none() {
            return terminator_EnumerateDeviceExtensionProperties(physicalDevice, std::ptr::null(), pPropertyCount, pProperties);
        }
        let table = crate::loader_abi::instance_table(physicalDevice.0);
        match (*table).vkEnumerateDeviceExtensionProperties {
            Some(f) => f(crate::loader_abi::unwrap_physical_device(physicalDevice), std::ptr::null(), pPropertyCount, pProperties),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}


