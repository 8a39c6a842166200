//! Handle validation: an invalid `VkInstance` or `VkPhysicalDevice` given to a loader entry point
//! stops the process with the command and the valid-usage ID on stderr (a death test: each case
//! runs in a child process that must die of `abort`).

mod common;

use std::ffi::{c_char, c_void, CStr};

use vk_generated::types::*;

/// The child side: makes one bad call, chosen by `SCENARIO`, through our libvulkan.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: an exported command, read as a function that nothing calls with this type: each use
    // transmutes it to the command's own type first; `lib` stays loaded to the end.
    let symbol = |name: &CStr| unsafe {
        let f: libloading::Symbol<unsafe extern "system" fn()> = lib.get(name.to_bytes_with_nul()).unwrap();
        *f
    };
    // SAFETY: each export is transmuted to the type of the command it is named after. The bad
    // handles break Vulkan's valid usage on purpose: the loader must stop this child process at the
    // call, before anything reads through them (`zeros` is readable besides); the other pointers
    // are locals that outlive each call.
    unsafe {
        let create: unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult =
            std::mem::transmute(symbol(c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(create(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult =
            std::mem::transmute(symbol(c"vkEnumeratePhysicalDevices"));
        let mut count = 1;
        let mut physical_device = VkPhysicalDevice::NULL;
        enumerate(instance, &mut count, &mut physical_device);
        assert_eq!(count, 1);
        // Readable, aligned memory that is no loader object.
        let zeros = Box::into_raw(Box::new([0u64; 64])) as *mut c_void;
        println!("READY");
        match scenario.as_str() {
            "garbage-instance" => {
                enumerate(VkInstance(zeros), &mut count, std::ptr::null_mut());
            }
            "null-physical-device" => {
                let f: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties) =
                    std::mem::transmute(symbol(c"vkGetPhysicalDeviceProperties"));
                f(VkPhysicalDevice::NULL, &mut VkPhysicalDeviceProperties::default());
            }
            "garbage-physical-device-through-an-alias" => {
                let gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction =
                    std::mem::transmute(symbol(c"vkGetInstanceProcAddr"));
                let f: PFN_vkGetPhysicalDeviceToolProperties = std::mem::transmute(gipa(instance, c"vkGetPhysicalDeviceToolPropertiesEXT".as_ptr()));
                f.unwrap()(VkPhysicalDevice(zeros), &mut count, std::ptr::null_mut());
            }
            "misaligned-instance" => {
                let f: unsafe extern "system" fn(VkInstance, VkSurfaceKHR, *const VkAllocationCallbacks) =
                    std::mem::transmute(symbol(c"vkDestroySurfaceKHR"));
                f(VkInstance((zeros as usize + 3) as *mut c_void), VkSurfaceKHR::NULL, std::ptr::null());
            }
            "instance-as-physical-device" => {
                let f: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceFeatures) =
                    std::mem::transmute(symbol(c"vkGetPhysicalDeviceFeatures"));
                f(VkPhysicalDevice(instance.0), &mut VkPhysicalDeviceFeatures::default());
            }
            "physical-device-as-instance-to-gipa" => {
                let gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction =
                    std::mem::transmute(symbol(c"vkGetInstanceProcAddr"));
                gipa(VkInstance(physical_device.0), c"vkCreateDevice".as_ptr());
            }
            "garbage-physical-device-to-create-device" => {
                let f: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult =
                    std::mem::transmute(symbol(c"vkCreateDevice"));
                let mut device = VkDevice::NULL;
                f(VkPhysicalDevice(zeros), &VkDeviceCreateInfo::default(), std::ptr::null(), &mut device);
            }
            "device-command-not-enabled" => {
                // vkGetDeviceFaultInfoEXT from vkGetInstanceProcAddr (a trampoline) on a device
                // created without VK_EXT_device_fault, of a driver that does not have it.
                let gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction =
                    std::mem::transmute(symbol(c"vkGetInstanceProcAddr"));
                let create_device: PFN_vkCreateDevice = std::mem::transmute(gipa(instance, c"vkCreateDevice".as_ptr()));
                let priority = 1.0f32;
                let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
                let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
                let mut device = VkDevice::NULL;
                assert_eq!(create_device.unwrap()(physical_device, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
                let fault_info: PFN_vkGetDeviceFaultInfoEXT = std::mem::transmute(gipa(instance, c"vkGetDeviceFaultInfoEXT".as_ptr()));
                let mut counts = VkDeviceFaultCountsEXT::default();
                fault_info.unwrap()(device, &mut counts, std::ptr::null_mut());
            }
            "valid" => {
                let f: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties) =
                    std::mem::transmute(symbol(c"vkGetPhysicalDeviceProperties"));
                let mut props = VkPhysicalDeviceProperties::default();
                f(physical_device, &mut props);
                println!("DEVICE {}", common::fixed_str(&props.deviceName));
                let destroy: unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks) =
                    std::mem::transmute(symbol(c"vkDestroyInstance"));
                destroy(instance, std::ptr::null());
            }
            other => panic!("unknown scenario {other}"),
        }
        println!("SURVIVED");
    }
}

fn env(scenario: &str) -> Vec<(&'static str, String)> {
    let dir = common::scratch(&format!("handles-{scenario}"));
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    vec![("VK_DRIVER_FILES", manifest.display().to_string())]
}

/// Runs `scenario` and checks that it aborted after printing `message`.
fn dies_with(scenario: &str, message: &str) {
    common::assert_aborted_with(&common::run_scenario("scenario_entry", scenario, &env(scenario)), message);
}

/// A device command through a trampoline, on a device that lacks it (its extension not enabled,
/// the driver without it): stopped with its name, where calling the driver's NULL pointer would
/// crash without a word.
#[test]
fn device_command_the_device_lacks() {
    dies_with(
        "device-command-not-enabled",
        "vkGetDeviceFaultInfoEXT: the device has no such function (was its extension or Vulkan version enabled on the device?); stopping",
    );
}

#[test]
fn garbage_instance_to_a_hand_written_entry_point() {
    dies_with("garbage-instance", "vkEnumeratePhysicalDevices: Invalid instance [VUID-vkEnumeratePhysicalDevices-instance-parameter]");
}

#[test]
fn null_physical_device_to_a_generated_trampoline() {
    dies_with(
        "null-physical-device",
        "vkGetPhysicalDeviceProperties: Invalid physicalDevice [VUID-vkGetPhysicalDeviceProperties-physicalDevice-parameter]",
    );
}

/// A command called by another name shares its trampoline, which cannot tell the names apart:
/// the message names each, so the valid-usage ID of the name called is there.
#[test]
fn garbage_physical_device_through_an_alias() {
    dies_with(
        "garbage-physical-device-through-an-alias",
        "vkGetPhysicalDeviceToolPropertiesEXT: Invalid physicalDevice [VUID-vkGetPhysicalDeviceToolPropertiesEXT-physicalDevice-parameter]",
    );
    dies_with(
        "garbage-physical-device-through-an-alias",
        "vkGetPhysicalDeviceToolProperties: Invalid physicalDevice [VUID-vkGetPhysicalDeviceToolProperties-physicalDevice-parameter]",
    );
}

#[test]
fn misaligned_instance_is_not_dereferenced() {
    dies_with("misaligned-instance", "vkDestroySurfaceKHR: Invalid instance [VUID-vkDestroySurfaceKHR-instance-parameter]");
}

#[test]
fn an_instance_is_not_a_physical_device() {
    dies_with(
        "instance-as-physical-device",
        "vkGetPhysicalDeviceFeatures: Invalid physicalDevice [VUID-vkGetPhysicalDeviceFeatures-physicalDevice-parameter]",
    );
}

#[test]
fn a_physical_device_is_not_an_instance() {
    dies_with("physical-device-as-instance-to-gipa", "vkGetInstanceProcAddr: Invalid instance [VUID-vkGetInstanceProcAddr-instance-parameter]");
}

#[test]
fn garbage_physical_device_to_create_device() {
    dies_with(
        "garbage-physical-device-to-create-device",
        "vkCreateDevice: Invalid physicalDevice [VUID-vkCreateDevice-physicalDevice-parameter]",
    );
}

#[test]
fn valid_handles_pass() {
    let run = common::run_scenario("scenario_entry", "valid", &env("valid"));
    assert!(run.status.success() && run.stdout.contains("SURVIVED"), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("DEVICE Test Driver discrete 0"), "{}", run.stdout);
}
