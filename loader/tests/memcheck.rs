//! Valgrind's memcheck over the tests that drive the loader's FFI paths, where the compiler cannot
//! see: the unknown-command trampolines (`unknown_commands.rs`), the layer chains (`layers.rs`),
//! the differential harness (`differential.rs`, our side of every case) and lazy drivers going
//! live from several threads at once (this file's scenario). Every child process of those tests
//! runs under memcheck (their `LOADER_TEST_RUNNER`): no invalid access, no use of uninitialised
//! memory, no definite leak, in the loader or in anything it loads there, and each test passes
//! its own assertions as it does without valgrind.
//!
//! The suppressions (`*.supp` beside this file) cover the test driver's and test layer's own
//! statics, lost when the loader unloads them, and a false positive of glibc's dynamic linker;
//! nothing of the loader's.

mod common;

use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Barrier;

use vk_generated::types::*;

/// Memcheck as the tests' `LOADER_TEST_RUNNER`: any error fails the child with status 99.
const MEMCHECK: &str = concat!(
    "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite",
    " --keep-debuginfo=yes --num-callers=30",
    " --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/unloaded-test-driver.supp --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/unloaded-test-layer.supp --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/system-libraries.supp"
);

/// [`MEMCHECK`] without leak checking, for a scenario that leaves its instances alive on purpose.
const MEMCHECK_NO_LEAK_CHECK: &str = concat!(
    "valgrind -q --error-exitcode=99 --leak-check=no --keep-debuginfo=yes --num-callers=30",
    " --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/system-libraries.supp"
);

fn assert_valgrind_installed() {
    let found = Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(found, "valgrind missing: install valgrind");
}

/// The executable cargo builds from `loader/tests/<name>.rs` in this profile: `cargo test
/// --no-run` names it (and builds it, a no-op when this run of `cargo test` has built it).
fn test_binary(name: &str) -> PathBuf {
    let artifacts = common::artifact_dir();
    let (target_dir, triple) = common::cargo_target();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.args(["test", "--no-run", "--message-format=json", "-p", "loader", "--test", name]);
    cargo.arg("--target-dir").arg(target_dir).args(triple.iter().flat_map(|t| ["--target", t])).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    match artifacts.file_name().and_then(|p| p.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cargo.arg("--release");
        }
        Some(profile) => {
            cargo.args(["--profile", profile]);
        }
    }
    let out = cargo.output().expect("cannot start cargo");
    assert!(out.status.success(), "cargo test --no-run --test {name} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact" && message["target"]["name"] == name && message["target"]["kind"][0] == "test")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo named no executable for the test {name}"))
}

/// Runs the tests `names` of the test executable `binary` (one at a time) with their child
/// processes under `runner`; fails unless each passed.
fn run_tests_under(runner: &str, binary: &str, names: &[&str]) {
    let mut command = Command::new(test_binary(binary));
    command.arg("--exact").args(names).args(["--test-threads=1"]).env("LOADER_TEST_RUNNER", runner);
    // Each child has its own watchdog; this one catches the test program itself hanging.
    let out = common::output_within(&mut command, common::CHILD_WATCHDOG * 6);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let passed = format!("test result: ok. {} passed", names.len());
    assert!(out.status.success() && stdout.contains(&passed), "{binary} under memcheck:\n{stdout}\n{stderr}");
}

#[test]
fn unknown_command_trampolines_under_memcheck() {
    assert_valgrind_installed();
    run_tests_under(
        MEMCHECK,
        "unknown_commands",
        &[
            "three_hundred_commands_of_each_level_reach_every_device_of_two_drivers",
            "an_interface_3_driver_gets_physical_device_commands_through_its_get_instance_proc_addr",
        ],
    );
    // Its scenario leaves both instances and their devices alive.
    run_tests_under(MEMCHECK_NO_LEAK_CHECK, "unknown_commands", &["two_instances_and_eight_threads_naming_and_calling_at_once"]);
}

#[test]
fn layer_chains_under_memcheck() {
    assert_valgrind_installed();
    run_tests_under(
        MEMCHECK,
        "layers",
        &[
            "two_pass_through_layers_in_order_with_devices_and_draws",
            "handle_wrapping_layer",
            "instance_wrapping_layer",
            "layer_resolving_unknown_commands_during_creation",
            "layer_calling_back_into_the_loader",
            "layer_failing_after_calling_down",
            "meta_layer_expands_in_place",
            "layer_creates_a_private_device_through_the_layers_below",
            "layer_corrupting_the_device_stops_the_process",
        ],
    );
}

#[test]
fn differential_cases_under_memcheck() {
    // Not on i686 either: 32-bit valgrind has no AVX, so lavapipe names itself "128 bits" under
    // memcheck and "256 bits" in the system loader's native child.
    if !cfg!(target_arch = "x86_64") {
        println!("skipped: the differential harness under memcheck runs on x86_64 only");
        return;
    }
    assert_valgrind_installed();
    run_tests_under(MEMCHECK, "differential", &["what_an_application_sees_matches_the_khronos_loader"]);
}

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Our library, opened in the child, and its `vkGetInstanceProcAddr`.
struct Loader {
    _library: libloading::Library,
    gipa: Gipa,
}

impl Loader {
    fn open(path: &Path) -> Loader {
        // SAFETY: our libvulkan.so; its initialisers only set up the loader's statics.
        let library = unsafe { libloading::Library::new(path) }.expect("open libvulkan.so");
        // SAFETY: the exported vkGetInstanceProcAddr has the type of PFN_vkGetInstanceProcAddr.
        let gipa = unsafe { *library.get::<Gipa>(b"vkGetInstanceProcAddr\0").expect("vkGetInstanceProcAddr") };
        Loader { _library: library, gipa }
    }

    /// `name`'s command for `instance` (NULL for a global one), cast to its type `F`.
    ///
    /// # Safety
    /// `F` is the function pointer type of the command `name` (`PFN_vk*` without the `Option`),
    /// and `instance` is NULL or a live instance of this loader.
    unsafe fn command<F: Copy>(&self, instance: VkInstance, name: &CStr) -> F {
        assert_eq!(size_of::<F>(), size_of::<unsafe extern "system" fn()>());
        // SAFETY: `name` is NUL-terminated and `instance` NULL or live (the caller's contract).
        let f = unsafe { (self.gipa)(instance, name.as_ptr()) }.unwrap_or_else(|| panic!("{name:?} is NULL"));
        // SAFETY: `F` is a function pointer of the command's own type (the caller's contract), the
        // size of the pointer the loader returned.
        unsafe { std::mem::transmute_copy(&f) }
    }
}

/// The application name every run gives: the driver cache's records are per application.
const APPLICATION: &CStr = c"memcheck-lazy";

/// An instance of the loader with its physical devices; destroyed when dropped.
struct Instance<'l> {
    loader: &'l Loader,
    handle: VkInstance,
    devices: Vec<VkPhysicalDevice>,
}

impl<'l> Instance<'l> {
    fn create(loader: &'l Loader) -> Instance<'l> {
        let app = VkApplicationInfo { pApplicationName: APPLICATION.as_ptr(), apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
        let mut handle = VkInstance::NULL;
        // SAFETY: vkCreateInstance is global; its type is that of the PFN; `info` and `app` live
        // across the call and `handle` is a local to write.
        let result = unsafe {
            let create: unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult =
                loader.command(VkInstance::NULL, c"vkCreateInstance");
            create(&info, std::ptr::null(), &mut handle)
        };
        assert_eq!(result, VkResult::SUCCESS, "vkCreateInstance");
        let mut instance = Instance { loader, handle, devices: Vec::new() };
        instance.devices = instance.enumerate();
        instance
    }

    /// The command `name` of this instance, as type `F`.
    ///
    /// # Safety
    /// `F` is the function pointer type of the command `name`.
    unsafe fn command<F: Copy>(&self, name: &CStr) -> F {
        // SAFETY: the instance is live while `self` is; `F` is the caller's to get right.
        unsafe { self.loader.command(self.handle, name) }
    }

    fn enumerate(&self) -> Vec<VkPhysicalDevice> {
        // SAFETY: the type is vkEnumeratePhysicalDevices'; the instance is live; the array is
        // `count` long.
        unsafe {
            let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult = self.command(c"vkEnumeratePhysicalDevices");
            let mut count = 0;
            assert_eq!(enumerate(self.handle, &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
            let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
            assert_eq!(enumerate(self.handle, &mut count, devices.as_mut_ptr()), VkResult::SUCCESS);
            devices.truncate(count as usize);
            devices
        }
    }

    /// A device's name, UUID and PCI bus (answered from the driver cache while its driver is not
    /// loaded, by the driver once it is).
    fn identity(&self, device: VkPhysicalDevice) -> String {
        let mut pci = VkPhysicalDevicePCIBusInfoPropertiesEXT::default();
        let mut id = VkPhysicalDeviceIDProperties { pNext: (&raw mut pci).cast(), ..Default::default() };
        let mut properties = VkPhysicalDeviceProperties2 { pNext: (&raw mut id).cast(), ..Default::default() };
        // SAFETY: the type is vkGetPhysicalDeviceProperties2's; `device` is one of this instance's;
        // the chain is of locals that outlive the call, every driver here has VK_EXT_pci_bus_info.
        unsafe {
            let get: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties2) = self.command(c"vkGetPhysicalDeviceProperties2");
            get(device, &mut properties);
        }
        let name = properties.properties.deviceName.map(|c| c as u8);
        let name = CStr::from_bytes_until_nul(&name).map_or("(unterminated)".into(), |n| n.to_string_lossy());
        let uuid: String = id.deviceUUID.iter().map(|b| format!("{b:02x}")).collect();
        format!("{name} uuid={uuid} bus={}", pci.pciBus)
    }

    /// Creates a device on `physical`, takes its queue and destroys it: the result.
    fn create_device(&self, physical: VkPhysicalDevice) -> VkResult {
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        // SAFETY: each type is its command's; `physical` is one of this instance's; the create
        // info's pointers are locals that outlive the call; the device is destroyed once.
        unsafe {
            let create: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult =
                self.command(c"vkCreateDevice");
            let result = create(physical, &info, std::ptr::null(), &mut device);
            if result == VkResult::SUCCESS {
                let get_queue: unsafe extern "system" fn(VkDevice, u32, u32, *mut VkQueue) = self.command(c"vkGetDeviceQueue");
                let mut queue = VkQueue::NULL;
                get_queue(device, 0, 0, &mut queue);
                assert!(!queue.is_null(), "no queue");
                let destroy: unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks) = self.command(c"vkDestroyDevice");
                destroy(device, std::ptr::null());
            }
            result
        }
    }

    /// vkGetPhysicalDeviceImageFormatProperties, which no record answers: the driver's own result.
    fn image_format(&self, physical: VkPhysicalDevice) -> VkResult {
        let mut properties = VkImageFormatProperties::default();
        // SAFETY: the type is the command's; `physical` is one of this instance's; the output is a
        // local.
        unsafe {
            let get: unsafe extern "system" fn(VkPhysicalDevice, VkFormat, VkImageType, VkImageTiling, VkImageUsageFlags, VkImageCreateFlags, *mut VkImageFormatProperties) -> VkResult =
                self.command(c"vkGetPhysicalDeviceImageFormatProperties");
            get(physical, VkFormat::R8G8B8A8_UNORM, VkImageType::TYPE_2D, VkImageTiling::OPTIMAL, VkImageUsageFlags::SAMPLED_BIT, VkImageCreateFlags::default(), &mut properties)
        }
    }

    /// The test driver's physical-device command the registry does not know (fetched now, through
    /// the unknown-command trampolines), called on every device: the API versions it reports.
    fn unknown_command(&self) -> Vec<u32> {
        // SAFETY: the test driver's vkGetTestDriverRequestedApiVersionTEST takes a physical device
        // and returns a u32; the devices are this instance's.
        unsafe {
            let requested: unsafe extern "system" fn(VkPhysicalDevice) -> u32 = self.command(c"vkGetTestDriverRequestedApiVersionTEST");
            self.devices.iter().map(|&d| requested(d)).collect()
        }
    }
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        // SAFETY: the type is vkDestroyInstance's; every object made of the instance is gone.
        unsafe {
            let destroy: unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks) = self.command(c"vkDestroyInstance");
            destroy(self.handle, std::ptr::null());
        }
    }
}

/// The instance lent to the threads (its raw handles make it neither `Send` nor `Sync`).
#[derive(Clone, Copy)]
struct Shared<'a, 'l>(&'a Instance<'l>);
// SAFETY: the loader's instance-level commands may be called from any thread (Vulkan's threading
// rules: no external synchronisation for these), and the instance outlives the scoped threads.
unsafe impl Send for Shared<'_, '_> {}

/// The child. Step `record` (from the file `step` beside the library, not a variable: the
/// environment is in the driver cache's key) creates an instance, reads each device's identity
/// and destroys it: run twice, the cache records the drivers, then their devices. Step `threads`
/// then finds the drivers lazy and makes them go live from six threads at once: two create devices
/// (one per driver), one asks a query no record answers, one fetches and calls an unknown command,
/// two keep asking recorded queries and enumerating; each prints what it saw.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("lazy-threads") {
        return;
    }
    println!();
    let library = PathBuf::from(std::env::var("LIBVULKAN").unwrap());
    let step = std::fs::read_to_string(library.with_file_name("step")).unwrap();
    let loader = Loader::open(&library);
    let instance = Instance::create(&loader);
    let identities: Vec<String> = instance.devices.iter().map(|&d| instance.identity(d)).collect();
    println!("DEVICES {}", identities.join(" | "));
    if step.trim() != "threads" {
        return;
    }
    let (start, identities) = (&Barrier::new(6), &identities);
    let shared = Shared(&instance);
    let (first, last) = (instance.devices[0], instance.devices[instance.devices.len() - 1]);
    let lines: Vec<String> = std::thread::scope(|scope| {
        let threads = [
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                format!("CREATE_DEVICE first {:?}", i.create_device(first))
            }),
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                format!("CREATE_DEVICE last {:?}", i.create_device(last))
            }),
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                format!("IMAGE_FORMAT {:?}", i.devices.iter().map(|&d| i.image_format(d)).collect::<Vec<_>>())
            }),
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                format!("UNKNOWN_COMMAND {:?}", i.unknown_command())
            }),
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                let same = (0..20).all(|_| i.devices.iter().map(|&d| i.identity(d)).collect::<Vec<_>>() == *identities);
                format!("IDENTITIES_STABLE {same}")
            }),
            scope.spawn(move || {
                let Shared(i) = shared;
                start.wait();
                format!("HANDLES_STABLE {}", (0..20).all(|_| i.enumerate() == i.devices))
            }),
        ];
        threads.into_iter().map(|t| t.join().expect("a thread panicked")).collect()
    });
    for line in lines {
        println!("{line}");
    }
    println!("DEVICES_AFTER {}", instance.devices.iter().map(|&d| instance.identity(d)).collect::<Vec<_>>().join(" | "));
}

/// Touches `path` a minute into the past: the cache trusts no file modified in the last two
/// seconds.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
}

/// Two test drivers, `a` with two identical discrete GPUs and `b` with an integrated one, our
/// library copied beside them, a cache directory and an empty sysfs: the environment.
fn lazy_setup(name: &str) -> (PathBuf, Vec<(&'static str, String)>) {
    let dir = common::scratch(name);
    let drivers = [common::tagged_driver(&dir, "a"), common::tagged_driver(&dir, "b")];
    let manifests = [common::driver_manifest(&dir, "a.json", &drivers[0]), common::driver_manifest(&dir, "b.json", &drivers[1])];
    let libvulkan = dir.join("libvulkan.so.1");
    std::fs::copy(common::libvulkan(), &libvulkan).unwrap();
    for path in drivers.iter().chain(&manifests).chain([&libvulkan]) {
        age(path);
    }
    let sysfs = dir.join("sysfs");
    std::fs::create_dir_all(sysfs.join("proc/bus/pci")).unwrap();
    let env = vec![
        ("VK_DRIVER_FILES", format!("{}:{}", manifests[0].display(), manifests[1].display())),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete:10de:2330,discrete:10de:2330".into()),
        ("VK_TEST_DRIVER_DEVICES_B", "integrated:8086:46a6".into()),
        ("VK_TEST_DRIVER_DEVICE_EXTENSIONS", "VK_KHR_swapchain,VK_EXT_pci_bus_info".into()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("VK_LOADER_TEST_SYSFS_ROOT", sysfs.display().to_string()),
        ("VK_LOADER_DEBUG", "driver,warn".into()),
        ("LIBVULKAN", libvulkan.display().to_string()),
    ];
    (dir, env)
}

/// Records the drivers and their devices (two `record` runs), then runs the `threads` step, every
/// run through `runner` (the environment, valgrind's included, is in the cache's key); checks
/// that both drivers were lazy, went live once each, and that every thread got its answers.
fn lazy_drivers_going_live_from_threads(runner: &str, name: &str) {
    let (dir, env) = lazy_setup(name);
    let run = |step: &str| {
        std::fs::write(dir.join("step"), step).unwrap();
        let run = common::run_scenario_under(runner, "scenario_entry", "lazy-threads", &env);
        assert!(run.status.success(), "{step}: {:?}\n{}\n{}", run.status, run.stdout, run.stderr);
        run
    };
    let recorded = run("record");
    run("record");
    let run = run("threads");
    let (out, err) = (&run.stdout, &run.stderr);
    let line = |prefix: &str| out.lines().find_map(|l| l.strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix:?} line:\n{out}\n{err}"));
    for (driver, count) in [("a.json", 2), ("b.json", 1)] {
        let lazy = format!("{driver}: not loaded: its {count} physical devices answered from the driver cache until first needed");
        assert!(err.contains(&lazy), "{driver} was not lazy:\n{err}");
        let loaded = format!("{driver}: loaded at ");
        assert_eq!(err.matches(&loaded).count(), 1, "{driver} went live once:\n{err}");
    }
    let devices = line("DEVICES ");
    assert_eq!(devices, recorded.stdout.lines().find_map(|l| l.strip_prefix("DEVICES ")).unwrap(), "{err}");
    assert_eq!(devices.matches("bus=").count(), 3, "{out}");
    assert_eq!(line("DEVICES_AFTER "), devices, "the live drivers' answers are the recorded ones\n{err}");
    assert_eq!(line("CREATE_DEVICE first "), "VK_SUCCESS", "{err}");
    assert_eq!(line("CREATE_DEVICE last "), "VK_SUCCESS", "{err}");
    // The test driver's own answer: the query reached the live driver on every device.
    assert_eq!(line("IMAGE_FORMAT "), "[VK_ERROR_FORMAT_NOT_SUPPORTED, VK_ERROR_FORMAT_NOT_SUPPORTED, VK_ERROR_FORMAT_NOT_SUPPORTED]", "{err}");
    // The API version the application asked for (1.3), as each driver's instance was created with.
    let version = vk_generated::make_api_version(0, 1, 3, 0);
    assert_eq!(line("UNKNOWN_COMMAND "), format!("[{version}, {version}, {version}]"), "{err}");
    assert_eq!(line("IDENTITIES_STABLE "), "true", "{err}");
    assert_eq!(line("HANDLES_STABLE "), "true", "{err}");
}

#[test]
fn lazy_drivers_going_live_from_threads_at_once() {
    lazy_drivers_going_live_from_threads("", "lazy-threads");
}

#[test]
fn lazy_drivers_going_live_from_threads_under_memcheck() {
    assert_valgrind_installed();
    lazy_drivers_going_live_from_threads(MEMCHECK, "lazy-threads-memcheck");
}
