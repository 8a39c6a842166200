//! The loader's `VkSurfaceKHR` object (its commands are in `wsi.rs`): the platform's
//! `VkIcdSurface*` structure first, the drivers' own surfaces by driver, the create info and
//! callbacks kept for the drivers loaded later. Its handle is its address; the instance's list
//! holds it (as a [`SurfaceObject`]) until it is destroyed.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use vk_generated::types::*;

use crate::debug::log::{self, Level};
use crate::given::allocator::{Allocator, KeptAllocator};
use crate::given::surface::{IcdSurface, KeptSurfaceCreateInfo, SurfaceCreateInfo};
use crate::object::instance::{Instance, DriverInstance, SurfaceObject};
use crate::platform::host_alloc::{with_system_allocator, AllocatorScope};

/// The first driver interface version at which drivers may create their own surfaces.
pub const DRIVER_SURFACES_INTERFACE: u32 = 3;

/// What one driver is given for a loader surface: `state` (below) and, for [`OWN`], `handle`.
struct DriverSurface {
    state: AtomicU8,
    /// While `state` is [`OWN`]: the driver's own surface, live.
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

    /// Marks the loader's surface destroyed and destroys the driver's own, if it has one (once:
    /// the state is swapped; a driver making one now destroys it when done).
    fn destroy(&self, driver: &DriverInstance, allocator: Allocator<'_>) {
        if self.state.swap(GONE, Ordering::AcqRel) == OWN {
            // SAFETY: the driver's own live surface (what `handle` holds while the state is OWN),
            // destroyed once (the state is GONE from now on); `allocator` the caller's.
            unsafe { driver.calls().destroy_surface(VkSurfaceKHR(self.handle.load(Ordering::Acquire)), allocator) };
        }
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
    /// For the drivers loaded later (none where it chains structures: no slot waits then).
    info: Option<KeptSurfaceCreateInfo>,
    allocator: KeptAllocator,
    instance: *const Instance,
}

// SAFETY: the pointers are the application's window-system handles (in `icd`), which Vulkan
// requires valid for the surface's life and the loader never reads through, and the instance,
// which outlives its surfaces; the kept create info and callbacks are `Send` and `Sync` themselves.
unsafe impl Send for Surface {}
// SAFETY: as for `Send`; what changes after creation is atomic.
unsafe impl Sync for Surface {}

impl Surface {
    /// The loader's surface behind a handle; `None` for NULL.
    ///
    /// # Safety
    /// `handle` must be NULL or a surface this loader created and the application has not
    /// destroyed (Vulkan's valid usage), for `'a`.
    pub unsafe fn from_handle<'a>(handle: VkSurfaceKHR) -> Option<&'a Surface> {
        // SAFETY: NULL or the address of a live `Surface` in its `Arc` (this function's contract).
        unsafe { (handle.0 as *const Surface).as_ref() }
    }

    fn handle(&self) -> VkSurfaceKHR {
        VkSurfaceKHR(self as *const Surface as u64)
    }

    /// The instance that made the surface.
    fn instance(&self) -> Option<&Instance> {
        // SAFETY: the instance outlives its surfaces (Vulkan requires them destroyed before it),
        // and the work kept for a driver not loaded yet runs only while the instance lives (its
        // drivers are the instance's).
        unsafe { self.instance.as_ref() }
    }

    /// The handle driver `driver` must be given for this surface (see [`for_driver`]);
    /// `VK_ERROR_SURFACE_LOST_KHR` where the driver could not make its own when it was loaded. A
    /// surface still waiting for its driver, now loaded (a call that loaded it racing with the
    /// thread making the surfaces), is made now or waited for.
    fn for_driver(&self, driver: usize) -> Result<VkSurfaceKHR, VkResult> {
        let Some(slot) = self.per_driver.get(driver) else { return Ok(self.handle()) };
        loop {
            match slot.state.load(Ordering::Acquire) {
                LOADERS => return Ok(self.handle()),
                OWN => return Ok(VkSurfaceKHR(slot.handle.load(Ordering::Acquire))),
                // Not loaded (it failed to be): the physical device's calls go to no driver.
                WAITING if !make_in_driver(self, driver) => return Ok(self.handle()),
                WAITING => {}
                // Asked from inside the driver's create function for it.
                MAKING if MAKING_HERE.get() => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
                MAKING => std::thread::yield_now(),
                _ => return Err(VkResult::ERROR_SURFACE_LOST_KHR),
            }
        }
    }
}

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
    // SAFETY: this function's contract is `from_handle`'s.
    let view = unsafe { Surface::from_handle(surface) };
    surface_for(view, driver).unwrap_or(surface)
}

/// [`Surface::for_driver`] of a surface an application passed, NULL for NULL.
pub fn surface_for(surface: Option<&Surface>, driver: usize) -> Result<VkSurfaceKHR, VkResult> {
    surface.map_or(Ok(VkSurfaceKHR::NULL), |s| s.for_driver(driver))
}

/// Makes driver `index`'s own surface for `surface` if it waits for it and the driver is now
/// loaded; `false` where the driver is not loaded (failed to be).
fn make_in_driver(surface: &Surface, index: usize) -> bool {
    let Some(d) = surface.instance().and_then(|i| i.drivers.get(index)) else { return false };
    let Some(info) = surface.info.as_ref().filter(|_| !d.is_unloaded()) else { return false };
    let slot = &surface.per_driver[index];
    if slot.state.compare_exchange(WAITING, MAKING, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return true;
    }
    let outer = MAKING_HERE.replace(true);
    let made = d.calls().create_surface(info, surface.allocator.get());
    MAKING_HERE.set(outer);
    let (result, own) = made.map_or((None, VkSurfaceKHR::NULL), |(result, own)| (Some(result), own));
    let state = match result {
        None => LOADERS,
        Some(VkResult::SUCCESS) => {
            slot.handle.store(own.0, Ordering::Release);
            OWN
        }
        Some(error) => {
            // An error: the application's surface calls fail from now on.
            let command = info.command();
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
        // SAFETY: the surface the driver just made, given to no one, with the callbacks it was
        // made with.
        unsafe { d.calls().destroy_surface(own, surface.allocator.get()) };
    }
    true
}

/// Creates the loader surface and, in every driver at interface 3+ that can, the driver's own
/// (now, or when a driver not loaded yet is), in `memory`, the scope of `allocator`.
pub fn create(instance: &Instance, info: SurfaceCreateInfo<'_>, allocator: Allocator<'_>, memory: AllocatorScope) -> Result<VkSurfaceKHR, VkResult> {
    let (command, extension) = (info.command(), info.extension());
    let kept = info.keep();
    let per_driver: Box<[DriverSurface]> = (0..instance.drivers.len()).map(|_| DriverSurface::new(LOADERS)).collect();
    for (index, driver) in instance.drivers.iter().enumerate() {
        if driver.driver.interface_version < DRIVER_SURFACES_INTERFACE || !driver.has_extension(extension.to_bytes()) {
            continue;
        }
        let slot = &per_driver[index];
        if driver.is_unloaded() {
            // A create info that chains structures is not kept: the drivers not loaded yet were
            // loaded for it (`check_creation`), and one that failed to be reads the loader's.
            if kept.is_some() {
                slot.state.store(WAITING, Ordering::Relaxed);
            }
            continue;
        }
        match driver.calls().create_surface(&info, allocator) {
            None => {}
            Some((VkResult::SUCCESS, own)) => {
                slot.handle.store(own.0, Ordering::Relaxed);
                slot.state.store(OWN, Ordering::Relaxed);
            }
            Some((error, _)) => {
                log!(Level::WarnDriver, "{command}: {} failed with {error:?}", driver.driver.manifest_path);
                destroy_driver_surfaces(instance, &per_driver, allocator);
                return Err(error);
            }
        }
    }
    let surface: Arc<Surface> = Arc::new(Surface { icd: info.icd_surface(), per_driver, info: kept, allocator: allocator.keep(), instance });
    if memory.failed() {
        destroy_driver_surfaces(instance, &surface.per_driver, allocator);
        return Err(VkResult::ERROR_OUT_OF_HOST_MEMORY);
    }
    drop(memory);
    let key = Arc::as_ptr(&surface) as u64;
    for (index, driver) in instance.drivers.iter().enumerate() {
        let Some(lazy) = driver.lazy.as_ref().filter(|_| surface.per_driver[index].state.load(Ordering::Relaxed) == WAITING) else { continue };
        let kept = surface.clone();
        // Instance-lifetime bookkeeping, not the surface's memory.
        let work: crate::lazy::Work = with_system_allocator(|| {
            Arc::new(move || {
                make_in_driver(&kept, index);
            })
        });
        if !lazy.when_loaded(key, work) {
            // Loaded (or failed to be) since it was looked at.
            make_in_driver(&surface, index);
        }
    }
    let handle = Surface::handle(&surface);
    // Instance-lifetime bookkeeping, not the surface's memory.
    with_system_allocator(|| instance.surfaces.lock().unwrap_or_else(|e| e.into_inner()).push(surface));
    Ok(handle)
}

/// Destroys a surface of `instance` that its list held (and no longer holds): the drivers'
/// surfaces with `allocator`, then the loader's (when the last reference goes: a driver loaded in
/// another thread may be making its surface from it).
fn destroy_listed(instance: &Instance, surface: &Surface, allocator: Allocator<'_>) {
    // Drivers not loaded yet make no surface for it when they are.
    for lazy in instance.drivers.iter().filter_map(|d| d.lazy.as_ref()) {
        lazy.not_needed(surface.handle().0);
    }
    destroy_driver_surfaces(instance, &surface.per_driver, allocator);
}

impl SurfaceObject for Surface {
    fn handle(&self) -> VkSurfaceKHR {
        Surface::handle(self)
    }

    fn destroy(&self, instance: &Instance, allocator: Option<Allocator<'_>>) {
        // Without one: its own, kept with it.
        destroy_listed(instance, self, allocator.unwrap_or_else(|| self.allocator.get()));
    }
}

/// Destroys the drivers' own surfaces (a driver making one now destroys it when done).
fn destroy_driver_surfaces(instance: &Instance, per_driver: &[DriverSurface], allocator: Allocator<'_>) {
    for (driver, slot) in instance.drivers.iter().zip(per_driver) {
        slot.destroy(driver, allocator);
    }
}

/// An application's `VkPhysicalDeviceSurfaceInfo2KHR` and its surface, as views; `None` for NULL.
///
/// # Safety
/// `info` must be NULL or a valid structure for `'a` whose `surface` is NULL or a live surface of
/// this loader (Vulkan's valid usage).
pub unsafe fn surface_info<'a>(info: *const VkPhysicalDeviceSurfaceInfo2KHR) -> Option<(&'a VkPhysicalDeviceSurfaceInfo2KHR, Option<&'a Surface>)> {
    // SAFETY: NULL or a valid structure (this function's contract).
    let info = unsafe { info.as_ref() }?;
    // SAFETY: NULL or a live surface of this loader (this function's contract).
    Some((info, unsafe { Surface::from_handle(info.surface) }))
}
