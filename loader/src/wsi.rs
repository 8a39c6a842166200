//! WSI surfaces (`VK_KHR_surface` and the platform surface extensions): the commands; the surface
//! object is `crate::object::surface`'s, the create infos `crate::given::surface`'s views.
//!
//! Every `vkCreate*SurfaceKHR` makes a loader-owned surface whose first bytes are the
//! `VkIcdSurface*` structure of its platform, so drivers that leave surfaces to the loader
//! (interface 2 and older) read it as their own. Drivers at interface 3 or later that have the
//! create function also create theirs; the loader keeps one handle per driver inside its surface
//! and hands each driver its own handle wherever a surface is passed down: the physical-device
//! queries here and, on devices of such drivers, the swapchain commands ([`DeviceWsi`]).
//!
//! A driver not loaded yet (a lazy driver, `crate::lazy`) is not loaded for a surface: the loader
//! keeps the platform create info (a bitwise copy: plain values and the application's window-system
//! handles, which must outlive the surface anyway) and the driver makes its surface when it is
//! loaded, for every surface of the instance still alive. A create info with a `pNext` chain is not
//! kept (no structure extends the Linux ones but an NVIDIA display-plane one): the drivers not loaded
//! yet are loaded for it, as without the driver cache.

use std::ffi::CStr;

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
use crate::object::surface::{create, surface_for, surface_info, Surface, DRIVER_SURFACES_INTERFACE};
use crate::given::allocator::Allocator;
use crate::given::surface::{SurfaceCapabilities2Out, SurfaceCreateInfo};

/// A `VkPhysicalDeviceSurfaceInfo2KHR` with the driver's surface in it (pNext kept).
fn info_for_driver(info: &VkPhysicalDeviceSurfaceInfo2KHR, surface: Option<&Surface>, driver: usize) -> Result<VkPhysicalDeviceSurfaceInfo2KHR, VkResult> {
    Ok(VkPhysicalDeviceSurfaceInfo2KHR { surface: surface_for(surface, driver)?, ..*info })
}

/// Whether `instance` may make a surface of `info`'s platform (its extension enabled); the
/// drivers not loaded yet are loaded now where `info` is not kept for them.
fn check_creation(instance: &Instance, info: &SurfaceCreateInfo<'_>) -> Result<(), VkResult> {
    let (command, extension) = (info.command(), info.extension());
    if !vk_generated::lookup::extension(extension.to_bytes()).is_some_and(|id| instance.enabled_extensions.contains(id)) {
        log::write(Level::Error, &format!("{command}: {extension:?} is not enabled on this instance"));
        return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
    }
    if info.chained() && instance.drivers.iter().any(DriverInstance::is_unloaded) {
        log!(Level::Driver, "{command}: the create info chains structures the loader does not keep: the drivers not loaded yet are loaded");
        instance.load_lazy_drivers(command);
    }
    Ok(())
}

/// A `vkCreate*SurfaceKHR` command: the loader's surface, and the drivers' own where they make
/// them.
macro_rules! create_command {
    ($name:ident, $info:ty) => {
        #[doc = concat!("`", stringify!($name), "`: the loader's surface, and the drivers' own where they make them.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `instance` a live instance of this loader; `pCreateInfo` a valid
        /// structure (its chain valid) whose window-system handles (the display mode, for a display
        /// surface) stay valid for the surface's life; `pAllocator` NULL or valid callbacks,
        /// callable for the surface's life; `pSurface` valid for writing a handle. A NULL
        /// `pCreateInfo`, `instance` or `pSurface` is `VK_ERROR_INITIALIZATION_FAILED`.
        pub unsafe extern "system" fn $name(
            instance: VkInstance,
            pCreateInfo: *const $info,
            pAllocator: *const VkAllocationCallbacks,
            pSurface: *mut VkSurfaceKHR,
        ) -> VkResult {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                // SAFETY: NULL or a valid structure whose window-system handles stay valid for the
                // surface's life, its chain for the call (this function's contract).
                let Some(info) = (unsafe { SurfaceCreateInfo::new(pCreateInfo) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                // SAFETY: NULL or a live instance of this loader (this function's contract).
                let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                // SAFETY: NULL or valid for writing a handle (this function's contract).
                let Some(out) = (unsafe { pSurface.as_mut() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                if let Err(error) = check_creation(instance, &info) {
                    return error;
                }
                // SAFETY: NULL or valid callbacks, callable for the surface's life (this function's
                // contract).
                let (allocator, memory) = unsafe { (Allocator::new(pAllocator), AllocatorScope::enter(pAllocator, VkSystemAllocationScope::OBJECT)) };
                match create(instance, info, allocator, memory) {
                    Ok(surface) => {
                        *out = surface;
                        VkResult::SUCCESS
                    }
                    Err(error) => error,
                }
            })
        }
    };
}

create_command!(terminator_vkCreateXcbSurfaceKHR, VkXcbSurfaceCreateInfoKHR);
create_command!(terminator_vkCreateXlibSurfaceKHR, VkXlibSurfaceCreateInfoKHR);
create_command!(terminator_vkCreateWaylandSurfaceKHR, VkWaylandSurfaceCreateInfoKHR);
create_command!(terminator_vkCreateHeadlessSurfaceEXT, VkHeadlessSurfaceCreateInfoEXT);
create_command!(terminator_vkCreateDisplayPlaneSurfaceKHR, VkDisplaySurfaceCreateInfoKHR);

/// `vkDestroySurfaceKHR`: the drivers' own surfaces, then the loader's.
///
/// # Safety
/// Vulkan's valid usage: `instance` a live instance of this loader; `surface` NULL or a surface
/// of it, not destroyed, not in use (no swapchain left); `pAllocator` NULL or callbacks compatible
/// with those it was created with. A NULL `instance` or `surface` does nothing.
pub unsafe extern "system" fn terminator_vkDestroySurfaceKHR(
    instance: VkInstance,
    surface: VkSurfaceKHR,
    pAllocator: *const VkAllocationCallbacks,
) {
    ffi::guard("vkDestroySurfaceKHR", (), || {
        // SAFETY: NULL or a live instance of this loader (this function's contract).
        let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return };
        if surface.is_null() {
            return;
        }
        // Out of the instance's list: a handle not there (destroyed already) is left alone.
        let listed = {
            let mut surfaces = instance.surfaces.lock().unwrap_or_else(|e| e.into_inner());
            surfaces.iter().position(|s| s.handle() == surface).map(|i| surfaces.swap_remove(i))
        };
        if let Some(listed) = listed {
            // SAFETY: NULL or callbacks compatible with those it was created with (this function's
            // contract).
            listed.destroy(instance, Some(unsafe { Allocator::new(pAllocator) }));
        }
    })
}

/// The driver's table and handle for a physical device, its driver loaded first if it is lazy
/// (surface queries are answered by the live driver).
fn live_driver<'a>(pd: &'a PhysicalDevice, command: &str) -> (&'a InstanceDispatchTable, VkPhysicalDevice) {
    crate::lazy::live_for(&pd.term, command);
    pd.driver_side()
}

/// Says that a driver lacks a surface query it should have.
fn missing(command: &str) -> VkResult {
    log!(Level::ErrorDriver, "{command}: the physical device's driver does not provide it");
    VkResult::ERROR_EXTENSION_NOT_PRESENT
}

/// `vkGetPhysicalDeviceSurfaceSupportKHR`: the owning driver's answer with its surface; `VK_FALSE`
/// for a driver without WSI.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `surface` a live
/// surface of its instance; `pSupported` valid for writing a `VkBool32`. A NULL `physicalDevice`
/// is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceSupportKHR(
    physicalDevice: VkPhysicalDevice,
    queueFamilyIndex: u32,
    surface: VkSurfaceKHR,
    pSupported: *mut VkBool32,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceSupportKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfaceSupportKHR");
        match table.vkGetPhysicalDeviceSurfaceSupportKHR {
            // SAFETY: NULL or a live surface of this loader (this function's contract).
            Some(f) => match surface_for(unsafe { Surface::from_handle(surface) }, pd.driver) {
                // SAFETY: the driver's function with its own device and surface; the caller's
                // output (this function's contract).
                Ok(surface) => unsafe { f(handle, queueFamilyIndex, surface, pSupported) },
                Err(error) => error,
            },
            None => {
                // A driver without WSI presents to nothing.
                if !pSupported.is_null() {
                    // SAFETY: a non-NULL `pSupported` is writable (this function's contract).
                    unsafe { pSupported.write(VK_FALSE) };
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
        #[doc = concat!("`", stringify!($slot), "`: the owning driver's, with its surface.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `surface` a
        /// live surface of its instance; the outputs valid for the driver to write (a count valid,
        /// an array NULL or valid for that many elements). A NULL `physicalDevice` is
        /// `VK_ERROR_INITIALIZATION_FAILED`.
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, surface: VkSurfaceKHR, $($arg: $ty),*) -> VkResult {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                // SAFETY: NULL or a physical device of this loader (this function's contract).
                let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                let (table, handle) = live_driver(pd, command);
                match table.$slot {
                    // SAFETY: NULL or a live surface of this loader (this function's contract).
                    Some(f) => match surface_for(unsafe { Surface::from_handle(surface) }, pd.driver) {
                        // SAFETY: the driver's function with its own device and surface; the
                        // caller's outputs (this function's contract).
                        Ok(surface) => unsafe { f(handle, surface, $($arg),*) },
                        Err(error) => error,
                    },
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
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `surface` a live
/// surface of its instance; `pSurfaceCapabilities` a writable structure, its `sType` and `pNext`
/// set. A NULL `physicalDevice` (or, emulated, `pSurfaceCapabilities`) is
/// `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceCapabilities2EXT(
    physicalDevice: VkPhysicalDevice,
    surface: VkSurfaceKHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2EXT,
) -> VkResult {
    let command = "vkGetPhysicalDeviceSurfaceCapabilities2EXT";
    ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, command);
        // SAFETY: NULL or a live surface of this loader (this function's contract).
        let surface = match surface_for(unsafe { Surface::from_handle(surface) }, pd.driver) {
            Ok(surface) => surface,
            Err(error) => return error,
        };
        if let Some(f) = table.vkGetPhysicalDeviceSurfaceCapabilities2EXT {
            // SAFETY: the driver's function with its own device and surface; the caller's output
            // (this function's contract).
            return unsafe { f(handle, surface, pSurfaceCapabilities) };
        }
        // SAFETY: NULL or the caller's writable structure (this function's contract).
        let Some(caps) = (unsafe { pSurfaceCapabilities.as_mut() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(get) = table.vkGetPhysicalDeviceSurfaceCapabilitiesKHR else { return missing("vkGetPhysicalDeviceSurfaceCapabilitiesKHR") };
        let library = driver_library(pd);
        with_messengers_of(pd, || {
            log!(Level::Info, "{command}: Emulating call in ICD \"{library}\" using vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        });
        let mut plain = VkSurfaceCapabilitiesKHR::default();
        // SAFETY: the driver's function with its own device and surface, and a structure of ours.
        let result = unsafe { get(handle, surface, &mut plain) };
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
fn driver_library(pd: &PhysicalDevice) -> &str {
    pd.instance().and_then(|i| i.drivers.get(pd.driver)).map_or("?", |d| d.driver.library_path.as_str())
}

/// Runs `f` (which logs) so that the messengers of `pd`'s instance hear it.
fn with_messengers_of(pd: &PhysicalDevice, f: impl FnOnce()) {
    crate::object::instance::with_messengers_of(pd.instance(), f)
}

/// `vkGetPhysicalDevice{Xcb,Xlib,Wayland}PresentationSupportKHR`: the driver's answer; `VK_FALSE`
/// with the Khronos loader's message where the instance did not enable the platform's surface
/// extension or the driver lacks the command (a driver without WSI presents to nothing).
macro_rules! presentation_support {
    ($name:ident, $slot:ident, $extension:literal, ($($arg:ident: $ty:ty),*)) => {
        #[doc = concat!("`", stringify!($slot), "`: the driver's answer, or `VK_FALSE`.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `physicalDevice` a physical device of this loader; the
        /// window-system arguments valid for the driver to read. A NULL `physicalDevice` is
        /// `VK_FALSE`.
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, queueFamilyIndex: u32, $($arg: $ty),*) -> VkBool32 {
            let command = stringify!($slot);
            ffi::guard(command, VK_FALSE, || {
                // SAFETY: NULL or a physical device of this loader (this function's contract).
                let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VK_FALSE };
                let enabled = vk_generated::lookup::extension($extension.as_bytes())
                    .is_some_and(|id| pd.instance().is_some_and(|i| i.enabled_extensions.contains(id)));
                if !enabled {
                    with_messengers_of(pd, || log!(Level::Error, "{} extension not enabled. {command} not executed!", $extension));
                    return VK_FALSE;
                }
                let (table, handle) = live_driver(pd, command);
                match table.$slot {
                    // SAFETY: the driver's function with its own device; the caller's
                    // window-system arguments (this function's contract).
                    Some(f) => unsafe { f(handle, queueFamilyIndex, $($arg),*) },
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

/// `vkGetPhysicalDeviceSurfacePresentModes2EXT`: the owning driver's, with its surface.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `pSurfaceInfo` a
/// valid structure (its chain valid) naming a live surface of its instance; `pPresentModeCount`
/// valid; `pPresentModes` NULL or valid for that many modes. A NULL `physicalDevice` or
/// `pSurfaceInfo` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfacePresentModes2EXT(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pPresentModeCount: *mut u32,
    pPresentModes: *mut VkPresentModeKHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfacePresentModes2EXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfacePresentModes2EXT");
        // SAFETY: NULL or a valid structure naming a live surface (this function's contract).
        let Some((info, surface)) = (unsafe { surface_info(pSurfaceInfo) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let info = match info_for_driver(info, surface, pd.driver) {
            Ok(info) => info,
            Err(error) => return error,
        };
        match table.vkGetPhysicalDeviceSurfacePresentModes2EXT {
            // SAFETY: the driver's function with its own device, the info naming its surface (the
            // chain the caller's); the caller's count and array (this function's contract).
            Some(f) => unsafe { f(handle, &info, pPresentModeCount, pPresentModes) },
            None => missing("vkGetPhysicalDeviceSurfacePresentModes2EXT"),
        }
    })
}

/// `VK_KHR_get_surface_capabilities2`: the driver's own where it was given the extension, else
/// emulated through `vkGetPhysicalDeviceSurfaceCapabilitiesKHR` (output pNext left untouched).
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `pSurfaceInfo` a
/// valid structure (its chain valid) naming a live surface of its instance;
/// `pSurfaceCapabilities` a writable structure whose chain is valid (each element writable, its
/// `sType` and `pNext` set, each present mode array valid for its count). A NULL
/// `physicalDevice`, `pSurfaceInfo` or `pSurfaceCapabilities` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceCapabilities2KHR(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceCapabilities: *mut VkSurfaceCapabilities2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceCapabilities2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfaceCapabilities2KHR");
        // SAFETY: NULL or a valid structure naming a live surface (this function's contract).
        let Some((info, surface)) = (unsafe { surface_info(pSurfaceInfo) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let info = match info_for_driver(info, surface, pd.driver) {
            Ok(info) => info,
            Err(error) => return error,
        };
        // SAFETY: NULL or the caller's writable structure, its chain valid (this function's
        // contract).
        let Some(mut caps) = (unsafe { SurfaceCapabilities2Out::new(pSurfaceCapabilities) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let result = if let (true, Some(f)) = (has_surface_capabilities2(pd), table.vkGetPhysicalDeviceSurfaceCapabilities2KHR) {
            // SAFETY: the driver's function with its own device, the info naming its surface (the
            // chain the caller's); the caller's output structure and chain (this function's contract).
            unsafe { f(handle, &info, caps.as_mut_ptr()) }
        } else {
            if !info.pNext.is_null() {
                log::log(Level::WarnDriver, "vkGetPhysicalDeviceSurfaceCapabilities2KHR: emulated for a driver without it; pSurfaceInfo->pNext ignored");
            }
            match table.vkGetPhysicalDeviceSurfaceCapabilitiesKHR {
                // SAFETY: the driver's function with its own device and surface, and the plain
                // structure inside the caller's.
                Some(f) => unsafe { f(handle, info.surface, caps.capabilities()) },
                None => missing("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"),
            }
        };
        if result == VkResult::SUCCESS && !has_surface_maintenance1(pd) {
            // SAFETY: NULL or a valid chain (this function's contract).
            let asked = unsafe { vk_generated::find_in_chain::<VkSurfacePresentModeKHR>(info.pNext) };
            if let Some(asked) = asked {
                caps.emulate_surface_maintenance1(asked.presentMode);
            }
        }
        result
    })
}

/// Whether the driver of `pd` was given `VK_KHR_surface_maintenance1` or its EXT form.
fn has_surface_maintenance1(pd: &PhysicalDevice) -> bool {
    let Some(instance) = pd.instance() else { return false };
    let driver = instance.drivers.get(pd.driver);
    driver.is_some_and(|d| d.has_extension(b"VK_KHR_surface_maintenance1") || d.has_extension(b"VK_EXT_surface_maintenance1"))
}

/// `VK_KHR_get_surface_capabilities2`: the driver's own, or emulated through
/// `vkGetPhysicalDeviceSurfaceFormatsKHR` (each element keeps its sType and pNext).
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `pSurfaceInfo` a
/// valid structure (its chain valid) naming a live surface of its instance;
/// `pSurfaceFormatCount` valid; `pSurfaceFormats` NULL or that many writable structures, each
/// with its `sType` and `pNext` set. A NULL `physicalDevice`, `pSurfaceInfo` or (emulated)
/// `pSurfaceFormatCount` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceFormats2KHR(
    physicalDevice: VkPhysicalDevice,
    pSurfaceInfo: *const VkPhysicalDeviceSurfaceInfo2KHR,
    pSurfaceFormatCount: *mut u32,
    pSurfaceFormats: *mut VkSurfaceFormat2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceFormats2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (table, handle) = live_driver(pd, "vkGetPhysicalDeviceSurfaceFormats2KHR");
        // SAFETY: NULL or a valid structure naming a live surface (this function's contract).
        let Some((info, surface)) = (unsafe { surface_info(pSurfaceInfo) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let info = match info_for_driver(info, surface, pd.driver) {
            Ok(info) => info,
            Err(error) => return error,
        };
        if let (true, Some(f)) = (has_surface_capabilities2(pd), table.vkGetPhysicalDeviceSurfaceFormats2KHR) {
            // SAFETY: the driver's function with its own device, the info naming its surface (the
            // chain the caller's); the caller's count and array (this function's contract).
            return unsafe { f(handle, &info, pSurfaceFormatCount, pSurfaceFormats) };
        }
        let Some(formats) = table.vkGetPhysicalDeviceSurfaceFormatsKHR else { return missing("vkGetPhysicalDeviceSurfaceFormatsKHR") };
        // SAFETY: the caller's count and structures (this function's contract).
        let Some(mut out) = (unsafe { ffi::ChainedOutArray::new(pSurfaceFormatCount, pSurfaceFormats) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let Some(room) = out.room() else {
            // SAFETY: the driver's function with its own device and surface, a valid count and no array.
            return unsafe { formats(handle, info.surface, out.count_ptr(), std::ptr::null_mut()) };
        };
        let mut plain = vec![VkSurfaceFormatKHR::default(); room];
        // SAFETY: as above, with an array of ours of as many formats as the count says.
        let result = unsafe { formats(handle, info.surface, out.count_ptr(), plain.as_mut_ptr()) };
        if result == VkResult::SUCCESS || result == VkResult::INCOMPLETE {
            for (i, format) in plain.iter().take(out.count() as usize).enumerate() {
                out.set(i, |next| VkSurfaceFormat2KHR { pNext: next, surfaceFormat: *format, ..Default::default() });
            }
        }
        result
    })
}

/// Whether the driver of `pd` was given `VK_KHR_get_surface_capabilities2`.
fn has_surface_capabilities2(pd: &PhysicalDevice) -> bool {
    let Some(instance) = pd.instance() else { return false };
    instance.drivers.get(pd.driver).is_some_and(|d| d.has_extension(b"VK_KHR_get_surface_capabilities2"))
}

impl DeviceWsi {
    /// For a device of `pd`: puts the loader's unwrapping functions in `table` where the driver
    /// creates its own surfaces.
    pub fn install(table: &mut DeviceDispatchTable, pd: &PhysicalDevice) -> DeviceWsi {
        let interface = pd.instance().and_then(|i| i.drivers.get(pd.driver)).map_or(0, |d| d.driver.interface_version);
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
                erased!(vkCreateSwapchainKHR => terminator_vkCreateSwapchainKHR)
            }
            b"vkCreateSharedSwapchainsKHR" if self.create_shared_swapchains.is_some() => {
                erased!(vkCreateSharedSwapchainsKHR => terminator_vkCreateSharedSwapchainsKHR)
            }
            b"vkGetDeviceGroupSurfacePresentModesKHR" if self.group_surface_present_modes.is_some() => {
                erased!(vkGetDeviceGroupSurfacePresentModesKHR => terminator_vkGetDeviceGroupSurfacePresentModesKHR)
            }
            _ => None,
        }
    }
}

/// `vkCreateSwapchainKHR` on a device whose driver makes its own surfaces: the driver's, given
/// its surface.
///
/// # Safety
/// Vulkan's valid usage: `device` a live device of this loader; `pCreateInfo` a valid structure
/// (its chain and arrays valid) whose `surface` is a live surface of this loader; `pAllocator`
/// NULL or valid callbacks; `pSwapchain` valid for writing a handle. A NULL `device` or
/// `pCreateInfo` is `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn terminator_vkCreateSwapchainKHR(
    device: VkDevice,
    pCreateInfo: *const VkSwapchainCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSwapchain: *mut VkSwapchainKHR,
) -> VkResult {
    ffi::guard("vkCreateSwapchainKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live device of this loader (this function's contract).
        let Some(data) = (unsafe { DeviceData::of(device) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: NULL or a valid structure (this function's contract).
        let (Some(f), Some(info)) = (data.wsi.create_swapchain, unsafe { pCreateInfo.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: NULL or a live surface of this loader (this function's contract).
        let surface = unsafe { Surface::from_handle(info.surface) };
        let info = match surface_for(surface, data.wsi.driver) {
            Ok(surface) => VkSwapchainCreateInfoKHR { surface, ..*info },
            Err(error) => return error,
        };
        // SAFETY: the driver's function with the device it made; the caller's create info with
        // the driver's surface, and the caller's allocator and output (this function's contract).
        unsafe { f(device, &info, pAllocator, pSwapchain) }
    })
}

/// `vkCreateSharedSwapchainsKHR` on a device whose driver makes its own surfaces: the driver's,
/// given its surfaces.
///
/// # Safety
/// Vulkan's valid usage: `device` a live device of this loader; `pCreateInfos` an array of
/// `swapchainCount` valid structures, each naming a live surface of this loader; `pAllocator`
/// NULL or valid callbacks; `pSwapchains` valid for writing `swapchainCount` handles. A NULL
/// `device` or `pCreateInfos` is `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn terminator_vkCreateSharedSwapchainsKHR(
    device: VkDevice,
    swapchainCount: u32,
    pCreateInfos: *const VkSwapchainCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pSwapchains: *mut VkSwapchainKHR,
) -> VkResult {
    ffi::guard("vkCreateSharedSwapchainsKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live device of this loader (this function's contract).
        let Some(data) = (unsafe { DeviceData::of(device) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(f) = data.wsi.create_shared_swapchains else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pCreateInfos.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: an array of `swapchainCount` valid structures (this function's contract).
        let given = unsafe { ffi::slice(pCreateInfos, swapchainCount) };
        let infos: Result<Vec<VkSwapchainCreateInfoKHR>, VkResult> = given
            .iter()
            .map(|info| {
                // SAFETY: NULL or a live surface of this loader (this function's contract).
                let surface = unsafe { Surface::from_handle(info.surface) };
                Ok(VkSwapchainCreateInfoKHR { surface: surface_for(surface, data.wsi.driver)?, ..*info })
            })
            .collect();
        let infos = match infos {
            Ok(infos) => infos,
            Err(error) => return error,
        };
        // SAFETY: the driver's function with the device it made; the caller's create infos with
        // the driver's surfaces, as many; the caller's allocator and outputs (this function's
        // contract).
        unsafe { f(device, swapchainCount, infos.as_ptr(), pAllocator, pSwapchains) }
    })
}

/// `vkGetDeviceGroupSurfacePresentModesKHR` on a device whose driver makes its own surfaces: the
/// driver's, given its surface.
///
/// # Safety
/// Vulkan's valid usage: `device` a live device of this loader; `surface` a live surface of this
/// loader; `pModes` valid for writing the flags. A NULL `device` is
/// `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn terminator_vkGetDeviceGroupSurfacePresentModesKHR(
    device: VkDevice,
    surface: VkSurfaceKHR,
    pModes: *mut VkDeviceGroupPresentModeFlagsKHR,
) -> VkResult {
    ffi::guard("vkGetDeviceGroupSurfacePresentModesKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live device of this loader (this function's contract).
        let Some(data) = (unsafe { DeviceData::of(device) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match data.wsi.group_surface_present_modes {
            // SAFETY: NULL or a live surface of this loader (this function's contract).
            Some(f) => match surface_for(unsafe { Surface::from_handle(surface) }, data.wsi.driver) {
                // SAFETY: the driver's function with the device it made and its surface; the
                // caller's output (this function's contract).
                Ok(surface) => unsafe { f(device, surface, pModes) },
                Err(error) => error,
            },
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

