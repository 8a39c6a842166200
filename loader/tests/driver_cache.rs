//! Driver libraries are shared between the instances that use them and unloaded with the last
//! (library_cache), as the Khronos loader unloads them: each vkCreateInstance follows the current
//! environment and manifests, and destroying one instance leaves another working.
//!
//! The steps run in one child process (this test binary re-run with `SCENARIO` set), because the
//! point is what one process keeps between instances.

mod common;

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::process::Command;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child side: the steps, each printing `STEP <n> <what it saw>`.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("cache") {
        return;
    }
    let var = |name: &str| PathBuf::from(std::env::var(name).unwrap());
    let (manifest, other_manifest) = (var("CACHE_MANIFEST"), var("CACHE_OTHER_MANIFEST"));
    let (lib_a, lib_b) = (var("CACHE_LIB_A"), var("CACHE_LIB_B"));
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };

    // SAFETY: `gipa` is our libvulkan's vkGetInstanceProcAddr, loaded to the end; each instance
    // is used between its creation and its destruction.
    unsafe {
        // 1: the manifest names driver a.
        let first = create(gipa);
        println!("STEP 1 {}", devices(gipa, first).join(","));
        destroy(gipa, first);
        println!("STEP 1 a still loaded after its last vkDestroyInstance: {}", loaded(&lib_a));

        // 2: the same manifest file, rewritten to name driver b.
        std::fs::write(&manifest, manifest_text(&lib_b)).unwrap();
        let second = create(gipa);
        println!("STEP 2 {}", devices(gipa, second).join(","));

        // 3: the environment changed to another manifest (driver a again), while `second` lives.
        std::env::set_var("VK_DRIVER_FILES", &other_manifest);
        let third = create(gipa);
        println!("STEP 3 {}", devices(gipa, third).join(","));

        // 4: destroying one instance leaves the other one's driver working.
        destroy(gipa, third);
        println!("STEP 4 {}", devices(gipa, second).join(","));
        println!("STEP 4 b still loaded while an instance uses it: {}", loaded(&lib_b));
        destroy(gipa, second);
        println!("STEP 5 a or b still loaded after the last vkDestroyInstance: {}", loaded(&lib_a) || loaded(&lib_b));
    }
}

fn manifest_text(library: &Path) -> String {
    format!(r#"{{"file_format_version": "1.0.1", "ICD": {{"library_path": "{}", "api_version": "1.4.342"}}}}"#, library.display())
}

/// Whether `library` is loaded in this process (dlopen with RTLD_NOLOAD).
fn loaded(library: &Path) -> bool {
    let flags = libc::RTLD_NOW | libc::RTLD_NOLOAD;
    // SAFETY: RTLD_NOLOAD loads nothing, so no initialiser runs; the handle is closed at once.
    unsafe { libloading::os::unix::Library::open(Some(library), flags) }.is_ok()
}

/// A new instance with no layer or extension.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn create(gipa: Gipa) -> VkInstance {
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type;
    // the handles are live (the contract) or just created, and the other pointers point to locals
    // that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance);
        assert_eq!(result, VkResult::SUCCESS);
        instance
    }
}

/// Destroys `instance`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it, not used again.
unsafe fn destroy(gipa: Gipa, instance: VkInstance) {
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type;
    // the handles are live (the contract) or just created, and the other pointers point to locals
    // that outlive each call.
    unsafe {
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(gipa(instance, c"vkDestroyInstance".as_ptr()));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// The names of the instance's physical devices.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it.
unsafe fn devices(gipa: Gipa, instance: VkInstance) -> Vec<String> {
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type;
    // the handles are live (the contract) or just created, and the other pointers point to locals
    // that outlive each call.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(gipa(instance, c"vkEnumeratePhysicalDevices".as_ptr()));
        let props: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(gipa(instance, c"vkGetPhysicalDeviceProperties".as_ptr()));
        let mut count = 0;
        enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
        devices
            .iter()
            .map(|&d| {
                let mut p = VkPhysicalDeviceProperties::default();
                props.unwrap()(d, &mut p);
                common::fixed_str(&p.deviceName)
            })
            .collect()
    }
}

#[test]
fn later_instances_follow_changed_manifests_and_environment() {
    let dir = common::scratch("cache");
    let (lib_a, lib_b) = (common::tagged_driver(&dir, "a"), common::tagged_driver(&dir, "b"));
    let manifest = common::driver_manifest(&dir, "changing.json", &lib_a);
    let other = common::driver_manifest(&dir, "other.json", &lib_a);
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"]).env("SCENARIO", "cache");
    for var in ["VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE"] {
        cmd.env_remove(var);
    }
    cmd.env("VK_DRIVER_FILES", &manifest)
        .env("VK_TEST_DRIVER_DEVICES_A", "discrete")
        .env("VK_TEST_DRIVER_DEVICES_B", "integrated")
        .env("CACHE_MANIFEST", &manifest)
        .env("CACHE_OTHER_MANIFEST", &other)
        .env("CACHE_LIB_A", &lib_a)
        .env("CACHE_LIB_B", &lib_b);
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    for expected in [
        "STEP 1 Test Driver discrete 0",
        "STEP 1 a still loaded after its last vkDestroyInstance: false",
        "STEP 2 Test Driver integrated 0",
        "STEP 3 Test Driver discrete 0",
        "STEP 4 Test Driver integrated 0",
        "STEP 4 b still loaded while an instance uses it: true",
        "STEP 5 a or b still loaded after the last vkDestroyInstance: false",
    ] {
        assert!(stdout.lines().any(|l| l.ends_with(expected)), "missing {expected:?} in:\n{stdout}{stderr}");
    }
}
