//! A device's create info as the next level needs it when a `VkDeviceGroupDeviceCreateInfo` is
//! chained: the application names the loader's physical devices, and the layers and drivers below
//! need their own. The application's structures are `const`: they may sit in read-only memory or
//! be shared with another thread creating a device at the same time, so they are never written.
//! The next level gets copies instead: the create info, bitwise copies of the chain's structures
//! before the group (relinked), and the group naming the mapped handles; the rest of the chain
//! after the group is the application's own.

use std::ffi::c_void;
use std::mem::size_of;

use vk_generated::layer_abi::VkLayerDeviceCreateInfo;
use vk_generated::types::*;

use crate::debug::log::{self, Level};

/// Runs `create` with `info` as the next level must see it: where a `VkDeviceGroupDeviceCreateInfo`
/// is chained, a copy whose group names the physical devices `map` gives for the application's;
/// `info` itself otherwise. `VK_ERROR_INITIALIZATION_FAILED` where `map` knows a member not. Where a
/// structure before the group is one the loader cannot copy (an sType its registry does not know),
/// the group's copy goes first, before the application's whole chain.
///
/// # Safety
/// `info` must be a valid `VkDeviceCreateInfo`: its chain NULL-terminated, each element a valid
/// structure of the type its sType names, the group's array valid for its count.
pub(super) unsafe fn with_device_group_handles(
    info: &VkDeviceCreateInfo,
    map: impl Fn(VkPhysicalDevice) -> Option<VkPhysicalDevice>,
    create: impl FnOnce(&VkDeviceCreateInfo) -> VkResult,
) -> VkResult {
    let mut before = Vec::new();
    let mut found = None;
    // SAFETY: the caller's promise that the chain is valid.
    for (s_type, element) in unsafe { vk_generated::chain_elements(info.pNext) } {
        if s_type == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO {
            found = Some(element.cast::<VkDeviceGroupDeviceCreateInfo>());
            break;
        }
        before.push((s_type, element));
    }
    // SAFETY: its sType says it is a VkDeviceGroupDeviceCreateInfo; the caller's promise that it is valid.
    let Some(group) = found.map(|group| unsafe { &*group }) else { return create(info) };
    if group.pPhysicalDevices.is_null() || group.physicalDeviceCount == 0 {
        return create(info);
    }
    // SAFETY: the caller's promise that the array holds `physicalDeviceCount` handles.
    let members = unsafe { std::slice::from_raw_parts(group.pPhysicalDevices, group.physicalDeviceCount as usize) };
    let Some(mapped) = members.iter().map(|&member| map(member)).collect::<Option<Vec<VkPhysicalDevice>>>() else {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    };
    let mut group_copy = VkDeviceGroupDeviceCreateInfo { pPhysicalDevices: mapped.as_ptr(), ..*group };
    let Some(sizes) = before.iter().map(|&(s_type, _)| chain_structure_size(s_type)).collect::<Option<Vec<usize>>>() else {
        // A structure the loader cannot size (an sType its registry does not know) cannot be
        // copied and relinked: the group's copy goes first instead, before the application's whole
        // chain, where the next level finds it first (the application's group stays behind it).
        log::write(
            Level::Debug,
            "vkCreateDevice: the pNext chain holds a structure this loader does not know before its \
             VkDeviceGroupDeviceCreateInfo: the group with the drivers' handles goes first in the chain",
        );
        group_copy.pNext = info.pNext;
        let mut chained = *info;
        chained.pNext = (&group_copy as *const VkDeviceGroupDeviceCreateInfo).cast();
        return create(&chained);
    };
    let group_copy: *const c_void = (&group_copy as *const VkDeviceGroupDeviceCreateInfo).cast();
    let mut copies = ChainCopies::new(&sizes);
    for (index, &(_, element)) in before.iter().enumerate() {
        // SAFETY: an element of the chain, at least `sizes[index]` bytes as its sType's structure is.
        unsafe { copies.copy(index, element.cast()) };
    }
    let mut chained = *info;
    chained.pNext = copies.link(group_copy);
    create(&chained)
}

/// The size of a structure of `s_type` in a device create info's chain: one the registry lists as
/// extending it, or the loader's own link structure (a layer may leave one in place).
fn chain_structure_size(s_type: VkStructureType) -> Option<usize> {
    match s_type {
        VkStructureType::LOADER_DEVICE_CREATE_INFO => Some(size_of::<VkLayerDeviceCreateInfo>()),
        _ => vk_generated::chain_sizes::device_create_info(s_type),
    }
}

/// Bitwise copies of chain structures, each in its own 8-byte aligned slot of one block (no
/// Vulkan structure needs more alignment).
struct ChainCopies {
    block: Vec<u64>,
    /// Each copy's first word in `block`, and its size in bytes.
    slots: Vec<(usize, usize)>,
}

impl ChainCopies {
    fn new(sizes: &[usize]) -> ChainCopies {
        let mut slots = Vec::with_capacity(sizes.len());
        let mut words = 0;
        for &size in sizes {
            slots.push((words, size));
            words += size.div_ceil(size_of::<u64>());
        }
        ChainCopies { block: vec![0; words], slots }
    }

    /// Copies structure `index` from `source`.
    ///
    /// # Safety
    /// `source` must be readable for the slot's size.
    unsafe fn copy(&mut self, index: usize, source: *const u8) {
        let (first_word, size) = self.slots[index];
        let target = self.block[first_word..].as_mut_ptr().cast::<u8>();
        // SAFETY: the slot holds `size` bytes (rounded up to words); the caller's promise for `source`.
        unsafe { std::ptr::copy_nonoverlapping(source, target, size) };
    }

    /// Links the copies in order, the last to `rest`; returns the first (`rest` when there are none).
    fn link(&mut self, rest: *const c_void) -> *const c_void {
        let base = self.block.as_mut_ptr();
        let mut next = rest;
        for &(first_word, _) in self.slots.iter().rev() {
            // SAFETY: every copy is a chain structure, which starts with sType and pNext (a
            // VkBaseOutStructure), in its slot of `block`, aligned for it.
            let header = unsafe { base.add(first_word) }.cast::<VkBaseOutStructure>();
            // SAFETY: as above; `header` points into `block`, which nothing else refers to.
            unsafe { (*header).pNext = next.cast_mut().cast() };
            next = header.cast_const().cast();
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The group is found first and deeper in the chain; the next level sees the mapped handles and
    /// every other structure's contents, and the application's structures are left as they were.
    #[test]
    fn the_next_level_gets_mapped_copies_and_the_applications_chain_is_untouched() {
        let app = [VkPhysicalDevice(0x10 as *mut c_void), VkPhysicalDevice(0x20 as *mut c_void)];
        let map = |h: VkPhysicalDevice| Some(VkPhysicalDevice((h.0 as usize + 1) as *mut c_void));
        let tail = VkPhysicalDeviceProtectedMemoryFeatures { protectedMemory: VK_TRUE, ..Default::default() };
        let group = VkDeviceGroupDeviceCreateInfo {
            pNext: (&tail as *const VkPhysicalDeviceProtectedMemoryFeatures).cast(),
            physicalDeviceCount: 2,
            pPhysicalDevices: app.as_ptr(),
            ..Default::default()
        };
        let features = VkPhysicalDeviceFeatures2 {
            pNext: (&group as *const VkDeviceGroupDeviceCreateInfo).cast_mut().cast(),
            features: VkPhysicalDeviceFeatures { robustBufferAccess: VK_TRUE, ..Default::default() },
            ..Default::default()
        };
        let deeper = VkDeviceCreateInfo { pNext: (&features as *const VkPhysicalDeviceFeatures2).cast(), ..Default::default() };
        let first = VkDeviceCreateInfo { pNext: (&group as *const VkDeviceGroupDeviceCreateInfo).cast(), ..Default::default() };
        for info in [&first, &deeper] {
            let next = info.pNext;
            let seen = std::cell::Cell::new(0);
            // SAFETY: a valid chain of locals, which outlive the call.
            let result = unsafe {
                with_device_group_handles(info, map, |passed| {
                    assert!(!std::ptr::eq(passed, info));
                    let chain: Vec<_> = vk_generated::chain_elements(passed.pNext).collect();
                    let (_, copy) = chain.iter().find(|(s, _)| *s == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO).unwrap();
                    assert_ne!(*copy, (&group as *const VkDeviceGroupDeviceCreateInfo).cast());
                    let copy = &*copy.cast::<VkDeviceGroupDeviceCreateInfo>();
                    assert_eq!(std::slice::from_raw_parts(copy.pPhysicalDevices, 2), [map(app[0]).unwrap(), map(app[1]).unwrap()]);
                    assert_eq!(chain.last().unwrap().1, (&tail as *const VkPhysicalDeviceProtectedMemoryFeatures).cast(), "the rest is shared");
                    if let Some((_, f)) = chain.iter().find(|(s, _)| *s == VkStructureType::PHYSICAL_DEVICE_FEATURES_2) {
                        assert_ne!(*f, (&features as *const VkPhysicalDeviceFeatures2).cast());
                        assert_eq!((*f.cast::<VkPhysicalDeviceFeatures2>()).features.robustBufferAccess, VK_TRUE);
                    }
                    seen.set(chain.len());
                    VkResult::SUCCESS
                })
            };
            assert_eq!(result, VkResult::SUCCESS);
            assert_eq!(seen.get(), if std::ptr::eq(info, &first) { 2 } else { 3 });
            assert_eq!(info.pNext, next);
            assert_eq!((group.pNext, group.pPhysicalDevices), ((&tail as *const VkPhysicalDeviceProtectedMemoryFeatures).cast(), app.as_ptr()));
            assert_eq!(features.pNext, (&group as *const VkDeviceGroupDeviceCreateInfo).cast_mut().cast());
        }
    }

    /// A member the map does not know fails the creation. A structure the loader cannot size before
    /// the group cannot be relinked: the group's copy goes first, before the application's
    /// untouched chain.
    #[test]
    fn unknown_members_fail_and_unsized_structures_before_the_group_put_the_copy_first() {
        let app = [VkPhysicalDevice(0x10 as *mut c_void)];
        let group = VkDeviceGroupDeviceCreateInfo { physicalDeviceCount: 1, pPhysicalDevices: app.as_ptr(), ..Default::default() };
        let info = VkDeviceCreateInfo { pNext: (&group as *const VkDeviceGroupDeviceCreateInfo).cast(), ..Default::default() };
        let called = std::cell::Cell::new(false);
        // SAFETY: a valid chain of locals, which outlive the call.
        let result = unsafe { with_device_group_handles(&info, |_| None, |_| { called.set(true); VkResult::SUCCESS }) };
        assert_eq!((result, called.get()), (VkResult::ERROR_INITIALIZATION_FAILED, false));
        let unknown = VkBaseInStructure { sType: VkStructureType(0x7fff_0001), pNext: (&group as *const VkDeviceGroupDeviceCreateInfo).cast() };
        let info = VkDeviceCreateInfo { pNext: (&unknown as *const VkBaseInStructure).cast(), ..Default::default() };
        let mapped = |h: VkPhysicalDevice| Some(VkPhysicalDevice((h.0 as usize + 1) as *mut c_void));
        // SAFETY: as above; the unknown structure is only a header, which is all that is read of it.
        let result = unsafe {
            with_device_group_handles(&info, mapped, |passed| {
                let first = &*passed.pNext.cast::<VkDeviceGroupDeviceCreateInfo>();
                assert_eq!(first.sType, VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO);
                assert_eq!(*first.pPhysicalDevices, mapped(app[0]).unwrap());
                assert_eq!(first.pNext, (&unknown as *const VkBaseInStructure).cast(), "the application's chain follows");
                called.set(true);
                VkResult::SUCCESS
            })
        };
        assert_eq!((result, called.get()), (VkResult::SUCCESS, true));
        assert_eq!((unknown.pNext, group.pPhysicalDevices), ((&group as *const VkDeviceGroupDeviceCreateInfo).cast(), app.as_ptr()));
    }
}
