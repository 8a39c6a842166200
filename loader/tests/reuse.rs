//! Every call looks at the file system again, reusing a manifest's parse only while the opened
//! file's identity is unchanged (`platform::file_cache`): every change a call must see is seen by
//! the very next call in the same process: a layer manifest added, rewritten in place, removed; a
//! manifest directory that did not exist created; a driver manifest added (with an instance
//! extension the first driver lacks); an environment variable set; the file a manifest's symbolic
//! link points to replaced by a rename. The same steps run in one process (its parses of settled
//! files reused) and each in a process of its own (the driver cache answering), and must print
//! the same.

mod common;

use std::ffi::{c_char, CStr};

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child: the steps, each followed by what the loader says (`STEP <name>` then `EXTENSIONS
/// <count>`, `LAYER <name> <description>` and `DEVICES <count>` lines).
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("steps") {
        return;
    }
    let root = std::path::PathBuf::from(std::env::var("REUSE_ROOT").unwrap());
    let layer = std::path::PathBuf::from(std::env::var("REUSE_LAYER_LIB").unwrap());
    let (_lib, gipa) = loader();
    let say = |step: &str| {
        // On a line of its own: the test harness's own words may precede it.
        println!("\nSTEP {step}");
        // SAFETY: `gipa` is our loader's, and `_lib` keeps it loaded.
        unsafe { print_state(gipa) };
    };
    // Only files modified two seconds before have their parses reused (`FileIdentity::is_settled`):
    // the tree, made by the parent just now, settles first, and a first round of calls parses it.
    std::thread::sleep(std::time::Duration::from_millis(3100));
    for _ in 0..3 {
        // SAFETY: `gipa` is our loader's, and `_lib` keeps it loaded.
        unsafe { print_state(gipa) };
    }
    say("start");
    for &step in STEPS {
        // SAFETY: the child's own environment, set between loader calls on this thread only.
        change(step, &root, &layer, &mut |name, value| unsafe { std::env::set_var(name, value) });
        say(step);
    }
}

/// The changes, in order, each seen by the next call (or process).
const STEPS: &[&str] = &[
    "layer manifest added",
    "layer manifest rewritten",
    "layer manifest removed",
    "manifest directory created",
    "driver manifest added",
    "environment changed",
    "symbolic link's target replaced",
];

/// Makes the change `step` to the tree at `root` (`set_env` for a variable).
fn change(step: &str, root: &std::path::Path, layer: &std::path::Path, set_env: &mut dyn FnMut(&str, String)) {
    let explicit = root.join("data/vulkan/explicit_layer.d");
    match step {
        "layer manifest added" => {
            common::layer_manifest(&explicit, "b.json", "VK_LAYER_REUSE_b", layer, "");
        }
        "layer manifest rewritten" => {
            let a = explicit.join("a.json");
            let text = std::fs::read_to_string(&a).unwrap().replace("test layer VK_LAYER_REUSE_a", "rewritten in place");
            std::fs::write(&a, text).unwrap();
        }
        "layer manifest removed" => std::fs::remove_file(explicit.join("b.json")).unwrap(),
        "manifest directory created" => {
            let config_layers = root.join("config/vulkan/explicit_layer.d");
            std::fs::create_dir_all(&config_layers).unwrap();
            common::layer_manifest(&config_layers, "c.json", "VK_LAYER_REUSE_c", layer, "");
        }
        "driver manifest added" => {
            common::driver_manifest(&root.join("config/vulkan/icd.d"), "second.json", &common::tagged_driver(root, "second"));
        }
        "environment changed" => set_env("VK_ADD_LAYER_PATH", root.join("added").display().to_string()),
        // A manifest that is a symbolic link to a file elsewhere, its target replaced by a rename
        // (as an editor or a package manager writes it).
        "symbolic link's target replaced" => {
            let target = root.join("elsewhere/e.json");
            let text = std::fs::read_to_string(&target).unwrap().replace("test layer VK_LAYER_REUSE_e", "replaced by a rename");
            std::fs::write(root.join("elsewhere/e.json.new"), text).unwrap();
            std::fs::rename(root.join("elsewhere/e.json.new"), &target).unwrap();
        }
        other => panic!("no step {other}"),
    }
}

/// The child of the test across processes: the state once (`STEP <name>` first).
#[test]
fn scenario_state() {
    if std::env::var("SCENARIO").as_deref() != Ok("state") {
        return;
    }
    let (_lib, gipa) = loader();
    println!("\nSTEP {}", std::env::var("REUSE_STEP").unwrap());
    // SAFETY: `gipa` is our loader's, and `_lib` keeps it loaded.
    unsafe { print_state(gipa) };
}

/// The loader under test, loaded, and its `vkGetInstanceProcAddr`.
fn loader() -> (libloading::Library, Gipa) {
    // SAFETY: loading the loader under test and reading an export of its known signature.
    unsafe {
        let lib = libloading::Library::new(common::libvulkan()).unwrap();
        let gipa: Gipa = *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap();
        (lib, gipa)
    }
}

/// Prints the number of instance extensions, the instance layers and the number of physical
/// devices.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn print_state(gipa: Gipa) {
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type;
    // the instance is used between its creation and its destruction; the other pointers point to
    // locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let get = |instance: VkInstance, name: &CStr| gipa(instance, name.as_ptr());
        let extensions: PFN_vkEnumerateInstanceExtensionProperties =
            std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
        let mut count = 0;
        assert_eq!(extensions.unwrap()(std::ptr::null(), &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
        let mut listed = vec![VkExtensionProperties::default(); count as usize];
        assert_eq!(extensions.unwrap()(std::ptr::null(), &mut count, listed.as_mut_ptr()), VkResult::SUCCESS);
        println!("EXTENSIONS {count}");
        let layers: PFN_vkEnumerateInstanceLayerProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceLayerProperties"));
        let mut count = 0;
        layers.unwrap()(&mut count, std::ptr::null_mut());
        let mut props = vec![VkLayerProperties::default(); count as usize];
        layers.unwrap()(&mut count, props.as_mut_ptr());
        for p in &props[..count as usize] {
            println!("LAYER {} {}", common::fixed_str(&p.layerName), common::fixed_str(&p.description));
        }
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut devices = 0;
        assert_eq!(enumerate.unwrap()(instance, &mut devices, std::ptr::null_mut()), VkResult::SUCCESS);
        println!("DEVICES {devices}");
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// A fresh tree: one driver in the XDG config directory, layer `a` in the data directory, layer
/// `d` in a directory only `VK_ADD_LAYER_PATH` names. Its root and the environment that points
/// the loader at it.
fn tree(name: &str) -> (std::path::PathBuf, Vec<(String, String)>) {
    let root = common::scratch(name);
    let layer = common::test_layer();
    std::fs::create_dir_all(root.join("data/vulkan/explicit_layer.d")).unwrap();
    common::layer_manifest(&root.join("data/vulkan/explicit_layer.d"), "a.json", "VK_LAYER_REUSE_a", &layer, "");
    std::fs::create_dir_all(root.join("config/vulkan/icd.d")).unwrap();
    common::driver_manifest(&root.join("config/vulkan/icd.d"), "first.json", &common::tagged_driver(&root, "first"));
    std::fs::create_dir_all(root.join("added")).unwrap();
    std::fs::create_dir_all(root.join("elsewhere")).unwrap();
    common::layer_manifest(&root.join("elsewhere"), "e.json", "VK_LAYER_REUSE_e", &layer, "");
    std::os::unix::fs::symlink(root.join("elsewhere/e.json"), root.join("added/e.json")).unwrap();
    common::layer_manifest(&root.join("added"), "d.json", "VK_LAYER_REUSE_d", &layer, "");
    let p = |relative: &str| root.join(relative).display().to_string();
    let env = [
        ("REUSE_ROOT", root.display().to_string()),
        ("REUSE_LAYER_LIB", layer.display().to_string()),
        ("HOME", p("home")),
        ("XDG_CONFIG_HOME", p("config")),
        ("XDG_CONFIG_DIRS", p("config-dirs")),
        ("XDG_DATA_HOME", p("data")),
        ("XDG_DATA_DIRS", p("data-dirs")),
        ("XDG_CACHE_HOME", p("cache")),
        // The tests' default of no layer at all, lifted: the standard search is the subject.
        ("VK_LAYER_PATH", String::new()),
        ("VK_IMPLICIT_LAYER_PATH", String::new()),
        // The driver of step "driver manifest added" has one instance extension more.
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_SECOND", "VK_KHR_surface,VK_KHR_get_physical_device_properties2,VK_KHR_display".to_string()),
    ];
    (root, env.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The steps' lines of a child's output.
fn state_lines(out: &str) -> String {
    out.lines().filter(|l| ["STEP ", "EXTENSIONS ", "LAYER ", "DEVICES "].iter().any(|p| l.starts_with(p))).collect::<Vec<_>>().join("\n")
}

/// Every step in one process.
fn run(name: &str) -> String {
    let (_, env) = tree(name);
    let env: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let (ok, out, err) = common::child("steps", &env);
    assert!(ok, "{out}{err}");
    state_lines(&out[out.find("STEP start").expect("the steps ran")..])
}

#[test]
fn every_change_is_seen_by_the_next_call_and_the_next_process() {
    let reused = run("reuse-one-process");
    let expected = "\
STEP start
EXTENSIONS 6
LAYER VK_LAYER_REUSE_a test layer VK_LAYER_REUSE_a
DEVICES 1
STEP layer manifest added
EXTENSIONS 6
LAYER VK_LAYER_REUSE_a test layer VK_LAYER_REUSE_a
LAYER VK_LAYER_REUSE_b test layer VK_LAYER_REUSE_b
DEVICES 1
STEP layer manifest rewritten
EXTENSIONS 6
LAYER VK_LAYER_REUSE_a rewritten in place
LAYER VK_LAYER_REUSE_b test layer VK_LAYER_REUSE_b
DEVICES 1
STEP layer manifest removed
EXTENSIONS 6
LAYER VK_LAYER_REUSE_a rewritten in place
DEVICES 1
STEP manifest directory created
EXTENSIONS 6
LAYER VK_LAYER_REUSE_c test layer VK_LAYER_REUSE_c
LAYER VK_LAYER_REUSE_a rewritten in place
DEVICES 1
STEP driver manifest added
EXTENSIONS 7
LAYER VK_LAYER_REUSE_c test layer VK_LAYER_REUSE_c
LAYER VK_LAYER_REUSE_a rewritten in place
DEVICES 2
STEP environment changed
EXTENSIONS 7
LAYER VK_LAYER_REUSE_d test layer VK_LAYER_REUSE_d
LAYER VK_LAYER_REUSE_e test layer VK_LAYER_REUSE_e
LAYER VK_LAYER_REUSE_c test layer VK_LAYER_REUSE_c
LAYER VK_LAYER_REUSE_a rewritten in place
DEVICES 2
STEP symbolic link's target replaced
EXTENSIONS 7
LAYER VK_LAYER_REUSE_d test layer VK_LAYER_REUSE_d
LAYER VK_LAYER_REUSE_e replaced by a rename
LAYER VK_LAYER_REUSE_c test layer VK_LAYER_REUSE_c
LAYER VK_LAYER_REUSE_a rewritten in place
DEVICES 2";
    assert_eq!(reused, expected);
    assert_eq!(run_across_processes(), reused, "a process of its own per step sees the same");
}

/// Every step in a process of its own, on the driver cache the processes before it wrote.
fn run_across_processes() -> String {
    let (root, mut env) = tree("reuse-processes");
    let layer = common::test_layer();
    let state = |step: &str, env: &[(String, String)]| {
        let mut env: Vec<(&str, String)> = env.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        env.push(("REUSE_STEP", step.to_string()));
        let run = common::run_scenario("scenario_state", "state", &env);
        assert!(run.status.success(), "{}{}", run.stdout, run.stderr);
        state_lines(&run.stdout)
    };
    let mut all = state("start", &env);
    for &step in STEPS {
        change(step, &root, &layer, &mut |name, value| env.push((name.to_string(), value)));
        all += "\n";
        all += &state(step, &env);
    }
    all
}
