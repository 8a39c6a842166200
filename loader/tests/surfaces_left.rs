//! Surfaces the application leaves when it destroys their instance (Vulkan requires them destroyed
//! first; the Khronos suite's swapchain tests leave two when an assertion stops them) are
//! destroyed with the instance, the drivers' own first: nothing is lost (run under valgrind's
//! memcheck), and the log says how many there were.

mod common;

use std::ffi::{c_char, CStr};

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child: an instance with three headless surfaces; the application destroys one and leaves
/// two to `vkDestroyInstance`.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("surfaces-left") {
        return;
    }
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the export has this signature; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: a NULL or live instance of this loader, a C string.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance and the surfaces are used between their creation and their destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let extensions = [c"VK_KHR_surface".as_ptr(), c"VK_EXT_headless_surface".as_ptr()];
        let info = VkInstanceCreateInfo { enabledExtensionCount: 2, ppEnabledExtensionNames: extensions.as_ptr(), ..Default::default() };
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let create_surface: PFN_vkCreateHeadlessSurfaceEXT = std::mem::transmute(get(instance, c"vkCreateHeadlessSurfaceEXT"));
        let headless = VkHeadlessSurfaceCreateInfoEXT::default();
        let mut surfaces = [VkSurfaceKHR::NULL; 3];
        for surface in &mut surfaces {
            assert_eq!(create_surface.unwrap()(instance, &headless, std::ptr::null(), surface), VkResult::SUCCESS);
        }
        let destroy_surface: PFN_vkDestroySurfaceKHR = std::mem::transmute(get(instance, c"vkDestroySurfaceKHR"));
        destroy_surface.unwrap()(instance, surfaces[1], std::ptr::null());
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
    println!("DONE");
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
fn surfaces_left_at_instance_destruction_are_destroyed_with_it() {
    assert!(std::process::Command::new("valgrind").arg("--version").output().is_ok(), "valgrind missing: install valgrind");
    let dir = common::scratch("surfaces-left");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_headless_surface".to_string()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("VK_LOADER_DEBUG", "warn".to_string()),
    ];
    let run = common::run_scenario_under(MEMCHECK, "scenario_entry", "surfaces-left", &env);
    assert!(run.status.success() && run.stdout.contains("DONE"), "{:?}\n{}{}", run.status, run.stdout, run.stderr);
    assert!(!run.stderr.contains("=="), "memcheck reported:\n{}", run.stderr);
    assert!(
        run.stderr.contains("vkDestroyInstance: 2 surfaces the application did not destroy, destroyed with the instance"),
        "{}",
        run.stderr
    );
}
