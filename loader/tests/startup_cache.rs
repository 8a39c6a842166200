//! The driver cache between processes (docs/user-guide/driver-cache.md): a warm cache answers the
//! pre-instance queries without loading a driver, instance creation loads no driver whose record
//! says it has no physical device, every key component invalidates an entry, hostile files are
//! ignored and replaced, verify and off modes, processes racing on a cold cache, launches through
//! real launchers and sessions (tmux, screen, gio, ssh, su, runuser) warm, and vulkaninfo seeing
//! the same with the cache off, cold, warm and verifying, for every kind of launch and after each
//! change of a driver's configuration file.
//!
//! Each step runs in a child process (this test binary with `SCENARIO` set): the point is what one
//! process leaves for the next. Which drivers a process loaded is told by the drivers themselves
//! (`VK_TEST_DRIVER_LOAD_LOG`): the loader unloads them when the last instance is gone, which
//! `STILL_MAPPED` (from `/proc/self/maps`) shows.

mod common;

use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child: step `pre` enumerates the instance extensions, `create` creates an instance and
/// lists its physical devices; then it prints the test drivers mapped into it. The step is read
/// from the file `step` beside the library, and the file `preload` names a library to `dlopen`
/// first (a driver already in the process): files, not variables, which would change the
/// environment and so the key.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("startup") {
        return;
    }
    println!();
    let preload = std::path::Path::new(&std::env::var("LIBVULKAN").unwrap()).with_file_name("preload");
    // SAFETY: the preloaded library is a test driver, whose initialisers ask nothing of us.
    let _preloaded = std::fs::read_to_string(preload).ok().map(|path| unsafe { libloading::Library::new(path.trim()).unwrap() });
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(std::env::var("LIBVULKAN").unwrap()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let step = std::fs::read_to_string(std::path::Path::new(&std::env::var("LIBVULKAN").unwrap()).with_file_name("step")).unwrap();
        // "create:NAME": another application (not the environment: that is in the cache's key).
        let (step, application) = step.split_once(':').unwrap_or((&step, "startup"));
        match step {
            "pre" => {
                let f: PFN_vkEnumerateInstanceExtensionProperties = std::mem::transmute(gipa(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties".as_ptr()));
                let f = f.unwrap();
                let mut count = 0;
                assert_eq!(f(std::ptr::null(), &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
                let mut props = vec![VkExtensionProperties::default(); count as usize];
                assert_eq!(
                    f(std::ptr::null(), &mut count, props.as_mut_ptr()),
                    VkResult::SUCCESS
                );
                let names: Vec<String> = props
                    .iter()
                    .map(|p| {
                        format!(
                            "{}:{}",
                            common::fixed_str(&p.extensionName),
                            p.specVersion
                        )
                    })
                    .collect();
                println!("EXTENSIONS {}", names.join(","));
            }
            // "keep": as "create", but the instance is never destroyed, as long-lived clients
            // (wgpu's global instance, zink, mpv) leave theirs.
            "create" | "keep" => {
                let name = std::ffi::CString::new(application).unwrap();
                let app = VkApplicationInfo { pApplicationName: name.as_ptr(), apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
                let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
                let create: PFN_vkCreateInstance = std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
                let mut instance = VkInstance::NULL;
                let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
                println!("CREATE {result:?}");
                if result == VkResult::SUCCESS {
                    let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(gipa(instance, c"vkEnumeratePhysicalDevices".as_ptr()));
                    let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(gipa(instance, c"vkGetPhysicalDeviceProperties".as_ptr()));
                    let mut count = 0;
                    enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
                    let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
                    enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
                    let names: Vec<String> = devices
                        .iter()
                        .map(|&d| {
                            let mut p = VkPhysicalDeviceProperties::default();
                            properties.unwrap()(d, &mut p);
                            common::fixed_str(&p.deviceName)
                        })
                        .collect();
                    println!("DEVICES {}", names.join(","));
                    if step == "create" {
                        let destroy: PFN_vkDestroyInstance = std::mem::transmute(gipa(instance, c"vkDestroyInstance".as_ptr()));
                        destroy.unwrap()(instance, std::ptr::null());
                    }
                }
            }
            "probe" | "device" | "messenger" | "messenger-later" | "surface" | "surface-device" | "formats" => lazy_steps(gipa, step),
            other => panic!("unknown step {other}"),
        }
    }
    println!("MAPPED {}", mapped());
    println!("STILL_MAPPED {}", still_mapped());
}

/// The test drivers this process loaded, unloaded since or not (each driver notes its loading:
/// `VK_TEST_DRIVER_LOAD_LOG`).
fn mapped() -> String {
    let log = format!("{}.{}", std::env::var("VK_TEST_DRIVER_LOAD_LOG").unwrap(), std::process::id());
    let loaded = std::fs::read_to_string(log).unwrap_or_default();
    let mut loaded: Vec<&str> = loaded.lines().filter(|f| f.starts_with("libvk_test_driver_")).collect();
    loaded.sort();
    loaded.dedup();
    loaded.join(",")
}

/// The test drivers mapped into this process now.
fn still_mapped() -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut mapped: Vec<&str> = maps.lines().filter_map(|l| l.rsplit('/').next()).filter(|f| f.starts_with("libvk_test_driver_")).collect();
    mapped.sort();
    mapped.dedup();
    mapped.join(",")
}

/// Creates the instance of the lazy steps, with `extensions` enabled; with `messenger`, a
/// messenger chained that prints what it hears. Everything the create info points to is
/// overwritten and freed before this returns: a driver instance created later must have been
/// given a copy.
///
/// # Safety
/// `create` is a loader's vkCreateInstance.
unsafe fn create_lazy_instance(create: PFN_vkCreateInstance, messenger: bool, extensions: &[&str]) -> VkInstance {
    // SAFETY: `create` is vkCreateInstance (the contract); `info` and everything it points to are
    // locals or boxes that live across the call; `instance` is a local.
    unsafe {
        let name = std::ffi::CString::new("lazy").unwrap();
        let mut app = Box::new(VkApplicationInfo { pApplicationName: name.as_ptr(), apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() });
        let mut chained = Box::new(VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
            messageType: VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT,
            pfnUserCallback: Some(heard),
            ..Default::default()
        });
        let names: Vec<std::ffi::CString> = extensions.iter().map(|e| std::ffi::CString::new(*e).unwrap()).collect();
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut info = VkInstanceCreateInfo { pApplicationInfo: &*app, ..Default::default() };
        if messenger {
            info.pNext = &*chained as *const _ as *const _;
        }
        info.enabledExtensionCount = pointers.len() as u32;
        info.ppEnabledExtensionNames = pointers.as_ptr();
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        *app = VkApplicationInfo::default();
        *chained = VkDebugUtilsMessengerCreateInfoEXT::default();
        let mut name = name.into_bytes();
        name.fill(b'x');
        instance
    }
}

/// A messenger's callback: prints what it hears.
///
/// # Safety
/// A `PFN_vkDebugUtilsMessengerCallbackEXT`: `data` is valid for the call, its message a C string.
unsafe extern "system" fn heard(
    _: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut std::ffi::c_void,
) -> VkBool32 {
    // SAFETY: the contract.
    let message = unsafe { CStr::from_ptr((*data).pMessage) };
    println!("HEARD {}", message.to_string_lossy());
    VK_FALSE
}

/// The steps of lazy drivers. `probe`: what GTK, Chromium or wgpu ask at start-up (create an
/// instance, enumerate, `vkGetPhysicalDeviceProperties2` with ID and PCI bus properties, queue
/// families, memory properties, destroy), printing each device's answers. `device`: the same, then
/// a device created on the last physical device, after setting the variables the file `change`
/// beside the library names (`NAME=value` lines: the hardware changing under a live instance), and
/// that device's UUID and PCI bus read again, now from the live driver. `messenger`: `device` with
/// a messenger chained to the create info; `messenger-later`: `device` with a messenger created
/// right after the instance. `surface`: `probe`, then two headless surfaces made, one destroyed at
/// once, the drivers mapped then printed, the `change` applied and the other surface's support and
/// capabilities asked of the first device; `surface-device`: the same with a device created on it
/// (and destroyed) before the questions. `formats`: `probe`, then `vkGetPhysicalDeviceFormatProperties`
/// of each device for each format the file `formats` beside the library lists (comma-separated
/// numbers), printing their buffer features.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn lazy_steps(gipa: Gipa, step: &str) {
    // SAFETY: each command is `gipa`'s (or `vkGetDeviceProcAddr`'s) answer for the name beside it,
    // transmuted to that command's PFN type; the instance, devices, messengers and surfaces are
    // used between their creation and their destruction; the other pointers point to locals that
    // outlive each call, each array as long as the count passed with it.
    unsafe {
        macro_rules! f {
            ($instance:expr, $name:literal, $ty:ty) => {
                std::mem::transmute::<PFN_vkVoidFunction, $ty>(gipa($instance, concat!($name, "\0").as_ptr().cast())).unwrap()
            };
        }
        let create: PFN_vkCreateInstance = std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
        let extensions: &[&str] = match step {
            "messenger" | "messenger-later" => &["VK_EXT_debug_utils"],
            "surface" | "surface-device" => &["VK_KHR_surface", "VK_EXT_headless_surface"],
            _ => &[],
        };
        let instance = create_lazy_instance(create, step == "messenger", extensions);
        if step == "messenger-later" {
            let info = VkDebugUtilsMessengerCreateInfoEXT {
                messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
                messageType: VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT,
                pfnUserCallback: Some(heard),
                ..Default::default()
            };
            let mut messenger = VkDebugUtilsMessengerEXT::NULL;
            assert_eq!(f!(instance, "vkCreateDebugUtilsMessengerEXT", PFN_vkCreateDebugUtilsMessengerEXT)(instance, &info, std::ptr::null(), &mut messenger), VkResult::SUCCESS);
        }
        let mut count = 0;
        let enumerate = f!(instance, "vkEnumeratePhysicalDevices", PFN_vkEnumeratePhysicalDevices);
        enumerate(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate(instance, &mut count, devices.as_mut_ptr());
        let properties2 = f!(instance, "vkGetPhysicalDeviceProperties2", PFN_vkGetPhysicalDeviceProperties2);
        let identity = |d: VkPhysicalDevice| {
            let mut pci = VkPhysicalDevicePCIBusInfoPropertiesEXT::default();
            let mut id = VkPhysicalDeviceIDProperties { pNext: &mut pci as *mut _ as *mut _, ..Default::default() };
            let mut p = VkPhysicalDeviceProperties2 { pNext: &mut id as *mut _ as *mut _, ..Default::default() };
            properties2(d, &mut p);
            let uuid: String = id.deviceUUID.iter().map(|b| format!("{b:02x}")).collect();
            format!("{} uuid={uuid} bus={}", common::fixed_str(&p.properties.deviceName), pci.pciBus)
        };
        let families = f!(instance, "vkGetPhysicalDeviceQueueFamilyProperties", PFN_vkGetPhysicalDeviceQueueFamilyProperties);
        let memory = f!(instance, "vkGetPhysicalDeviceMemoryProperties", PFN_vkGetPhysicalDeviceMemoryProperties);
        for &d in &devices {
            let mut n = 0;
            families(d, &mut n, std::ptr::null_mut());
            let mut family = vec![VkQueueFamilyProperties::default(); n as usize];
            families(d, &mut n, family.as_mut_ptr());
            let mut m = VkPhysicalDeviceMemoryProperties::default();
            memory(d, &mut m);
            let flags: Vec<u32> = family.iter().map(|f| f.queueFlags.0).collect();
            println!("PROBE {} families={flags:?} heaps={} types={}", identity(d), m.memoryHeapCount, m.memoryTypeCount);
        }
        let change = || {
            let change = std::path::Path::new(&std::env::var("LIBVULKAN").unwrap()).with_file_name("change");
            for line in std::fs::read_to_string(change).unwrap_or_default().lines() {
                let (name, value) = line.split_once('=').unwrap();
                std::env::set_var(name, value);
            }
        };
        let create_device = |on: VkPhysicalDevice| {
            let priority = 1.0f32;
            let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
            let device_info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
            let mut device = VkDevice::NULL;
            let result = f!(instance, "vkCreateDevice", PFN_vkCreateDevice)(on, &device_info, std::ptr::null(), &mut device);
            if result == VkResult::SUCCESS {
                let gdpa = f!(instance, "vkGetDeviceProcAddr", PFN_vkGetDeviceProcAddr);
                let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(gdpa(device, c"vkGetDeviceQueue".as_ptr()));
                let mut q = VkQueue::NULL;
                get_queue.unwrap()(device, 0, 0, &mut q);
                assert!(!q.is_null());
                f!(instance, "vkDestroyDevice", PFN_vkDestroyDevice)(device, std::ptr::null());
            }
            println!("DEVICE {result:?}");
        };
        if step == "formats" {
            let formats = std::path::Path::new(&std::env::var("LIBVULKAN").unwrap()).with_file_name("formats");
            let formats = std::fs::read_to_string(formats).unwrap();
            let format_properties = f!(instance, "vkGetPhysicalDeviceFormatProperties", PFN_vkGetPhysicalDeviceFormatProperties);
            for format in formats.trim().split(',') {
                let format: i32 = format.parse().unwrap();
                for &d in &devices {
                    let mut p = VkFormatProperties::default();
                    format_properties(d, VkFormat(format as _), &mut p);
                    println!("FORMAT {format} buffer={}", p.bufferFeatures.0);
                }
            }
        }
        if step == "device" || step.starts_with("messenger") {
            change();
            let last = *devices.last().unwrap();
            let before = identity(last);
            create_device(last);
            println!("BEFORE {before}");
            println!("AFTER {}", identity(last));
        }
        if step.starts_with("surface") {
            let create_surface = f!(instance, "vkCreateHeadlessSurfaceEXT", PFN_vkCreateHeadlessSurfaceEXT);
            let destroy_surface = f!(instance, "vkDestroySurfaceKHR", PFN_vkDestroySurfaceKHR);
            let info = VkHeadlessSurfaceCreateInfoEXT::default();
            let (mut surface, mut destroyed) = (VkSurfaceKHR::NULL, VkSurfaceKHR::NULL);
            assert_eq!(create_surface(instance, &info, std::ptr::null(), &mut surface), VkResult::SUCCESS);
            assert_eq!(create_surface(instance, &info, std::ptr::null(), &mut destroyed), VkResult::SUCCESS);
            destroy_surface(instance, destroyed, std::ptr::null());
            println!("MAPPED_WITH_SURFACES {}", mapped());
            change();
            let first = devices[0];
            if step == "surface-device" {
                create_device(first);
            }
            let mut supported = VK_FALSE;
            let result = f!(instance, "vkGetPhysicalDeviceSurfaceSupportKHR", PFN_vkGetPhysicalDeviceSurfaceSupportKHR)(first, 0, surface, &mut supported);
            println!("SUPPORT {result:?} {supported}");
            let mut capabilities = VkSurfaceCapabilitiesKHR::default();
            let result = f!(instance, "vkGetPhysicalDeviceSurfaceCapabilitiesKHR", PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR)(first, surface, &mut capabilities);
            // The test driver says 1 for a surface of its own, 2 for the loader's.
            println!("CAPABILITIES {result:?} minImageCount={}", capabilities.minImageCount);
            destroy_surface(instance, surface, std::ptr::null());
        }
        f!(instance, "vkDestroyInstance", PFN_vkDestroyInstance)(instance, std::ptr::null());
    }
}

/// Ages a file by a minute: the cache trusts no file modified in the last two seconds.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
}

/// Two test drivers, `a` with one device and `b` with none, their manifests aged; the cache
/// directory; our library copied in beside them (the step and preload files sit beside it).
struct Setup {
    dir: PathBuf,
    cache: PathBuf,
    drivers: [PathBuf; 2],
    manifests: [PathBuf; 2],
    env: Vec<(&'static str, String)>,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch(&format!("startup-{name}"));
    let drivers = [common::tagged_driver(&dir, "a"), common::tagged_driver(&dir, "b")];
    let manifests = [common::driver_manifest(&dir, "a.json", &drivers[0]), common::driver_manifest(&dir, "b.json", &drivers[1])];
    let libvulkan = dir.join("libvulkan.so.1");
    std::fs::copy(common::libvulkan(), &libvulkan).unwrap();
    for path in drivers.iter().chain(&manifests).chain([&libvulkan]) {
        age(path);
    }
    let cache = dir.join("cache");
    let sysfs = dir.join("sysfs");
    std::fs::create_dir_all(sysfs.join("proc/bus/pci")).unwrap();
    let env = vec![
        ("VK_DRIVER_FILES", format!("{}:{}", manifests[0].display(), manifests[1].display())),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete:10de:2330".into()),
        ("VK_TEST_DRIVER_DEVICES_B", String::new()),
        ("XDG_CACHE_HOME", cache.display().to_string()),
        ("VK_LOADER_TEST_SYSFS_ROOT", sysfs.display().to_string()),
        ("VK_LOADER_DEBUG", "driver,warn".into()),
        ("LIBVULKAN", libvulkan.display().to_string()),
        ("VK_TEST_DRIVER_LOAD_LOG", dir.join("loaded").display().to_string()),
    ];
    Setup { dir, cache, drivers, manifests, env }
}

/// One child run of `step` with the setup's environment and `extra`; (stdout, stderr).
fn run(s: &Setup, step: &str, extra: &[(&'static str, String)]) -> (String, String) {
    let mut env = s.env.clone();
    env.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    env.extend(extra.iter().cloned());
    let file = s.dir.join("step");
    // Written only when it changes: the racing runs share one.
    if std::fs::read_to_string(&file).ok().as_deref() != Some(step) {
        std::fs::write(&file, step).unwrap();
    }
    let run = common::run_scenario("scenario_entry", "startup", &env);
    assert!(run.status.success(), "{step}: {:?}\n{}\n{}", run.status, run.stdout, run.stderr);
    (run.stdout, run.stderr)
}

fn line<'a>(out: &'a str, prefix: &str) -> &'a str {
    out.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix:?} line in\n{out}"))
}

const BOTH: &str = "libvk_test_driver_a.so,libvk_test_driver_b.so";

fn cache_file(s: &Setup) -> PathBuf {
    s.cache.join("vulkan-loader-rs/drivers")
}

#[test]
fn a_warm_cache_answers_pre_instance_queries_without_loading_a_driver() {
    let s = setup("pre");
    let (cold, cold_err) = run(&s, "pre", &[]);
    assert_eq!(line(&cold, "MAPPED "), BOTH, "{cold_err}");
    // Kept until the next vkDestroyInstance, as the Khronos loader preloads them: the
    // application's next query or its vkCreateInstance does not load them again.
    assert_eq!(line(&cold, "STILL_MAPPED "), BOTH, "the drivers a query loaded are kept for the next call\n{cold_err}");
    assert!(cold_err.contains("a.json: loaded in") && cold_err.contains("(not in the driver cache yet)"), "{cold_err}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(cache_file(&s)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the cache file is private");

    let (warm, warm_err) = run(&s, "pre", &[]);
    assert_eq!(line(&warm, "MAPPED "), "", "a warm pre-instance query loads no driver\n{warm_err}");
    assert_eq!(line(&warm, "EXTENSIONS "), line(&cold, "EXTENSIONS "));
    assert!(warm_err.contains("a.json: not loaded: answered from the driver cache"), "{warm_err}");

    // A driver already loaded in the process is asked, not answered for.
    std::fs::write(s.dir.join("preload"), s.drivers[1].display().to_string()).unwrap();
    let (preloaded, err) = run(&s, "pre", &[]);
    assert_eq!(line(&preloaded, "EXTENSIONS "), line(&cold, "EXTENSIONS "));
    assert!(err.contains("b.json: loaded in") && err.contains("its library is loaded in this process already"), "{err}");
    assert!(err.contains("a.json: not loaded"), "{err}");
}

#[test]
fn a_warm_cache_loads_no_driver_without_devices_at_instance_creation() {
    let s = setup("create");
    let (cold, cold_err) = run(&s, "create", &[]);
    assert_eq!(line(&cold, "CREATE "), "VK_SUCCESS", "{cold_err}");
    assert_eq!(line(&cold, "MAPPED "), BOTH, "{cold_err}");
    assert_eq!(line(&cold, "STILL_MAPPED "), "", "no driver stays mapped after the last vkDestroyInstance\n{cold_err}");
    // Lazy drivers off: the driver with devices is loaded, the one without is not.
    let eager = [("VK_LOADER_LAZY_DRIVERS", "off".to_string())];
    let (warm, warm_err) = run(&s, "create", &eager);
    assert_eq!(line(&warm, "DEVICES "), line(&cold, "DEVICES "));
    assert_eq!(
        line(&warm, "MAPPED "),
        "libvk_test_driver_a.so",
        "the driver without devices is not loaded\n{warm_err}"
    );
    assert!(
        warm_err
            .contains("b.json: not loaded: its driver cache record says it has no physical device"),
        "{warm_err}"
    );
    // By default, neither: the physical device and its properties come from the record.
    let (lazy, lazy_err) = run(&s, "create", &[]);
    assert_eq!(line(&lazy, "DEVICES "), line(&cold, "DEVICES "));
    assert_eq!(line(&lazy, "MAPPED "), "", "no driver loaded\n{lazy_err}");
    assert!(lazy_err.contains("a.json: not loaded: its 1 physical devices answered from the driver cache until first needed"), "{lazy_err}");
    // Another application (its VkApplicationInfo differs) has no record yet: both are loaded.
    let (other, err) = run(&s, "pre", &[]);
    assert_eq!(
        line(&other, "MAPPED "),
        "",
        "the pre-instance answers are the application's too\n{err}"
    );
}

/// Two applications (named in the step: the environment is in the cache's key) taking turns,
/// twice: each one's first process records its device count, its second its physical devices,
/// with the other application's processes in between (as on a desktop).
const TWO_APPLICATIONS: [&str; 2] = ["create:first", "create:second"];

fn two_applications_take_turns(s: &Setup) {
    for _ in 0..2 {
        for step in TWO_APPLICATIONS {
            run(s, step, &[]);
        }
    }
}

#[test]
fn applications_taking_turns_each_get_their_physical_devices_recorded() {
    let s = setup("turns");
    two_applications_take_turns(&s);
    for step in TWO_APPLICATIONS {
        let (warm, err) = run(&s, step, &[]);
        assert_eq!(line(&warm, "MAPPED "), "", "{step}: no driver loaded\n{err}");
        assert!(err.contains("a.json: not loaded: its 1 physical devices answered from the driver cache until first needed"), "{step}: {err}");
    }
}

/// Two identical devices on driver `a` (they differ in UUID and PCI bus only), with
/// `VK_EXT_pci_bus_info` as GPUs have it.
fn two_devices() -> Vec<(&'static str, String)> {
    vec![
        (
            "VK_TEST_DRIVER_DEVICES_A",
            "discrete:10de:2330,discrete:10de:2330".into(),
        ),
        (
            "VK_TEST_DRIVER_DEVICE_EXTENSIONS_A",
            "VK_KHR_swapchain,VK_EXT_pci_bus_info".into(),
        ),
    ]
}

/// The two runs that make the driver lazy for `step`: the first process records the driver
/// (its output is returned: the eager path's), the second its physical devices' answers (a
/// process that meets a driver for the first time does not also pay for its devices' record).
fn record_for_lazy(s: &Setup, step: &str, env: &[(&'static str, String)]) -> (String, String) {
    let cold = run(s, step, env);
    run(s, step, env);
    cold
}

fn lines<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter_map(|l| l.strip_prefix(prefix)).collect()
}

/// The first enumeration asks a driver no format: a driver may fail on one no application asked,
/// as the Khronos suite's test driver does (`EnvVarICDOverrideSetup.TestOnlyDriverEnvVar` under
/// memcheck, with a current entry); the fault `abort_on_format_query` stands for it. A lazy
/// driver's record answers the formats an earlier launch asked; one it lacks loads the driver,
/// which answers it and those asked after, and they are recorded for the next launches.
#[test]
fn formats_are_recorded_as_the_application_asks_them() {
    let s = setup("lazy-formats");
    let env = two_devices();
    let asking = |formats: &str| std::fs::write(s.dir.join("formats"), formats).unwrap();
    let abort = [env.clone(), vec![("VK_TEST_DRIVER_FAULTS", "abort_on_format_query".to_string())]].concat();
    let (first, err) = run(&s, "probe", &abort);
    assert_eq!(line(&first, "MAPPED "), BOTH, "{err}");
    assert!(err.contains("a.json: loaded in") && !err.contains("abort_on_format_query"), "{err}");
    // Without the fault (another environment: recorded again, no format asked either).
    run(&s, "probe", &env);
    // Lazy from here: the record lacks formats 37 and 44; the first loads the driver.
    asking("37,44");
    let (second, err) = run(&s, "formats", &env);
    assert_eq!(lines(&second, "FORMAT "), ["37 buffer=37", "37 buffer=37", "44 buffer=44", "44 buffer=44"], "{err}");
    assert_eq!(line(&second, "MAPPED "), "libvk_test_driver_a.so", "{err}");
    assert!(err.contains("a.json: loaded at vkGetPhysicalDeviceFormatProperties in"), "{err}");
    assert!(err.contains("a.json: 4 answers added to the driver cache's record"), "{err}");
    let (third, err) = run(&s, "formats", &env);
    assert_eq!(line(&third, "MAPPED "), "", "answered from the record\n{err}");
    assert_eq!(lines(&third, "FORMAT "), lines(&second, "FORMAT "), "{err}");
    asking("37,50");
    let (fourth, err) = run(&s, "formats", &env);
    assert_eq!(lines(&fourth, "FORMAT "), ["37 buffer=37", "37 buffer=37", "50 buffer=50", "50 buffer=50"], "{err}");
    assert!(err.contains("a.json: loaded at vkGetPhysicalDeviceFormatProperties in"), "{err}");
    assert!(err.contains("a.json: 2 answers added to the driver cache's record"), "{err}");
    let (fifth, err) = run(&s, "formats", &env);
    assert_eq!(line(&fifth, "MAPPED "), "", "answered from the record\n{err}");
    assert_eq!(lines(&fifth, "FORMAT "), lines(&fourth, "FORMAT "), "{err}");
    // Verify mode asks the recorded formats again: the record matches, and keeps them.
    let (_, err) = run(&s, "formats", &[env.clone(), vec![("VK_LOADER_DRIVER_CACHE", "verify".to_string())]].concat());
    assert!(err.contains("a.json: driver cache verified: the record matches") && !err.contains("driver cache verify:"), "{err}");
    let (sixth, err) = run(&s, "formats", &env);
    assert_eq!(line(&sixth, "MAPPED "), "", "answered from the record\n{err}");
}

/// A client that never destroys its instance has its physical devices recorded all the same
/// (at its first enumeration): its next launch loads no driver.
#[test]
fn a_client_that_never_destroys_its_instance_finds_its_driver_lazy_next_time() {
    let s = setup("keep");
    let (first, err) = run(&s, "keep", &[]);
    assert_eq!(line(&first, "MAPPED "), BOTH, "{err}");
    let (second, err) = run(&s, "keep", &[]);
    assert_eq!(line(&second, "MAPPED "), "", "no driver loaded\n{err}");
    assert_eq!(line(&second, "DEVICES "), line(&first, "DEVICES "));
    assert!(err.contains("a.json: not loaded: its 1 physical devices answered from the driver cache until first needed"), "{err}");
}

/// A driver whose record cannot answer this call is loaded, and the log says what the record
/// lacks: another application's devices were never enumerated; with lazy drivers off, a driver
/// with devices is loaded at once. The driver without devices is answered all the same.
#[test]
fn a_record_that_cannot_answer_says_what_it_lacks() {
    let s = setup("lacks");
    run(&s, "create", &[]);
    let (out, err) = run(&s, "create:another", &[]);
    assert!(line(&out, "MAPPED ").contains("libvk_test_driver_a.so"), "{err}");
    assert!(
        err.contains("a.json: loaded in") && err.contains("(its cache record does not answer this call: it holds no physical devices for this application"),
        "{err}"
    );
    let (out, err) = run(&s, "create", &[("VK_LOADER_LAZY_DRIVERS", "off".into())]);
    assert_eq!(line(&out, "MAPPED "), "libvk_test_driver_a.so", "{err}");
    assert!(err.contains("(its cache record does not answer this call: the driver has physical devices for this application and lazy drivers are off)"), "{err}");
    assert!(err.contains("b.json: not loaded: answered from the driver cache"), "{err}");
}

/// A driver whose cache entry is stale (its library changed since, too recently to be recorded
/// again) is not asked what a profile of its physical devices records: the profile would be
/// dropped, and a driver may crash on a query no application made. The Khronos suite's test
/// driver does, on any format it was not set up for
/// (`SettingsFile.AdditionalDriversReplacesVK_LOADER_DRIVERS_SELECT`, with an earlier run's
/// cache); the fault `abort_on_format_query` stands for it.
#[test]
fn a_stale_entry_costs_the_driver_no_queries_for_a_profile_it_would_drop() {
    let s = setup("stale-profile");
    let (first, err) = run(&s, "create", &[]);
    assert_eq!(line(&first, "DEVICES "), "Test Driver discrete 0", "{err}");
    assert!(std::fs::read(cache_file(&s)).unwrap().windows(6).any(|w| w == b"a.json"), "a is recorded\n{err}");
    // The library is replaced; its time in the future keeps it too new to record.
    std::fs::copy(common::test_driver(), &s.drivers[0]).unwrap();
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&s.drivers[0]).unwrap().set_modified(future).unwrap();
    // Another application: the first one's physical devices were recorded with the entry.
    let (second, err) = run(&s, "create:another", &[("VK_TEST_DRIVER_FAULTS", "abort_on_format_query".into())]);
    assert_eq!(line(&second, "DEVICES "), "Test Driver discrete 0", "{err}");
    assert!(err.contains("not recorded in the driver cache") && err.contains("too new to trust"), "{err}");
}

#[test]
fn a_warm_cache_answers_the_start_up_probe_without_loading_any_driver() {
    let s = setup("lazy-probe");
    let (cold, cold_err) = run(&s, "probe", &two_devices());
    assert_eq!(line(&cold, "MAPPED "), BOTH, "{cold_err}");
    assert_eq!(lines(&cold, "PROBE ").len(), 2, "{cold}");
    // The first process recorded the driver and its physical devices (at the instance's first
    // enumeration): the second is lazy.
    let (warm, err) = run(&s, "probe", &two_devices());
    assert_eq!(line(&warm, "MAPPED "), "", "no driver loaded\n{err}");
    assert_eq!(
        lines(&warm, "PROBE "),
        lines(&cold, "PROBE "),
        "the same answers as the drivers gave"
    );
    // The application's 6 queries (2 devices x 3) and the loader's own for the order.
    let answered: u32 = err
        .lines()
        .find_map(|l| {
            l.split("a.json: never loaded: ")
                .nth(1)?
                .strip_suffix(" queries answered from the driver cache")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no count of answered queries\n{err}"));
    assert!(answered >= 6, "{answered}\n{err}");
    // Verify mode loads them and finds the record right.
    let verify_env: Vec<_> = two_devices()
        .into_iter()
        .chain([("VK_LOADER_DRIVER_CACHE", "verify".to_string())])
        .collect();
    let (verify, err) = run(&s, "probe", &verify_env);
    assert_eq!(line(&verify, "MAPPED "), BOTH, "{err}");
    assert_eq!(lines(&verify, "PROBE "), lines(&cold, "PROBE "));
    assert!(
        err.contains("a.json: driver cache verified: the physical devices answer as recorded"),
        "{err}"
    );
}

#[test]
fn a_lazy_driver_is_loaded_at_device_creation_and_its_devices_matched_by_identity() {
    let s = setup("lazy-device");
    record_for_lazy(&s, "probe", &two_devices());
    // The driver now lists the two devices the other way round: the loader's second device must
    // still be the second GPU (UUID and PCI bus as the record said).
    std::fs::write(s.dir.join("change"), "VK_TEST_DRIVER_VISIBLE_DEVICES_A=1,0").unwrap();
    let (out, err) = run(&s, "device", &two_devices());
    assert_eq!(line(&out, "DEVICE "), "VK_SUCCESS", "{err}");
    assert!(line(&out, "BEFORE ").ends_with("bus=1"), "{out}");
    assert_eq!(
        line(&out, "AFTER "),
        line(&out, "BEFORE "),
        "the live driver's answer is the recorded one's device\n{err}"
    );
    assert_eq!(line(&out, "MAPPED "), "libvk_test_driver_a.so", "{err}");
    // "loaded at <command> in X.X ms, after N queries answered from the driver cache": the probe's
    // 8 (2 devices x properties2, queue families twice, memory), the identity read before the device.
    let (ms, answered) = loaded_at(&err, "vkCreateDevice");
    assert!(ms > 0.0 && answered >= 9, "{ms} {answered}\n{err}");
}

#[test]
fn a_lazy_driver_after_a_released_one_is_pointed_at_its_own_slot_when_loaded() {
    let s = setup("lazy-after-released");
    // b (no device) first, loaded at every creation once its record is stale; a (lazy) second.
    let order = format!("{}:{}", s.manifests[1].display(), s.manifests[0].display());
    let env: Vec<_> = two_devices().into_iter().chain([("VK_DRIVER_FILES", order)]).collect();
    record_for_lazy(&s, "probe", &env);
    let mut bytes = std::fs::read(&s.drivers[1]).unwrap();
    bytes.push(0);
    std::fs::write(&s.drivers[1], bytes).unwrap();
    age(&s.drivers[1]);
    let (out, err) = run(&s, "device", &env);
    assert!(err.contains("b.json: no physical device; driver released"), "b was loaded and released first\n{err}");
    assert_eq!(line(&out, "DEVICE "), "VK_SUCCESS", "a's devices were pointed at a's driver\n{err}");
    assert_eq!(line(&out, "AFTER "), line(&out, "BEFORE "), "{err}");
}

/// The time and count of the line "a.json: loaded at <command> in X.X ms, after N queries
/// answered from the driver cache".
fn loaded_at(err: &str, command: &str) -> (f64, u32) {
    let found = err.lines().find_map(|l| {
        let rest = l.split(&format!("a.json: loaded at {command} in ")).nth(1)?;
        let (ms, rest) = rest.split_once(" ms, after ")?;
        let answered = rest.strip_suffix(" queries answered from the driver cache")?;
        Some((ms.parse().ok()?, answered.parse().ok()?))
    });
    found.unwrap_or_else(|| panic!("no line saying a.json was loaded at {command}\n{err}"))
}

/// [`two_devices`], driver `a` with `VK_EXT_headless_surface`.
fn headless() -> Vec<(&'static str, String)> {
    two_devices().into_iter().chain([("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_A", "+VK_EXT_headless_surface".to_string())]).collect()
}

#[test]
fn a_surface_loads_no_lazy_driver_and_gets_the_drivers_own_when_it_is_loaded() {
    let s = setup("lazy-surface");
    let (cold, err) = record_for_lazy(&s, "surface", &headless());
    assert_eq!(line(&cold, "SUPPORT "), "VK_SUCCESS 1", "{err}");
    assert_eq!(line(&cold, "CAPABILITIES "), "VK_SUCCESS minImageCount=1", "the eager path: the driver's own surface\n{err}");
    let (warm, err) = run(&s, "surface", &headless());
    assert_eq!(line(&warm, "MAPPED_WITH_SURFACES "), "", "making surfaces loads no driver\n{err}");
    loaded_at(&err, "vkGetPhysicalDeviceSurfaceSupportKHR");
    // The driver made its own surface when it was loaded (the test driver accepts only its own).
    assert_eq!(line(&warm, "SUPPORT "), "VK_SUCCESS 1", "{err}");
    assert_eq!(line(&warm, "CAPABILITIES "), line(&cold, "CAPABILITIES "), "{err}");
    // The surface destroyed before was not made in it; the other was destroyed in it too.
    assert!(!err.contains("not destroyed"), "{err}");
    // Loaded at device creation: the surface is the driver's before any surface query.
    let (warm, err) = run(&s, "surface-device", &headless());
    assert_eq!(line(&warm, "MAPPED_WITH_SURFACES "), "", "{err}");
    assert_eq!(line(&warm, "DEVICE "), "VK_SUCCESS", "{err}");
    loaded_at(&err, "vkCreateDevice");
    assert_eq!(line(&warm, "SUPPORT "), "VK_SUCCESS 1", "{err}");
    assert_eq!(line(&warm, "CAPABILITIES "), line(&cold, "CAPABILITIES "), "{err}");
    assert!(!err.contains("not destroyed"), "{err}");
}

#[test]
fn a_driver_that_cannot_make_a_surface_when_it_is_loaded_fails_that_surfaces_queries() {
    let s = setup("lazy-surface-fails");
    run(&s, "surface", &headless());
    run(&s, "surface", &headless());
    std::fs::write(s.dir.join("change"), "VK_TEST_DRIVER_FAULTS_A=fail_create_surface").unwrap();
    let (warm, err) = run(&s, "surface", &headless());
    assert_eq!(line(&warm, "MAPPED_WITH_SURFACES "), "", "{err}");
    assert!(
        err.contains("a.json: vkCreateHeadlessSurfaceEXT for a surface made before it was loaded failed with VK_ERROR_OUT_OF_HOST_MEMORY"),
        "{err}"
    );
    assert_eq!(line(&warm, "SUPPORT "), "VK_ERROR_SURFACE_LOST_KHR 0", "{err}");
    assert_eq!(line(&warm, "CAPABILITIES "), "VK_ERROR_SURFACE_LOST_KHR minImageCount=0", "{err}");
}

/// `vk-loader explain` shows what its own instance did with each lazy driver.
#[test]
fn explain_says_a_lazy_driver_was_never_loaded_in_its_own_run() {
    let s = setup("lazy-explain");
    // No host layer (Mesa's device-select would ask more of the devices).
    let no_layers = s.dir.join("no-layers");
    std::fs::create_dir_all(&no_layers).unwrap();
    let explain = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vk-loader"));
        command.args(["explain", "--json"]).env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default());
        command.env("VK_IMPLICIT_LAYER_PATH", &no_layers).env("VK_LAYER_PATH", &no_layers);
        command.envs(s.env.iter().map(|(k, v)| (*k, v.as_str())));
        let out = common::output_within(&mut command, common::CHILD_WATCHDOG);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let a = doc["drivers"].as_array().unwrap().iter().find(|d| d["manifest"].as_str().unwrap().ends_with("a.json")).unwrap().clone();
        (a, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // Recorded in the first two runs (the driver, then its devices for this application).
    explain();
    explain();
    let (a, err) = explain();
    assert_eq!(a["decision"], "used", "{a}\n{err}");
    let reason = a["reason"].as_str().unwrap();
    let answered: u32 = reason
        .strip_prefix("never loaded: ")
        .and_then(|r| r.strip_suffix(" queries answered from the driver cache"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{reason}\n{err}"));
    assert!(answered >= 1, "{reason}");
    assert!(err.contains(&format!("a.json: never loaded: {answered} queries answered from the driver cache")), "{err}");
}

#[test]
fn a_lazy_driver_is_created_with_what_the_application_gave_vk_create_instance() {
    let s = setup("lazy-messenger");
    let env: Vec<_> = two_devices().into_iter().chain([("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_A", "+VK_EXT_debug_utils".to_string())]).collect();
    let (cold, err) = record_for_lazy(&s, "messenger", &env);
    assert_eq!(lines(&cold, "HEARD "), ["vk_test_driver: instance created for lazy"], "the eager path\n{err}");
    let (warm, err) = run(&s, "messenger", &env);
    assert!(err.contains("a.json: loaded at vkCreateDevice"), "{err}");
    assert_eq!(line(&warm, "DEVICE "), "VK_SUCCESS", "{err}");
    // The chained messenger and the application info reached the driver at vkCreateDevice,
    // after the application's structures were gone.
    assert_eq!(lines(&warm, "HEARD "), ["vk_test_driver: instance created for lazy"], "{err}");
}

#[test]
fn a_messenger_created_before_a_lazy_driver_is_loaded_is_made_in_it_when_it_is() {
    let s = setup("lazy-messenger-later");
    let env: Vec<_> = two_devices().into_iter().chain([("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_A", "+VK_EXT_debug_utils".to_string())]).collect();
    let (cold, err) = record_for_lazy(&s, "messenger-later", &env);
    assert_eq!(lines(&cold, "HEARD "), ["vk_test_driver: messenger created"], "the eager path\n{err}");
    let (warm, err) = run(&s, "messenger-later", &env);
    assert!(err.contains("a.json: loaded at vkCreateDevice"), "{err}");
    // The driver got a messenger of its own when it was loaded, after the application made it.
    assert_eq!(lines(&warm, "HEARD "), ["vk_test_driver: messenger created"], "{err}");
}

#[test]
fn hardware_changed_under_a_lazy_instance_fails_its_devices_and_drops_the_record() {
    let s = setup("lazy-changed");
    record_for_lazy(&s, "probe", &two_devices());
    std::fs::write(
        s.dir.join("change"),
        "VK_TEST_DRIVER_DEVICES_A=integrated:8086:46a6",
    )
    .unwrap();
    let (out, err) = run(&s, "device", &two_devices());
    assert_eq!(
        line(&out, "DEVICE "),
        "VK_ERROR_INITIALIZATION_FAILED",
        "{err}"
    );
    assert!(err.contains("a.json: could not be loaded at vkCreateDevice: it reports 1 physical devices where 2 were recorded"), "{err}");
    // The record is gone: the next instance loads the driver.
    std::fs::remove_file(s.dir.join("change")).unwrap();
    let (next, err) = run(&s, "probe", &two_devices());
    assert_eq!(line(&next, "MAPPED "), "libvk_test_driver_a.so", "{err}");
}

#[test]
fn when_no_driver_with_devices_remains_the_unloaded_ones_are_created_after_all() {
    let s = setup("all-empty");
    let env = [("VK_TEST_DRIVER_DEVICES_A", String::new())];
    let (cold, _) = run(&s, "create", &env);
    assert_eq!((line(&cold, "CREATE "), line(&cold, "DEVICES ")), ("VK_SUCCESS", ""));
    // Warm, both records say "no device": the eager path's answer (success, no device), both
    // drivers asked.
    let (warm, err) = run(&s, "create", &env);
    assert_eq!((line(&warm, "CREATE "), line(&warm, "DEVICES ")), ("VK_SUCCESS", ""), "{err}");
    assert_eq!(line(&warm, "MAPPED "), BOTH, "{err}");
    // And when every driver fails its vkCreateInstance, the failure is the eager path's too.
    let failing = [("VK_TEST_DRIVER_DEVICES_A", String::new()), ("VK_TEST_DRIVER_FAIL_CREATE_INSTANCE_A", "1".into()), ("VK_TEST_DRIVER_FAIL_CREATE_INSTANCE_B", "1".into())];
    run(&s, "create", &failing);
    let (warm, err) = run(&s, "create", &failing);
    assert_eq!(line(&warm, "CREATE "), "VK_ERROR_INCOMPATIBLE_DRIVER", "{err}");
}

#[test]
fn each_key_component_makes_a_stale_entry() {
    let s = setup("keys");
    run(&s, "pre", &[]);
    let warm = |extra: &[(&'static str, String)]| {
        let (out, err) = run(&s, "pre", extra);
        assert_eq!(line(&out, "MAPPED "), "", "warm again\n{err}");
    };
    warm(&[]);
    let stale = |extra: &[(&'static str, String)], component: &str, driver: &str| {
        let (out, err) = run(&s, "pre", extra);
        assert!(line(&out, "MAPPED ").contains(driver), "{component}: {driver} not loaded\n{err}");
        assert!(err.contains(&format!("its cache entry is stale: the {component} changed")), "{component}\n{err}");
    };
    // The library replaced in place by another one (a byte more: another size and identity).
    let mut bytes = std::fs::read(&s.drivers[1]).unwrap();
    bytes.push(0);
    std::fs::write(&s.drivers[1], bytes).unwrap();
    age(&s.drivers[1]);
    stale(&[], "library", "libvk_test_driver_b.so");
    warm(&[]);
    // The manifest edited.
    let text = std::fs::read_to_string(&s.manifests[0]).unwrap();
    std::fs::write(&s.manifests[0], format!("{text}\n")).unwrap();
    age(&s.manifests[0]);
    stale(&[], "manifest", "libvk_test_driver_a.so");
    warm(&[]);
    // A variable a driver may read.
    stale(&[("MESA_SHADER_CACHE_DISABLE", "true".into())], "environment", "libvk_test_driver_a.so");
    // Back in the first environment: its entry is still there (a driver keeps one per key).
    warm(&[]);
    // A variable that changes per launch and that no driver reads is not in the key.
    warm(&[("OLDPWD", "/somewhere/else".into())]);
    // A GPU appears on the PCI bus (through the test hook for the root of /proc/bus/pci, /sys and
    // /dev), its kernel driver bound: without a node to open, no driver reaches it...
    let pci = s.dir.join("sysfs/proc/bus/pci/devices");
    let gpu = "0000\t80861237\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n0100\t10de2330\t10\tfb000000\t0\t0\t0\t0\t0\t0\t1000000\t0\t0\t0\t0\t0\t0\tnvidia\n";
    std::fs::write(&pci, &gpu[..gpu.find('\n').unwrap() + 1]).unwrap();
    warm(&[]);
    // ... until its node appears...
    std::fs::create_dir_all(s.dir.join("sysfs/dev/dri")).unwrap();
    std::fs::write(s.dir.join("sysfs/dev/dri/renderD129"), "").unwrap();
    stale(&[], "machine", "libvk_test_driver_a.so");
    warm(&[]);
    // ... and another GPU is behind it, then its kernel module...
    std::fs::write(&pci, gpu).unwrap();
    stale(&[], "machine", "libvk_test_driver_a.so");
    std::fs::write(s.dir.join("sysfs/proc/modules"), "nvidia 14274560 0 - Live 0x0000000000000000 (POE)\n").unwrap();
    std::fs::create_dir_all(s.dir.join("sysfs/sys/module/nvidia")).unwrap();
    std::fs::write(s.dir.join("sysfs/sys/module/nvidia/version"), "580.95.05\n").unwrap();
    stale(&[], "machine", "libvk_test_driver_a.so");
    warm(&[]);
    // ... a new version of it ...
    std::fs::write(s.dir.join("sysfs/sys/module/nvidia/version"), "580.105.08\n").unwrap();
    stale(&[], "machine", "libvk_test_driver_a.so");
    warm(&[]);
    // ... and the GPU disappears again.
    std::fs::write(&pci, &gpu[..gpu.find('\n').unwrap() + 1]).unwrap();
    stale(&[], "machine", "libvk_test_driver_a.so");
    // Another build of the loader (the test hook stands for one; the loader is checked before
    // the environment the hook is part of).
    stale(&[("VK_LOADER_TEST_BUILD_ID", "another build".into())], "loader", "libvk_test_driver_a.so");
}

/// A manifest naming its library bare: the dynamic linker's search finds it, and the executable's
/// `DT_RPATH` takes part in that search, so the record holds the executable. Another program finds
/// the entry stale, and the log says that the program may be why, not only the library.
#[test]
fn a_bare_library_name_recorded_by_another_program_is_stale_saying_the_program_may_be_why() {
    let mut s = setup("bare-name");
    let bare = common::driver_manifest(&s.dir, "bare.json", Path::new("libvk_test_driver_a.so"));
    age(&bare);
    s.env.retain(|(k, _)| *k != "VK_DRIVER_FILES");
    s.env.extend([("VK_DRIVER_FILES", bare.display().to_string()), ("LD_LIBRARY_PATH", s.dir.display().to_string())]);
    run(&s, "pre", &[]);
    let (warm, err) = run(&s, "pre", &[]);
    assert_eq!(line(&warm, "MAPPED "), "", "warm for the program that recorded it\n{err}");
    // The same test program under another name: another executable.
    let other = s.dir.join("another-program");
    std::fs::hard_link(std::env::current_exe().unwrap(), &other).or_else(|_| std::fs::copy(std::env::current_exe().unwrap(), &other).map(drop)).unwrap();
    let no_layers = s.dir.join("no-layers");
    std::fs::create_dir_all(&no_layers).unwrap();
    let mut command = Command::new(&other);
    for (var, _) in std::env::vars().filter(|(var, _)| var.starts_with("VK_")) {
        command.env_remove(var);
    }
    let out = command
        .args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"])
        .env("SCENARIO", "startup")
        .env("VK_IMPLICIT_LAYER_PATH", &no_layers)
        .env("VK_LAYER_PATH", &no_layers)
        .envs(s.env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(line(&stdout, "MAPPED ").contains("libvk_test_driver_a.so"), "{stderr}");
    assert!(
        stderr.contains("its cache entry is stale: the library changed, or the program searching for it did (the manifest names it bare, and the search depends on the executable)"),
        "{stderr}"
    );
}

#[test]
fn processes_in_two_environments_keep_each_its_own_record() {
    let s = setup("two-environments");
    let steam = [("LD_LIBRARY_PATH", s.dir.join("runtime").display().to_string())];
    let (desktop, _) = run(&s, "pre", &[]);
    assert_eq!(line(&desktop, "MAPPED "), BOTH);
    let (game, err) = run(&s, "pre", &steam);
    assert_eq!(line(&game, "MAPPED "), BOTH, "another environment: a miss\n{err}");
    // Each finds its own entry: neither replaced the other's.
    let (desktop, err) = run(&s, "pre", &[]);
    assert_eq!(line(&desktop, "MAPPED "), "", "{err}");
    let (game, err) = run(&s, "pre", &steam);
    assert_eq!(line(&game, "MAPPED "), "", "{err}");
    // The same with instances (device counts and physical devices recorded per entry).
    for env in [&[][..], &steam[..], &[][..], &steam[..]] {
        run(&s, "create", env);
    }
    for env in [&[][..], &steam[..]] {
        let (out, err) = run(&s, "create", env);
        assert_eq!(line(&out, "MAPPED "), "", "{err}");
    }
}

#[test]
fn hostile_cache_files_are_ignored_and_replaced() {
    let s = setup("hostile");
    run(&s, "pre", &[]);
    let valid = std::fs::read(cache_file(&s)).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("foreign", b"{\"drivers\": []}".to_vec()),
        ("truncated", valid[..valid.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("another version", {
            let mut v = valid.clone();
            v[8] ^= 0x7f;
            v
        }),
        ("flipped", {
            let mut v = valid.clone();
            let last = v.len() - 3;
            v[last] ^= 1;
            v
        }),
    ];
    for (what, bytes) in cases {
        std::fs::write(cache_file(&s), &bytes).unwrap();
        let (out, err) = run(&s, "pre", &[]);
        assert_eq!(line(&out, "MAPPED "), BOTH, "{what}: a miss\n{err}");
        let (out, err) = run(&s, "pre", &[]);
        assert_eq!(line(&out, "MAPPED "), "", "{what}: replaced by a valid file\n{err}");
    }
}

/// The files of the applications' physical devices' records.
fn profile_files(s: &Setup) -> Vec<PathBuf> {
    let dir = s.cache.join("vulkan-loader-rs/profiles");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).map(|d| d.map(|e| e.unwrap().path()).collect()).unwrap_or_default();
    files.sort();
    files
}

#[test]
fn each_application_has_its_physical_devices_in_a_file_of_its_own() {
    let s = setup("profile-files");
    two_applications_take_turns(&s);
    // Two applications, two files; the drivers file holds no application's answers.
    let files = profile_files(&s);
    assert_eq!(files.len(), 2, "{files:?}");
    let drivers = std::fs::read(cache_file(&s)).unwrap();
    let profile = std::fs::read(&files[0]).unwrap();
    // The physical devices' answers (the test driver's device names among them) are in the
    // applications' files only. (Their sizes say nothing: a profile holds only the formats its
    // application asked.)
    let holds_a_device_name = |bytes: &[u8]| bytes.windows(b"Test Driver ".len()).any(|w| w == b"Test Driver ");
    assert!(holds_a_device_name(&profile), "an application's file holds its devices' answers");
    assert!(!holds_a_device_name(&drivers), "the drivers file holds no application's answers");
    // A damaged file costs its application a load of the driver (named in a warning), not the
    // other application, and is replaced when the devices are recorded again.
    let damaged = files[0].clone();
    let mut bytes = profile.clone();
    let last = bytes.len() - 3;
    bytes[last] ^= 1;
    std::fs::write(&damaged, &bytes).unwrap();
    let outcomes: Vec<(String, String)> = TWO_APPLICATIONS.iter().map(|step| run(&s, step, &[])).collect();
    let loaded: Vec<&(String, String)> = outcomes.iter().filter(|(out, _)| !line(out, "MAPPED ").is_empty()).collect();
    assert_eq!(loaded.len(), 1, "only the damaged file's application loads the driver: {outcomes:?}");
    assert!(loaded[0].1.contains(&format!("{}: ignored", damaged.display())), "{}", loaded[0].1);
    for step in TWO_APPLICATIONS {
        let (warm, err) = run(&s, step, &[]);
        assert_eq!(line(&warm, "MAPPED "), "", "{step}: the record made again\n{err}");
    }
    // `vk-loader cache --clear` removes them with the drivers file.
    let clear = std::process::Command::new(env!("CARGO_BIN_EXE_vk-loader")).args(["cache", "--clear"]).env("XDG_CACHE_HOME", &s.cache).output().unwrap();
    assert!(clear.status.success(), "{clear:?}");
    assert!(!cache_file(&s).exists());
    assert_eq!(profile_files(&s), Vec::<PathBuf>::new());
}

#[test]
fn verify_mode_loads_every_driver_and_compares_and_off_mode_writes_nothing() {
    let s = setup("modes");
    let (off, _) = run(&s, "pre", &[("VK_LOADER_DRIVER_CACHE", "off".into())]);
    assert_eq!(line(&off, "MAPPED "), BOTH);
    assert!(!cache_file(&s).exists(), "off writes no cache");
    let (cold, _) = run(&s, "create", &[]);
    let (verify, err) = run(&s, "create", &[("VK_LOADER_DRIVER_CACHE", "verify".into())]);
    assert_eq!(line(&verify, "MAPPED "), BOTH, "{err}");
    assert_eq!(line(&verify, "DEVICES "), line(&cold, "DEVICES "));
    assert!(err.contains("a.json: driver cache verified: the record matches"), "{err}");
    assert!(err.contains("b.json: driver cache verified: the record matches"), "{err}");
    assert!(!err.contains("driver cache verify:"), "no difference expected\n{err}");
    // The settings file's switch.
    let settings = s.dir.join("settings");
    std::fs::create_dir_all(settings.join("vulkan")).unwrap();
    std::fs::write(settings.join("vulkan/loader_settings.json"), r#"{"file_format_version": "1.0.0", "settings": {"driver_cache": "off"}}"#).unwrap();
    let (out, err) = run(&s, "pre", &[("XDG_CONFIG_HOME", settings.display().to_string())]);
    assert_eq!(line(&out, "MAPPED "), BOTH, "{err}");
}

#[test]
fn processes_starting_at_once_on_a_cold_cache_leave_one_whole_file() {
    let s = setup("race");
    std::fs::write(s.dir.join("step"), "pre").unwrap();
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| run(&s, "pre", &[]));
        }
    });
    let mut names: Vec<String> = std::fs::read_dir(s.cache.join("vulkan-loader-rs")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["drivers"], "no temporary file left");
    let (out, err) = run(&s, "pre", &[]);
    assert_eq!(line(&out, "MAPPED "), "", "the file one of them left is whole and current\n{err}");
}

const LAVAPIPE: &str = common::LAVAPIPE;

/// vulkaninfo through our library on lavapipe and the setup's two test drivers, with the setup's
/// cache and nothing of the host's environment. The loader logs its drivers (`VK_LOADER_DEBUG`,
/// which is not in the cache's key) so that each run can be checked to be cold, warm or verifying.
struct Vulkaninfo<'a> {
    s: &'a Setup,
    lib: PathBuf,
    empty: PathBuf,
    runs: std::cell::Cell<u32>,
}

impl<'a> Vulkaninfo<'a> {
    fn new(s: &'a Setup) -> Self {
        assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
        let lib = s.dir.join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        for name in ["libvulkan.so.1", "libvulkan.so"] {
            std::os::unix::fs::symlink(s.dir.join("libvulkan.so.1"), lib.join(name)).unwrap();
        }
        let empty = s.dir.join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        Vulkaninfo { s, lib, empty, runs: std::cell::Cell::new(0) }
    }

    /// vulkaninfo with `args`, the cache in `mode` (`VK_LOADER_DRIVER_CACHE`), and `extra`
    /// variables; (what it printed: the text on stdout, or with `--json` the profile it writes
    /// into its directory; the loader's log on stderr).
    fn run(&self, args: &[&str], mode: &str, extra: &[(&'static str, String)]) -> (String, String) {
        self.runs.set(self.runs.get() + 1);
        let work = self.s.dir.join(format!("run-{}", self.runs.get()));
        std::fs::create_dir_all(&work).unwrap();
        let mut cmd = Command::new(common::vulkaninfo());
        cmd.args(args).current_dir(&work).env_clear();
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("LD_LIBRARY_PATH", &self.lib);
        let manifests = &self.s.manifests;
        cmd.env("VK_DRIVER_FILES", format!("{LAVAPIPE}:{}:{}", manifests[0].display(), manifests[1].display()));
        cmd.env("VK_TEST_DRIVER_DEVICES_B", "").env("XDG_CACHE_HOME", &self.s.cache).env("VK_LOADER_DRIVER_CACHE", mode);
        cmd.env("VK_LOADER_DEBUG", "driver");
        for var in ["XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME"] {
            cmd.env(var, &self.empty);
        }
        for (name, value) in extra {
            cmd.env(name, value);
        }
        let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "vulkaninfo {args:?} ({mode}, {extra:?}): {err}");
        let mut seen = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut profiles: Vec<PathBuf> = std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().path()).collect();
        profiles.sort();
        for profile in profiles {
            seen += &format!("\n{}:\n{}", profile.file_name().unwrap().to_string_lossy(), std::fs::read_to_string(&profile).unwrap());
        }
        (seen, err)
    }
}

/// How a vulkaninfo run used the cache, as its log says.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Use<'a> {
    /// Every driver loaded and recorded: nothing in the cache yet.
    Cold,
    /// A miss: an entry there, but stale, for the reason given.
    Stale(&'a str),
    /// Lavapipe and the test driver with a device answered from the cache at first.
    Warm,
    /// Every driver loaded and compared with its record, no difference found.
    Verify,
}

/// Fails unless `seen` (from a run that used the cache as `how`, its log `err`) is `off`, the
/// cache-off output; `what` names the run.
fn assert_vulkaninfo(off: &str, (seen, err): &(String, String), how: Use<'_>, what: &str) {
    let a = "a.json";
    let answered = |manifest: &str| err.contains(&format!("{manifest}: not loaded: answered from the driver cache"));
    let well = match how {
        Use::Cold => err.contains(&format!("{LAVAPIPE}: loaded in")) && err.contains("(not in the driver cache yet)") && !err.contains("stale"),
        Use::Stale(why) => err.contains(&format!("its cache entry is stale: {why}")),
        Use::Warm => answered(LAVAPIPE) && answered(a) && !err.contains("not in the driver cache yet") && !err.contains("stale"),
        Use::Verify => err.contains(&format!("{LAVAPIPE}: driver cache verified: the record matches")) && !err.contains("driver cache verify:"),
    };
    assert!(well, "{what}: not {how:?}\n{err}");
    if seen != off {
        let diff = similar::TextDiff::from_lines(off, seen).unified_diff().to_string();
        panic!("{what} ({how:?}) differs from the cache off:\n{diff}");
    }
}

const TEXT: &[&str] = &[];
const JSON: &[&str] = &["--json"];

/// vulkaninfo (text and `--json`) through our library on lavapipe and the test driver: the same
/// with the cache off, cold, warm and verifying.
#[test]
fn vulkaninfo_is_the_same_with_the_cache_off_cold_warm_and_verifying() {
    let s = setup("vulkaninfo");
    let vulkaninfo = Vulkaninfo::new(&s);
    for args in [TEXT, JSON] {
        let _ = std::fs::remove_dir_all(&s.cache);
        let (off, _) = vulkaninfo.run(args, "off", &[]);
        assert!(off.contains("Test Driver"), "{off}");
        for (how, mode) in [(Use::Cold, "on"), (Use::Warm, "on"), (Use::Verify, "verify")] {
            assert_vulkaninfo(&off, &vulkaninfo.run(args, mode, &[]), how, &format!("vulkaninfo {args:?}"));
        }
    }
}

/// For every kind of [`LAUNCHES`], launches of vulkaninfo (text and `--json`) with that kind's
/// fresh variables each time: the first on a cold cache, the next ones warm, then verifying, each
/// printing what it prints with the cache off.
#[test]
fn vulkaninfo_is_the_same_off_cold_warm_and_verifying_for_every_kind_of_launch() {
    let s = setup("vulkaninfo-launches");
    let vulkaninfo = Vulkaninfo::new(&s);
    let formats = [TEXT, JSON];
    for (kind, variables) in LAUNCHES {
        let _ = std::fs::remove_dir_all(&s.cache);
        let off: Vec<String> = formats.iter().map(|args| vulkaninfo.run(args, "off", &launch(variables, 1)).0).collect();
        assert!(off[0].contains("Test Driver"), "{kind}\n{}", off[0]);
        let what = |args: &[&str], n: u32| format!("{kind}, launch {n}: vulkaninfo {args:?}");
        assert_vulkaninfo(&off[0], &vulkaninfo.run(TEXT, "on", &launch(variables, 1)), Use::Cold, &what(TEXT, 1));
        for n in 2..=3 {
            for (args, off) in formats.iter().zip(&off) {
                assert_vulkaninfo(off, &vulkaninfo.run(args, "on", &launch(variables, n)), Use::Warm, &what(args, n));
            }
        }
        for (args, off) in formats.iter().zip(&off) {
            assert_vulkaninfo(off, &vulkaninfo.run(args, "verify", &launch(variables, 4)), Use::Verify, &what(args, 4));
        }
    }
}

/// The test driver reads a driconf file (`$HOME/.drirc`) for its device's name, as RADV and ANV
/// read theirs. The file created, edited and removed, each change aged as a real edit is by the
/// next launch: after each, vulkaninfo (text and `--json`) with the cache on (the first launch a
/// miss naming the file, or a hit on the entry of the configuration as it was before, the next
/// ones warm) and verifying prints what it prints with the cache off, which is the driver's new
/// answer.
#[test]
fn vulkaninfo_is_the_same_off_on_and_verifying_after_each_driver_configuration_change() {
    let s = setup("vulkaninfo-driconf");
    let vulkaninfo = Vulkaninfo::new(&s);
    let home = s.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.display().to_string())];
    let drirc = home.join(".drirc");
    let changed = format!("the configuration changed: {} changed", drirc.display());
    let named = |name: &str| format!("<driconf><device><application name=\"all\">\n<option name=\"force_vk_devicename\" value=\"{name}\"/>\n</application></device></driconf>\n");
    // Each change, the file's contents after it, the device's name and how the first launch uses
    // the cache: removed, the file is as at first, whose entry the cache kept.
    let changes: [(&str, Option<String>, &str, Use); 4] = [
        ("no file", None, "Test Driver discrete 0", Use::Cold),
        ("the file created", Some(named("Renamed GPU")), "Renamed GPU", Use::Stale(&changed)),
        ("the file edited", Some(named("Another name, longer")), "Another name, longer", Use::Stale(&changed)),
        ("the file removed", None, "Test Driver discrete 0", Use::Warm),
    ];
    for (change, contents, device, first) in changes {
        match contents {
            Some(text) => {
                std::fs::write(&drirc, text).unwrap();
                age(&drirc);
            }
            None => {
                let _ = std::fs::remove_file(&drirc);
            }
        }
        let off: Vec<String> = [TEXT, JSON].iter().map(|args| vulkaninfo.run(args, "off", &env).0).collect();
        for off in &off {
            assert!(off.contains(device), "{change}: the driver says {device:?} with the cache off\n{off}");
        }
        let what = |args: &[&str]| format!("{change}: vulkaninfo {args:?}");
        assert_vulkaninfo(&off[0], &vulkaninfo.run(TEXT, "on", &env), first, &what(TEXT));
        for (args, off) in [TEXT, JSON].iter().zip(&off) {
            assert_vulkaninfo(off, &vulkaninfo.run(args, "on", &env), Use::Warm, &what(args));
            assert_vulkaninfo(off, &vulkaninfo.run(args, "verify", &env), Use::Verify, &what(args));
        }
    }
}

/// Makes `path` something other than a regular file the loader can read: a FIFO (opening it for
/// reading would wait for a writer), a device node (a link to `/dev/zero`, which never ends), a
/// directory, or a file without read permission (which root reads all the same).
fn make_no_file(what: &str, path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
    match what {
        "a FIFO" => {
            let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo with a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        }
        "a device node" => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        "a directory" => std::fs::create_dir(path).unwrap(),
        "an unreadable file" => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(path, b"not a cache file").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        other => panic!("{other}"),
    }
}

const NO_FILES: [&str; 4] = ["a FIFO", "a device node", "a directory", "an unreadable file"];

/// In place of the driver cache file and of an application's record, each of [`NO_FILES`]: the
/// process neither waits nor fails, and answers as with the cache off.
#[test]
fn no_file_in_place_of_the_cache_files_stops_or_changes_anything() {
    let s = setup("no-file-cache");
    let (reference, err) = run(&s, "create", &[("VK_LOADER_DRIVER_CACHE", "off".into())]);
    assert_eq!(line(&reference, "CREATE "), "VK_SUCCESS", "{err}");
    for what in NO_FILES {
        let _ = std::fs::remove_dir_all(&s.cache);
        std::fs::create_dir_all(s.cache.join("vulkan-loader-rs/profiles")).unwrap();
        make_no_file(what, &cache_file(&s));
        let (out, err) = run(&s, "create", &[]);
        assert_eq!(line(&out, "DEVICES "), line(&reference, "DEVICES "), "{what} as the cache file\n{err}");
        // A record of the application's: the drivers' file first, then the record in its place.
        let _ = std::fs::remove_dir_all(&s.cache);
        run(&s, "create", &[]);
        run(&s, "create", &[]);
        let profiles = profile_files(&s);
        assert_eq!(profiles.len(), 1, "{what}: one application recorded");
        make_no_file(what, &profiles[0]);
        let (out, err) = run(&s, "create", &[]);
        assert_eq!(line(&out, "DEVICES "), line(&reference, "DEVICES "), "{what} as an application's record\n{err}");
    }
}

/// In place of a driver manifest and of an implicit layer manifest, each of [`NO_FILES`]: skipped
/// with a line naming it and what it is, everything else as before.
#[test]
fn no_file_in_place_of_a_manifest_is_skipped_saying_what_it_is() {
    let s = setup("no-file-manifest");
    let layers = s.dir.join("implicit");
    std::fs::create_dir_all(&layers).unwrap();
    let off = ("VK_LOADER_DRIVER_CACHE", "off".to_string());
    let only_b = [("VK_DRIVER_FILES", s.manifests[1].display().to_string()), off.clone()];
    let (reference, err) = run(&s, "create", &only_b);
    assert_eq!(line(&reference, "CREATE "), "VK_SUCCESS", "{err}");
    for what in NO_FILES {
        let manifest = s.dir.join("a.json");
        make_no_file(what, &manifest);
        make_no_file(what, &layers.join("layer.json"));
        let env = [off.clone(), ("VK_IMPLICIT_LAYER_PATH", layers.display().to_string()), ("VK_LOADER_DEBUG", "all".into())];
        let (out, err) = run(&s, "create", &env);
        assert_eq!(line(&out, "DEVICES "), line(&reference, "DEVICES "), "{what} as a driver manifest\n{err}");
        // What the loader says it is: a link to /dev/zero is a character device.
        let said = match what {
            "a FIFO" => "not a regular file (a FIFO)",
            "a device node" => "not a regular file (a character device)",
            _ => "not a regular file (a directory)",
        };
        let named = |file: &str| err.lines().any(|l| l.contains(file) && l.contains(said));
        // A directory named in VK_DRIVER_FILES is searched; root reads a file of mode 0.
        if what == "a FIFO" || what == "a device node" {
            assert!(named("a.json"), "{what}: no line names the driver manifest and what it is\n{err}");
        }
        if what != "an unreadable file" {
            assert!(named("layer.json"), "{what}: no line names the layer manifest and what it is\n{err}");
        }
        let _ = std::fs::remove_dir_all(&manifest);
        let _ = std::fs::remove_file(&manifest);
        common::driver_manifest(&s.dir, "a.json", &s.drivers[0]);
    }
}

// `LAUNCHES`: the ways people launch a program (shared with the bench).
include!("../../tests/launches.rs");

/// The variables of one launch of a kind of [`LAUNCHES`]: launch `n`'s fresh values.
fn launch(variables: &[(&'static str, &str)], n: u32) -> Vec<(&'static str, String)> {
    variables.iter().map(|(name, value)| (*name, value.replace("{n}", &(n * 7 + 3).to_string()))).collect()
}

/// After one launch of each kind, every later launch of that kind, with its own fresh values,
/// finds the cache warm: no driver loaded.
#[test]
fn every_repeated_launch_as_users_make_them_is_warm() {
    let s = setup("launches");
    for (kind, variables) in LAUNCHES {
        run(&s, "create", &launch(variables, 1));
        run(&s, "create", &launch(variables, 2));
        for n in 3..5 {
            let (out, err) = run(&s, "create", &launch(variables, n));
            assert_eq!(line(&out, "MAPPED "), "", "{kind}, launch {n}: a miss\n{err}");
            assert!(!err.contains("stale"), "{kind}, launch {n}\n{err}");
        }
    }
}

/// A driver that reads a driconf file for its device's name (as RADV and ANV do), recorded warm;
/// the file edited: the next launch is a miss that names the file, and answers what the driver
/// says now.
#[test]
fn an_edited_driver_configuration_file_is_a_miss_naming_it_with_the_live_answer() {
    let s = setup("driconf");
    let home = s.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = [("HOME", home.display().to_string())];
    let (cold, err) = run(&s, "create", &env);
    assert_eq!(line(&cold, "DEVICES "), "Test Driver discrete 0", "{err}");
    run(&s, "create", &env);
    let (warm, err) = run(&s, "create", &env);
    assert_eq!(line(&warm, "MAPPED "), "", "{err}");
    let drirc = home.join(".drirc");
    std::fs::write(&drirc, "<driconf><device><application name=\"all\">\n<option name=\"force_vk_devicename\" value=\"Renamed GPU\"/>\n</application></device></driconf>\n").unwrap();
    age(&drirc);
    let (edited, err) = run(&s, "create", &env);
    assert_eq!(line(&edited, "DEVICES "), "Renamed GPU", "the live answer, not the record's\n{err}");
    let named = format!("its cache entry is stale: the configuration changed: {} changed", drirc.display());
    assert!(err.contains(&named), "{named}\n{err}");
    // Recorded again under the file as it is: warm, with the new name.
    run(&s, "create", &env);
    let (warm, err) = run(&s, "create", &env);
    assert_eq!((line(&warm, "DEVICES "), line(&warm, "MAPPED ")), ("Renamed GPU", ""), "{err}");
}

/// A driver switch set for one launch is a miss that names the variable, never its value.
#[test]
fn a_changed_variable_is_named_in_the_miss_without_its_value() {
    let s = setup("named-variable");
    run(&s, "pre", &[]);
    let (_, err) = run(&s, "pre", &[("MESA_SECRET_SWITCH", "value-not-to-be-seen".into())]);
    assert!(err.contains("its cache entry is stale: the environment changed: $MESA_SECRET_SWITCH new"), "{err}");
    assert!(!err.contains("value-not-to-be-seen"), "{err}");
    let file = std::fs::read(cache_file(&s)).unwrap();
    assert!(!String::from_utf8_lossy(&file).contains("value-not-to-be-seen"), "a value in the cache file");
}

/// Root run with another user's `HOME` (`sudo -E`, a root service given a user's environment)
/// creates nothing in that home and neither reads nor writes that user's cache; the user's own
/// processes (run as uid 4242, which needs no account) keep their cache working, before and after.
#[test]
fn root_with_another_users_home_leaves_it_untouched_and_that_user_keeps_its_cache() {
    // SAFETY: geteuid has no preconditions.
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: running a child as another user needs root");
        return;
    }
    const USER: u32 = 4242;
    let s = setup("other-user");
    let home = s.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(USER), Some(USER)).unwrap();
    // The cache under HOME, as for a user who sets no XDG_CACHE_HOME.
    let env = [("HOME", home.display().to_string()), ("XDG_CACHE_HOME", String::new())];
    let as_user = || {
        let mut all = s.env.clone();
        all.retain(|(k, _)| !env.iter().any(|(e, _)| e == k));
        all.extend(env.iter().cloned());
        std::fs::write(s.dir.join("step"), "create").unwrap();
        let run = common::run_scenario_under(&format!("setpriv --reuid={USER} --regid={USER} --clear-groups"), "scenario_entry", "startup", &all);
        assert!(run.status.success(), "as uid {USER}: {:?}\n{}\n{}", run.status, run.stdout, run.stderr);
        (run.stdout, run.stderr)
    };
    for _ in 0..2 {
        let (out, err) = run(&s, "create", &env);
        assert_eq!(line(&out, "CREATE "), "VK_SUCCESS", "{err}");
    }
    assert!(!home.join(".cache").exists(), "root created {}/.cache", home.display());
    as_user();
    let (warm, err) = as_user();
    assert_eq!(line(&warm, "MAPPED "), "", "the user's second launch is warm\n{err}");
    let cache = home.join(".cache/vulkan-loader-rs/drivers");
    use std::os::unix::fs::MetadataExt;
    let before = std::fs::metadata(&cache).unwrap();
    assert_eq!((before.uid(), std::fs::metadata(home.join(".cache")).unwrap().uid()), (USER, USER));
    // Root again: the user's cache is not root's to use.
    let (out, err) = run(&s, "create", &env);
    assert_eq!(line(&out, "MAPPED "), BOTH, "root did not use the user's cache\n{err}");
    let after = std::fs::metadata(&cache).unwrap();
    assert_eq!((after.ino(), after.mtime(), after.uid()), (before.ino(), before.mtime(), USER), "root left the user's cache as it was");
    let (warm, err) = as_user();
    assert_eq!(line(&warm, "MAPPED "), "", "the user's cache still works\n{err}");
}

/// The program as a launcher starts it: a script that notes the environment the launcher gave it
/// (into `<file>.env`), sets the test's (no layers) and runs the child's `create` step, its output
/// into the file named by its argument.
fn launcher_program(s: &Setup) -> PathBuf {
    std::fs::write(s.dir.join("step"), "create").unwrap();
    let mut script = String::from("#!/bin/sh\nenv > \"$1.env\"\n");
    let no_layers = s.dir.join("no-layers");
    std::fs::create_dir_all(&no_layers).unwrap();
    let env = s.env.iter().cloned().chain([("VK_IMPLICIT_LAYER_PATH", no_layers.display().to_string()), ("VK_LAYER_PATH", no_layers.display().to_string()), ("SCENARIO", "startup".to_string())]);
    for (name, value) in env {
        script += &format!("export {name}='{value}'\n");
    }
    let exe = std::env::current_exe().unwrap();
    script += &format!("'{}' --exact scenario_entry --nocapture --test-threads=1 > \"$1.part\" 2>&1; mv \"$1.part\" \"$1\"\n", exe.display());
    let script_path = s.dir.join("program.sh");
    std::fs::write(&script_path, script).unwrap();
    script_path
}

/// Three launches of the program through a launcher of `kind`: `start` starts launch `n`, its
/// output to go to the file it is given, and says whether the launcher succeeded. Each launch
/// creates an instance; from the second on, no driver is loaded.
fn three_launches_warm_from_the_second(s: &Setup, kind: &str, start: impl Fn(u32, &Path) -> std::io::Result<std::process::ExitStatus>) {
    for n in 1..=3 {
        let out = s.dir.join(format!("{kind}-{n}.out"));
        let status = start(n, &out);
        assert!(status.as_ref().is_ok_and(|s| s.success()), "{kind}: launch {n} failed: {status:?}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !out.exists() {
            assert!(std::time::Instant::now() < deadline, "{kind}: launch {n} wrote nothing");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(line(&text, "CREATE "), "VK_SUCCESS", "{kind}, launch {n}\n{text}");
        if n > 1 {
            assert_eq!(line(&text, "MAPPED "), "", "{kind}, launch {n}: a miss\n{text}");
        }
    }
}

/// The same program started again and again through real launchers, each giving it variables of
/// its own per launch: tmux (a new session each time: `TMUX`, `TMUX_PANE`), GNU screen (a new
/// session: `STY`, `WINDOW`, `TERMCAP`), GIO launching a `.desktop` file
/// (`GIO_LAUNCHED_DESKTOP_FILE`, `GIO_LAUNCHED_DESKTOP_FILE_PID`). From the second launch of a kind
/// on, no driver is loaded.
#[test]
fn repeated_launches_through_real_launchers_are_warm() {
    for tool in ["tmux", "screen", "gio"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap().status.success();
        assert!(found, "{tool} missing: install tmux, screen and libglib2.0-bin");
    }
    let s = setup("launchers");
    let script = launcher_program(&s).display().to_string();
    let desktop = s.dir.join("program.desktop");
    std::fs::write(&desktop, format!("[Desktop Entry]\nType=Application\nName=program\nExec=sh {script} %f\n")).unwrap();
    // One tmux server for every launch, as a user's: a server whose last session just ended may
    // refuse the next client while it exits.
    let socket = s.dir.join("tmux.sock");
    struct Server<'a>(&'a Path);
    impl Drop for Server<'_> {
        fn drop(&mut self) {
            let _ = Command::new("tmux").arg("-S").arg(self.0).arg("kill-server").status();
        }
    }
    let started = Command::new("tmux").arg("-S").arg(&socket).args(["new-session", "-d", "-s", "user", "sleep 3600"]).status();
    assert!(started.unwrap().success(), "tmux: the server did not start");
    let _server = Server(&socket);
    three_launches_warm_from_the_second(&s, "tmux", |n, out| Command::new("tmux").arg("-S").arg(&socket).args(["new-session", "-d", "-s", &format!("s{n}"), "sh", &script]).arg(out).status());
    three_launches_warm_from_the_second(&s, "screen", |n, out| Command::new("screen").args(["-dmS", &format!("s{n}"), "sh", &script]).arg(out).status());
    three_launches_warm_from_the_second(&s, "gio", |_, out| Command::new("gio").arg("launch").arg(&desktop).arg(out).status());
}

/// A private sshd on a free port of 127.0.0.1, with its own configuration, host key and
/// authorized key in `dir`; killed when dropped.
struct Sshd {
    child: std::process::Child,
    port: u16,
    key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SSHD: &str = "/usr/sbin/sshd";

impl Sshd {
    fn start(dir: &Path) -> Sshd {
        let keygen = |file: &str| {
            let path = dir.join(file);
            let made = Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&path).status();
            assert!(made.is_ok_and(|s| s.success()), "ssh-keygen could not make {}: install openssh-client", path.display());
            path
        };
        let (host_key, key) = (keygen("ssh_host_key"), keygen("ssh_client_key"));
        std::fs::copy(key.with_extension("pub"), dir.join("authorized_keys")).unwrap();
        // sshd's privilege separation directory, which its package's service makes at boot.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let log = dir.join("sshd.log");
        // A port free a moment ago may be taken before sshd binds it: a few tries.
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let config = dir.join("sshd_config");
            let settings = [
                format!("Port {port}"),
                "ListenAddress 127.0.0.1".into(),
                format!("HostKey {}", host_key.display()),
                format!("AuthorizedKeysFile {}", dir.join("authorized_keys").display()),
                "PermitRootLogin prohibit-password".into(),
                "PubkeyAuthentication yes".into(),
                "PasswordAuthentication no".into(),
                "KbdInteractiveAuthentication no".into(),
                "StrictModes no".into(),
                // A session as a user's: PAM's account and session modules, as Debian's sshd.
                "UsePAM yes".into(),
                format!("PidFile {}", dir.join("sshd.pid").display()),
            ];
            std::fs::write(&config, settings.join("\n") + "\n").unwrap();
            let child = Command::new(SSHD).arg("-D").arg("-e").arg("-f").arg(&config).stdin(std::process::Stdio::null()).stdout(std::fs::File::create(&log).unwrap()).stderr(std::fs::File::create(&log).unwrap()).spawn();
            let child = child.unwrap_or_else(|e| panic!("{SSHD} could not start ({e}): install openssh-server"));
            let mut sshd = Sshd { child, port, key: key.clone() };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            loop {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return sshd;
                }
                if sshd.child.try_wait().unwrap().is_some() || std::time::Instant::now() > deadline {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            drop(sshd);
        }
        panic!("sshd did not start listening on 127.0.0.1: its log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    }

    /// `ssh` to root on this server, running `command`.
    fn ssh(&self, command: &str) -> Command {
        let mut ssh = Command::new("ssh");
        ssh.args(["-F", "none", "-p", &self.port.to_string(), "-i"]).arg(&self.key);
        ssh.args(["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "root@127.0.0.1", command]);
        ssh
    }
}

/// The same program started again and again in real new sessions, each giving it variables of its
/// own: an ssh session to a private sshd (`SSH_CLIENT`, `SSH_CONNECTION`: a new client port each
/// time), and new logins through PAM (`su --login`, `runuser -l`). From the second launch of a kind
/// on, no driver is loaded. Needs root (sshd, a login as root without a password), as CI runs.
#[test]
fn repeated_launches_through_ssh_and_new_logins_are_warm() {
    // SAFETY: geteuid has no preconditions.
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "this test needs root: it starts sshd and logs in as root through ssh, su and runuser");
    assert!(Path::new(SSHD).exists(), "{SSHD} missing: install openssh-server");
    for tool in ["ssh", "ssh-keygen", "su", "runuser"] {
        let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap().status.success();
        assert!(found, "{tool} missing: install openssh-client and util-linux");
    }
    let s = setup("sessions");
    let script = launcher_program(&s).display().to_string();
    let command = |out: &Path| format!("sh '{script}' '{}'", out.display());
    let sshd = Sshd::start(&s.dir);
    three_launches_warm_from_the_second(&s, "ssh", |_, out| sshd.ssh(&command(out)).stdin(std::process::Stdio::null()).status());
    // The session's own variables reached the program, fresh per launch (a new client port).
    let connection = |n: u32| {
        let env = std::fs::read_to_string(s.dir.join(format!("ssh-{n}.out.env"))).unwrap();
        env.lines().find(|l| l.starts_with("SSH_CONNECTION=")).unwrap_or_else(|| panic!("no SSH_CONNECTION in launch {n}'s environment\n{env}")).to_string()
    };
    assert_ne!(connection(1), connection(2), "ssh: the same SSH_CONNECTION for two launches");
    three_launches_warm_from_the_second(&s, "su", |_, out| Command::new("su").args(["--login", "root", "-c", &command(out)]).stdin(std::process::Stdio::null()).status());
    three_launches_warm_from_the_second(&s, "runuser", |_, out| Command::new("runuser").args(["-l", "root", "-c", &command(out)]).stdin(std::process::Stdio::null()).status());
}

/// Beside `a` (one device) and `b` (none), not named as Mesa names its drivers (whose application
/// profiles are not known: never recorded for the applications no profile names), `libvulkan_none.so`:
/// a copy of the test driver named as Mesa's drivers are, with no device (it reads the untagged
/// variables); `HOME` of its own, whose `.drirc` names the application `third`.
fn with_a_mesa_driver_without_device(name: &str) -> Setup {
    let mut s = setup(name);
    let library = s.dir.join("libvulkan_none.so");
    std::fs::copy(&s.drivers[0], &library).unwrap();
    let manifest = common::driver_manifest(&s.dir, "none.json", &library);
    let home = s.dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let drirc = home.join(".drirc");
    std::fs::write(&drirc, "<driconf><device><application name=\"Third\" application_name_match=\"^third$\">\n<option name=\"vk_x11_strict_image_count\" value=\"true\"/>\n</application></device></driconf>\n").unwrap();
    for path in [&library, &manifest, &drirc] {
        age(path);
    }
    let files = format!("{}:{}:{}", s.manifests[0].display(), s.manifests[1].display(), manifest.display());
    s.env.retain(|(k, _)| *k != "VK_DRIVER_FILES");
    s.env.extend([("VK_DRIVER_FILES", files), ("VK_TEST_DRIVER_DEVICES", String::new()), ("HOME", home.display().to_string())]);
    s
}

#[test]
fn a_new_application_does_not_load_a_mesa_driver_every_application_recorded_found_no_device_with() {
    let s = with_a_mesa_driver_without_device("new-application");
    let (cold, err) = run(&s, "create:first", &[]);
    assert_eq!(line(&cold, "DEVICES "), "Test Driver discrete 0", "{err}");
    assert!(err.contains("none.json: loaded in"), "{err}");
    // Another application, never seen: the Mesa driver is not loaded, the others are (a has a
    // device; b is not Mesa's, whose application profiles are not known).
    let (new, err) = run(&s, "create:second", &[]);
    assert_eq!(line(&new, "DEVICES "), line(&cold, "DEVICES "), "{err}");
    assert!(
        err.contains("none.json: not loaded: its driver cache record says it has no physical device for any application recorded, and no driconf rule may name this one"),
        "{err}"
    );
    assert!(!err.contains("none.json: loaded in"), "{err}");
    // Its next process finds a record of its own.
    let (_, again) = run(&s, "create:second", &[]);
    assert!(again.contains("none.json: not loaded: its driver cache record says it has no physical device\n"), "{again}");
    for driver in ["a.json", "b.json"] {
        let loaded = format!("{driver}: loaded in");
        assert!(err.lines().any(|l| l.contains(&loaded) && l.contains("no application that no profile names is recorded")), "{driver}\n{err}");
    }
    // An application a driconf rule names may be configured apart: the driver is loaded.
    let (third, err) = run(&s, "create:third", &[]);
    assert_eq!(line(&third, "DEVICES "), line(&cold, "DEVICES "), "{err}");
    assert!(err.contains("none.json: loaded in") && err.contains("application_name_match=\"^third$\"> matches this application's name"), "{err}");
    // A variable in the key that differs: another entry, the driver loaded.
    let (other, err) = run(&s, "create:fourth", &[("MESA_EXTRA_SWITCH", "1".into())]);
    assert_eq!(line(&other, "DEVICES "), line(&cold, "DEVICES "), "{err}");
    assert!(err.contains("none.json: loaded in") && err.contains("the environment changed: $MESA_EXTRA_SWITCH new"), "{err}");
}

#[test]
fn without_an_application_no_profile_names_recorded_a_new_one_loads_the_driver() {
    let s = with_a_mesa_driver_without_device("only-named-recorded");
    // Only `third`, which the driconf file names, recorded: its count says nothing of the others.
    run(&s, "create:third", &[]);
    let (_, err) = run(&s, "create:second", &[]);
    assert!(err.contains("none.json: loaded in") && err.contains("no application that no profile names is recorded"), "{err}");
    // `second` recorded it: the next new application does not load it.
    let (_, err) = run(&s, "create:fifth", &[]);
    assert!(!err.contains("none.json: loaded in"), "{err}");
}
