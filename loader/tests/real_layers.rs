//! Real layers on Mesa's lavapipe, as a user has them (packages vulkan-validationlayers and
//! mesa-vulkan-drivers): the Khronos validation layer reports a deliberate misuse to a debug-utils
//! messenger, enabled through `ppEnabledLayerNames` and through `VK_INSTANCE_LAYERS`; Mesa's
//! device-select implicit layer is in the chain and `MESA_VK_DEVICE_SELECT` works; the overlay
//! layer loads; `vulkaninfo` with the validation layer prints what it prints through the system
//! loader.

mod common;

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::Path;
use std::process::Command;

use vk_generated::types::*;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
const VALIDATION: &str = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";
const DEVICE_SELECT: &str = "/usr/share/vulkan/implicit_layer.d/VkLayer_MESA_device_select.json";
const OVERLAY: &str = "/usr/share/vulkan/explicit_layer.d/VkLayer_MESA_overlay.json";

/// Runs the child scenario with the host's layer directories (no VK_LAYER_PATH overrides).
fn child(env: &[(&str, String)]) -> (String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"]).env("SCENARIO", "real");
    for (k, _) in std::env::vars() {
        if k.starts_with("VK_") || k.starts_with("MESA_") || k.starts_with("TEST_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("VK_DRIVER_FILES", LAVAPIPE);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Prints each message as `MESSENGER <severity> <message id>`.
///
/// # Safety
/// A `PFN_vkDebugUtilsMessengerCallbackEXT`: `data` points to valid callback data for the call.
unsafe extern "system" fn messenger_callback(
    severity: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _types: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _user: *mut c_void,
) -> VkBool32 {
    // SAFETY: `data` is valid for the call (the contract); its message id is NULL or a C string.
    let id = unsafe {
        let data = &*data;
        if data.pMessageIdName.is_null() { "".into() } else { CStr::from_ptr(data.pMessageIdName).to_string_lossy() }
    };
    println!("MESSENGER {:?} {id}", severity);
    VK_FALSE
}

/// The child: `TEST_APP_LAYERS` (comma list) enabled; with `TEST_MISUSE=1` a debug-utils messenger
/// is created and `vkCreateBuffer` is called with size 0 (a validation error).
#[test]
fn scenario_entry() {
    let Ok(_) = std::env::var("SCENARIO") else { return };
    println!();
    // SAFETY: loading our shipped libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::shipped_libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    let misuse = std::env::var("TEST_MISUSE").is_ok();
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let layers: Vec<CString> = std::env::var("TEST_APP_LAYERS").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(|s| CString::new(s).unwrap()).collect();
        let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let extensions: Vec<*const c_char> = if misuse { vec![c"VK_EXT_debug_utils".as_ptr()] } else { Vec::new() };
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            enabledLayerCount: layer_ptrs.len() as u32,
            ppEnabledLayerNames: layer_ptrs.as_ptr(),
            enabledExtensionCount: extensions.len() as u32,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        if misuse {
            let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
            let minfo = VkDebugUtilsMessengerCreateInfoEXT {
                messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
                messageType: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT | VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT,
                pfnUserCallback: Some(messenger_callback),
                ..Default::default()
            };
            println!("MESSENGER_RESULT {:?}", create_messenger.unwrap()(instance, &minfo, std::ptr::null(), &mut messenger));
        }
        let devices = common::list_devices(&get, instance);
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let dinfo = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        let r = create_device.unwrap()(devices[0], &dinfo, std::ptr::null(), &mut device);
        println!("DEVICE_RESULT {r:?}");
        if r == VkResult::SUCCESS {
            let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
            let dev = |name: &CStr| gdpa.unwrap()(device, name.as_ptr());
            let mut q = VkQueue::NULL;
            let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(dev(c"vkGetDeviceQueue"));
            get_queue.unwrap()(device, 0, 0, &mut q);
            let wait: PFN_vkQueueWaitIdle = std::mem::transmute(dev(c"vkQueueWaitIdle"));
            println!("QUEUE_WAIT {:?}", wait.unwrap()(q));
            if misuse {
                let create_buffer: PFN_vkCreateBuffer = std::mem::transmute(dev(c"vkCreateBuffer"));
                let binfo = VkBufferCreateInfo { size: 0, usage: VkBufferUsageFlags::TRANSFER_SRC_BIT, ..Default::default() };
                let mut buffer = VkBuffer::NULL;
                let r = create_buffer.unwrap()(device, &binfo, std::ptr::null(), &mut buffer);
                println!("BUFFER_RESULT {r:?}");
                if r == VkResult::SUCCESS {
                    let destroy_buffer: PFN_vkDestroyBuffer = std::mem::transmute(dev(c"vkDestroyBuffer"));
                    destroy_buffer.unwrap()(device, buffer, std::ptr::null());
                }
            }
            let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(dev(c"vkDestroyDevice"));
            destroy_device.unwrap()(device, std::ptr::null());
        }
        if misuse {
            let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
            destroy_messenger.unwrap()(instance, messenger, std::ptr::null());
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
        println!("DESTROYED");
    }
}

fn require(path: &str, package: &str) {
    assert!(Path::new(path).exists(), "{path} missing: install {package}");
}

fn assert_validation_caught_misuse(out: &str, err: &str) {
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("MESSENGER_RESULT VK_SUCCESS"), "{out}{err}");
    assert!(out.contains("DEVICE llvmpipe") && out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
    let reports: Vec<&str> = out.lines().filter(|l| l.starts_with("MESSENGER ")).collect();
    assert!(reports.iter().any(|l| l.contains("VUID-VkBufferCreateInfo-size-00912")), "no validation report:\n{out}\n{err}");
    assert!(out.contains("DESTROYED"), "{out}");
}

#[test]
fn validation_layer_through_pp_enabled_layer_names_reports_misuse() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    require(VALIDATION, "vulkan-validationlayers");
    let (out, err) = child(&[("TEST_APP_LAYERS", "VK_LAYER_KHRONOS_validation".into()), ("TEST_MISUSE", "1".into())]);
    assert_validation_caught_misuse(&out, &err);
}

#[test]
fn validation_layer_through_vk_instance_layers_reports_misuse() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    require(VALIDATION, "vulkan-validationlayers");
    let (out, err) = child(&[("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation".into()), ("TEST_MISUSE", "1".into()), ("VK_LOADER_DEBUG", "layer".into())]);
    assert_validation_caught_misuse(&out, &err);
    assert!(err.contains("VK_LAYER_KHRONOS_validation") && err.contains("named in VK_INSTANCE_LAYERS"), "{err}");
}

#[test]
fn mesa_device_select_is_active_and_selects() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    require(DEVICE_SELECT, "mesa-vulkan-drivers");
    let dir = common::scratch("device-select");
    let test_driver = common::driver_manifest(&dir, "test.json", &common::test_driver());
    let both = format!("{LAVAPIPE}:{}", test_driver.display());
    let (out, err) = child(&[("VK_DRIVER_FILES", both.clone()), ("VK_LOADER_DEBUG", "layer".into())]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
    assert!(err.contains("VK_LAYER_MESA_device_select") && err.contains("implicit layer"), "{err}");
    let devices = |out: &str| out.lines().filter_map(|l| l.strip_prefix("DEVICE ")).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(devices(&out).len(), 2, "{out}");
    // MESA_VK_DEVICE_SELECT=vendor:device puts that device first, whichever it is.
    let (out, _) = child(&[("VK_DRIVER_FILES", both.clone()), ("MESA_VK_DEVICE_SELECT", "10005:0".into())]);
    assert!(devices(&out)[0].starts_with("llvmpipe"), "{out}");
    let (out, _) = child(&[("VK_DRIVER_FILES", both.clone()), ("MESA_VK_DEVICE_SELECT", "10de:2330".into())]);
    assert!(devices(&out)[0].starts_with("Test Driver"), "{out}");
    // Its disable_environment turns it off.
    let (_, err) = child(&[("VK_DRIVER_FILES", both), ("NODEVICE_SELECT", "1".into()), ("VK_LOADER_DEBUG", "layer".into())]);
    assert!(!err.contains("0: VK_LAYER_MESA_device_select"), "{err}");
}

#[test]
fn mesa_overlay_layer_loads() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    let (out, err) = child(&[("VK_INSTANCE_LAYERS", "VK_LAYER_MESA_overlay".into()), ("VK_LOADER_DEBUG", "layer".into())]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("QUEUE_WAIT VK_SUCCESS"), "{out}{err}");
    assert!(err.contains("VK_LAYER_MESA_overlay"), "{err}");
}

/// "Validation on, device_select off, overlay on", as the Vulkan Configurator writes it, against
/// the installed layers: an application that enables no layer gets the validation layer (which
/// reports the misuse) and the overlay, in the file's order, and not Mesa's device-select (an
/// implicit layer, otherwise on). The layers the file does not name go at its end.
#[test]
fn vkconfig_settings_file_turns_installed_layers_on_and_off() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    require(VALIDATION, "vulkan-validationlayers");
    require(DEVICE_SELECT, "mesa-vulkan-drivers");
    require(OVERLAY, "mesa-vulkan-drivers");
    let dir = common::scratch("vkconfig-settings");
    let settings_dir = dir.join("vulkan/loader_settings.d");
    std::fs::create_dir_all(&settings_dir).unwrap();
    let entry = |name: &str, path: &str, control: &str, implicit: bool| {
        format!(r#"{{"name": "{name}", "path": "{path}", "control": "{control}", "treat_as_implicit_manifest": {implicit}}}"#)
    };
    let layers = [
        entry("VK_LAYER_KHRONOS_validation", VALIDATION, "on", false),
        entry("VK_LAYER_MESA_device_select", DEVICE_SELECT, "off", true),
        entry("VK_LAYER_MESA_overlay", OVERLAY, "on", false),
        r#"{"control": "unordered_layer_location"}"#.to_string(),
    ];
    let text = format!(
        r#"{{"file_format_version": "1.0.0", "settings_array": [{{"stderr_log": ["error"], "layers": [{}]}}]}}"#,
        layers.join(", ")
    );
    std::fs::write(settings_dir.join("vk_loader_settings.json"), text).unwrap();
    let (out, err) = child(&[("XDG_CONFIG_HOME", dir.to_str().unwrap().into()), ("TEST_MISUSE", "1".into()), ("VK_LOADER_DEBUG", "layer".into())]);
    assert_validation_caught_misuse(&out, &err);
    // `stderr_log` replaces VK_LOADER_DEBUG: the chain is not logged.
    assert!(!err.contains("instance layer chain"), "{err}");
    let (out, err) = child(&[("XDG_CONFIG_HOME", dir.to_str().unwrap().into())]);
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
    // The instance chain as logged: "[Vulkan Loader] LAYER:     <i>: <name> (...".
    let chain = |err: &str| -> Vec<String> {
        let entry = |l: &str| {
            let (index, rest) = l.strip_prefix("[Vulkan Loader] LAYER:")?.trim_start().split_once(": ")?;
            index.parse::<usize>().ok()?;
            Some(rest.split(' ').next()?.to_string())
        };
        err.lines().filter_map(entry).collect()
    };
    std::fs::write(
        settings_dir.join("vk_loader_settings.json"),
        format!(r#"{{"file_format_version": "1.0.0", "settings": {{"stderr_log": ["layer"], "layers": [{}]}}}}"#, layers.join(", ")),
    )
    .unwrap();
    let (_, err) = child(&[("XDG_CONFIG_HOME", dir.to_str().unwrap().into())]);
    let names = chain(&err);
    assert_eq!(names.get(..2), Some(&["VK_LAYER_KHRONOS_validation".to_string(), "VK_LAYER_MESA_overlay".to_string()][..]), "{err}");
    assert!(!names.iter().any(|n| n == "VK_LAYER_MESA_device_select"), "{err}");
}

/// Lines that differ between the loaders for reasons that have nothing to do with layers: the
/// header version each was built from, the extension only this loader implements, and the count
/// that includes it; the Khronos loader also repeats its VK_INSTANCE_LAYERS warning.
fn comparable(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            !(l.starts_with("Vulkan Instance Version")
                || l.contains("VK_LUNARG_direct_driver_loading")
                || l.starts_with("Instance Extensions: count")
                || l.contains("XDG_RUNTIME_DIR")
                || l.contains("env var 'VK_INSTANCE_LAYERS' defined"))
        })
        .collect()
}

#[test]
fn vulkaninfo_with_validation_layer_matches_the_system_loader() {
    require(LAVAPIPE, "mesa-vulkan-drivers");
    require(VALIDATION, "vulkan-validationlayers");
    if Command::new("vulkaninfo").arg("--help").output().is_err() {
        panic!("vulkaninfo missing: install vulkan-tools");
    }
    let dir = common::scratch("vulkaninfo-layers");
    std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join("libvulkan.so.1")).unwrap();
    let run = |ours: bool| {
        let mut cmd = Command::new("vulkaninfo");
        for (k, _) in std::env::vars() {
            if k.starts_with("VK_") || k.starts_with("MESA_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("VK_DRIVER_FILES", LAVAPIPE).env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation").env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        if ours {
            cmd.env("LD_LIBRARY_PATH", &dir);
        } else {
            cmd.env_remove("LD_LIBRARY_PATH");
        }
        let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
        assert!(out.status.success(), "vulkaninfo failed ({}): {}", if ours { "ours" } else { "system" }, String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let (ours, system) = (run(true), run(false));
    let (a, b) = (comparable(&ours), comparable(&system));
    assert!(a.len() > 500, "too little output to compare:\n{ours}");
    assert!(ours.contains("VK_LAYER_KHRONOS_validation"), "{ours}");
    if a != b {
        let first = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        panic!("first difference at line {first}:\n ours:   {:?}\n system: {:?}", a.get(first), b.get(first));
    }
}
