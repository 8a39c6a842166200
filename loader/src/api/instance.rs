//! `vkCreateInstance` / `vkDestroyInstance` and the global commands: the layers are chosen and the
//! instance created through their chain, or directly on the drivers (`chain::drivers`).

use std::ffi::{c_char, CStr};

use vk_generated::types::*;

use crate::chain::drivers::{all_instance_extensions, create_drivers, instance_extensions_per_driver, new_instance};
use crate::debug::log::{self, Level};
use crate::debug::messengers;
use crate::ffi::{name_of, names};
use crate::ffi;
use crate::object::instance::Instance;
use crate::plan;
use crate::platform::host_alloc::AllocatorScope;

pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        crate::chain::pre_instance::extension_properties(pLayerName, pPropertyCount, pProperties, terminator_EnumerateInstanceExtensionProperties)
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
            return match crate::chain::layer_extensions::instance_extensions_of(CStr::from_ptr(pLayerName)) {
                Some(list) => ffi::fill(&list, pPropertyCount, pProperties),
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
        ffi::fill(&all, pPropertyCount, pProperties)
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceLayerProperties(
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        crate::chain::pre_instance::layer_properties(pPropertyCount, pProperties, terminator_EnumerateInstanceLayerProperties)
            .unwrap_or_else(|| terminator_EnumerateInstanceLayerProperties(std::ptr::null(), pPropertyCount, pProperties))
    })
}

unsafe extern "system" fn terminator_EnumerateInstanceLayerProperties(
    _chain: *const vk_generated::layer_abi::VkEnumerateInstanceLayerPropertiesChain,
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    ffi::guard("vkEnumerateInstanceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        let layers: Vec<VkLayerProperties> = crate::discover::layers::load(true).iter().map(crate::discover::layers::properties).collect();
        ffi::fill(&layers, pPropertyCount, pProperties)
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceVersion(pApiVersion: *mut u32) -> VkResult {
    ffi::guard("vkEnumerateInstanceVersion", VkResult::ERROR_UNKNOWN, || {
        let _one_reading = crate::discover::layers::OneReading::enter();
        crate::chain::pre_instance::version(pApiVersion, terminator_EnumerateInstanceVersion)
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
        let _settings = crate::manifest::settings::OneLook::enter();
        let explain_file = plan::document::requested_file();
        let recording = explain_file.is_some().then(plan::Recording::start);
        let creation_callbacks = messengers::callbacks_in_chain((*pCreateInfo).pNext);
        let _scope = messengers::Scope::enter(creation_callbacks.clone());
        let (result, created) = match create_instance(&*pCreateInfo, pAllocator, creation_callbacks) {
            Ok(instance) if memory.failed() => {
                destroy_instance(Box::into_raw(instance), pAllocator);
                (VkResult::ERROR_OUT_OF_HOST_MEMORY, VkInstance::NULL)
            }
            Ok(instance) => (VkResult::SUCCESS, VkInstance(Box::into_raw(instance) as *mut _)),
            Err(_) if memory.failed() => (VkResult::ERROR_OUT_OF_HOST_MEMORY, VkInstance::NULL),
            Err(result) => (result, VkInstance::NULL),
        };
        if let (Some(file), Some(recording)) = (explain_file, recording) {
            write_explanation(&file, recording, result, created);
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
    creation_callbacks: Vec<messengers::Callback>,
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
    messengers::Scope::set_instance(instance.id());
    warn_about_api_variant(info);
    let app_layers = names(info.ppEnabledLayerNames, info.enabledLayerCount);
    let app_api_version = info.pApplicationInfo.as_ref().map_or(0, |a| a.apiVersion);
    let layers = crate::chain::instance_layers::select(&app_layers, app_api_version)?;
    if !layers.is_empty() {
        // Held by address while the chain runs: its terminator creates the drivers into it, and
        // layers may reach it through its handle.
        let pending = Box::into_raw(instance);
        // SAFETY: an instance no one else refers to; the create info and allocator are the caller's.
        let created = unsafe { crate::chain::instance_layers::create_instance(pending, info, allocator, layers) };
        // SAFETY: from `Box::into_raw` above; the chain has returned, and nothing else refers to
        // the instance (its handle is not the application's yet).
        let instance = unsafe { Box::from_raw(pending) };
        return created.map(|()| instance);
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

pub unsafe extern "system" fn vkDestroyInstance(instance: VkInstance, pAllocator: *const VkAllocationCallbacks) {
    ffi::guard("vkDestroyInstance", (), || {
        if instance.is_null() {
            return;
        }
        crate::handles::check_instance(instance.0, "vkDestroyInstance", "instance");
        destroy_instance(instance.0.cast::<Instance>(), pAllocator);
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
        if shared.layers.is_some() {
            // Down the chain; its terminator destroys the drivers' instances.
            // SAFETY: the caller's promise for `allocator`.
            unsafe { crate::chain::instance_layers::destroy_instance(shared, allocator) };
        }
        // Unless a layer did not call down.
        // SAFETY: as above.
        unsafe { shared.destroy_drivers(allocator) };
    }
    // SAFETY: the chain has returned: nothing refers to the instance any more.
    let mut owned = unsafe { Box::from_raw(instance) };
    // A use after destruction finds no magic while the memory is not reused.
    owned.magic = 0;
    drop(owned);
    // What the queries before it kept loaded goes, as with the Khronos loader: the next query or
    // instance sees the drivers as they are then.
    crate::platform::library_cache::release_all_preloaded();
}

/// Finishes the recording of one `vkCreateInstance` and appends its document to `file`
/// (`VK_LOADER_EXPLAIN`). A created instance's physical devices are listed, asked of the drivers
/// as at the application's first enumeration.
///
/// # Safety
/// `instance` is the instance just created, or null.
unsafe fn write_explanation(file: &str, recording: plan::Recording, result: VkResult, instance: VkInstance) {
    if let Some(instance) = Instance::from_handle(instance) {
        // Errors were recorded (or logged) by the enumeration itself.
        let _ = instance.physical_devices.refresh(instance);
    }
    let mut plan = recording.finish();
    plan.result = Some(format!("{result:?}"));
    plan.settings_file = crate::manifest::settings::current().map(|s| s.path.clone());
    plan::document::append(file, &plan);
}
