//! The loader settings file (`vk_loader_settings.json`, as the Vulkan Configurator writes it):
//! layers turned on, off and reordered for an application that names none, `app_keys`, the
//! search order, additional drivers, device configurations, and bad files ignored with a line.
//!
//! Each scenario runs in a child process with `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `HOME` and the
//! XDG system directories pointed into the test's own directory: no settings file of the host is
//! ever read.

mod common;

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};

use vk_generated::types::*;

/// A test directory: a driver manifest, explicit and implicit layer directories (searched as
/// usual through `VK_LAYER_PATH` / `VK_IMPLICIT_LAYER_PATH`) and a private XDG tree.
struct Setup {
    dir: PathBuf,
    explicit: PathBuf,
    implicit: PathBuf,
    driver: PathBuf,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch(&format!("settings-{name}"));
    let explicit = dir.join("explicit");
    let implicit = dir.join("implicit");
    std::fs::create_dir_all(&explicit).unwrap();
    std::fs::create_dir_all(&implicit).unwrap();
    let driver = common::driver_manifest(&dir, "driver.json", &common::test_driver());
    Setup { dir, explicit, implicit, driver }
}

impl Setup {
    /// A tagged copy of the test layer with an explicit manifest naming it `VK_LAYER_TEST_<tag>`.
    fn explicit_layer(&self, tag: &str) -> PathBuf {
        vk_test_layer::install::install(&common::test_layer(), &self.explicit, tag, "").unwrap().manifest
    }

    /// The same with an implicit manifest, on unless `DISABLE_<tag>` is set.
    fn implicit_layer(&self, tag: &str) -> PathBuf {
        let extra = format!(r#", "disable_environment": {{"DISABLE_{tag}": "1"}}"#);
        vk_test_layer::install::install(&common::test_layer(), &self.implicit, tag, &extra).unwrap().manifest
    }

    /// `<base>/vulkan/loader_settings.d/vk_loader_settings.json` under the test's directory.
    fn settings_path(&self, base: &str) -> PathBuf {
        self.dir.join(base).join("vulkan/loader_settings.d/vk_loader_settings.json")
    }

    /// Writes the settings file in the user's configuration directory (`XDG_CONFIG_HOME`).
    fn write_settings(&self, text: &str) -> PathBuf {
        self.write_settings_in("config", text)
    }

    fn write_settings_in(&self, base: &str, text: &str) -> PathBuf {
        let path = self.settings_path(base);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Runs the child scenario; returns its stdout and stderr.
    fn run(&self, env: &[(&str, &str)]) -> (String, String) {
        let dir = |sub: &str| p(&self.dir.join(sub));
        let mut all = vec![
            ("VK_DRIVER_FILES", p(&self.driver)),
            ("VK_LAYER_PATH", p(&self.explicit)),
            ("VK_IMPLICIT_LAYER_PATH", p(&self.implicit)),
            ("VK_TEST_LAYER_LOG", "1".to_string()),
            ("HOME", dir("home")),
            ("XDG_CONFIG_HOME", dir("config")),
            ("XDG_DATA_HOME", dir("data")),
            ("XDG_CONFIG_DIRS", dir("etc-xdg")),
            ("XDG_DATA_DIRS", dir("usr-share")),
        ];
        all.extend(env.iter().map(|(k, v)| (*k, v.to_string())));
        let (ok, stdout, stderr) = common::child("settings", &all);
        assert!(ok, "child crashed or failed:\n{stdout}\n{stderr}");
        (stdout, stderr)
    }
}

fn p(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

/// The settings file of one global entry, the vkconfig way.
fn settings(entry: &str) -> String {
    format!(r#"{{"file_format_version": "1.0.0", "settings": {{ {entry} }}}}"#)
}

/// A `layers` entry.
fn layer_entry(name: &str, manifest: &Path, control: &str, implicit: bool) -> String {
    format!(
        r#"{{"name": "{name}", "path": "{}", "control": "{control}", "treat_as_implicit_manifest": {implicit}}}"#,
        manifest.display()
    )
}

const UNORDERED: &str = r#"{"control": "unordered_layer_location"}"#;

/// The layers `vkEnumerateInstanceLayerProperties` listed, in order.
fn listed(out: &str) -> Vec<&str> {
    out.lines().filter_map(|l| l.strip_prefix("LAYER ")).collect()
}

/// The instance chain, top first (the tags of the test layers' `vkCreateInstance` lines, which
/// print them upper-cased).
fn chain(out: &str) -> Vec<String> {
    out.lines().filter_map(|l| l.strip_prefix("TEST_LAYER ")?.strip_suffix(" vkCreateInstance")).map(str::to_lowercase).collect()
}

fn result(out: &str) -> &str {
    out.lines().find_map(|l| l.strip_prefix("RESULT ")).expect("a RESULT line")
}

/// The child side. Environment: `TEST_APP_LAYERS` (comma list for `ppEnabledLayerNames`),
/// `TEST_CREATE_ONLY=1` (no enumeration before the instance).
#[test]
fn scenario_entry() {
    let Ok(_) = std::env::var("SCENARIO") else { return };
    println!(); // the test harness printed "test scenario_entry ... " without a newline
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
        if std::env::var("TEST_CREATE_ONLY").is_err() {
            let enum_layers: PFN_vkEnumerateInstanceLayerProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceLayerProperties"));
            let mut count = 0;
            enum_layers.unwrap()(&mut count, std::ptr::null_mut());
            let mut props = vec![VkLayerProperties::default(); count as usize];
            enum_layers.unwrap()(&mut count, props.as_mut_ptr());
            for p in &props {
                println!("LAYER {}", common::fixed_str(&p.layerName));
            }
        }
        let layers: Vec<CString> =
            std::env::var("TEST_APP_LAYERS").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(|s| CString::new(s).unwrap()).collect();
        let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let info = VkInstanceCreateInfo {
            enabledLayerCount: layer_ptrs.len() as u32,
            ppEnabledLayerNames: layer_ptrs.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let r = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {r:?}");
        if r != VkResult::SUCCESS {
            return;
        }
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut n = 0;
        let r = enumerate.unwrap()(instance, &mut n, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; n as usize];
        let r2 = enumerate.unwrap()(instance, &mut n, devices.as_mut_ptr());
        println!("DEVICES {r:?} {r2:?} {n}");
        if r2 != VkResult::SUCCESS {
            n = 0;
        }
        let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        for d in devices.iter().take(n as usize) {
            let mut props = VkPhysicalDeviceProperties::default();
            properties.unwrap()(*d, &mut props);
            println!("DEVICE {:x}", props.vendorID);
        }
        if let Some(first) = devices.first().filter(|_| n > 0) {
            let device_layers: PFN_vkEnumerateDeviceLayerProperties = std::mem::transmute(get(instance, c"vkEnumerateDeviceLayerProperties"));
            let mut count = 0;
            device_layers.unwrap()(*first, &mut count, std::ptr::null_mut());
            let mut props = vec![VkLayerProperties::default(); count as usize];
            device_layers.unwrap()(*first, &mut count, props.as_mut_ptr());
            for p in &props {
                println!("DEVICE_LAYER {}", common::fixed_str(&p.layerName));
            }
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// "Validation on, device_select off, overlay on" in vkconfig's terms: an application that
/// enables no layer gets the ones turned on, in the file's order, the layers found the usual way
/// where `unordered_layer_location` is, and never the one turned off.
#[test]
fn vkconfig_file_turns_layers_on_and_off_and_orders_them() {
    let s = setup("vkconfig");
    let validation = s.explicit_layer("validation");
    let _unnamed_explicit = s.explicit_layer("unnamed");
    let device_select = s.implicit_layer("device_select");
    let _other_implicit = s.implicit_layer("other");
    let overlay = s.explicit_layer("overlay");
    let entries = [
        layer_entry("VK_LAYER_TEST_validation", &validation, "on", false),
        UNORDERED.to_string(),
        layer_entry("VK_LAYER_TEST_device_select", &device_select, "off", true),
        layer_entry("VK_LAYER_TEST_overlay", &overlay, "on", false),
    ];
    s.write_settings(&settings(&format!(r#""layers": [{}]"#, entries.join(","))));

    let (out, err) = s.run(&[]);
    assert_eq!(result(&out), "VK_SUCCESS", "{out}\n{err}");
    assert_eq!(chain(&out), ["validation", "other", "overlay"], "{out}");
    assert_eq!(
        listed(&out),
        ["VK_LAYER_TEST_validation", "VK_LAYER_TEST_other", "VK_LAYER_TEST_unnamed", "VK_LAYER_TEST_overlay"],
        "the layer turned off is not offered"
    );

    // Asking for the layer turned off fails as for a missing layer; asking for the unnamed one
    // adds it at the marker, not where the application's list would put it.
    let (out, _) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_device_select")]);
    assert_eq!(result(&out), "VK_ERROR_LAYER_NOT_PRESENT");
    let (out, _) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_unnamed")]);
    assert_eq!(chain(&out), ["validation", "other", "unnamed", "overlay"]);

    // `on` wins over VK_LOADER_LAYERS_DISABLE, `auto` layers (those not named) do not.
    let (out, _) = s.run(&[("VK_LOADER_LAYERS_DISABLE", "~all~")]);
    assert_eq!(chain(&out), ["validation", "overlay"]);
}

/// Without `unordered_layer_location`, the file's layers are the only ones.
#[test]
fn without_the_marker_only_the_files_layers_exist() {
    let s = setup("only");
    let a = s.explicit_layer("a");
    let b = s.explicit_layer("b");
    s.implicit_layer("implicit");
    let entries = [layer_entry("VK_LAYER_TEST_b", &b, "auto", false), layer_entry("VK_LAYER_TEST_a", &a, "on", false)];
    s.write_settings(&settings(&format!(r#""layers": [{}]"#, entries.join(","))));

    let (out, _) = s.run(&[]);
    assert_eq!(listed(&out), ["VK_LAYER_TEST_b", "VK_LAYER_TEST_a"]);
    assert_eq!(chain(&out), ["a"], "auto: not enabled by anyone");
    // The file's order, whatever order the application and the environment name them in.
    let (out, _) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_a,VK_LAYER_TEST_b")]);
    assert_eq!(chain(&out), ["b", "a"]);
    let (out, _) = s.run(&[("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_b")]);
    assert_eq!(chain(&out), ["b", "a"]);

    // An empty list: no layer at all.
    s.write_settings(&settings(r#""layers": []"#));
    let (out, _) = s.run(&[]);
    assert_eq!(listed(&out), Vec::<&str>::new());
    assert_eq!(chain(&out), Vec::<&str>::new());
}

/// A meta layer the file turns on brings its components, in the meta layer's order, and is
/// listed by `vkEnumerateDeviceLayerProperties` after them, as with the Khronos loader.
#[test]
fn meta_layer_turned_on_is_listed_after_its_components() {
    let s = setup("meta");
    let first = s.explicit_layer("first");
    s.explicit_layer("a");
    s.explicit_layer("b");
    let meta = s.explicit.join("meta.json");
    std::fs::write(
        &meta,
        r#"{"file_format_version": "1.2.0", "layer": {"name": "VK_LAYER_TEST_meta", "type": "GLOBAL",
            "api_version": "1.4.0", "implementation_version": "1", "description": "meta",
            "component_layers": ["VK_LAYER_TEST_b", "VK_LAYER_TEST_a"]}}"#,
    )
    .unwrap();
    let entries = [
        layer_entry("VK_LAYER_TEST_first", &first, "on", false),
        UNORDERED.to_string(),
        layer_entry("VK_LAYER_TEST_meta", &meta, "on", false),
    ];
    s.write_settings(&settings(&format!(r#""layers": [{}]"#, entries.join(","))));
    let (out, _) = s.run(&[]);
    assert_eq!(chain(&out), ["first", "b", "a"]);
    let device_layers: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("DEVICE_LAYER ")).collect();
    assert_eq!(device_layers, ["VK_LAYER_TEST_first", "VK_LAYER_TEST_b", "VK_LAYER_TEST_a", "VK_LAYER_TEST_meta"]);
}

/// `settings_array`: the entry whose `app_keys` name the executable, else the global one.
#[test]
fn app_keys_choose_the_entry() {
    let s = setup("app-keys");
    let a = s.explicit_layer("a");
    let b = s.explicit_layer("b");
    let exe = std::env::current_exe().unwrap();
    let write = |keys: &str| {
        s.write_settings(&format!(
            r#"{{"file_format_version": "1.0.0", "settings_array": [
                {{"app_keys": [{keys}], "layers": [{}]}},
                {{"layers": [{}]}}
            ]}}"#,
            layer_entry("VK_LAYER_TEST_a", &a, "on", false),
            layer_entry("VK_LAYER_TEST_b", &b, "on", false),
        ))
    };
    write(r#""/not/this/program""#);
    assert_eq!(chain(&s.run(&[]).0), ["b"]);
    write(&format!(r#""/not/this/program", "{}""#, exe.display()));
    assert_eq!(chain(&s.run(&[]).0), ["a"]);
}

/// The user's configuration directory wins over the data directory, which wins over the
/// system's; elevated processes are covered by `secure_getenv` (the XDG variables unset).
#[test]
fn first_file_in_the_search_order_wins() {
    let s = setup("order");
    let a = s.explicit_layer("a");
    let b = s.explicit_layer("b");
    let c = s.explicit_layer("c");
    s.write_settings_in("etc-xdg", &settings(&format!(r#""layers": [{}]"#, layer_entry("VK_LAYER_TEST_c", &c, "on", false))));
    assert_eq!(chain(&s.run(&[]).0), ["c"]);
    s.write_settings_in("data", &settings(&format!(r#""layers": [{}]"#, layer_entry("VK_LAYER_TEST_b", &b, "on", false))));
    assert_eq!(chain(&s.run(&[]).0), ["b"]);
    s.write_settings_in("config", &settings(&format!(r#""layers": [{}]"#, layer_entry("VK_LAYER_TEST_a", &a, "on", false))));
    assert_eq!(chain(&s.run(&[]).0), ["a"]);
}

/// A setgid copy of this test binary runs with AT_SECURE set: the settings file in the user's
/// directories is not read there (only the system's would be).
#[test]
fn elevated_process_ignores_the_users_settings_file() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: making a setgid binary needs root (CI runs as root)");
        return;
    }
    let s = setup("elevated");
    let a = s.explicit_layer("a");
    s.write_settings(&settings(&format!(r#""layers": [{}]"#, layer_entry("VK_LAYER_TEST_a", &a, "on", false))));
    let exe = s.dir.join("elevated-test");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::os::unix::fs::chown(&exe, Some(0), Some(65534)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o2755)).unwrap();
    let run = |program: &Path| {
        let out = std::process::Command::new(program)
            .args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"])
            .env("SCENARIO", "settings")
            .env("TEST_LIBVULKAN", common::libvulkan())
            .env("TEST_CREATE_ONLY", "1")
            .env("VK_TEST_LAYER_LOG", "1")
            .env("XDG_CONFIG_HOME", s.dir.join("config"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // The layer's vkCreateInstance runs before any driver is looked for.
    assert_eq!(chain(&run(&std::env::current_exe().unwrap())), ["a"]);
    let out = run(&exe);
    assert!(out.contains("RESULT "), "the elevated copy did not run the scenario:\n{out}");
    assert_eq!(chain(&out), Vec::<&str>::new(), "an elevated process read the user's settings file");
}

/// A malformed, truncated or hostile file is ignored whole with one line naming it and why;
/// the layers are then what they would be without it.
#[test]
fn bad_files_are_ignored_with_one_line() {
    let s = setup("bad");
    let a = s.explicit_layer("a");
    s.implicit_layer("implicit");
    let good = settings(&format!(r#""layers": [{}]"#, layer_entry("VK_LAYER_TEST_a", &a, "on", false)));
    let deep = format!(r#"{{"file_format_version": "1.0.0", "settings": {}{}}}"#, "[".repeat(10_000), "]".repeat(10_000));
    let huge = format!(r#"{{"file_format_version": "1.0.0", "settings": {{}}, "pad": "{}"}}"#, "x".repeat(5 << 20));
    for (text, why) in [
        (&good[..good.len() / 2], "invalid JSON"),
        ("[1, 2, 3]", "not a JSON object"),
        (r#"{"settings": {}}"#, "file_format_version"),
        (&deep[..], "invalid JSON"),
        (&huge[..], "larger than"),
    ] {
        s.write_settings(text);
        let (out, err) = s.run(&[("VK_LOADER_DEBUG", "warn"), ("TEST_CREATE_ONLY", "1")]);
        assert_eq!(result(&out), "VK_SUCCESS");
        assert_eq!(chain(&out), ["implicit"], "as without a settings file");
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("loader settings file")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        // Our own line names the file with one slash (the Khronos loader's lines spell it
        // `vulkan//loader_settings.d`, see settings.rs).
        let path = format!("{}/vulkan/loader_settings.d/vk_loader_settings.json", p(&s.dir.join("config")));
        assert!(lines[0].contains(&path) && lines[0].contains(why), "{}", lines[0]);
    }
}

/// `log_locations` sends the loader's lines to files, each with its own filter, in the stderr
/// format; stderr stays `VK_LOADER_DEBUG`'s (here: unset, so silent).
#[test]
fn log_locations_write_files_with_their_filters() {
    let s = setup("log-locations");
    let manifest = common::layer_manifest(&s.explicit, "odd.json", "Odd_TestLayer", &common::test_layer(), "");
    let entries = [layer_entry("Odd_TestLayer", &manifest, "on", false), r#"{"name": "VK_LAYER_missing", "path": "/road/to/nowhere.json", "control": "on"}"#.to_string()];
    let (warnings, everything) = (s.dir.join("warnings.log"), s.dir.join("logs/all.log"));
    std::fs::create_dir_all(everything.parent().unwrap()).unwrap();
    s.write_settings(&settings(&format!(
        r#""layers": [{}], "log_locations": [
            {{"destinations": ["{}"], "filters": ["warn"]}},
            {{"destinations": ["{}"], "filters": ["all"]}}
        ]"#,
        entries.join(","),
        p(&warnings),
        p(&everything),
    )));
    let (out, err) = s.run(&[]);
    assert_eq!((result(&out), listed(&out)), ("VK_SUCCESS", vec!["Odd_TestLayer"]), "{out}{err}");
    assert!(!err.contains("[Vulkan Loader]"), "stderr is VK_LOADER_DEBUG's:\n{err}");
    let line = |level: &str, message: &str| format!("{:<32}{message}", format!("[Vulkan Loader] {level}: "));
    let warning = line("WARNING", "Layer name Odd_TestLayer does not conform to naming standard (Policy #LLP_LAYER_3)");
    let error = line("ERROR", "loader_get_json: Failed to open JSON file /road/to/nowhere.json");
    let filters = line("DEBUG", &format!("Loader Settings Filters for Logging to {}: WARNING", p(&warnings)));
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (warnings, everything) = (read(&warnings), read(&everything));
    assert!(warnings.lines().any(|l| l == warning), "{warnings}");
    // A warning about a layer is a WARNING | LAYER line, which a "warn" filter takes.
    let layer_warning = "[Vulkan Loader] WARNING | LAYER: loader settings file: layer VK_LAYER_missing: manifest /road/to/nowhere.json: ";
    assert!(warnings.lines().any(|l| l.starts_with(layer_warning)), "{warnings}");
    let is_warning = |l: &str| l.starts_with("[Vulkan Loader] WARNING:") || l.starts_with("[Vulkan Loader] WARNING | ");
    assert!(warnings.lines().all(is_warning), "only warnings:\n{warnings}");
    for expected in [&warning, &error, &filters] {
        assert!(everything.lines().any(|l| l == expected), "missing {expected:?} in:\n{everything}");
    }
    // Appended to, never truncated: a second run adds its lines.
    s.run(&[]);
    assert_eq!(read(&s.dir.join("warnings.log")).lines().filter(|l| *l == warning).count(), 2 * warnings.lines().filter(|l| *l == warning).count());
}

/// `additional_drivers` come before the drivers found the usual way (as the Khronos loader finds
/// them), or alone when `additional_drivers_use_exclusively`.
/// `stderr_log` chooses what reaches stderr, in the Khronos loader's format and words: the filter
/// list, the layer configurations, a layer name against the naming policy, a manifest that
/// cannot be opened.
#[test]
fn stderr_log_filters_and_messages() {
    let s = setup("stderr-log");
    let manifest = common::layer_manifest(&s.explicit, "odd.json", "Odd_TestLayer", &common::test_layer(), "");
    let entries = [layer_entry("Odd_TestLayer", &manifest, "on", false), r#"{"name": "VK_LAYER_missing", "path": "/road/to/nowhere.json", "control": "on"}"#.to_string()];
    let layers = format!(r#""layers": [{}]"#, entries.join(","));
    let line = |level: &str, message: &str| format!("{:<32}{message}", format!("[Vulkan Loader] {level}: "));
    let warning = line("WARNING", "Layer name Odd_TestLayer does not conform to naming standard (Policy #LLP_LAYER_3)");
    let error = line("ERROR", "loader_get_json: Failed to open JSON file /road/to/nowhere.json");
    let configurations = line("DEBUG", "Layer Configurations count = 2");

    s.write_settings(&settings(&format!(r#"{layers}, "stderr_log": ["all"]"#)));
    let (out, err) = s.run(&[]);
    assert_eq!((result(&out), listed(&out)), ("VK_SUCCESS", vec!["Odd_TestLayer"]), "{out}{err}");
    for expected in [&line("DEBUG", "Loader Settings Filters for Logging to Standard Error: ERROR | WARNING | INFO | DEBUG | PERF | DRIVER | LAYER"), &configurations, &warning, &error] {
        assert!(err.lines().any(|l| l == expected), "missing {expected:?} in:\n{err}");
    }
    s.write_settings(&settings(&format!(r#"{layers}, "stderr_log": ["warn", "debug"]"#)));
    let (_, err) = s.run(&[]);
    assert!(err.lines().any(|l| l == line("DEBUG", "Loader Settings Filters for Logging to Standard Error: WARNING | DEBUG")), "{err}");
    assert!(err.lines().any(|l| l == warning) && !err.lines().any(|l| l == error), "{err}");
}

#[test]
fn additional_drivers() {
    let s = setup("drivers");
    let extra = common::driver_manifest(&s.dir, "extra.json", &common::tagged_driver(&s.dir, "extra"));
    // Devices of the same kind: the usual order keeps the drivers' order. Told apart by vendor.
    let devices = [("VK_TEST_DRIVER_DEVICES", "other:10:1"), ("VK_TEST_DRIVER_DEVICES_EXTRA", "other:20:1")];
    let entry = format!(r#""additional_drivers": [{{"path": "{}"}}]"#, extra.display());
    s.write_settings(&settings(&entry));
    assert_eq!(vendors(&s.run(&devices).0), ["20", "10"]);
    s.write_settings(&settings(&format!(r#"{entry}, "additional_drivers_use_exclusively": true"#)));
    assert_eq!(vendors(&s.run(&devices).0), ["20"]);
}

/// The vendor ids of the devices `vkEnumeratePhysicalDevices` listed, in order.
fn vendors(out: &str) -> Vec<&str> {
    out.lines().filter_map(|l| l.strip_prefix("DEVICE ")).collect()
}

/// A `device_configurations` entry for the test driver's device `index` of `vendor:device`
/// (its UUIDs and driver version as tests/driver makes them).
fn device_entry(vendor: u32, device: u32, index: u32) -> String {
    let mut uuid = b"VKTD".to_vec();
    for n in [vendor, device, index] {
        uuid.extend_from_slice(&n.to_le_bytes());
    }
    let list = |bytes: &[u8]| bytes.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
    format!(
        r#"{{"deviceName": "any", "deviceUUID": [{}], "driverUUID": [{}], "driverVersion": 4096}}"#,
        list(&uuid),
        list(b"vk_test_driver\0\0")
    )
}

/// `device_configurations` choose the devices the application sees, in the file's order; none
/// matching makes enumeration fail; the driver environment variables no longer apply.
#[test]
fn device_configurations_choose_and_order_devices() {
    let s = setup("devices");
    let devices = [("VK_TEST_DRIVER_DEVICES", "other:10:1,other:20:2,other:30:3")];
    let write = |entries: &[String]| s.write_settings(&settings(&format!(r#""device_configurations": [{}]"#, entries.join(","))));
    // Found by the usual search: VK_DRIVER_FILES is not read while device configurations apply.
    let driver_dir = s.dir.join("config/vulkan/icd.d");
    std::fs::create_dir_all(&driver_dir).unwrap();
    common::driver_manifest(&driver_dir, "driver.json", &common::test_driver());
    write(&[device_entry(0x30, 3, 2), device_entry(0x10, 1, 0)]);
    let (out, _) = s.run(&[devices[0], ("VK_DRIVER_FILES", "/nowhere/driver.json")]);
    assert_eq!(vendors(&out), ["30", "10"], "{out}");

    write(&[device_entry(0x40, 4, 0)]);
    let (out, _) = s.run(&devices);
    assert!(out.contains("DEVICES VK_SUCCESS VK_ERROR_INITIALIZATION_FAILED"), "{out}");
}
