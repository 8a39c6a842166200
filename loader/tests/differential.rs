//! Differential tests against the Khronos loader: every case of a matrix of inputs (environment
//! variables, manifests, broken files and libraries) runs in two fresh child processes, one
//! through our library and one through the system's Khronos loader (Debian's `libvulkan1`,
//! 1.3.239 in CI), and what the application sees must be the same: `vkCreateInstance`'s result,
//! the physical devices and groups, the active layers (`vkEnumerateDeviceLayerProperties`),
//! `vkCreateDevice`'s result and how the process ended. A case that differs by design says why;
//! the same table is in docs/compatibility.md. Besides: without `VK_LOADER_DEBUG`, our child
//! prints no stderr line the system loader's does not, and its messenger hears every error and
//! warning the system loader's hears (except the messages listed as reworded or not said yet).
//!
//! The children run on the project's test driver and Mesa's lavapipe, with the host's manifest
//! directories hidden (empty `HOME` and XDG directories) or, for the `desktop` cases, with
//! `/usr/share` searched as on a Debian desktop: Mesa's device-select implicit layer in the chain.

mod common;

use std::ffi::{c_char, c_void, CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use vk_generated::types::*;

const SYSTEM_LOADER: &str = if cfg!(target_arch = "x86") { "/usr/lib/i386-linux-gnu/libvulkan.so.1" } else { "/usr/lib/x86_64-linux-gnu/libvulkan.so.1" };
const LAVAPIPE: &str = common::LAVAPIPE;
const DEVICE_SELECT: &str = "/usr/share/vulkan/implicit_layer.d/VkLayer_MESA_device_select.json";

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Prints each error or warning a messenger hears as `HEARD <severity bits> <message>`, the
/// message on one line.
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
    println!("HEARD {} {}", severity.0, message.to_string_lossy().replace('\n', " "));
    VK_FALSE
}

/// The messenger each child has, chained to `VkInstanceCreateInfo` and created after: errors and
/// warnings of every type.
fn messenger_info() -> VkDebugUtilsMessengerCreateInfoEXT {
    VkDebugUtilsMessengerCreateInfoEXT {
        messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT | VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
        messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
        pfnUserCallback: Some(on_message),
        ..Default::default()
    }
}

/// The child: loads `DIFF_LIBRARY`, enables the layers of `DIFF_APP_LAYERS` (comma list) and
/// prints what an application sees, one fact a line.
#[test]
fn scenario_entry() {
    let Ok(library) = std::env::var("DIFF_LIBRARY") else { return };
    println!();
    // SAFETY: loading a Vulkan loader (ours or the system's) runs only its initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(library).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    let names: Vec<CString> = std::env::var("DIFF_APP_LAYERS").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(|s| CString::new(s).unwrap()).collect();
    let layers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance and devices are the loader's, used before they are destroyed; `layers` and the
    // other pointers point to locals that outlive each call.
    unsafe {
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 1, 0), ..Default::default() };
        let messenger = messenger_info();
        let extensions = [c"VK_EXT_debug_utils".as_ptr()];
        let info = VkInstanceCreateInfo {
            pNext: &messenger as *const _ as *const c_void,
            pApplicationInfo: &app,
            enabledLayerCount: layers.len() as u32,
            ppEnabledLayerNames: layers.as_ptr(),
            enabledExtensionCount: 1,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("INSTANCE {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let mut later = VkDebugUtilsMessengerEXT::NULL;
        create_messenger.unwrap()(instance, &messenger, std::ptr::null(), &mut later);
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut count = 0;
        let result = enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        if result == VkResult::SUCCESS {
            enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
        }
        devices.truncate(count as usize);
        println!("DEVICES {result:?} {count}");
        let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        for &d in &devices {
            let mut p = VkPhysicalDeviceProperties::default();
            properties.unwrap()(d, &mut p);
            println!("DEVICE {} {:x}:{:x}", common::fixed_str(&p.deviceName), p.vendorID, p.deviceID);
        }
        let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
        let mut count = 0;
        let result = groups.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut list = vec![VkPhysicalDeviceGroupProperties::default(); count as usize];
        if result == VkResult::SUCCESS {
            groups.unwrap()(instance, &mut count, list.as_mut_ptr());
        }
        let sizes: Vec<String> = list.iter().take(count as usize).map(|g| g.physicalDeviceCount.to_string()).collect();
        println!("GROUPS {result:?} [{}]", sizes.join(","));
        if let Some(&first) = devices.first() {
            let device_layers: PFN_vkEnumerateDeviceLayerProperties = std::mem::transmute(get(instance, c"vkEnumerateDeviceLayerProperties"));
            let mut count = 0;
            device_layers.unwrap()(first, &mut count, std::ptr::null_mut());
            let mut props = vec![VkLayerProperties::default(); count as usize];
            device_layers.unwrap()(first, &mut count, props.as_mut_ptr());
            let names: Vec<String> = props.iter().take(count as usize).map(|p| common::fixed_str(&p.layerName)).collect();
            println!("LAYERS [{}]", names.join(","));
            let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
            let priority = 1.0f32;
            let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
            let dinfo = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
            let mut device = VkDevice::NULL;
            let result = create_device.unwrap()(first, &dinfo, std::ptr::null(), &mut device);
            println!("CREATE_DEVICE {result:?}");
            if result == VkResult::SUCCESS {
                let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(get(instance, c"vkDestroyDevice"));
                destroy_device.unwrap()(device, std::ptr::null());
            }
        }
        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger.unwrap()(instance, later, std::ptr::null());
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// What a case must show.
#[derive(Clone, Copy)]
enum Expect {
    /// What the application sees is the same through both loaders.
    Same,
    /// Different by design, for the reason given; our side shows `ours` (part of the summary).
    Differs { ours: &'static str, why: &'static str },
}

struct Case {
    name: &'static str,
    /// `/usr/share` searched for manifests (Mesa's device-select implicit layer, the packaged
    /// drivers and layers), as on a Debian desktop; otherwise the host's directories are hidden.
    desktop: bool,
    env: Vec<(&'static str, String)>,
    /// The application's `ppEnabledLayerNames`.
    app_layers: &'static str,
    expect: Expect,
}

/// The files the cases name, written once into a scratch directory.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let root = common::scratch("differential");
        for dir in ["empty", "drivers/folder", "drivers/pair", "layers", "xdg/vulkan/implicit_layer.d", "home"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        let f = Fixture { root };
        let drivers = f.path("drivers");
        common::driver_manifest(&drivers, "test.json", &common::test_driver());
        common::driver_manifest(&f.path("drivers/folder"), "test.json", &common::test_driver());
        common::driver_manifest(&f.path("drivers/pair"), "a.json", &common::tagged_driver(&drivers, "a"));
        common::driver_manifest(&f.path("drivers/pair"), "b.json", &common::tagged_driver(&drivers, "b"));
        common::driver_manifest(&drivers, "refuses.json", &common::tagged_driver(&drivers, "refuses"));
        common::driver_manifest(&drivers, "fails.json", &common::tagged_driver(&drivers, "fails"));
        common::driver_manifest(&drivers, "missing_library.json", &drivers.join("libnowhere.so"));
        std::fs::write(drivers.join("not_elf.so"), "not a library\n").unwrap();
        common::driver_manifest(&drivers, "not_elf.json", &drivers.join("not_elf.so"));
        common::driver_manifest(&drivers, "foreign.json", &foreign_library(&drivers));
        common::driver_manifest(&drivers, "no_entry_points.json", Path::new(NO_VULKAN_LIBRARY));
        std::fs::write(drivers.join("not_json.json"), "{ \"file_format_version\": \"1.0.1\", \"ICD\": ").unwrap();
        std::fs::write(drivers.join("wrong_types.json"), r#"{"file_format_version": "1.0.1", "ICD": {"library_path": 7, "api_version": "1.4.0"}}"#).unwrap();
        let future = std::fs::read_to_string(drivers.join("test.json")).unwrap().replace("\"1.0.1\"", "\"2.0.0\"");
        std::fs::write(drivers.join("future_version.json"), future).unwrap();

        let layers = f.path("layers");
        common::layer_manifest(&layers, "a.json", "VK_LAYER_TEST_a", &common::test_layer(), "");
        common::layer_manifest(&layers, "no_entry_points.json", "VK_LAYER_TEST_no_entry_points", Path::new(NO_VULKAN_LIBRARY), "");
        common::layer_manifest(&layers, "missing_library.json", "VK_LAYER_TEST_missing_library", &layers.join("libnowhere.so"), "");
        // A broken manifest beside a good one, in a folder of their own.
        let not_json = f.path("layers_not_json");
        std::fs::create_dir_all(&not_json).unwrap();
        std::fs::write(not_json.join("a_not_json.json"), "{ \"layer\": [").unwrap();
        common::layer_manifest(&not_json, "b.json", "VK_LAYER_TEST_a", &common::test_layer(), "");
        let meta = |file: &str, name: &str, components: &str| {
            let text = format!(
                r#"{{"file_format_version": "1.1.1", "layer": {{"name": "{name}", "type": "GLOBAL", "api_version": "1.3.0",
                    "implementation_version": "1", "description": "meta", "component_layers": [{components}]}}}}"#
            );
            std::fs::write(layers.join(file), text).unwrap();
        };
        meta("meta.json", "VK_LAYER_TEST_meta", r#""VK_LAYER_TEST_a""#);
        meta("meta_missing.json", "VK_LAYER_TEST_meta_missing", r#""VK_LAYER_TEST_a", "VK_LAYER_TEST_nowhere""#);
        let foreign_layer = foreign_library(&layers);
        common::layer_manifest(&layers, "foreign.json", "VK_LAYER_TEST_foreign", &foreign_layer, "");
        std::fs::write(layers.join("not_elf.so"), "not a library\n").unwrap();
        common::layer_manifest(&layers, "not_elf.json", "VK_LAYER_TEST_not_elf", &layers.join("not_elf.so"), "");
        let future = std::fs::read_to_string(layers.join("a.json")).unwrap().replace("VK_LAYER_TEST_a", "VK_LAYER_TEST_future").replace("\"1.2.0\"", "\"2.0.0\"");
        std::fs::write(layers.join("future_version.json"), future).unwrap();
        let settings = f.path("config/vulkan/loader_settings.d");
        std::fs::create_dir_all(&settings).unwrap();
        let layer = f.file("layers/a.json");
        let text = format!(
            r#"{{"file_format_version": "1.0.0", "settings_array": [{{"layers": [
                {{"control": "on", "name": "VK_LAYER_TEST_a", "path": "{layer}", "treat_as_implicit_manifest": false}}]}}]}}"#
        );
        std::fs::write(settings.join("vk_loader_settings.json"), text).unwrap();
        f.write_json_variants();
        let implicit = f.path("xdg/vulkan/implicit_layer.d");
        let switches = r#", "enable_environment": {"DIFF_IMPLICIT": "1"}, "disable_environment": {"DIFF_NO_IMPLICIT": "1"}"#;
        common::layer_manifest(&implicit, "implicit.json", "VK_LAYER_TEST_implicit", &common::tagged_layer(&layers, "implicit"), switches);
        f
    }

    /// Manifests the Khronos loader's JSON reader (cJSON) reads where a strict JSON parser would
    /// not, or reads its own way: a byte-order mark, text or a NUL byte after the value, a key
    /// given twice (the first counts), a file name that is not UTF-8. The drivers are in
    /// `drivers/json`, the layers (each `VK_LAYER_TEST_a`) in folders `layers_json/<variant>`.
    fn write_json_variants(&self) {
        let drivers = self.path("drivers/json");
        std::fs::create_dir_all(&drivers).unwrap();
        let driver = std::fs::read(common::driver_manifest(&drivers, "plain.json", &common::test_driver())).unwrap();
        let layers = self.path("layers_json");
        std::fs::create_dir_all(&layers).unwrap();
        let layer = std::fs::read(common::layer_manifest(&layers, "plain.json", "VK_LAYER_TEST_a", &common::test_layer(), "")).unwrap();
        let good = common::test_driver().display().to_string();
        let missing = drivers.join("libnowhere.so").display().to_string();
        let twice = |text: &[u8], first: &str, second: &str| {
            let text = String::from_utf8(text.to_vec()).unwrap();
            let library = |path: &str| format!(r#""library_path": "{path}""#);
            let written = text.lines().find_map(|l| l.split(r#""library_path": ""#).nth(1)).and_then(|rest| rest.split('"').next()).unwrap();
            text.replace(&library(written), &format!("{}, {}", library(first), library(second))).into_bytes()
        };
        let variants = |text: &[u8]| -> Vec<(&'static str, Vec<u8>)> {
            vec![
                ("bom", [b"\xEF\xBB\xBF".as_slice(), text].concat()),
                ("trailing_text", [text, b"\nthis is not JSON {"].concat()),
                ("trailing_nul", [text, b"\0\0garbage"].concat()),
            ]
        };
        for (name, bytes) in variants(&driver) {
            std::fs::write(drivers.join(format!("{name}.json")), bytes).unwrap();
        }
        std::fs::write(drivers.join("duplicate_key.json"), twice(&driver, &good, &missing)).unwrap();
        std::fs::write(drivers.join("duplicate_key_first_missing.json"), twice(&driver, &missing, &good)).unwrap();
        let bytes_named = self.path("drivers/json_name");
        std::fs::create_dir_all(&bytes_named).unwrap();
        std::fs::write(bytes_named.join(OsStr::from_bytes(b"caf\xe9 \xff.json")), &driver).unwrap();

        let good_layer = common::test_layer().display().to_string();
        let missing_layer = layers.join("libnowhere.so").display().to_string();
        let mut layer_variants = variants(&layer);
        layer_variants.push(("duplicate_key", twice(&layer, &good_layer, &missing_layer)));
        layer_variants.push(("duplicate_key_first_missing", twice(&layer, &missing_layer, &good_layer)));
        // A member after "layer": the Khronos loader counts it as a second layer object and,
        // from file format 1.0.1, reads no layer from the file.
        let text = String::from_utf8(layer.clone()).unwrap();
        let member_after = format!("{}, \"comment\": \"a member after the layer\"}}", text.trim_end().strip_suffix('}').unwrap());
        layer_variants.push(("member_after_layer", member_after.into_bytes()));
        for (name, bytes) in layer_variants {
            std::fs::create_dir_all(layers.join(name)).unwrap();
            std::fs::write(layers.join(name).join("a.json"), bytes).unwrap();
        }
        std::fs::create_dir_all(layers.join("name_not_utf8")).unwrap();
        std::fs::write(layers.join("name_not_utf8").join(OsStr::from_bytes(b"caf\xe9 \xff.json")), &layer).unwrap();
        std::fs::remove_file(layers.join("plain.json")).unwrap();
        std::fs::remove_file(drivers.join("plain.json")).unwrap();
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn file(&self, relative: &str) -> String {
        self.path(relative).display().to_string()
    }

    /// The environment every child gets: the host's manifest directories hidden, the fixture's
    /// implicit layer directory searched, and `/usr/share` too for a desktop case.
    fn base_env(&self, desktop: bool) -> Vec<(&'static str, String)> {
        let data_dirs = match desktop {
            true => format!("{}:/usr/share", self.file("xdg")),
            false => self.file("xdg"),
        };
        vec![
            ("HOME", self.file("home")),
            ("XDG_CONFIG_HOME", self.file("empty")),
            ("XDG_CONFIG_DIRS", self.file("empty")),
            ("XDG_DATA_HOME", self.file("empty")),
            ("XDG_DATA_DIRS", data_dirs),
        ]
    }
}

/// A shared library with no Vulkan entry point at all.
const NO_VULKAN_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libm.so.6";

/// A copy of the test driver marked as built for another machine (AArch64).
fn foreign_library(dir: &Path) -> PathBuf {
    let path = dir.join("libforeign.so");
    let mut bytes = std::fs::read(common::test_driver()).unwrap();
    bytes[18..20].copy_from_slice(&183u16.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The matrix. Cases about layers, devices and filters run with and without the desktop's
/// implicit layers.
fn cases(f: &Fixture) -> Vec<Case> {
    let test = f.file("drivers/test.json");
    let with_lavapipe = |other: &str| format!("{LAVAPIPE}:{other}");
    let layer_path = || ("VK_LAYER_PATH", f.file("layers"));
    let mut cases = Vec::new();
    let mut case = |name, desktop, env: Vec<(&'static str, String)>, app_layers, expect| cases.push(Case { name, desktop, env, app_layers, expect });

    // Ways drivers are found and selected.
    case("default discovery", true, vec![], "", Expect::Same);
    case("VK_DRIVER_FILES, a file", false, vec![("VK_DRIVER_FILES", test.clone())], "", Expect::Same);
    case("VK_ICD_FILENAMES, a file", false, vec![("VK_ICD_FILENAMES", test.clone())], "", Expect::Same);
    case("VK_DRIVER_FILES, a folder", false, vec![("VK_DRIVER_FILES", f.file("drivers/pair"))], "", Expect::Same);
    case("VK_DRIVER_FILES, two files", false, vec![("VK_DRIVER_FILES", with_lavapipe(&test))], "", Expect::Same);
    case("VK_ADD_DRIVER_FILES beside default discovery", true, vec![("VK_ADD_DRIVER_FILES", test.clone())], "", Expect::Same);
    case("VK_LOADER_DRIVERS_SELECT", true, vec![("VK_LOADER_DRIVERS_SELECT", "*lvp*".into())], "", Expect::Same);
    case("VK_LOADER_DRIVERS_DISABLE", false, vec![("VK_DRIVER_FILES", with_lavapipe(&test)), ("VK_LOADER_DRIVERS_DISABLE", "*lvp*".into())], "", Expect::Same);
    case("VK_LOADER_DEVICE_SELECT", false, vec![("VK_DRIVER_FILES", with_lavapipe(&test)), ("VK_LOADER_DEVICE_SELECT", "10005:0".into())], "", Expect::Same);
    case(
        "VK_DRIVER_FILES, a folder and a file in it",
        false,
        vec![("VK_DRIVER_FILES", format!("{}/:{}", f.file("drivers/folder"), f.file("drivers/folder/test.json")))],
        "",
        Expect::Differs { ours: "DEVICES VK_SUCCESS 1", why: DEDUPLICATED },
    );
    case("VK_DRIVER_FILES set but empty", true, vec![("VK_DRIVER_FILES", String::new())], "", Expect::Same);
    case("VK_ICD_FILENAMES set but empty", true, vec![("VK_ICD_FILENAMES", String::new())], "", Expect::Same);

    // Every device filtered away, a filter that admits lavapipe, an unparsable filter.
    for desktop in [false, true] {
        for (variable, value) in [("VK_LOADER_VENDOR_ID_FILTER", "0x10de"), ("VK_LOADER_DEVICE_ID_FILTER", "5"), ("VK_LOADER_DRIVER_ID_FILTER", "4")] {
            let env = vec![("VK_DRIVER_FILES", LAVAPIPE.to_string()), (variable, value.to_string())];
            case("a filter hides every device", desktop, env, "", Expect::Differs { ours: "DEVICES VK_SUCCESS 0", why: FILTERS_NEWER });
        }
        let env = vec![("VK_DRIVER_FILES", LAVAPIPE.to_string()), ("VK_LOADER_VENDOR_ID_FILTER", "0x10005".into())];
        case("a filter admits lavapipe", desktop, env, "", Expect::Same);
        let env = vec![("VK_DRIVER_FILES", with_lavapipe(&test)), ("VK_LOADER_DEVICE_ID_FILTER", "zzz".into())];
        case("an unparsable filter", desktop, env, "", Expect::Same);
    }

    // Broken drivers beside a working one.
    for (name, manifest) in [
        ("driver manifest missing", "drivers/nowhere.json"),
        ("driver manifest not JSON", "drivers/not_json.json"),
        ("driver manifest field of the wrong type", "drivers/wrong_types.json"),
        ("driver manifest of an unknown major version", "drivers/future_version.json"),
        ("driver library missing", "drivers/missing_library.json"),
        ("driver library not ELF", "drivers/not_elf.json"),
        ("driver library of another architecture", "drivers/foreign.json"),
        ("driver library without entry points", "drivers/no_entry_points.json"),
    ] {
        let expect = match manifest {
            "drivers/not_json.json" => Expect::Differs { ours: "DEVICES VK_SUCCESS 1", why: NOT_JSON },
            "drivers/wrong_types.json" => Expect::Differs { ours: "DEVICES VK_SUCCESS 1", why: WRONG_TYPE },
            _ => Expect::Same,
        };
        case(name, false, vec![("VK_DRIVER_FILES", with_lavapipe(&f.file(manifest)))], "", expect);
    }
    // Manifests read as the Khronos loader's JSON reader (cJSON) reads them.
    for (name, manifest) in [
        ("driver manifest with a byte-order mark", "drivers/json/bom.json"),
        ("driver manifest with text after the JSON", "drivers/json/trailing_text.json"),
        ("driver manifest with a NUL byte after the JSON", "drivers/json/trailing_nul.json"),
        ("driver manifest with library_path twice, the first good", "drivers/json/duplicate_key.json"),
        ("driver manifest with library_path twice, the first missing", "drivers/json/duplicate_key_first_missing.json"),
        ("driver manifest whose file name is not UTF-8, in a folder", "drivers/json_name"),
    ] {
        let expect = match name {
            "driver manifest with a byte-order mark" => Expect::Differs { ours: "DEVICES VK_SUCCESS 2", why: BYTE_ORDER_MARK },
            _ => Expect::Same,
        };
        case(name, false, vec![("VK_DRIVER_FILES", with_lavapipe(&f.file(manifest)))], "", expect);
    }
    for (name, folder) in [
        ("layer manifest with a byte-order mark", "bom"),
        ("layer manifest with text after the JSON", "trailing_text"),
        ("layer manifest with a NUL byte after the JSON", "trailing_nul"),
        ("layer manifest with library_path twice, the first good", "duplicate_key"),
        ("layer manifest with library_path twice, the first missing", "duplicate_key_first_missing"),
        ("layer manifest with a member after \"layer\" (format 1.2.0)", "member_after_layer"),
        ("layer manifest whose file name is not UTF-8", "name_not_utf8"),
    ] {
        let expect = match folder {
            "bom" => Expect::Differs { ours: "LAYERS [VK_LAYER_TEST_a]", why: BYTE_ORDER_MARK },
            _ => Expect::Same,
        };
        let env = vec![("VK_DRIVER_FILES", LAVAPIPE.to_string()), ("VK_LAYER_PATH", f.file(&format!("layers_json/{folder}")))];
        case(name, false, env, "VK_LAYER_TEST_a", expect);
    }
    let refuses = vec![("VK_DRIVER_FILES", with_lavapipe(&f.file("drivers/refuses.json"))), ("VK_TEST_DRIVER_FAIL_NEGOTIATE_REFUSES", "1".into())];
    case("driver refuses negotiation", false, refuses, "", Expect::Same);
    let fails = vec![("VK_DRIVER_FILES", with_lavapipe(&f.file("drivers/fails.json"))), ("VK_TEST_DRIVER_FAIL_CREATE_INSTANCE_FAILS", "1".into())];
    case("driver's vkCreateInstance fails", false, fails, "", Expect::Same);
    case("driver's vkCreateDevice fails", false, vec![("VK_DRIVER_FILES", test.clone()), ("VK_TEST_DRIVER_FAULTS", "fail_create_device".into())], "", Expect::Same);

    // Ways layers are enabled, and broken layers.
    for desktop in [false, true] {
        let lavapipe = || ("VK_DRIVER_FILES", LAVAPIPE.to_string());
        case("no layer", desktop, vec![lavapipe()], "", Expect::Same);
        case("layer by the application", desktop, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_a", Expect::Same);
        // Each application call reaches the layer once (`TEST_LAYER_CALL` lines): count, then fill.
        let counted = vec![lavapipe(), layer_path(), ("VK_TEST_LAYER_COUNT_CALLS", "1".into())];
        case("the calls a layer receives", desktop, counted, "VK_LAYER_TEST_a", Expect::Same);
        case("layer by VK_INSTANCE_LAYERS", desktop, vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_a".into())], "", Expect::Same);
        case("layer by VK_LOADER_LAYERS_ENABLE", desktop, vec![lavapipe(), layer_path(), ("VK_LOADER_LAYERS_ENABLE", "*TEST_a".into())], "", Expect::Same);
        // Entries are not trimmed: " *TEST_a" is a whole name, which matches no layer.
        let spaced = vec![lavapipe(), layer_path(), ("VK_LOADER_LAYERS_ENABLE", "*nowhere, *TEST_a".into())];
        case("VK_LOADER_LAYERS_ENABLE with a space after the comma", desktop, spaced, "", Expect::Same);
        case("implicit layer switched on", desktop, vec![lavapipe(), ("DIFF_IMPLICIT", "1".into())], "", Expect::Same);
        case("implicit layer switched on and off", desktop, vec![lavapipe(), ("DIFF_IMPLICIT", "1".into()), ("DIFF_NO_IMPLICIT", "1".into())], "", Expect::Same);
        case("meta layer by the application", desktop, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_meta", Expect::Same);
        let unusable = vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_no_entry_points".into())];
        case("unusable layer by VK_INSTANCE_LAYERS", desktop, unusable, "", SKIPPED_LAYER);
    }
    let lavapipe = || ("VK_DRIVER_FILES", LAVAPIPE.to_string());
    case("VK_LOADER_LAYERS_DISABLE=~implicit~", true, vec![lavapipe(), ("DIFF_IMPLICIT", "1".into()), ("VK_LOADER_LAYERS_DISABLE", "~implicit~".into())], "", Expect::Same);
    case("missing layer by the application", false, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_nowhere", Expect::Same);
    case("missing layer by VK_INSTANCE_LAYERS", false, vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_nowhere".into())], "", Expect::Same);
    case("unusable layer by the application", false, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_no_entry_points", Expect::Same);
    let enable = vec![lavapipe(), layer_path(), ("VK_LOADER_LAYERS_ENABLE", "*no_entry*".into())];
    case("unusable layer by VK_LOADER_LAYERS_ENABLE", false, enable, "", SKIPPED_LAYER);
    let file_itself = vec![lavapipe(), ("VK_LAYER_PATH", f.file("layers/no_entry_points.json")), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_no_entry_points".into())];
    case("unusable layer by VK_INSTANCE_LAYERS, VK_LAYER_PATH the manifest", false, file_itself, "", SKIPPED_LAYER);
    let missing_library = vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_missing_library".into())];
    case("layer library missing, by VK_INSTANCE_LAYERS", false, missing_library, "", SKIPPED_LAYER);
    case("layer library missing, by the application", false, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_missing_library", Expect::Same);
    let not_json = vec![lavapipe(), ("VK_LAYER_PATH", f.file("layers_not_json"))];
    case("layer manifest not JSON beside a good one", false, not_json, "VK_LAYER_TEST_a", Expect::Differs { ours: "LAYERS [VK_LAYER_TEST_a]", why: NOT_JSON });
    case("meta layer with a missing component", false, vec![lavapipe(), layer_path()], "VK_LAYER_TEST_meta_missing", Expect::Same);
    case("VK_INSTANCE_LAYERS set but empty", false, vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", String::new())], "", Expect::Same);
    let fail_instance = vec![lavapipe(), layer_path(), ("VK_TEST_LAYER_FAIL_CREATE_INSTANCE", "1".into())];
    case("layer's vkCreateInstance fails", false, fail_instance, "VK_LAYER_TEST_a", Expect::Differs { ours: "INSTANCE VK_ERROR_INITIALIZATION_FAILED", why: LAYER_FAILS_CREATE });
    let fail_device = vec![lavapipe(), layer_path(), ("VK_TEST_LAYER_FAIL_CREATE_DEVICE", "1".into())];
    case("layer's vkCreateDevice fails", false, fail_device, "VK_LAYER_TEST_a", Expect::Same);
    for (name, layer) in [
        ("layer library of another architecture", "VK_LAYER_TEST_foreign"),
        ("layer library not ELF", "VK_LAYER_TEST_not_elf"),
        ("layer manifest of an unknown major version", "VK_LAYER_TEST_future"),
    ] {
        case(name, false, vec![lavapipe(), layer_path()], layer, Expect::Same);
    }
    let foreign = vec![lavapipe(), layer_path(), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_foreign".into())];
    case("layer library of another architecture, by VK_INSTANCE_LAYERS", false, foreign, "", SKIPPED_LAYER);
    let allow = vec![lavapipe(), ("VK_LOADER_LAYERS_DISABLE", "~all~".into()), ("VK_LOADER_LAYERS_ALLOW", "*device_select".into())];
    case("VK_LOADER_LAYERS_DISABLE=~all~ and _ALLOW", true, allow, "", Expect::Differs { ours: "LAYERS [VK_LAYER_MESA_device_select]", why: ALLOW_NEWER });
    let settings = vec![lavapipe(), ("XDG_CONFIG_HOME", f.file("config"))];
    case("loader settings file turns a layer on", false, settings, "", Expect::Differs { ours: "LAYERS [VK_LAYER_TEST_a]", why: SETTINGS_NEWER });

    // Several devices: order, groups, selection; variables set but empty or unparsable.
    let test_driver = || ("VK_DRIVER_FILES", with_lavapipe(&test));
    // No device of lavapipe's type (cpu): the order of devices of equal rank differs (below).
    let three = || ("VK_TEST_DRIVER_DEVICES", "virtual:1002:11,integrated:8086:12,discrete:10de:13".to_string());
    for desktop in [false, true] {
        case("several devices in the Linux order", desktop, vec![test_driver(), three()], "", Expect::Same);
        case("device groups of two", desktop, vec![test_driver(), ("VK_TEST_DRIVER_DEVICES", "discrete,discrete".into()), ("VK_TEST_DRIVER_GROUP_SIZE", "2".into())], "", Expect::Same);
        case("VK_LOADER_DEVICE_SELECT picks the last", desktop, vec![test_driver(), three(), ("VK_LOADER_DEVICE_SELECT", "1002:11".into())], "", Expect::Same);
    }
    let tie = vec![test_driver(), ("VK_TEST_DRIVER_DEVICES", "cpu:1002:11".into())];
    case("two devices of equal rank", false, tie, "", Expect::Differs { ours: "10005:0\nDEVICE Test Driver cpu 0 1002:11", why: EQUAL_RANK });
    case("VK_LOADER_DISABLE_SELECT", false, vec![test_driver(), three(), ("VK_LOADER_DISABLE_SELECT", "1".into())], "", Expect::Same);
    case("VK_LOADER_DEVICE_SELECT unparsable", false, vec![test_driver(), three(), ("VK_LOADER_DEVICE_SELECT", "zzz".into())], "", Expect::Same);
    case("VK_LOADER_DISABLE_SELECT unparsable", false, vec![test_driver(), three(), ("VK_LOADER_DISABLE_SELECT", "yes".into())], "", Expect::Same);
    case("VK_LOADER_DEBUG unparsable", false, vec![test_driver(), ("VK_LOADER_DEBUG", "nonsense".into())], "", Expect::Same);
    for variable in ["VK_LOADER_LAYERS_ENABLE", "VK_LOADER_LAYERS_DISABLE", "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DEVICE_SELECT", "VK_ADD_DRIVER_FILES"] {
        case(variable, true, vec![(variable, String::new())], "", Expect::Same);
    }
    case("VK_LAYER_PATH set but empty", false, vec![lavapipe(), ("VK_LAYER_PATH", String::new())], "VK_LAYER_TEST_a", Expect::Same);
    cases
}

/// A layer the environment names whose library cannot be used: skipped by both loaders.
const SKIPPED_LAYER: Expect = Expect::Differs { ours: "CREATE_DEVICE VK_SUCCESS", why: LISTS_SKIPPED_LAYER };

/// Reasons for the differences by design (docs/compatibility.md has the same table).
const BYTE_ORDER_MARK: &str = "a manifest starting with a UTF-8 byte-order mark is read, as the Khronos loader reads it since \
    its cJSON skips the mark (1.4.360); the system loader (1.3.239) fails to parse it and, as for any manifest that is not \
    JSON, reports VK_ERROR_OUT_OF_HOST_MEMORY from every vkCreateInstance";
const DEDUPLICATED: &str = "a driver named twice (a folder and a file in it) is loaded once: the Khronos loader loads it twice \
    and lists two physical devices for one GPU, which an application counts as two";
const NOT_JSON: &str = "a manifest that is not JSON is skipped with a log line; the system loader (1.3.239) reports the parse \
    failure as VK_ERROR_OUT_OF_HOST_MEMORY and fails every vkCreateInstance (the current Khronos source skips the file, as we do)";
const WRONG_TYPE: &str = "a driver manifest whose library_path is not a string is skipped with a log line; the system loader \
    (1.3.239) aborts the process (SIGABRT)";
const LISTS_SKIPPED_LAYER: &str = "both loaders skip the layer and create the instance; the Khronos loader (1.3.239, and its current \
    source) still lists the layer it skipped in vkEnumerateDeviceLayerProperties, we list the layers that are in the chain";
const LAYER_FAILS_CREATE: &str = "a layer's failing vkCreateInstance is the application's result; the system loader (1.3.239) \
    aborts the process (SIGABRT)";
const ALLOW_NEWER: &str = "the system loader (1.3.239) predates VK_LOADER_LAYERS_ALLOW and disables every layer; newer Khronos \
    loaders keep the allowed layer, as we do";
const SETTINGS_NEWER: &str = "the system loader (1.3.239) predates the loader settings file (vkconfig's vk_loader_settings.json) \
    and ignores it; newer Khronos loaders read it, as we do";
const EQUAL_RANK: &str = "devices of equal rank (type, then PCI address where both have one) keep the drivers' discovery order, \
    the same on every file system; the Khronos loader lists the driver found last first";
const FILTERS_NEWER: &str = "the system loader (1.3.239) predates the id filters and shows every device; the Khronos loader since \
    1.4.326 filters them above the layers, as we now do (1.4.360: success, 0 devices)";

/// What one run of a case's child showed.
struct Run {
    /// What the application sees, one fact a line, and how the process ended.
    summary: String,
    /// The errors and warnings its messenger heard (`<severity bits> <message>`).
    heard: Vec<String>,
    /// Its stderr lines.
    stderr: Vec<String>,
}

/// One run of a case's child through `library`. Our side runs through `LOADER_TEST_RUNNER` where
/// it is set (memcheck: loader/tests/memcheck.rs).
fn run(f: &Fixture, case: &Case, library: &str) -> Run {
    let runner = if library == SYSTEM_LOADER { String::new() } else { std::env::var("LOADER_TEST_RUNNER").unwrap_or_default() };
    let mut cmd = common::command_under(&runner, std::env::current_exe().unwrap());
    cmd.args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"]);
    for (var, _) in std::env::vars() {
        if var.starts_with("VK_") || var.starts_with("XDG_") || var.starts_with("MESA_") || var.starts_with("NODEVICE") {
            cmd.env_remove(var);
        }
    }
    cmd.env("DIFF_LIBRARY", library).env("DIFF_APP_LAYERS", case.app_layers);
    for (var, value) in f.base_env(case.desktop).iter().chain(&case.env) {
        cmd.env(var, value);
    }
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let heard = stdout.lines().filter_map(|l| l.strip_prefix("HEARD ")).map(str::to_owned).collect();
    let mut summary: Vec<String> = stdout.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase())).map(str::to_owned).collect();
    summary.retain(|l| !l.starts_with("DIFF") && !l.starts_with("HEARD "));
    summary.push(match (out.status.code(), out.status.signal()) {
        (_, Some(signal)) => format!("KILLED BY SIGNAL {signal}"),
        (Some(code), _) => format!("EXIT {code}"),
        _ => "EXIT ?".into(),
    });
    let stderr = String::from_utf8_lossy(&out.stderr).lines().map(str::to_owned).collect();
    Run { summary: summary.join("\n"), heard, stderr }
}

/// A run as a failure shows it: the summary, then what its messenger heard and its stderr.
fn shown(run: &Run) -> String {
    let heard: Vec<String> = run.heard.iter().map(|m| format!("heard: {m}")).collect();
    let stderr: Vec<String> = run.stderr.iter().map(|l| format!("stderr: {l}")).collect();
    [run.summary.clone()].into_iter().chain(heard).chain(stderr).collect::<Vec<_>>().join("\n")
}

/// Without `VK_LOADER_DEBUG`, our child prints no stderr line that the system loader's does not:
/// a drop-in adds no output to a program that did not ask for it.
fn stderr_verdict(case: &Case, ours: &Run, system: &Run) -> Option<String> {
    if case.env.iter().any(|(var, _)| *var == "VK_LOADER_DEBUG") {
        return None;
    }
    let added: Vec<&String> = ours.stderr.iter().filter(|l| !system.stderr.contains(l)).collect();
    (!added.is_empty()).then(|| format!("our stderr has lines the system loader's has not: {added:?}"))
}

/// Every error and warning the system loader's messenger hears, ours hears too, at the same
/// severity and in the same words (ours may add context around them, and lines of its own);
/// except the drivers' own messages (a warm start does not load the driver) and the messages of
/// [`REWORDED`] and [`NOT_SAID_YET`].
fn messenger_verdict(ours: &Run, system: &Run) -> Option<String> {
    let heard_by_ours = |message: &String| {
        let (severity, text) = message.split_once(' ').unwrap_or((message, ""));
        ours.heard.iter().any(|m| m.split_once(' ').is_some_and(|(s, t)| s == severity && t.contains(text)))
    };
    let exempt = |message: &String| {
        message.split_once(' ').is_some_and(|(_, text)| text.starts_with("vk_test_driver: "))
            || REWORDED.iter().chain(NOT_SAID_YET).any(|(fragment, _)| message.contains(fragment))
    };
    let missed: Vec<&String> = system.heard.iter().filter(|m| !exempt(m) && !heard_by_ours(m)).collect();
    (!missed.is_empty()).then(|| format!("our messenger did not hear {missed:?}"))
}

/// The system loader's messages that ours gives in its own words, each naming the manifest or the
/// layer and the cause (a fragment of the system loader's text, and what ours says instead).
const REWORDED: &[(&str, &str)] = &[
    ("loader_get_json: Failed to open JSON file", "a warning: \"<manifest>: driver skipped: No such file or directory\""),
    ("loader_get_json: Failed to parse JSON file", "the manifest is read as the current Khronos loader reads it, or skipped with a warning saying why"),
    (": cannot open shared object file", "the library's ELF header is read before dlopen: the cause is named (missing, another architecture)"),
    (": file too short", "\"not an ELF file\""),
    ("loader_icd_scan: Failed loading library associated with ICD JSON", "a warning: \"<manifest>: driver skipped: <library> cannot be loaded: <why>\""),
    ("loader_scanned_icd_add: ", "a warning: \"<manifest>: driver skipped: interface negotiation failed\" (or the entry points it lacks)"),
    ("terminator_CreateInstance: Failed to CreateInstance in ICD", "a warning: \"<manifest>: driver skipped: its vkCreateInstance returned <result>\""),
    ("Failed to find 'vkGetInstanceProcAddr' in layer", "an error: \"layer <name> (<manifest>) ... <library> has no vkGetInstanceProcAddr (missing symbol)\""),
    ("Shouldn't reach this. A valid version of requested layer", "an error naming the layer and the symbol its library lacks"),
    ("Requested layer \"VK_LAYER_TEST_foreign\" failed to load!", "the current Khronos loader's \"Requested layer ... was wrong bit-type!\""),
    ("forced disabled because name matches filter of env var 'VK_LOADER_LAYERS_DISABLE'", "VK_LOADER_LAYERS_ALLOW keeps the layer (ALLOW_NEWER)"),
];

/// The system loader's messages ours does not give yet.
const NOT_SAID_YET: &[(&str, &str)] = &[
    ("terminator_CreateDevice: Failed in ICD", "a driver's failing vkCreateDevice is the application's result, unexplained"),
    ("vkCreateDevice:  Failed to create device chain.", "as above, for a driver or layer"),
    ("env var 'VK_INSTANCE_LAYERS' defined and adding layers \"\"", "VK_INSTANCE_LAYERS set but empty counts as unset"),
];

#[test]
fn what_an_application_sees_matches_the_khronos_loader() {
    if !cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        println!("skipped: the reference is the x86 system loader and lavapipe");
        return;
    }
    for needed in [SYSTEM_LOADER, LAVAPIPE, DEVICE_SELECT] {
        assert!(Path::new(needed).exists(), "{needed} missing: install libvulkan1 and mesa-vulkan-drivers");
    }
    let f = Fixture::new();
    let cases = cases(&f);
    let ours = common::libvulkan().display().to_string();
    let results: Vec<(Run, Run)> = std::thread::scope(|s| {
        let workers: Vec<_> = cases.chunks(cases.len().div_ceil(4)).map(|chunk| s.spawn(|| chunk.iter().map(|c| (run(&f, c, &ours), run(&f, c, SYSTEM_LOADER))).collect::<Vec<_>>())).collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let mut failures = Vec::new();
    let mut same = 0;
    for (case, (ours, system)) in cases.iter().zip(&results) {
        let title = format!("{}{}", case.name, if case.desktop { " (desktop)" } else { "" });
        let (ours_seen, system_seen) = (&ours.summary, &system.summary);
        let crashed = ours_seen.contains("SIGNAL") || !ours_seen.ends_with("EXIT 0");
        let verdict = match case.expect {
            _ if crashed => Some("our child did not exit normally".to_string()),
            Expect::Same if ours_seen == system_seen => None,
            Expect::Same => Some("differs".to_string()),
            Expect::Differs { ours: line, .. } if ours_seen == system_seen => Some(format!("matches, but is listed as differing by design (ours should show {line:?})")),
            Expect::Differs { ours: line, .. } if !ours_seen.contains(line) => Some(format!("differs, but ours does not show {line:?}")),
            Expect::Differs { .. } => None,
        };
        same += usize::from(ours_seen == system_seen);
        let verdicts = verdict.into_iter().chain(stderr_verdict(case, ours, system)).chain(messenger_verdict(ours, system));
        for verdict in verdicts {
            failures.push(format!(
                "{title}: {verdict}\n  env: {:?}, application layers: {:?}\n--- ours:\n{}\n--- system:\n{}\n",
                case.env,
                case.app_layers,
                shown(ours),
                shown(system)
            ));
        }
    }
    if let Ok(path) = std::env::var("DIFF_REPORT") {
        let text: Vec<String> = cases.iter().zip(&results).map(|(c, (o, s))| format!("## {} {}\n{}\n-- system\n{}\n", c.name, c.desktop, shown(o), shown(s))).collect();
        std::fs::write(path, text.join("\n")).unwrap();
    }
    println!("{} cases, {same} the same through both loaders; different by design:", cases.len());
    for case in &cases {
        if let Expect::Differs { why, .. } = case.expect {
            println!("  {}{}: {why}", case.name, if case.desktop { " (desktop)" } else { "" });
        }
    }
    assert!(failures.is_empty(), "{} of {} cases:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
