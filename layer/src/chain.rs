//! The loader's chain information for this layer: the `VK_LAYER_LINK_INFO` entries of
//! `VkLayerInstanceCreateInfo` / `VkLayerDeviceCreateInfo` in the create info's `pNext` chain.
//! Taking this layer's link moves the chain on, so the next layer finds its own.

use std::ffi::c_void;

use vk_generated::layer_abi::{
    VkLayerDeviceCreateInfo, VkLayerFunction, VkLayerInstanceCreateInfo,
};
use vk_generated::types::{
    PFN_vkGetDeviceProcAddr, PFN_vkGetInstanceProcAddr, VkDeviceCreateInfo, VkInstanceCreateInfo,
    VkStructureType,
};

/// The next level's `vkGetInstanceProcAddr`, as a plain function pointer.
pub type Gipa = unsafe extern "system" fn(
    vk_generated::types::VkInstance,
    *const std::ffi::c_char,
) -> vk_generated::types::PFN_vkVoidFunction;
/// The next level's `vkGetDeviceProcAddr`, as a plain function pointer.
pub type Gdpa = unsafe extern "system" fn(
    vk_generated::types::VkDevice,
    *const std::ffi::c_char,
) -> vk_generated::types::PFN_vkVoidFunction;

/// The first structure of `sType` with `function == VK_LAYER_LINK_INFO` in a `pNext` chain.
///
/// # Safety
/// `p_next` is a valid `pNext` chain; structures of `sType` are laid out as `T`, whose first
/// fields are `sType`, `pNext` and `function` as in `vk_layer.h`.
unsafe fn find_link_info<T>(mut p_next: *const c_void, s_type: VkStructureType) -> Option<*mut T> {
    #[repr(C)]
    struct Header {
        s_type: VkStructureType,
        p_next: *const c_void,
        function: VkLayerFunction,
    }
    while !p_next.is_null() {
        // SAFETY: every structure of a `pNext` chain starts with `sType` and `pNext`; `function`
        // is read only from the loader's structures, which have it.
        let header = unsafe { &*(p_next as *const Header) };
        if header.s_type == s_type && header.function == VkLayerFunction::LAYER_LINK_INFO {
            return Some(p_next as *mut T);
        }
        p_next = header.p_next;
    }
    None
}

/// Takes this layer's instance link: the next level's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `info` is the `VkInstanceCreateInfo` the loader passed to this layer's `vkCreateInstance`.
pub unsafe fn take_instance_link(info: *const VkInstanceCreateInfo) -> Option<Gipa> {
    // SAFETY: per the caller's contract and the loader-layer interface.
    unsafe {
        let chain = find_link_info::<VkLayerInstanceCreateInfo>(
            info.as_ref()?.pNext,
            VkStructureType::LOADER_INSTANCE_CREATE_INFO,
        )?;
        let link = (*chain).u.pLayerInfo.as_ref()?;
        (*chain).u.pLayerInfo = link.pNext;
        link.pfnNextGetInstanceProcAddr
    }
}

/// Takes this layer's device link: the next level's `vkGetInstanceProcAddr` and
/// `vkGetDeviceProcAddr`.
///
/// # Safety
/// `info` is the `VkDeviceCreateInfo` the loader passed to this layer's `vkCreateDevice`.
pub unsafe fn take_device_link(info: *const VkDeviceCreateInfo) -> Option<(Gipa, Gdpa)> {
    // SAFETY: per the caller's contract and the loader-layer interface.
    unsafe {
        let chain = find_link_info::<VkLayerDeviceCreateInfo>(
            info.as_ref()?.pNext,
            VkStructureType::LOADER_DEVICE_CREATE_INFO,
        )?;
        let link = (*chain).u.pLayerInfo.as_ref()?;
        let next: (PFN_vkGetInstanceProcAddr, PFN_vkGetDeviceProcAddr) = (
            link.pfnNextGetInstanceProcAddr,
            link.pfnNextGetDeviceProcAddr,
        );
        (*chain).u.pLayerInfo = link.pNext;
        Some((next.0?, next.1?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;
    use vk_generated::layer_abi::{VkLayerDeviceLink, VkLayerInstanceLink};
    use vk_generated::types::*;

    unsafe extern "system" fn gipa(
        _: VkInstance,
        _: *const std::ffi::c_char,
    ) -> PFN_vkVoidFunction {
        None
    }
    unsafe extern "system" fn gdpa(_: VkDevice, _: *const std::ffi::c_char) -> PFN_vkVoidFunction {
        None
    }

    #[test]
    fn instance_link_is_found_past_other_structures_and_moved_on() {
        let mut second = VkLayerInstanceLink::default();
        let mut first = VkLayerInstanceLink {
            pNext: &mut second,
            pfnNextGetInstanceProcAddr: Some(gipa),
            ..Default::default()
        };
        let mut link = VkLayerInstanceCreateInfo::default();
        link.u.pLayerInfo = &mut first;
        // A loader structure of another function comes first and is skipped.
        let mut other = VkLayerInstanceCreateInfo {
            function: VkLayerFunction::LOADER_DATA_CALLBACK,
            ..Default::default()
        };
        other.pNext = &link as *const _ as *const c_void;
        let info = VkInstanceCreateInfo {
            pNext: &other as *const _ as *const c_void,
            ..Default::default()
        };
        let next = unsafe { take_instance_link(&info) };
        assert_eq!(next.map(|f| f as usize), Some(gipa as *const () as usize));
        assert_eq!(unsafe { link.u.pLayerInfo }, &mut second as *mut _);
    }

    #[test]
    fn device_link_gives_both_functions_and_moves_on() {
        let mut first = VkLayerDeviceLink {
            pNext: ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(gipa),
            pfnNextGetDeviceProcAddr: Some(gdpa),
        };
        let mut link = VkLayerDeviceCreateInfo::default();
        link.u.pLayerInfo = &mut first;
        let info = VkDeviceCreateInfo {
            pNext: &link as *const _ as *const c_void,
            ..Default::default()
        };
        let (i, d) = unsafe { take_device_link(&info) }.expect("link");
        assert_eq!(
            (i as usize, d as usize),
            (gipa as *const () as usize, gdpa as *const () as usize)
        );
        assert!(unsafe { link.u.pLayerInfo }.is_null());
    }

    #[test]
    fn missing_link_is_none() {
        let info = VkInstanceCreateInfo::default();
        assert!(unsafe { take_instance_link(&info) }.is_none());
        assert!(unsafe { take_instance_link(ptr::null()) }.is_none());
        let mut link = VkLayerDeviceCreateInfo::default(); // LINK_INFO with a null link
        link.u.pLayerInfo = ptr::null_mut();
        let info = VkDeviceCreateInfo {
            pNext: &link as *const _ as *const c_void,
            ..Default::default()
        };
        assert!(unsafe { take_device_link(&info) }.is_none());
    }
}
