//! VK_EXT_debug_utils and VK_EXT_debug_report provided by the loader: callbacks chained to
//! `VkInstanceCreateInfo` hear the loader during creation; messengers created later hear
//! `vkSubmitDebugUtilsMessageEXT` / `vkDebugReportMessageEXT` once, and nothing after destruction.

mod common;

use std::ffi::{c_char, c_void, CStr};

use common::child;
use vk_generated::types::*;

unsafe extern "system" fn on_utils(
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    _types: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    user: *mut c_void,
) -> VkBool32 {
    let tag = CStr::from_ptr(user as *const c_char).to_string_lossy();
    println!("UTILS {tag} {} {}", severity.0, CStr::from_ptr((*data).pMessage).to_string_lossy());
    VK_FALSE
}

unsafe extern "system" fn on_report(
    flags: VkDebugReportFlagsEXT,
    _type: VkDebugReportObjectTypeEXT,
    _object: u64,
    _location: usize,
    _code: i32,
    _prefix: *const c_char,
    message: *const c_char,
    user: *mut c_void,
) -> VkBool32 {
    let tag = CStr::from_ptr(user as *const c_char).to_string_lossy();
    println!("REPORT {tag} {} {}", flags.0, CStr::from_ptr(message).to_string_lossy());
    VK_FALSE
}

#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!(); // the harness's "test scenario_entry ... " stays on a line of its own
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    unsafe {
        // Creation-time callbacks: utils hears warnings and errors, report hears everything.
        let report_info = VkDebugReportCallbackCreateInfoEXT {
            flags: VkDebugReportFlagsEXT(0x1f),
            pfnCallback: Some(on_report),
            pUserData: c"create".as_ptr() as *mut c_void,
            ..Default::default()
        };
        let utils_info = VkDebugUtilsMessengerCreateInfoEXT {
            pNext: &report_info as *const _ as *const c_void,
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1100),
            messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
            pfnUserCallback: Some(on_utils),
            pUserData: c"create".as_ptr() as *mut c_void,
            ..Default::default()
        };
        let extensions = [c"VK_EXT_debug_utils".as_ptr(), c"VK_EXT_debug_report".as_ptr()];
        let info = VkInstanceCreateInfo {
            pNext: &utils_info as *const _ as *const c_void,
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS || !matches!(scenario.as_str(), "later" | "device-layers") {
            return;
        }
        println!("CREATED");
        // A messenger and a report callback created afterwards.
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT =
            std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let later = VkDebugUtilsMessengerCreateInfoEXT { pUserData: c"later".as_ptr() as *mut c_void, ..utils_info };
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        assert_eq!(create_messenger.unwrap()(instance, &later, std::ptr::null(), &mut messenger), VkResult::SUCCESS);
        let create_callback: PFN_vkCreateDebugReportCallbackEXT =
            std::mem::transmute(get(instance, c"vkCreateDebugReportCallbackEXT"));
        let later_report = VkDebugReportCallbackCreateInfoEXT { pUserData: c"later".as_ptr() as *mut c_void, ..report_info };
        let mut callback = VkDebugReportCallbackEXT::NULL;
        assert_eq!(create_callback.unwrap()(instance, &later_report, std::ptr::null(), &mut callback), VkResult::SUCCESS);
        if scenario == "device-layers" {
            create_device_naming_a_layer(&get, instance);
        }

        let submit: PFN_vkSubmitDebugUtilsMessageEXT = std::mem::transmute(get(instance, c"vkSubmitDebugUtilsMessageEXT"));
        let data = VkDebugUtilsMessengerCallbackDataEXT { pMessage: c"app says hi".as_ptr(), ..Default::default() };
        let error = VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT;
        let general = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;
        submit.unwrap()(instance, error, general, &data);
        // Filtered out: the messenger asked for warnings and errors only.
        submit.unwrap()(instance, VkDebugUtilsMessageSeverityFlagsEXT::VERBOSE_BIT_EXT, general, &data);
        let report: PFN_vkDebugReportMessageEXT = std::mem::transmute(get(instance, c"vkDebugReportMessageEXT"));
        let object_type = VkDebugReportObjectTypeEXT::INSTANCE_EXT;
        report.unwrap()(instance, VkDebugReportFlagsEXT::WARNING_BIT_EXT, object_type, 0, 0, 0, c"app".as_ptr(), c"app reports".as_ptr());

        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT =
            std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger.unwrap()(instance, messenger, std::ptr::null());
        let destroy_callback: PFN_vkDestroyDebugReportCallbackEXT =
            std::mem::transmute(get(instance, c"vkDestroyDebugReportCallbackEXT"));
        destroy_callback.unwrap()(instance, callback, std::ptr::null());
        submit.unwrap()(instance, error, general, &VkDebugUtilsMessengerCallbackDataEXT { pMessage: c"after destroy".as_ptr(), ..data });
        println!("DESTROYING");
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Creates (and destroys) a device naming a device layer the instance does not have.
unsafe fn create_device_naming_a_layer(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance) {
    let pd = common::physical_devices(get, instance)[0];
    let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
    let priority = 1.0f32;
    let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
    let layers = [c"VK_LAYER_not_on_the_instance".as_ptr()];
    let info = VkDeviceCreateInfo {
        queueCreateInfoCount: 1,
        pQueueCreateInfos: &queue,
        enabledLayerCount: 1,
        ppEnabledLayerNames: layers.as_ptr(),
        ..Default::default()
    };
    let mut device = VkDevice::NULL;
    assert_eq!(create.unwrap()(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
    let destroy: PFN_vkDestroyDevice = std::mem::transmute(get(instance, c"vkDestroyDevice"));
    destroy.unwrap()(device, std::ptr::null());
}

/// A driver list with a broken manifest beside a good one: the loader warns about the broken one.
fn drivers_with_a_broken_manifest(name: &str) -> (String, String) {
    let dir = common::scratch(name);
    let good = common::driver_manifest(&dir, "good.json", &common::test_driver());
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    (format!("{}:{}", broken.display(), good.display()), broken.display().to_string())
}

#[test]
fn callbacks_in_create_info_hear_the_loader_during_creation() {
    let (drivers, broken) = drivers_with_a_broken_manifest("debug-create");
    let (ok, out, err) = child("create", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    // Heard by both callbacks although VK_LOADER_DEBUG is unset (and so not printed to stderr).
    let warning = |prefix: &str, bits: u32| {
        out.lines().any(|l| l.starts_with(&format!("{prefix} create {bits} ")) && l.contains(&broken) && l.contains("invalid JSON"))
    };
    assert!(warning("UTILS", 0x100), "utils messenger missed the warning:\n{out}");
    assert!(warning("REPORT", 0x2), "report callback missed the warning:\n{out}");
    assert!(!err.contains(&broken), "printed without VK_LOADER_DEBUG:\n{err}");
    // The utils messenger asked for warnings and errors only; the report callback for all.
    assert!(!out.lines().any(|l| l.starts_with("UTILS create 1 ")), "verbose reached a warning-only messenger:\n{out}");
    assert!(out.lines().any(|l| l.starts_with("REPORT create 16 ")), "no debug-level message:\n{out}");
}

#[test]
fn messengers_created_later_hear_the_application_once_until_destroyed() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-later");
    let (ok, out, err) = child("later", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let after_creation = &out[out.find("CREATED").unwrap()..];
    let before_destroy = &after_creation[..after_creation.find("DESTROYING").unwrap()];
    let lines: Vec<&str> = before_destroy.lines().filter(|l| l.starts_with("UTILS") || l.starts_with("REPORT")).collect();
    assert_eq!(lines, ["UTILS later 4096 app says hi", "REPORT later 2 app reports"], "{out}");
    // Creation-time callbacks hear destruction again; the destroyed messengers hear nothing.
    let destruction = &after_creation[after_creation.find("DESTROYING").unwrap()..];
    assert!(!destruction.contains(" later "), "{destruction}");
    assert!(destruction.contains("REPORT create 16 "), "creation callbacks did not hear destruction:\n{destruction}");
}

#[test]
fn drivers_with_debug_utils_get_a_messenger_of_their_own() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-driver");
    let env = [("VK_DRIVER_FILES", drivers), ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_debug_utils".into())];
    let (ok, out, err) = child("later", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let after_creation = &out[out.find("CREATED").unwrap()..];
    let before_destroy = &after_creation[..after_creation.find("DESTROYING").unwrap()];
    let lines: Vec<&str> = before_destroy.lines().filter(|l| l.starts_with("UTILS") || l.starts_with("REPORT")).collect();
    assert_eq!(
        lines,
        ["UTILS later 256 vk_test_driver: messenger created", "UTILS later 4096 app says hi", "REPORT later 2 app reports"],
        "{out}"
    );
}

/// Device layers are deprecated: naming one the instance lacks gets the Khronos loader's warning,
/// which the instance's messengers hear.
#[test]
fn messengers_hear_the_warning_about_device_layers() {
    let (drivers, _) = drivers_with_a_broken_manifest("debug-device-layers");
    let (ok, out, err) = child("device-layers", &[("VK_DRIVER_FILES", drivers)]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let warning = "UTILS later 256 loader_create_device_chain: Using deprecated and ignored 'ppEnabledLayerNames' member of \
                   'VkDeviceCreateInfo' when creating a Vulkan device.";
    assert!(out.lines().any(|l| l == warning), "{out}");
}
