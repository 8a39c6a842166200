//! `vkCreateDevice`, `vkDestroyDevice` and `vkGetDeviceProcAddr`.

use std::ffi::{c_char, CStr};

use vk_generated::DispatchTable;
use vk_generated::types::*;

use crate::chain::device::{beyond_core_version, create_without_layers, warn_about_device_layers};
use crate::chain::device_group::with_device_group_handles;
use crate::debug::log::Level;
use crate::ffi;
use crate::object::device::DeviceData;
use crate::object::instance::Instance;
use crate::platform::host_alloc::AllocatorScope;

pub unsafe extern "system" fn vkCreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    ffi::guard("vkCreateDevice", VkResult::ERROR_INITIALIZATION_FAILED, || {
        crate::handles::check_physical_device(physicalDevice.0, "vkCreateDevice", "physicalDevice");
        let Some(instance) = crate::chain::physical_devices::instance_of(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pDevice.is_null() || pCreateInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let info = &*pCreateInfo;
        warn_about_device_layers(instance, info);
        if let Err(missing) = check_extensions(instance, physicalDevice, info) {
            return missing;
        }
        let memory = AllocatorScope::enter(pAllocator, VkSystemAllocationScope::DEVICE);
        let result = match &instance.layers {
            // The layers get the handles they returned, in the device group too.
            Some(layers) => with_device_group_handles(info, |h| Some(crate::loader_abi::unwrap_physical_device(h)), |info| {
                crate::chain::device_layers::create_device(instance, layers, physicalDevice, info, pAllocator, pDevice)
            }),
            None => create_without_layers(physicalDevice, info, pAllocator, pDevice),
        };
        if result == VkResult::SUCCESS && memory.failed() {
            vkDestroyDevice(*pDevice, pAllocator);
            return VkResult::ERROR_OUT_OF_HOST_MEMORY;
        }
        result
    })
}

pub unsafe extern "system" fn vkDestroyDevice(device: VkDevice, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyDevice", (), || {
        if device.is_null() {
            return;
        }
        // Read before the device goes: its first word is the loader's until then.
        // SAFETY: a device the loader created (Vulkan's valid usage), whose first word points to its data.
        let data = unsafe { *(device.0 as *const *mut DeviceData) };
        // Shared while the chain runs: layers and the loader's terminators reach the data through
        // the device's handle too.
        let destroy = {
            // SAFETY: the device's data, live until it is freed below.
            let shared = unsafe { &*data };
            crate::dispatch::unknown::device_destroyed(&shared.unknown);
            shared.table.vkDestroyDevice
        };
        if let Some(destroy) = destroy {
            // SAFETY: the top of the device's chain (or the driver), for the device it created.
            unsafe { destroy(device, pAllocator) };
        }
        // SAFETY: made by `Box::into_raw` at creation; the chain has returned and the device is
        // gone, so nothing refers to the data any more.
        drop(unsafe { Box::from_raw(data) });
    })
}

/// `vkGetDeviceProcAddr`: the driver's own pointer for everything the loader need not see.
/// Inlined into the exported symbol, so that a name that is not a Vulkan name costs a check and
/// no stack frame.
#[inline]
pub unsafe extern "system" fn vkGetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    // Not a Vulkan name: NULL without asking the driver, as the Khronos loader answers.
    if !crate::dispatch::names::is_vulkan_name(pName) {
        return None;
    }
    device_proc_addr(device, pName)
}

// The same ABI as the entry point, so that the check above ends in a tail jump here.

#[inline(never)]
unsafe extern "system" fn device_proc_addr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetDeviceProcAddr", None, || {
        let data = DeviceData::of(device)?;
        match vk_generated::lookup::command_c(pName) {
            Some(name) => {
                let info = name.info();
                if info.level != vk_generated::CommandLevel::Device {
                    return None; // instance-level names are not device functions
                }
                if beyond_core_version(name, data.core_version_limit) {
                    return None;
                }
                if let Some(own) = crate::hand_written(name.command) {
                    return Some(own);
                }
                // New queues and command buffers need the loader's dispatch pointer: keep the
                // trampoline for those; everything else is the driver's own function.
                if info.returns_dispatchable {
                    return crate::trampolines::TRAMPOLINES[name.command as usize];
                }
                data.table.slots()[info.slot as usize]
            }
            // A command the registry does not know: the driver may.
            None => data.chain_gdpa.or(data.driver_gdpa).and_then(|gdpa| gdpa(device, pName)),
        }
    })
}

/// Every extension the application enables must be the physical device's (as the instance
/// chain reports them) or an enabled layer's; `VK_ERROR_EXTENSION_NOT_PRESENT` otherwise.
unsafe fn check_extensions(instance: &Instance, physical_device: VkPhysicalDevice, info: &VkDeviceCreateInfo) -> Result<(), VkResult> {
    if info.enabledExtensionCount == 0 || info.ppEnabledExtensionNames.is_null() {
        return Ok(());
    }
    // Through the instance chain, count then fill, as the Khronos loader asks (loader.c,
    // loader_create_device_chain): a layer may add extensions its manifest does not list.
    let available = ffi::query(|count, out| {
        crate::api::physical_device::vkEnumerateDeviceExtensionProperties(physical_device, std::ptr::null(), count, out)
    })?;
    let layers = instance.layers.iter().flat_map(|chain| chain.layers.iter());
    let from_layers: Vec<&str> = layers.flat_map(|l| l.manifest.device_extensions.iter().map(|e| e.name.as_str())).collect();
    let names = std::slice::from_raw_parts(info.ppEnabledExtensionNames, info.enabledExtensionCount as usize);
    for &name in names.iter().filter(|n| !n.is_null()) {
        let name = CStr::from_ptr(name);
        let present = available.iter().any(|p| crate::ffi::name_of(p) == name.to_bytes())
            || name.to_str().is_ok_and(|n| from_layers.contains(&n));
        if !present {
            // The instance's messengers hear it too.
            crate::object::instance::with_messengers_of(Some(instance), || {
                log!(
                    Level::Error,
                    "loader_validate_device_extensions: Device extension {} not supported by selected physical device or enabled layers.",
                    name.to_string_lossy()
                )
            });
            return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
        }
    }
    Ok(())
}

