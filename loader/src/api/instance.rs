//! `vkCreateInstance` / `vkDestroyInstance` and the global commands: the layers are chosen and the
//! instance created through their chain, or directly on the drivers (`chain::drivers`).

use std::ffi::{c_char, CStr};

use vk_generated::types::*;

use crate::chain::drivers::{all_instance_extensions, create_drivers, instance_extensions_per_driver, new_instance};
use crate::debug::log::{self, Level};
use crate::debug::messengers;
use crate::ffi::name_of;
use crate::ffi;
use crate::given::allocator::Allocator;
use crate::given::instance_create_info::InstanceCreateInfo;
use crate::object::instance::Instance;
use crate::object::pending_instance::PendingInstance;
use crate::plan;
use crate::platform::host_alloc::AllocatorScope;

/// `vkEnumerateInstanceExtensionProperties`: through the implicit layers' pre-instance chains,
/// ending in the loader's answer.
///
/// # Safety
/// Vulkan's valid usage: `pLayerName` NULL or a NUL-terminated string; `pPropertyCount` valid;
/// `pProperties` NULL or valid for writing `*pPropertyCount` structures. A NULL
/// `pPropertyCount` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        // SAFETY: the caller's arguments, as this function's contract; the command's own
        // interceptors; the terminator is the loader's own.
        unsafe {
            crate::load::pre_instance::extension_properties(crate::chain::pre_instance::of_extension_properties(), pLayerName, pPropertyCount, pProperties, terminator_EnumerateInstanceExtensionProperties)
                .unwrap_or_else(|| terminator_EnumerateInstanceExtensionProperties(std::ptr::null(), pLayerName, pPropertyCount, pProperties))
        }
    })
}

/// The loader's answer, at the end of implicit layers' pre-instance chains.
///
/// # Safety
/// As [`vkEnumerateInstanceExtensionProperties`]; the chain is not read.
unsafe extern "system" fn terminator_EnumerateInstanceExtensionProperties(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceExtensionPropertiesChain,
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or a NUL-terminated string (this function's contract).
        let layer = unsafe { ffi::c_str(pLayerName) };
        // An empty layer name means no layer, as NULL does (the Khronos loader reads it so).
        if let Some(layer) = layer.filter(|name| !name.is_empty()) {
            return match crate::chain::layer_extensions::instance_extensions_of(layer) {
                // SAFETY: the caller's count and array (this function's contract).
                Some(list) => unsafe { ffi::fill(&list, pPropertyCount, pProperties) },
                None => VkResult::ERROR_LAYER_NOT_PRESENT,
            };
        }
        let per_driver = instance_extensions_per_driver();
        let mut all = all_instance_extensions(per_driver.as_slice());
        // The enabled implicit layers' extensions (not filtered: the layers dispatch them).
        for e in crate::chain::layer_extensions::implicit_instance_extensions() {
            if !all.iter().any(|p| name_of(p) == name_of(&e)) {
                all.push(e);
            }
        }
        // SAFETY: the caller's count and array (this function's contract).
        unsafe { ffi::fill(&all, pPropertyCount, pProperties) }
    })
}

/// `vkEnumerateInstanceLayerProperties`: through the implicit layers' pre-instance chains, ending
/// in the loader's answer.
///
/// # Safety
/// Vulkan's valid usage: `pPropertyCount` valid; `pProperties` NULL or valid for writing
/// `*pPropertyCount` structures. A NULL `pPropertyCount` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumerateInstanceLayerProperties(
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        // SAFETY: the caller's arguments, as this function's contract; the command's own
        // interceptors; the terminator is the loader's own.
        unsafe {
            crate::load::pre_instance::layer_properties(crate::chain::pre_instance::of_layer_properties(), pPropertyCount, pProperties, terminator_EnumerateInstanceLayerProperties)
                .unwrap_or_else(|| terminator_EnumerateInstanceLayerProperties(std::ptr::null(), pPropertyCount, pProperties))
        }
    })
}

/// The loader's answer, at the end of implicit layers' pre-instance chains.
///
/// # Safety
/// As [`vkEnumerateInstanceLayerProperties`]; the chain is not read.
unsafe extern "system" fn terminator_EnumerateInstanceLayerProperties(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceLayerPropertiesChain,
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let layers: Vec<VkLayerProperties> = crate::discover::layers::load(true).iter().map(crate::discover::layers::properties).collect();
        // SAFETY: the caller's count and array (this function's contract).
        unsafe { ffi::fill(&layers, pPropertyCount, pProperties) }
    })
}

/// `vkEnumerateInstanceVersion`: through the implicit layers' pre-instance chains, ending in the
/// loader's answer.
///
/// # Safety
/// Vulkan's valid usage: `pApiVersion` valid for writing a `u32`. A NULL `pApiVersion` is
/// `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumerateInstanceVersion(pApiVersion: *mut u32) -> VkResult {
    ffi::guard("vkEnumerateInstanceVersion", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        // SAFETY: the caller's output, as this function's contract; the command's own interceptors;
        // the terminator is the loader's own.
        unsafe {
            crate::load::pre_instance::version(crate::chain::pre_instance::of_version(), pApiVersion, terminator_EnumerateInstanceVersion)
                .unwrap_or_else(|| terminator_EnumerateInstanceVersion(std::ptr::null(), pApiVersion))
        }
    })
}

/// The loader's answer, at the end of implicit layers' pre-instance chains.
///
/// # Safety
/// As [`vkEnumerateInstanceVersion`]; the chain is not read.
unsafe extern "system" fn terminator_EnumerateInstanceVersion(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceVersionChain,
    pApiVersion: *mut u32,
) -> VkResult {
    if pApiVersion.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    // SAFETY: a non-NULL `pApiVersion` is writable (this function's contract).
    unsafe { pApiVersion.write(VK_HEADER_VERSION_COMPLETE) };
    VkResult::SUCCESS
}

/// `vkCreateInstance`: the layers chosen and the instance created through their chain, or
/// directly on the drivers.
///
/// # Safety
/// Vulkan's valid usage: `pCreateInfo` a valid structure (its application info NULL or valid
/// with NULL or NUL-terminated names, its arrays valid for their counts, its names
/// NUL-terminated, its chain valid, the callbacks of its chained debug messengers callable until
/// the instance is destroyed); `pAllocator` NULL or valid callbacks, callable until the instance
/// is destroyed; `pInstance` valid for writing a handle. Checked anyway: a NULL
/// `pCreateInfo` or `pInstance` (`VK_ERROR_INITIALIZATION_FAILED`), a NULL name array with a
/// count, NULL names (skipped). What the application passed is not written.
pub unsafe extern "system" fn vkCreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    ffi::guard("vkCreateInstance", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid structure (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pInstance.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: NULL or valid callbacks, callable until the instance is destroyed (this
        // function's contract).
        let memory = unsafe { AllocatorScope::enter(pAllocator, VkSystemAllocationScope::INSTANCE) };
        let _settings = crate::manifest::settings::OneLook::enter();
        let explain_file = plan::document::requested_file();
        let recording = explain_file.is_some().then(plan::Recording::start);
        // SAFETY: the valid create info, its messengers' callbacks callable until the instance is
        // destroyed (this function's contract).
        let creation_callbacks = unsafe { InstanceCreateInfo::new(info) }.debug_callbacks();
        let _scope = messengers::Scope::enter(creation_callbacks.clone());
        // SAFETY: the valid create info and callbacks (this function's contract).
        let (result, created) = match unsafe { create_instance(info, pAllocator, creation_callbacks) } {
            Ok(instance) if memory.failed() => {
                // SAFETY: an instance just made, which no one else has, with its callbacks.
                unsafe { destroy_instance(Box::into_raw(instance), pAllocator) };
                (VkResult::ERROR_OUT_OF_HOST_MEMORY, None)
            }
            Ok(instance) => (VkResult::SUCCESS, Some(Box::into_raw(instance))),
            Err(_) if memory.failed() => (VkResult::ERROR_OUT_OF_HOST_MEMORY, None),
            Err(result) => (result, None),
        };
        if let (Some(file), Some(recording)) = (explain_file, recording) {
            // SAFETY: the instance just created (from `Box::into_raw`), not the application's yet.
            write_explanation(&file, recording, result, created.map(|instance| unsafe { &*instance }));
        }
        if let Some(instance) = created {
            // SAFETY: a non-NULL `pInstance` is writable (this function's contract).
            unsafe { pInstance.write(VkInstance(instance.cast())) };
        }
        result
    })
}

/// What `vkCreateInstance`'s create info names, as views made once.
struct Requested<'a> {
    app: Option<&'a VkApplicationInfo>,
    application_name: Option<&'a CStr>,
    engine_name: Option<&'a CStr>,
    /// The layer and extension names, NULL entries as `None`.
    layers: Vec<Option<&'a CStr>>,
    extensions: Vec<Option<&'a CStr>>,
}

impl<'a> Requested<'a> {
    /// # Safety
    /// `info` must be valid as `vkCreateInstance` requires (see its contract), for `'a`.
    unsafe fn of(info: &'a VkInstanceCreateInfo) -> Requested<'a> {
        // SAFETY: NULL or a valid application info (this function's contract).
        let app = unsafe { info.pApplicationInfo.as_ref() };
        // SAFETY: its names NULL or NUL-terminated (this function's contract).
        let (application_name, engine_name) = unsafe { (app.and_then(|a| ffi::c_str(a.pApplicationName)), app.and_then(|a| ffi::c_str(a.pEngineName))) };
        let list = |names: *const *const c_char, count: u32| {
            // SAFETY: NULL or an array of `count` names, each NULL or NUL-terminated (this
            // function's contract).
            unsafe { ffi::slice(names, count).iter().map(|&name| ffi::c_str(name)).collect() }
        };
        Requested {
            app,
            application_name,
            engine_name,
            layers: list(info.ppEnabledLayerNames, info.enabledLayerCount),
            extensions: list(info.ppEnabledExtensionNames, info.enabledExtensionCount),
        }
    }
}

/// Creates the instance.
///
/// # Safety
/// `info` and `allocator` as `vkCreateInstance` requires (see its contract).
unsafe fn create_instance(
    info: &VkInstanceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    creation_callbacks: Vec<messengers::Callback>,
) -> Result<Box<Instance>, VkResult> {
    // SAFETY: this function's contract.
    let requested = unsafe { Requested::of(info) };
    if log::wanted(Level::Info) {
        log::out_of_line(|| log_create_info(info, &requested));
    }
    check_api_version(requested.app);
    if info.enabledLayerCount > 0 && info.ppEnabledLayerNames.is_null() {
        log::write(Level::Error, "vkCreateInstance: enabledLayerCount is not 0 but ppEnabledLayerNames is NULL");
        return Err(VkResult::ERROR_LAYER_NOT_PRESENT);
    }
    if info.enabledExtensionCount > 0 && info.ppEnabledExtensionNames.is_null() {
        log::write(Level::Error, "vkCreateInstance: enabledExtensionCount is not 0 but ppEnabledExtensionNames is NULL");
        return Err(VkResult::ERROR_EXTENSION_NOT_PRESENT);
    }
    let mut instance = new_instance(creation_callbacks);
    messengers::Scope::set_instance(instance.id());
    warn_about_api_variant(requested.app);
    let app_layers: Vec<&CStr> = requested.layers.iter().flatten().copied().collect();
    let app_api_version = requested.app.map_or(0, |a| a.apiVersion);
    let layers = crate::chain::instance_layers::select(&app_layers, app_api_version)?;
    // SAFETY: the caller's create info and allocator (this function's contract).
    let (info, allocator) = unsafe { (InstanceCreateInfo::new(info), Allocator::new(allocator)) };
    if !layers.is_empty() {
        // Held by address while the chain runs: its terminator creates the drivers into it, and
        // layers may reach it through its handle.
        return crate::chain::instance_layers::create_instance(PendingInstance::new(instance), info, allocator, layers);
    }
    create_drivers(&mut instance, info, allocator, &[])?;
    Ok(instance)
}

/// The application's create info, in the Khronos loader's words (scripts and its test suite
/// look for them).
fn log_create_info(info: &VkInstanceCreateInfo, requested: &Requested) {
    let text = |name: Option<&CStr>| name.map_or(String::new(), |n| n.to_string_lossy().into_owned());
    let app = requested.app;
    let api = app.map_or(0, |a| a.apiVersion);
    log::log(
        Level::Info,
        &format!(
            "vkCreateInstance: applicationName: \"{}\", applicationVersion: {}, engineName: \"{}\", engineVersion: {}, apiVersion: {}.{}.{}",
            text(requested.application_name),
            app.map_or(0, |a| a.applicationVersion),
            text(requested.engine_name),
            app.map_or(0, |a| a.engineVersion),
            (api >> 22) & 0x7f,
            (api >> 12) & 0x3ff,
            api & 0xfff,
        ),
    );
    let lists = [("layer", info.enabledLayerCount, &requested.layers), ("extension", info.enabledExtensionCount, &requested.extensions)];
    for (what, count, names) in lists {
        log::log(Level::Info, &format!("vkCreateInstance: Requested {count} instance {what}(s):"));
        for name in names.iter() {
            log::log(Level::Info, &format!("   {}", name.map_or("<NULL>".into(), |n| text(Some(n)))));
        }
    }
}

/// An `apiVersion` below 1.0 other than 0 is invalid (the Khronos loader's message); creation
/// goes on as for 1.0.
fn check_api_version(app: Option<&VkApplicationInfo>) {
    let Some(app) = app else { return };
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
fn warn_about_api_variant(app: Option<&VkApplicationInfo>) {
    let Some(app) = app else { return };
    let variant = app.apiVersion >> 29;
    if variant != 0 {
        log!(
            Level::Warn,
            "vkCreateInstance: The API Variant specified in pCreateInfo->pApplicationInfo.apiVersion is {variant} instead of the expected value of 0."
        );
    }
}

/// `vkDestroyInstance`: the drivers' instances (down the layers' chain if there is one), then the
/// loader's.
///
/// # Safety
/// Vulkan's valid usage: `instance` NULL or a live instance of this loader whose child objects
/// are destroyed and which no other thread uses; `pAllocator` NULL or callbacks compatible with
/// those it was created with. Checked anyway: NULL does nothing; the instance's magic (a message).
pub unsafe extern "system" fn vkDestroyInstance(instance: VkInstance, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyInstance", (), || {
        // One API call: each file it reads (the driver cache) is asked about once.
        let _files = crate::platform::call_files::OneCall::enter();
        if instance.is_null() {
            return;
        }
        // SAFETY: a dispatchable handle, readable for the loader's header (this function's contract).
        unsafe { crate::handles::check_instance(instance.0, "vkDestroyInstance", "instance") };
        // SAFETY: a live instance of this loader (`Box::into_raw` of one), destroyed once by its
        // only user (this function's contract).
        unsafe { destroy_instance(instance.0.cast::<Instance>(), pAllocator) };
    })
}

/// Destroys the drivers' instances, down the layers' chain if there is one, then frees the
/// instance (each block to the allocator it came from). No reference to the instance is held
/// across the chain: layers reach it through its handle, and its terminator destroys the drivers'
/// instances through a shared one.
///
/// # Safety
/// `instance` must come from `Box::into_raw` of a live instance, destroyed once, and used by no
/// other thread (Vulkan's external synchronization of `vkDestroyInstance`); `allocator` must be
/// NULL or valid callbacks compatible with those it was created with.
unsafe fn destroy_instance(instance: *mut Instance, allocator: *const VkAllocationCallbacks) {
    // SAFETY: the caller's promise; shared while the chain runs.
    let _scope = unsafe { &*instance }.messenger_scope(true);
    {
        // SAFETY: as above.
        let shared = unsafe { &*instance };
        if let Some(chain) = shared.chain_calls() {
            // Down the chain; its terminator destroys the drivers' instances.
            // SAFETY: the caller's promise for `allocator` (NULL or valid, compatible) and for
            // what comes after: the instance is freed below.
            unsafe { chain.destroy(Allocator::new(allocator)) };
        }
        // Unless a layer did not call down.
        // SAFETY: as above.
        unsafe { shared.destroy_drivers(allocator) };
    }
    // SAFETY: the chain has returned: nothing refers to the instance any more.
    let mut owned = unsafe { Box::from_raw(instance) };
    // A use after destruction finds no magic while the memory is not reused.
    owned.magic = 0;
    // The Khronos loader's words at the debug level, as the instance lets go of each layer's
    // library (which stays loaded while another instance holds it).
    for library in owned.layers.iter().flat_map(|chain| chain.layers.iter()).filter_map(|l| l.manifest.library_path.as_deref()) {
        log!(Level::DebugLayer, "Unloading layer library {library}");
    }
    drop(owned);
    // What the queries before it kept loaded goes, as with the Khronos loader: the next query or
    // instance sees the drivers as they are then.
    crate::platform::library_cache::release_all_preloaded();
}

/// Finishes the recording of one `vkCreateInstance` and appends its document to `file`
/// (`VK_LOADER_EXPLAIN`). A created instance's physical devices are listed, asked of the drivers
/// as at the application's first enumeration.
fn write_explanation(file: &str, recording: plan::Recording, result: VkResult, instance: Option<&Instance>) {
    if let Some(instance) = instance {
        // Errors were recorded (or logged) by the enumeration itself.
        let _ = instance.physical_devices.refresh(instance);
    }
    let mut plan = recording.finish();
    plan.result = Some(format!("{result:?}"));
    crate::api::process::describe_process(&mut plan);
    plan::document::append(file, &plan);
}
