//! The instance chain through enabled layers: `vkCreateInstance` with `VkLayerInstanceCreateInfo`
//! (link info, loader-data callback, layer-create-device callback, loader features), the loader's
//! terminators at the end of it, and the trampoline-level physical devices handed to the
//! application. The device chain is in `device_layers`.
//!
//! With layers, the application's `VkInstance` is still the loader's `Instance`; its first word
//! points to a table filled from the top layer's `vkGetInstanceProcAddr`. The chain ends in the
//! loader's terminators ([`terminator_gipa`]), whose `vkCreateInstance` creates the drivers'
//! instances. Terminator-level physical devices carry the same first word (layers key their data
//! by it); the application gets trampoline-level ones wrapping whatever the top layer returned.
//! The device chain ends in the driver, reached through a terminator that unwraps the physical
//! device. Without layers none of this runs: instance and device creation keep their direct path.

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, OnceLock};

use vk_generated::types::*;
use vk_generated::{CommandLevel, DispatchTable, InstanceDispatchTable};

use crate::chain::{device_layers, drivers, physical_devices};
use crate::debug::log::{self, Level};
use crate::discover;
use crate::ffi::{self, skip_loader_structs, ChainedOutArray, OutArray};
use crate::given::allocator::Allocator;
use crate::given::instance_create_info::InstanceCreateInfo;
use crate::load::instance_chain::{self, ChainNotCreated, InstanceChainEnd};
use crate::load::{self, layer::{Gipa, LoadedLayer}};
use crate::loader_abi::InstanceDispatch;
use crate::manifest::layer::LayerManifest;
use crate::object::instance::Instance;
use crate::object::layers::{ActiveLayer, InstanceLayers, TrampolinePhysicalDevice};
use crate::object::pending_instance::{self, PendingInstance};
use crate::plan::layers::Reason;
use crate::plan::{self, Decision};
use crate::platform::executable_path;
use crate::reference::variables::{VK_INSTANCE_LAYERS, VK_LOADER_LAYERS_ENABLE};

/// The driver fields for a trampoline-level device wrapping `below` (found among the instance's
/// own devices by address: a layer's wrapper is never read).
fn driver_fields(instance: &Instance, below: VkPhysicalDevice) -> (*const InstanceDispatchTable, VkPhysicalDevice) {
    match instance.physical_devices.find(below) {
        Some(pd) => pd.term.driver(),
        None => {
            // Its unknown slots are empty: such a command reports itself missing.
            static EMPTY: OnceLock<Box<InstanceDispatch>> = OnceLock::new();
            // Process-lifetime memory: never from an application's allocation callbacks.
            let empty = EMPTY.get_or_init(|| {
                crate::platform::host_alloc::with_system_allocator(|| InstanceDispatch::new(InstanceDispatchTable::default()))
            });
            (&empty.table, VkPhysicalDevice::NULL)
        }
    }
}

impl InstanceLayers {
    /// The enabled layers as `vkEnumerateDeviceLayerProperties` reports them: the meta layers
    /// too, each after its components.
    pub fn properties(&self) -> Vec<VkLayerProperties> {
        let listed = self.layers.iter().flat_map(|l| std::iter::once(&l.manifest).chain(&l.meta_layers_after));
        listed.map(discover::layers::properties).collect()
    }

    /// Device extensions of the implicit layers in the chain (merged into the driver's list).
    pub fn implicit_device_extensions(&self) -> Vec<VkExtensionProperties> {
        self.device_extensions_of(|l| !l.reason.is_requested())
    }

    fn device_extensions_of(&self, which: impl Fn(&ActiveLayer) -> bool) -> Vec<VkExtensionProperties> {
        let mut out: Vec<VkExtensionProperties> = Vec::new();
        for l in self.layers.iter().filter(|l| which(l)) {
            for e in &l.manifest.device_extensions {
                let Ok(name) = std::ffi::CString::new(e.name.as_str()) else { continue };
                if !out.iter().any(|p| ffi::name_of(p) == name.as_bytes()) {
                    out.push(ffi::extension_properties(&name, e.spec_version));
                }
            }
        }
        out
    }
}

/// Chooses and opens the layers for `vkCreateInstance`. Empty (quickly, reading only implicit
/// manifests) when no layer is on. A layer the application names that is missing or fails to
/// load is `VK_ERROR_LAYER_NOT_PRESENT` with the reason on stderr; any other layer that fails to
/// load is skipped with a log line naming it and the reason. `app_api_version` is the
/// application's `VkApplicationInfo::apiVersion` (0: none given).
pub fn select(app: &[&CStr], app_api_version: u32) -> Result<Vec<ActiveLayer>, VkResult> {
    let named = !app.is_empty() || VK_INSTANCE_LAYERS.is_set() || VK_LOADER_LAYERS_ENABLE.is_set();
    // An explanation lists the explicit layers nobody named too.
    let catalog = discover::layers::load(named || plan::recording());
    if catalog.is_empty() && !named {
        return Ok(Vec::new());
    }
    let mut app_names = Vec::with_capacity(app.len());
    for name in app {
        match name.to_str() {
            Ok(n) => app_names.push(n),
            Err(_) => {
                log::write(Level::ErrorLayer, &format!("vkCreateInstance: layer name {name:?} is not UTF-8; no such layer"));
                return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
            }
        }
    }
    if let Some(list) = VK_INSTANCE_LAYERS.get() {
        // The Khronos loader's words, which scripts and vulkaninfo users know (it words them
        // differently when a settings file decides the layers).
        if catalog.iter().any(|l| l.settings_control.is_some()) {
            log!(Level::WarnLayer, "env var 'VK_INSTANCE_LAYERS' defined and adding layers: {list}");
        } else {
            log!(Level::WarnLayer, "env var 'VK_INSTANCE_LAYERS' defined and adding layers \"{list}\"");
        }
    }
    let getenv = plan::layers::process_env;
    let has_override = catalog.iter().any(|l| l.name == crate::manifest::layer::OVERRIDE_LAYER_NAME);
    let exe = if has_override { executable_path() } else { None };
    let activation = match plan::layers::activate(&catalog, &app_names, &getenv, exe.as_deref()) {
        Ok(a) => a,
        Err(plan::layers::Missing(why)) => {
            log::write(Level::ErrorLayer, &format!("vkCreateInstance: {why}"));
            return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
        }
    };
    for (level, line) in &activation.log {
        log::log(*level, line);
    }
    for (index, reason) in &activation.layers {
        if let Reason::LoaderLayersEnable(_) = reason {
            // The Khronos loader's words.
            log!(Level::WarnLayer, "Layer \"{}\" forced enabled due to env var 'VK_LOADER_LAYERS_ENABLE'", catalog[*index].name);
        }
    }
    warn_about_older_layers(&catalog, &activation.layers, app_api_version);
    let mut active: Vec<ActiveLayer> = Vec::with_capacity(activation.layers.len());
    // Every layer is tried, so that each one that cannot be loaded is reported.
    let mut requested_layer_missing = false;
    let mut meta_layers = activation.meta_layers.into_iter().peekable();
    for (position, (index, reason)) in activation.layers.into_iter().enumerate() {
        // The meta layers listed before this layer go after the last one loaded.
        while let Some((_, meta)) = meta_layers.next_if(|(before, _)| *before <= position) {
            if let Some(last) = active.last_mut() {
                last.meta_layers_after.push(catalog[meta].clone());
            }
        }
        let manifest = catalog[index].clone();
        let loaded = load::layer::load(&manifest);
        plan::record(|p| match &loaded {
            Ok(_) => p.layer(&manifest.name, &manifest.manifest_path, manifest.implicit, Decision::Used, reason.to_string()),
            Err(why) => p.layer(&manifest.name, &manifest.manifest_path, manifest.implicit, Decision::Rejected, why.to_string()),
        });
        match loaded {
            Ok(loaded) => active.push(ActiveLayer { manifest, reason, loaded, meta_layers_after: Vec::new() }),
            Err(why) if reason.is_required() => {
                report_unloadable(&manifest.name, &why, true);
                log::write(Level::ErrorLayer, &format!("vkCreateInstance: layer {} ({}) cannot be loaded: {why}", manifest.name, manifest.manifest_path));
                requested_layer_missing = true;
            }
            Err(why) => {
                report_unloadable(&manifest.name, &why, false);
                // A layer someone named is an error to report; an implicit one only a warning.
                let level = if reason.is_requested() { Level::ErrorLayer } else { Level::WarnLayer };
                log!(level, "layer {} ({}, {reason}) skipped: {why}", manifest.name, manifest.manifest_path);
            }
        }
    }
    if requested_layer_missing {
        return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
    }
    if let Some(last) = active.last_mut() {
        last.meta_layers_after.extend(meta_layers.map(|(_, meta)| catalog[meta].clone()));
    }
    plan::record(|p| p.layer_order(&active.iter().map(|l| (l.manifest.name.as_str(), l.manifest.manifest_path.as_str())).collect::<Vec<_>>()));
    Ok(active)
}

/// The Khronos loader's warning (`warn_if_layers_are_older_than_application`), which vulkaninfo
/// shows by default, for each layer going into the chain (meta layers expanded: their components,
/// implicit or explicit) whose manifest `api_version` is older, in major.minor, than the
/// application's `apiVersion` (1.0 when it gives none). Said once the layers are chosen, before
/// any is opened.
fn warn_about_older_layers(catalog: &[LayerManifest], layers: &[(usize, Reason)], app_api_version: u32) {
    let app_api_version = if app_api_version == 0 { vk_generated::make_api_version(0, 1, 0, 0) } else { app_api_version };
    let (app_major, app_minor) = vk_generated::api_version_major_minor(app_api_version);
    for (index, _) in layers {
        let layer = &catalog[*index];
        let (major, minor) = vk_generated::api_version_major_minor(layer.api_version);
        if (major, minor) < (app_major, app_minor) {
            log!(
                Level::WarnLayer,
                "Layer {} uses API version {major}.{minor} which is older than the application specified API version of \
                 {app_major}.{app_minor}. May cause issues.",
                layer.name
            );
        }
    }
}

/// The Khronos loader's line for a layer whose library cannot be used, which its users search
/// for: an error ending in `!` for a layer the application asked for, information ending in `.`
/// for any other.
fn report_unloadable(name: &str, why: &load::layer::LoadError, requested: bool) {
    let what = match why {
        load::layer::LoadError::WrongArchitecture(_) => "was wrong bit-type",
        load::layer::LoadError::Failed(_) => "failed to load",
    };
    let (level, ending) = if requested { (Level::ErrorLayer, '!') } else { (Level::InfoLayer, '.') };
    log!(level, "Requested layer \"{name}\" {what}{ending}");
}

fn instance_extensions(layers: &[ActiveLayer]) -> Vec<VkExtensionProperties> {
    let mut out = Vec::new();
    for l in layers {
        for e in &l.manifest.instance_extensions {
            if let Ok(name) = std::ffi::CString::new(e.name.as_str()) {
                out.push(ffi::extension_properties(&name, e.spec_version));
            }
        }
    }
    out
}

fn log_chain(layers: &[ActiveLayer]) {
    // The Khronos loader's line per layer, bottom of the chain first, which its users search for.
    for l in layers.iter().rev() {
        let path = l.manifest.library_path.as_deref().unwrap_or("");
        log!(Level::InfoLayer, "Insert instance layer \"{}\" ({path})", l.manifest.name);
    }
    if !log::enabled(Level::Layer) {
        return;
    }
    log::log(Level::Layer, "instance layer chain, application first:");
    for (i, l) in layers.iter().enumerate() {
        let path = l.manifest.library_path.as_deref().unwrap_or("");
        log!(Level::Layer, "  {i}: {} ({path}, interface {}): {}", l.manifest.name, l.loaded.interface_version, l.reason);
    }
    log::log(Level::Layer, "  then the loader's terminators and the drivers");
}

/// Builds the instance chain and creates `pending` (fresh from `drivers::new_instance`) through it:
/// the instance, created (its drivers' instances created into it by the chain's terminator), or
/// the error, the instance and what the chain left of it destroyed.
pub fn create_instance(
    mut pending: PendingInstance,
    info: InstanceCreateInfo<'_>,
    allocator: Allocator<'_>,
    layers: Vec<ActiveLayer>,
) -> Result<Box<Instance>, VkResult> {
    log_chain(&layers);
    // The chain's functions, held apart from the instance: the end of the chain has it while
    // they run.
    let loaded: Vec<LoadedLayer> = layers.iter().map(|l| l.loaded.clone()).collect();
    let top_name = layers.first().map(|l| l.manifest.name.clone()).unwrap_or_default();
    let chain = Box::new(InstanceLayers {
        layers,
        table: InstanceDispatch::new(InstanceDispatchTable::default()),
        physical_devices: Mutex::new(Vec::new()),
        terminator_gipa,
    });
    // Layers read the instance's first word during creation: it must already be final.
    crate::dispatch::unknown::set_terminators(&chain.table.unknown);
    let instance = pending.get_mut();
    instance.set_dispatch(&chain.table.table);
    instance.layers = Some(chain);
    let end = InstanceChainEnd {
        gipa: terminator_gipa,
        gpdpa: terminator_gpdpa,
        set_loader_data: Some(set_instance_loader_data),
        create_device: Some(device_layers::layer_create_device),
        destroy_device: Some(device_layers::layer_destroy_device),
    };
    let created = pending.lend(|handed_down| instance_chain::create_instance(&loaded, end, info, allocator, handed_down));
    let created = match created {
        Ok(created) => created,
        Err(ChainNotCreated::NoCreateInstance) => {
            log::write(Level::ErrorLayer, &format!("vkCreateInstance: layer {top_name} returns no vkCreateInstance"));
            return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
        }
        Err(ChainNotCreated::Failed(result)) => {
            // A layer that failed after calling down may leave the drivers' instances behind.
            pending.discard(allocator);
            return Err(result);
        }
    };
    let instance = pending.get_mut();
    if created.handle.0 != instance as *mut Instance as *mut c_void {
        log::log(Level::Layer, "vkCreateInstance: a layer wrapped the VkInstance; the application keeps the loader's handle");
    }
    instance.chain_handle = created.handle;
    instance.layers.as_mut().expect("set above").table.table = created.table;
    Ok(pending.into_box())
}

/// `vkSetInstanceLoaderData`: a layer's new instance-level dispatchable object gets the instance's
/// dispatch pointer.
///
/// # Safety
/// The layer interface's contract: `instance` NULL or the loader's instance (its first word is
/// its dispatch pointer); `object` NULL or a dispatchable object the layer made, whose first word
/// is the loader's to set. Checked anyway: NULL for either fails with
/// `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn set_instance_loader_data(instance: VkInstance, object: *mut c_void) -> VkResult {
    ffi::guard("vkSetInstanceLoaderData", VkResult::ERROR_INITIALIZATION_FAILED, || {
        if instance.is_null() || object.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: the contract: both are dispatchable objects, readable and writable for their
        // first word, which is the loader's.
        unsafe { *(object as *mut *const c_void) = *(instance.0 as *const *const c_void) };
        VkResult::SUCCESS
    })
}

/// Wraps the top layer's physical devices in trampoline-level ones (the same wrapper for the same
/// handle every time).
fn wrap(instance: &Instance, chain: &InstanceLayers, handles: &mut [VkPhysicalDevice]) {
    let Ok(mut known) = chain.physical_devices.lock() else { return };
    for h in handles.iter_mut() {
        let wrapper = match known.iter().find(|w| w.unwrapped == *h) {
            Some(w) => &**w as *const TrampolinePhysicalDevice,
            None => {
                let (driver_table, driver_handle) = driver_fields(instance, *h);
                let w = Box::new(TrampolinePhysicalDevice {
                    dispatch: &chain.table.table,
                    magic: crate::handles::PHYSICAL_DEVICE_MAGIC,
                    unwrapped: *h,
                    instance: instance as *const Instance as *const c_void,
                    driver_table: std::sync::atomic::AtomicPtr::new(driver_table.cast_mut()),
                    driver_handle: std::sync::atomic::AtomicPtr::new(driver_handle.0),
                });
                let ptr = &*w as *const TrampolinePhysicalDevice;
                known.push(w);
                ptr
            }
        };
        *h = VkPhysicalDevice(wrapper as *mut c_void);
    }
}

/// `vkEnumeratePhysicalDevices` with layers: the application's call passed down as it is (a
/// count is asked for once, as through the Khronos loader: a layer such as Mesa's device-select
/// does real work per call), then the handles it filled wrapped. `VK_ERROR_INITIALIZATION_FAILED`
/// for an instance without layers.
pub fn enumerate_physical_devices(instance: &Instance, out: OutArray<'_, VkPhysicalDevice>) -> VkResult {
    let (Some(chain), Some(calls)) = (instance.layers.as_deref(), instance.chain_calls()) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    let (result, handles) = calls.enumerate_physical_devices(out);
    wrap(instance, chain, handles);
    result
}

/// `vkEnumeratePhysicalDeviceGroups` with layers: the application's structs are filled by the
/// chain, then their handles wrapped. `VK_ERROR_INITIALIZATION_FAILED` for an instance without
/// layers.
pub fn enumerate_physical_device_groups(instance: &Instance, out: ChainedOutArray<'_, VkPhysicalDeviceGroupProperties>) -> VkResult {
    let (Some(chain), Some(calls)) = (instance.layers.as_deref(), instance.chain_calls()) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    let (result, groups) = calls.enumerate_physical_device_groups(out);
    for group in groups {
        let n = (group.physicalDeviceCount as usize).min(group.physicalDevices.len());
        wrap(instance, chain, &mut group.physicalDevices[..n]);
    }
    result
}

/// `vkEnumerateDeviceExtensionProperties` with a layer name: the layer's manifest answers.
pub fn device_extensions_of_layer(instance: &Instance, name: &CStr) -> Option<Vec<VkExtensionProperties>> {
    if let Some(chain) = &instance.layers {
        let manifests: Vec<LayerManifest> = chain.layers.iter().map(|l| l.manifest.clone()).collect();
        if let Some(list) = crate::chain::layer_extensions::extensions_of(&manifests, name, true) {
            return Some(list);
        }
    }
    crate::chain::layer_extensions::extensions_of(&discover::layers::load(true), name, true)
}

/// `vkGetInstanceProcAddr` for a name the registry does not know, with layers. A physical-device
/// command (a driver's or a layer's `vk_layerGetPhysicalDeviceProcAddr` knows it) gets a slot whose
/// entry in the chain's table is the first such layer's answer, else the terminator; a device
/// command the top layer or a driver knows gets a device slot, filled from the top of each device
/// chain. NULL for an instance without layers.
pub fn unknown_command(instance: &Instance, name: &CStr) -> PFN_vkVoidFunction {
    let (chain, calls) = (instance.layers.as_deref()?, instance.chain_calls()?);
    let resolve_physical = |n: &CStr| calls.physical_device_proc_addr(n);
    let slots = crate::dispatch::unknown::ChainSlots { slots: &chain.table.unknown, resolve: Some(&resolve_physical) };
    if let Some(trampoline) = crate::dispatch::unknown::physical_device_command(instance, name, Some(slots)) {
        return Some(trampoline);
    }
    let resolve = |n: &CStr| calls.proc_addr(n);
    crate::dispatch::unknown::device_command(instance, name, Some(&resolve))
}

// ------------------------------------------------------------------------------------------------
// The end of the instance chain
// ------------------------------------------------------------------------------------------------

/// The `pfnNextGetInstanceProcAddr` of the last layer: the loader's terminators.
///
/// # Safety
/// The layer interface's contract: `instance` NULL or the loader's instance; `pName` NULL or a
/// NUL-terminated string. Checked anyway: a NULL name is answered with NULL.
pub unsafe extern "system" fn terminator_gipa(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetInstanceProcAddr (terminator)", None, || {
        if pName.is_null() {
            return None;
        }
        // SAFETY: the contract: NUL-terminated.
        let Some(command) = (unsafe { vk_generated::lookup::command_c(pName) }) else {
            // SAFETY: the contract: NUL-terminated.
            let name = unsafe { CStr::from_ptr(pName) };
            if name == c"vk_layerGetPhysicalDeviceProcAddr" {
                // The chain's own, which no registry lists.
                // SAFETY: a function pointer as `PFN_vkVoidFunction`, which the layer casts back to
                // the layer interface's `PFN_GetPhysicalDeviceProcAddr`, this function's type.
                return Some(unsafe { std::mem::transmute::<Gipa, unsafe extern "system" fn()>(terminator_gpdpa) });
            }
            // SAFETY: the contract: NULL or the loader's instance.
            return unknown_terminator(unsafe { Instance::from_handle(instance) }?, name);
        };
        let info = command.info();
        match info.name().to_bytes() {
            b"vkCreateInstance" => ffi::erased!(vkCreateInstance => terminator_CreateInstance),
            b"vkDestroyInstance" => ffi::erased!(vkDestroyInstance => terminator_DestroyInstance),
            b"vkEnumeratePhysicalDevices" => ffi::erased!(vkEnumeratePhysicalDevices => physical_devices::terminator_EnumeratePhysicalDevices),
            b"vkEnumeratePhysicalDeviceGroups" => {
                ffi::erased!(vkEnumeratePhysicalDeviceGroups => physical_devices::terminator_EnumeratePhysicalDeviceGroups)
            }
            b"vkEnumerateDeviceExtensionProperties" => {
                ffi::erased!(vkEnumerateDeviceExtensionProperties => physical_devices::terminator_EnumerateDeviceExtensionProperties)
            }
            b"vkEnumerateDeviceLayerProperties" => {
                ffi::erased!(vkEnumerateDeviceLayerProperties => physical_devices::terminator_EnumerateDeviceLayerProperties)
            }
            b"vkCreateDevice" => ffi::erased!(vkCreateDevice => device_layers::terminator_CreateDevice),
            b"vkGetInstanceProcAddr" => ffi::erased!(vkGetInstanceProcAddr => terminator_gipa),
            b"vkGetDeviceProcAddr" => ffi::erased!(vkGetDeviceProcAddr => device_layers::terminator_gdpa),
            _ if info.level == CommandLevel::Global => crate::hand_written(command.command),
            _ if info.level == CommandLevel::Device => None,
            _ => {
                // SAFETY: the contract: NULL or the loader's instance.
                let instance = unsafe { Instance::from_handle(instance) }?;
                instance.terminators().slots()[info.slot as usize]
            }
        }
    })
}

/// The end of the instance chain for a name the registry does not know (a layer calling down):
/// the physical-device terminator if a driver's `vk_icdGetPhysicalDeviceProcAddr` knows it, else
/// the device trampoline if a driver's `vkGetInstanceProcAddr` does.
fn unknown_terminator(instance: &Instance, name: &CStr) -> PFN_vkVoidFunction {
    crate::dispatch::unknown::physical_device_chain_end(instance, name).or_else(|| crate::dispatch::unknown::device_command(instance, name, None))
}

/// The `pfnNextGetPhysicalDeviceProcAddr` of the last layer: the loader's terminators for instance
/// and physical-device commands, and for physical-device commands unknown to the registry that a
/// driver knows (drivers' functions behind it).
///
/// # Safety
/// The layer interface's contract: `instance` NULL or the loader's instance; `pName` NULL or a
/// NUL-terminated string. Checked anyway: a NULL name is answered with NULL.
unsafe extern "system" fn terminator_gpdpa(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vk_layerGetPhysicalDeviceProcAddr (terminator)", None, || {
        if pName.is_null() {
            return None;
        }
        // SAFETY: the contract: NULL or the loader's instance.
        let instance = unsafe { Instance::from_handle(instance) }?;
        // SAFETY: the contract: NUL-terminated.
        match unsafe { vk_generated::lookup::command_c(pName) } {
            Some(command) if matches!(command.info().level, CommandLevel::Instance | CommandLevel::PhysicalDevice) => {
                instance.terminators().slots()[command.info().slot as usize]
            }
            Some(_) => None,
            // SAFETY: the contract: NUL-terminated.
            None => crate::dispatch::unknown::physical_device_chain_end(instance, unsafe { CStr::from_ptr(pName) }),
        }
    })
}

/// The end of `vkCreateInstance`: the drivers' instances, created into the pending instance.
///
/// # Safety
/// Vulkan's valid usage of `vkCreateInstance`, as the last layer passes it on: `pCreateInfo` NULL
/// or a valid create info (its chain may begin with the loader's own structures); `pAllocator`
/// NULL or valid callbacks; `pInstance` NULL or valid for reading and writing a handle, holding
/// the handle the loader gave the chain. Checked anyway: a call outside the loader's instance
/// creation, or a NULL create info or instance pointer, fails with
/// `VK_ERROR_INITIALIZATION_FAILED`; a changed handle stops the process.
unsafe extern "system" fn terminator_CreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    ffi::guard("vkCreateInstance (terminator)", VkResult::ERROR_INITIALIZATION_FAILED, || {
        const OUTSIDE: &str = "vkCreateInstance: the loader's terminator was called outside of instance creation";
        // SAFETY: the contract: NULL or a valid create info.
        let (true, Some(app_info), false) = (pending_instance::is_lent(), unsafe { pCreateInfo.as_ref() }, pInstance.is_null()) else {
            log::write(Level::Error, OUTSIDE);
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the contract: `pInstance` is valid; what it holds is the loader's handle, unless
        // a layer changed it (then NULL or a pointer readable as a handle's header where aligned).
        let handed_down = unsafe { (*pInstance, crate::handles::magic_word((*pInstance).0)) };
        check_handed_down_instance(handed_down.0, handed_down.1);
        let mut info = *app_info;
        // SAFETY: the contract: a valid chain.
        info.pNext = unsafe { skip_loader_structs(info.pNext, VkStructureType::LOADER_INSTANCE_CREATE_INFO) };
        // SAFETY: the application's create info without the loader's structures (the contract);
        // the allocator as the contract says.
        let (info, allocator) = unsafe { (InstanceCreateInfo::new(&info), Allocator::new(pAllocator)) };
        let created = pending_instance::with_lent(|instance| {
            let extra = instance.layers.as_ref().map(|c| instance_extensions(&c.layers)).unwrap_or_default();
            drivers::create_drivers(instance, info, allocator, &extra).map(|()| VkInstance(instance as *mut Instance as *mut c_void))
        });
        match created {
            Some(Ok(handle)) => {
                // SAFETY: the contract: valid for writing a handle.
                unsafe { *pInstance = handle };
                VkResult::SUCCESS
            }
            Some(Err(e)) => e,
            None => {
                log::write(Level::Error, OUTSIDE);
                VkResult::ERROR_INITIALIZATION_FAILED
            }
        }
    })
}

/// Stops the process when a layer changed the `VkInstance` it was given to pass down (layer
/// policy LLP_LAYER_21): the loader's instance cannot be trusted any more. `magic` is the magic
/// word `handed_down` points to (`None`: NULL or misaligned). The Khronos loader's words, which
/// its users search for.
fn check_handed_down_instance(handed_down: VkInstance, magic: Option<u64>) {
    const CHECK: &str = "terminator_CreateInstance";
    if handed_down.is_null() {
        log::fatal(
            Level::Error,
            &format!("{CHECK}: Loader instance pointer null encountered.  Possibly set by active layer. (Policy #LLP_LAYER_21)"),
        );
        std::process::abort();
    }
    if magic != Some(crate::handles::INSTANCE_MAGIC) {
        log::fatal(
            Level::Error,
            &format!(
                "{CHECK}: Instance pointer ({:p}) has invalid MAGIC value 0x{:08x}. Instance value possibly corrupted by \
                 active layer (Policy #LLP_LAYER_21).",
                handed_down.0,
                magic.unwrap_or(0)
            ),
        );
        std::process::abort();
    }
}

/// The end of `vkDestroyInstance`: the drivers' instances, destroyed through a shared reference
/// (the loader's `vkDestroyInstance` holds the instance until the chain returns, and frees it).
///
/// # Safety
/// `instance` must be NULL or the loader's instance being destroyed; `pAllocator` NULL or valid
/// callbacks compatible with those it was created with.
unsafe extern "system" fn terminator_DestroyInstance(instance: VkInstance, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyInstance (terminator)", (), || {
        // SAFETY: the caller's promise.
        if let Some(instance) = unsafe { Instance::from_handle(instance) } {
            // SAFETY: as above.
            unsafe { instance.destroy_drivers(pAllocator) };
        }
    })
}

