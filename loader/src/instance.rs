//! `vkCreateInstance` / `vkDestroyInstance` and the global commands: drivers are discovered,
//! loaded and asked to create their instances; the loader's instance wraps them all.

use std::ffi::{c_char, CStr};
use std::sync::Arc;

use vk_generated::lookup::ExtensionSet;
use vk_generated::types::*;
use vk_generated::{extension_id, DispatchTable, InstanceDispatchTable};

use crate::debug;
use crate::direct_loading::{self, DirectDrivers};
use crate::discovery;
use crate::loader_abi::InstanceDispatch;
use crate::driver::{self, Driver, Loaded};
use crate::ffi;
use crate::host_alloc::AllocatorScope;
use crate::log::{self, Level};
use crate::manifest;
use crate::physical_device;
use crate::plan::{self, Decision};
use crate::terminators;

/// Instance extensions the loader itself implements, whatever the drivers support (registry
/// extension ids: their names and spec versions are the registry's, read without a lookup).
pub const LOADER_INSTANCE_EXTENSIONS: &[u16] = &[
    extension_id::VK_EXT_debug_report,
    extension_id::VK_EXT_debug_utils,
    extension_id::VK_KHR_portability_enumeration,
    extension_id::VK_LUNARG_direct_driver_loading,
];

/// One driver's instance under the loader's.
pub struct DriverInstance {
    pub driver: Arc<Driver>,
    pub handle: VkInstance,
    /// The driver's own instance-level functions, and its unknown physical-device commands.
    pub table: Box<InstanceDispatch>,
    /// The instance extensions the driver was given.
    pub extensions: ExtensionSet,
}

impl DriverInstance {
    pub fn has_extension(&self, name: &[u8]) -> bool {
        vk_generated::lookup::extension(name).is_some_and(|id| self.extensions.contains(id))
    }
}

/// The loader's `VkInstance`. Its first word is the dispatch table, as for every dispatchable object.
#[repr(C)]
pub struct Instance {
    dispatch: *const InstanceDispatchTable,
    /// `handles::INSTANCE_MAGIC` while the instance lives.
    magic: u64,
    /// The handle the next level of the chain knows this instance by: the instance itself, or
    /// what the top layer returned. Instance-level calls pass it down.
    pub chain_handle: VkInstance,
    /// The end of the instance chain: generated default terminators, and the unknown-command
    /// terminators in the unknown slots.
    pub(crate) table: Box<InstanceDispatch>,
    pub drivers: Vec<DriverInstance>,
    /// Every physical device the drivers reported, wrapped (handles stay put).
    pub physical_devices: physical_device::PhysicalDevices,
    /// A loader settings file's `device_configurations` when the instance was created: they
    /// choose and order its physical devices at every enumeration.
    pub device_configurations: Option<Vec<crate::settings::DeviceConfiguration>>,
    pub api_version: u32,
    pub enabled_extensions: ExtensionSet,
    /// Debug callbacks chained to `VkInstanceCreateInfo`: they hear creation and destruction.
    pub creation_callbacks: Vec<debug::Callback>,
    /// Debug messengers and report callbacks the application created on this instance.
    pub messengers: debug::Messengers,
    /// The layer chain, when layers are enabled (then `dispatch` points to its table).
    pub layers: Option<Box<crate::layer_chain::InstanceLayers>>,
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
        (handle.0 as *const Instance).as_ref()
    }

    /// The table the instance's handles dispatch through (set once, before they are handed out).
    pub fn set_dispatch(&mut self, table: *const InstanceDispatchTable) {
        self.dispatch = table;
    }

    /// The end of the instance chain.
    pub fn terminators(&self) -> &InstanceDispatchTable {
        &self.table.table
    }

    /// Destroys the drivers' instances (the terminator of `vkDestroyInstance`).
    pub unsafe fn destroy_drivers(&mut self, allocator: *const VkAllocationCallbacks) {
        for d in self.drivers.drain(..) {
            log!(Level::Driver, "vkDestroyInstance: destroying the instance of {}", d.driver.manifest_path);
            if let Some(destroy) = d.table.vkDestroyInstance {
                destroy(d.handle, allocator);
            }
        }
    }
}

/// A driver that failed to load or create its instance, and why (reported when no driver is left).
struct Rejected {
    manifest: String,
    reason: String,
}

/// Loads the drivers the application handed over, then every driver the environment allows
/// (unless the application's list is exclusive), logging why each skipped one was.
fn load_drivers(rejected: &mut Vec<Rejected>, direct: Option<DirectDrivers>) -> Vec<Arc<Driver>> {
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
                log::log(Level::Error, &reason);
                plan::record(|p| p.driver(&name, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: name, reason });
            }
        }
    }
    if exclusive {
        plan::record(|p| {
            for found in discovery::driver_manifests() {
                let why = "VkDirectDriverLoadingListLUNARG::mode is VK_DIRECT_DRIVER_LOADING_MODE_EXCLUSIVE_LUNARG";
                p.driver(&found.path, None, Decision::Skipped, why);
            }
        });
        return drivers;
    }
    for found in discovery::driver_manifests() {
        if let Some(why) = &found.skipped {
            log::log(Level::Warn, why);
            plan::record(|p| p.driver(&found.path, None, Decision::Skipped, why));
            continue;
        }
        let loaded = manifest::read_driver(&found.path).and_then(|m| {
            if let Some(version) = &m.newer_file_format {
                // The Khronos loader's words.
                log!(Level::Info, "loader_parse_icd_manifest: {} has unknown icd manifest file version {version}. May cause errors.", found.path);
            }
            driver::load(&found.path, m, &drivers)
        });
        match loaded {
            Ok(Loaded::Driver(d)) => {
                plan::record(|p| {
                    let why = format!("loaded (loader-driver interface version {})", d.interface_version);
                    p.driver(&found.path, Some(&d.library_path), Decision::Used, why)
                });
                drivers.push(Arc::new(d))
            }
            Ok(Loaded::Duplicate) => {
                plan::record(|p| p.driver(&found.path, None, Decision::Skipped, "its library is already loaded through another manifest"))
            }
            Ok(Loaded::OtherArchitecture(reason)) => {
                log!(Level::Info, "{}: skipped: {reason}", found.path);
                plan::record(|p| p.driver(&found.path, None, Decision::Skipped, &reason));
                rejected.push(Rejected { manifest: found.path, reason });
            }
            Err(reason) => {
                log!(Level::Warn, "{}: driver skipped: {reason}", found.path);
                plan::record(|p| p.driver(&found.path, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: found.path, reason });
            }
        }
    }
    drivers
}

/// Loads the drivers as instance creation would, for an explanation without an instance.
pub(crate) fn load_drivers_for_explain() {
    load_drivers(&mut Vec::new(), None);
}

/// The instance extensions one driver supports.
fn driver_extensions(driver: &Driver) -> Vec<VkExtensionProperties> {
    let Some(f) = driver.global(c"vkEnumerateInstanceExtensionProperties") else { return Vec::new() };
    // SAFETY: the signature of vkEnumerateInstanceExtensionProperties.
    let f: PFN_vkEnumerateInstanceExtensionProperties = unsafe { std::mem::transmute(f) };
    let Some(f) = f else { return Vec::new() };
    ffi::query(|count, out| unsafe { f(std::ptr::null(), count, out) }).unwrap_or_default()
}

pub(crate) fn name_of(props: &VkExtensionProperties) -> &CStr {
    // SAFETY: extensionName is a NUL-terminated fixed array (drivers fill it so; the last byte is
    // forced below for the loader's own entries).
    unsafe { CStr::from_ptr(props.extensionName.as_ptr()) }
}

pub(crate) fn extension_properties(name: &CStr, spec_version: u32) -> VkExtensionProperties {
    let mut props = VkExtensionProperties { specVersion: spec_version, ..Default::default() };
    for (dst, &src) in props.extensionName.iter_mut().zip(name.to_bytes()) {
        *dst = src as c_char;
    }
    props
}

/// Every instance extension available: the drivers' (highest spec version wins), then the
/// loader's own. Drivers' instance extensions the registry does not know are left out (the loader
/// could not dispatch their commands), as the Khronos loader does, unless
/// `VK_LOADER_DISABLE_INST_EXT_FILTER` is set. Extensions the loader only emulates for drivers
/// that lack them (`emulation`) are not listed: at least one driver must have them, as with the
/// Khronos loader, so an application sees no extension that no driver implements.
fn all_instance_extensions(per_driver: &[Vec<VkExtensionProperties>]) -> Vec<VkExtensionProperties> {
    let mut all: Vec<VkExtensionProperties> = Vec::new();
    let from_loader = LOADER_INSTANCE_EXTENSIONS.iter().map(|&id| {
        let extension = &vk_generated::EXTENSIONS[id as usize];
        extension_properties(extension.name(), extension.spec_version)
    });
    let filter = crate::platform::plain_env("VK_LOADER_DISABLE_INST_EXT_FILTER").is_none();
    let known = |p: &VkExtensionProperties| !filter || vk_generated::lookup::extension(name_of(p).to_bytes()).is_some();
    for props in per_driver.iter().flatten().copied().filter(known).chain(from_loader) {
        match all.iter_mut().find(|p| name_of(p) == name_of(&props)) {
            Some(existing) => existing.specVersion = existing.specVersion.max(props.specVersion),
            None => all.push(props),
        }
    }
    all
}

pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::layer_catalog::OneReading::enter();
        crate::layer_pre_instance::extension_properties(pLayerName, pPropertyCount, pProperties, terminator_EnumerateInstanceExtensionProperties)
            .unwrap_or_else(|| terminator_EnumerateInstanceExtensionProperties(std::ptr::null(), pLayerName, pPropertyCount, pProperties))
    })
}

/// The loader's answer, at the end of implicit layers' pre-instance chains.
unsafe extern "system" fn terminator_EnumerateInstanceExtensionProperties(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceExtensionPropertiesChain,
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        // An empty layer name means no layer, as NULL does (the Khronos loader reads it so).
        if !pLayerName.is_null() && *pLayerName != 0 {
            return match crate::layer_extensions::instance_extensions_of(CStr::from_ptr(pLayerName)) {
                Some(list) => ffi::fill(&list, pPropertyCount, pProperties),
                None => VkResult::ERROR_LAYER_NOT_PRESENT,
            };
        }
        let per_driver: Vec<_> = load_drivers(&mut Vec::new(), None).iter().map(|d| driver_extensions(d)).collect();
        let mut all = all_instance_extensions(&per_driver);
        // The enabled implicit layers' extensions (not filtered: the layers dispatch them).
        for e in crate::layer_extensions::implicit_instance_extensions() {
            if !all.iter().any(|p| name_of(p) == name_of(&e)) {
                all.push(e);
            }
        }
        ffi::fill(&all, pPropertyCount, pProperties)
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceLayerProperties(
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::layer_catalog::OneReading::enter();
        crate::layer_pre_instance::layer_properties(pPropertyCount, pProperties, terminator_EnumerateInstanceLayerProperties)
            .unwrap_or_else(|| terminator_EnumerateInstanceLayerProperties(std::ptr::null(), pPropertyCount, pProperties))
    })
}

unsafe extern "system" fn terminator_EnumerateInstanceLayerProperties(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceLayerPropertiesChain,
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let layers: Vec<VkLayerProperties> = crate::layer_catalog::load(true).iter().map(crate::layer_catalog::properties).collect();
        ffi::fill(&layers, pPropertyCount, pProperties)
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceVersion(pApiVersion: *mut u32) -> VkResult {
    ffi::guard("vkEnumerateInstanceVersion", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::layer_catalog::OneReading::enter();
        crate::layer_pre_instance::version(pApiVersion, terminator_EnumerateInstanceVersion)
            .unwrap_or_else(|| terminator_EnumerateInstanceVersion(std::ptr::null(), pApiVersion))
    })
}

unsafe extern "system" fn terminator_EnumerateInstanceVersion(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceVersionChain,
    pApiVersion: *mut u32,
) -> VkResult {
    if pApiVersion.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    *pApiVersion = VK_HEADER_VERSION_COMPLETE;
    VkResult::SUCCESS
}

/// The names in an array of C strings.
unsafe fn names<'a>(list: *const *const c_char, count: u32) -> Vec<&'a CStr> {
    if list.is_null() {
        return Vec::new();
    }
    (0..count as usize).filter_map(|i| (*list.add(i)).as_ref().map(|p| CStr::from_ptr(p))).collect()
}

pub unsafe extern "system" fn vkCreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    ffi::guard("vkCreateInstance", VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pCreateInfo.is_null() || pInstance.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let memory = AllocatorScope::enter(pAllocator, VkSystemAllocationScope::INSTANCE);
        let _settings = crate::settings::OneLook::enter();
        let explain_file = crate::explain::requested_file();
        let recording = explain_file.is_some().then(plan::Recording::start);
        let creation_callbacks = debug::callbacks_in_chain((*pCreateInfo).pNext);
        let _scope = debug::Scope::enter(creation_callbacks.clone());
        let (result, created) = match create_instance(&*pCreateInfo, pAllocator, creation_callbacks) {
            Ok(instance) if memory.failed() => {
                destroy_instance(instance, pAllocator);
                (VkResult::ERROR_OUT_OF_HOST_MEMORY, VkInstance::NULL)
            }
            Ok(instance) => (VkResult::SUCCESS, VkInstance(Box::into_raw(instance) as *mut _)),
            Err(_) if memory.failed() => (VkResult::ERROR_OUT_OF_HOST_MEMORY, VkInstance::NULL),
            Err(result) => (result, VkInstance::NULL),
        };
        if let (Some(file), Some(recording)) = (explain_file, recording) {
            crate::explain::write_for_instance(&file, recording, result, created);
        }
        if result == VkResult::SUCCESS {
            *pInstance = created;
        }
        result
    })
}

unsafe fn create_instance(
    info: &VkInstanceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    creation_callbacks: Vec<debug::Callback>,
) -> Result<Box<Instance>, VkResult> {
    if log::wanted(Level::Info) {
        log::out_of_line(|| log_create_info(info));
    }
    check_api_version(info);
    if info.enabledLayerCount > 0 && info.ppEnabledLayerNames.is_null() {
        log::write(Level::Error, "vkCreateInstance: enabledLayerCount is not 0 but ppEnabledLayerNames is NULL");
        return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
    }
    if info.enabledExtensionCount > 0 && info.ppEnabledExtensionNames.is_null() {
        log::write(Level::Error, "vkCreateInstance: enabledExtensionCount is not 0 but ppEnabledExtensionNames is NULL");
        return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
    }
    let mut instance = new_instance(creation_callbacks);
    debug::Scope::set_instance(&instance);
    warn_about_api_variant(info);
    let app_layers = names(info.ppEnabledLayerNames, info.enabledLayerCount);
    let layers = crate::layer_chain::select(&app_layers)?;
    if !layers.is_empty() {
        crate::layer_chain::create_instance(&mut instance, info, allocator, layers)?;
        return Ok(instance);
    }
    create_drivers(&mut instance, info, allocator, &[])?;
    Ok(instance)
}

/// The application's create info, in the Khronos loader's words (scripts and its test suite
/// look for them).
unsafe fn log_create_info(info: &VkInstanceCreateInfo) {
    let app = info.pApplicationInfo.as_ref();
    let text = |p: *const c_char| if p.is_null() { String::new() } else { CStr::from_ptr(p).to_string_lossy().into_owned() };
    let api = app.map_or(0, |a| a.apiVersion);
    log::log(
        Level::Info,
        &format!(
            "vkCreateInstance: applicationName: \"{}\", applicationVersion: {}, engineName: \"{}\", engineVersion: {}, apiVersion: {}.{}.{}",
            text(app.map_or(std::ptr::null(), |a| a.pApplicationName)),
            app.map_or(0, |a| a.applicationVersion),
            text(app.map_or(std::ptr::null(), |a| a.pEngineName)),
            app.map_or(0, |a| a.engineVersion),
            (api >> 22) & 0x7f,
            (api >> 12) & 0x3ff,
            api & 0xfff,
        ),
    );
    let lists = [("layer", info.enabledLayerCount, info.ppEnabledLayerNames), ("extension", info.enabledExtensionCount, info.ppEnabledExtensionNames)];
    for (what, count, list) in lists {
        log::log(Level::Info, &format!("vkCreateInstance: Requested {count} instance {what}(s):"));
        if list.is_null() {
            continue;
        }
        for i in 0..count as usize {
            let name = *list.add(i);
            log::log(Level::Info, &format!("   {}", if name.is_null() { "<NULL>".into() } else { text(name) }));
        }
    }
}

/// An `apiVersion` below 1.0 other than 0 is invalid (the Khronos loader's message); creation
/// goes on as for 1.0.
unsafe fn check_api_version(info: &VkInstanceCreateInfo) {
    let Some(app) = info.pApplicationInfo.as_ref() else { return };
    if app.apiVersion != 0 && app.apiVersion < vk_generated::make_api_version(0, 1, 0, 0) {
        log::log(
            Level::Error,
            &format!(
                "VkInstanceCreateInfo::pApplicationInfo::apiVersion has value of {} which is not permitted. If apiVersion is not 0, \
                 then it must be greater than or equal to the value of VK_API_VERSION_1_0 [VUID-VkApplicationInfo-apiVersion]",
                app.apiVersion
            ),
        );
    }
}

/// Vulkan's API variant is 0; another one (Vulkan SC's is 1) is most likely a malformed
/// `apiVersion`. Said, in the Khronos loader's words, but not refused.
unsafe fn warn_about_api_variant(info: &VkInstanceCreateInfo) {
    let Some(app) = info.pApplicationInfo.as_ref() else { return };
    let variant = app.apiVersion >> 29;
    if variant != 0 {
        log!(
            Level::Warn,
            "vkCreateInstance: The API Variant specified in pCreateInfo->pApplicationInfo.apiVersion is {variant} instead of the expected value of 0."
        );
    }
}

/// The loader's instance before any driver: its first word points to its terminators.
pub(crate) fn new_instance(creation_callbacks: Vec<debug::Callback>) -> Box<Instance> {
    let table = InstanceDispatch::new(terminators::INSTANCE_TERMINATORS);
    crate::unknown::set_terminators(&table.unknown);
    let mut instance = Box::new(Instance {
        dispatch: std::ptr::null(),
        magic: crate::handles::INSTANCE_MAGIC,
        chain_handle: VkInstance::NULL,
        table,
        drivers: Vec::new(),
        physical_devices: physical_device::PhysicalDevices::default(),
        device_configurations: None,
        api_version: 0,
        enabled_extensions: ExtensionSet::new(),
        creation_callbacks,
        messengers: debug::Messengers::default(),
        layers: None,
    });
    instance.dispatch = &instance.table.table;
    instance.chain_handle = VkInstance(&mut *instance as *mut Instance as *mut _);
    instance
}

/// The terminator side of instance creation: loads the drivers, creates their instances and
/// gathers their physical devices into `instance`. `layer_extensions` are the instance extensions
/// the enabled layers provide (accepted here, not passed to drivers that lack them).
pub(crate) unsafe fn create_drivers(
    instance: &mut Instance,
    info: &VkInstanceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    layer_extensions: &[VkExtensionProperties],
) -> Result<(), VkResult> {
    let requested = names(info.ppEnabledExtensionNames, info.enabledExtensionCount);
    let direct = direct_loading::requested(info, requested.contains(&direct_loading::EXTENSION));
    let mut rejected = Vec::new();
    let drivers = load_drivers(&mut rejected, direct);
    // Each driver is asked once; its list decides what it gets and what the instance offers.
    let per_driver: Vec<Vec<VkExtensionProperties>> = drivers.iter().map(|d| driver_extensions(d)).collect();
    let available = all_instance_extensions(&per_driver);
    for ext in &requested {
        if !available.iter().chain(layer_extensions).any(|p| name_of(p) == *ext) {
            log::write(Level::Error, &format!("vkCreateInstance: extension {ext:?} not present in any driver, layer or the loader"));
            return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
        }
    }
    // 0, or below 1.0 (invalid: see check_api_version), is 1.0.
    let app_version = info.pApplicationInfo.as_ref().map(|a| a.apiVersion).filter(|&v| v >= vk_generated::make_api_version(0, 1, 0, 0));
    let api_version = app_version.unwrap_or(vk_generated::make_api_version(0, 1, 0, 0));
    let portability_extension = requested.contains(&c"VK_KHR_portability_enumeration");
    let portability_flag = VkInstanceCreateFlags(info.flags.0).contains(VkInstanceCreateFlags::ENUMERATE_PORTABILITY_BIT_KHR);
    let mut skipped_portability_driver = false;
    let mut enabled_extensions = ExtensionSet::new();
    for ext in &requested {
        enabled_extensions.insert_name(ext.to_bytes());
    }

    let mut driver_instances = Vec::new();
    for (driver, supported) in drivers.into_iter().zip(&per_driver) {
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
        let created = create_driver_instance(&driver, supported, info, &requested, api_version, allocator)
            .and_then(|(handle, extensions)| driver_table(&driver, handle, allocator).map(|table| (handle, table, extensions)));
        match created {
            Ok((handle, table, extensions)) => driver_instances.push(DriverInstance { driver, handle, table, extensions }),
            Err(reason) => {
                log!(Level::Warn, "{}: driver skipped: {reason}", driver.manifest_path);
                plan::record(|p| p.driver(&driver.manifest_path, None, Decision::Rejected, &reason));
                rejected.push(Rejected { manifest: driver.manifest_path.clone(), reason });
            }
        }
    }
    if driver_instances.is_empty() {
        // Said even without VK_LOADER_DEBUG: the one question a user has here is "why?".
        if skipped_portability_driver {
            log::write(Level::Error, portability_hint(portability_extension, portability_flag));
        }
        log::write(Level::Error, "vkCreateInstance: Found no drivers!");
        for r in &rejected {
            log::write(Level::Error, &format!("  {}: {}", r.manifest, r.reason));
        }
        if rejected.is_empty() {
            log::write(Level::Error, "  no driver manifest found; searched VK_DRIVER_FILES or the icd.d directories");
        }
        return Err(VkResult::ERROR_INCOMPATIBLE_DRIVER);
    }

    instance.drivers = driver_instances;
    instance.api_version = api_version;
    instance.enabled_extensions = enabled_extensions;
    instance.device_configurations = crate::settings::current().and_then(|s| s.device_configurations.clone());
    release_drivers_without_devices(instance, allocator);
    Ok(())
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

/// The Vulkan 1.0 instance-level commands every driver must have: the loader calls them without
/// checking (`vkEnumerateDeviceLayerProperties`, deprecated, is not among them).
const REQUIRED_DRIVER_COMMANDS: &[u16] = {
    use vk_generated::command_id::*;
    &[
        vkDestroyInstance,
        vkEnumeratePhysicalDevices,
        vkGetPhysicalDeviceFeatures,
        vkGetPhysicalDeviceFormatProperties,
        vkGetPhysicalDeviceImageFormatProperties,
        vkGetPhysicalDeviceProperties,
        vkGetPhysicalDeviceQueueFamilyProperties,
        vkGetPhysicalDeviceMemoryProperties,
        vkGetPhysicalDeviceSparseImageFormatProperties,
        vkCreateDevice,
        vkEnumerateDeviceExtensionProperties,
    ]
};

/// A driver instance's table of instance-level functions; a driver lacking one of the required
/// commands (or `vkGetDeviceProcAddr`) is unusable: its instance is destroyed and it is skipped.
unsafe fn driver_table(driver: &Driver, handle: VkInstance, allocator: *const VkAllocationCallbacks) -> Result<Box<InstanceDispatch>, String> {
    let gipa = driver.get_instance_proc_addr;
    let table = InstanceDispatch::new(InstanceDispatchTable::load(|name| gipa(handle, name.as_ptr())));
    let slots = table.table.slots();
    let missing = REQUIRED_DRIVER_COMMANDS
        .iter()
        .map(|&id| &vk_generated::COMMANDS[id as usize])
        .find(|command| slots[command.slot as usize].is_none())
        .map(|command| command.name())
        .or_else(|| gipa(handle, c"vkGetDeviceProcAddr".as_ptr()).is_none().then_some(c"vkGetDeviceProcAddr"));
    let Some(missing) = missing else { return Ok(table) };
    log!(Level::Warn, "Unable to load {} from ICD {}", missing.to_string_lossy(), driver.library_path);
    if let Some(destroy) = table.table.vkDestroyInstance {
        destroy(handle, allocator);
    }
    Err(format!("it lacks {}, which every driver must have", missing.to_string_lossy()))
}

/// Destroys the driver instances that report no physical device (unloading their libraries
/// unless something else holds them). Their devices are wrapped at the first enumeration.
fn release_drivers_without_devices(instance: &mut Instance, allocator: *const VkAllocationCallbacks) {
    let counts = physical_device::counts_per_driver(&instance.drivers);
    let mut index = 0;
    instance.drivers.retain(|d| {
        let used = counts[index] > 0;
        index += 1;
        if !used {
            log!(Level::Driver, "{}: no physical device; driver released", d.driver.manifest_path);
            plan::record(|p| p.driver(&d.driver.manifest_path, None, Decision::Skipped, "it reports no physical device; released"));
            if let Some(destroy) = d.table.vkDestroyInstance {
                // SAFETY: the driver's own instance, destroyed once, with the application's allocator.
                unsafe { destroy(d.handle, allocator) };
            }
        }
        used
    });
}

/// The instance version the driver speaks, with the Khronos loader's warning when its manifest
/// promised more.
fn driver_instance_version(driver: &Driver) -> u32 {
    let version_1_0 = vk_generated::make_api_version(0, 1, 0, 0);
    let reported = driver.reported_instance_version();
    let promised = driver.manifest.api_version.is_some_and(|v| v >= vk_generated::make_api_version(0, 1, 1, 0));
    let path = &driver.library_path;
    match reported {
        None if promised => log!(
            Level::Warn,
            "terminator_CreateInstance: Manifest ICD for \"{path}\" contained a 1.1 or greater API version, but does not support \
             vkEnumerateInstanceVersion, treating as a 1.0 ICD"
        ),
        Some(v) if promised && vk_generated::api_version_major_minor(v) == (1, 0) => log!(
            Level::Warn,
            "terminator_CreateInstance: Manifest ICD for \"{path}\" contained a 1.1 or greater API version, but \
             vkEnumerateInstanceVersion returned 1.0, treating as a 1.0 ICD"
        ),
        _ => {}
    }
    reported.unwrap_or(version_1_0)
}

/// Creates one driver's instance with the extensions it supports and an API version it accepts;
/// returns its handle and the extensions it was given.
unsafe fn create_driver_instance(
    driver: &Driver,
    supported: &[VkExtensionProperties],
    info: &VkInstanceCreateInfo,
    requested: &[&CStr],
    api_version: u32,
    allocator: *const VkAllocationCallbacks,
) -> Result<(VkInstance, ExtensionSet), String> {
    let Some(create) = driver.global(c"vkCreateInstance") else { return Err("no vkCreateInstance".into()) };
    // SAFETY: the signature of vkCreateInstance.
    let create: PFN_vkCreateInstance = std::mem::transmute(create);
    let supports = |name: &CStr| supported.iter().any(|p| name_of(p) == name);
    let mut given: Vec<&CStr> = requested.iter().copied().filter(|e| supports(e)).collect();
    let driver_version = driver_instance_version(driver);
    // Physical devices are ordered by their PCI address, read through
    // vkGetPhysicalDeviceProperties2: where that is not core, the driver gets the extension.
    let properties2 = c"VK_KHR_get_physical_device_properties2";
    let core_properties2 = api_version >= vk_generated::make_api_version(0, 1, 1, 0) && driver_version >= vk_generated::make_api_version(0, 1, 1, 0);
    if !core_properties2 && supports(properties2) && !given.contains(&properties2) {
        given.push(properties2);
    }
    let extensions: Vec<*const c_char> = given.iter().map(|e| e.as_ptr()).collect();
    let mut app_info = info.pApplicationInfo.as_ref().copied();
    // A 1.0-only driver must be given apiVersion 1.0.
    if let Some(app) = app_info.as_mut() {
        if vk_generated::api_version_major_minor(driver_version) == (1, 0) && api_version > driver_version {
            app.apiVersion = vk_generated::make_api_version(0, 1, 0, 0);
        }
    }
    let mut driver_info = *info;
    driver_info.pApplicationInfo = app_info.as_ref().map_or(std::ptr::null(), |a| a as *const _);
    driver_info.enabledExtensionCount = extensions.len() as u32;
    driver_info.ppEnabledExtensionNames = extensions.as_ptr();
    driver_info.enabledLayerCount = 0;
    driver_info.ppEnabledLayerNames = std::ptr::null();
    // Portability enumeration is the loader's business unless the driver has the extension too.
    if !given.contains(&c"VK_KHR_portability_enumeration") {
        driver_info.flags = VkInstanceCreateFlags(info.flags.0 & !VkInstanceCreateFlags::ENUMERATE_PORTABILITY_BIT_KHR.0);
    }
    let mut handle = VkInstance::NULL;
    let result = create.map_or(VkResult::ERROR_INITIALIZATION_FAILED, |f| f(&driver_info, allocator, &mut handle));
    if result != VkResult::SUCCESS {
        return Err(format!("its vkCreateInstance returned {result:?}"));
    }
    if handle.is_null() {
        return Err("its vkCreateInstance returned no instance (VK_SUCCESS with VK_NULL_HANDLE)".into());
    }
    let mut set = ExtensionSet::new();
    for ext in given {
        set.insert_name(ext.to_bytes());
    }
    Ok((handle, set))
}

pub unsafe extern "system" fn vkDestroyInstance(instance: VkInstance, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyInstance", (), || {
        if instance.is_null() {
            return;
        }
        crate::handles::check_instance(instance.0, "vkDestroyInstance", "instance");
        destroy_instance(Box::from_raw(instance.0 as *mut Instance), pAllocator);
    })
}

/// Destroys the drivers' instances; the loader's memory is freed (to the allocator each block
/// came from) when `instance` drops.
unsafe fn destroy_instance(mut instance: Box<Instance>, allocator: *const VkAllocationCallbacks) {
    let _scope = debug::Scope::of_instance(&instance, true);
    if instance.layers.is_some() {
        // Down the chain; its terminator destroys the drivers' instances.
        crate::layer_chain::destroy_instance(&mut instance, allocator);
    }
    instance.destroy_drivers(allocator);
    // A use after destruction finds no magic while the memory is not reused.
    instance.magic = 0;
}
