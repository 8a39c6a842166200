//! `VK_KHR_display` and `VK_KHR_get_display_properties2`: one display ("Test Display", 1920x1080)
//! with one plane and one mode (60 Hz), the same on every physical device.

use std::ffi::c_char;

use vk_generated::types::*;

use crate::ffi::{enumerate, enumerate_chained, write_keeping_header};
use crate::guard;

const DISPLAY: VkDisplayKHR = VkDisplayKHR(0xd15_0001);
const MODE: VkDisplayModeKHR = VkDisplayModeKHR(0xd15_0002);
const RESOLUTION: VkExtent2D = VkExtent2D { width: 1920, height: 1080 };

fn display_properties() -> VkDisplayPropertiesKHR {
    VkDisplayPropertiesKHR {
        display: DISPLAY,
        displayName: c"Test Display".as_ptr() as *const c_char,
        physicalDimensions: VkExtent2D { width: 600, height: 340 },
        physicalResolution: RESOLUTION,
        supportedTransforms: VkSurfaceTransformFlagsKHR::IDENTITY_BIT_KHR,
        ..Default::default()
    }
}

fn plane_properties() -> VkDisplayPlanePropertiesKHR {
    VkDisplayPlanePropertiesKHR { currentDisplay: DISPLAY, currentStackIndex: 0 }
}

fn mode_properties() -> VkDisplayModePropertiesKHR {
    VkDisplayModePropertiesKHR {
        displayMode: MODE,
        parameters: VkDisplayModeParametersKHR { visibleRegion: RESOLUTION, refreshRate: 60_000 },
    }
}

fn plane_capabilities() -> VkDisplayPlaneCapabilitiesKHR {
    VkDisplayPlaneCapabilitiesKHR {
        supportedAlpha: VkDisplayPlaneAlphaFlagsKHR::OPAQUE_BIT_KHR,
        maxSrcExtent: RESOLUTION,
        maxDstExtent: RESOLUTION,
        ..Default::default()
    }
}

// Every output array below follows the two-call idiom; the physical device is never read.

/// `vkGetPhysicalDeviceDisplayPropertiesKHR`: the one display.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceDisplayPropertiesKHR`: `pPropertyCount` is valid for a read
/// and a write, and a non-NULL `pProperties` for writes of `*pPropertyCount` elements. A NULL
/// count is answered with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPropertiesKHR,
) -> VkResult {
    // SAFETY: the two-call output array (this function's contract).
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        enumerate(1, pPropertyCount, pProperties, |_| display_properties())
    })
}

/// `vkGetPhysicalDeviceDisplayPlanePropertiesKHR`: the one plane.
///
/// # Safety
/// As [`vkGetPhysicalDeviceDisplayPropertiesKHR`].
pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPlanePropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPlanePropertiesKHR,
) -> VkResult {
    // SAFETY: the two-call output array (this function's contract).
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        enumerate(1, pPropertyCount, pProperties, |_| plane_properties())
    })
}

/// `vkGetDisplayModePropertiesKHR`: the one mode of the one display, none of another.
///
/// # Safety
/// As [`vkGetPhysicalDeviceDisplayPropertiesKHR`]; the display handle is only compared.
pub unsafe extern "system" fn vkGetDisplayModePropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayModePropertiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let modes = if display == DISPLAY { 1 } else { 0 };
        // SAFETY: the two-call output array (this function's contract).
        unsafe { enumerate(modes, pPropertyCount, pProperties, |_| mode_properties()) }
    })
}

/// `vkGetDisplayPlaneCapabilitiesKHR`: for the one mode and plane.
///
/// # Safety
/// Valid usage of `vkGetDisplayPlaneCapabilitiesKHR`: `pCapabilities` is valid for a write. A
/// NULL one, another mode or another plane is answered with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkGetDisplayPlaneCapabilitiesKHR(
    _physicalDevice: VkPhysicalDevice,
    mode: VkDisplayModeKHR,
    planeIndex: u32,
    pCapabilities: *mut VkDisplayPlaneCapabilitiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (false, true, 0) = (pCapabilities.is_null(), mode == MODE, planeIndex) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: a non-NULL `pCapabilities` is writable (this function's contract).
        unsafe { pCapabilities.write(plane_capabilities()) };
        VkResult::SUCCESS
    })
}

/// `vkGetPhysicalDeviceDisplayProperties2KHR`: as the 1-variant; the chains are left as they are.
///
/// # Safety
/// As [`vkGetPhysicalDeviceDisplayPropertiesKHR`], and each element of a non-NULL `pProperties`
/// is also readable, its `sType` and `pNext` set.
pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayProperties2KHR,
) -> VkResult {
    let item = |_, _| VkDisplayProperties2KHR { displayProperties: display_properties(), ..Default::default() };
    // SAFETY: the two-call output array of structures with their headers set (this function's
    // contract).
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        enumerate_chained(1, pPropertyCount, pProperties, item)
    })
}

/// `vkGetPhysicalDeviceDisplayPlaneProperties2KHR`: as the 1-variant; the chains are left as they
/// are.
///
/// # Safety
/// As [`vkGetPhysicalDeviceDisplayProperties2KHR`].
pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPlaneProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPlaneProperties2KHR,
) -> VkResult {
    let item = |_, _| VkDisplayPlaneProperties2KHR { displayPlaneProperties: plane_properties(), ..Default::default() };
    // SAFETY: the two-call output array of structures with their headers set (this function's
    // contract).
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        enumerate_chained(1, pPropertyCount, pProperties, item)
    })
}

/// `vkGetDisplayModeProperties2KHR`: as the 1-variant; the chains are left as they are.
///
/// # Safety
/// As [`vkGetPhysicalDeviceDisplayProperties2KHR`]; the display handle is only compared.
pub unsafe extern "system" fn vkGetDisplayModeProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayModeProperties2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let modes = if display == DISPLAY { 1 } else { 0 };
        let item = |_, _| VkDisplayModeProperties2KHR { displayModeProperties: mode_properties(), ..Default::default() };
        // SAFETY: the two-call output array of structures with their headers set (this
        // function's contract).
        unsafe { enumerate_chained(modes, pPropertyCount, pProperties, item) }
    })
}

/// `vkGetDisplayPlaneCapabilities2KHR`: as the 1-variant; the chain is left as it is.
///
/// # Safety
/// Valid usage of `vkGetDisplayPlaneCapabilities2KHR`: `pDisplayPlaneInfo` is a valid
/// `VkDisplayPlaneInfo2KHR`, `pCapabilities` is valid for reads and writes, its `sType` and
/// `pNext` set. A NULL pointer, another mode or another plane is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkGetDisplayPlaneCapabilities2KHR(
    _physicalDevice: VkPhysicalDevice,
    pDisplayPlaneInfo: *const VkDisplayPlaneInfo2KHR,
    pCapabilities: *mut VkDisplayPlaneCapabilities2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid plane info (this function's contract).
        let (Some(info), false) = (unsafe { pDisplayPlaneInfo.as_ref() }, pCapabilities.is_null()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if info.mode != MODE || info.planeIndex != 0 {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let capabilities2 = |_| VkDisplayPlaneCapabilities2KHR { capabilities: plane_capabilities(), ..Default::default() };
        // SAFETY: a non-NULL `pCapabilities` is a writable output structure with its header set
        // (this function's contract).
        unsafe { write_keeping_header(pCapabilities, capabilities2) };
        VkResult::SUCCESS
    })
}
