//! Broken drivers: one of two drivers misbehaves (the test driver's `VK_TEST_DRIVER_FAULTS`) and
//! the other keeps working. A driver that returns no instance or device despite `VK_SUCCESS`,
//! counts more physical devices than it writes, answers `VK_INCOMPLETE` forever or fails device
//! creation is skipped or refused with a log line naming it; nothing crashes, hangs or leaks
//! (each case also runs under valgrind's memcheck). A driver whose manifest and library are
//! deleted while an instance uses it leaves that instance working and the next one without it.

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
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance and devices are the loader's, used before they are destroyed; the other
    // pointers are locals that outlive each call.
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
            let name = common::fixed_str(&props.deviceName);
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
        // DELETE_FILES: a driver's manifest and library disappear while the instance lives; a
        // second instance is created without them, and the first one still works.
        if let Ok(files) = std::env::var("DELETE_FILES") {
            for file in files.split(':') {
                std::fs::remove_file(file).unwrap();
            }
            let mut second = VkInstance::NULL;
            println!("SECOND {:?}", create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut second));
            println!("SECOND_DEVICES {}", common::physical_devices(&get, second).len());
            println!("FIRST_DEVICES {}", common::physical_devices(&get, instance).len());
            let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(second, c"vkDestroyInstance"));
            destroy.unwrap()(second, std::ptr::null());
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
        ("VK_LOADER_DEBUG", "error,warn".into()),
    ]
}

/// Memcheck, with the test driver's own statics (lost when it is unloaded) suppressed.
const MEMCHECK: &str = concat!(
    "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --keep-debuginfo=yes --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/unloaded-test-driver.supp"
);

/// Runs the scenario with driver A's `fault`, plainly and under memcheck, each in a fresh
/// directory (`delete` names the files of it that the scenario deletes, or none); returns the
/// plain run's (stdout, stderr) after checking that both runs got through and memcheck found
/// nothing.
fn run(fault: &str, delete: impl Fn(&Path) -> String) -> (String, String) {
    let mut plain = None;
    for (runner, suffix) in [("", ""), (MEMCHECK, "-memcheck")] {
        let dir = common::scratch(&format!("fault-{fault}{suffix}"));
        let mut env = environment(&dir, fault);
        let deleted = delete(&dir);
        if !deleted.is_empty() {
            env.push(("DELETE_FILES", deleted));
        }
        let run = match runner {
            "" => common::run_scenario("scenario_entry", "faults", &env),
            _ => common::run_scenario_under(runner, "scenario_entry", "faults", &env),
        };
        assert!(run.status.success() && run.stdout.contains("DESTROYED"), "{fault}{suffix}:\n{}{}", run.stdout, run.stderr);
        assert!(!run.stderr.contains("=="), "{fault}, memcheck:\n{}{}", run.stdout, run.stderr);
        plain.get_or_insert((run.stdout, run.stderr));
    }
    plain.unwrap()
}

/// [`run`] deleting nothing.
fn run_fault(fault: &str) -> (String, String) {
    run(fault, |_| String::new())
}

fn devices(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("DEVICE ")).collect()
}

#[test]
fn driver_returning_no_instance_is_skipped() {
    let (out, err) = run_fault("null_instance");
    assert_eq!(devices(&out), ["DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("a.json") && err.contains("returned no instance"), "{err}");
}

#[test]
fn driver_counting_more_devices_than_it_writes() {
    let (out, err) = run_fault("inflated_device_count");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_SUCCESS", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("a.json") && err.contains("NULL"), "{err}");
}

#[test]
fn driver_answering_incomplete_forever() {
    let (out, err) = run_fault("endless_incomplete");
    assert_eq!(devices(&out), ["DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    // The Khronos loader's words: "Call to 'vkEnumeratePhysicalDevices' in ICD <library> failed
    // with error code 5" (VK_INCOMPLETE).
    assert!(err.contains("libvk_test_driver_a.so failed with error code 5"), "{err}");
}

#[test]
fn driver_failing_device_creation() {
    let (out, err) = run_fault("fail_create_device");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_ERROR_DEVICE_LOST", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
}

#[test]
fn driver_returning_no_device() {
    let (out, err) = run_fault("null_device");
    assert_eq!(devices(&out), ["DEVICE Test Driver discrete 0: VK_ERROR_INITIALIZATION_FAILED", "DEVICE Test Driver integrated 0: VK_SUCCESS"], "{out}{err}");
    assert!(err.contains("returned no device"), "{err}");
}

#[test]
fn driver_files_deleted_while_an_instance_lives() {
    let (out, err) = run("none", |dir| {
        let files = [dir.join("a.json"), dir.join("libvk_test_driver_a.so")];
        files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(":")
    });
    assert!(out.contains("SECOND VK_SUCCESS") && out.contains("SECOND_DEVICES 1") && out.contains("FIRST_DEVICES 2"), "{out}{err}");
}
