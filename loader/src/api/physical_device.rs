//! `vkEnumeratePhysicalDevices(Groups)` and the device extension and layer queries: through the
//! instance's layer chain when it has one, else straight to the loader's terminators. The device
//! id filters act here, above the layers, as in the Khronos loader.

use std::ffi::CStr;

use vk_generated::types::*;

use crate::chain::physical_devices::{terminator_EnumerateDeviceExtensionProperties, terminator_EnumeratePhysicalDeviceGroups, terminator_EnumeratePhysicalDevices};
use crate::chain::filtered_devices;
use crate::ffi;
use crate::object::handed_out::HandedOutPhysicalDevice;
use crate::object::instance::Instance;
use crate::plan::device_filter::DeviceFilters;

/// `vkEnumeratePhysicalDevices`.
///
/// # Safety
/// Vulkan's valid usage: `instance` a valid `VkInstance` of this loader; `pPhysicalDeviceCount`
/// valid for reading and writing a `u32`; `pPhysicalDevices` NULL or valid for writing
/// `*pPhysicalDeviceCount` handles. Checked anyway: an `instance` without the loader's magic word
/// is reported and the process stops; a NULL `pPhysicalDeviceCount` is reported as a validation
/// error and returns `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumeratePhysicalDevices(
    instance: VkInstance,
    pPhysicalDeviceCount: *mut u32,
    pPhysicalDevices: *mut VkPhysicalDevice,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDevices", VkResult::ERROR_UNKNOWN, || {
        // One API call: each file it reads (the driver cache) is asked about once.
        let _files = crate::platform::call_files::OneCall::enter();
        // SAFETY: a valid dispatchable handle is readable as a `HandleHeader`; with its magic word
        // checked, an instance of this loader (the contract).
        let Some(inst) = (unsafe {
            crate::handles::check_instance(instance.0, "vkEnumeratePhysicalDevices", "instance");
            Instance::from_handle(instance)
        }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if pPhysicalDeviceCount.is_null() {
            crate::object::instance::with_messengers_of(Some(inst), || {
                crate::debug::log::validation_error(
                    "vkEnumeratePhysicalDevices: Received NULL pointer for physical device count return value. [VUID-vkEnumeratePhysicalDevices-pPhysicalDeviceCount-parameter]",
                )
            });
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: called with the application's count and array (valid: the contract) or with
        // `filtered_devices`' own; `instance` is the live instance.
        let all = |count: *mut u32, out: *mut VkPhysicalDevice| unsafe {
            match &inst.layers {
                Some(_) => match ffi::OutArray::new(count, out) {
                    Some(out) => crate::chain::instance_layers::enumerate_physical_devices(inst, out),
                    None => VkResult::ERROR_INITIALIZATION_FAILED,
                },
                None => terminator_EnumeratePhysicalDevices(instance, count, out),
            }
        };
        let filters = DeviceFilters::from_env();
        // The instance's messengers hear what the drivers' enumeration says ("Failed to detect any
        // valid GPUs"), as the Khronos loader's do.
        crate::object::instance::with_messengers_of(Some(inst), || match filters.any() {
            true => {
                let devices = match ffi::query(all) {
                    Ok(devices) => devices,
                    Err(e) => return e,
                };
                // SAFETY: `all` gives physical devices this loader handed out, which live with `inst`.
                let devices: Vec<HandedOutPhysicalDevice> = devices.into_iter().map(|d| unsafe { HandedOutPhysicalDevice::new(d) }).collect();
                // SAFETY: the count and array as the contract says.
                unsafe { ffi::fill(&filtered_devices::admitted_devices(&filters, &devices), pPhysicalDeviceCount, pPhysicalDevices) }
            }
            false => all(pPhysicalDeviceCount, pPhysicalDevices),
        })
    })
}

/// `vkEnumeratePhysicalDeviceGroups`.
///
/// # Safety
/// Vulkan's valid usage: `instance` a valid `VkInstance` of this loader;
/// `pPhysicalDeviceGroupCount` valid for reading and writing a `u32`;
/// `pPhysicalDeviceGroupProperties` NULL or valid for `*pPhysicalDeviceGroupCount` structures
/// whose `sType` and `pNext` are set. Checked anyway: an `instance` without the loader's magic
/// word is reported and the process stops; a NULL `pPhysicalDeviceGroupCount` is not filtered
/// and fails with `VK_ERROR_INITIALIZATION_FAILED` (said by the terminator without layers; with
/// them, no layer is called).
pub unsafe extern "system" fn vkEnumeratePhysicalDeviceGroups(
    instance: VkInstance,
    pPhysicalDeviceGroupCount: *mut u32,
    pPhysicalDeviceGroupProperties: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDeviceGroups", VkResult::ERROR_UNKNOWN, || {
        // One API call: each file it reads (the driver cache) is asked about once.
        let _files = crate::platform::call_files::OneCall::enter();
        // SAFETY: a valid dispatchable handle is readable as a `HandleHeader`; with its magic word
        // checked, an instance of this loader (the contract).
        let Some(inst) = (unsafe {
            crate::handles::check_instance(instance.0, "vkEnumeratePhysicalDeviceGroups", "instance");
            Instance::from_handle(instance)
        }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: called with the application's count and structures (valid, their headers set:
        // the contract) or with `filtered_devices`' own; `instance` is the live instance.
        let all = |count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties| unsafe {
            match &inst.layers {
                // A NULL count is refused here, as the terminator refuses it.
                Some(_) => match ffi::ChainedOutArray::new(count, out) {
                    Some(out) => crate::chain::instance_layers::enumerate_physical_device_groups(inst, out),
                    None => VkResult::ERROR_INITIALIZATION_FAILED,
                },
                None => terminator_EnumeratePhysicalDeviceGroups(instance, count, out),
            }
        };
        let filters = DeviceFilters::from_env();
        crate::object::instance::with_messengers_of(Some(inst), || match filters.any() && !pPhysicalDeviceGroupCount.is_null() {
            true => {
                let groups = match ffi::query(all) {
                    Ok(groups) => groups,
                    Err(e) => return e,
                };
                // SAFETY: the groups `all` gives name physical devices this loader handed out, which
                // live with `inst`.
                let groups: Vec<_> = groups.into_iter().map(|g| (g, unsafe { HandedOutPhysicalDevice::members_of(&g) })).collect();
                let admitted = filtered_devices::admitted_groups(&filters, &groups);
                // SAFETY: the count and array as the contract says (the application's structures
                // keep their `sType` and `pNext`).
                unsafe { ffi::fill_groups(&admitted, pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties) }
            }
            false => all(pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties),
        })
    })
}

/// `vkEnumerateDeviceExtensionProperties`.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a valid `VkPhysicalDevice` of this loader; `pLayerName`
/// NULL or a NUL-terminated string; `pPropertyCount` valid for reading and writing a `u32`;
/// `pProperties` NULL or valid for writing `*pPropertyCount` structures. Checked anyway: a
/// `physicalDevice` without the loader's magic word is reported and the process stops; an empty
/// `pLayerName` counts as NULL.
pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    physicalDevice: VkPhysicalDevice,
    pLayerName: *const std::ffi::c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateDeviceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: a valid dispatchable handle is readable as a `HandleHeader`; with its magic word
        // checked, a physical device this loader returned (the contract).
        let Some(instance) = (unsafe {
            crate::handles::check_physical_device(physicalDevice.0, "vkEnumerateDeviceExtensionProperties", "physicalDevice");
            Instance::of_physical_device(physicalDevice)
        }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: NULL or NUL-terminated (the contract).
        let layer_name = (!pLayerName.is_null()).then(|| unsafe { CStr::from_ptr(pLayerName) }).filter(|name| !name.is_empty());
        if let Some(layer_name) = layer_name {
            // Answered from the layer's manifest, as the Khronos loader does.
            return match crate::chain::instance_layers::device_extensions_of_layer(instance, layer_name) {
                // SAFETY: the application's count and array (the contract).
                Some(list) => unsafe { ffi::fill(&list, pPropertyCount, pProperties) },
                None => VkResult::ERROR_LAYER_NOT_PRESENT,
            };
        }
        if instance.layers.is_none() {
            // SAFETY: a physical device of this loader and the application's count and array.
            return unsafe { terminator_EnumerateDeviceExtensionProperties(physicalDevice, std::ptr::null(), pPropertyCount, pProperties) };
        }
        // SAFETY: a physical device of this loader: its first word is the instance chain's table,
        // whose function takes the handle the top layer knows it by, and the application's count
        // and array.
        unsafe {
            let table = crate::loader_abi::instance_table(physicalDevice.0);
            match (*table).vkEnumerateDeviceExtensionProperties {
                Some(f) => f(crate::loader_abi::unwrap_physical_device(physicalDevice), std::ptr::null(), pPropertyCount, pProperties),
                None => VkResult::ERROR_INITIALIZATION_FAILED,
            }
        }
    })
}


