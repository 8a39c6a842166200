//! WSI: surfaces (headless, xcb, display plane) and swapchains, strict about whose surface handle
//! they receive. At interface 3 or later the driver creates its own surfaces and accepts only
//! those; below it, it accepts only the loader's `VkIcdSurface*` and reads it. Anything else is
//! `VK_ERROR_SURFACE_LOST_KHR`, so a loader that hands a driver the wrong handle fails loudly.
//!
//! What a query saw is visible in `vkGetPhysicalDeviceSurfaceCapabilitiesKHR`: `minImageCount` is 1
//! for the driver's own surface and 2 for the loader's; `currentExtent` comes from the surface:
//! headless 64x64, xcb `window`x`window`, display plane its `imageExtent`.

use std::sync::Mutex;

use vk_generated::layer_abi::{VkIcdSurfaceBase, VkIcdSurfaceDisplay, VkIcdSurfaceXcb, VkIcdWsiPlatform};
use vk_generated::types::*;

use crate::{config, enumerate, guard, interface_version};

/// A surface the driver made itself (interface 3+). Its address is the handle.
struct OwnSurface {
    extent: VkExtent2D,
}

/// The driver's live surfaces (their handles).
static OWN: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// The driver's live surfaces: checked at `vkDestroyInstance`, where any left is a leak.
pub(crate) fn live_surfaces() -> usize {
    OWN.lock().map_or(0, |own| own.len())
}

const HEADLESS_EXTENT: VkExtent2D = VkExtent2D { width: 64, height: 64 };

/// What a surface handle is to this driver: (its own?, its extent).
pub(crate) unsafe fn resolve(surface: VkSurfaceKHR) -> Result<(bool, VkExtent2D), VkResult> {
    let own = OWN.lock().map_err(|_| VkResult::ERROR_SURFACE_LOST_KHR)?.contains(&surface.0);
    if interface_version() >= 3 && surface.is_null() && config::null_surfaces() {
        return Ok((true, VkExtent2D::default()));
    }
    if interface_version() >= 3 {
        if !own {
            return Err(VkResult::ERROR_SURFACE_LOST_KHR);
        }
        return Ok((true, (*(surface.0 as *const OwnSurface)).extent));
    }
    if own || surface.is_null() {
        return Err(VkResult::ERROR_SURFACE_LOST_KHR);
    }
    let base = &*(surface.0 as *const VkIcdSurfaceBase);
    let extent = match base.platform {
        VkIcdWsiPlatform::HEADLESS => HEADLESS_EXTENT,
        VkIcdWsiPlatform::XCB => {
            let window = (*(surface.0 as *const VkIcdSurfaceXcb)).window;
            VkExtent2D { width: window, height: window }
        }
        VkIcdWsiPlatform::DISPLAY => (*(surface.0 as *const VkIcdSurfaceDisplay)).imageExtent,
        _ => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
    };
    Ok((false, extent))
}

unsafe fn create_own(extent: VkExtent2D, pSurface: *mut VkSurfaceKHR) -> VkResult {
    if pSurface.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if config::fault("fail_create_surface") {
        return VkResult::ERROR_OUT_OF_HOST_MEMORY;
    }
    if config::null_surfaces() {
        return VkResult::SUCCESS;
    }
    let handle = Box::into_raw(Box::new(OwnSurface { extent })) as u64;
    match OWN.lock() {
        Ok(mut own) => own.push(handle),
        Err(_) => return VkResult::ERROR_OUT_OF_HOST_MEMORY,
    }
    *pSurface = VkSurfaceKHR(handle);
    VkResult::SUCCESS
}

pub unsafe extern "system" fn vkCreateHeadlessSurfaceEXT(
    _instance: VkInstance,
    pCreateInfo: *const VkHeadlessSurfaceCreateInfoEXT,
    _pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pCreateInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        create_own(HEADLESS_EXTENT, pSurface)
    })
}

pub unsafe extern "system" fn vkCreateXcbSurfaceKHR(
    _instance: VkInstance,
    pCreateInfo: *const VkXcbSurfaceCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        create_own(VkExtent2D { width: info.window, height: info.window }, pSurface)
    })
}

pub unsafe extern "system" fn vkCreateDisplayPlaneSurfaceKHR(
    _instance: VkInstance,
    pCreateInfo: *const VkDisplaySurfaceCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        create_own(info.imageExtent, pSurface)
    })
}

pub unsafe extern "system" fn vkDestroySurfaceKHR(
    _instance: VkInstance,
    surface: VkSurfaceKHR,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        let Ok(mut own) = OWN.lock() else { return };
        if let Some(at) = own.iter().position(|&h| h == surface.0) {
            own.swap_remove(at);
            drop(Box::from_raw(surface.0 as *mut OwnSurface));
        }
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceSupportKHR(
    _physicalDevice: VkPhysicalDevice,
    queueFamilyIndex: u32,
    surface: VkSurfaceKHR,
    pSupported: *mut VkBool32,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if let Err(e) = resolve(surface) {
            return e;
        }
        let Some(supported) = pSupported.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        *supported = if queueFamilyIndex == 0 { VK_TRUE } else { VK_FALSE };
        VkResult::SUCCESS
    })
}

fn capabilities(own: bool, extent: VkExtent2D) -> VkSurfaceCapabilitiesKHR {
    VkSurfaceCapabilitiesKHR {
        minImageCount: if own { 1 } else { 2 },
        maxImageCount: 8,
        currentExtent: extent,
        minImageExtent: extent,
        maxImageExtent: extent,
        maxImageArrayLayers: 1,
        supportedTransforms: VkSurfaceTransformFlagsKHR::IDENTITY_BIT_KHR,
        currentTransform: VkSurfaceTransformFlagBitsKHR::IDENTITY_BIT_KHR,
        supportedCompositeAlpha: VkCompositeAlphaFlagsKHR::OPAQUE_BIT_KHR,
        supportedUsageFlags: VkImageUsageFlags::COLOR_ATTACHMENT_BIT,
    }
}

pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceCapabilitiesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilitiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (own, extent) = match resolve(surface) {
            Ok(seen) => seen,
            Err(e) => return e,
        };
        let Some(out) = pSurfaceCapabilities.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        *out = capabilities(own, extent);
        VkResult::SUCCESS
    })
}

const FORMATS: [VkSurfaceFormatKHR; 2] = [
    VkSurfaceFormatKHR { format: VkFormat::B8G8R8A8_UNORM, colorSpace: VkColorSpaceKHR::SRGB_NONLINEAR_KHR },
    VkSurfaceFormatKHR { format: VkFormat::B8G8R8A8_SRGB, colorSpace: VkColorSpaceKHR::SRGB_NONLINEAR_KHR },
];

pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceFormatsKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormatKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if let Err(e) = resolve(surface) {
            return e;
        }
        enumerate(FORMATS.len(), pSurfaceFormatCount, pSurfaceFormats, |i, dst| dst.write(FORMATS[i]))
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceSurfacePresentModesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pPresentModeCount: *mut u32,
    pPresentModes: *mut VkPresentModeKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if let Err(e) = resolve(surface) {
            return e;
        }
        let modes = [VkPresentModeKHR::FIFO_KHR, VkPresentModeKHR::MAILBOX_KHR];
        enumerate(modes.len(), pPresentModeCount, pPresentModes, |i, dst| dst.write(modes[i]))
    })
}

pub unsafe extern "system" fn vkGetPhysicalDevicePresentRectanglesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pRectCount: *mut u32,
    pRects: *mut VkRect2D,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let extent = match resolve(surface) {
            Ok((_, extent)) => extent,
            Err(e) => return e,
        };
        enumerate(1, pRectCount, pRects, |_, dst| dst.write(VkRect2D { offset: VkOffset2D::default(), extent }))
    })
}

/// `VK_KHR_get_surface_capabilities2`: as the 1-variant, with `maxImageArrayLayers` 2 so that a
/// test can tell the driver's answer from a loader's emulation.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceCapabilities2KHR(
    _physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pSurfaceInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let (own, extent) = match resolve(info.surface) {
            Ok(seen) => seen,
            Err(e) => return e,
        };
        let Some(out) = pSurfaceCapabilities.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        out.surfaceCapabilities = capabilities(own, extent);
        out.surfaceCapabilities.maxImageArrayLayers = 2;
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceFormats2KHR(
    _physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormat2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pSurfaceInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if let Err(e) = resolve(info.surface) {
            return e;
        }
        enumerate(FORMATS.len(), pSurfaceFormatCount, pSurfaceFormats, |i, dst| (*dst).surfaceFormat = FORMATS[i])
    })
}

/// A swapchain: only a handle (no images).
struct Swapchain;

pub unsafe extern "system" fn vkCreateSwapchainKHR(
    _device: VkDevice,
    pCreateInfo: *const VkSwapchainCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSwapchain: *mut VkSwapchainKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (Some(info), false) = (pCreateInfo.as_ref(), pSwapchain.is_null()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if let Err(e) = resolve(info.surface) {
            return e;
        }
        *pSwapchain = VkSwapchainKHR(Box::into_raw(Box::new(Swapchain)) as u64);
        VkResult::SUCCESS
    })
}

/// `VK_KHR_display_swapchain`: all or nothing, each create info checked as in `vkCreateSwapchainKHR`.
pub unsafe extern "system" fn vkCreateSharedSwapchainsKHR(
    device: VkDevice,
    swapchainCount: u32,
    pCreateInfos: *const VkSwapchainCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSwapchains: *mut VkSwapchainKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pCreateInfos.is_null() || pSwapchains.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let infos = std::slice::from_raw_parts(pCreateInfos, swapchainCount as usize);
        if let Some(Err(e)) = infos.iter().map(|info| resolve(info.surface)).find(|r| r.is_err()) {
            return e;
        }
        for (i, info) in infos.iter().enumerate() {
            vkCreateSwapchainKHR(device, info, pAllocator, pSwapchains.add(i));
        }
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkDestroySwapchainKHR(
    _device: VkDevice,
    swapchain: VkSwapchainKHR,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !swapchain.is_null() {
            drop(Box::from_raw(swapchain.0 as *mut Swapchain));
        }
    })
}

pub unsafe extern "system" fn vkGetDeviceGroupSurfacePresentModesKHR(
    _device: VkDevice,
    surface: VkSurfaceKHR,
    pModes: *mut VkDeviceGroupPresentModeFlagsKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if let Err(e) = resolve(surface) {
            return e;
        }
        let Some(modes) = pModes.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        *modes = VkDeviceGroupPresentModeFlagsKHR::LOCAL_BIT_KHR;
        VkResult::SUCCESS
    })
}
