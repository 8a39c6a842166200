//! `vkCreateDevice`, `vkDestroyDevice` and `vkGetDeviceProcAddr`.

use std::ffi::{c_char, CStr};

use vk_generated::DispatchTable;
use vk_generated::types::*;

use crate::chain::device::{beyond_core_version, create_without_layers, warn_about_device_layers};
use crate::given::allocator::Allocator;
use crate::given::device_create_info::DeviceCreateInfo;
use crate::object::device_creation::ToLayers;
use crate::object::handed_out::HandedOutPhysicalDevice;
use crate::object::instance::PhysicalDevice;
use crate::debug::log::Level;
use crate::ffi;
use crate::object::device::DeviceData;
use crate::object::instance::Instance;
use crate::platform::host_alloc::AllocatorScope;

/// `vkCreateDevice`: through the instance's layers, or straight to the physical device's driver.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of a live instance of this loader;
/// `pCreateInfo` a valid structure (its arrays valid for their counts, its names NUL-terminated,
/// its chain valid, a device group naming physical devices of the instance); `pAllocator` NULL
/// or valid callbacks; `pDevice` valid for writing a handle. Checked anyway: the physical device's
/// magic (a message), a NULL `pCreateInfo` or `pDevice` (`VK_ERROR_INITIALIZATION_FAILED`), the
/// enabled extensions (`VK_ERROR_EXTENSION_NOT_PRESENT`). What the application passed is not
/// written.
pub unsafe extern "system" fn vkCreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    ffi::guard("vkCreateDevice", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a dispatchable handle, readable for the loader's header (this
        // function's contract).
        unsafe { crate::handles::check_physical_device(physicalDevice.0, "vkCreateDevice", "physicalDevice") };
        // SAFETY: a physical device of a live instance of this loader (this function's contract).
        let Some(instance) = (unsafe { Instance::of_physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pDevice.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: a valid create info, whose device group names physical devices this loader
        // handed out (this function's contract).
        let info = unsafe { DeviceCreateInfo::new(info) };
        // SAFETY: NULL or valid callbacks (this function's contract).
        let allocator = unsafe { Allocator::new(pAllocator) };
        warn_about_device_layers(instance, info);
        let names = info.extension_names();
        if !names.is_empty() {
            // Through the instance chain, count then fill, as the Khronos loader asks (loader.c,
            // loader_create_device_chain): a layer may add extensions its manifest does not list.
            // SAFETY: the application's physical device, no layer name, and the count and array
            // `query` passes.
            let available = ffi::query(|count, out| unsafe {
                crate::api::physical_device::vkEnumerateDeviceExtensionProperties(physicalDevice, std::ptr::null(), count, out)
            });
            if let Err(error) = available.and_then(|available| check_extensions(instance, &names, &available)) {
                return error;
            }
        }
        // SAFETY: NULL or valid callbacks, which outlive the device (this function's contract).
        let memory = unsafe { AllocatorScope::enter(pAllocator, VkSystemAllocationScope::DEVICE) };
        let result = match &instance.layers {
            // The layers get the handles they returned, in the device group too.
            Some(_) => {
                // SAFETY: a physical device this loader handed out, of a live instance (this
                // function's contract).
                let pd = unsafe { HandedOutPhysicalDevice::new(physicalDevice) };
                info.with_group_mapped(&ToLayers, |info| match crate::chain::device_layers::create_device(pd, info, allocator) {
                    Ok(device) => {
                        // SAFETY: valid for writing a handle (this function's contract).
                        unsafe { pDevice.write(device) };
                        VkResult::SUCCESS
                    }
                    Err(result) => result,
                })
            }
            None => {
                // SAFETY: a physical device of this loader (this function's contract), terminator-level
                // (the instance has no layers).
                let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                match create_without_layers(pd, info, allocator) {
                    Ok(device) => {
                        // SAFETY: valid for writing a handle (this function's contract).
                        unsafe { pDevice.write(device) };
                        VkResult::SUCCESS
                    }
                    Err(result) => result,
                }
            }
        };
        if result != VkResult::SUCCESS {
            // The Khronos loader's words (two spaces and all); the instance's messengers hear it.
            crate::object::instance::with_messengers_of(Some(instance), || crate::debug::log::write(Level::Error, "vkCreateDevice:  Failed to create device chain."));
        }
        if result == VkResult::SUCCESS && memory.failed() {
            // SAFETY: the device just created, destroyed with its callbacks before anyone has it.
            unsafe { vkDestroyDevice(pDevice.read(), pAllocator) };
            return VkResult::ERROR_OUT_OF_HOST_MEMORY;
        }
        result
    })
}

/// `vkDestroyDevice`: down the device's chain, then the loader's data for it.
///
/// # Safety
/// Vulkan's valid usage: `device` NULL or a live device of this loader whose queues and objects
/// the application no longer uses; `pAllocator` NULL or callbacks compatible with those it was
/// created with. A NULL `device` does nothing.
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
///
/// # Safety
/// Vulkan's valid usage: `device` a live device of this loader; `pName` a NUL-terminated string.
/// A NULL `pName` or a name that is not a Vulkan name is NULL, without asking the driver; a NULL
/// `device` is NULL.
#[inline]
pub unsafe extern "system" fn vkGetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    // Not a Vulkan name: NULL without asking the driver, as the Khronos loader answers.
    // SAFETY: NULL or a NUL-terminated string (this function's contract).
    if !unsafe { crate::dispatch::names::is_vulkan_name(pName) } {
        return None;
    }
    // SAFETY: this function's contract is `device_proc_addr`'s.
    unsafe { device_proc_addr(device, pName) }
}

// The same ABI as the entry point, so that the check above ends in a tail jump here.

/// The lookup behind [`vkGetDeviceProcAddr`], for a Vulkan name.
///
/// # Safety
/// As [`vkGetDeviceProcAddr`]; `pName` is not NULL.
#[inline(never)]
unsafe extern "system" fn device_proc_addr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetDeviceProcAddr", None, || {
        // SAFETY: NULL or a live device of this loader (this function's contract).
        let data = unsafe { DeviceData::of(device) }?;
        // SAFETY: a NUL-terminated name (this function's contract).
        match unsafe { vk_generated::lookup::command_c(pName) } {
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
            // SAFETY: the device's own vkGetDeviceProcAddr (the top of its chain, or its driver's)
            // with the device and the caller's name.
            None => data.chain_gdpa.or(data.driver_gdpa).and_then(|gdpa| unsafe { gdpa(device, pName) }),
        }
    })
}

/// Every extension the application enables must be the physical device's (`available`, as the
/// instance chain reports them) or an enabled layer's; `VK_ERROR_EXTENSION_NOT_PRESENT` otherwise.
fn check_extensions(instance: &Instance, names: &[&CStr], available: &[VkExtensionProperties]) -> Result<(), VkResult> {
    let layers = instance.layers.iter().flat_map(|chain| chain.layers.iter());
    let from_layers: Vec<&str> = layers.flat_map(|l| l.manifest.device_extensions.iter().map(|e| e.name.as_str())).collect();
    for name in names {
        let present = available.iter().any(|p| crate::ffi::name_of(p) == name.to_bytes()) || name.to_str().is_ok_and(|n| from_layers.contains(&n));
        if !present {
            // The instance's messengers hear it too.
            crate::object::instance::with_messengers_of(Some(instance), || {
                log!(
                    Level::Error,
                    "loader_validate_device_extensions: Device extension {} not supported by selected physical device or enabled layers.",
                    name.to_string_lossy()
                );
                log!(Level::Error, "vkCreateDevice: Failed to validate extensions in list");
            });
            return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
        }
    }
    Ok(())
}
