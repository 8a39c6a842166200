//! The trace layer's settings (`file`, `commands`) through the three channels of the Khronos
//! conventions and their precedence (environment over `vk_layer_settings.txt` over
//! `VkLayerSettingsCreateInfoEXT`), with the release builds of our loader and the trace layer
//! over the test driver, and the manifest `cargo xtask install` writes listing both settings.
//!
//! Each run is a child process (this binary re-run with `SCENARIO` set) that creates an instance
//! with the layer enabled, lists and queries its physical devices, creates and destroys a device,
//! and destroys the instance; the test then reads which commands were traced where.

mod common;

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};

use serde_json::Value;
use vk_generated::types::*;
use VkLayer_rust_trace as vk_trace_layer;

/// A directory with the release trace layer, its manifest and a driver manifest.
struct Setup {
    dir: PathBuf,
    driver: PathBuf,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch(&format!("trace-settings-{name}"));
    std::fs::copy(common::shipped_library(vk_trace_layer::LIBRARY_FILE), dir.join(vk_trace_layer::LIBRARY_FILE)).unwrap();
    let relative = format!("./{}", vk_trace_layer::LIBRARY_FILE);
    vk_trace_layer::manifest(Path::new(&relative)).write(&dir.join("VkLayer_rust_trace.json")).unwrap();
    let driver = common::driver_manifest(&dir, "driver.json", &common::test_driver());
    Setup { dir, driver }
}

impl Setup {
    /// Runs the scenario with `env`; the commands traced into each file of `files` (relative
    /// to the test's directory), in order.
    fn run(&self, env: &[(&str, String)], files: &[&str]) -> Vec<Vec<String>> {
        let mut all = vec![
            ("VK_DRIVER_FILES", self.driver.display().to_string()),
            ("VK_LAYER_PATH", self.dir.display().to_string()),
            ("TEST_LIBVULKAN", common::shipped_libvulkan().display().to_string()),
            // No Vulkan Configurator file of the host's.
            ("XDG_DATA_HOME", self.dir.join("xdg").display().to_string()),
        ];
        all.extend(env.iter().cloned());
        let (ok, stdout, stderr) = common::child("trace", &all);
        assert!(ok && stdout.contains("SCENARIO_DONE"), "child failed:\n{stdout}\n{stderr}");
        files.iter().map(|f| traced(&self.dir.join(f))).collect()
    }

    fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    /// A `vk_layer_settings.txt` in `settings/`, and the variable that names that directory.
    fn settings_file(&self, text: &str) -> (&'static str, String) {
        let dir = self.dir.join("settings");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("vk_layer_settings.txt"), text).unwrap();
        ("VK_LAYER_SETTINGS_PATH", dir.display().to_string())
    }
}

/// The commands of a trace file's lines, a run of the same command counted once (the two-call
/// enumerations); none when there is no file.
fn traced(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut commands: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))["command"].as_str().unwrap().to_string())
        .collect();
    commands.dedup();
    commands
}

const ALL: &[&str] = &[
    "vkCreateInstance",
    "vkEnumeratePhysicalDevices",
    "vkGetPhysicalDeviceProperties",
    "vkCreateDevice",
    "vkDestroyDevice",
    "vkDestroyInstance",
];

#[test]
fn file_by_environment_and_the_older_name() {
    let s = setup("env");
    let got = s.run(&[("VK_RUST_TRACE_FILE", s.path("full.jsonl"))], &["full.jsonl"]);
    assert_eq!(got[0], ALL);
    let got = s.run(&[("VK_TRACE_FILE", s.path("trimmed.jsonl"))], &["trimmed.jsonl"]);
    assert_eq!(got[0], ALL);
    let got = s.run(&[("VK_LAYER_RUST_TRACE_FILE", s.path("alias.jsonl"))], &["alias.jsonl"]);
    assert_eq!(got[0], ALL);
}

#[test]
fn commands_by_environment_its_own_lifecycle_included() {
    let s = setup("env-commands");
    let env = [
        ("VK_RUST_TRACE_FILE", s.path("t.jsonl")),
        ("VK_RUST_TRACE_COMMANDS", "vkGetPhysicalDevice*,vkCreateDevice".to_string()),
    ];
    assert_eq!(s.run(&env, &["t.jsonl"])[0], ["vkGetPhysicalDeviceProperties", "vkCreateDevice"]);
    let env = [("VK_RUST_TRACE_FILE", s.path("d.jsonl")), ("VK_RUST_TRACE_COMMANDS", "vkDestroy*".to_string())];
    assert_eq!(s.run(&env, &["d.jsonl"])[0], ["vkDestroyDevice", "vkDestroyInstance"]);
}

#[test]
fn settings_file() {
    let s = setup("file");
    let text = format!("# the trace layer\nrust_trace.file = {}\nrust_trace.commands = vkCreate*\n", s.path("f.jsonl"));
    let got = s.run(&[s.settings_file(&text)], &["f.jsonl"]);
    assert_eq!(got[0], ["vkCreateInstance", "vkCreateDevice"]);
}

#[test]
fn application_settings() {
    let s = setup("api");
    let env = [("TEST_API_FILE", s.path("a.jsonl")), ("TEST_API_COMMANDS", "vkEnumerate*,vkDestroyInstance".to_string())];
    let got = s.run(&env, &["a.jsonl"]);
    assert_eq!(got[0], ["vkEnumeratePhysicalDevices", "vkDestroyInstance"]);
}

#[test]
fn environment_over_file_over_application() {
    let s = setup("precedence");
    let file = s.settings_file(&format!("rust_trace.file = {}\nrust_trace.commands = vkCreate*\n", s.path("file.jsonl")));
    let api = [("TEST_API_FILE", s.path("api.jsonl")), ("TEST_API_COMMANDS", "vkDestroy*".to_string())];
    // The environment's file, the settings file's commands; the application's neither.
    let mut env = vec![file.clone(), ("VK_RUST_TRACE_FILE", s.path("env.jsonl"))];
    env.extend(api.iter().cloned());
    let got = s.run(&env, &["env.jsonl", "file.jsonl", "api.jsonl"]);
    assert_eq!(got, [vec!["vkCreateInstance", "vkCreateDevice"], vec![], vec![]]);
    // Without the environment: the settings file's.
    let mut env = vec![file];
    env.extend(api.iter().cloned());
    let got = s.run(&env, &["file.jsonl", "api.jsonl"]);
    assert_eq!(got, [vec!["vkCreateInstance", "vkCreateDevice"], vec![]]);
}

#[test]
fn a_bad_glob_is_logged_and_the_default_used() {
    let s = setup("bad");
    let env = [("VK_RUST_TRACE_FILE", s.path("b.jsonl")), ("VK_RUST_TRACE_COMMANDS", "[".to_string())];
    assert_eq!(s.run(&env, &["b.jsonl"])[0], ALL);
}

/// The manifest `cargo xtask install` and `cargo xtask package` write (`vk_trace_layer::manifest`)
/// lists both settings for the Vulkan Configurator, `VK_EXT_layer_settings` and
/// `VK_EXT_tooling_info`.
#[test]
fn manifest_lists_the_settings() {
    let text = vk_trace_layer::manifest(Path::new("libVkLayer_rust_trace.so")).to_json();
    let value: Value = serde_json::from_str(&text).unwrap();
    let settings = value["layer"]["features"]["settings"].as_array().unwrap();
    let keys: Vec<(&str, &str, &str)> = settings
        .iter()
        .map(|s| (s["key"].as_str().unwrap(), s["type"].as_str().unwrap(), s["env"].as_str().unwrap()))
        .collect();
    assert_eq!(keys, [("file", "SAVE_FILE", "VK_RUST_TRACE_FILE"), ("commands", "LIST", "VK_RUST_TRACE_COMMANDS")]);
    assert_eq!(value["layer"]["instance_extensions"][0]["name"], "VK_EXT_layer_settings");
    assert_eq!(value["layer"]["device_extensions"][0]["name"], "VK_EXT_tooling_info");
}

/// The child: `TEST_API_FILE` / `TEST_API_COMMANDS` (a comma list) are passed as the
/// application's `VkLayerSettingsCreateInfoEXT`.
#[test]
fn scenario_entry() {
    let Ok(_) = std::env::var("SCENARIO") else { return };
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };

    let layer = CString::new(vk_trace_layer::LAYER_NAME).unwrap();
    let file = std::env::var("TEST_API_FILE").ok().map(|f| CString::new(f).unwrap());
    let commands: Vec<CString> =
        std::env::var("TEST_API_COMMANDS").unwrap_or_default().split(',').filter(|c| !c.is_empty()).map(|c| CString::new(c).unwrap()).collect();
    let file_value = file.as_ref().map(|f| f.as_ptr());
    let command_values: Vec<*const c_char> = commands.iter().map(|c| c.as_ptr()).collect();
    let mut settings = Vec::new();
    let setting = |name: &'static CStr, count: usize, values: *const c_void| VkLayerSettingEXT {
        pLayerName: layer.as_ptr(),
        pSettingName: name.as_ptr(),
        r#type: VkLayerSettingTypeEXT::STRING_EXT,
        valueCount: count as u32,
        pValues: values,
    };
    if let Some(f) = &file_value {
        settings.push(setting(c"file", 1, f as *const *const c_char as *const c_void));
    }
    if !commands.is_empty() {
        settings.push(setting(c"commands", command_values.len(), command_values.as_ptr() as *const c_void));
    }
    let layer_settings = VkLayerSettingsCreateInfoEXT { settingCount: settings.len() as u32, pSettings: settings.as_ptr(), ..Default::default() };
    let layers = [layer.as_ptr()];
    let info = VkInstanceCreateInfo {
        pNext: if settings.is_empty() { std::ptr::null() } else { &layer_settings as *const _ as *const c_void },
        enabledLayerCount: 1,
        ppEnabledLayerNames: layers.as_ptr(),
        ..Default::default()
    };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let devices = common::list_devices(&get, instance);
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let device_info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        assert_eq!(create_device.unwrap()(devices[0], &device_info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
        destroy_device.unwrap()(device, std::ptr::null());
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
    println!("SCENARIO_DONE");
}
