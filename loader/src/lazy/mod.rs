//! Lazy drivers: physical devices handed out from the driver cache, each driver loaded at its
//! first real use.
//!
//! On a cache hit whose record holds the driver's physical devices for this application (its
//! [`Profile`]), `vkCreateInstance` creates no driver instance: the instance gets a
//! driver instance whose table is this module's front table ([`front`]) and whose handle is a
//! [`Lazy`], with a kept deep copy of the create info ([`crate::given::kept`]). The front table answers
//! `vkEnumeratePhysicalDevices(Groups)` with placeholder physical devices ([`FakeDevice`]) and the
//! fixed queries from the record ([`answers`]). Its other slots are empty: a generated terminator
//! that finds an empty slot asks [`driver_loaded_for`], which loads the driver, creates its
//! instance from the kept create info, matches its physical devices to the recorded ones by
//! identity, and points the loader's physical devices at the live driver; the call is then made
//! again. Hand-written terminators that need the driver (device creation, surfaces, emulated
//! queries) call [`live_for`] first. What must follow the loading (the driver's own surfaces for
//! the surfaces made before it) is kept with [`Lazy::when_loaded`] and done before the call that
//! loaded the driver goes on.
//!
//! A record holds the formats the application asked, as it asked them: one it lacks loads the
//! driver, and from then on every format query of the application still comes here (the live
//! table's format slots are this module's), is answered by the driver and recorded; at
//! `vkDestroyInstance` the instance adds what was recorded to the driver's cache entry
//! ([`Lazy::take_learned`]), which the next launches answer from.
//!
//! If loading fails, or the live devices no longer match the recorded ones, the devices answer
//! `VK_ERROR_INITIALIZATION_FAILED` from then on, the reason is logged, and the driver's cache
//! entry is dropped so that the next instance loads it at once.

pub mod answers;
mod front;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use vk_generated::types::*;

use crate::cache::extension_list::ExtensionList;
use crate::cache::profile::{answer_key, Family, Profile};
use crate::debug::log::Level;
use crate::load::calls::{GroupChains, InstanceCalls, PhysicalDeviceCalls};
use crate::load::driver::{self, Driver, Loaded};
use crate::load::fixed_queries::FixedQueries;
use crate::load::instance::{self as driver_instance, LiveInstance};
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};
use crate::manifest::driver::DriverManifest;
use crate::given::allocator::{Allocator, KeptAllocator};
use crate::given::kept::KeptCreateInfo;
use crate::platform::host_alloc::with_system_allocator;

/// The first word of a [`FakeDevice`] and of a [`Lazy`], which marks them in a memory dump. It is
/// never read to tell a placeholder from a driver's handle: that is done by address
/// ([`lazy_device`]), as a driver's handle may point to memory the driver has freed.
const FAKE_MAGIC: u64 = 0x4c41_5a59_4445_5631; // "LAZYDEV1"

/// A physical device the loader hands out for a driver not loaded yet: the driver handle the
/// loader's physical device carries until the driver is live. Known by its address (it lies in
/// its driver's array of them); its words only mark it in a memory dump.
#[repr(C)]
pub struct FakeDevice {
    magic: u64,
    index: usize,
}

/// Work kept for when a lazy driver is loaded (see [`Lazy::when_loaded`]).
pub type Work = Arc<dyn Fn() + Send + Sync>;

/// A driver answered from its record, loaded at the first call that needs it.
#[repr(C)]
pub struct Lazy {
    /// [`FAKE_MAGIC`]: the `VkInstance` the loader keeps for the driver points here.
    magic: u64,
    pub manifest_path: String,
    manifest: DriverManifest,
    /// The driver's instance extensions, as recorded.
    supported: ExtensionList,
    profile: Arc<Profile>,
    kept: Arc<KeptCreateInfo>,
    allocator: KeptAllocator,
    /// Points the loader's physical devices of this driver at the live driver (set by the
    /// instance that owns them; see [`Lazy::on_live`]), and whether it has run.
    on_live: OnceLock<Box<dyn Fn() + Send + Sync>>,
    repointed: AtomicBool,
    devices: Box<[FakeDevice]>,
    /// Each device's recorded extension list as read (and checked) at the first query: layers
    /// such as Mesa's device-select enumerate, and so make the loader ask, several times.
    device_extensions: Box<[OnceLock<Option<RecordedExtensions>>]>,
    live: OnceLock<Result<Live, String>>,
    /// Queries answered from the record.
    answered: AtomicU32,
    /// Per device: what the record of its formats needs to know of it (asked once the driver is
    /// live), and the answers the live driver gave to the formats the application asked that the
    /// record lacks.
    format_recorders: Box<[OnceLock<answers::FormatRecorder>]>,
    learned: Mutex<Vec<crate::cache::profile::DeviceAnswers>>,
    /// What to do once the driver is loaded, by key: the driver's own surfaces for the loader's
    /// surfaces made before (see [`Lazy::when_loaded`]).
    pending: Mutex<Vec<(u64, Work)>>,
}

/// The driver once loaded.
pub struct Live {
    pub driver: Arc<Driver>,
    /// Its instance: the table the loader calls has its format slots this module's (see the
    /// module's documentation); its devices are the driver's for each recorded one, in order.
    pub instance: LiveInstance,
}

/// Every lazy driver of the process, by where its placeholders lie: how a front function, which
/// gets a placeholder (or, racing with the loading, the live driver's handle that replaced it;
/// see `TerminatorPhysicalDevice::driver`), finds its driver. Entries of lazy drivers dropped
/// since are left out when the next one is listed.
static ALL: Mutex<Vec<Listed>> = Mutex::new(Vec::new());

/// A lazy driver in [`ALL`].
struct Listed {
    /// The address of its first placeholder, and how many it has.
    first: usize,
    count: usize,
    lazy: Weak<Lazy>,
}

impl Listed {
    /// The index of the placeholder at `address`, if it is one of this driver's.
    fn placeholder(&self, address: usize) -> Option<usize> {
        let offset = address.checked_sub(self.first)?;
        let index = offset / std::mem::size_of::<FakeDevice>();
        (offset % std::mem::size_of::<FakeDevice>() == 0 && index < self.count).then_some(index)
    }
}

impl Lazy {
    /// A lazy driver for `profile`, its front table and its `VkInstance`.
    pub fn new(
        manifest_path: &str,
        manifest: DriverManifest,
        supported: ExtensionList,
        profile: Arc<Profile>,
        kept: Arc<KeptCreateInfo>,
        allocator: Allocator<'_>,
    ) -> Arc<Lazy> {
        let devices: Box<[FakeDevice]> = (0..profile.devices.len()).map(|index| FakeDevice { magic: FAKE_MAGIC, index }).collect();
        let lazy = Lazy {
            magic: FAKE_MAGIC,
            manifest_path: manifest_path.to_string(),
            manifest,
            supported,
            kept,
            allocator: allocator.keep(),
            on_live: OnceLock::new(),
            repointed: AtomicBool::new(false),
            devices,
            device_extensions: (0..profile.devices.len()).map(|_| OnceLock::new()).collect(),
            live: OnceLock::new(),
            answered: AtomicU32::new(0),
            format_recorders: (0..profile.devices.len()).map(|_| OnceLock::new()).collect(),
            learned: Mutex::new(vec![Default::default(); profile.devices.len()]),
            pending: Mutex::new(Vec::new()),
            profile,
        };
        // The registry's reference may outlive the instance (until the next lazy driver is
        // listed): its allocation is the process's.
        let lazy = with_system_allocator(|| Arc::new(lazy));
        let listed = Listed { first: lazy.devices.as_ptr() as usize, count: lazy.devices.len(), lazy: Arc::downgrade(&lazy) };
        with_system_allocator(|| {
            let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
            all.retain(|l| l.lazy.strong_count() > 0);
            all.push(listed);
        });
        lazy
    }

    /// The `VkInstance` the loader keeps for this driver until it is live.
    pub fn handle(&self) -> VkInstance {
        VkInstance(self as *const Lazy as *mut _)
    }

    /// The table of the not-yet-loaded driver.
    pub fn front_table() -> Box<InstanceDispatch> {
        front::table()
    }

    /// What to run once the driver is live: the owning instance points its physical devices of
    /// this driver at the live ones ([`live_device`](Self::live_device)).
    pub fn on_live(&self, repoint: Box<dyn Fn() + Send + Sync>) {
        let _ = self.on_live.set(repoint);
    }

    /// Has `work` run once the driver is loaded (by the thread that points the loader's physical
    /// devices at it, before the call that loaded it goes on), unless [`not_needed`](Self::not_needed)
    /// is called with `key` before. `false`, and nothing kept, where the driver was loaded already
    /// (or failed to be): the caller does the work itself.
    pub fn when_loaded(&self, key: u64, work: Work) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        // Checked under the lock that the loading thread takes after `live` is set: the work is
        // either taken by it or refused here.
        if self.live.get().is_some() {
            return false;
        }
        with_system_allocator(|| pending.push((key, work)));
        true
    }

    /// Drops the work kept for `key` (its surface was destroyed before the driver was loaded).
    pub fn not_needed(&self, key: u64) {
        let mut removed = Vec::new();
        {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            while let Some(at) = pending.iter().position(|(k, _)| *k == key) {
                removed.push(pending.remove(at));
            }
        }
        // Dropped outside the lock: the work may hold the last reference to what it was for.
        drop(removed);
    }

    /// The live driver, if it was loaded (and loading succeeded).
    pub fn live(&self) -> Option<&Live> {
        self.live.get().and_then(|r| r.as_ref().ok())
    }

    fn fake(&self, index: usize) -> VkPhysicalDevice {
        VkPhysicalDevice(&self.devices[index] as *const FakeDevice as *mut _)
    }

    /// Device `index`'s extension list as recorded (`answers`), and what the loader reads of it;
    /// `None` if the record has none that decodes.
    pub fn device_extensions<'a>(&self, index: usize, answers: &'a crate::cache::profile::DeviceAnswers) -> Option<(&'a [u8], RecordedExtensions)> {
        let bytes = answers.get(answer_key(Family::DeviceExtensions, 0, 0))?;
        let read = self.device_extensions[index].get_or_init(|| {
            answers::count_extensions(bytes, PCI_BUS_INFO).map(|(count, pci_bus_info)| RecordedExtensions { count, pci_bus_info })
        });
        Some((bytes, (*read)?))
    }

    /// Answers a query of device `index`: from the record while the driver is not loaded and the
    /// record has the answer, else from the live driver (loaded now if need be); `failed` if it
    /// cannot be loaded.
    fn answer<R>(
        &self,
        command: &str,
        index: usize,
        replay: impl FnOnce(&crate::cache::profile::DeviceAnswers) -> Option<R>,
        live: impl FnOnce(&vk_generated::InstanceDispatchTable, VkPhysicalDevice) -> R,
        failed: R,
    ) -> R {
        if self.live.get().is_none() {
            if let Some(answer) = replay(&self.profile.devices[index]) {
                self.answered.fetch_add(1, Ordering::Relaxed);
                return answer;
            }
            log!(Level::Driver, "{}: {command}: not answered by the record of physical device {index}", self.manifest_path);
        }
        match self.load_at(command) {
            Some(l) => live(l.instance.own_table(), l.instance.devices()[index]),
            None => failed,
        }
    }

    /// [`answer`](Self::answer) for a query the record keeps per input: a format the record lacks
    /// is, besides, asked of the live driver for the record (see the module's documentation).
    #[allow(clippy::too_many_arguments)]
    fn answer_per_input<R>(
        &self,
        command: &str,
        index: usize,
        family: Family,
        input: u32,
        replay: impl FnOnce(&crate::cache::profile::DeviceAnswers) -> Option<R>,
        live: impl FnOnce(&vk_generated::InstanceDispatchTable, VkPhysicalDevice) -> R,
        failed: R,
    ) -> R {
        if family != Family::Format {
            return self.answer(command, index, replay, live, failed);
        }
        if self.live.get().is_none() {
            if let Some(answer) = replay(&self.profile.devices[index]) {
                self.answered.fetch_add(1, Ordering::Relaxed);
                return answer;
            }
            log!(Level::Driver, "{}: {command}: format {input} not answered by the record of physical device {index}", self.manifest_path);
        }
        match self.load_at(command) {
            Some(l) => {
                self.record_format(l, index, input);
                live(l.instance.own_table(), l.instance.devices()[index])
            }
            None => failed,
        }
    }

    /// Asks the live driver format `format` of device `index` for the record, unless the record or
    /// this process has it. No lock is held while the driver answers.
    fn record_format(&self, live: &Live, index: usize, format: u32) {
        let key = answer_key(Family::Format, format, answers::FORMAT_HEAD.structure.s_type().0 as u32);
        let learned = |lazy: &Lazy| lazy.learned.lock().unwrap_or_else(|e| e.into_inner())[index].get(key).is_some();
        if self.profile.devices[index].get(key).is_some() || learned(self) {
            return;
        }
        let Some(device) = live.instance.queries(index) else { return };
        with_system_allocator(|| {
            let recorder = self.format_recorders[index].get_or_init(|| answers::FormatRecorder::of(device));
            let mut answers = crate::cache::profile::DeviceAnswers::default();
            recorder.record_format(device, format, &mut answers);
            let mut learned = self.learned.lock().unwrap_or_else(|e| e.into_inner());
            for (key, bytes) in answers.iter() {
                learned[index].set(key, bytes);
            }
        })
    }

    /// The answers recorded in this process that the record lacks, by device index (taken: a
    /// second call gives only what was recorded since).
    pub fn take_learned(&self) -> Vec<(usize, crate::cache::profile::DeviceAnswers)> {
        let mut learned = self.learned.lock().unwrap_or_else(|e| e.into_inner());
        learned.iter_mut().map(std::mem::take).enumerate().filter(|(_, answers)| answers.len() > 0).collect()
    }

    /// The record's profile's application and the driver's manifest, for adding to its entry.
    pub fn record_of(&self) -> (u64, &DriverManifest) {
        (self.profile.application, &self.manifest)
    }

    /// Loads the driver (once): `None` when that failed, now or before. Once it is live, the
    /// loader's physical devices are pointed at it before this returns (in every thread that gets
    /// here first: repointing is idempotent), so a terminator that calls again reaches the driver.
    pub fn load_at(&self, command: &str) -> Option<&Live> {
        let live = self.load_once(command)?;
        if !self.repointed.load(Ordering::Acquire) {
            if let Some(repoint) = self.on_live.get() {
                repoint();
            }
            // No lock is held while the work calls the driver.
            let work = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
            for (_, work) in &work {
                work();
            }
            self.repointed.store(true, Ordering::Release);
        }
        Some(live)
    }

    fn load_once(&self, command: &str) -> Option<&Live> {
        // The loader's own memory for the live driver is the process's: it may be loaded in a call
        // with other allocation callbacks (a device's) than the instance's, which frees it. The
        // driver's instance gets the instance's callbacks.
        let result = self.live.get_or_init(|| {
            with_system_allocator(|| {
                let started = std::time::Instant::now();
                let answered = self.answered.load(Ordering::Relaxed);
                match self.load() {
                    Ok(live) => {
                        let ms = crate::debug::log::Milliseconds(started.elapsed());
                        let what = format!("loaded at {command} in {ms} ms, after {answered} queries answered from the driver cache");
                        log!(Level::Driver, "{}: {what}", self.manifest_path);
                        crate::plan::record(|p| p.driver(&self.manifest_path, None, crate::plan::Decision::Used, &what));
                        Ok(live)
                    }
                    Err(why) => {
                        // An error: the application is about to see the failure.
                        let message = format!("{}: could not be loaded at {command}: {why}; its physical devices fail from now on", self.manifest_path);
                        crate::debug::log::write(Level::ErrorDriver, &message);
                        crate::cache::forget(&self.manifest_path);
                        Err(why)
                    }
                }
            })
        });
        result.as_ref().ok()
    }

    /// Loads the driver, creates its instance from the kept create info and matches its devices.
    fn load(&self) -> Result<Live, String> {
        // How a test makes this panic, to see the call that needed the driver fail, not abort.
        #[cfg(debug_assertions)]
        if crate::reference::variables::VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD.is_set() {
            panic!("a lazy driver's loading panics: VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD is set");
        }
        let driver = match driver::load(&self.manifest_path, self.manifest.clone(), &[])? {
            Loaded::Driver(d) => Arc::new(d),
            Loaded::Duplicate => return Err("its library is loaded through another manifest".into()),
            Loaded::OtherArchitecture(why) => return Err(why),
        };
        let allocator = self.allocator.get();
        let (supported, requested) = (self.supported.properties(), self.kept.requested());
        let (instance, _) = driver_instance::create_driver_instance(&driver, &supported, self.kept.info(), &requested, self.kept.api_version, allocator)?;
        match instance.into_live(|listed| match_devices(&self.profile, listed), front::route_formats_here) {
            Ok(instance) => Ok(Live { driver, instance }),
            Err((instance, why)) => {
                instance.destroy(allocator);
                Err(why)
            }
        }
    }

    /// The live driver's device and `vkGetDeviceProcAddr` for a placeholder of this driver (or
    /// for the live device itself), once the driver is live.
    pub fn live_device(&self, handle: VkPhysicalDevice) -> Option<(&vk_generated::InstanceDispatchTable, VkPhysicalDevice, PFN_vkGetDeviceProcAddr)> {
        let live = self.live()?;
        let index = self.index_of(handle)?;
        Some((&live.instance.table().table, live.instance.devices()[index], live.instance.gdpa()))
    }

    /// The index of a placeholder of this driver, or of the live device that replaced it.
    fn index_of(&self, handle: VkPhysicalDevice) -> Option<usize> {
        if let Some(i) = self.devices.iter().position(|d| std::ptr::eq(d, handle.0 as *const FakeDevice)) {
            return Some(i);
        }
        self.live().and_then(|l| l.instance.devices().iter().position(|&d| d == handle))
    }

    /// At `vkDestroyInstance`, for a driver never loaded: what the log and `vk-loader explain`
    /// (which sees its own instance only) say of it. `None` once it was loaded (or failed to be),
    /// which was said then.
    pub fn never_loaded(&self) -> Option<String> {
        let answered = self.answered.load(Ordering::Relaxed);
        self.live.get().is_none().then(|| format!("never loaded: {answered} queries answered from the driver cache"))
    }
}

/// A device of a lazy driver: the driver and the device's index.
type LazyDevice = (Arc<Lazy>, usize);

/// The lazy driver's device behind `handle` when it is a placeholder, known by its address (it
/// lies in a listed lazy driver's array of them), or, with `live`, the live driver's device that
/// replaced one, known by value. Nothing behind `handle` is read: a driver's handle may point to
/// memory the driver has freed since (a device gone between two enumerations).
fn lazy_device(handle: VkPhysicalDevice, live: bool) -> Option<LazyDevice> {
    if handle.is_null() {
        return None;
    }
    let address = handle.0 as usize;
    let all = ALL.lock().unwrap_or_else(|e| e.into_inner());
    // A dropped driver's placeholders may lie where a live one's do now: it is passed over.
    let placeholder = all.iter().find_map(|l| {
        let index = l.placeholder(address)?;
        Some((l.lazy.upgrade()?, index))
    });
    if placeholder.is_some() || !live {
        return placeholder;
    }
    all.iter().find_map(|l| {
        let lazy = l.lazy.upgrade()?;
        let index = lazy.live()?.instance.devices().iter().position(|&d| d == handle)?;
        Some((lazy, index))
    })
}

/// The lazy driver and device index behind a handle a front function received: a placeholder,
/// or (a call racing with the switch to the live driver) the live driver's handle.
fn resolve(handle: VkPhysicalDevice) -> Option<LazyDevice> {
    lazy_device(handle, true)
}

/// The device extension the loader asks every device about at enumeration (for its PCI address).
pub const PCI_BUS_INFO: &std::ffi::CStr = c"VK_EXT_pci_bus_info";

/// What the loader reads of a device's recorded extension list: how many it lists, and whether
/// [`PCI_BUS_INFO`] is one.
#[derive(Clone, Copy)]
pub struct RecordedExtensions {
    pub count: u32,
    pub pci_bus_info: bool,
}

/// Whether `device`, a placeholder of a driver not loaded, has [`PCI_BUS_INFO`] by its record
/// (read in place once); `None` for any other device or a record without the list (the caller
/// asks through the dispatch table then).
pub fn recorded_pci_bus_info(device: PhysicalDeviceCalls) -> Option<bool> {
    let (lazy, index) = lazy_device(device.handle(), false)?;
    // Loaded, or failed to be (its devices then fail every query): not answered here.
    if lazy.live.get().is_some() {
        return None;
    }
    let (_, read) = lazy.device_extensions(index, &lazy.profile.devices[index])?;
    Some(read.pci_bus_info)
}

/// The live driver's physical device for each recorded one (its index in `live`), matched by
/// identity: the same vendor, device, type, name, driver and API versions, and the same device
/// UUID and PCI address where they were recorded. Any device missing, added or ambiguous is an
/// error.
fn match_devices(profile: &Profile, live: &[PhysicalDeviceCalls]) -> Result<Vec<usize>, String> {
    if live.len() != profile.devices.len() {
        return Err(format!("it reports {} physical devices where {} were recorded", live.len(), profile.devices.len()));
    }
    let mut taken = vec![false; live.len()];
    let mut matched = Vec::with_capacity(live.len());
    for (i, recorded) in profile.devices.iter().enumerate() {
        let found = (0..live.len()).find(|&j| !taken[j] && is_recorded_device(recorded, live[j]));
        let Some(j) = found else {
            return Err(format!("its physical device {i} is not the one recorded (the hardware changed)"));
        };
        taken[j] = true;
        matched.push(j);
    }
    Ok(matched)
}

/// Whether a live device is the recorded one (see [`match_devices`]).
fn is_recorded_device(recorded: &crate::cache::profile::DeviceAnswers, live: PhysicalDeviceCalls) -> bool {
    let key = |s_type: VkStructureType| answer_key(Family::Properties, 0, s_type.0 as u32);
    let Some(properties) = recorded.get(key(VkStructureType::PHYSICAL_DEVICE_PROPERTIES_2)).and_then(answers::decode_list::<VkPhysicalDeviceProperties>) else {
        return false;
    };
    let Some(p) = properties.first() else {
        return false;
    };
    let now = live.properties();
    if (p.vendorID, p.deviceID, p.deviceType, p.driverVersion, p.apiVersion) != (now.vendorID, now.deviceID, now.deviceType, now.driverVersion, now.apiVersion)
        || answers::device_name(p) != answers::device_name(&now)
    {
        return false;
    }
    // The identities a second identical GPU differs by; a driver without
    // vkGetPhysicalDeviceProperties2 cannot show them.
    let body = |s_type: VkStructureType| recorded.get(key(s_type));
    if let Some(id) = body(VkStructureType::PHYSICAL_DEVICE_ID_PROPERTIES).and_then(answers::decode_body::<VkPhysicalDeviceIDProperties>) {
        match live.properties2::<VkPhysicalDeviceIDProperties>() {
            Some(now) if now.deviceUUID == id.deviceUUID && now.driverUUID == id.driverUUID => {}
            _ => return false,
        }
    }
    let pci_key = VkStructureType::PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    if let Some(pci) = body(pci_key).and_then(answers::decode_body::<VkPhysicalDevicePCIBusInfoPropertiesEXT>) {
        let address = |p: &VkPhysicalDevicePCIBusInfoPropertiesEXT| (p.pciDomain, p.pciBus, p.pciDevice, p.pciFunction);
        match live.properties2::<VkPhysicalDevicePCIBusInfoPropertiesEXT>() {
            Some(now) if address(&now) == address(&pci) => {}
            _ => return false,
        }
    }
    true
}

/// What became of the driver behind a physical device when a terminator found its slot empty.
pub enum DriverLoad {
    /// It was not loaded; now it is: call again.
    Now,
    /// It was loaded already: the driver lacks the command.
    Already,
    /// It could not be loaded.
    Failed,
}

/// Loads the driver of a loader physical device if it is not loaded yet (see the module's
/// documentation); `command` is named in the log.
pub fn driver_loaded_for(device: &TerminatorPhysicalDevice, command: &str) -> DriverLoad {
    let (_, handle) = device.driver();
    let Some((lazy, _)) = lazy_device(handle, false) else {
        return DriverLoad::Already;
    };
    match lazy.load_at(command) {
        Some(_) => DriverLoad::Now,
        None => DriverLoad::Failed,
    }
}

/// For hand-written terminators that need the driver itself: loads the driver of `device` if it
/// is lazy; `false` if that failed.
pub fn live_for(device: &TerminatorPhysicalDevice, command: &str) -> bool {
    let (_, handle) = device.driver();
    match resolve(handle) {
        Some((lazy, _)) => lazy.load_at(command).is_some(),
        None => true,
    }
}

/// Whether a lazy driver's front table answers `command` (possibly from the record): whether its
/// slot there is filled.
pub fn answered_in_front(command: &str) -> bool {
    use vk_generated::DispatchTable;
    static FRONT: OnceLock<Box<InstanceDispatch>> = OnceLock::new();
    let front = FRONT.get_or_init(|| with_system_allocator(front::table));
    let Some(name) = vk_generated::lookup::command(command.as_bytes()) else { return false };
    let slot = vk_generated::COMMANDS[name.command as usize].slot as usize;
    front.table.slots().get(slot).is_some_and(|f| f.is_some())
}

/// Whether two driver handles are the same device of a lazy driver: its placeholder and the live
/// device that replaced it (a refresh racing with the driver's loading).
///
/// Compared by value and by address only: either may be a driver's handle to a device the driver
/// has removed and freed since the loader kept it.
pub fn same_device(a: VkPhysicalDevice, b: VkPhysicalDevice) -> bool {
    // One of the two is a placeholder in any such race; two driver handles are compared as they are.
    let (placeholder_a, placeholder_b) = (lazy_device(a, false), lazy_device(b, false));
    if placeholder_a.is_none() && placeholder_b.is_none() {
        return false;
    }
    let (Some(device_a), Some(device_b)) = (placeholder_a.or_else(|| lazy_device(a, true)), placeholder_b.or_else(|| lazy_device(b, true))) else {
        return false;
    };
    Arc::ptr_eq(&device_a.0, &device_b.0) && device_a.1 == device_b.1
}

/// Whether drivers may be left unloaded: the driver cache is on (`cache_mode`; not off, not
/// verify: verify loads every driver), and `VK_LOADER_LAZY_DRIVERS` is not `off`.
pub fn allowed(cache_mode: crate::cache::Mode) -> bool {
    if cache_mode != crate::cache::Mode::On {
        return false;
    }
    let off = crate::reference::variables::VK_LOADER_LAZY_DRIVERS.word(&[("on", false), ("1", false), ("true", false), ("yes", false), ("off", true), ("0", true), ("false", true), ("no", true)], |message| crate::debug::log::log(Level::Warn, message)).unwrap_or(false);
    if off {
        log!(Level::Driver, "lazy drivers off: VK_LOADER_LAZY_DRIVERS={}", crate::reference::variables::VK_LOADER_LAZY_DRIVERS.get().unwrap_or_default());
    }
    !off
}

/// Whether a record's profile can stand for the driver: a device count that agrees with it, and
/// each device's properties (which enumeration and ordering read). Else what it lacks.
pub fn usable(profile: &Profile, entry: &crate::cache::record::Entry) -> Result<(), String> {
    let properties = answer_key(Family::Properties, 0, VkStructureType::PHYSICAL_DEVICE_PROPERTIES_2.0 as u32);
    let count = entry.device_count(profile.application);
    if count != Some(profile.devices.len() as u32) || profile.devices.is_empty() {
        return Err(format!(
            "its record of this application's physical devices holds {} of {}",
            profile.devices.len(),
            count.map_or("an unknown number".to_string(), |n| n.to_string())
        ));
    }
    match profile.devices.iter().position(|d| d.get(properties).is_none()) {
        Some(i) => Err(format!("its record lacks vkGetPhysicalDeviceProperties2 of physical device {i}")),
        None => Ok(()),
    }
}

/// Asks a loaded driver's physical devices (`listed`: those `instance` lists) everything a lazy
/// instance may answer from the record, and of each the formats `formats` lists for it (by its
/// index: those an application asked, which verify mode asks again); `groups_known`: whether the
/// driver can report device groups (Vulkan 1.1 or `VK_KHR_device_group_creation`).
pub fn record_profile(instance: InstanceCalls, listed: &[FixedQueries], formats: &[Vec<u32>], groups_known: bool, application: u64) -> Profile {
    let handles: Vec<VkPhysicalDevice> = listed.iter().map(|device| device.handle()).collect();
    let devices = listed
        .iter()
        .enumerate()
        .map(|(i, &device)| {
            let mut answers = crate::cache::profile::DeviceAnswers::default();
            answers::record_device(device, &mut answers);
            if let Some(formats) = formats.get(i).filter(|f| !f.is_empty()) {
                let recorder = answers::FormatRecorder::of(device);
                for &format in formats {
                    recorder.record_format(device, format, &mut answers);
                }
            }
            answers
        })
        .collect();
    let groups = groups_known.then(|| instance.physical_device_groups(&GroupChains::none())).flatten().and_then(Result::ok).map(|groups| {
        groups
            .iter()
            .map(|g| {
                let members = &g.physicalDevices[..(g.physicalDeviceCount as usize).min(g.physicalDevices.len())];
                let indices = members.iter().filter_map(|m| handles.iter().position(|h| h == m)).map(|i| i as u8).collect();
                (indices, g.subsetAllocation)
            })
            .collect()
    });
    Profile { application, devices, groups }
}
