//! A device create info's group members as the level below knows them, and the driver's
//! `vkCreateDevice` for one of the loader's physical devices: what a device's creation needs of
//! the loader's physical-device objects.

use vk_generated::types::*;

use crate::debug::log::{self, Level};
use crate::given::allocator::Allocator;
use crate::given::device_create_info::{DeviceCreateInfo, GroupMap, GroupMember};
use crate::handles::{has_magic, PHYSICAL_DEVICE_MAGIC};
use crate::load::calls::DeviceCalls;
use crate::loader_abi::unwrap_physical_device;
use crate::object::instance::PhysicalDevice;

/// The members of an application's group as the top layer knows them: what it returned for each.
pub struct ToLayers;

// SAFETY: a member is a physical device the loader or a layer handed out, readable for its header;
// one with the loader's magic is the loader's, whose `unwrapped` field is what the top layer
// returned for it, a device of the same group at that level.
unsafe impl GroupMap for ToLayers {
    fn map(&self, member: GroupMember) -> Option<VkPhysicalDevice> {
        let handle = member.handle();
        // SAFETY: a handle the loader or a layer handed out (`GroupMember`): readable for a header.
        // Then a loader physical device, at either level (its magic).
        unsafe { has_magic(handle.0, PHYSICAL_DEVICE_MAGIC).then(|| unwrap_physical_device(handle)) }
    }
}

/// The members of a group as their drivers know them: each member's terminator-level device's
/// driver handle.
pub struct ToDriver;

// SAFETY: `from_any_handle` takes a handle the loader or a layer handed out (a `GroupMember`) and
// gives the loader's terminator-level device, whose driver handle is the driver's for it.
unsafe impl GroupMap for ToDriver {
    fn map(&self, member: GroupMember) -> Option<VkPhysicalDevice> {
        // SAFETY: a physical device the loader or a layer handed out (`GroupMember`).
        unsafe { PhysicalDevice::from_any_handle(member.handle()) }.map(|pd| pd.term.driver().1)
    }
}

impl PhysicalDevice {
    /// `vkCreateDevice` on this device's driver (loaded: the caller makes a lazy driver live
    /// first), its device group naming the driver's handles. A device whose first word is not
    /// `ICD_LOADER_MAGIC` is destroyed and refused: the loader could not point it to its data.
    /// `VK_ERROR_INITIALIZATION_FAILED` when the driver has no `vkGetDeviceProcAddr` or no
    /// `vkCreateDevice`.
    pub fn create_driver_device(&self, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<DeviceCalls, VkResult> {
        let Some(gdpa) = self.driver_gdpa() else {
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        };
        let driver = self.driver_calls();
        let mut created = Err(VkResult::ERROR_INITIALIZATION_FAILED);
        let result = info.with_group_mapped(&ToDriver, |info| {
            // SAFETY: a valid create info whose group names the driver's handles (`ToDriver`), valid
            // callbacks (`Allocator`), and the driver's own vkGetDeviceProcAddr (`set_gdpa` stores
            // what the driver's vkGetInstanceProcAddr gave).
            created = unsafe { driver.create_device(info.raw(), allocator.as_ptr(), gdpa) };
            created.as_ref().err().copied().unwrap_or(VkResult::SUCCESS)
        });
        if result != VkResult::SUCCESS {
            return Err(result);
        }
        let device = created?;
        if !device.has_loader_magic() {
            log::write(Level::ErrorDriver, "vkCreateDevice: the driver's VkDevice lacks ICD_LOADER_MAGIC; destroying it");
            // SAFETY: the device just created, which nothing else has; the callbacks it was created with.
            unsafe { device.destroy(allocator.as_ptr()) };
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        }
        Ok(device)
    }
}
