//! WSI surfaces (`VK_KHR_surface` and the platform surface extensions).
//!
//! Every `vkCreate*SurfaceKHR` makes a loader-owned surface whose first bytes are the
//! `VkIcdSurface*` structure of its platform, so drivers that leave surfaces to the loader
//! (interface 2 and older) read it as their own. Drivers at interface 3 or later that have the
//! create function also create theirs; the loader keeps one handle per driver inside its surface
//! and hands each driver its own handle wherever a surface is passed down: the physical-device
//! queries here and, on devices of such drivers, the swapchain commands ([`DeviceWsi`]).

use std::ffi::CStr;
use vk_generated::layer_abi::{
    VkIcdSurfaceBase, VkIcdSurfaceDisplay, VkIcdSurfaceHeadless, VkIcdSurfaceWayland, VkIcdSurfaceXcb,
    VkIcdSurfaceXlib, VkIcdWsiPlatform,
};

use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};
use crate::platform::host_alloc::AllocatorScope;
use crate::object::device::DeviceData;
use crate::ffi;
use crate::object::instance::{DriverInstance, Instance};
use crate::debug::log::{self, Level};
use crate::object::instance::PhysicalDevice;
use crate::ffi::{erased, terminator};
use crate::object::device::DeviceWsi;

/// The first driver interface version at which drivers may create their own surfaces.
const DRIVER_SURFACES_INTERFACE: u32 = 3;

/// The platform part of a loader surface: what a driver reads at the `VkSurfaceKHR` address.
#[repr(C)]
#[derive(Clone, Copy)]
pub union IcdSurface {
    pub base: VkIcdSurfaceBase,
    pub xcb: VkIcdSurfaceXcb,
    pub xlib: VkIcdSurfaceXlib,
    pub wayland: VkIcdSurfaceWayland,
    pub display: VkIcdSurfaceDisplay,
    pub headless: VkIcdSurfaceHeadless,
}

/// The loader's `VkSurfaceKHR` (its address is the handle).
#[repr(C)]
pub struct Surface {
    /// First, so that the handle is a valid `VkIcdSurface*` for drivers.
    icd: IcdSurface,
    /// The drivers' own surfaces, by index into `Instance::drivers` (`None`: the driver uses
    /// `icd`). A driver that made one gets what its create function wrote, NULL included, as
    /// with the Khronos loader.
    per_driver: Vec<Option<VkSurfaceKHR>>,
}

/// The handle a driver must be given for `surface`: its own surface if it made one, else the
/// loader's.
///
/// # Safety
/// `surface` must be NULL or a surface this loader created and has not destroyed.
pub unsafe fn for_driver(surface: VkSurfaceKHR, driver: usize) -> VkSurfaceKHR {
    match (surface.0 as *const Surface).as_ref().and_then(|s| s.per_driver.get(driver)) {
        Some(Some(own)) => *own,
        _ => surface,
    }
}

/// A `VkPhysicalDeviceSurfaceInfo2KHR` with the driver's surface in it (pNext kept).
unsafe fn info_for_driver(info: *const VkPhysicalDeviceSurfaceInfo2KHR, driver: usize) -> Option<VkPhysicalDeviceSurfaceInfo2KHR> {
    let mut copy = *info.as_ref()?;
    copy.surface = for_driver(copy.surface, driver);
    Some(copy)
}

/// Creates the loader surface and, in every driver at interface 3+ that can, the driver's own.
unsafe fn create(
    instance: VkInstance,
    extension: &CStr,
    icd: IcdSurface,
    create_in_driver: &dyn Fn(&DriverInstance, *mut VkSurfaceKHR) -> Option<VkResult>,
    allocator: *const VkAllocationCallbacks,
    out: *mut VkSurfaceKHR,
    command: &str,
) -> VkResult {
    let Some(instance) = Instance::from_handle(instance) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    if out.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if !vk_generated::lookup::extension(extension.to_bytes()).is_some_and(|id| instance.enabled_extensions.contains(id)) {
        log::write(Level::Error, &format!("{command}: {extension:?} is not enabled on this instance"));
        return VkResult::ERROR_EXTENSION_NOT_PRESENT;
    }
    // A surface is made for every driver that makes its own: lazy drivers are loaded first.
    instance.load_lazy_drivers(command);
    let memory = AllocatorScope::enter(allocator, VkSystemAllocationScope::OBJECT);
    let mut per_driver = vec![None; instance.drivers.len()];
    for (index, driver) in instance.drivers.iter().enumerate() {
        if driver.driver.interface_version < DRIVER_SURFACES_INTERFACE || !driver.has_extension(extension.to_bytes()) {
            continue;
        }
        let mut own = VkSurfaceKHR::NULL;
        match create_in_driver(driver, &mut own) {
            None => {}
            Some(VkResult::SUCCESS) => per_driver[index] = Some(own),
            Some(error) => {
                log!(Level::Warn, "{command}: {} failed with {error:?}", driver.driver.manifest_path);
                destroy_driver_surfaces(instance, &per_driver, allocator);
                return error;
            }
        }
    }
    let surface = Box::new(Surface { icd, per_driver });
    if memory.failed() {
        destroy_driver_surfaces(instance, &surface.per_driver, allocator);
        return VkResult::ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = VkSurfaceKHR(Box::into_raw(surface) as u64);
    VkResult::SUCCESS
}

unsafe fn destroy_driver_surfaces(instance: &Instance, per_driver: &[Option<VkSurfaceKHR>], allocator: *const VkAllocationCallbacks) {
    for (driver, &own) in instance.drivers.iter().zip(per_driver) {
        let (table, handle) = driver.live();
        if let (Some(own), Some(destroy)) = (own.filter(|s| !s.is_null()), table.vkDestroySurfaceKHR) {
            destroy(handle, own, allocator);
        }
    }
}

/// Calls a driver's create function if it has one (`None`: it leaves surfaces to the loader).
macro_rules! driver_create {
    ($slot:ident, $info:expr, $allocator:expr) => {
        &|d: &DriverInstance, out: *mut VkSurfaceKHR| {
            let (table, handle) = d.live();
            table.$slot.map(|f| f(handle, $info, $allocator, out))
        }
    };
}

pub unsafe extern "system" fn terminator_vkCreateXcbSurfaceKHR(
    instance: VkInstance,
    pCreateInfo: *const VkXcbSurfaceCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateXcbSurfaceKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let icd = IcdSurface {
            xcb: VkIcdSurfaceXcb {
                base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::XCB },
                connection: info.connection,
                window: info.window,
            },
        };
        let make = driver_create!(vkCreateXcbSurfaceKHR, pCreateInfo, pAllocator);
        create(instance, c"VK_KHR_xcb_surface", icd, make, pAllocator, pSurface, "vkCreateXcbSurfaceKHR")
    })
}

pub unsafe extern "system" fn terminator_vkCreateXlibSurfaceKHR(
    instance: VkInstance,
    pCreateInfo: *const VkXlibSurfaceCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateXlibSurfaceKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let icd = IcdSurface {
            xlib: VkIcdSurfaceXlib {
                base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::XLIB },
                dpy: info.dpy,
                window: info.window,
            },
        };
        let make = driver_create!(vkCreateXlibSurfaceKHR, pCreateInfo, pAllocator);
        create(instance, c"VK_KHR_xlib_surface", icd, make, pAllocator, pSurface, "vkCreateXlibSurfaceKHR")
    })
}

pub unsafe extern "system" fn terminator_vkCreateWaylandSurfaceKHR(
    instance: VkInstance,
    pCreateInfo: *const VkWaylandSurfaceCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateWaylandSurfaceKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let icd = IcdSurface {
            wayland: VkIcdSurfaceWayland {
                base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::WAYLAND },
                display: info.display,
                surface: info.surface,
            },
        };
        let make = driver_create!(vkCreateWaylandSurfaceKHR, pCreateInfo, pAllocator);
        create(instance, c"VK_KHR_wayland_surface", icd, make, pAllocator, pSurface, "vkCreateWaylandSurfaceKHR")
    })
}

pub unsafe extern "system" fn terminator_vkCreateHeadlessSurfaceEXT(
    instance: VkInstance,
    pCreateInfo: *const VkHeadlessSurfaceCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateHeadlessSurfaceEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pCreateInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let icd = IcdSurface {
            headless: VkIcdSurfaceHeadless { base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::HEADLESS } },
        };
        let make = driver_create!(vkCreateHeadlessSurfaceEXT, pCreateInfo, pAllocator);
        create(instance, c"VK_EXT_headless_surface", icd, make, pAllocator, pSurface, "vkCreateHeadlessSurfaceEXT")
    })
}

pub unsafe extern "system" fn terminator_vkCreateDisplayPlaneSurfaceKHR(
    instance: VkInstance,
    pCreateInfo: *const VkDisplaySurfaceCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateDisplayPlaneSurfaceKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let icd = IcdSurface {
            display: VkIcdSurfaceDisplay {
                base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::DISPLAY },
                displayMode: info.displayMode,
                planeIndex: info.planeIndex,
                planeStackIndex: info.planeStackIndex,
                transform: info.transform,
                globalAlpha: info.globalAlpha,
                alphaMode: info.alphaMode,
                imageExtent: info.imageExtent,
            },
        };
        let make = driver_create!(vkCreateDisplayPlaneSurfaceKHR, pCreateInfo, pAllocator);
        create(instance, c"VK_KHR_display", icd, make, pAllocator, pSurface, "vkCreateDisplayPlaneSurfaceKHR")
    })
}

pub unsafe extern "system" fn terminator_vkDestroySurfaceKHR(
    instance: VkInstance,
    surface: VkSurfaceKHR,
    pAllocator: *const VkAllocationCallbacks,
) {
    ffi::guard("vkDestroySurfaceKHR", (), || {
        let Some(instance) = Instance::from_handle(instance) else { return };
        if surface.is_null() {
            return;
        }
        let surface = Box::from_raw(surface.0 as *mut Surface);
        destroy_driver_surfaces(instance, &surface.per_driver, pAllocator);
    })
}

/// The owning driver's table, its physical-device handle and its index, for a loader physical device.
unsafe fn driver_of<'a>(physical_device: VkPhysicalDevice) -> Option<(&'a InstanceDispatchTable, VkPhysicalDevice, usize)> {
    let pd = PhysicalDevice::from_handle(physical_device)?;
    let (table, handle) = live_driver(pd, "a surface query");
    Some((table, handle, pd.driver))
}

/// The driver's table and handle for a physical device, its driver loaded first if it is lazy
/// (surface queries are answered by the live driver).
unsafe fn live_driver<'a>(pd: &PhysicalDevice, command: &str) -> (&'a InstanceDispatchTable, VkPhysicalDevice) {
    crate::lazy::live_for(&pd.term, command);
    let (table, handle) = pd.term.driver();
    (&*table, handle)
}

/// Says that a driver lacks a surface query it should have.
fn missing(command: &str) -> VkResult {
    log!(Level::Error, "{command}: the physical device's driver does not provide it");
    VkResult::ERROR_EXTENSION_NOT_PRESENT
}

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceSupportKHR(
    physicalDevice: VkPhysicalDevice,
    queueFamilyIndex: u32,
    surface: VkSurfaceKHR,
    pSupported: *mut VkBool32,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceSupportKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some((table, handle, driver)) = driver_of(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match table.vkGetPhysicalDeviceSurfaceSupportKHR {
            Some(f) => f(handle, queueFamilyIndex, for_driver(surface, driver), pSupported),
            None => {
                // A driver without WSI presents to nothing.
                if let Some(supported) = pSupported.as_mut() {
                    *supported = VK_FALSE;
                }
                missing("vkGetPhysicalDeviceSurfaceSupportKHR");
                VkResult::SUCCESS
            }
        }
    })
}

/// A physical-device surface query: the owning driver's function with the driver's surface.
macro_rules! surface_query {
    ($name:ident, $slot:ident, ($($arg:ident: $ty:ty),*)) => {
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, surface: VkSurfaceKHR, $($arg: $ty),*) -> VkResult {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                let Some((table, handle, driver)) = driver_of(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                match table.$slot {
                    Some(f) => f(handle, for_driver(surface, driver), $($arg),*),
                    None => missing(command),
                }
            })
        }
    };
}

surface_query!(terminator_vkGetPhysicalDeviceSurfaceCapabilitiesKHR, vkGetPhysicalDeviceSurfaceCapabilitiesKHR, (pSurfaceCapabilities: *mut VkSurfaceCapabilitiesKHR));
surface_query!(terminator_vkGetPhysicalDeviceSurfaceFormatsKHR, vkGetPhysicalDeviceSurfaceFormatsKHR, (pSurfaceFormatCount: *mut u32, pSurfaceFormats: *mut VkSurfaceFormatKHR));
surface_query!(terminator_vkGetPhysicalDeviceSurfacePresentModesKHR, vkGetPhysicalDeviceSurfacePresentModesKHR, (pPresentModeCount: *mut u32, pPresentModes: *mut VkPresentModeKHR));
surface_query!(terminator_vkGetPhysicalDevicePresentRectanglesKHR, vkGetPhysicalDevicePresentRectanglesKHR, (pRectCount: *mut u32, pRects: *mut VkRect2D));

/// `VK_EXT_display_surface_counter`: the driver's own, or emulated through
/// `vkGetPhysicalDeviceSurfaceCapabilitiesKHR` (no surface counters), as the Khronos loader does.
/// A failing driver call leaves the application's struct untouched.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceCapabilities2EXT(
    physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2EXT,
) -> VkResult {
    let command = "vkGetPhysicalDeviceSurfaceCapabilities2EXT";
    ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, command);
        let surface = for_driver(surface, pd.driver);
        if let Some(f) = table.vkGetPhysicalDeviceSurfaceCapabilities2EXT {
            return f(handle, surface, pSurfaceCapabilities);
        }
        let Some(caps) = pSurfaceCapabilities.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(get) = table.vkGetPhysicalDeviceSurfaceCapabilitiesKHR else { return missing("vkGetPhysicalDeviceSurfaceCapabilitiesKHR") };
        let library = driver_library(pd);
        with_messengers_of(pd, || {
            log!(Level::Info, "{command}: Emulating call in ICD \"{library}\" using vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        });
        let mut plain = VkSurfaceCapabilitiesKHR::default();
        let result = get(handle, surface, &mut plain);
        if result != VkResult::SUCCESS {
            return result;
        }
        caps.minImageCount = plain.minImageCount;
        caps.maxImageCount = plain.maxImageCount;
        caps.currentExtent = plain.currentExtent;
        caps.minImageExtent = plain.minImageExtent;
        caps.maxImageExtent = plain.maxImageExtent;
        caps.maxImageArrayLayers = plain.maxImageArrayLayers;
        caps.supportedTransforms = plain.supportedTransforms;
        caps.currentTransform = plain.currentTransform;
        caps.supportedCompositeAlpha = plain.supportedCompositeAlpha;
        caps.supportedUsageFlags = plain.supportedUsageFlags;
        caps.supportedSurfaceCounters = VkSurfaceCounterFlagsEXT::default();
        result
    })
}

/// The driver library of `pd`, as the Khronos loader names a driver in its messages.
unsafe fn driver_library(pd: &PhysicalDevice) -> &str {
    instance_of(pd).and_then(|i| i.drivers.get(pd.driver)).map_or("?", |d| d.driver.library_path.as_str())
}

/// Runs `f` (which logs) so that the messengers of `pd`'s instance hear it.
unsafe fn with_messengers_of(pd: &PhysicalDevice, f: impl FnOnce()) {
    crate::object::instance::with_messengers_of(instance_of(pd), f)
}

/// `vkGetPhysicalDevice{Xcb,Xlib,Wayland}PresentationSupportKHR`: the driver's answer; `VK_FALSE`
/// with the Khronos loader's message where the instance did not enable the platform's surface
/// extension or the driver lacks the command (a driver without WSI presents to nothing).
macro_rules! presentation_support {
    ($name:ident, $slot:ident, $extension:literal, ($($arg:ident: $ty:ty),*)) => {
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, queueFamilyIndex: u32, $($arg: $ty),*) -> VkBool32 {
            let command = stringify!($slot);
            ffi::guard(command, VK_FALSE, || {
                let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else { return VK_FALSE };
                let enabled = vk_generated::lookup::extension($extension.as_bytes())
                    .is_some_and(|id| instance_of(pd).is_some_and(|i| i.enabled_extensions.contains(id)));
                if !enabled {
                    with_messengers_of(pd, || log!(Level::Error, "{} extension not enabled. {command} not executed!", $extension));
                    return VK_FALSE;
                }
                let (table, handle) = live_driver(pd, command);
                match table.$slot {
                    Some(f) => f(handle, queueFamilyIndex, $($arg),*),
                    None => {
                        with_messengers_of(pd, || log!(Level::Error, "ICD for selected physical device does not export {command}!"));
                        VK_FALSE
                    }
                }
            })
        }
    };
}

presentation_support!(terminator_vkGetPhysicalDeviceXcbPresentationSupportKHR, vkGetPhysicalDeviceXcbPresentationSupportKHR, "VK_KHR_xcb_surface", (connection: *mut xcb_connection_t, visual_id: xcb_visualid_t));
presentation_support!(terminator_vkGetPhysicalDeviceXlibPresentationSupportKHR, vkGetPhysicalDeviceXlibPresentationSupportKHR, "VK_KHR_xlib_surface", (dpy: *mut Display, visualID: VisualID));
presentation_support!(terminator_vkGetPhysicalDeviceWaylandPresentationSupportKHR, vkGetPhysicalDeviceWaylandPresentationSupportKHR, "VK_KHR_wayland_surface", (display: *mut wl_display));

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfacePresentModes2EXT(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pPresentModeCount: *mut u32,
    pPresentModes: *mut VkPresentModeKHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfacePresentModes2EXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some((table, handle, driver)) = driver_of(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(info) = info_for_driver(pSurfaceInfo, driver) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match table.vkGetPhysicalDeviceSurfacePresentModes2EXT {
            Some(f) => f(handle, &info, pPresentModeCount, pPresentModes),
            None => missing("vkGetPhysicalDeviceSurfacePresentModes2EXT"),
        }
    })
}

/// `VK_KHR_get_surface_capabilities2`: the driver's own where it was given the extension, else
/// emulated through `vkGetPhysicalDeviceSurfaceCapabilitiesKHR` (output pNext left untouched).
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceCapabilities2KHR(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceCapabilities2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfaceCapabilities2KHR");
        let driver = pd.driver;
        let Some(info) = info_for_driver(pSurfaceInfo, driver) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let Some(caps) = pSurfaceCapabilities.as_mut() else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let result = if let (true, Some(f)) = (has_surface_capabilities2(pd), table.vkGetPhysicalDeviceSurfaceCapabilities2KHR) {
            f(handle, &info, caps)
        } else {
            if !info.pNext.is_null() {
                log::log(Level::Warn, "vkGetPhysicalDeviceSurfaceCapabilities2KHR: emulated for a driver without it; pSurfaceInfo->pNext ignored");
            }
            match table.vkGetPhysicalDeviceSurfaceCapabilitiesKHR {
                Some(f) => f(handle, info.surface, &mut caps.surfaceCapabilities),
                None => missing("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"),
            }
        };
        if result == VkResult::SUCCESS && !has_surface_maintenance1(pd) {
            emulate_surface_maintenance1(&info, caps);
        }
        result
    })
}

/// Whether the driver of `pd` was given `VK_KHR_surface_maintenance1` or its EXT form.
unsafe fn has_surface_maintenance1(pd: &PhysicalDevice) -> bool {
    let Some(instance) = instance_of(pd) else { return false };
    let driver = instance.drivers.get(pd.driver);
    driver.is_some_and(|d| d.has_extension(b"VK_KHR_surface_maintenance1") || d.has_extension(b"VK_EXT_surface_maintenance1"))
}

/// `VK_KHR_surface_maintenance1` is an instance extension, so applications ask its questions of
/// devices whose drivers lack it. For the present mode in `info`'s chain, the answers a driver
/// without it would give, as the Khronos loader does: the mode is compatible only with itself, and
/// no scaling (the scaled extents are the surface's extents).
unsafe fn emulate_surface_maintenance1(info: &VkPhysicalDeviceSurfaceInfo2KHR, caps: &mut VkSurfaceCapabilities2KHR) {
    let mut present_mode = None;
    let mut next = info.pNext as *const VkBaseInStructure;
    while let Some(item) = next.as_ref() {
        if item.sType == VkStructureType::SURFACE_PRESENT_MODE_KHR {
            present_mode = Some((*(next as *const VkSurfacePresentModeKHR)).presentMode);
        }
        next = item.pNext;
    }
    let Some(present_mode) = present_mode else { return };
    let mut next = caps.pNext as *mut VkBaseOutStructure;
    while let Some(item) = next.as_mut() {
        match item.sType {
            VkStructureType::SURFACE_PRESENT_MODE_COMPATIBILITY_KHR => {
                let compatibility = &mut *(next as *mut VkSurfacePresentModeCompatibilityKHR);
                if compatibility.pPresentModes.is_null() {
                    compatibility.presentModeCount = 1;
                } else if compatibility.presentModeCount != 0 {
                    *compatibility.pPresentModes = present_mode;
                    compatibility.presentModeCount = 1;
                }
            }
            VkStructureType::SURFACE_PRESENT_SCALING_CAPABILITIES_KHR => {
                let scaling = &mut *(next as *mut VkSurfacePresentScalingCapabilitiesKHR);
                scaling.supportedPresentScaling = Default::default();
                scaling.supportedPresentGravityX = Default::default();
                scaling.supportedPresentGravityY = Default::default();
                scaling.minScaledImageExtent = caps.surfaceCapabilities.minImageExtent;
                scaling.maxScaledImageExtent = caps.surfaceCapabilities.maxImageExtent;
            }
            _ => {}
        }
        next = item.pNext;
    }
}

/// `VK_KHR_get_surface_capabilities2`: the driver's own, or emulated through
/// `vkGetPhysicalDeviceSurfaceFormatsKHR` (each element keeps its sType and pNext).
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceFormats2KHR(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormat2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceFormats2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfaceFormats2KHR");
        let driver = pd.driver;
        let Some(info) = info_for_driver(pSurfaceInfo, driver) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if let (true, Some(f)) = (has_surface_capabilities2(pd), table.vkGetPhysicalDeviceSurfaceFormats2KHR) {
            return f(handle, &info, pSurfaceFormatCount, pSurfaceFormats);
        }
        let Some(formats) = table.vkGetPhysicalDeviceSurfaceFormatsKHR else { return missing("vkGetPhysicalDeviceSurfaceFormatsKHR") };
        if pSurfaceFormatCount.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        if pSurfaceFormats.is_null() {
            return formats(handle, info.surface, pSurfaceFormatCount, std::ptr::null_mut());
        }
        let mut plain = vec![VkSurfaceFormatKHR::default(); *pSurfaceFormatCount as usize];
        let result = formats(handle, info.surface, pSurfaceFormatCount, plain.as_mut_ptr());
        if result == VkResult::SUCCESS || result == VkResult::INCOMPLETE {
            for (i, format) in plain.iter().take(*pSurfaceFormatCount as usize).enumerate() {
                (*pSurfaceFormats.add(i)).surfaceFormat = *format;
            }
        }
        result
    })
}

/// Whether the driver of `pd` was given `VK_KHR_get_surface_capabilities2`.
unsafe fn has_surface_capabilities2(pd: &PhysicalDevice) -> bool {
    let Some(instance) = instance_of(pd) else { return false };
    instance.drivers.get(pd.driver).is_some_and(|d| d.has_extension(b"VK_KHR_get_surface_capabilities2"))
}

unsafe fn instance_of<'a>(pd: &PhysicalDevice) -> Option<&'a Instance> {
    pd.instance.as_ref()
}

impl DeviceWsi {
    /// For a device of `pd`: puts the loader's unwrapping functions in `table` where the driver
    /// creates its own surfaces.
    ///
    /// # Safety
    /// `pd` must be a live loader physical device.
    pub unsafe fn install(table: &mut DeviceDispatchTable, pd: &PhysicalDevice) -> DeviceWsi {
        let interface = instance_of(pd).and_then(|i| i.drivers.get(pd.driver)).map_or(0, |d| d.driver.interface_version);
        if interface < DRIVER_SURFACES_INTERFACE {
            return DeviceWsi::default();
        }
        let wsi = DeviceWsi {
            driver: pd.driver,
            create_swapchain: table.vkCreateSwapchainKHR,
            create_shared_swapchains: table.vkCreateSharedSwapchainsKHR,
            group_surface_present_modes: table.vkGetDeviceGroupSurfacePresentModesKHR,
        };
        if wsi.create_swapchain.is_some() {
            table.vkCreateSwapchainKHR = Some(terminator_vkCreateSwapchainKHR);
        }
        if wsi.create_shared_swapchains.is_some() {
            table.vkCreateSharedSwapchainsKHR = Some(terminator_vkCreateSharedSwapchainsKHR);
        }
        if wsi.group_surface_present_modes.is_some() {
            table.vkGetDeviceGroupSurfacePresentModesKHR = Some(terminator_vkGetDeviceGroupSurfacePresentModesKHR);
        }
        wsi
    }
}

impl DeviceWsi {
    /// The loader's unwrapping function for `name`, where it stands in for the driver's: what the
    /// end of a layer chain's device functions must be for these commands.
    pub fn terminator(&self, name: &CStr) -> PFN_vkVoidFunction {
        match name.to_bytes() {
            b"vkCreateSwapchainKHR" if self.create_swapchain.is_some() => {
                erased!(terminator_vkCreateSwapchainKHR)
            }
            b"vkCreateSharedSwapchainsKHR" if self.create_shared_swapchains.is_some() => {
                erased!(terminator_vkCreateSharedSwapchainsKHR)
            }
            b"vkGetDeviceGroupSurfacePresentModesKHR" if self.group_surface_present_modes.is_some() => {
                erased!(terminator_vkGetDeviceGroupSurfacePresentModesKHR)
            }
            _ => None,
        }
    }
}

unsafe extern "system" fn terminator_vkCreateSwapchainKHR(
    device: VkDevice,
    pCreateInfo: *const VkSwapchainCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSwapchain: *mut VkSwapchainKHR,
) -> VkResult {
    ffi::guard("vkCreateSwapchainKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(data) = DeviceData::of(device) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let (Some(f), Some(info)) = (data.wsi.create_swapchain, pCreateInfo.as_ref()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let mut info = *info;
        info.surface = for_driver(info.surface, data.wsi.driver);
        f(device, &info, pAllocator, pSwapchain)
    })
}

unsafe extern "system" fn terminator_vkCreateSharedSwapchainsKHR(
    device: VkDevice,
    swapchainCount: u32,
    pCreateInfos: *const VkSwapchainCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSwapchains: *mut VkSwapchainKHR,
) -> VkResult {
    ffi::guard("vkCreateSharedSwapchainsKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(data) = DeviceData::of(device) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(f) = data.wsi.create_shared_swapchains else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pCreateInfos.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let infos: Vec<VkSwapchainCreateInfoKHR> = std::slice::from_raw_parts(pCreateInfos, swapchainCount as usize)
            .iter()
            .map(|info| VkSwapchainCreateInfoKHR { surface: for_driver(info.surface, data.wsi.driver), ..*info })
            .collect();
        f(device, swapchainCount, infos.as_ptr(), pAllocator, pSwapchains)
    })
}

unsafe extern "system" fn terminator_vkGetDeviceGroupSurfacePresentModesKHR(
    device: VkDevice,
    surface: VkSurfaceKHR,
    pModes: *mut VkDeviceGroupPresentModeFlagsKHR,
) -> VkResult {
    ffi::guard("vkGetDeviceGroupSurfacePresentModesKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(data) = DeviceData::of(device) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match data.wsi.group_surface_present_modes {
            Some(f) => f(device, for_driver(surface, data.wsi.driver), pModes),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// The loader-implemented surface terminators (instance chain), by command id.
pub const TERMINATORS: &[(u16, PFN_vkVoidFunction)] = &[
    terminator!(vkCreateXcbSurfaceKHR => terminator_vkCreateXcbSurfaceKHR),
    terminator!(vkCreateXlibSurfaceKHR => terminator_vkCreateXlibSurfaceKHR),
    terminator!(vkCreateWaylandSurfaceKHR => terminator_vkCreateWaylandSurfaceKHR),
    terminator!(vkCreateHeadlessSurfaceEXT => terminator_vkCreateHeadlessSurfaceEXT),
    terminator!(vkCreateDisplayPlaneSurfaceKHR => terminator_vkCreateDisplayPlaneSurfaceKHR),
    terminator!(vkDestroySurfaceKHR => terminator_vkDestroySurfaceKHR),
    terminator!(vkGetPhysicalDeviceSurfaceSupportKHR => terminator_vkGetPhysicalDeviceSurfaceSupportKHR),
    terminator!(vkGetPhysicalDeviceSurfaceCapabilitiesKHR => terminator_vkGetPhysicalDeviceSurfaceCapabilitiesKHR),
    terminator!(vkGetPhysicalDeviceSurfaceFormatsKHR => terminator_vkGetPhysicalDeviceSurfaceFormatsKHR),
    terminator!(vkGetPhysicalDeviceSurfacePresentModesKHR => terminator_vkGetPhysicalDeviceSurfacePresentModesKHR),
    terminator!(vkGetPhysicalDevicePresentRectanglesKHR => terminator_vkGetPhysicalDevicePresentRectanglesKHR),
    terminator!(vkGetPhysicalDeviceSurfaceCapabilities2EXT => terminator_vkGetPhysicalDeviceSurfaceCapabilities2EXT),
    terminator!(vkGetPhysicalDeviceXcbPresentationSupportKHR => terminator_vkGetPhysicalDeviceXcbPresentationSupportKHR),
    terminator!(vkGetPhysicalDeviceXlibPresentationSupportKHR => terminator_vkGetPhysicalDeviceXlibPresentationSupportKHR),
    terminator!(vkGetPhysicalDeviceWaylandPresentationSupportKHR => terminator_vkGetPhysicalDeviceWaylandPresentationSupportKHR),
    terminator!(vkGetPhysicalDeviceSurfacePresentModes2EXT => terminator_vkGetPhysicalDeviceSurfacePresentModes2EXT),
    terminator!(vkGetPhysicalDeviceSurfaceCapabilities2KHR => terminator_vkGetPhysicalDeviceSurfaceCapabilities2KHR),
    terminator!(vkGetPhysicalDeviceSurfaceFormats2KHR => terminator_vkGetPhysicalDeviceSurfaceFormats2KHR),
];

