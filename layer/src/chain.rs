//! The loader's chain information for this layer: the `VK_LAYER_LINK_INFO` entries of
//! `VkLayerInstanceCreateInfo` / `VkLayerDeviceCreateInfo` in the create info's `pNext` chain.
//! Taking this layer's link moves the chain on, so the next layer finds its own.

use std::ffi::c_void;

use vk_generated::layer_abi::{
    PFN_GetPhysicalDeviceProcAddr, PFN_vkSetDeviceLoaderData, PFN_vkSetInstanceLoaderData,
    VkLayerDeviceCreateInfo, VkLayerFunction, VkLayerInstanceCreateInfo,
    VkLayerInstanceCreateInfoLayerDevice,
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
unsafe fn find_link_info<T>(p_next: *const c_void, s_type: VkStructureType) -> Option<*mut T> {
    // SAFETY: per the caller's contract.
    unsafe { find_info(p_next, s_type, VkLayerFunction::LAYER_LINK_INFO) }
}

/// What the loader gives this layer at `vkCreateInstance`: its link (the next level's
/// `vkGetInstanceProcAddr` and `vk_layerGetPhysicalDeviceProcAddr`) and its callbacks.
#[derive(Clone, Copy)]
pub struct InstanceLink {
    /// The next level's `vkGetInstanceProcAddr`.
    pub gipa: Gipa,
    /// The next level's `vk_layerGetPhysicalDeviceProcAddr`, when it has one (interface 2).
    pub gpdpa: PFN_GetPhysicalDeviceProcAddr,
    /// `vkSetInstanceLoaderData`: gives a dispatchable object this layer makes (a wrapped
    /// instance or physical device) the loader's dispatch pointer.
    pub set_loader_data: PFN_vkSetInstanceLoaderData,
    /// `pfnLayerCreateDevice` / `pfnLayerDestroyDevice`: a device of the layer's own through the
    /// levels below it. Its `layerGIPA` is how the loader finds the layer in the chain: pass
    /// [`chassis::get_instance_proc_addr::<L>`](crate::chassis::get_instance_proc_addr), the
    /// function negotiation hands out.
    pub layer_device: VkLayerInstanceCreateInfoLayerDevice,
}

/// What the loader gives this layer at `vkCreateDevice`.
#[derive(Clone, Copy)]
pub struct DeviceLink {
    /// The next level's `vkGetInstanceProcAddr`.
    pub gipa: Gipa,
    /// The next level's `vkGetDeviceProcAddr`.
    pub gdpa: Gdpa,
    /// `vkSetDeviceLoaderData`: gives a dispatchable object this layer makes (a queue, a command
    /// buffer) the loader's dispatch pointer.
    pub set_loader_data: PFN_vkSetDeviceLoaderData,
}

/// The first loader structure of `sType` with `function` in a `pNext` chain.
///
/// # Safety
/// `p_next` is a valid `pNext` chain; structures of `sType` are laid out as `T`, whose first
/// fields are `sType`, `pNext` and `function` as in `vk_layer.h`.
unsafe fn find_info<T>(
    p_next: *const c_void,
    s_type: VkStructureType,
    function: VkLayerFunction,
) -> Option<*mut T> {
    /// The fields the loader's structures share.
    #[repr(C)]
    struct LoaderHeader {
        _s_type: VkStructureType,
        _p_next: *const c_void,
        function: VkLayerFunction,
    }
    // SAFETY: per the caller's contract, a valid chain.
    let elements = unsafe { vk_generated::chain_elements(p_next) };
    elements
        .filter(|&(found, _)| found == s_type)
        .map(|(_, element)| element as *mut T)
        .find(|&element| {
            // SAFETY: its `sType` says this is the loader's structure, laid out as `T`, which
            // starts as `LoaderHeader` (the caller's contract).
            unsafe { (*(element as *const LoaderHeader)).function == function }
        })
}

/// Takes this layer's instance link and the loader's callbacks.
///
/// # Safety
/// `info` is the `VkInstanceCreateInfo` the loader passed to this layer's `vkCreateInstance`.
pub unsafe fn take_instance_link(info: *const VkInstanceCreateInfo) -> Option<InstanceLink> {
    // SAFETY: per the caller's contract and the loader-layer interface.
    unsafe {
        let p_next = info.as_ref()?.pNext;
        let chain = find_link_info::<VkLayerInstanceCreateInfo>(
            p_next,
            VkStructureType::LOADER_INSTANCE_CREATE_INFO,
        )?;
        let link = (*chain).u.pLayerInfo.as_ref()?;
        let gipa = link.pfnNextGetInstanceProcAddr?;
        let gpdpa = link.pfnNextGetPhysicalDeviceProcAddr;
        (*chain).u.pLayerInfo = link.pNext;
        let find = |function| {
            find_info::<VkLayerInstanceCreateInfo>(
                p_next,
                VkStructureType::LOADER_INSTANCE_CREATE_INFO,
                function,
            )
        };
        let set_loader_data = find(VkLayerFunction::LOADER_DATA_CALLBACK)
            .and_then(|i| (*i).u.pfnSetInstanceLoaderData);
        let layer_device = find(VkLayerFunction::LOADER_LAYER_CREATE_DEVICE_CALLBACK)
            .map(|i| (*i).u.layerDevice)
            .unwrap_or_default();
        Some(InstanceLink {
            gipa,
            gpdpa,
            set_loader_data,
            layer_device,
        })
    }
}

/// Takes this layer's device link: the next level's `vkGetInstanceProcAddr` and
/// `vkGetDeviceProcAddr`, and the loader's callback.
///
/// # Safety
/// `info` is the `VkDeviceCreateInfo` the loader passed to this layer's `vkCreateDevice`.
pub unsafe fn take_device_link(info: *const VkDeviceCreateInfo) -> Option<DeviceLink> {
    // SAFETY: per the caller's contract and the loader-layer interface.
    unsafe {
        let p_next = info.as_ref()?.pNext;
        let chain = find_link_info::<VkLayerDeviceCreateInfo>(
            p_next,
            VkStructureType::LOADER_DEVICE_CREATE_INFO,
        )?;
        let link = (*chain).u.pLayerInfo.as_ref()?;
        let next: (PFN_vkGetInstanceProcAddr, PFN_vkGetDeviceProcAddr) = (
            link.pfnNextGetInstanceProcAddr,
            link.pfnNextGetDeviceProcAddr,
        );
        (*chain).u.pLayerInfo = link.pNext;
        let set_loader_data = find_info::<VkLayerDeviceCreateInfo>(
            p_next,
            VkStructureType::LOADER_DEVICE_CREATE_INFO,
            VkLayerFunction::LOADER_DATA_CALLBACK,
        )
        .and_then(|i| (*i).u.pfnSetDeviceLoaderData);
        Some(DeviceLink {
            gipa: next.0?,
            gdpa: next.1?,
            set_loader_data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;
    use vk_generated::layer_abi::{VkLayerDeviceLink, VkLayerInstanceLink};
    use vk_generated::types::*;

    /// A next level that has no commands.
    ///
    /// # Safety
    /// None: it reads no argument (`unsafe` for the type of `pfnNextGetInstanceProcAddr`).
    unsafe extern "system" fn gipa(
        _: VkInstance,
        _: *const std::ffi::c_char,
    ) -> PFN_vkVoidFunction {
        None
    }
    /// As [`gipa`].
    ///
    /// # Safety
    /// None, as [`gipa`].
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
        // The link is moved on in place: the chain holds a pointer that may write.
        other.pNext = &mut link as *mut _ as *const c_void;
        let info = VkInstanceCreateInfo {
            pNext: &other as *const _ as *const c_void,
            ..Default::default()
        };
        // SAFETY: a chain as the loader builds it, alive for the call.
        let next = unsafe { take_instance_link(&info) };
        assert_eq!(
            next.map(|l| l.gipa as usize),
            Some(gipa as *const () as usize)
        );
        // SAFETY: `function` is `LAYER_LINK_INFO`: `pLayerInfo` is the live member.
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
            pNext: &mut link as *mut _ as *const c_void,
            ..Default::default()
        };
        // SAFETY: a chain as the loader builds it, alive for the call.
        let found = unsafe { take_device_link(&info) }.expect("link");
        let DeviceLink {
            gipa: i, gdpa: d, ..
        } = found;
        assert_eq!(
            (i as usize, d as usize),
            (gipa as *const () as usize, gdpa as *const () as usize)
        );
        // SAFETY: `function` is `LAYER_LINK_INFO`: `pLayerInfo` is the live member.
        assert!(unsafe { link.u.pLayerInfo }.is_null());
    }

    #[test]
    fn missing_link_is_none() {
        let info = VkInstanceCreateInfo::default();
        // SAFETY: a create info with an empty chain, then none.
        assert!(unsafe { take_instance_link(&info) }.is_none());
        // SAFETY: as above.
        assert!(unsafe { take_instance_link(ptr::null()) }.is_none());
        let mut link = VkLayerDeviceCreateInfo::default(); // LINK_INFO with a null link
        link.u.pLayerInfo = ptr::null_mut();
        let info = VkDeviceCreateInfo {
            pNext: &mut link as *mut _ as *const c_void,
            ..Default::default()
        };
        // SAFETY: a chain as the loader builds it, alive for the call.
        assert!(unsafe { take_device_link(&info) }.is_none());
    }
}
