//! WSI surfaces (`VK_KHR_surface` and the platform surface extensions).
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

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use vk_generated::layer_abi::{
    VkIcdSurfaceBase, VkIcdSurfaceDisplay, VkIcdSurfaceHeadless, VkIcdSurfaceWayland, VkIcdSurfaceXcb,
    VkIcdSurfaceXlib, VkIcdWsiPlatform,
};

use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};
use crate::platform::host_alloc::{with_system_allocator, AllocatorScope};
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

/// The application's create info, as given (its `pNext` included).
#[derive(Clone, Copy)]
enum PlatformInfo {
    Xcb(VkXcbSurfaceCreateInfoKHR),
    Xlib(VkXlibSurfaceCreateInfoKHR),
    Wayland(VkWaylandSurfaceCreateInfoKHR),
    Headless(VkHeadlessSurfaceCreateInfoEXT),
    Display(VkDisplaySurfaceCreateInfoKHR),
}

impl PlatformInfo {
    fn command(&self) -> &'static str {
        match self {
            PlatformInfo::Xcb(_) => "vkCreateXcbSurfaceKHR",
            PlatformInfo::Xlib(_) => "vkCreateXlibSurfaceKHR",
            PlatformInfo::Wayland(_) => "vkCreateWaylandSurfaceKHR",
            PlatformInfo::Headless(_) => "vkCreateHeadlessSurfaceEXT",
            PlatformInfo::Display(_) => "vkCreateDisplayPlaneSurfaceKHR",
        }
    }

    fn extension(&self) -> &'static CStr {
        match self {
            PlatformInfo::Xcb(_) => c"VK_KHR_xcb_surface",
            PlatformInfo::Xlib(_) => c"VK_KHR_xlib_surface",
            PlatformInfo::Wayland(_) => c"VK_KHR_wayland_surface",
            PlatformInfo::Headless(_) => c"VK_EXT_headless_surface",
            PlatformInfo::Display(_) => c"VK_KHR_display",
        }
    }

    /// Whether it chains structures (then it is not kept for a driver loaded later).
    fn chained(&self) -> bool {
        !match self {
            PlatformInfo::Xcb(i) => i.pNext,
            PlatformInfo::Xlib(i) => i.pNext,
            PlatformInfo::Wayland(i) => i.pNext,
            PlatformInfo::Headless(i) => i.pNext,
            PlatformInfo::Display(i) => i.pNext,
        }
        .is_null()
    }

    /// Calls the driver's create function if it has one (`None`: it leaves surfaces to the loader).
    unsafe fn create_in(&self, d: &DriverInstance, allocator: *const VkAllocationCallbacks, out: *mut VkSurfaceKHR) -> Option<VkResult> {
        let (table, handle) = d.live();
        match self {
            PlatformInfo::Xcb(info) => table.vkCreateXcbSurfaceKHR.map(|f| f(handle, info, allocator, out)),
            PlatformInfo::Xlib(info) => table.vkCreateXlibSurfaceKHR.map(|f| f(handle, info, allocator, out)),
            PlatformInfo::Wayland(info) => table.vkCreateWaylandSurfaceKHR.map(|f| f(handle, info, allocator, out)),
            PlatformInfo::Headless(info) => table.vkCreateHeadlessSurfaceEXT.map(|f| f(handle, info, allocator, out)),
            PlatformInfo::Display(info) => table.vkCreateDisplayPlaneSurfaceKHR.map(|f| f(handle, info, allocator, out)),
        }
    }
}

/// What one driver is given for a loader surface: `state` (below) and, for [`OWN`], `handle`.
struct DriverSurface {
    state: AtomicU8,
    handle: AtomicU64,
}

/// The driver reads the loader's surface (interface 2 and older, or no create function).
const LOADERS: u8 = 0;
/// The driver's own, in `handle`: what its create function wrote, NULL included, as with the
/// Khronos loader.
const OWN: u8 = 1;
/// Its driver is not loaded yet: made when it is.
const WAITING: u8 = 2;
/// Being made, by the thread that found its driver loaded.
const MAKING: u8 = 3;
/// Making it when its driver was loaded failed: what is asked of the driver about the surface
/// fails with `VK_ERROR_SURFACE_LOST_KHR`.
const FAILED: u8 = 4;
/// The loader's surface was destroyed.
const GONE: u8 = 5;

impl DriverSurface {
    fn new(state: u8) -> DriverSurface {
        DriverSurface { state: AtomicU8::new(state), handle: AtomicU64::new(0) }
    }
}

/// The loader's `VkSurfaceKHR` (its address is the handle; an `Arc`, since a driver loaded in
/// another thread may be making its surface from it while the application destroys it).
#[repr(C)]
pub struct Surface {
    /// First, so that the handle is a valid `VkIcdSurface*` for drivers.
    icd: IcdSurface,
    /// The drivers' surfaces, by index into `Instance::drivers`.
    per_driver: Box<[DriverSurface]>,
    /// For the drivers loaded later.
    info: PlatformInfo,
    allocator: Option<VkAllocationCallbacks>,
    instance: *const Instance,
}

// SAFETY: the pointers are the application's window-system handles and allocator, which Vulkan
// requires to stay valid for the surface's life, and the instance, which outlives its surfaces.
unsafe impl Send for Surface {}
unsafe impl Sync for Surface {}

thread_local! {
    /// This thread is in a driver's create function for a surface made when it was loaded.
    static MAKING_HERE: Cell<bool> = const { Cell::new(false) };
}

/// The handle a driver must be given for `surface`: its own surface if it made one, else the
/// loader's (a surface that failed is given as the loader's: naming objects only).
///
/// # Safety
/// `surface` must be NULL or a surface this loader created and has not destroyed.
pub unsafe fn for_driver(surface: VkSurfaceKHR, driver: usize) -> VkSurfaceKHR {
    surface_for(surface, driver).unwrap_or(surface)
}

/// The handle a driver must be given for `surface` (see [`for_driver`]); `VK_ERROR_SURFACE_LOST_KHR`
/// where its driver could not make its own when it was loaded. A surface still waiting for its
/// driver, now loaded (a call that loaded it racing with the thread making the surfaces), is
/// made now or waited for.
///
/// # Safety
/// As for [`for_driver`].
unsafe fn surface_for(surface: VkSurfaceKHR, driver: usize) -> Result<VkSurfaceKHR, VkResult> {
    let Some(s) = (surface.0 as *const Surface).as_ref() else { return Ok(surface) };
    let Some(slot) = s.per_driver.get(driver) else { return Ok(surface) };
    loop {
        match slot.state.load(Ordering::Acquire) {
            LOADERS => return Ok(surface),
            OWN => return Ok(VkSurfaceKHR(slot.handle.load(Ordering::Acquire))),
            // Not loaded (it failed to be): the physical device's calls go to no driver.
            WAITING if !make_in_driver(s, driver) => return Ok(surface),
            WAITING => {}
            // Asked from inside the driver's create function for it.
            MAKING if MAKING_HERE.get() => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
            MAKING => std::thread::yield_now(),
            _ => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
        }
    }
}

/// A `VkPhysicalDeviceSurfaceInfo2KHR` with the driver's surface in it (pNext kept).
unsafe fn info_for_driver(info: *const VkPhysicalDeviceSurfaceInfo2KHR, driver: usize) -> Result<VkPhysicalDeviceSurfaceInfo2KHR, VkResult> {
    let mut copy = *info.as_ref().ok_or(VkResult::ERROR_INITIALIZATION_FAILED)?;
    copy.surface = surface_for(copy.surface, driver)?;
    Ok(copy)
}

/// Makes driver `index`'s own surface for `surface` if it waits for it and the driver is now
/// loaded; `false` where the driver is not loaded (failed to be).
unsafe fn make_in_driver(surface: &Surface, index: usize) -> bool {
    let Some(d) = surface.instance.as_ref().and_then(|i| i.drivers.get(index)) else { return false };
    if d.is_unloaded() {
        return false;
    }
    let slot = &surface.per_driver[index];
    if slot.state.compare_exchange(WAITING, MAKING, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return true;
    }
    let allocator = surface.allocator.as_ref().map_or(std::ptr::null(), |a| a as *const _);
    let mut own = VkSurfaceKHR::NULL;
    let outer = MAKING_HERE.replace(true);
    let result = surface.info.create_in(d, allocator, &mut own);
    MAKING_HERE.set(outer);
    let state = match result {
        None => LOADERS,
        Some(VkResult::SUCCESS) => {
            slot.handle.store(own.0, Ordering::Release);
            OWN
        }
        Some(error) => {
            // An error: the application's surface calls fail from now on.
            let command = surface.info.command();
            let message = format!(
                "{}: {command} for a surface made before it was loaded failed with {error:?}; its physical devices' calls with that surface fail (VK_ERROR_SURFACE_LOST_KHR)",
                d.driver.manifest_path
            );
            log::write(Level::ErrorDriver, &message);
            FAILED
        }
    };
    if slot.state.compare_exchange(MAKING, state, Ordering::AcqRel, Ordering::Acquire).is_err() && state == OWN {
        // The application destroyed the loader's surface meanwhile: the driver's goes too.
        destroy_in_driver(d, own, allocator);
    }
    true
}

/// Creates the loader surface and, in every driver at interface 3+ that can, the driver's own
/// (now, or when a driver not loaded yet is).
unsafe fn create(
    instance: VkInstance,
    info: PlatformInfo,
    icd: IcdSurface,
    allocator: *const VkAllocationCallbacks,
    out: *mut VkSurfaceKHR,
) -> VkResult {
    let (command, extension) = (info.command(), info.extension());
    let Some(instance) = Instance::from_handle(instance) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    if out.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if !vk_generated::lookup::extension(extension.to_bytes()).is_some_and(|id| instance.enabled_extensions.contains(id)) {
        log::write(Level::Error, &format!("{command}: {extension:?} is not enabled on this instance"));
        return VkResult::ERROR_EXTENSION_NOT_PRESENT;
    }
    if info.chained() && instance.drivers.iter().any(DriverInstance::is_unloaded) {
        log!(Level::Driver, "{command}: the create info chains structures the loader does not keep: the drivers not loaded yet are loaded");
        instance.load_lazy_drivers(command);
    }
    let memory = AllocatorScope::enter(allocator, VkSystemAllocationScope::OBJECT);
    let per_driver: Box<[DriverSurface]> = (0..instance.drivers.len()).map(|_| DriverSurface::new(LOADERS)).collect();
    for (index, driver) in instance.drivers.iter().enumerate() {
        if driver.driver.interface_version < DRIVER_SURFACES_INTERFACE || !driver.has_extension(extension.to_bytes()) {
            continue;
        }
        let slot = &per_driver[index];
        if driver.is_unloaded() {
            slot.state.store(WAITING, Ordering::Relaxed);
            continue;
        }
        let mut own = VkSurfaceKHR::NULL;
        match info.create_in(driver, allocator, &mut own) {
            None => {}
            Some(VkResult::SUCCESS) => {
                slot.handle.store(own.0, Ordering::Relaxed);
                slot.state.store(OWN, Ordering::Relaxed);
            }
            Some(error) => {
                log!(Level::WarnDriver, "{command}: {} failed with {error:?}", driver.driver.manifest_path);
                destroy_driver_surfaces(instance, &per_driver, allocator);
                return error;
            }
        }
    }
    let surface = Arc::new(Surface { icd, per_driver, info, allocator: allocator.as_ref().copied(), instance });
    if memory.failed() {
        destroy_driver_surfaces(instance, &surface.per_driver, allocator);
        return VkResult::ERROR_OUT_OF_HOST_MEMORY;
    }
    drop(memory);
    let key = Arc::as_ptr(&surface) as u64;
    for (index, driver) in instance.drivers.iter().enumerate() {
        let Some(lazy) = driver.lazy.as_ref().filter(|_| surface.per_driver[index].state.load(Ordering::Relaxed) == WAITING) else { continue };
        let kept = surface.clone();
        // Instance-lifetime bookkeeping, not the surface's memory.
        let work: crate::lazy::Work = with_system_allocator(|| Arc::new(move || unsafe { make_in_driver(&kept, index); }));
        if !lazy.when_loaded(key, work) {
            // Loaded (or failed to be) since it was looked at.
            make_in_driver(&surface, index);
        }
    }
    *out = VkSurfaceKHR(Arc::into_raw(surface) as u64);
    VkResult::SUCCESS
}

unsafe fn destroy_in_driver(driver: &DriverInstance, own: VkSurfaceKHR, allocator: *const VkAllocationCallbacks) {
    let (table, handle) = driver.live();
    if let (false, Some(destroy)) = (own.is_null(), table.vkDestroySurfaceKHR) {
        destroy(handle, own, allocator);
    }
}

/// Destroys the drivers' own surfaces (a driver making one now destroys it when done).
unsafe fn destroy_driver_surfaces(instance: &Instance, per_driver: &[DriverSurface], allocator: *const VkAllocationCallbacks) {
    for (driver, slot) in instance.drivers.iter().zip(per_driver) {
        if slot.state.swap(GONE, Ordering::AcqRel) == OWN {
            destroy_in_driver(driver, VkSurfaceKHR(slot.handle.load(Ordering::Acquire)), allocator);
        }
    }
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
        create(instance, PlatformInfo::Xcb(*info), icd, pAllocator, pSurface)
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
        create(instance, PlatformInfo::Xlib(*info), icd, pAllocator, pSurface)
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
        create(instance, PlatformInfo::Wayland(*info), icd, pAllocator, pSurface)
    })
}

pub unsafe extern "system" fn terminator_vkCreateHeadlessSurfaceEXT(
    instance: VkInstance,
    pCreateInfo: *const VkHeadlessSurfaceCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    ffi::guard("vkCreateHeadlessSurfaceEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let icd = IcdSurface {
            headless: VkIcdSurfaceHeadless { base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::HEADLESS } },
        };
        create(instance, PlatformInfo::Headless(*info), icd, pAllocator, pSurface)
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
        create(instance, PlatformInfo::Display(*info), icd, pAllocator, pSurface)
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
        let own = Arc::from_raw(surface.0 as *const Surface);
        // Drivers not loaded yet make no surface for it when they are.
        for lazy in instance.drivers.iter().filter_map(|d| d.lazy.as_ref()) {
            lazy.not_needed(surface.0);
        }
        destroy_driver_surfaces(instance, &own.per_driver, pAllocator);
    })
}

/// The owning driver's table, its physical-device handle and its index, for a loader physical
/// device (its driver loaded for `command` if it is lazy).
unsafe fn driver_of<'a>(physical_device: VkPhysicalDevice, command: &str) -> Option<(&'a InstanceDispatchTable, VkPhysicalDevice, usize)> {
    let pd = PhysicalDevice::from_handle(physical_device)?;
    let (table, handle) = live_driver(pd, command);
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
    log!(Level::ErrorDriver, "{command}: the physical device's driver does not provide it");
    VkResult::ERROR_EXTENSION_NOT_PRESENT
}

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSurfaceSupportKHR(
    physicalDevice: VkPhysicalDevice,
    queueFamilyIndex: u32,
    surface: VkSurfaceKHR,
    pSupported: *mut VkBool32,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceSurfaceSupportKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some((table, handle, driver)) = driver_of(physicalDevice, "vkGetPhysicalDeviceSurfaceSupportKHR") else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match table.vkGetPhysicalDeviceSurfaceSupportKHR {
            Some(f) => match surface_for(surface, driver) {
                Ok(surface) => f(handle, queueFamilyIndex, surface, pSupported),
                Err(error) => error,
            },
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
                let Some((table, handle, driver)) = driver_of(physicalDevice, command) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                match table.$slot {
                    Some(f) => match surface_for(surface, driver) {
                        Ok(surface) => f(handle, surface, $($arg),*),
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
        let surface = match surface_for(surface, pd.driver) {
            Ok(surface) => surface,
            Err(error) => return error,
        };
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
        let Some((table, handle, driver)) = driver_of(physicalDevice, "vkGetPhysicalDeviceSurfacePresentModes2EXT") else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let info = match info_for_driver(pSurfaceInfo, driver) {
            Ok(info) => info,
            Err(error) => return error,
        };
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
        let info = match info_for_driver(pSurfaceInfo, driver) {
            Ok(info) => info,
            Err(error) => return error,
        };
        let Some(caps) = pSurfaceCapabilities.as_mut() else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let result = if let (true, Some(f)) = (has_surface_capabilities2(pd), table.vkGetPhysicalDeviceSurfaceCapabilities2KHR) {
            f(handle, &info, caps)
        } else {
            if !info.pNext.is_null() {
                log::log(Level::WarnDriver, "vkGetPhysicalDeviceSurfaceCapabilities2KHR: emulated for a driver without it; pSurfaceInfo->pNext ignored");
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
///
/// # Safety
/// `info`'s and `caps`'s chains must be valid (Vulkan's valid usage), `caps`'s writable, each
/// present mode array valid for its count.
unsafe fn emulate_surface_maintenance1(info: &VkPhysicalDeviceSurfaceInfo2KHR, caps: &mut VkSurfaceCapabilities2KHR) {
    // SAFETY: the caller's promise that the chain is valid.
    let asked = unsafe { vk_generated::find_in_chain::<VkSurfacePresentModeKHR>(info.pNext) };
    let Some(present_mode) = asked.map(|asked| asked.presentMode) else { return };
    let extent = (caps.surfaceCapabilities.minImageExtent, caps.surfaceCapabilities.maxImageExtent);
    let mut next = caps.pNext as *mut VkBaseOutStructure;
    while !next.is_null() {
        // The header read by value: no reference to it lives while the element is written
        // through a reference of its own type, made only once its sType is known.
        // SAFETY: an element of the application's output chain (Vulkan's valid usage).
        let (s_type, following) = unsafe { ((*next).sType, (*next).pNext) };
        match s_type {
            VkStructureType::SURFACE_PRESENT_MODE_COMPATIBILITY_KHR => {
                // SAFETY: its sType says it is one; the application's, writable.
                let compatibility = unsafe { &mut *next.cast::<VkSurfacePresentModeCompatibilityKHR>() };
                if compatibility.pPresentModes.is_null() {
                    compatibility.presentModeCount = 1;
                } else if compatibility.presentModeCount != 0 {
                    // SAFETY: an array of `presentModeCount` modes (Vulkan's valid usage), at least one.
                    unsafe { *compatibility.pPresentModes = present_mode };
                    compatibility.presentModeCount = 1;
                }
            }
            VkStructureType::SURFACE_PRESENT_SCALING_CAPABILITIES_KHR => {
                // SAFETY: its sType says it is one; the application's, writable.
                let scaling = unsafe { &mut *next.cast::<VkSurfacePresentScalingCapabilitiesKHR>() };
                scaling.supportedPresentScaling = Default::default();
                scaling.supportedPresentGravityX = Default::default();
                scaling.supportedPresentGravityY = Default::default();
                (scaling.minScaledImageExtent, scaling.maxScaledImageExtent) = extent;
            }
            _ => {}
        }
        next = following;
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
        let info = match info_for_driver(pSurfaceInfo, driver) {
            Ok(info) => info,
            Err(error) => return error,
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
        info.surface = match surface_for(info.surface, data.wsi.driver) {
            Ok(surface) => surface,
            Err(error) => return error,
        };
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
        let infos: Result<Vec<VkSwapchainCreateInfoKHR>, VkResult> = std::slice::from_raw_parts(pCreateInfos, swapchainCount as usize)
            .iter()
            .map(|info| Ok(VkSwapchainCreateInfoKHR { surface: surface_for(info.surface, data.wsi.driver)?, ..*info }))
            .collect();
        let infos = match infos {
            Ok(infos) => infos,
            Err(error) => return error,
        };
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
            Some(f) => match surface_for(surface, data.wsi.driver) {
                Ok(surface) => f(device, surface, pModes),
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

