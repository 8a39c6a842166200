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

use crate::ffi::{enumerate, enumerate_chained, slice, write_keeping_header};
use crate::{config, guard, interface_version};

/// A surface the driver made itself (interface 3+). Its address is the handle.
struct OwnSurface {
    extent: VkExtent2D,
}

impl OwnSurface {
    fn handle(&self) -> u64 {
        self as *const OwnSurface as u64
    }
}

/// The driver's live surfaces, boxed so that their addresses, their handles, stay put.
static OWN: Mutex<Vec<Box<OwnSurface>>> = Mutex::new(Vec::new());

/// The driver's live surfaces: checked at `vkDestroyInstance`, where any left is a leak.
pub(crate) fn live_surfaces() -> usize {
    OWN.lock().map_or(0, |own| own.len())
}

const HEADLESS_EXTENT: VkExtent2D = VkExtent2D { width: 64, height: 64 };

/// What a surface handle is to this driver: (its own?, its extent).
///
/// # Safety
/// Below interface 3, a non-NULL `surface` that is not one of the driver's own is a loader's
/// `VkIcdSurface*` (what the loader interface passes such a driver), readable and not destroyed
/// during the call. The driver's own surfaces are found by handle, without reading memory.
pub(crate) unsafe fn resolve(surface: VkSurfaceKHR) -> Result<(bool, VkExtent2D), VkResult> {
    let own = OWN.lock().map_err(|_| VkResult::ERROR_SURFACE_LOST_KHR)?;
    let own_extent = own.iter().find(|s| s.handle() == surface.0).map(|s| s.extent);
    drop(own);
    if interface_version() >= 3 && surface.is_null() && config::null_surfaces() {
        return Ok((true, VkExtent2D::default()));
    }
    if interface_version() >= 3 {
        return own_extent.map(|extent| (true, extent)).ok_or(VkResult::ERROR_SURFACE_LOST_KHR);
    }
    if own_extent.is_some() || surface.is_null() {
        return Err(VkResult::ERROR_SURFACE_LOST_KHR);
    }
    // SAFETY: the loader's `VkIcdSurface*` (this function's contract): a `VkIcdSurfaceBase`
    // first, and the platform-specific surface that its `platform` names.
    let extent = unsafe {
        match (*(surface.0 as *const VkIcdSurfaceBase)).platform {
            VkIcdWsiPlatform::HEADLESS => HEADLESS_EXTENT,
            VkIcdWsiPlatform::XCB => {
                let window = (*(surface.0 as *const VkIcdSurfaceXcb)).window;
                VkExtent2D { width: window, height: window }
            }
            VkIcdWsiPlatform::DISPLAY => (*(surface.0 as *const VkIcdSurfaceDisplay)).imageExtent,
            _ => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
        }
    };
    Ok((false, extent))
}

/// Makes one of the driver's own surfaces and writes its handle to `pSurface`, or fails as the
/// configuration asks (with `VK_TEST_DRIVER_NULL_SURFACES`, succeeds writing nothing).
///
/// # Safety
/// `pSurface` is NULL (answered with `VK_ERROR_INITIALIZATION_FAILED`) or valid for a write.
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
    let surface = Box::new(OwnSurface { extent });
    let handle = surface.handle();
    match OWN.lock() {
        Ok(mut own) => own.push(surface),
        Err(_) => return VkResult::ERROR_OUT_OF_HOST_MEMORY,
    }
    // SAFETY: a non-NULL `pSurface` is writable (this function's contract).
    unsafe { pSurface.write(VkSurfaceKHR(handle)) };
    VkResult::SUCCESS
}

/// `vkCreateHeadlessSurfaceEXT`: one of the driver's own surfaces, 64x64.
///
/// # Safety
/// Valid usage of `vkCreateHeadlessSurfaceEXT`: `pSurface` is valid for a write. A NULL
/// `pCreateInfo` or `pSurface` is answered with `VK_ERROR_INITIALIZATION_FAILED`; the create info
/// is not read, the instance and the allocator not used.
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
        // SAFETY: NULL or writable (this function's contract).
        unsafe { create_own(HEADLESS_EXTENT, pSurface) }
    })
}

/// `vkCreateXcbSurfaceKHR`: one of the driver's own surfaces, `window` x `window` (nothing is
/// asked of the X server).
///
/// # Safety
/// Valid usage of `vkCreateXcbSurfaceKHR`: `pCreateInfo` is a valid `VkXcbSurfaceCreateInfoKHR`
/// and `pSurface` is valid for a write. A NULL `pCreateInfo` or `pSurface` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the instance and the allocator are not used.
pub unsafe extern "system" fn vkCreateXcbSurfaceKHR(
    _instance: VkInstance,
    pCreateInfo: *const VkXcbSurfaceCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: NULL or writable (this function's contract).
        unsafe { create_own(VkExtent2D { width: info.window, height: info.window }, pSurface) }
    })
}

/// `vkCreateDisplayPlaneSurfaceKHR`: one of the driver's own surfaces, of the create info's
/// `imageExtent`.
///
/// # Safety
/// Valid usage of `vkCreateDisplayPlaneSurfaceKHR`: `pCreateInfo` is a valid
/// `VkDisplaySurfaceCreateInfoKHR` and `pSurface` is valid for a write. A NULL `pCreateInfo` or
/// `pSurface` is answered with `VK_ERROR_INITIALIZATION_FAILED`; the instance and the allocator
/// are not used.
pub unsafe extern "system" fn vkCreateDisplayPlaneSurfaceKHR(
    _instance: VkInstance,
    pCreateInfo: *const VkDisplaySurfaceCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: NULL or writable (this function's contract).
        unsafe { create_own(info.imageExtent, pSurface) }
    })
}

/// `vkDestroySurfaceKHR`: frees one of the driver's own surfaces; any other handle is ignored.
///
/// # Safety
/// None beyond the signature: the handle is looked up among the driver's own surfaces, never
/// read.
pub unsafe extern "system" fn vkDestroySurfaceKHR(
    _instance: VkInstance,
    surface: VkSurfaceKHR,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        let Ok(mut own) = OWN.lock() else { return };
        if let Some(at) = own.iter().position(|s| s.handle() == surface.0) {
            own.swap_remove(at);
        }
    })
}

/// `vkGetPhysicalDeviceSurfaceSupportKHR`: queue family 0 presents.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSurfaceSupportKHR`: `surface` is valid (as [`resolve`]
/// asks) and `pSupported` is valid for a write. A surface the driver does not accept is answered
/// with `VK_ERROR_SURFACE_LOST_KHR`, a NULL `pSupported` with `VK_ERROR_INITIALIZATION_FAILED`;
/// the physical device is not used.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceSupportKHR(
    _physicalDevice: VkPhysicalDevice,
    queueFamilyIndex: u32,
    surface: VkSurfaceKHR,
    pSupported: *mut VkBool32,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a valid surface (this function's contract).
        if let Err(e) = unsafe { resolve(surface) } {
            return e;
        }
        if pSupported.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let supported = if queueFamilyIndex == 0 { VK_TRUE } else { VK_FALSE };
        // SAFETY: a non-NULL `pSupported` is writable (this function's contract).
        unsafe { pSupported.write(supported) };
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

/// `vkGetPhysicalDeviceSurfaceCapabilitiesKHR`: `minImageCount` 1 for the driver's own surface,
/// 2 for the loader's; the surface's extent.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSurfaceCapabilitiesKHR`: `surface` is valid (as
/// [`resolve`] asks) and `pSurfaceCapabilities` is valid for a write. A surface the driver does
/// not accept is answered with `VK_ERROR_SURFACE_LOST_KHR`, a NULL `pSurfaceCapabilities` with
/// `VK_ERROR_INITIALIZATION_FAILED`; the physical device is not used.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceCapabilitiesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilitiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a valid surface (this function's contract).
        let (own, extent) = match unsafe { resolve(surface) } {
            Ok(seen) => seen,
            Err(e) => return e,
        };
        if pSurfaceCapabilities.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a non-NULL `pSurfaceCapabilities` is writable (this function's contract).
        unsafe { pSurfaceCapabilities.write(capabilities(own, extent)) };
        VkResult::SUCCESS
    })
}

const FORMATS: [VkSurfaceFormatKHR; 2] = [
    VkSurfaceFormatKHR { format: VkFormat::B8G8R8A8_UNORM, colorSpace: VkColorSpaceKHR::SRGB_NONLINEAR_KHR },
    VkSurfaceFormatKHR { format: VkFormat::B8G8R8A8_SRGB, colorSpace: VkColorSpaceKHR::SRGB_NONLINEAR_KHR },
];

/// `vkGetPhysicalDeviceSurfaceFormatsKHR`: two BGRA formats.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSurfaceFormatsKHR`: `surface` is valid (as [`resolve`]
/// asks), `pSurfaceFormatCount` is valid for a read and a write, and a non-NULL `pSurfaceFormats`
/// for writes of `*pSurfaceFormatCount` elements. A surface the driver does not accept is
/// answered with `VK_ERROR_SURFACE_LOST_KHR`, a NULL count with `VK_ERROR_INITIALIZATION_FAILED`;
/// the physical device is not used.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceFormatsKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormatKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a valid surface and the two-call output array (this function's contract).
        unsafe {
            if let Err(e) = resolve(surface) {
                return e;
            }
            enumerate(FORMATS.len(), pSurfaceFormatCount, pSurfaceFormats, |i| FORMATS[i])
        }
    })
}

/// `vkGetPhysicalDeviceSurfacePresentModesKHR`: FIFO and mailbox.
///
/// # Safety
/// As [`vkGetPhysicalDeviceSurfaceFormatsKHR`], for `pPresentModeCount` and `pPresentModes`.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfacePresentModesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pPresentModeCount: *mut u32,
    pPresentModes: *mut VkPresentModeKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let modes = [VkPresentModeKHR::FIFO_KHR, VkPresentModeKHR::MAILBOX_KHR];
        // SAFETY: a valid surface and the two-call output array (this function's contract).
        unsafe {
            if let Err(e) = resolve(surface) {
                return e;
            }
            enumerate(modes.len(), pPresentModeCount, pPresentModes, |i| modes[i])
        }
    })
}

/// `vkGetPhysicalDevicePresentRectanglesKHR`: one rectangle, the surface's extent.
///
/// # Safety
/// As [`vkGetPhysicalDeviceSurfaceFormatsKHR`], for `pRectCount` and `pRects`.
pub unsafe extern "system" fn vkGetPhysicalDevicePresentRectanglesKHR(
    _physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pRectCount: *mut u32,
    pRects: *mut VkRect2D,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a valid surface and the two-call output array (this function's contract).
        unsafe {
            let extent = match resolve(surface) {
                Ok((_, extent)) => extent,
                Err(e) => return e,
            };
            enumerate(1, pRectCount, pRects, |_| VkRect2D { offset: VkOffset2D::default(), extent })
        }
    })
}

/// `VK_KHR_get_surface_capabilities2`: as the 1-variant, with `maxImageArrayLayers` 2 so that a
/// test can tell the driver's answer from a loader's emulation. The chain is left as it is.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSurfaceCapabilities2KHR`: `pSurfaceInfo` is a valid
/// `VkPhysicalDeviceSurfaceInfo2KHR` whose surface is valid (as [`resolve`] asks), and
/// `pSurfaceCapabilities` is valid for reads and writes, its `sType` and `pNext` set. A NULL
/// pointer is answered with `VK_ERROR_INITIALIZATION_FAILED`, a surface the driver does not
/// accept with `VK_ERROR_SURFACE_LOST_KHR`; the physical device is not used.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceCapabilities2KHR(
    _physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid surface info (this function's contract).
        let Some(info) = (unsafe { pSurfaceInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: a valid surface (this function's contract).
        let (own, extent) = match unsafe { resolve(info.surface) } {
            Ok(seen) => seen,
            Err(e) => return e,
        };
        if pSurfaceCapabilities.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let mut surface_capabilities = capabilities(own, extent);
        surface_capabilities.maxImageArrayLayers = 2;
        let capabilities2 = |_| VkSurfaceCapabilities2KHR { surfaceCapabilities: surface_capabilities, ..Default::default() };
        // SAFETY: a non-NULL `pSurfaceCapabilities` is a writable output structure with its
        // header set (this function's contract).
        unsafe { write_keeping_header(pSurfaceCapabilities, capabilities2) };
        VkResult::SUCCESS
    })
}

/// `vkGetPhysicalDeviceSurfaceFormats2KHR`: as the 1-variant; the chains are left as they are.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSurfaceFormats2KHR`: `pSurfaceInfo` is a valid
/// `VkPhysicalDeviceSurfaceInfo2KHR` whose surface is valid (as [`resolve`] asks),
/// `pSurfaceFormatCount` is valid for a read and a write, and a non-NULL `pSurfaceFormats` for
/// reads and writes of `*pSurfaceFormatCount` elements, each with its `sType` and `pNext` set. A
/// NULL `pSurfaceInfo` or count is answered with `VK_ERROR_INITIALIZATION_FAILED`, a surface the
/// driver does not accept with `VK_ERROR_SURFACE_LOST_KHR`; the physical device is not used.
pub unsafe extern "system" fn vkGetPhysicalDeviceSurfaceFormats2KHR(
    _physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormat2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid surface info (this function's contract).
        let Some(info) = (unsafe { pSurfaceInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let format = |i: usize, _| VkSurfaceFormat2KHR { surfaceFormat: FORMATS[i], ..Default::default() };
        // SAFETY: a valid surface and the two-call output array of structures with their
        // headers set (this function's contract).
        unsafe {
            if let Err(e) = resolve(info.surface) {
                return e;
            }
            enumerate_chained(FORMATS.len(), pSurfaceFormatCount, pSurfaceFormats, format)
        }
    })
}

/// A swapchain: only a handle (no images).
struct Swapchain;

/// A new swapchain's handle, freed by `vkDestroySwapchainKHR`.
fn new_swapchain() -> VkSwapchainKHR {
    VkSwapchainKHR(Box::into_raw(Box::new(Swapchain)) as u64)
}

/// `vkCreateSwapchainKHR`: a handle, once the surface is one the driver accepts.
///
/// # Safety
/// Valid usage of `vkCreateSwapchainKHR`: `pCreateInfo` is a valid `VkSwapchainCreateInfoKHR`
/// whose surface is valid (as [`resolve`] asks), and `pSwapchain` is valid for a write. A NULL
/// pointer is answered with `VK_ERROR_INITIALIZATION_FAILED`, a surface the driver does not
/// accept with `VK_ERROR_SURFACE_LOST_KHR`; the device and the allocator are not used.
pub unsafe extern "system" fn vkCreateSwapchainKHR(
    _device: VkDevice,
    pCreateInfo: *const VkSwapchainCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSwapchain: *mut VkSwapchainKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if pSwapchain.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a valid surface (this function's contract).
        if let Err(e) = unsafe { resolve(info.surface) } {
            return e;
        }
        // SAFETY: a non-NULL `pSwapchain` is writable (this function's contract).
        unsafe { pSwapchain.write(new_swapchain()) };
        VkResult::SUCCESS
    })
}

/// `VK_KHR_display_swapchain`: all or nothing, each create info checked as in `vkCreateSwapchainKHR`.
///
/// # Safety
/// Valid usage of `vkCreateSharedSwapchainsKHR`: `pCreateInfos` is valid for reads of
/// `swapchainCount` valid create infos, each naming a valid surface (as [`resolve`] asks), and
/// `pSwapchains` for writes of `swapchainCount` handles. A NULL array is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`, a surface the driver does not accept with
/// `VK_ERROR_SURFACE_LOST_KHR` and nothing written; the device and the allocator are not used.
pub unsafe extern "system" fn vkCreateSharedSwapchainsKHR(
    _device: VkDevice,
    swapchainCount: u32,
    pCreateInfos: *const VkSwapchainCreateInfoKHR,
    _pAllocator: *const VkAllocationCallbacks,
    pSwapchains: *mut VkSwapchainKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pCreateInfos.is_null() || pSwapchains.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: `swapchainCount` valid create infos, each naming a valid surface (this
        // function's contract).
        let (infos, refused) = unsafe {
            let infos = slice(pCreateInfos, swapchainCount);
            (infos, infos.iter().map(|info| resolve(info.surface)).find(|r| r.is_err()))
        };
        if let Some(Err(e)) = refused {
            return e;
        }
        for i in 0..infos.len() {
            // SAFETY: `pSwapchains` holds `swapchainCount` handles (this function's contract),
            // and `i` is below it.
            unsafe { pSwapchains.add(i).write(new_swapchain()) };
        }
        VkResult::SUCCESS
    })
}

/// `vkDestroySwapchainKHR`.
///
/// # Safety
/// Valid usage of `vkDestroySwapchainKHR`: `swapchain` is NULL (ignored) or a swapchain this
/// driver made and has not destroyed. The device and the allocator are not used.
pub unsafe extern "system" fn vkDestroySwapchainKHR(
    _device: VkDevice,
    swapchain: VkSwapchainKHR,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !swapchain.is_null() {
            // SAFETY: `new_swapchain` made it with `Box::into_raw`, and it is destroyed once
            // (this function's contract).
            drop(unsafe { Box::from_raw(swapchain.0 as *mut Swapchain) });
        }
    })
}

/// `vkGetDeviceGroupSurfacePresentModesKHR`: local presentation only.
///
/// # Safety
/// Valid usage of `vkGetDeviceGroupSurfacePresentModesKHR`: `surface` is valid (as [`resolve`]
/// asks) and `pModes` is valid for a write. A surface the driver does not accept is answered
/// with `VK_ERROR_SURFACE_LOST_KHR`, a NULL `pModes` with `VK_ERROR_INITIALIZATION_FAILED`; the
/// device is not used.
pub unsafe extern "system" fn vkGetDeviceGroupSurfacePresentModesKHR(
    _device: VkDevice,
    surface: VkSurfaceKHR,
    pModes: *mut VkDeviceGroupPresentModeFlagsKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a valid surface (this function's contract).
        if let Err(e) = unsafe { resolve(surface) } {
            return e;
        }
        if pModes.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a non-NULL `pModes` is writable (this function's contract).
        unsafe { pModes.write(VkDeviceGroupPresentModeFlagsKHR::LOCAL_BIT_KHR) };
        VkResult::SUCCESS
    })
}
