//! Broken drivers: one of two drivers misbehaves (the test driver's `VK_TEST_DRIVER_FAULTS`) and
//! the other keeps working. A driver that returns no instance or device despite `VK_SUCCESS`,
//! counts more physical devices than it writes, answers `VK_INCOMPLETE` forever or fails device
//! creation is skipped or refused with a log line naming it; nothing crashes, hangs or leaks
//! (each case also runs under valgrind's memcheck).

mod common;

use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child: creates an instance, lists the physical devices, creates and destroys a device on
/// each (printing each result), destroys the instance.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("faults") {
        return;
    }
    println!();
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(get(instance, c"vkDestroyDevice"));
        for physical in common::physical_devices(&get, instance) {
            let mut props = VkPhysicalDeviceProperties::default();
            properties.unwrap()(physical, &mut props);
            let name = CStr::from_ptr(props.deviceName.as_ptr()).to_string_lossy().into_owned();
            let priority = 1.0f32;
            let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
            let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
            let mut device = VkDevice::NULL;
            let result = create_device.unwrap()(physical, &info, std::ptr::null(), &mut device);
            println!("DEVICE {name}: {result:?}");
            if result == VkResult::SUCCESS {
                destroy_device.unwrap()(device, std::ptr::null());
            }
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
        println!("DESTROYED");
    }
}

/// Driver A (a discrete device) with `fault`, driver B (an integrated one) healthy.
fn environment(dir: &Path, fault: &str) -> Vec<(&'static str, String)> {
    let a = common::driver_manifest(dir, "a.json", &common::tagged_driver(dir, "a"));
    let b = common::driver_manifest(dir, "b.json", &common::tagged_driver(dir, "b"));
    let path = |p: &PathBuf| p.display().to_string();
    vec![
        ("VK_DRIVER_FILES", format!("{}:{}", path(&a), path(&b))),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete".into()),
        ("VK_TEST_DRIVER_DEVICES_B", "integrated".into()),
        ("VK_TEST_DRIVER_FAULTS_A", fault.into()),
        ("VK_LOADER_DEBUG", "warn".into()),
    ]
}

const MEMCHECK: &str = "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite";

/// Runs the scenario with driver A's `fault`, plainly and under memcheck; returns the plain run's
/// (stdout, stderr) after checking that both runs got through and memcheck found nothing.
fn run(fault: &str) -> (String, String) {
    let dir = common::scratch(&format!("fault-{fault}"));
    let env = environment(&dir, fault);
    let plain = common::run_scenario("scenario_entry", "faults", &env);
    assert!(plain.status.success() && plain.stdout.contains("DESTROYED"), "{fault}:\n{}{}", plain.stdout, plain.stderr);
    let checked = common::run_scenario_under(MEMCHECK, "scenario_entry", "faults", &env);
    assert!(checked.status.success() && !checked.stderr.contains("=="), "{fault}, memcheck:\n{}{}", checked.stdout, checked.stderr);
    (plain.stdout, plain.stderr)
}

fn devices(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("DEVICE ")).collect()
}

#[test]
fn driver_returning_no_instance_is_skipped() {
    let (out, err) = run("null_instance");
    assert_eq!(devices(&out), ["DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("a.json") && err.contains("returned no instance"), "{err}");
}

#[test]
fn driver_counting_more_devices_than_it_writes() {
    let (out, err) = run("inflated_device_count");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_SUCCESS", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("a.json") && err.contains("NULL"), "{err}");
}

#[test]
fn driver_answering_incomplete_forever() {
    let (out, err) = run("endless_incomplete");
    assert_eq!(devices(&out), ["DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("a.json") && err.contains("INCOMPLETE"), "{err}");
}

#[test]
fn driver_failing_device_creation() {
    let (out, err) = run("fail_create_device");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_ERROR_DEVICE_LOST", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
}

#[test]
fn driver_returning_no_device() {
    let (out, err) = run("null_device");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_ERROR_INITIALIZATION_FAILED", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("returned no device"), "{err}");
}
