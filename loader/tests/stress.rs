//! Concurrency: threads create and destroy instances and devices (with a layer enabled and two
//! drivers) while others ask `vkGetInstanceProcAddr`, enumerate, and create and destroy
//! debug-utils messengers and surfaces on a shared instance. Every call must succeed, the process
//! must neither crash nor hang, and each thread must get through a fixed number of rounds; the
//! threads that finish theirs first go on until the last one has, so the loops overlap to the end.
//! Nothing depends on how fast the machine is: a deadlock shows as the child watchdog's kill.

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Barrier;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The rounds each thread must complete (`STRESS_ROUNDS` in the child, fewer under valgrind).
const ROUNDS: usize = 40;
/// The same under valgrind's memcheck, where one instance round takes about a second.
const ROUNDS_UNDER_VALGRIND: usize = 3;

/// A command by name, cast to its type (`None` is a test failure).
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, `instance` NULL or a live instance of it, and `T`
/// the PFN type of the command `name`.
unsafe fn get<T>(gipa: Gipa, instance: VkInstance, name: &CStr) -> T {
    assert_eq!(size_of::<T>(), size_of::<PFN_vkVoidFunction>());
    // SAFETY: `instance` is NULL or live and the name a C string (the contract).
    let f = unsafe { gipa(instance, name.as_ptr()) };
    assert!(f.is_some(), "{name:?} is NULL");
    // SAFETY: the loader answered for `name`, so `f` is a function of the type `T` is (the
    // contract), and it has the size of one (asserted).
    unsafe { std::mem::transmute_copy(&f) }
}

fn check(what: &str, result: VkResult) {
    assert_eq!(result, VkResult::SUCCESS, "{what}");
}

/// An instance with VK_EXT_debug_utils, VK_KHR_surface and VK_EXT_headless_surface.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn create_instance(gipa: Gipa) -> VkInstance {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let extensions = [c"VK_EXT_debug_utils".as_ptr(), c"VK_KHR_surface".as_ptr(), c"VK_EXT_headless_surface".as_ptr()];
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            enabledExtensionCount: extensions.len() as u32,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = get(gipa, VkInstance::NULL, c"vkCreateInstance");
        let mut instance = VkInstance::NULL;
        check("vkCreateInstance", create.unwrap()(&info, std::ptr::null(), &mut instance));
        instance
    }
}

/// Destroys `instance`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it, not used
/// again.
unsafe fn destroy_instance(gipa: Gipa, instance: VkInstance) {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let destroy: PFN_vkDestroyInstance = get(gipa, instance, c"vkDestroyInstance");
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// The instance's physical devices (two: one per driver, asserted).
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it.
unsafe fn physical_devices(gipa: Gipa, instance: VkInstance) -> Vec<VkPhysicalDevice> {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = get(gipa, instance, c"vkEnumeratePhysicalDevices");
        let mut count = 0;
        check("count devices", enumerate.unwrap()(instance, &mut count, std::ptr::null_mut()));
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        check("enumerate devices", enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr()));
        assert_eq!(count, 2, "one device from each driver");
        devices
    }
}

/// Creates a device on each physical device, gets a queue and a command through it, destroys it.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it.
unsafe fn devices_round(gipa: Gipa, instance: VkInstance) {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let create: PFN_vkCreateDevice = get(gipa, instance, c"vkCreateDevice");
        let gdpa: PFN_vkGetDeviceProcAddr = get(gipa, instance, c"vkGetDeviceProcAddr");
        for physical in physical_devices(gipa, instance) {
            let priority = 1.0f32;
            let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
            let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
            let mut device = VkDevice::NULL;
            check("vkCreateDevice", create.unwrap()(physical, &info, std::ptr::null(), &mut device));
            let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(gdpa.unwrap()(device, c"vkGetDeviceQueue".as_ptr()));
            let mut q = VkQueue::NULL;
            get_queue.unwrap()(device, 0, 0, &mut q);
            assert!(!q.0.is_null(), "no queue");
            assert!(gdpa.unwrap()(device, c"vkCmdDraw".as_ptr()).is_some(), "no vkCmdDraw");
            let destroy: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
            destroy.unwrap()(device, std::ptr::null());
        }
    }
}

/// A messenger callback that ignores what it hears.
///
/// # Safety
/// None: it reads none of its arguments.
unsafe extern "system" fn ignore_messages(
    _: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    _: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut std::ffi::c_void,
) -> VkBool32 {
    VK_FALSE
}

/// A messenger and a headless surface created and destroyed on `instance`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it, with
/// VK_EXT_debug_utils and VK_EXT_headless_surface enabled.
unsafe fn messenger_and_surface_round(gipa: Gipa, instance: VkInstance) {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = get(gipa, instance, c"vkCreateDebugUtilsMessengerEXT");
        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT = get(gipa, instance, c"vkDestroyDebugUtilsMessengerEXT");
        let info = VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
            messageType: VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT,
            pfnUserCallback: Some(ignore_messages),
            ..Default::default()
        };
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        check("vkCreateDebugUtilsMessengerEXT", create_messenger.unwrap()(instance, &info, std::ptr::null(), &mut messenger));
        let create_surface: PFN_vkCreateHeadlessSurfaceEXT = get(gipa, instance, c"vkCreateHeadlessSurfaceEXT");
        let destroy_surface: PFN_vkDestroySurfaceKHR = get(gipa, instance, c"vkDestroySurfaceKHR");
        let mut surface = VkSurfaceKHR::NULL;
        check("vkCreateHeadlessSurfaceEXT", create_surface.unwrap()(instance, &VkHeadlessSurfaceCreateInfoEXT::default(), std::ptr::null(), &mut surface));
        destroy_surface.unwrap()(instance, surface, std::ptr::null());
        destroy_messenger.unwrap()(instance, messenger, std::ptr::null());
    }
}

/// Global queries: names through vkGetInstanceProcAddr(NULL), the instance extensions and layers.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn global_round(gipa: Gipa) {
    // SAFETY: each command comes from `get` with its own PFN type; the handles are live (the
    // contract) or made here and used between their creation and their destruction; the other
    // pointers point to locals that outlive each call, each array as long as the count passed with it.
    unsafe {
        for name in [c"vkCreateInstance", c"vkEnumerateInstanceVersion", c"vkEnumerateInstanceExtensionProperties"] {
            assert!(gipa(VkInstance::NULL, name.as_ptr()).is_some(), "{name:?}");
        }
        let extensions: PFN_vkEnumerateInstanceExtensionProperties = get(gipa, VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties");
        let mut count = 0;
        check("count instance extensions", extensions.unwrap()(std::ptr::null(), &mut count, std::ptr::null_mut()));
        assert!(count > 0);
        let layers: PFN_vkEnumerateInstanceLayerProperties = get(gipa, VkInstance::NULL, c"vkEnumerateInstanceLayerProperties");
        let mut count = 0;
        check("count layers", layers.unwrap()(&mut count, std::ptr::null_mut()));
        assert_eq!(count, 1, "the test layer");
    }
}

/// What the threads share: a start line, and how many have not finished their rounds yet.
struct Race {
    start: Barrier,
    unfinished: AtomicUsize,
    rounds: usize,
}

/// Runs `round` on a thread, from when every thread is ready, `race.rounds` times and then on
/// until every thread has done as many, counting its rounds.
fn spawn_loop<'s>(scope: &'s std::thread::Scope<'s, '_>, race: &'s Race, rounds: &'s AtomicUsize, round: impl Fn() + Send + 's) {
    scope.spawn(move || {
        race.start.wait();
        loop {
            round();
            let done = rounds.fetch_add(1, Ordering::Relaxed) + 1;
            if done == race.rounds {
                race.unfinished.fetch_sub(1, Ordering::AcqRel);
            }
            if done >= race.rounds && race.unfinished.load(Ordering::Acquire) == 0 {
                break;
            }
        }
    });
}

#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("stress") {
        return;
    }
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: `gipa` is our loader's.
    let shared = unsafe { create_instance(gipa) };
    let shared_handle = shared.0 as usize; // raw handles are not Send; the instance outlives the threads
    let shared = move || VkInstance(shared_handle as *mut _);
    let counters: [AtomicUsize; 5] = Default::default();
    let rounds = std::env::var("STRESS_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(ROUNDS);
    let race = Race { start: Barrier::new(counters.len()), unfinished: AtomicUsize::new(counters.len()), rounds };
    // In the threads below, `gipa` is our loader's, loaded past the scope; `shared` lives until
    // after every thread has joined; each other instance is a thread's own. None of the commands
    // called on `shared` from several threads at once asks for external synchronisation.
    std::thread::scope(|scope| {
        // SAFETY: see above.
        let create_destroy = || unsafe {
            let instance = create_instance(gipa);
            devices_round(gipa, instance);
            messenger_and_surface_round(gipa, instance);
            destroy_instance(gipa, instance);
        };
        spawn_loop(scope, &race, &counters[0], create_destroy);
        spawn_loop(scope, &race, &counters[1], create_destroy);
        // SAFETY: see above.
        spawn_loop(scope, &race, &counters[2], || unsafe { global_round(gipa) });
        // SAFETY: see above; `shared` has the extensions the round uses.
        spawn_loop(scope, &race, &counters[3], move || unsafe { messenger_and_surface_round(gipa, shared()) });
        // SAFETY: see above.
        spawn_loop(scope, &race, &counters[4], move || unsafe {
            physical_devices(gipa, shared());
            devices_round(gipa, shared());
            assert!(gipa(shared(), c"vkCmdDraw".as_ptr()).is_some());
        });
    });
    // SAFETY: every thread has joined: nothing uses `shared` any more.
    unsafe { destroy_instance(gipa, shared()) };
    let rounds: Vec<usize> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    println!("ROUNDS {rounds:?}");
}

/// The scenario's environment: two drivers and the test layer, enabled, in `dir`.
fn stress_environment(dir: &Path) -> Vec<(&'static str, String)> {
    let (a, b) = (common::tagged_driver(dir, "a"), common::tagged_driver(dir, "b"));
    let manifests = [common::driver_manifest(dir, "a.json", &a), common::driver_manifest(dir, "b.json", &b)];
    let layers = dir.join("layers");
    std::fs::create_dir_all(&layers).unwrap();
    common::layer_manifest(&layers, "layer.json", "VK_LAYER_TEST_stress", &common::test_layer(), "");
    let join = |paths: &[&Path]| paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
    vec![
        ("VK_DRIVER_FILES", join(&[&manifests[0], &manifests[1]])),
        ("VK_LAYER_PATH", layers.display().to_string()),
        ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_stress".into()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_headless_surface".into()),
    ]
}

/// Every thread's rounds, from the child's `ROUNDS` line; fails unless each did at least `expected`.
fn assert_every_thread_did(run: &common::ChildRun, expected: usize) {
    assert!(run.status.success(), "{:?}\n{}\n{}", run.status, run.stdout, run.stderr);
    let rounds = run.stdout.lines().find_map(|l| l.strip_prefix("ROUNDS ")).unwrap_or_else(|| panic!("no ROUNDS line:\n{}", run.stdout));
    let rounds: Vec<usize> = rounds.trim_matches(['[', ']']).split(", ").map(|n| n.parse().unwrap()).collect();
    assert!(rounds.len() == 5 && rounds.iter().all(|&n| n >= expected), "a thread did fewer than {expected} rounds: {rounds:?}");
    println!("rounds per thread: {rounds:?}");
}

#[test]
fn threads_create_destroy_query_and_wrap_at_once() {
    let dir = common::scratch("stress");
    assert_every_thread_did(&common::run_scenario("scenario_entry", "stress", &stress_environment(&dir)), ROUNDS);
}

/// The same under valgrind's memcheck (package valgrind): no invalid access, no use of
/// uninitialised memory, no definite leak, in the loader or anything it loads here.
#[test]
fn threads_under_valgrind_memcheck() {
    // The test driver's own statics, lost when it is unloaded, suppressed.
    let valgrind = concat!(
        "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --keep-debuginfo=yes --suppressions=",
        env!("CARGO_MANIFEST_DIR"),
        "/tests/unloaded-test-driver.supp"
    );
    assert!(std::process::Command::new("valgrind").arg("--version").output().is_ok(), "valgrind missing: install valgrind");
    let dir = common::scratch("stress-memcheck");
    let mut env = stress_environment(&dir);
    env.push(("STRESS_ROUNDS", ROUNDS_UNDER_VALGRIND.to_string()));
    let run = common::run_scenario_under(valgrind, "scenario_entry", "stress", &env);
    assert!(!run.stderr.contains("=="), "memcheck reported:\n{}", run.stderr);
    assert_every_thread_did(&run, ROUNDS_UNDER_VALGRIND);
}
