//! Commands the registry does not know: the test driver's 300 synthetic physical-device commands
//! and 300 synthetic device commands, fetched through `vkGetInstanceProcAddr` (the loader's
//! assembly trampolines) and `vkGetDeviceProcAddr`, called on every device of two tagged drivers.
//! Device commands fetched before any device exists must work on devices created later.

mod common;

use std::ffi::{c_char, c_void, CString};

use vk_generated::types::*;
use vk_test_driver::synthetic::{self, answer, COUNT, DEVICE_PREFIX, PHYSICAL_DEVICE_PREFIX};

type Synthetic = unsafe extern "system" fn(*mut c_void, u64, u64, u64, u64, u64, u64, u64) -> u64;

/// Calls synthetic command `index` through `f` on `handle` and checks the driver's answer.
///
/// # Safety
/// `f` is NULL or the loader's answer for the test driver's synthetic command `index` (of type
/// `Synthetic`), and `handle` a live physical device or device (as the command's level asks).
unsafe fn call(f: PFN_vkVoidFunction, index: usize, handle: *mut c_void, device_id: u32, salt: u64) -> bool {
    let Some(f) = f else { return false };
    let args = [index as u64, salt, 3, u64::MAX - salt, 5, 0x5555_0000 + index as u64, 0xdead_beef_0000 + salt];
    // SAFETY: the contract: a synthetic command has the type `Synthetic`, and its handle is live.
    let got = unsafe { std::mem::transmute::<unsafe extern "system" fn(), Synthetic>(f)(handle, args[0], args[1], args[2], args[3], args[4], args[5], args[6]) };
    got == answer(index, device_id, args)
}

struct Loader {
    _lib: libloading::Library,
    gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction,
}

impl Loader {
    fn open() -> Loader {
        // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
        let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
        // SAFETY: the symbol is vkGetInstanceProcAddr, of the type of the `gipa` field; `_lib`
        // keeps it loaded as long as the `Loader`.
        let gipa = unsafe { *lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
        Loader { _lib: lib, gipa }
    }

    /// vkGetInstanceProcAddr(`instance`, `name`).
    ///
    /// # Safety
    /// `instance` is NULL or a live instance of this loader.
    unsafe fn get(&self, instance: VkInstance, name: &str) -> PFN_vkVoidFunction {
        let name = CString::new(name).unwrap();
        // SAFETY: the contract, and a C string.
        unsafe { (self.gipa)(instance, name.as_ptr()) }
    }

    /// The command `name` as `T`; NULL is a test failure.
    ///
    /// # Safety
    /// As for [`Loader::get`], and `T` is the type of the command `name`.
    unsafe fn get_as<T>(&self, instance: VkInstance, name: &str) -> T {
        assert_eq!(size_of::<T>(), size_of::<PFN_vkVoidFunction>());
        // SAFETY: the contract.
        let f = unsafe { self.get(instance, name) }.unwrap_or_else(|| panic!("{name} missing"));
        // SAFETY: the loader answered for `name`, so `f` is a function of the type `T` is (the
        // contract), and it has the size of one (asserted).
        unsafe { std::mem::transmute_copy(&f) }
    }
}

/// A new instance with no layer or extension.
fn create_instance(loader: &Loader) -> VkInstance {
    // SAFETY: vkCreateInstance asked of the loader (NULL instance) with its own type; the create
    // info and `instance` are locals.
    unsafe {
        let create: unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult =
            loader.get_as(VkInstance::NULL, "vkCreateInstance");
        let mut instance = VkInstance::NULL;
        assert_eq!(create(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance), VkResult::SUCCESS);
        instance
    }
}

/// The physical devices with their `deviceID`s.
///
/// # Safety
/// `instance` is a live instance of `loader`.
unsafe fn physical_devices(loader: &Loader, instance: VkInstance) -> Vec<(VkPhysicalDevice, u32)> {
    // SAFETY: each command comes from `get_as` with its own type, or is a synthetic one passed to
    // `call` with a handle of its level; the instance and devices are used between their creation and
    // their destruction; the other pointers point to locals that outlive each call, each array as
    // long as the count passed with it.
    unsafe {
        let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult =
            loader.get_as(instance, "vkEnumeratePhysicalDevices");
        let properties: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties) =
            loader.get_as(instance, "vkGetPhysicalDeviceProperties");
        let mut count = 0;
        enumerate(instance, &mut count, std::ptr::null_mut());
        let mut handles = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate(instance, &mut count, handles.as_mut_ptr());
        handles
            .into_iter()
            .map(|pd| {
                let mut p = VkPhysicalDeviceProperties::default();
                properties(pd, &mut p);
                (pd, p.deviceID)
            })
            .collect()
    }
}

/// A device with one queue on `pd`.
///
/// # Safety
/// `instance` is a live instance of `loader`, and `pd` one of its physical devices.
unsafe fn create_device(loader: &Loader, instance: VkInstance, pd: VkPhysicalDevice) -> VkDevice {
    // SAFETY: each command comes from `get_as` with its own type, or is a synthetic one passed to
    // `call` with a handle of its level; the instance and devices are used between their creation and
    // their destruction; the other pointers point to locals that outlive each call, each array as
    // long as the count passed with it.
    unsafe {
        let create: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult =
            loader.get_as(instance, "vkCreateDevice");
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        assert_eq!(create(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        device
    }
}

/// Counts calls whose answer was right and wrong, and prints them for the parent.
#[derive(Default)]
struct Tally {
    right: usize,
    wrong: Vec<String>,
}

impl Tally {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if ok {
            self.right += 1;
        } else {
            self.wrong.push(what());
        }
    }

    fn print(&self, label: &str) {
        println!("{label} RIGHT {} WRONG {}", self.right, self.wrong.len());
        for w in self.wrong.iter().take(10) {
            println!("  wrong: {w}");
        }
    }
}

/// The child side, by `SCENARIO`.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    let loader = Loader::open();
    // SAFETY: the instance and devices are the loader's, used before they are destroyed; each
    // synthetic command goes to `call` with a handle of its level, but in the death scenarios
    // (after READY), which break that on purpose: the loader must stop the process before the
    // call reaches anything.
    unsafe {
        let instance = create_instance(&loader);
        let pds = physical_devices(&loader, instance);
        println!("PHYSICAL DEVICES {}", pds.len());
        match scenario.as_str() {
            "all" => all_commands(&loader, instance, &pds),
            "missing-physical-device-command" => {
                let f = loader.get(instance, &synthetic::name(PHYSICAL_DEVICE_PREFIX, 200));
                let (pd, id) = pds[pds.len() - 1];
                println!("READY");
                call(f, 200, pd.0, id, 0);
            }
            "missing-device-command" => {
                let f = loader.get(instance, &synthetic::name(DEVICE_PREFIX, 200));
                let (pd, id) = pds[pds.len() - 1];
                let device = create_device(&loader, instance, pd);
                println!("READY");
                call(f, 200, device.0, id, 0);
            }
            "unknown-command-on-an-instance" | "unknown-command-on-null" => {
                let f = loader.get(instance, &synthetic::name(PHYSICAL_DEVICE_PREFIX, 5));
                let handle = if scenario.ends_with("null") { std::ptr::null_mut() } else { instance.0 };
                println!("READY");
                call(f, 5, handle, 0, 0);
            }
            "two-instances-many-threads" => two_instances_many_threads(&loader, instance, &pds),
            other => panic!("unknown scenario {other}"),
        }
        println!("SURVIVED");
    }
}

/// Every synthetic command through both GetProcAddr functions on every device; prints the
/// tallies, destroys the devices and the instance.
///
/// # Safety
/// `instance` is a live instance of `loader`, not used after this, and `pds` its physical devices with
/// their `deviceID`s.
unsafe fn all_commands(loader: &Loader, instance: VkInstance, pds: &[(VkPhysicalDevice, u32)]) {
    // SAFETY: each command comes from `get_as` with its own type, or is a synthetic one passed to
    // `call` with a handle of its level; the instance and devices are used between their creation and
    // their destruction; the other pointers point to locals that outlive each call, each array as
    // long as the count passed with it.
    unsafe {
        // Physical-device commands on every physical device of both drivers.
        let mut tally = Tally::default();
        for i in 0..COUNT {
            let name = synthetic::name(PHYSICAL_DEVICE_PREFIX, i);
            let f = loader.get(instance, &name);
            for (salt, &(pd, id)) in pds.iter().enumerate() {
                tally.check(call(f, i, pd.0, id, salt as u64), || format!("{name} on device {id:#x}"));
            }
        }
        tally.print("PHYSICAL-DEVICE");

        // Device commands: half fetched before any device exists, half after.
        let early: Vec<PFN_vkVoidFunction> = (0..COUNT / 2).map(|i| loader.get(instance, &synthetic::name(DEVICE_PREFIX, i))).collect();
        let mut devices: Vec<(VkDevice, u32)> = pds.iter().map(|&(pd, id)| (create_device(loader, instance, pd), id)).collect();
        let late: Vec<PFN_vkVoidFunction> = (COUNT / 2..COUNT).map(|i| loader.get(instance, &synthetic::name(DEVICE_PREFIX, i))).collect();
        // And one device created after all of them were fetched.
        devices.push((create_device(loader, instance, pds[0].0), pds[0].1));
        let from_instance: Vec<PFN_vkVoidFunction> = early.into_iter().chain(late).collect();
        let gdpa: unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction = loader.get_as(instance, "vkGetDeviceProcAddr");
        let mut tally = Tally::default();
        let mut direct = Tally::default();
        for (i, &f) in from_instance.iter().enumerate() {
            let name = synthetic::name(DEVICE_PREFIX, i);
            let c_name = CString::new(name.clone()).unwrap();
            for (salt, &(device, id)) in devices.iter().enumerate() {
                tally.check(call(f, i, device.0, id, salt as u64), || format!("{name} (vkGetInstanceProcAddr) on device {id:#x}"));
                let g = gdpa(device, c_name.as_ptr());
                direct.check(call(g, i, device.0, id, salt as u64), || format!("{name} (vkGetDeviceProcAddr) on device {id:#x}"));
            }
        }
        tally.print("DEVICE-FROM-INSTANCE");
        direct.print("DEVICE-FROM-DEVICE");

        // Names nobody knows stay NULL; device commands are not physical-device ones and back.
        let mut nulls = Tally::default();
        let (device, _) = devices[0];
        for name in ["vkTestDeviceCommand999TEST", "vkNoSuchCommandAnywhereTEST", "vkTestPhysicalDeviceCommand300TEST"] {
            nulls.check(loader.get(instance, name).is_none(), || format!("vkGetInstanceProcAddr({name})"));
            let c_name = CString::new(name).unwrap();
            nulls.check(gdpa(device, c_name.as_ptr()).is_none(), || format!("vkGetDeviceProcAddr({name})"));
        }
        let pd_name = CString::new(synthetic::name(PHYSICAL_DEVICE_PREFIX, 0)).unwrap();
        nulls.check(gdpa(device, pd_name.as_ptr()).is_none(), || "vkGetDeviceProcAddr(physical-device command)".into());
        nulls.print("NULL");

        let destroy_device: unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks) = loader.get_as(instance, "vkDestroyDevice");
        for (device, _) in devices {
            destroy_device(device, std::ptr::null());
        }
        let destroy: unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks) = loader.get_as(instance, "vkDestroyInstance");
        destroy(instance, std::ptr::null());
    }
}

/// A second instance beside the first, and threads that name new commands while others call
/// through slots already given out: every call still reaches the right command on the right device.
///
/// # Safety
/// `instance` is a live instance of `loader`, `first_pds` its physical devices with their
/// `deviceID`s.
unsafe fn two_instances_many_threads(loader: &Loader, first: VkInstance, first_pds: &[(VkPhysicalDevice, u32)]) {
    // SAFETY: each command comes from `get_as` with its own type, or is a synthetic one passed to
    // `call` with a handle of its level; the instance and devices are used between their creation and
    // their destruction; the other pointers point to locals that outlive each call, each array as
    // long as the count passed with it.
    // The threads share the instances and devices, which none destroys, and call commands that
    // need no external synchronisation.
    unsafe {
        let second = create_instance(loader);
        let second_pds = physical_devices(loader, second);
        let instances = [(first, first_pds.to_vec()), (second, second_pds)];
        let devices: Vec<Vec<(VkDevice, u32)>> = instances
            .iter()
            .map(|(instance, pds)| pds.iter().map(|&(pd, id)| (create_device(loader, *instance, pd), id)).collect())
            .collect();
        let tally = std::sync::Mutex::new(Tally::default());
        std::thread::scope(|scope| {
            for thread in 0..8usize {
                let (instances, devices, tally) = (&instances, &devices, &tally);
                scope.spawn(move || {
                    let mut mine = Tally::default();
                    // Each thread takes every eighth command, from one instance or the other.
                    for i in (thread..COUNT).step_by(8) {
                        let which = (i / 8) % 2;
                        let (instance, pds) = &instances[which];
                        let f = loader.get(*instance, &synthetic::name(PHYSICAL_DEVICE_PREFIX, i));
                        for &(pd, id) in pds {
                            mine.check(call(f, i, pd.0, id, thread as u64), || format!("physical-device command {i} on {id:#x}"));
                        }
                        let g = loader.get(*instance, &synthetic::name(DEVICE_PREFIX, i));
                        for &(device, id) in &devices[which] {
                            mine.check(call(g, i, device.0, id, thread as u64), || format!("device command {i} on {id:#x}"));
                        }
                    }
                    let mut tally = tally.lock().unwrap();
                    tally.right += mine.right;
                    tally.wrong.extend(mine.wrong);
                });
            }
        });
        tally.into_inner().unwrap().print("THREADS");
        // Device commands named by the threads work on the second instance's devices too.
        let f = loader.get(first, &synthetic::name(DEVICE_PREFIX, 7));
        let mut later = Tally::default();
        for &(device, id) in &devices[1] {
            later.check(call(f, 7, device.0, id, 99), || format!("device command 7 on {id:#x}"));
        }
        later.print("OTHER-INSTANCE");
    }
}

/// Two tagged test drivers: A with a discrete and an integrated device, B with a cpu and a
/// virtual one, each with its own `deviceID`; `extra` adds variables.
fn two_drivers(name: &str, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let dir = common::scratch(name);
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    let mut env = vec![
        ("VK_DRIVER_FILES", format!("{}:{}", a.display(), b.display())),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete:10de:a1,integrated:10de:a2".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "cpu:1002:b1,virtual:1002:b2".to_string()),
    ];
    env.extend(extra.iter().map(|&(k, v)| (k, v.to_string())));
    env
}

fn line_with<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    // The first line printed shares its line with libtest's "test scenario_entry ... ".
    stdout.lines().find_map(|l| l.find(prefix).map(|at| &l[at..])).unwrap_or_else(|| panic!("no {prefix} line in:\n{stdout}"))
}

fn assert_all_calls_right(name: &str, extra: &[(&'static str, &str)]) {
    let run = common::run_scenario("scenario_entry", "all", &two_drivers(name, extra));
    assert!(run.status.success() && run.stdout.contains("SURVIVED"), "{}\n{}", run.stdout, run.stderr);
    assert_eq!(line_with(&run.stdout, "PHYSICAL DEVICES"), "PHYSICAL DEVICES 4");
    // 300 commands x 4 physical devices; 300 x 5 devices, through each GetProcAddr.
    assert_eq!(line_with(&run.stdout, "PHYSICAL-DEVICE "), format!("PHYSICAL-DEVICE RIGHT {} WRONG 0", COUNT * 4), "{}", run.stdout);
    assert_eq!(line_with(&run.stdout, "DEVICE-FROM-INSTANCE"), format!("DEVICE-FROM-INSTANCE RIGHT {} WRONG 0", COUNT * 5), "{}", run.stdout);
    assert_eq!(line_with(&run.stdout, "DEVICE-FROM-DEVICE"), format!("DEVICE-FROM-DEVICE RIGHT {} WRONG 0", COUNT * 5), "{}", run.stdout);
    assert_eq!(line_with(&run.stdout, "NULL"), "NULL RIGHT 7 WRONG 0", "{}", run.stdout);
}

#[test]
fn three_hundred_commands_of_each_level_reach_every_device_of_two_drivers() {
    assert_all_calls_right("unknown-all", &[]);
}

/// A driver at interface 3 has no `vk_icdGetPhysicalDeviceProcAddr`: the loader learns the
/// command is a physical-device one from the other driver, and fills this driver's slot from its
/// `vk_icdGetInstanceProcAddr`.
#[test]
fn an_interface_3_driver_gets_physical_device_commands_through_its_get_instance_proc_addr() {
    assert_all_calls_right("unknown-interface3", &[("VK_TEST_DRIVER_INTERFACE_VERSION_A", "3")]);
}

/// Runs a death scenario with driver B providing only the first ten synthetic commands.
fn dies_with(scenario: &str, message: &str) {
    let run = common::run_scenario("scenario_entry", scenario, &two_drivers(scenario, &[("VK_TEST_DRIVER_SYNTHETIC_COMMANDS_B", "10")]));
    common::assert_aborted_with(&run, message);
}

/// Command 200 called on a device of driver B, which lacks it, stops with the command's name.
#[test]
fn a_physical_device_command_its_driver_lacks_stops_with_its_name() {
    dies_with("missing-physical-device-command", "Function vkTestPhysicalDeviceCommand200TEST not supported for this physical device");
}

#[test]
fn a_device_command_its_driver_lacks_stops_with_its_name() {
    dies_with("missing-device-command", "Function vkTestDeviceCommand200TEST not supported for this device");
}

#[test]
fn two_instances_and_eight_threads_naming_and_calling_at_once() {
    let run = common::run_scenario("scenario_entry", "two-instances-many-threads", &two_drivers("unknown-threads", &[]));
    assert!(run.status.success() && run.stdout.contains("SURVIVED"), "{}\n{}", run.stdout, run.stderr);
    // Every command once, on the 4 physical devices and the 4 devices of one instance.
    assert_eq!(line_with(&run.stdout, "THREADS"), format!("THREADS RIGHT {} WRONG 0", COUNT * 8), "{}", run.stdout);
    assert_eq!(line_with(&run.stdout, "OTHER-INSTANCE"), "OTHER-INSTANCE RIGHT 4 WRONG 0", "{}", run.stdout);
}

#[test]
fn an_unknown_physical_device_command_checks_its_handle() {
    let message = "vkTestPhysicalDeviceCommand005TEST: Invalid physicalDevice [VUID-vkTestPhysicalDeviceCommand005TEST-physicalDevice-parameter]";
    dies_with("unknown-command-on-an-instance", message);
    dies_with("unknown-command-on-null", message);
}
