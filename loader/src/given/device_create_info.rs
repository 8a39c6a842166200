//! A `VkDeviceCreateInfo` as Vulkan's valid usage describes it, read safely: its layer and
//! extension names, the structures of its `pNext` chain by type, the members of its device group.

use std::ffi::CStr;

use vk_generated::types::*;
use vk_generated::TaggedStruct;

use crate::ffi;

/// A valid `VkDeviceCreateInfo`, for `'a`: its arrays valid for their counts, its names NULL or
/// NUL-terminated, its `pNext` chain valid, any device group naming physical devices the level it
/// was given to handed out.
#[derive(Clone, Copy)]
pub struct DeviceCreateInfo<'a> {
    raw: &'a VkDeviceCreateInfo,
}

/// A member of a device group as the create info names it: a physical device the loader or a
/// layer handed out (the create info's contract). Only this module makes one.
#[derive(Clone, Copy)]
pub struct GroupMember(VkPhysicalDevice);

impl GroupMember {
    pub fn handle(self) -> VkPhysicalDevice {
        self.0
    }
}

/// How the members of a device group become the handles the next level knows.
///
/// # Safety
/// For a [`GroupMember`], `map` returns `None` or a physical device of the level below, in the
/// same group: a create info whose group names what it returns is valid for that level.
pub unsafe trait GroupMap {
    fn map(&self, member: GroupMember) -> Option<VkPhysicalDevice>;
}

impl<'a> DeviceCreateInfo<'a> {
    /// # Safety
    /// `raw` must be valid as Vulkan's valid usage of `vkCreateDevice` says, for `'a`: its arrays
    /// valid for their counts, its layer and extension names NULL or NUL-terminated, its `pNext`
    /// chain NULL-terminated with each element a valid structure of the type its `sType` names,
    /// and a `VkDeviceGroupDeviceCreateInfo`'s array valid for its count, naming physical devices
    /// this loader or a layer handed out at the level `raw` is given to.
    pub unsafe fn new(raw: &'a VkDeviceCreateInfo) -> DeviceCreateInfo<'a> {
        DeviceCreateInfo { raw }
    }

    /// The structure, for the level below (which gets it as it is: the same contract holds there).
    pub fn raw(self) -> &'a VkDeviceCreateInfo {
        self.raw
    }

    /// `ppEnabledLayerNames`, NULL entries as `None`; empty for a NULL array.
    pub fn layer_names(self) -> Vec<Option<&'a CStr>> {
        // SAFETY: `new`'s contract: the array valid for its count.
        let names = unsafe { ffi::slice(self.raw.ppEnabledLayerNames, self.raw.enabledLayerCount) };
        // SAFETY: `new`'s contract: each entry NULL or NUL-terminated.
        names.iter().map(|&name| unsafe { ffi::c_str(name) }).collect()
    }

    /// `ppEnabledExtensionNames`, NULL entries left out.
    pub fn extension_names(self) -> Vec<&'a CStr> {
        // SAFETY: `new`'s contract: the array valid for its count, each entry NULL or NUL-terminated.
        unsafe { ffi::names(self.raw.ppEnabledExtensionNames, self.raw.enabledExtensionCount) }
    }

    /// The first structure of type `T` in the `pNext` chain.
    pub fn find<T: TaggedStruct>(self) -> Option<&'a T> {
        // SAFETY: `new`'s contract: a valid chain, whose elements live for `'a`.
        unsafe { vk_generated::find_in_chain::<T>(self.raw.pNext) }
    }

    /// Runs `create` with the create info as the next level must see it: where a
    /// `VkDeviceGroupDeviceCreateInfo` is chained, a copy whose group names what `map` gives for
    /// each member (see [`super::device_group`]); this one otherwise. `VK_ERROR_INITIALIZATION_FAILED`
    /// where `map` knows a member not.
    pub fn with_group_mapped(self, map: &impl GroupMap, create: impl FnOnce(DeviceCreateInfo<'_>) -> VkResult) -> VkResult {
        // SAFETY: `new`'s contract: a valid chain and group array. The copy `create` is given names
        // what `map` returned, handles of the level below (`GroupMap`'s contract), and is
        // otherwise this create info's own.
        unsafe {
            super::device_group::with_device_group_handles(self.raw, |member| map.map(GroupMember(member)), |info| create(DeviceCreateInfo::new(info)))
        }
    }
}
