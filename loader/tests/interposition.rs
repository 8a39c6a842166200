//! Tools that interpose libc (sandboxes, fakechroot, container runtimes, the Khronos loader's test
//! shim) see and can redirect every file the loader touches: `c/redirect.c`, preloaded, serves
//! manifests, a driver and a layer under `/vk-virtual/`, a path the kernel does not know, through
//! `opendir`, `fopen` and `dlopen` only, and copies what reaches stderr through `fputs`/`fputc`.

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child side: one instance, its devices (`DEVICE <name>`) and the instance layers
/// (`LAYER <name>`).
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("interposed") {
        return;
    }
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or the live one created below.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // `instance` is live from its creation to vkDestroyInstance; the other pointers are locals.
    unsafe {
        let layers: PFN_vkEnumerateInstanceLayerProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceLayerProperties"));
        let mut count = 0;
        layers.unwrap()(&mut count, std::ptr::null_mut());
        let mut props = vec![VkLayerProperties::default(); count as usize];
        layers.unwrap()(&mut count, props.as_mut_ptr());
        for p in &props[..count as usize] {
            println!("LAYER {}", common::fixed_str(&p.layerName));
        }
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance), VkResult::SUCCESS);
        common::list_devices(&get, instance);
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// The virtual tree, under `root`: `share/vulkan/icd.d/virtual_test_driver.json` naming
/// `/vk-virtual/lib/libvk_test_driver.so`, and `layers/virtual_layer.json` an implicit layer in
/// `/vk-virtual/lib/libvk_test_layer.so`.
fn virtual_tree(root: &Path) {
    let (lib, icd, layers) = (root.join("lib"), root.join("share/vulkan/icd.d"), root.join("layers"));
    for dir in [&lib, &icd, &layers] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::copy(common::test_driver(), lib.join("libvk_test_driver.so")).unwrap();
    std::fs::copy(common::test_layer(), lib.join("libvk_test_layer.so")).unwrap();
    common::driver_manifest(&icd, "virtual_test_driver.json", Path::new("/vk-virtual/lib/libvk_test_driver.so"));
    let extra = r#", "disable_environment": {"DISABLE_VIRTUAL_LAYER": "1"}"#;
    common::layer_manifest(&layers, "virtual_layer.json", "VK_LAYER_TEST_virtual", Path::new("/vk-virtual/lib/libvk_test_layer.so"), extra);
}

fn run(name: &str, env: &[(&str, String)]) -> (String, String) {
    let dir = common::scratch(name);
    let interposer = common::preload_library(&dir, "redirect");
    virtual_tree(&dir.join("root"));
    let stderr_copy = dir.join("stderr-copy.txt");
    let mut env = env.to_vec();
    env.extend([
        ("LD_PRELOAD", interposer.display().to_string()),
        ("REDIRECT_TO", dir.join("root").display().to_string()),
        ("REDIRECT_STDERR_COPY", stderr_copy.display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", "/vk-virtual/layers".to_string()),
        ("VK_TEST_DRIVER_DEVICES", "integrated".to_string()),
        ("VK_LOADER_DEBUG", "all".to_string()),
    ]);
    let (ok, stdout, stderr) = common::child("interposed", &env);
    assert!(ok, "{stdout}{stderr}");
    assert!(!Path::new("/vk-virtual").exists(), "the virtual root must not exist for real");
    (stdout, std::fs::read_to_string(&stderr_copy).unwrap_or_default())
}

fn assert_served_through_the_interposer(stdout: &str, stderr_copy: &str) {
    assert!(stdout.lines().any(|l| l.ends_with("DEVICE Test Driver integrated 0")), "driver not found:\n{stdout}\n{stderr_copy}");
    assert!(stdout.lines().any(|l| l.ends_with("LAYER VK_LAYER_TEST_virtual")), "layer not found:\n{stdout}\n{stderr_copy}");
    assert!(
        stderr_copy.lines().any(|l| l.starts_with("[Vulkan Loader] LAYER") && l.contains("VK_LAYER_TEST_virtual")),
        "the layer is not in the instance chain, or the log did not go through fputs:\n{stderr_copy}"
    );
}

#[test]
fn manifests_in_searched_directories_and_libraries_come_through_libc() {
    let (stdout, stderr_copy) = run(
        "interposed-search",
        &[
            ("XDG_DATA_DIRS", "/vk-virtual/share".to_string()),
            ("VK_LOADER_DRIVERS_SELECT", "virtual_*".to_string()),
        ],
    );
    assert_served_through_the_interposer(&stdout, &stderr_copy);
}

#[test]
fn a_manifest_named_in_vk_driver_files_comes_through_libc() {
    let path = "/vk-virtual/share/vulkan/icd.d/virtual_test_driver.json".to_string();
    let (stdout, stderr_copy) = run("interposed-driver-files", &[("VK_DRIVER_FILES", path)]);
    assert_served_through_the_interposer(&stdout, &stderr_copy);
}
