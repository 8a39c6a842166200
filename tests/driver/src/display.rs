//! `VK_KHR_display` and `VK_KHR_get_display_properties2`: one display ("Test Display", 1920x1080)
//! with one plane and one mode (60 Hz), the same on every physical device.

use std::ffi::c_char;

use vk_generated::types::*;

use crate::{enumerate, guard};

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

pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPropertiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || enumerate(1, pPropertyCount, pProperties, |_, d| d.write(display_properties())))
}

pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPlanePropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPlanePropertiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || enumerate(1, pPropertyCount, pProperties, |_, d| d.write(plane_properties())))
}

pub unsafe extern "system" fn vkGetDisplayModePropertiesKHR(
    _physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayModePropertiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let modes = if display == DISPLAY { 1 } else { 0 };
        enumerate(modes, pPropertyCount, pProperties, |_, d| d.write(mode_properties()))
    })
}

pub unsafe extern "system" fn vkGetDisplayPlaneCapabilitiesKHR(
    _physicalDevice: VkPhysicalDevice,
    mode: VkDisplayModeKHR,
    planeIndex: u32,
    pCapabilities: *mut VkDisplayPlaneCapabilitiesKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (Some(out), true, 0) = (pCapabilities.as_mut(), mode == MODE, planeIndex) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        *out = plane_capabilities();
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayProperties2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        enumerate(1, pPropertyCount, pProperties, |_, d| (*d).displayProperties = display_properties())
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceDisplayPlaneProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPlaneProperties2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        enumerate(1, pPropertyCount, pProperties, |_, d| (*d).displayPlaneProperties = plane_properties())
    })
}

pub unsafe extern "system" fn vkGetDisplayModeProperties2KHR(
    _physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayModeProperties2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let modes = if display == DISPLAY { 1 } else { 0 };
        enumerate(modes, pPropertyCount, pProperties, |_, d| (*d).displayModeProperties = mode_properties())
    })
}

pub unsafe extern "system" fn vkGetDisplayPlaneCapabilities2KHR(
    _physicalDevice: VkPhysicalDevice,
    pDisplayPlaneInfo: *const VkDisplayPlaneInfo2KHR,
    pCapabilities: *mut VkDisplayPlaneCapabilities2KHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (Some(info), Some(out)) = (pDisplayPlaneInfo.as_ref(), pCapabilities.as_mut()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if info.mode != MODE || info.planeIndex != 0 {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        out.capabilities = plane_capabilities();
        VkResult::SUCCESS
    })
}
