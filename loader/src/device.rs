//! Devices: created through the owning driver; the driver's device object gets the loader's
//! device dispatch table (filled from the driver's own `vkGetDeviceProcAddr`) in its first word.

use std::ffi::c_char;

use vk_generated::types::*;
use vk_generated::{DispatchTable, DeviceDispatchTable};

use crate::ffi;
use crate::host_alloc::AllocatorScope;
use crate::loader_abi::UnknownSlots;
use crate::log::{self, Level};
use crate::physical_device::PhysicalDevice;

/// What the first word of a loader-managed `VkDevice` points to. The table comes first, so the
/// trampolines (which read a `DeviceDispatchTable` there) and this module agree; the unknown
/// device-command slots follow it at the constant offset the assembly trampolines use.
#[repr(C)]
pub struct DeviceData {
    pub table: DeviceDispatchTable,
    /// Commands the generated table does not know, by the slot `unknown` gave their name.
    pub unknown: UnknownSlots,
    /// The driver's `vkGetDeviceProcAddr`, for names the generated table does not know.
    pub driver_gdpa: PFN_vkGetDeviceProcAddr,
    /// The driver's swapchain commands where the loader unwraps surfaces for it.
    pub wsi: crate::surface::DeviceWsi,
}

impl DeviceData {
    /// # Safety
    /// `device` must be a live `VkDevice` created through this loader.
    pub unsafe fn of<'a>(device: VkDevice) -> Option<&'a DeviceData> {
        if device.is_null() {
            return None;
        }
        (*(device.0 as *const *const DeviceData)).as_ref()
    }
}

pub unsafe extern "system" fn vkCreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    ffi::guard("vkCreateDevice", VkResult::ERROR_INITIALIZATION_FAILED, || {
        crate::handles::check_physical_device(physicalDevice.0, "vkCreateDevice", "physicalDevice");
        let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pDevice.is_null() || pCreateInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let driver = &*pd.term.driver_table;
        let (Some(create), Some(gdpa)) = (driver.vkCreateDevice, pd.driver_gdpa) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let memory = AllocatorScope::enter(pAllocator, VkSystemAllocationScope::DEVICE);
        let mut device = VkDevice::NULL;
        let result = with_driver_handles_in_device_group(&*pCreateInfo, || {
            create(pd.term.driver_handle, pCreateInfo, pAllocator, &mut device)
        });
        if result != VkResult::SUCCESS {
            return result;
        }
        if !vk_generated::layer_abi::valid_loader_magic_value(device.0) {
            log::write(Level::Error, "vkCreateDevice: the driver's VkDevice lacks ICD_LOADER_MAGIC; destroying it");
            if let Some(destroy) = DeviceDispatchTable::load(|n| gdpa(device, n.as_ptr())).vkDestroyDevice {
                destroy(device, pAllocator);
            }
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let mut table = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
        let wsi = crate::surface::DeviceWsi::install(&mut table, pd);
        let data = Box::new(DeviceData { table, unknown: crate::unknown::device_slots(), driver_gdpa: Some(gdpa), wsi });
        if memory.failed() {
            if let Some(destroy) = data.table.vkDestroyDevice {
                destroy(device, pAllocator);
            }
            return VkResult::ERROR_OUT_OF_HOST_MEMORY;
        }
        let data = Box::into_raw(data);
        crate::unknown::device_created(&(*data).unknown, device, gdpa);
        *(device.0 as *mut *const DeviceData) = data;
        *pDevice = device;
        VkResult::SUCCESS
    })
}

/// Runs `create` with the physical devices of a chained `VkDeviceGroupDeviceCreateInfo` replaced
/// by the driver's own handles (the application names the loader's), and puts the application's
/// array back afterwards, as the Khronos loader does.
unsafe fn with_driver_handles_in_device_group(info: &VkDeviceCreateInfo, create: impl FnOnce() -> VkResult) -> VkResult {
    let Some(group) = vk_generated::find_in_chain::<VkDeviceGroupDeviceCreateInfo>(info.pNext) else { return create() };
    if group.pPhysicalDevices.is_null() || group.physicalDeviceCount == 0 {
        return create();
    }
    let members = std::slice::from_raw_parts(group.pPhysicalDevices, group.physicalDeviceCount as usize);
    let mut driver_handles = Vec::with_capacity(members.len());
    for &member in members {
        match PhysicalDevice::from_handle(member) {
            Some(pd) => driver_handles.push(pd.term.driver_handle),
            None => return VkResult::ERROR_INITIALIZATION_FAILED,
        }
    }
    // The struct is the application's (const in C): patched for the call, then restored.
    let group = group as *const VkDeviceGroupDeviceCreateInfo as *mut VkDeviceGroupDeviceCreateInfo;
    let original = (*group).pPhysicalDevices;
    (*group).pPhysicalDevices = driver_handles.as_ptr();
    let result = create();
    (*group).pPhysicalDevices = original;
    result
}

pub unsafe extern "system" fn vkDestroyDevice(device: VkDevice, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyDevice", (), || {
        if device.is_null() {
            return;
        }
        let data = Box::from_raw(*(device.0 as *const *mut DeviceData));
        crate::unknown::device_destroyed(&data.unknown);
        if let Some(destroy) = data.table.vkDestroyDevice {
            destroy(device, pAllocator);
        }
    })
}

/// `vkGetDeviceProcAddr`: the driver's own pointer for everything the loader need not see.
pub unsafe extern "system" fn vkGetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    // Not a Vulkan name: NULL without asking the driver, as the Khronos loader answers.
    if pName.is_null() || *pName != b'v' as c_char || *pName.add(1) != b'k' as c_char {
        return None;
    }
    ffi::guard("vkGetDeviceProcAddr", None, || {
        let data = DeviceData::of(device)?;
        match vk_generated::lookup::command_c(pName) {
            Some(name) => {
                let info = name.info();
                if info.level != vk_generated::CommandLevel::Device {
                    return None; // instance-level names are not device functions
                }
                if let Some(own) = crate::hand_written(info.name) {
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
            None => data.driver_gdpa.and_then(|gdpa| gdpa(device, pName)),
        }
    })
}
