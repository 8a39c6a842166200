//! An application that loads our library, uses it from a thread and unloads it (`dlclose`, as the
//! Khronos suite's framework does at the end of each test) loses nothing: the library is linked
//! `-z nodelete`, so it stays mapped with its process-lifetime state (the parsed manifests, the
//! driver cache's decoded file, the executable's name, the unknown-command registry), which the
//! next `dlopen` finds again. Unmapped, that state was lost at each unload: valgrind's definite
//! leaks in the Khronos suite's `Threading.*CreateDestroyLoop`, whose threads' exits let the
//! library go (a thread-local destructor pending in a thread keeps it loaded until then).
//!
//! The child runs under valgrind's memcheck; the test driver's own statics, lost when the loader
//! unloads it, are suppressed.

mod common;

use std::ffi::{c_char, CStr};

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Whether a file named `name` is mapped into this process.
fn mapped(name: &str) -> bool {
    std::fs::read_to_string("/proc/self/maps").unwrap().lines().any(|l| l.ends_with(name))
}

/// The child: twice, loads the library, lets a thread create and destroy an instance and a device
/// and name a command unknown to the registry, and unloads the library once the thread is gone.
/// Prints whether the library is still mapped after each round (`MAPPED_AFTER_UNLOAD`).
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("unload") {
        return;
    }
    println!();
    let path = std::env::var("LIBVULKAN").unwrap();
    for _ in 0..2 {
        // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
        let lib = unsafe { libloading::Library::new(&path).unwrap() };
        // SAFETY: the export has this signature; `lib` stays loaded until the thread has ended.
        let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
        std::thread::spawn(move || round(gipa)).join().unwrap();
        // Unloaded from the main thread once the thread is gone, as the Khronos suite does: a
        // thread-local destructor of the library pending in a live thread would keep it loaded.
        drop(lib);
        let name = std::path::Path::new(&path).file_name().unwrap().to_str().unwrap().to_string();
        println!("MAPPED_AFTER_UNLOAD {}", mapped(&name));
    }
    println!("DONE");
}

/// A thread's use of the library: an instance, a device and a command unknown to the registry.
fn round(gipa: Gipa) {
    // SAFETY: a NULL or live instance of this loader, a C string.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance and device are used between their creation and their destruction; the other
    // pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let devices = common::physical_devices(&get, instance);
        assert_eq!(devices.len(), 1);
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        assert_eq!(create_device.unwrap()(devices[0], &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        // A name the registry does not know: the loader's unknown-command names hold it.
        let _ = get(instance, c"vkSomeVendorCommandUNLOAD");
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
        destroy_device.unwrap()(device, std::ptr::null());
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Memcheck, with the test driver's own statics (lost when it is unloaded) suppressed.
const MEMCHECK: &str = concat!(
    "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --keep-debuginfo=yes --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/unloaded-test-driver.supp --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/system-libraries.supp"
);

#[test]
fn unloading_the_library_after_using_it_from_threads_loses_no_memory() {
    assert!(std::process::Command::new("valgrind").arg("--version").output().is_ok(), "valgrind missing: install valgrind");
    let dir = common::scratch("unload");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    // A copy of its own: no other library of the process shares its name in /proc/self/maps.
    let libvulkan = dir.join("libvulkan-unload.so.1");
    std::fs::copy(common::libvulkan(), &libvulkan).unwrap();
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("LIBVULKAN", libvulkan.display().to_string()),
    ];
    let run = common::run_scenario_under(MEMCHECK, "scenario_entry", "unload", &env);
    assert!(run.status.success() && run.stdout.contains("DONE"), "{:?}\n{}{}", run.status, run.stdout, run.stderr);
    assert!(!run.stderr.contains("=="), "memcheck reported:\n{}", run.stderr);
    let mapped: Vec<&str> = run.stdout.lines().filter_map(|l| l.strip_prefix("MAPPED_AFTER_UNLOAD ")).collect();
    assert_eq!(mapped, ["true", "true"], "the library stays mapped after dlclose (-z nodelete)\n{}", run.stderr);
}
