//! The plan (see `plan`) as a document: written by the library for each `vkCreateInstance` when
//! `VK_LOADER_EXPLAIN` names a file, and made in-process by `vk-loader explain`.

use std::ffi::c_char;

use serde_json::{json, Map, Value};
use vk_generated::types::*;

use crate::plan::{self, Plan, Recording};
use crate::platform;

/// The variables that steer the loader's choices, listed in the document when set.
const VARIABLES: &[&str] = &[
    "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",
    "VK_ADD_DRIVER_FILES",
    "VK_LOADER_DRIVERS_SELECT",
    "VK_LOADER_DRIVERS_DISABLE",
    "VK_LAYER_PATH",
    "VK_ADD_LAYER_PATH",
    "VK_IMPLICIT_LAYER_PATH",
    "VK_ADD_IMPLICIT_LAYER_PATH",
    "VK_INSTANCE_LAYERS",
    "VK_LOADER_LAYERS_ENABLE",
    "VK_LOADER_LAYERS_DISABLE",
    "VK_LOADER_LAYERS_ALLOW",
    "VK_LOADER_DEVICE_SELECT",
    "VK_LOADER_DISABLE_SELECT",
    "VK_LOADER_DEVICE_ID_FILTER",
    "VK_LOADER_VENDOR_ID_FILTER",
    "VK_LOADER_DRIVER_ID_FILTER",
    "VK_LOADER_DISABLE_INST_EXT_FILTER",
    "VK_LOADER_DEBUG",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
];

/// What the document says beyond the plan: the loader, the process, the variables set.
fn context() -> Value {
    let environment: Map<String, Value> =
        VARIABLES.iter().filter_map(|&name| platform::plain_env(name).map(|value| (name.to_string(), Value::String(value)))).collect();
    json!({
        "loader": env!("CARGO_PKG_VERSION"),
        "vulkan_header": plan::version_text(VK_HEADER_VERSION_COMPLETE),
        "process": crate::layer_catalog::executable_path(),
        "pid": std::process::id(),
        "environment": environment,
    })
}

/// The document of one plan.
pub fn document(plan: &Plan) -> Value {
    plan.to_json(context())
}

/// The file `VK_LOADER_EXPLAIN` names (`%p` stands for the process id), unless the process is
/// elevated.
pub fn requested_file() -> Option<String> {
    platform::env("VK_LOADER_EXPLAIN").map(|path| path.replace("%p", &std::process::id().to_string()))
}

/// Finishes the recording of one `vkCreateInstance` and appends its document to `file`, one
/// line per document. A created instance's physical devices are listed (asked of the drivers as
/// at the application's first enumeration).
///
/// # Safety
/// `instance` is the instance just created, or null.
pub unsafe fn write_for_instance(file: &str, recording: Recording, result: VkResult, instance: VkInstance) {
    if let Some(instance) = crate::instance::Instance::from_handle(instance) {
        // Errors were recorded (or logged) by the enumeration itself.
        let _ = instance.physical_devices.refresh(instance);
    }
    let mut plan = recording.finish();
    plan.result = Some(format!("{result:?}"));
    plan.settings_file = crate::settings::current().map(|s| s.path.clone());
    let line = format!("{}\n", document(&plan));
    if let Err(why) = platform::append_to_file(file, &line) {
        log!(crate::log::Level::Error, "VK_LOADER_EXPLAIN: {why}");
    }
}

/// `vk-loader explain`: the plan for this process's environment. With `devices`, an instance is
/// created (no layer or extension requested, the newest API version) and its physical devices
/// enumerated as an application would; without, the drivers are loaded and the layers chosen
/// and opened, and nothing is created.
pub fn explain(devices: bool) -> Value {
    let recording = Recording::start();
    let result = if devices {
        // SAFETY: a valid create info; the instance is destroyed before returning.
        Some(unsafe { create_and_enumerate() })
    } else {
        let _settings = crate::settings::OneLook::enter();
        crate::instance::load_drivers_for_explain();
        let _ = crate::layer_chain::select(&[]);
        None
    };
    let mut plan = recording.finish();
    plan.result = result.map(|r| format!("{r:?}"));
    plan.settings_file = crate::settings::current().map(|s| s.path.clone());
    document(&plan)
}

/// Creates an instance, lists its physical devices, destroys it; returns `vkCreateInstance`'s
/// result.
unsafe fn create_and_enumerate() -> VkResult {
    let (major, minor) = vk_generated::api_version_major_minor(VK_HEADER_VERSION_COMPLETE);
    let app = VkApplicationInfo {
        pApplicationName: c"vk-loader explain".as_ptr() as *const c_char,
        apiVersion: vk_generated::make_api_version(0, major, minor, 0),
        ..Default::default()
    };
    let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
    let mut instance = VkInstance::NULL;
    let result = crate::instance::vkCreateInstance(&info, std::ptr::null(), &mut instance);
    if result != VkResult::SUCCESS {
        return result;
    }
    let mut count = 0u32;
    if crate::physical_device::vkEnumeratePhysicalDevices(instance, &mut count, std::ptr::null_mut()) == VkResult::SUCCESS {
        let mut handles = vec![VkPhysicalDevice::NULL; count as usize];
        crate::physical_device::vkEnumeratePhysicalDevices(instance, &mut count, handles.as_mut_ptr());
    }
    crate::instance::vkDestroyInstance(instance, std::ptr::null());
    result
}
