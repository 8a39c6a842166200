//! The loader's instance and physical devices: what the `VkInstance` and `VkPhysicalDevice`
//! handles it gives out point to. Their behaviour is in the stages that use them (`chain`,
//! `dispatch`, `wsi`); the messenger scope of an instance is here, since every stage reports
//! about one.

use std::sync::{Arc, Mutex};

use vk_generated::InstanceDispatchTable;
use vk_generated::lookup::ExtensionSet;
use vk_generated::types::*;

use crate::debug::log::Level;
use crate::debug::messengers::{Callback, Messengers, Scope};
use crate::given::allocator::Allocator;
use crate::load::calls::InstanceCalls;
use crate::load::driver::Driver;
use crate::load::fixed_queries::FixedQueries;
use crate::load::instance_chain::ChainCalls;
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};
use crate::manifest::settings::DeviceConfiguration;
use crate::object::layers::InstanceLayers;

/// One driver's instance under the loader's.
pub struct DriverInstance {
    pub driver: Arc<Driver>,
    pub handle: VkInstance,
    /// The driver's own instance-level functions, and its unknown physical-device commands.
    pub table: Box<InstanceDispatch>,
    /// The instance extensions the driver was given.
    pub extensions: ExtensionSet,
    /// A driver answered from the driver cache and loaded at its first real use (`crate::lazy`):
    /// `table` and `handle` are then the lazy driver's front until it is loaded.
    pub lazy: Option<std::sync::Arc<crate::lazy::Lazy>>,
}

impl DriverInstance {
    /// Whether this is a lazy driver not loaded (yet, or ever).
    pub fn is_unloaded(&self) -> bool {
        self.lazy.as_ref().is_some_and(|l| l.live().is_none())
    }

    /// The driver: the live one, once a lazy driver is loaded.
    pub fn live_driver(&self) -> &Driver {
        self.lazy.as_ref().and_then(|l| l.live()).map_or(&self.driver, |live| &live.driver)
    }

    /// The driver's instance table and handle: the live driver's, once a lazy driver is loaded.
    pub fn live(&self) -> (&InstanceDispatch, VkInstance) {
        match self.lazy.as_ref().and_then(|l| l.live()) {
            Some(live) => (live.instance.table(), live.instance.handle()),
            None => (&self.table, self.handle),
        }
    }

    pub fn has_extension(&self, name: &[u8]) -> bool {
        vk_generated::lookup::extension(name).is_some_and(|id| self.extensions.contains(id))
    }

    /// The instance's calls: the live driver's, once a lazy driver is loaded.
    pub fn calls(&self) -> InstanceCalls<'_> {
        let (table, handle) = self.live();
        // SAFETY: a `DriverInstance` holds, from its creation in `chain::drivers` until it is
        // destroyed (`destroy`, or `Instance::destroy_drivers`, after which the loader's instance
        // is freed, not called), a driver's live instance with the table its
        // vkGetInstanceProcAddr gave for it, or a lazy driver's front table and handle; `live`
        // gives the live driver's once it is loaded, and `live_driver` is the driver of whichever
        // it gives. Both live as long as `self`.
        unsafe { InstanceCalls::new(self.live_driver().get_instance_proc_addr, table, handle) }
    }

    /// `vkDestroyInstance` on the driver's instance, which nothing can call afterwards (`self` is
    /// gone).
    pub fn destroy(self, allocator: Allocator<'_>) {
        // SAFETY: the live instance (`calls`), used by nothing else once `self` is consumed; the
        // callbacks it was created with (`Allocator`).
        unsafe { self.calls().destroy(allocator.as_ptr()) };
    }
}

/// A surface of an instance, in its list (the surface commands of `wsi.rs` make them: the instance knows them by
/// this trait alone).
pub trait SurfaceObject: Send + Sync {
    /// Its handle.
    fn handle(&self) -> VkSurfaceKHR;

    /// Destroys it (it is out of `instance`'s list): the drivers' surfaces with `allocator`, or
    /// with the callbacks it was created with for `None` (a surface left when the application
    /// destroys its instance).
    fn destroy(&self, instance: &Instance, allocator: Option<crate::given::allocator::Allocator<'_>>);
}

/// The loader's `VkInstance`. Its first word is the dispatch table, as for every dispatchable object.
#[repr(C)]
pub struct Instance {
    pub(crate) dispatch: *const InstanceDispatchTable,
    /// `handles::INSTANCE_MAGIC` while the instance lives.
    pub(crate) magic: u64,
    /// The handle the next level of the chain knows this instance by: the instance itself, or
    /// what the top layer returned. Instance-level calls pass it down.
    pub chain_handle: VkInstance,
    /// The end of the instance chain: generated default terminators, and the unknown-command
    /// terminators in the unknown slots.
    pub(crate) table: Box<InstanceDispatch>,
    pub drivers: Vec<DriverInstance>,
    /// Every physical device the drivers reported, wrapped (handles stay put).
    pub physical_devices: PhysicalDevices,
    /// A loader settings file's `device_configurations` when the instance was created: they
    /// choose and order its physical devices at every enumeration.
    pub device_configurations: Option<Vec<DeviceConfiguration>>,
    pub api_version: u32,
    pub enabled_extensions: ExtensionSet,
    /// The application's digest for the driver cache's per-application records, and how the
    /// cache was used when the instance was created.
    pub application: u64,
    pub cache_mode: crate::cache::Mode,
    /// Set once the loaded drivers' physical devices were recorded for this application (at the
    /// first enumeration, else at destruction).
    pub profiles_recorded: std::sync::atomic::AtomicBool,
    /// Set once the drivers' instances are destroyed (by the end of the layers' `vkDestroyInstance`
    /// chain, else by the loader after it).
    pub drivers_destroyed: std::sync::atomic::AtomicBool,
    /// Debug callbacks chained to `VkInstanceCreateInfo`: they hear creation and destruction.
    pub creation_callbacks: Vec<Callback>,
    /// Debug messengers and report callbacks the application created on this instance.
    pub messengers: Messengers,
    /// The surfaces created on this instance and not destroyed yet (their handles are their
    /// addresses; the list keeps them alive): those the application leaves are destroyed with the
    /// instance.
    pub surfaces: std::sync::Mutex<Vec<std::sync::Arc<dyn SurfaceObject>>>,
    /// The layer chain, when layers are enabled (then `dispatch` points to its table).
    pub layers: Option<Box<InstanceLayers>>,
}

const _: () = assert!(std::mem::offset_of!(Instance, magic) == std::mem::offset_of!(crate::handles::HandleHeader, magic));
const _: () = assert!(std::mem::offset_of!(Instance, magic) == std::mem::offset_of!(crate::loader_abi::InstanceHeader, magic));
const _: () = assert!(
    std::mem::offset_of!(Instance, chain_handle) == std::mem::offset_of!(crate::loader_abi::InstanceHeader, chain_handle)
);

impl Instance {
    /// # Safety
    /// `handle` must be a `VkInstance` this loader created and has not destroyed.
    pub unsafe fn from_handle<'a>(handle: VkInstance) -> Option<&'a Instance> {
        // SAFETY: NULL or a live `Instance` the loader boxed (this function's contract).
        unsafe { (handle.0 as *const Instance).as_ref() }
    }

    /// The loader instance owning a physical device the loader handed out (terminator-level or
    /// trampoline-level: both are `TerminatorPhysicalDevice`s).
    ///
    /// # Safety
    /// `handle` must be a `VkPhysicalDevice` this loader returned, or NULL.
    pub unsafe fn of_physical_device<'a>(handle: VkPhysicalDevice) -> Option<&'a Instance> {
        if handle.is_null() {
            return None;
        }
        // SAFETY: a physical device this loader returned (the caller's promise) is a live
        // `TerminatorPhysicalDevice`, whose `instance` is its live loader instance.
        unsafe { ((*(handle.0 as *const TerminatorPhysicalDevice)).instance as *const Instance).as_ref() }
    }

    /// The table the instance's handles dispatch through (set once, before they are handed out).
    pub fn set_dispatch(&mut self, table: *const InstanceDispatchTable) {
        self.dispatch = table;
    }

    /// The end of the instance chain.
    pub fn terminators(&self) -> &InstanceDispatchTable {
        &self.table.table
    }

    /// The instance as the top of its layer chain knows it, with the chain's table; `None`
    /// without layers.
    pub fn chain_calls(&self) -> Option<ChainCalls<'_>> {
        let chain = self.layers.as_deref()?;
        let top_gipa = chain.layers.first()?.loaded.gipa;
        let first_gpdpa = chain.layers.iter().find_map(|l| l.loaded.gpdpa);
        // SAFETY: `chain_handle` is what the top layer returned for this instance, or, while the
        // chain creates it, the instance itself, which the chain was handed; the chain's table is
        // empty until that layer's vkGetInstanceProcAddr fills it for that handle (both set once,
        // in `chain::instance_layers`); the layers' libraries are held open by `chain`, and the
        // instance lives, for `&self`.
        Some(unsafe { ChainCalls::new(self.chain_handle, &chain.table.table, top_gipa, first_gpdpa) })
    }

    /// Destroys the surfaces the application left when it destroys their instance (Vulkan requires
    /// them destroyed first; the Khronos loader leaks them): each with the allocator it was
    /// created with, before the drivers' instances.
    fn destroy_surfaces_left(&self) {
        let left = std::mem::take(&mut *self.surfaces.lock().unwrap_or_else(|e| e.into_inner()));
        if left.is_empty() {
            return;
        }
        log!(Level::Warn, "vkDestroyInstance: {} surfaces the application did not destroy, destroyed with the instance", left.len());
        for surface in left {
            surface.destroy(self, None);
        }
    }

    /// Destroys the drivers' instances, once (the terminator of `vkDestroyInstance`). Through a
    /// shared reference: the layers' chain reaches the terminator through the instance's handle
    /// while the loader's `vkDestroyInstance` holds the instance; what the drivers leave is freed
    /// with the instance.
    ///
    /// # Safety
    /// `allocator` must be NULL or valid callbacks, compatible with those the drivers' instances
    /// were created with; no driver instance is used after this.
    pub unsafe fn destroy_drivers(&self, allocator: *const VkAllocationCallbacks) {
        if self.drivers_destroyed.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        self.record_profiles_once();
        self.record_learned_answers();
        // Before the drivers' instances, which their surfaces belong to.
        self.destroy_surfaces_left();
        for d in &self.drivers {
            if let Some(never) = d.lazy.as_ref().and_then(|lazy| lazy.never_loaded()) {
                log!(Level::Driver, "{}: {never}", d.driver.manifest_path);
                // `vk-loader explain` records its own instance until it is destroyed.
                crate::plan::record(|p| p.driver(&d.driver.manifest_path, None, crate::plan::Decision::Used, &never));
            }
            let (table, handle) = d.live();
            if d.is_unloaded() {
                continue;
            }
            log!(Level::Driver, "vkDestroyInstance: destroying the instance of {}", d.driver.manifest_path);
            if let Some(destroy) = table.vkDestroyInstance {
                // SAFETY: the driver's live instance, destroyed once (the flag above), with the
                // caller's allocator.
                unsafe { destroy(handle, allocator) };
            }
        }
    }
}

impl Instance {
    /// Loads every lazy driver (for calls that concern all drivers: surfaces, commands unknown to
    /// the registry); `command` is named in the log.
    pub fn load_lazy_drivers(&self, command: &str) {
        for lazy in self.drivers.iter().filter_map(|d| d.lazy.as_ref()) {
            lazy.load_at(command);
        }
    }

    /// Has each lazy driver of this instance run `then(instance, index)` once it is loaded, before
    /// the call that loaded it goes on (`index`: its place among the instance's drivers, which
    /// must not change afterwards): what the instance does with a driver once it is live.
    pub fn when_lazy_drivers_live(&self, then: fn(&Instance, usize)) {
        let address = self as *const Instance as usize;
        for (index, d) in self.drivers.iter().enumerate() {
            if let Some(lazy) = &d.lazy {
                lazy.on_live(Box::new(move || {
                    // SAFETY: an instance lives in its box, at one address, from
                    // `chain::drivers::new_instance` until it is freed, and its drivers, whose lazy
                    // drivers keep this closure, go with it or before: the closure runs while it
                    // lives. Only shared references to it are made once its drivers can be loaded.
                    let instance = unsafe { &*(address as *const Instance) };
                    then(instance, index);
                }));
            }
        }
    }

    /// Points this instance's physical devices of lazy driver `index`, now live, at the live
    /// driver's devices.
    pub fn point_lazy_devices(&self, index: usize) {
        let Some(lazy) = self.drivers.get(index).and_then(|d| d.lazy.as_ref()) else { return };
        let all = self.physical_devices.all.lock().unwrap_or_else(|e| e.into_inner());
        for device in all.iter().filter(|d| d.driver == index) {
            if let Some((table, handle, gdpa)) = lazy.live_device(device.term.driver().1) {
                device.set_gdpa(gdpa);
                // SAFETY: the live driver's table lives as long as the instance; the handle is its device's.
                unsafe { device.term.set_driver(table, handle) };
            }
        }
    }

    /// Records what each loaded driver's physical devices answer, for lazy instances of this
    /// application to come: at the instance's first enumeration of its physical devices, when
    /// the answers are known (most long-lived clients never destroy their instance), else at its
    /// destruction. Once per instance; the cache records once per process, driver and
    /// application, and only where the record lacks it (always in verify mode).
    pub fn record_profiles_once(&self) {
        if !self.profiles_recorded.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.record_profiles();
        }
    }

    fn record_profiles(&self) {
        // The answers go into the cache, process memory: not the application's allocator's.
        crate::platform::host_alloc::with_system_allocator(|| self.record_profiles_now());
    }

    fn record_profiles_now(&self) {
        let loaded: Vec<&DriverInstance> = self.drivers.iter().filter(|d| d.lazy.is_none() && !d.driver.manifest.library_path.is_empty()).collect();
        if loaded.is_empty() {
            return;
        }
        let mut cache = crate::cache::Session::in_mode(self.cache_mode);
        cache.set_application(self.application);
        for d in loaded {
            if !cache.wants_profile(&d.driver.manifest_path, &d.driver.manifest, self.application) {
                continue;
            }
            let groups_known = vk_generated::api_version_major_minor(d.driver.instance_version()) >= (1, 1) || d.has_extension(b"VK_KHR_device_group_creation");
            // SAFETY: a loaded driver's live instance (not lazy), the table its
            // vkGetInstanceProcAddr gave for it and that function, alive for this call.
            let calls = unsafe { crate::load::calls::InstanceCalls::new(d.driver.get_instance_proc_addr, &d.table.table, d.handle) };
            let listed = calls.physical_devices().map(|listed| listed.devices).unwrap_or_default();
            let devices: Vec<FixedQueries> = listed
                .iter()
                .map(|device| {
                    // SAFETY: a physical device the instance just listed, with the instance's table.
                    unsafe { FixedQueries::new(&d.table.table, device.handle()) }
                })
                .collect();
            // Verify mode asks again the formats the record holds, which applications asked.
            let formats: Vec<Vec<u32>> = cache
                .profile_to_verify(&d.driver.manifest_path, &d.driver.manifest, self.application)
                .map(|p| p.devices.iter().map(crate::lazy::answers::recorded_formats).collect())
                .unwrap_or_default();
            let profile = crate::lazy::record_profile(calls, &devices, &formats, groups_known, self.application);
            cache.record_profile(&d.driver.manifest_path, &d.driver.manifest, profile, &crate::lazy::answers::differences);
        }
        cache.save();
    }

    /// Adds what lazy drivers answered that their records lacked (the formats the application
    /// asked) to their cache entries, for the next launches.
    fn record_learned_answers(&self) {
        crate::platform::host_alloc::with_system_allocator(|| {
            let learned: Vec<_> = self.drivers.iter().filter_map(|d| Some((d, d.lazy.as_ref()?.take_learned()))).filter(|(_, l)| !l.is_empty()).collect();
            if learned.is_empty() {
                return;
            }
            let mut cache = crate::cache::Session::in_mode(self.cache_mode);
            cache.set_application(self.application);
            for (d, answers) in &learned {
                let Some(lazy) = d.lazy.as_ref() else { continue };
                let (application, manifest) = lazy.record_of();
                cache.add_answers(&lazy.manifest_path, manifest, application, answers);
            }
            cache.save();
        })
    }

    /// The handle's value, which messages about the instance carry.
    pub fn id(&self) -> u64 {
        self as *const Instance as u64
    }

    /// The scope for a call about this instance: its messengers (and, during creation and
    /// destruction, the ones chained to its create info).
    pub fn messenger_scope(&self, with_creation_callbacks: bool) -> Scope {
        let mut callbacks = self.messengers.callbacks();
        if with_creation_callbacks {
            callbacks.extend_from_slice(&self.creation_callbacks);
        }
        Scope::about_instance(callbacks, self.id())
    }
}

/// Runs `f` with the messengers of `instance` listening: for the loader's messages from calls that
/// enter no scope of their own (the physical-device terminators), so that the application's
/// messengers hear them too.
pub fn with_messengers_of<R>(instance: Option<&Instance>, f: impl FnOnce() -> R) -> R {
    let _scope = instance.map(|i| i.messenger_scope(false));
    f()
}

/// The loader's `VkPhysicalDevice`: the terminator-level wrapper the generated terminators read.
#[repr(C)]
pub struct PhysicalDevice {
    pub term: TerminatorPhysicalDevice,
    /// Index of the owning driver in `Instance::drivers`.
    pub driver: usize,
    /// The instance it belongs to (boxed: the address stays put).
    pub instance: *const Instance,
    /// The driver's `vkGetDeviceProcAddr` (a device-level command, so not in the instance table);
    /// set when a lazy driver is loaded, hence atomic. Read with [`driver_gdpa`](Self::driver_gdpa).
    pub gdpa: std::sync::atomic::AtomicUsize,
    pub properties: VkPhysicalDeviceProperties,
}

impl PhysicalDevice {
    /// # Safety
    /// `handle` must be a `VkPhysicalDevice` this loader returned.
    pub unsafe fn from_handle<'a>(handle: VkPhysicalDevice) -> Option<&'a PhysicalDevice> {
        // SAFETY: NULL or a live `PhysicalDevice` of an instance's list (this function's contract).
        unsafe { (handle.0 as *const PhysicalDevice).as_ref() }
    }

    /// The terminator-level device behind a handle the loader gave out, whether to the
    /// application (trampoline-level, with layers) or to the last layer; `None` for a layer's own
    /// wrapper, which that layer should have unwrapped.
    ///
    /// # Safety
    /// `handle` must be a `VkPhysicalDevice` this loader or a layer returned.
    pub unsafe fn from_any_handle<'a>(handle: VkPhysicalDevice) -> Option<&'a PhysicalDevice> {
        // SAFETY: a handle the loader or a layer returned, readable for its first words (this
        // function's contract).
        if !unsafe { crate::handles::has_magic(handle.0, crate::handles::PHYSICAL_DEVICE_MAGIC) } {
            return None;
        }
        // SAFETY: the magic says it is a loader physical device, at either level.
        let below = unsafe { crate::loader_abi::unwrap_physical_device(handle) };
        // SAFETY: what a loader physical device unwraps to: the terminator-level device, or a
        // layer's handle, readable as above; each read only once its magic is found.
        let terminator_level = unsafe {
            crate::handles::has_magic(below.0, crate::handles::PHYSICAL_DEVICE_MAGIC) && crate::loader_abi::unwrap_physical_device(below) == below
        };
        if !terminator_level {
            return None;
        }
        // SAFETY: a terminator-level device (it unwraps to itself), which lives in an instance's list.
        unsafe { Self::from_handle(below) }
    }

    /// The instance this device belongs to.
    pub fn instance(&self) -> Option<&Instance> {
        // SAFETY: NULL or the instance whose list holds this device (boxed there, freed with the
        // instance), so it outlives every reference to the device.
        unsafe { self.instance.as_ref() }
    }

    /// The driver's table and handle for this device (see [`TerminatorPhysicalDevice::driver`]):
    /// a lazy driver's front until it is loaded, the live driver's after.
    pub fn driver_side(&self) -> (&InstanceDispatchTable, VkPhysicalDevice) {
        let (table, handle) = self.term.driver();
        // SAFETY: the table of one of the owning instance's drivers (`DriverInstance::table`, or
        // its lazy driver's live table), boxed and freed with the instance, which outlives the device.
        (unsafe { &*table }, handle)
    }

    /// [`driver_side`](Self::driver_side) as safe calls.
    pub fn driver_calls(&self) -> crate::load::calls::PhysicalDeviceCalls<'_> {
        let (table, handle) = self.driver_side();
        // SAFETY: a table and handle read together (`TerminatorPhysicalDevice::driver`): the
        // driver's for this device, or a lazy driver's front, whose functions take either handle.
        unsafe { crate::load::calls::PhysicalDeviceCalls::new(table, handle) }
    }

    pub fn handle(&self) -> VkPhysicalDevice {
        VkPhysicalDevice(self as *const Self as *mut _)
    }

    pub fn driver_gdpa(&self) -> PFN_vkGetDeviceProcAddr {
        let f = self.gdpa.load(std::sync::atomic::Ordering::Acquire);
        // SAFETY: 0 or a `vkGetDeviceProcAddr` stored by `set_gdpa`.
        unsafe { std::mem::transmute::<usize, PFN_vkGetDeviceProcAddr>(f) }
    }

    pub fn set_gdpa(&self, gdpa: PFN_vkGetDeviceProcAddr) {
        self.gdpa.store(gdpa.map_or(0, |f| f as usize), std::sync::atomic::Ordering::Release);
    }
}

/// An instance's physical devices. Drivers may add and remove devices at any time, so every
/// `vkEnumeratePhysicalDevices(Groups)` asks them again, as the Khronos loader does. A device seen
/// before keeps its wrapper (its handle), and no wrapper is freed before the instance is, so a
/// handle the application still holds never dangles.
#[derive(Default)]
pub struct PhysicalDevices {
    /// Every wrapper made for the instance; boxed, so the handles stay put. Only ever added to
    /// (in this module), so a wrapper lives as long as this list.
    all: Mutex<Vec<Box<PhysicalDevice>>>,
    /// After the last refresh: how many devices were found when a loader settings file's
    /// `device_configurations` named none of them (see [`PhysicalDevices::none_matched`]).
    pub(crate) none_matched: std::sync::atomic::AtomicU32,
}

impl PhysicalDevices {
    /// The wrapper of each item, in order: the first for which `same` holds, or one `make` makes,
    /// kept from now on; and for each item found already, its wrapper's position in the list and
    /// the item's index (what the Khronos loader's debug log calls copying an old device).
    pub fn find_or_add<T>(&self, items: &[T], same: impl Fn(&PhysicalDevice, &T) -> bool, make: impl Fn(&T) -> Box<PhysicalDevice>) -> (Vec<&PhysicalDevice>, Vec<(usize, usize)>) {
        let mut all = self.all.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut kept = Vec::new();
        let positions: Vec<usize> = items
            .iter()
            .enumerate()
            .map(|(index, item)| match all.iter().position(|d| same(d, item)) {
                Some(position) => {
                    kept.push((position, index));
                    position
                }
                None => {
                    all.push(make(item));
                    all.len() - 1
                }
            })
            .collect();
        // SAFETY: wrappers of `all`, for `&self`.
        (positions.into_iter().map(|i| unsafe { Self::lend(&all[i]) }).collect(), kept)
    }

    /// The wrapper behind `handle`, if it is one of this instance's terminator-level devices.
    pub fn find(&self, handle: VkPhysicalDevice) -> Option<&PhysicalDevice> {
        let all = self.all.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // SAFETY: a wrapper of `all`, for `&self`.
        all.iter().find(|d| d.handle() == handle).map(|d| unsafe { Self::lend(d) })
    }

    /// A wrapper of the list, for as long as the list lives (not only while its lock is held).
    ///
    /// # Safety
    /// `wrapper` must be one of `all`'s, and `'a` no longer than the list's borrow: its boxes are
    /// never dropped or moved out while the list lives (it only grows, in this module), and are
    /// changed only through their atomics.
    unsafe fn lend<'a>(wrapper: &PhysicalDevice) -> &'a PhysicalDevice {
        // SAFETY: this function's contract.
        unsafe { &*(wrapper as *const PhysicalDevice) }
    }
}

