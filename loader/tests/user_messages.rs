//! What a user reads: nothing on stderr unless `VK_LOADER_DEBUG` (or a settings file) asks for it,
//! as with the Khronos loader; the application's messengers hear the errors and warnings about its
//! request whatever `VK_LOADER_DEBUG` says; each message names the real cause.

mod common;

use std::ffi::{c_char, c_void, CStr, CString};

use vk_generated::types::*;

/// Prints each message as `HEARD <severity bits> <message>`.
///
/// # Safety
/// A `PFN_vkDebugUtilsMessengerCallbackEXT`: `data` is valid for the call and its message a C string.
unsafe extern "system" fn on_message(
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    _types: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _user: *mut c_void,
) -> VkBool32 {
    // SAFETY: the contract.
    let message = unsafe { CStr::from_ptr((*data).pMessage) };
    println!("HEARD {} {}", severity.0, message.to_string_lossy());
    VK_FALSE
}

/// The child: creates an instance (with the layers of `TEST_APP_LAYERS`, a comma list, and a
/// messenger of every severity chained to it and created after it where `TEST_MESSENGER` is set),
/// enumerates the physical devices, creates a device on the first where `TEST_DEVICE_EXTENSIONS`
/// is set (the extensions it names, a comma list, enabled), and prints the results;
/// `TEST_INSTANCES` times (1 unless set).
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").is_err() {
        return;
    }
    println!();
    let with_messenger = std::env::var_os("TEST_MESSENGER").is_some();
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
    unsafe {
        let messenger = VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1111),
            messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
            pfnUserCallback: Some(on_message),
            ..Default::default()
        };
        let extensions = [c"VK_EXT_debug_utils".as_ptr()];
        let layers: Vec<CString> = std::env::var("TEST_APP_LAYERS").unwrap_or_default().split(',').filter(|n| !n.is_empty()).map(|n| CString::new(n).unwrap()).collect();
        let layer_names: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let mut info = VkInstanceCreateInfo { enabledLayerCount: layer_names.len() as u32, ppEnabledLayerNames: layer_names.as_ptr(), ..Default::default() };
        if with_messenger {
            info.pNext = &messenger as *const _ as *const c_void;
            info.enabledExtensionCount = 1;
            info.ppEnabledExtensionNames = extensions.as_ptr();
        }
        let instances: usize = std::env::var("TEST_INSTANCES").map_or(1, |n| n.parse().unwrap());
        for _ in 0..instances {
            let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
            let mut instance = VkInstance::NULL;
            let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
            println!("INSTANCE {result:?}");
            if result != VkResult::SUCCESS {
                continue;
            }
            let mut later = VkDebugUtilsMessengerEXT::NULL;
            if with_messenger {
                let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
                assert_eq!(create_messenger.unwrap()(instance, &messenger, std::ptr::null(), &mut later), VkResult::SUCCESS);
            }
            let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
            let mut count = 0;
            let result = enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
            println!("DEVICES {result:?} {count}");
            if let (Ok(wanted), true) = (std::env::var("TEST_DEVICE_EXTENSIONS"), count > 0) {
                let mut handles = vec![VkPhysicalDevice::NULL; count as usize];
                enumerate.unwrap()(instance, &mut count, handles.as_mut_ptr());
                let names: Vec<CString> = wanted.split(',').filter(|n| !n.is_empty()).map(|n| CString::new(n).unwrap()).collect();
                let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
                let priority = 1.0f32;
                let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
                let device_info = VkDeviceCreateInfo {
                    queueCreateInfoCount: 1,
                    pQueueCreateInfos: &queue,
                    enabledExtensionCount: pointers.len() as u32,
                    ppEnabledExtensionNames: pointers.as_ptr(),
                    ..Default::default()
                };
                let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
                let mut device = VkDevice::NULL;
                let result = create_device.unwrap()(handles[0], &device_info, std::ptr::null(), &mut device);
                println!("DEVICE {result:?}");
                if result == VkResult::SUCCESS {
                    let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(get(instance, c"vkDestroyDevice"));
                    destroy_device.unwrap()(device, std::ptr::null());
                }
            }
            if with_messenger {
                let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
                destroy_messenger.unwrap()(instance, later, std::ptr::null());
            }
            let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
            destroy.unwrap()(instance, std::ptr::null());
        }
    }
}

/// A scratch directory with a manifest for the test driver, and the environment that makes it the
/// only driver (the host's hidden, `HOME` private).
fn one_driver(name: &str) -> (std::path::PathBuf, Vec<(&'static str, String)>) {
    let dir = common::scratch(name);
    let manifest = common::driver_manifest(&dir, "test.json", &common::test_driver());
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = vec![("VK_DRIVER_FILES", manifest.display().to_string()), ("HOME", dir.join("home").display().to_string())];
    (dir, env)
}

/// The loader's lines on stderr.
fn loader_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.starts_with("[Vulkan Loader]") || l.starts_with("  ")).collect()
}

/// A program that probes for Vulkan on a machine without a usable driver (a media player, a CI
/// container) and did not ask for messages gets none on its stderr, as with the Khronos loader;
/// `VK_LOADER_DEBUG=error` still prints why.
#[test]
fn no_driver_prints_nothing_unless_asked() {
    let (dir, base) = one_driver("messages-no-driver");
    let nowhere = ("VK_DRIVER_FILES", dir.join("nowhere.json").display().to_string());
    let disabled = ("VK_LOADER_DRIVERS_DISABLE", "*".to_string());
    for (what, change) in [("no manifest", nowhere), ("every driver disabled", disabled)] {
        let mut env = base.clone();
        env.push(change.clone());
        let (ok, out, err) = common::child("quiet", &env);
        assert!(ok && out.contains("INSTANCE VK_ERROR_INCOMPATIBLE_DRIVER"), "{what}:\n{out}{err}");
        assert_eq!(loader_lines(&err), Vec::<&str>::new(), "{what}: printed without VK_LOADER_DEBUG");
        env.push(("VK_LOADER_DEBUG", "error".into()));
        let (_, _, err) = common::child("quiet", &env);
        assert!(err.contains("[Vulkan Loader] ERROR | DRIVER: vkCreateInstance: Found no drivers!"), "{what}: VK_LOADER_DEBUG=error:\n{err}");
    }
}

/// The messages a run's messenger heard at `severity` (debug-utils bits).
fn heard(out: &str, severity: u32) -> Vec<&str> {
    let prefix = format!("HEARD {severity} ");
    out.lines().filter_map(|l| l.strip_prefix(prefix.as_str())).collect()
}

const ERROR: u32 = 0x1000;

/// The errors the Khronos loader sends to an application's messenger without `VK_LOADER_DEBUG`
/// reach it from ours, in its words: no driver at `vkCreateInstance`; drivers but no physical
/// device at `vkEnumeratePhysicalDevices` (a driver for hardware the machine lacks).
#[test]
fn messengers_hear_why_there_is_no_device() {
    let (dir, mut env) = one_driver("messages-no-device");
    env.push(("TEST_MESSENGER", "1".into()));
    let mut no_driver = env.clone();
    no_driver.push(("VK_DRIVER_FILES", dir.join("nowhere.json").display().to_string()));
    let (ok, out, err) = common::child("no-driver", &no_driver);
    assert!(ok && out.contains("INSTANCE VK_ERROR_INCOMPATIBLE_DRIVER"), "{out}{err}");
    assert!(heard(&out, ERROR).contains(&"vkCreateInstance: Found no drivers!"), "{out}");

    env.push(("VK_TEST_DRIVER_DEVICES", String::new()));
    let (ok, out, err) = common::child("no-device", &env);
    assert!(ok && out.contains("DEVICES VK_ERROR_INITIALIZATION_FAILED 0"), "{out}{err}");
    assert!(heard(&out, ERROR).contains(&"setup_loader_term_phys_devs:  Failed to detect any valid GPUs in the current config"), "{out}");
    assert_eq!(loader_lines(&err), Vec::<&str>::new(), "printed without VK_LOADER_DEBUG");
}

/// Drivers found and then filtered away: the error names each manifest and the filter, variable
/// and value, never "no driver manifest found".
#[test]
fn filtered_drivers_are_named_with_their_filter() {
    let (dir, base) = one_driver("messages-deselected");
    let manifest = dir.join("test.json").display().to_string();
    for (variable, value, why) in [
        ("VK_LOADER_DRIVERS_SELECT", "*nvidia*", "not selected by VK_LOADER_DRIVERS_SELECT=*nvidia*"),
        ("VK_LOADER_DRIVERS_DISABLE", "*test*", "disabled by VK_LOADER_DRIVERS_DISABLE=*test*"),
    ] {
        let mut env = base.clone();
        env.extend([(variable, value.to_string()), ("VK_LOADER_DEBUG", "error".into())]);
        let (ok, out, err) = common::child("deselected", &env);
        assert!(ok && out.contains("INSTANCE VK_ERROR_INCOMPATIBLE_DRIVER"), "{out}{err}");
        let line = format!("[Vulkan Loader] ERROR | DRIVER:   {manifest}: {why}");
        assert!(err.lines().any(|l| l == line), "{line}\nnot in\n{err}");
        assert!(!err.contains("no driver manifest found"), "{err}");
    }
}

/// A layer the application asks for that is not there: its messenger hears the Khronos loader's
/// error, naming the layer's index in `ppEnabledLayerNames`, then ours, naming the layer.
#[test]
fn messengers_hear_a_missing_layer_as_the_khronos_loader_says_it() {
    let (dir, mut env) = one_driver("messages-missing-layer");
    common::layer_manifest(&dir, "a.json", "VK_LAYER_TEST_a", &common::test_layer(), "");
    env.extend([
        ("TEST_MESSENGER", "1".to_string()),
        ("VK_LAYER_PATH", dir.join("a.json").display().to_string()),
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_a,VK_LAYER_TEST_nowhere".into()),
    ]);
    let (ok, out, err) = common::child("missing-layer", &env);
    assert!(ok && out.contains("INSTANCE VK_ERROR_LAYER_NOT_PRESENT"), "{out}{err}");
    let errors = heard(&out, ERROR);
    assert!(errors.contains(&"loader_validate_layers: Layer 1 does not exist in the list of available layers"), "{out}");
    assert!(errors.iter().any(|m| m.contains("VK_LAYER_TEST_nowhere") && m.contains("not found")), "{out}");
}

/// `VK_LOADER_DEBUG=debug` says what the Khronos loader says at that level: the library each
/// driver manifest names; nothing of the other levels.
#[test]
fn debug_names_each_drivers_library() {
    let (_dir, mut env) = one_driver("messages-debug");
    env.push(("VK_LOADER_DEBUG", "debug".into()));
    let (ok, out, err) = common::child("debug", &env);
    assert!(ok && out.contains("INSTANCE VK_SUCCESS"), "{out}{err}");
    let line = format!("[Vulkan Loader] DEBUG:          Searching for ICD drivers named {}", common::test_driver().display());
    assert!(err.lines().any(|l| l == line), "{line}\nnot in\n{err}");
    assert!(loader_lines(&err).iter().all(|l| l.starts_with("[Vulkan Loader] DEBUG")), "{err}");
}

/// Without `HOME` (nor `XDG_CACHE_HOME`) there is no driver cache: said so, where a driver loaded
/// was said to be "not in the driver cache yet".
#[test]
fn no_home_says_there_is_no_cache() {
    let (_dir, mut env) = one_driver("messages-no-home");
    env.retain(|(var, _)| *var != "HOME");
    env.extend([("HOME", String::new()), ("XDG_CACHE_HOME", String::new()), ("VK_LOADER_DEBUG", "driver".into())]);
    let (ok, out, err) = common::child("no-home", &env);
    assert!(ok && out.contains("INSTANCE VK_SUCCESS"), "{out}{err}");
    let why = "no driver cache: HOME unset (and XDG_CACHE_HOME unset or not absolute)";
    assert!(err.lines().any(|l| l.contains("test.json: loaded in") && l.contains(why)), "{why}\nnot in\n{err}");
    assert!(err.contains(&format!("driver cache not used: {}", why.trim_start_matches("no driver cache: "))), "{err}");
    assert!(!err.contains("not in the driver cache yet"), "{err}");
}

/// `vk-loader cache --clear` names the files it removed, and says when there was nothing to remove
/// (it said "removed" either way).
#[test]
fn clearing_the_cache_reports_only_what_it_removed() {
    let dir = common::scratch("messages-clear");
    let clear = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vk-loader")).args(["cache", "--clear"]).env("XDG_CACHE_HOME", &dir).output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let file = dir.join("vulkan-loader-rs/drivers");
    assert_eq!(clear(), format!("nothing to remove: {} does not exist\n", file.display()));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "").unwrap();
    assert_eq!(clear(), format!("removed {}\n", file.display()));
    assert!(!file.exists());
}

/// A value an enumerated variable does not take is warned about, once per process however many
/// instances are made, naming the values it takes; it was taken silently as "on".
#[test]
fn an_unknown_value_is_warned_about_once() {
    let (_dir, mut env) = one_driver("messages-unknown-value");
    env.extend([("VK_LOADER_DRIVER_CACHE", "bogus".to_string()), ("VK_LOADER_LAZY_DRIVERS", "maybe".into()), ("VK_LOADER_DEBUG", "warn".into()), ("TEST_INSTANCES", "2".into())]);
    let (ok, out, err) = common::child("unknown-value", &env);
    assert!(ok && out.matches("INSTANCE VK_SUCCESS").count() == 2, "{out}{err}");
    let warned = |variable: &str, value: &str, words: &str| {
        let line = format!("[Vulkan Loader] WARNING:        {variable}={value}: not a value it takes ({words}); ignored");
        err.lines().filter(|l| *l == line).count()
    };
    assert_eq!(warned("VK_LOADER_DRIVER_CACHE", "bogus", "on, 1, true, yes, off, 0, false, no, verify"), 1, "{err}");
    assert_eq!(warned("VK_LOADER_LAZY_DRIVERS", "maybe", "on, 1, true, yes, off, 0, false, no"), 1, "{err}");
}

/// A name in VK_INSTANCE_LAYERS or a VK_LOADER_LAYERS_ENABLE pattern that matches no layer is in
/// `vk-loader explain`'s layers, with the layer it may be a misspelling of; it said only that the
/// real layer was off because nothing named it.
#[test]
fn explain_flags_a_layer_name_that_matches_nothing() {
    let (dir, mut env) = one_driver("messages-misspelt-layer");
    common::layer_manifest(&dir, "validation.json", "VK_LAYER_TEST_validation", &common::test_layer(), "");
    env.extend([
        ("VK_LAYER_PATH", dir.join("validation.json").display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", dir.join("none").display().to_string()),
        ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_validaton".into()),
        ("VK_LOADER_LAYERS_ENABLE", "*nowhere*".into()),
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_DATA_HOME", dir.join("data").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("XDG_DATA_DIRS", dir.join("share").display().to_string()),
    ]);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_vk-loader"));
    command.args(["explain", "--json"]).env_remove("VK_LOADER_EXPLAIN").envs(env.iter().map(|(k, v)| (k, v)));
    let run = command.output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)));
    let layer = |name: &str| doc["layers"].as_array().unwrap().iter().find(|l| l["name"] == name).cloned().unwrap_or_else(|| panic!("no layer {name} in {doc:#}"));
    let misspelt = layer("VK_LAYER_TEST_validaton");
    assert_eq!(misspelt["decision"], "rejected", "{misspelt:#}");
    assert_eq!(misspelt["reason"], "named in VK_INSTANCE_LAYERS, but no layer has this name (did you mean VK_LAYER_TEST_validation?)");
    assert_eq!(layer("*nowhere*")["reason"], "a VK_LOADER_LAYERS_ENABLE pattern, but no layer has this name");
    assert_eq!(layer("VK_LAYER_TEST_validation")["decision"], "off");
}

/// A configuration file a driver reads, changed a moment ago: the driver is loaded, and the line
/// names that file and why it is not trusted; it blamed the driver's manifest or library.
#[test]
fn a_file_too_new_to_trust_is_named() {
    let (dir, mut env) = one_driver("messages-too-new");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(dir.join("test.json")).unwrap().set_modified(old).unwrap();
    env.extend([("XDG_CACHE_HOME", dir.join("cache").display().to_string()), ("VK_LOADER_DEBUG", "driver".into())]);
    let (ok, out, err) = common::child("record", &env);
    assert!(ok && out.contains("DEVICES VK_SUCCESS 1"), "{out}{err}");
    let drirc = dir.join("home/.drirc");
    std::fs::write(&drirc, "<driconf/>\n").unwrap();
    let (ok, out, err) = common::child("too-new", &env);
    assert!(ok && out.contains("DEVICES VK_SUCCESS 1"), "{out}{err}");
    let why = format!("({} changed in the last two seconds: too new to trust until it settles)", drirc.display());
    assert!(err.lines().any(|l| l.contains("test.json: loaded in") && l.ends_with(&why)), "{why}\nnot in\n{err}");
}

/// `vk-loader explain --json` run with `env`: its document.
fn explain_json(env: &[(&str, String)]) -> serde_json::Value {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_vk-loader"));
    command.args(["explain", "--json"]).env_remove("VK_LOADER_EXPLAIN").envs(env.iter().map(|(k, v)| (k, v)));
    let run = command.output().unwrap();
    serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr)))
}

/// Explain's `context.environment` lists every variable the loader reads that is set, the driver
/// cache's too (it left them out, though they decide what the loader does); a layer manifest
/// rejected for its missing `api_version` keeps the name it gives (it was listed with an empty
/// name, so a search for the layer found nothing).
#[test]
fn explain_lists_every_variable_set_and_a_rejected_layers_name() {
    let (dir, mut env) = one_driver("messages-explain-context");
    let layers = dir.join("explicit");
    std::fs::create_dir_all(&layers).unwrap();
    std::fs::write(
        layers.join("no_version.json"),
        r#"{"file_format_version": "1.0.0", "layer": {"name": "VK_LAYER_TEST_no_version", "type": "GLOBAL",
            "library_path": "libnowhere.so", "implementation_version": "1", "description": "d"}}"#,
    )
    .unwrap();
    let set = [
        ("VK_LOADER_DRIVER_CACHE", "verify".to_string()),
        ("VK_LOADER_LAZY_DRIVERS", "off".into()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("DRIRC_CONFIGDIR", dir.join("drirc.d").display().to_string()),
    ];
    env.extend(set.iter().cloned());
    env.extend([
        ("VK_LAYER_PATH", layers.display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", dir.join("none").display().to_string()),
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_DATA_HOME", dir.join("data").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("XDG_DATA_DIRS", dir.join("share").display().to_string()),
    ]);
    let doc = explain_json(&env);
    for (variable, value) in &set {
        assert_eq!(doc["context"]["environment"][variable], value.as_str(), "{variable} in {:#}", doc["context"]);
    }
    let layer = doc["layers"].as_array().unwrap().iter().find(|l| l["name"] == "VK_LAYER_TEST_no_version").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(layer["decision"], "rejected");
    assert!(layer["reason"].as_str().unwrap().contains("\"api_version\""), "{layer:#}");
}

/// `vk-loader cache` names each application by its executable beside its digest (it gave the
/// digest alone: which program is `f0ae2736c7061df6`?).
#[test]
fn the_cache_names_each_application() {
    let (dir, mut env) = one_driver("messages-cache-names");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(dir.join("test.json")).unwrap().set_modified(old).unwrap();
    env.push(("XDG_CACHE_HOME", dir.join("cache").display().to_string()));
    let (ok, out, err) = common::child("record", &env);
    assert!(ok && out.contains("DEVICES VK_SUCCESS 1"), "{out}{err}");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_vk-loader")).arg("cache").envs(env.iter().map(|(k, v)| (k, v))).output().unwrap();
    let report = String::from_utf8_lossy(&run.stdout);
    let line = report.lines().find(|l| l.trim_start().starts_with("physical devices:")).unwrap_or_else(|| panic!("{report}"));
    let executable = std::env::current_exe().unwrap();
    assert!(line.contains(&format!("1 for {} (application ", executable.display())), "{line}\n{report}");
}

/// A device the driver refuses, or one asked with an extension nothing offers: the application's
/// messenger hears the Khronos loader's errors for it (the driver's library named), where ours
/// said nothing or only the first line.
#[test]
fn messengers_hear_why_vk_create_device_failed() {
    let (_dir, mut env) = one_driver("messages-create-device");
    env.extend([("TEST_MESSENGER", "1".to_string()), ("TEST_DEVICE_EXTENSIONS", String::new())]);
    let mut refused = env.clone();
    refused.push(("VK_TEST_DRIVER_FAULTS", "fail_create_device".into()));
    let (ok, out, err) = common::child("refused-device", &refused);
    assert!(ok && out.contains("DEVICE VK_ERROR_DEVICE_LOST"), "{out}{err}");
    let errors = heard(&out, ERROR);
    let driver = format!("terminator_CreateDevice: Failed in ICD {} vkCreateDevice call", common::test_driver().display());
    assert!(errors.contains(&driver.as_str()), "{driver}\nnot in\n{out}");
    assert!(errors.contains(&"vkCreateDevice:  Failed to create device chain."), "{out}");
    assert_eq!(loader_lines(&err), Vec::<&str>::new(), "printed without VK_LOADER_DEBUG");

    env.retain(|(k, _)| *k != "TEST_DEVICE_EXTENSIONS");
    env.push(("TEST_DEVICE_EXTENSIONS", "VK_KHR_nowhere".into()));
    let (ok, out, err) = common::child("missing-extension", &env);
    assert!(ok && out.contains("DEVICE VK_ERROR_EXTENSION_NOT_PRESENT"), "{out}{err}");
    let errors = heard(&out, ERROR);
    assert!(errors.contains(&"loader_validate_device_extensions: Device extension VK_KHR_nowhere not supported by selected physical device or enabled layers."), "{out}");
    assert!(errors.contains(&"vkCreateDevice: Failed to validate extensions in list"), "{out}");
}

/// `VK_LOADER_DEBUG=debug` also says what the Khronos loader says at that level about layers and
/// devices: each layer library loaded and let go, and each physical device found again at a later
/// enumeration (its handle kept); it said none of these.
#[test]
fn debug_names_layer_libraries_and_devices_found_again() {
    let (dir, mut env) = one_driver("messages-debug-layers");
    let implicit = dir.join("implicit");
    std::fs::create_dir_all(&implicit).unwrap();
    common::layer_manifest(&implicit, "imp.json", "VK_LAYER_TEST_imp", &common::test_layer(), r#", "disable_environment": {"NO_TEST_IMP": "1"}"#);
    env.extend([
        ("VK_IMPLICIT_LAYER_PATH", implicit.display().to_string()),
        ("VK_LAYER_PATH", dir.join("none").display().to_string()),
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_DATA_HOME", dir.join("data").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("XDG_DATA_DIRS", dir.join("share").display().to_string()),
        ("VK_LOADER_DEBUG", "debug".into()),
        ("TEST_DEVICE_EXTENSIONS", String::new()),
    ]);
    let (ok, out, err) = common::child("debug-layers", &env);
    assert!(ok && out.contains("DEVICE VK_SUCCESS"), "{out}{err}");
    let layer = common::test_layer().display().to_string();
    for line in [
        format!("[Vulkan Loader] DEBUG | LAYER:  Loading layer library {layer}"),
        format!("[Vulkan Loader] DEBUG | LAYER:  Unloading layer library {layer}"),
        "[Vulkan Loader] DEBUG | DRIVER: Copying old device 0 into new device 0".to_string(),
    ] {
        assert!(err.lines().any(|l| l == line), "{line}\nnot in\n{err}");
    }
}

/// A settings file's `log_locations` destination that is not an absolute path is warned about
/// once in a whole `vulkaninfo` run (many instances and pre-instance calls), as a user reads it;
/// it was reported 68 times in one run.
#[test]
fn a_relative_log_destination_is_warned_about_once() {
    let (dir, mut env) = one_driver("messages-relative-log");
    let settings = dir.join("config/vulkan/loader_settings.d/vk_loader_settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let text = r#"{"file_format_version": "1.0.0", "settings_array": [{"log_locations": [{"destinations": ["loader.log"], "filters": ["all"]}]}]}"#;
    std::fs::write(&settings, text).unwrap();
    let libs = dir.join("lib");
    std::fs::create_dir(&libs).unwrap();
    for link in ["libvulkan.so", "libvulkan.so.1"] {
        std::os::unix::fs::symlink(common::libvulkan(), libs.join(link)).unwrap();
    }
    env.extend([
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", dir.join("none").display().to_string()),
        ("VK_LOADER_DEBUG", "warn".into()),
        ("LD_LIBRARY_PATH", libs.display().to_string()),
    ]);
    let run = std::process::Command::new(common::vulkaninfo())
        .env_remove("VK_ICD_FILENAMES")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env_remove("VK_INSTANCE_LAYERS")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(out.contains("Instance Extensions"), "vulkaninfo did not run through the test driver:\n{out}\n{err}");
    let warned = err.lines().filter(|l| l.contains("destination \"loader.log\" ignored: not an absolute path")).count();
    assert_eq!(warned, 1, "{err}");
}
