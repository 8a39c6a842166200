//! `VkDeviceGroupDeviceCreateInfo` (core 1.1, `VK_KHR_device_group_creation`) names the devices of
//! a group by the loader's `VkPhysicalDevice` handles; the driver must see its own. The create
//! info handed to the driver carries a copy of that struct with the driver's handles.
//!
//! When the struct is not first in the chain, the element before it is the application's: its
//! `pNext` is pointed at the copy for the driver's call and put back afterwards (as the Khronos
//! loader does; the chain is the application's and is not touched otherwise).

use vk_generated::types::*;

use crate::physical_device::PhysicalDevice;

/// A `VkDeviceCreateInfo` for the driver; restores the application's chain when dropped.
pub struct DriverCreateInfo {
    info: VkDeviceCreateInfo,
    /// The copy with the driver's handles, and those handles (boxed: their addresses are used).
    _group: Option<(Box<VkDeviceGroupDeviceCreateInfo>, Vec<VkPhysicalDevice>)>,
    /// The application's element whose `pNext` now points at the copy, and its own `pNext`.
    redirected: Option<(*mut VkBaseInStructure, *const VkBaseInStructure)>,
}

impl DriverCreateInfo {
    /// # Safety
    /// `info` must be a valid create info whose group struct, if any, names loader physical devices.
    pub unsafe fn new(info: &VkDeviceCreateInfo) -> DriverCreateInfo {
        let mut out = DriverCreateInfo { info: *info, _group: None, redirected: None };
        let mut previous: *mut VkBaseInStructure = std::ptr::null_mut();
        let mut next = info.pNext as *const VkBaseInStructure;
        while let Some(element) = next.as_ref() {
            if element.sType == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO {
                let original = &*(next as *const VkDeviceGroupDeviceCreateInfo);
                let devices: Vec<VkPhysicalDevice> = match original.pPhysicalDevices.is_null() {
                    true => Vec::new(),
                    false => std::slice::from_raw_parts(original.pPhysicalDevices, original.physicalDeviceCount as usize)
                        .iter()
                        .map(|&h| PhysicalDevice::from_handle(h).map_or(h, |pd| pd.term.driver_handle))
                        .collect(),
                };
                let mut copy = Box::new(*original);
                if !copy.pPhysicalDevices.is_null() {
                    copy.pPhysicalDevices = devices.as_ptr();
                }
                let copy_ptr = &*copy as *const VkDeviceGroupDeviceCreateInfo as *const VkBaseInStructure;
                match previous.as_mut() {
                    None => out.info.pNext = copy_ptr as *const _,
                    Some(before) => {
                        out.redirected = Some((previous, before.pNext));
                        before.pNext = copy_ptr;
                    }
                }
                out._group = Some((copy, devices));
                break;
            }
            previous = next as *mut VkBaseInStructure;
            next = element.pNext;
        }
        out
    }

    pub fn as_ptr(&self) -> *const VkDeviceCreateInfo {
        &self.info
    }
}

impl Drop for DriverCreateInfo {
    fn drop(&mut self) {
        if let Some((element, original)) = self.redirected.take() {
            // SAFETY: the application's element, still alive: the create call has not returned to it.
            unsafe { (*element).pNext = original };
        }
    }
}
