//! VK_EXT_debug_utils and VK_EXT_debug_report provided by the loader: callbacks chained to
//! `VkInstanceCreateInfo` hear the loader during creation; messengers created later hear
//! `vkSubmitDebugUtilsMessageEXT` / `vkDebugReportMessageEXT` once, and nothing after destruction.

mod common;

use std::ffi::{c_char, c_void, CStr};

use common::child;
use vk_generated::types::*;

/// Prints each message as `UTILS <tag> <severity> <message>`.
///
/// # Safety
/// A `PFN_vkDebugUtilsMessengerCallbackEXT` whose user data is a C string (the tag): `data` is
/// valid for the call and its message a C string.
unsafe extern "system" fn on_utils(
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    _types: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    user: *mut c_void,
) -> VkBool32 {
    // SAFETY: the contract.
    let (tag, message) = unsafe { (CStr::from_ptr(user as *const c_char), CStr::from_ptr((*data).pMessage)) };
    println!("UTILS {} {} {}", tag.to_string_lossy(), severity.0, message.to_string_lossy());
    VK_FALSE
}

/// Prints each message as `REPORT <tag> <flags> <message>`.
///
/// # Safety
/// A `PFN_vkDebugReportCallbackEXT` whose user data is a C string (the tag): `message` is a C
/// string.
unsafe extern "system" fn on_report(
    flags: VkDebugReportFlagsEXT,
    _type: VkDebugReportObjectTypeEXT,
    _object: u64,
    _location: usize,
    _code: i32,
    _prefix: *const c_char,
    message: *const c_char,
    user: *mut c_void,
) -> VkBool32 {
    // SAFETY: the contract.
    let (tag, message) = unsafe { (CStr::from_ptr(user as *const c_char), CStr::from_ptr(message)) };
    println!("REPORT {} {} {}", tag.to_string_lossy(), flags.0, message.to_string_lossy());
    VK_FALSE
}

#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!(); // the harness's "test scenario_entry ... " stays on a line of its own
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    // The callbacks get C-string literals (static) as their user data.
    unsafe {
        // Creation-time callbacks: utils hears warnings and errors, report hears everything.
        let report_info = VkDebugReportCallbackCreateInfoEXT {
            flags: VkDebugReportFlagsEXT(0x1f),
            pfnCallback: Some(on_report),
            pUserData: c"create".as_ptr() as *mut c_void,
            ..Default::default()
        };
        let utils_info = VkDebugUtilsMessengerCreateInfoEXT {
            pNext: &report_info as *const _ as *const c_void,
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1100),
            messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
            pfnUserCallback: Some(on_utils),
            pUserData: c"create".as_ptr() as *mut c_void,
            ..Default::default()
        };
        let extensions = [c"VK_EXT_debug_utils".as_ptr(), c"VK_EXT_debug_report".as_ptr()];
        // The application's layers and API version ("1.4.0"), when the scenario gives them.
        let layers: Vec<std::ffi::CString> = std::env::var("TEST_APP_LAYERS")
            .unwrap_or_default()
            .split(',')
            .filter(|n| !n.is_empty())
            .map(|n| std::ffi::CString::new(n).unwrap())
            .collect();
        let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let api_version = std::env::var("TEST_APP_API_VERSION").ok().map(|v| {
            let n: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
            vk_generated::make_api_version(0, n[0], n[1], n[2])
        });
        let app = VkApplicationInfo { apiVersion: api_version.unwrap_or(0), ..Default::default() };
        let info = VkInstanceCreateInfo {
            pNext: &utils_info as *const _ as *const c_void,
            pApplicationInfo: if api_version.is_some() { &app as *const _ } else { std::ptr::null() },
            enabledLayerCount: layer_ptrs.len() as u32,
            ppEnabledLayerNames: layer_ptrs.as_ptr(),
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS || !matches!(scenario.as_str(), "later" | "device-layers") {
            return;
        }
        println!("CREATED");
        // A messenger and a report callback created afterwards.
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT =
            std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let later = VkDebugUtilsMessengerCreateInfoEXT { pUserData: c"later".as_ptr() as *mut c_void, ..utils_info };
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        assert_eq!(create_messenger.unwrap()(instance, &later, std::ptr::null(), &mut messenger), VkResult::SUCCESS);
        let create_callback: PFN_vkCreateDebugReportCallbackEXT =
            std::mem::transmute(get(instance, c"vkCreateDebugReportCallbackEXT"));
        let later_report = VkDebugReportCallbackCreateInfoEXT { pUserData: c"later".as_ptr() as *mut c_void, ..report_info };
        let mut callback = VkDebugReportCallbackEXT::NULL;
        assert_eq!(create_callback.unwrap()(instance, &later_report, std::ptr::null(), &mut callback), VkResult::SUCCESS);
        if scenario == "device-layers" {
            create_device_naming_a_layer(&get, instance);
        }

        let submit: PFN_vkSubmitDebugUtilsMessageEXT = std::mem::transmute(get(instance, c"vkSubmitDebugUtilsMessageEXT"));
        let data = VkDebugUtilsMessengerCallbackDataEXT { pMessage: c"app says hi".as_ptr(), ..Default::default() };
        let error = VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT;
        let general = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;
        submit.unwrap()(instance, error, general, &data);
        // Filtered out: the messenger asked for warnings and errors only.
        submit.unwrap()(instance, VkDebugUtilsMessageSeverityFlagsEXT::VERBOSE_BIT_EXT, general, &data);
        let report: PFN_vkDebugReportMessageEXT = std::mem::transmute(get(instance, c"vkDebugReportMessageEXT"));
        let object_type = VkDebugReportObjectTypeEXT::INSTANCE_EXT;
        report.unwrap()(instance, VkDebugReportFlagsEXT::WARNING_BIT_EXT, object_type, 0, 0, 0, c"app".as_ptr(), c"app reports".as_ptr());

        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT =
            std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger.unwrap()(instance, messenger, std::ptr::null());
        let destroy_callback: PFN_vkDestroyDebugReportCallbackEXT =
            std::mem::transmute(get(instance, c"vkDestroyDebugReportCallbackEXT"));
        destroy_callback.unwrap()(instance, callback, std::ptr::null());
        submit.unwrap()(instance, error, general, &VkDebugUtilsMessengerCallbackDataEXT { pMessage: c"after destroy".as_ptr(), ..data });
        println!("DESTROYING");
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Creates (and destroys) a device naming a device layer the instance does not have.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks.
unsafe fn create_device_naming_a_layer(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    unsafe {
        let pd = common::physical_devices(get, instance)[0];
        let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let layers = [c"VK_LAYER_not_on_the_instance".as_ptr()];
        let info = VkDeviceCreateInfo {
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue,
            enabledLayerCount: 1,
            ppEnabledLayerNames: layers.as_ptr(),
            ..Default::default()
        };
        let mut device = VkDevice::NULL;
        assert_eq!(create.unwrap()(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(get(instance, c"vkDestroyDevice"));
        destroy.unwrap()(device, std::ptr::null());
    }
}

/// A driver list with a broken manifest beside a good one: the loader warns about the broken one.
fn drivers_with_a_broken_manifest(name: &str) -> (String, String) {
    let dir = common::scratch(name);
    let good = common::driver_manifest(&dir, "good.json", &common::test_driver());
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    (format!("{}:{}", broken.display(), good.display()), broken.display().to_string())
}

#[test]
fn callbacks_in_create_info_hear_the_loader_during_creation() {
    let (drivers, broken) = drivers_with_a_broken_manifest("debug-create");
    let (ok, out, err) = child("create", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    // Heard by both callbacks although VK_LOADER_DEBUG is unset (and so not printed to stderr).
    let warning = |prefix: &str, bits: u32| {
        out.lines().any(|l| l.starts_with(&format!("{prefix} create {bits} ")) && l.contains(&broken) && l.contains("invalid JSON"))
    };
    assert!(warning("UTILS", 0x100), "utils messenger missed the warning:\n{out}");
    assert!(warning("REPORT", 0x2), "report callback missed the warning:\n{out}");
    assert!(!err.contains(&broken), "printed without VK_LOADER_DEBUG:\n{err}");
    // The utils messenger asked for warnings and errors only; the report callback for all. A
    // driver or layer line without a severity is information, as with the Khronos loader.
    assert!(!out.lines().any(|l| l.starts_with("UTILS create 1 ")), "verbose reached a warning-only messenger:\n{out}");
    assert!(!out.lines().any(|l| l.starts_with("UTILS create 16 ")), "information reached a warning-only messenger:\n{out}");
    assert!(out.lines().any(|l| l == "REPORT create 1 Searching for driver manifest files"), "no driver line as information:\n{out}");
    assert!(out.lines().any(|l| l == "REPORT create 1 Searching for implicit layer manifest files"), "no layer line as information:\n{out}");
}

#[test]
fn messengers_created_later_hear_the_application_once_until_destroyed() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-later");
    let (ok, out, err) = child("later", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let after_creation = &out[out.find("CREATED").unwrap()..];
    let before_destroy = &after_creation[..after_creation.find("DESTROYING").unwrap()];
    let lines: Vec<&str> = before_destroy.lines().filter(|l| l.starts_with("UTILS") || l.starts_with("REPORT")).collect();
    assert_eq!(lines, ["UTILS later 4096 app says hi", "REPORT later 2 app reports"], "{out}");
    // Creation-time callbacks hear destruction again; the destroyed messengers hear nothing.
    let destruction = &after_creation[after_creation.find("DESTROYING").unwrap()..];
    assert!(!destruction.contains(" later "), "{destruction}");
    assert!(destruction.contains("REPORT create 1 vkDestroyInstance: destroying the instance of "), "creation callbacks did not hear destruction:\n{destruction}");
}

#[test]
fn drivers_with_debug_utils_get_a_messenger_of_their_own() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-driver");
    let env = [("VK_DRIVER_FILES", drivers), ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_debug_utils".into())];
    let (ok, out, err) = child("later", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let after_creation = &out[out.find("CREATED").unwrap()..];
    let before_destroy = &after_creation[..after_creation.find("DESTROYING").unwrap()];
    let lines: Vec<&str> = before_destroy.lines().filter(|l| l.starts_with("UTILS") || l.starts_with("REPORT")).collect();
    assert_eq!(
        lines,
        ["UTILS later 256 vk_test_driver: messenger created", "UTILS later 4096 app says hi", "REPORT later 2 app reports"],
        "{out}"
    );
}

/// Device layers are deprecated: naming one the instance lacks gets the Khronos loader's warning,
/// which the instance's messengers hear.
#[test]
fn messengers_hear_the_warning_about_device_layers() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-device-layers");
    let (ok, out, err) = child("device-layers", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let warning = "UTILS later 256 loader_create_device_chain: Using deprecated and ignored 'ppEnabledLayerNames' member of \
                   'VkDeviceCreateInfo' when creating a Vulkan device.";
    assert!(out.lines().any(|l| l == warning), "{out}");
}

/// A layer manifest of `api_version` for `library` (`extra`: more members of the `layer` object).
fn versioned_layer(dir: &std::path::Path, name: &str, api_version: &str, library: &std::path::Path, extra: &str) {
    let text = format!(
        r#"{{"file_format_version": "1.2.0", "layer": {{"name": "{name}", "type": "GLOBAL", "library_path": "{}",
            "api_version": "{api_version}", "implementation_version": "1", "description": "test layer {name}"{extra}}}}}"#,
        library.display()
    );
    std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
}

/// An implicit layer and an explicit one of API version 1.3, an explicit meta layer of 1.3 whose
/// component is 1.4: the environment and the application asking for the explicit ones.
fn layers_of_two_versions(name: &str) -> Vec<(&'static str, String)> {
    let dir = common::scratch(name);
    let (implicit, explicit) = (dir.join("implicit"), dir.join("explicit"));
    std::fs::create_dir_all(&implicit).unwrap();
    std::fs::create_dir_all(&explicit).unwrap();
    let disable = r#", "disable_environment": {"VK_TEST_DISABLE_OLD_IMPLICIT": "1"}"#;
    versioned_layer(&implicit, "VK_LAYER_TEST_old_implicit", "1.3.0", &common::tagged_layer(&dir, "oldimp"), disable);
    versioned_layer(&explicit, "VK_LAYER_TEST_old_explicit", "1.3.0", &common::tagged_layer(&dir, "oldexp"), "");
    versioned_layer(&explicit, "VK_LAYER_TEST_new", "1.4.0", &common::tagged_layer(&dir, "new"), "");
    let meta = r#"{"file_format_version": "1.2.0", "layer": {"name": "VK_LAYER_TEST_meta", "type": "GLOBAL", "api_version": "1.3.0",
        "implementation_version": "1", "description": "meta", "component_layers": ["VK_LAYER_TEST_new"]}}"#;
    std::fs::write(explicit.join("VK_LAYER_TEST_meta.json"), meta).unwrap();
    let driver = common::driver_manifest(&dir, "driver.json", &common::test_driver());
    vec![
        ("VK_DRIVER_FILES", driver.display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", implicit.display().to_string()),
        ("VK_LAYER_PATH", explicit.display().to_string()),
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_old_explicit,VK_LAYER_TEST_meta".into()),
    ]
}

/// The Khronos loader's warning for a layer older than the application (which vulkaninfo prints):
/// for each layer in the chain, implicit or explicit, meta layers counted by their components,
/// whose manifest's `api_version` is older in major.minor than `VkApplicationInfo::apiVersion`;
/// on stderr as a layer warning (`VK_LOADER_DEBUG=warn` or `=layer`), and to the messengers
/// chained to `VkInstanceCreateInfo` as a warning whatever `VK_LOADER_DEBUG` says.
#[test]
fn layers_older_than_the_application_are_warned_about() {
    let warning = |name: &str| {
        format!("Layer {name} uses API version 1.3 which is older than the application specified API version of 1.4. May cause issues.")
    };
    let expected = [warning("VK_LAYER_TEST_old_implicit"), warning("VK_LAYER_TEST_old_explicit")];
    let said = |text: &str, prefix: &str| -> Vec<String> {
        text.lines().filter_map(|l| l.strip_prefix(prefix)).filter(|m| m.contains("uses API version")).map(str::to_string).collect()
    };
    let env = layers_of_two_versions("debug-older-layer");
    for filter in ["warn", "layer"] {
        let mut env = env.clone();
        env.extend([("TEST_APP_API_VERSION", "1.4.0".to_string()), ("VK_LOADER_DEBUG", filter.to_string())]);
        let (ok, out, err) = child("create", &env);
        assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
        // The header is longer than the 32 columns others are padded to: no padding.
        assert_eq!(said(&err, "[Vulkan Loader] WARNING | LAYER: "), expected, "VK_LOADER_DEBUG={filter}:\n{err}");
        assert_eq!(said(&out, "UTILS create 256 "), expected, "{out}");
        assert_eq!(said(&out, "REPORT create 2 "), expected, "{out}");
    }
    // Not printed without VK_LOADER_DEBUG (or with another category), heard by the messengers all the same.
    for filter in [None, Some("error,driver,info")] {
        let mut env = env.clone();
        env.push(("TEST_APP_API_VERSION", "1.4.0".into()));
        env.extend(filter.map(|f| ("VK_LOADER_DEBUG", f.to_string())));
        let (ok, out, err) = child("create", &env);
        assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
        assert!(!err.contains("uses API version"), "VK_LOADER_DEBUG={filter:?}:\n{err}");
        assert_eq!(said(&out, "UTILS create 256 "), expected, "{out}");
    }
    // The patch version does not count (1.3.0 is not older than 1.3.250), nor does an
    // application without VkApplicationInfo (1.0).
    for version in [Some("1.3.250"), None] {
        let mut env = env.clone();
        env.push(("VK_LOADER_DEBUG", "warn,layer".into()));
        env.extend(version.map(|v| ("TEST_APP_API_VERSION", v.to_string())));
        let (ok, out, err) = child("create", &env);
        assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
        assert!(!err.contains("uses API version") && !out.contains("uses API version"), "apiVersion {version:?}:\n{err}{out}");
        assert!(err.contains("Insert instance layer \"VK_LAYER_TEST_old_implicit\""), "the layers are in the chain:\n{err}");
    }
}
