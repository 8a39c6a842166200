//! The terminator side of instance creation: the driver manifests found are loaded (or the
//! drivers the application handed over), each driver is asked to create its instance with the
//! extensions it supports, and the loader's instance wraps them all. Every decision is recorded
//! in the plan being recorded, if any.

use std::borrow::Cow;
use std::ffi::CStr;
use std::sync::Arc;

use vk_generated::lookup::ExtensionSet;
use vk_generated::types::*;
use vk_generated::extension_id;

use crate::cache;
use crate::cache::extension_list::ExtensionList;
use crate::chain::physical_devices;
use crate::debug::log::{self, Level};
use crate::debug::messengers;
use crate::discover::search;
use crate::dispatch::terminators;
use crate::ffi::{extension_properties, name_of};
use crate::load::direct::{self, DirectDrivers};
use crate::load::driver::{self, Driver, Loaded};
use crate::given::allocator::Allocator;
use crate::given::instance_create_info::{Application, InstanceCreateInfo};
use crate::given::kept::KeptCreateInfo;
use crate::load::instance::{create_driver_instance, extension_set, given_extensions};
use crate::loader_abi::InstanceDispatch;
use crate::manifest;
use crate::object::instance::{DriverInstance, Instance, PhysicalDevices};
use crate::plan::{self, Decision};

/// Instance extensions the loader itself implements, whatever the drivers support (registry
/// extension ids: their names and spec versions are the registry's, read without a lookup).
pub const LOADER_INSTANCE_EXTENSIONS: &[u16] = &[
    extension_id::VK_EXT_debug_report,
    extension_id::VK_EXT_debug_utils,
    extension_id::VK_KHR_portability_enumeration,
    extension_id::VK_LUNARG_direct_driver_loading,
];

/// A driver that failed to load or create its instance, and why (reported when no driver is left).
struct Rejected {
    manifest: String,
    reason: String,
}

/// A driver a call needs: loaded, or answered by its driver-cache record without loading it.
pub(crate) enum Source {
    Loaded(Arc<Driver>),
    Remembered(Box<Remembered>),
}

/// What became of one driver manifest: answered by its record, or (tried to be) loaded.
enum Outcome {
    Remembered(Box<Remembered>),
    Loaded(Loaded),
}

/// A driver left unloaded because its cache record answers for it.
pub(crate) struct Remembered {
    pub manifest_path: String,
    pub manifest: manifest::driver::DriverManifest,
    /// Its cache entry, shared with the call's session (`profile` has the application's physical
    /// devices' record).
    pub entry: cache::SharedEntry,
    /// The physical devices' record for the application creating an instance, if there is one.
    pub profile: Option<Arc<cache::profile::Profile>>,
}

/// A driver's instance extensions as [`Source::extensions`] gives them: as the loaded driver
/// listed them, or its record's list, read where used (as `VkExtensionProperties` each is 260
/// bytes, and a driver lists some 20).
enum PerDriver<'a> {
    Listed(Vec<VkExtensionProperties>),
    Recorded(&'a ExtensionList),
}

impl PerDriver<'_> {
    fn contains(&self, name: &CStr) -> bool {
        match self {
            PerDriver::Listed(list) => list.iter().any(|p| name_of(p) == name.to_bytes()),
            PerDriver::Recorded(list) => list.contains(name.to_bytes()),
        }
    }

    fn properties(&self) -> Cow<'_, [VkExtensionProperties]> {
        match self {
            PerDriver::Listed(list) => Cow::Borrowed(list),
            PerDriver::Recorded(list) => Cow::Owned(list.properties()),
        }
    }
}

impl Source {
    /// The driver's instance extensions: asked of a loaded driver, from the record otherwise.
    fn extensions(&self) -> PerDriver<'_> {
        match self {
            Source::Loaded(driver) => PerDriver::Listed(driver.instance_extensions()),
            Source::Remembered(r) => PerDriver::Recorded(&r.entry.extensions),
        }
    }
}

/// Loads the drivers the application handed over, then every driver the environment allows
/// (unless the application's list is exclusive), logging why each skipped one was. A driver
/// whose cache record is current and satisfies `answered_by` is not loaded: it comes back as
/// [`Source::Remembered`].
fn load_drivers(
    rejected: &mut Vec<Rejected>,
    direct: Option<DirectDrivers>,
    cache: &mut cache::Session,
    application: Option<u64>,
    answered_by: &dyn Fn(&cache::record::Entry) -> Result<(), String>,
) -> Vec<Source> {
    let mut sources: Vec<Source> = Vec::new();
    let mut drivers: Vec<Arc<Driver>> = Vec::new();
    let exclusive = direct.as_ref().is_some_and(|d| d.exclusive);
    for (index, gipa) in direct.map(|d| d.drivers).unwrap_or_default() {
        let name = format!("VkDirectDriverLoadingListLUNARG::pDrivers[{index}]");
        match driver::direct(index, gipa) {
            Ok(d) => {
                plan::record(|p| p.driver(&name, None, Decision::Used, "handed over by the application (VK_LUNARG_direct_driver_loading)"));
                drivers.push(Arc::new(d))
            }
            Err(reason) => {
                log::log(Level::ErrorDriver, &reason);
                plan::record(|p| p.driver(&name, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: name, reason });
            }
        }
    }
    if exclusive {
        plan::record(|p| {
            for found in search::driver_manifests() {
                let why = "VkDirectDriverLoadingListLUNARG::mode is VK_DIRECT_DRIVER_LOADING_MODE_EXCLUSIVE_LUNARG";
                p.driver(&found.path, None, Decision::Skipped, why);
            }
        });
        return drivers.into_iter().map(Source::Loaded).collect();
    }
    sources.extend(drivers.iter().cloned().map(Source::Loaded));
    for found in search::driver_manifests() {
        if let Some(why) = &found.skipped {
            log::log(Level::WarnDriver, why);
            plan::record(|p| p.driver(&found.path, None, Decision::Skipped, why));
            rejected.push(Rejected { manifest: found.path.clone(), reason: found.filtered_by.clone().unwrap_or_default() });
            continue;
        }
        let mut miss = String::new();
        let started = std::time::Instant::now();
        let loaded = manifest::driver::read_driver_file(&found.file, &found.path).and_then(|m| {
            if let Some(version) = &m.newer_file_format {
                // The Khronos loader's words.
                log!(Level::InfoDriver, "loader_parse_icd_manifest: {} has unknown icd manifest file version {version}. May cause errors.", found.path);
            }
            match cache.lookup(&found.path, &m, answered_by) {
                cache::Lookup::Hit(entry) => return Ok(Outcome::Remembered(Box::new(remembered(&found.path, m, entry, application)))),
                cache::Lookup::Miss(why) => miss = why,
            }
            driver::load(&found.path, m, &drivers).map(Outcome::Loaded)
        });
        match loaded {
            Ok(Outcome::Remembered(remembered)) => sources.push(Source::Remembered(remembered)),
            Ok(Outcome::Loaded(Loaded::Driver(d))) => {
                let milliseconds = crate::debug::log::Milliseconds(started.elapsed());
                log!(Level::Driver, "{}: loaded in {milliseconds} ms ({miss})", found.path);
                plan::record(|p| {
                    let why = format!("loaded (loader-driver interface version {}) in {milliseconds} ms: {miss}", d.interface_version);
                    p.driver(&found.path, Some(&d.library_path), Decision::Used, why)
                });
                let d = Arc::new(d);
                drivers.push(d.clone());
                sources.push(Source::Loaded(d));
            }
            Ok(Outcome::Loaded(Loaded::Duplicate)) => {
                plan::record(|p| p.driver(&found.path, None, Decision::Skipped, "its library is already loaded through another manifest"))
            }
            Ok(Outcome::Loaded(Loaded::OtherArchitecture(reason))) => {
                log!(Level::Info, "{}: skipped: {reason}", found.path);
                plan::record(|p| p.driver(&found.path, None, Decision::Skipped, &reason));
                rejected.push(Rejected { manifest: found.path, reason });
            }
            Err(reason) => {
                log!(Level::WarnDriver, "{}: driver skipped: {reason}", found.path);
                plan::record(|p| p.driver(&found.path, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: found.path, reason });
            }
        }
    }
    sources
}

/// A driver answered from its record, logged and recorded in the plan.
fn remembered(manifest_path: &str, manifest: manifest::driver::DriverManifest, entry: cache::SharedEntry, application: Option<u64>) -> Remembered {
    // The record's age is said only to whoever listens (formatting it was 3% of a first creation).
    log!(Level::Driver, "{manifest_path}: not loaded: answered from the driver cache (recorded {} ago)", cache::age(&entry));
    plan::record(|p| {
        let why = format!("not loaded: answered from the driver cache (recorded {} ago)", cache::age(&entry));
        p.driver(manifest_path, Some(&entry.library_resolved), Decision::Used, why)
    });
    // The application's record (shared with the decoded file, not copied).
    let profile = application.and_then(|a| entry.profiles.shared(a)).cloned();
    Remembered { manifest_path: manifest_path.to_string(), manifest, entry, profile }
}

/// What a loaded driver answered, for its cache record.
fn answers<'a>(driver: &Driver, extensions: &'a [VkExtensionProperties]) -> cache::Answers<'a> {
    let resolved = crate::platform::object_path_of(driver.get_instance_proc_addr as *const std::ffi::c_void);
    cache::Answers {
        library_resolved: resolved.unwrap_or_else(|| driver.library_path.clone()),
        interface_version: driver.interface_version,
        instance_version: driver.reported_instance_version(),
        extensions,
    }
}

/// Records what the loaded drivers of `sources` answered (`extensions`, in the same order), with
/// their physical-device counts when an instance was made, and writes the cache back.
fn record_answers(mut cache: cache::Session, sources: &[Source], extensions: &[PerDriver], devices: &dyn Fn(&Driver) -> Option<(u64, u32)>) {
    for (source, extensions) in sources.iter().zip(extensions) {
        if let Source::Loaded(driver) = source {
            // Drivers the application handed over have no manifest to key them on.
            if driver.manifest.library_path.is_empty() {
                continue;
            }
            let devices = devices(driver);
            if cache.wants(&driver.manifest_path, devices.map(|(application, _)| application)) {
                cache.record(&driver.manifest_path, &driver.manifest, answers(driver, &extensions.properties()), devices);
            }
        }
    }
    cache.save();
}

/// The instance extensions of every driver, for the queries made without an instance (and an
/// explanation without one): from the drivers' cache records where they are current, else from
/// the drivers, loaded (and then recorded).
pub(crate) fn instance_extensions_per_driver() -> Arc<Vec<Vec<VkExtensionProperties>>> {
    Arc::new(ask_instance_extensions_per_driver())
}

fn ask_instance_extensions_per_driver() -> Vec<Vec<VkExtensionProperties>> {
    let mut cache = cache::Session::open();
    let sources = load_drivers(&mut Vec::new(), None, &mut cache, None, &|_| Ok(()));
    // Kept until the next vkDestroyInstance, as the Khronos loader preloads them: the
    // application's next query and its vkCreateInstance load them no more.
    for source in &sources {
        if let Source::Loaded(driver) = source {
            if let Some(library) = driver.library() {
                crate::platform::library_cache::preload(library);
            }
        }
    }
    let per_driver: Vec<PerDriver> = sources.iter().map(Source::extensions).collect();
    record_answers(cache, &sources, &per_driver, &|_| None);
    per_driver.iter().map(|list| list.properties().into_owned()).collect()
}

/// Every instance extension available: the drivers' (highest spec version wins), then the
/// loader's own. Drivers' instance extensions the registry does not know are left out (the loader
/// could not dispatch their commands), as the Khronos loader does, unless
/// `VK_LOADER_DISABLE_INST_EXT_FILTER` is set. Extensions the loader only emulates for drivers
/// that lack them (`dispatch::emulation`) are not listed: at least one driver must have them, as with the
/// Khronos loader, so an application sees no extension that no driver implements.
pub(crate) fn all_instance_extensions<List: AsRef<[VkExtensionProperties]>>(per_driver: &[List]) -> Vec<VkExtensionProperties> {
    let longest = per_driver.iter().map(|list| list.as_ref().len()).max().unwrap_or(0);
    let mut all: Vec<VkExtensionProperties> = Vec::with_capacity(longest + LOADER_INSTANCE_EXTENSIONS.len());
    // Where each extension the registry knows is in `all`, by its id: found without comparing
    // names (some 70 extensions from four drivers compared each with the list was some 50 us of
    // a fresh process's instance creation).
    let mut position = vec![u16::MAX; vk_generated::EXTENSIONS.len()];
    let filter = !crate::reference::variables::VK_LOADER_DISABLE_INST_EXT_FILTER.is_set();
    let from_drivers = per_driver.iter().flat_map(AsRef::as_ref).map(|p| (*p, vk_generated::lookup::extension(name_of(p))));
    let from_loader = LOADER_INSTANCE_EXTENSIONS.iter().map(|&id| {
        let extension = &vk_generated::EXTENSIONS[id as usize];
        (extension_properties(extension.name(), extension.spec_version), Some(id))
    });
    for (props, id) in from_drivers.chain(from_loader) {
        let existing = match id {
            Some(id) if position[id as usize] != u16::MAX => Some(position[id as usize] as usize),
            Some(id) => {
                position[id as usize] = all.len() as u16;
                None
            }
            // Only when the filter is off: an extension the registry does not know.
            None if filter => continue,
            None => all.iter().position(|p| name_of(p) == name_of(&props)),
        };
        match existing {
            Some(at) => all[at].specVersion = all[at].specVersion.max(props.specVersion),
            None => all.push(props),
        }
    }
    all
}

/// Whether `name` is among [`all_instance_extensions`] of `per_driver`, found without making
/// that list (an instance creation asks only about the extensions it enables).
fn instance_extension_available(per_driver: &[PerDriver], name: &CStr) -> bool {
    let known = vk_generated::lookup::extension(name.to_bytes());
    if known.is_some_and(|id| LOADER_INSTANCE_EXTENSIONS.contains(&id)) {
        return true;
    }
    let listed = known.is_some() || crate::reference::variables::VK_LOADER_DISABLE_INST_EXT_FILTER.is_set();
    listed && per_driver.iter().any(|list| list.contains(name))
}

/// The loader's instance before any driver: its first word points to its terminators.
pub(crate) fn new_instance(creation_callbacks: Vec<messengers::Callback>) -> Box<Instance> {
    let table = InstanceDispatch::new(terminators::INSTANCE_TERMINATORS);
    crate::dispatch::unknown::set_terminators(&table.unknown);
    let mut instance = Box::new(Instance {
        dispatch: std::ptr::null(),
        magic: crate::handles::INSTANCE_MAGIC,
        chain_handle: VkInstance::NULL,
        table,
        drivers: Vec::new(),
        physical_devices: PhysicalDevices::default(),
        device_configurations: None,
        api_version: 0,
        enabled_extensions: ExtensionSet::new(),
        application: 0,
        cache_mode: cache::Mode::Off,
        profiles_recorded: Default::default(),
        drivers_destroyed: Default::default(),
        creation_callbacks,
        messengers: messengers::Messengers::default(),
        surfaces: Default::default(),
        layers: None,
    });
    instance.dispatch = &instance.table.table;
    instance.chain_handle = VkInstance(&mut *instance as *mut Instance as *mut _);
    instance
}

/// The terminator side of instance creation: loads the drivers, creates their instances and
/// gathers their physical devices into `instance`. `layer_extensions` are the instance extensions
/// the enabled layers provide (accepted here, not passed to drivers that lack them).
///
/// What the application passed is not written.
pub(crate) fn create_drivers(
    instance: &mut Instance,
    info: InstanceCreateInfo<'_>,
    allocator: Allocator<'_>,
    layer_extensions: &[VkExtensionProperties],
) -> Result<(), VkResult> {
    create_drivers_with(instance, info, allocator, layer_extensions, cache::Session::open())
}

/// [`create_drivers`] with the driver cache `cache`: drivers whose record says they have no
/// physical device for this application are not loaded. Should no driver instance result, the
/// creation is made again without the cache, so that the result is the eager path's.
fn create_drivers_with(
    instance: &mut Instance,
    info: InstanceCreateInfo<'_>,
    allocator: Allocator<'_>,
    layer_extensions: &[VkExtensionProperties],
    mut cache: cache::Session,
) -> Result<(), VkResult> {
    let requested = info.extension_names();
    let direct = direct::requested(info, requested.contains(&direct::EXTENSION));
    let mut rejected = Vec::new();
    let app = info.application();
    let application = application_digest(app.as_ref());
    plan::record(|p| p.application = Some(format!("{application:016x}")));
    cache.set_application(application);
    let text = |name: Option<&CStr>| name.map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let new_application = std::rc::Rc::new(cache::application_rules::NewApplication::new(
        &text(app.as_ref().and_then(|a| a.name)),
        &text(app.as_ref().and_then(|a| a.engine)),
    ));
    cache.set_new_application(new_application.clone());
    // 0, or below 1.0 (invalid: see check_api_version), is 1.0.
    let app_version = app.as_ref().map(|a| a.api_version).filter(|&v| v >= vk_generated::make_api_version(0, 1, 0, 0));
    let api_version = app_version.unwrap_or(vk_generated::make_api_version(0, 1, 0, 0));
    // Drivers whose record holds their physical devices are loaded only when first needed, if
    // what their instances must be created with can be kept.
    let cache_mode = cache.mode();
    let lazy_allowed = direct.is_none() && crate::lazy::allowed(cache_mode);
    // Copied once, and only when a driver is to be left unloaded.
    let kept: std::cell::OnceCell<Option<Arc<KeptCreateInfo>>> = std::cell::OnceCell::new();
    let keep = || {
        kept.get_or_init(|| {
            let copy = KeptCreateInfo::new(info, api_version);
            copy.map_err(|why| log!(Level::Driver, "drivers with physical devices are loaded now: {why}")).ok()
        })
        .is_some()
    };
    // What a record must answer for its driver to stay unloaded, or what it lacks.
    let answered_by = |entry: &cache::record::Entry| -> Result<(), String> {
        match entry.device_count(application) {
            Some(0) => return Ok(()),
            // An application never recorded gets what those no profile names get.
            None => {
                return new_application.has_no_device(entry).map_err(|why| {
                    format!("it holds no physical devices for this application (none enumerated them through this loader yet), nor none for every application ({why})")
                })
            }
            Some(_) if !lazy_allowed => return Err("the driver has physical devices for this application and lazy drivers are off".into()),
            Some(_) => {}
        }
        let profile = entry.profile(application).ok_or("it lacks the answers of this application's physical devices")?;
        crate::lazy::usable(profile, entry)?;
        match keep() {
            true => Ok(()),
            false => Err("what vkCreateInstance was given cannot be kept for a later load".into()),
        }
    };
    let sources = load_drivers(&mut rejected, direct, &mut cache, Some(application), &answered_by);
    // Each driver is asked once; its list decides what it gets and what the instance offers.
    let per_driver: Vec<PerDriver> = sources.iter().map(Source::extensions).collect();
    for ext in &requested {
        if !instance_extension_available(&per_driver, ext) && !layer_extensions.iter().any(|p| name_of(p) == ext.to_bytes()) {
            log::write(Level::Error, &format!("vkCreateInstance: extension {ext:?} not present in any driver, layer or the loader"));
            return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
        }
    }
    let portability_extension = requested.contains(&c"VK_KHR_portability_enumeration");
    let portability_flag = VkInstanceCreateFlags(info.raw().flags.0).contains(VkInstanceCreateFlags::ENUMERATE_PORTABILITY_BIT_KHR);
    let mut skipped_portability_driver = false;
    let mut enabled_extensions = ExtensionSet::new();
    for ext in &requested {
        enabled_extensions.insert_name(ext.to_bytes());
    }

    let mut driver_instances = Vec::new();
    let mut not_loaded = 0;
    // The drivers not loaded for an application they hold no record for (theirs is made from the
    // record of the applications no profile names).
    let mut not_loaded_new = Vec::new();
    for (source, supported) in sources.iter().zip(&per_driver) {
        let driver = match source {
            Source::Loaded(driver) => driver.clone(),
            Source::Remembered(r) if r.entry.device_count(application).is_some_and(|n| n > 0) => {
                Arc::new(Driver::remembered(&r.manifest_path, &r.manifest, r.entry.interface_version, r.entry.instance_version))
            }
            Source::Remembered(r) => {
                let why = match r.entry.device_count(application) {
                    Some(_) => "not loaded: its driver cache record says it has no physical device",
                    None => {
                        not_loaded_new.push(r);
                        "not loaded: its driver cache record says it has no physical device for any application recorded, and no driconf rule may name this one"
                    }
                };
                log!(Level::Driver, "{}: {why}", r.manifest_path);
                plan::record(|p| p.driver(&r.manifest_path, None, Decision::Skipped, why));
                not_loaded += 1;
                continue;
            }
        };
        if driver.manifest.is_portability_driver && !(portability_extension && portability_flag) {
            log!(Level::Driver, "{}: portability driver skipped (portability enumeration not enabled)", driver.manifest_path);
            plan::record(|p| {
                let why = "a portability driver (is_portability_driver), and the application did not enable portability enumeration \
                           (VK_KHR_portability_enumeration and VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR)";
                p.driver(&driver.manifest_path, None, Decision::Skipped, why)
            });
            skipped_portability_driver = true;
            continue;
        }
        if let (Source::Remembered(r), Some(Some(kept))) = (source, kept.get()) {
            driver_instances.push(lazy_driver_instance(driver, r, &requested, api_version, kept.clone(), allocator));
            continue;
        }
        match create_driver_instance(&driver, &supported.properties(), info, &requested, api_version, allocator) {
            Ok((created, extensions)) => {
                let (handle, table) = created.into_parts();
                driver_instances.push(DriverInstance { driver, handle, table, extensions, lazy: None })
            }
            Err(reason) => {
                log!(Level::WarnDriver, "{}: driver skipped: {reason}", driver.manifest_path);
                plan::record(|p| p.driver(&driver.manifest_path, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: driver.manifest_path.clone(), reason });
            }
        }
    }
    if driver_instances.is_empty() && not_loaded > 0 {
        // The eager path would have created the unloaded drivers' instances (and released them):
        // whether the creation succeeds is theirs to say.
        log!(Level::Driver, "no driver instance without the driver cache's unloaded drivers: creating them all");
        record_answers(cache, &sources, &per_driver, &|_| None);
        return create_drivers_with(instance, info, allocator, layer_extensions, cache::Session::off());
    }
    if driver_instances.is_empty() {
        record_answers(cache, &sources, &per_driver, &|_| None);
        // Errors: the one question a user has here is "why?".
        if skipped_portability_driver {
            log::write(Level::ErrorDriver, portability_hint(portability_extension, portability_flag));
        }
        log::write(Level::ErrorDriver, "vkCreateInstance: Found no drivers!");
        for r in &rejected {
            log::write(Level::ErrorDriver, &format!("  {}: {}", r.manifest, r.reason));
        }
        if rejected.is_empty() {
            log::write(Level::ErrorDriver, "  no driver manifest found; searched VK_DRIVER_FILES or the icd.d directories");
        }
        return Err(VkResult::ERROR_INCOMPATIBLE_DRIVER);
    }

    instance.drivers = driver_instances;
    instance.application = application;
    instance.cache_mode = cache_mode;
    instance.api_version = api_version;
    instance.enabled_extensions = enabled_extensions;
    instance.device_configurations = crate::manifest::settings::current().and_then(|s| s.device_configurations.clone());
    let counts = release_drivers_without_devices(instance, allocator);
    // After the release: a lazy driver's index is its place among the drivers kept.
    instance.when_lazy_drivers_live(|instance, index| {
        instance.point_lazy_devices(index);
        crate::dispatch::messengers::give_to_loaded_driver(instance, index);
    });
    let devices = |driver: &Driver| {
        counts.iter().find(|(d, _)| std::ptr::eq(Arc::as_ptr(d), driver)).map(|&(_, n)| (application, n))
    };
    for r in not_loaded_new {
        cache.record_no_device(&r.manifest_path, &r.manifest, application);
    }
    record_answers(cache, &sources, &per_driver, &devices);
    Ok(())
}

/// The application's digest for its physical-device records (see `cache::key::application`).
fn application_digest(app: Option<&Application>) -> u64 {
    let text = |name: Option<&CStr>| name.map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let app = app.map(|a| (text(a.name), a.version, text(a.engine), a.engine_version, a.api_version));
    let app = app.as_ref().map(|(name, version, engine, engine_version, api)| (name.as_str(), *version, engine.as_str(), *engine_version, *api));
    let names = format!("{}\0{}", crate::platform::invocation_name(), crate::platform::process_name());
    cache::key::application(&cache::executable(), &names, app)
}

/// What an application that found only portability drivers must do, in the Khronos loader's words.
fn portability_hint(extension_enabled: bool, flag_set: bool) -> &'static str {
    match (extension_enabled, flag_set) {
        (true, false) => {
            "vkCreateInstance: Found drivers that contain devices which support the portability subset, but the instance does \
             not enumerate portability drivers! Applications that wish to enumerate portability drivers must set the \
             VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR bit in the VkInstanceCreateInfo flags."
        }
        (false, true) => {
            "VkInstanceCreateInfo: If flags has the VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR bit set, the list of enabled \
             extensions in ppEnabledExtensionNames must contain VK_KHR_portability_enumeration [VUID-VkInstanceCreateInfo-flags-06559 \
             ]Applications that wish to enumerate portability drivers must enable the VK_KHR_portability_enumeration instance \
             extension."
        }
        _ => {
            "vkCreateInstance: Found drivers that contain devices which support the portability subset, but the instance does \
             not enumerate portability drivers! Applications that wish to enumerate portability drivers must set the \
             VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR bit in the VkInstanceCreateInfo flags and enable the \
             VK_KHR_portability_enumeration instance extension."
        }
    }
}

/// Destroys the driver instances that report no physical device (unloading their libraries
/// unless something else holds them), with the callbacks they were created with. Their devices
/// are wrapped at the first enumeration. Returns each driver's count.
fn release_drivers_without_devices(instance: &mut Instance, allocator: Allocator<'_>) -> Vec<(Arc<Driver>, u32)> {
    let counts = physical_devices::counts_per_driver(&instance.drivers);
    let per_driver = instance.drivers.iter().zip(&counts).map(|(d, &n)| (d.driver.clone(), n as u32)).collect();
    let drivers = std::mem::take(&mut instance.drivers);
    for (d, &count) in drivers.into_iter().zip(&counts) {
        if count > 0 {
            instance.drivers.push(d);
            continue;
        }
        log!(Level::InfoDriver, "{}: no physical device; driver released", d.driver.manifest_path);
        plan::record(|p| p.driver(&d.driver.manifest_path, None, Decision::Skipped, "it reports no physical device; released"));
        if let Some(library) = d.driver.library() {
            crate::platform::library_cache::release_preloaded(library);
        }
        d.destroy(allocator);
    }
    per_driver
}

/// A driver left unloaded, its physical devices answered from its record until first needed.
fn lazy_driver_instance(
    driver: Arc<Driver>,
    remembered: &Remembered,
    requested: &[&CStr],
    api_version: u32,
    kept: Arc<KeptCreateInfo>,
    allocator: Allocator<'_>,
) -> DriverInstance {
    let profile = remembered.profile.clone().unwrap_or_default();
    let devices = profile.devices.len();
    let why = || format!("not loaded: its {devices} physical devices answered from the driver cache until first needed");
    log!(Level::Driver, "{}: {}", remembered.manifest_path, why());
    plan::record(|p| p.driver(&remembered.manifest_path, Some(&remembered.entry.library_resolved), Decision::Used, why()));
    let extensions = extension_set(&given_extensions(&driver, |name| remembered.entry.extensions.contains(name.to_bytes()), requested, api_version));
    let lazy = crate::lazy::Lazy::new(&remembered.manifest_path, remembered.manifest.clone(), remembered.entry.extensions.clone(), profile, kept, allocator);
    DriverInstance { driver, handle: lazy.handle(), table: crate::lazy::Lazy::front_table(), extensions, lazy: Some(lazy) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_extensions_are_listed_once_each_with_the_highest_spec_version() {
        let driver = |list: &[(&CStr, u32)]| list.iter().map(|(name, spec)| extension_properties(name, *spec)).collect::<Vec<_>>();
        let per_driver = [
            driver(&[(c"VK_KHR_surface", 25), (c"VK_FAKE_unknown_extension", 1), (c"VK_KHR_xcb_surface", 6), (c"VK_EXT_debug_utils", 1)]),
            driver(&[(c"VK_KHR_xcb_surface", 5), (c"VK_KHR_surface", 26)]),
        ];
        let all = all_instance_extensions(&per_driver);
        let listed: Vec<(&[u8], u32)> = all.iter().map(|p| (name_of(p), p.specVersion)).collect();
        // In the order first seen, the drivers' before the loader's own; an extension the
        // registry does not know left out (the filter is on unless the environment says).
        let debug_utils = vk_generated::EXTENSIONS[extension_id::VK_EXT_debug_utils as usize].spec_version;
        assert!(debug_utils > 1);
        assert_eq!(listed[..3], [(&b"VK_KHR_surface"[..], 26), (&b"VK_KHR_xcb_surface"[..], 6), (&b"VK_EXT_debug_utils"[..], debug_utils)]);
        assert_eq!(listed.len(), 3 + LOADER_INSTANCE_EXTENSIONS.len() - 1, "VK_EXT_debug_utils is also the loader's: {listed:?}");
        for &id in LOADER_INSTANCE_EXTENSIONS {
            assert_eq!(listed.iter().filter(|(name, _)| *name == vk_generated::EXTENSIONS[id as usize].name().to_bytes()).count(), 1);
        }
        // What an instance creation checks its enabled extensions against, read from the lists
        // (a loaded driver's and a record's alike), is that list.
        let recorded = ExtensionList::from_properties(&per_driver[1]);
        let lists = [PerDriver::Listed(per_driver[0].clone()), PerDriver::Recorded(&recorded)];
        let loaders = LOADER_INSTANCE_EXTENSIONS.iter().map(|&id| vk_generated::EXTENSIONS[id as usize].name());
        for name in [c"VK_KHR_surface", c"VK_KHR_xcb_surface", c"VK_FAKE_unknown_extension", c"VK_KHR_wayland_surface"].into_iter().chain(loaders) {
            assert_eq!(instance_extension_available(&lists, name), listed.iter().any(|(n, _)| *n == name.to_bytes()), "{name:?}");
        }
    }
}
