//! `vk-loader explain`: the plan for this process's environment, made in-process (the library
//! writes the same document for `VK_LOADER_EXPLAIN`, see `api::instance`).

use std::ffi::c_char;

use vk_generated::types::*;

use crate::plan::Recording;
use crate::plan::document::document;

/// `vk-loader explain`: the plan for this process's environment. With `devices`, an instance is
/// created (no layer or extension requested, the newest API version) and its physical devices
/// enumerated as an application would; without, the drivers are loaded and the layers chosen
/// and opened, and nothing is created.
pub fn explain(devices: bool) -> String {
    let recording = Recording::start();
    let result = if devices {
        Some(create_and_enumerate())
    } else {
        let _settings = crate::manifest::settings::OneLook::enter();
        crate::chain::drivers::instance_extensions_per_driver();
        let _ = crate::chain::instance_layers::select(&[], 0);
        None
    };
    let mut plan = recording.finish();
    plan.result = result.map(|r| format!("{r:?}"));
    crate::api::process::describe_process(&mut plan);
    document(&plan)
}

/// `vk-loader explain --as PATH`: from now on the process decides as the executable at `path`
/// would where the executable decides (see `platform::explain_as`), and records nothing in the
/// driver cache (it would record in that executable's name what it did not do).
///
/// # Safety
/// As `platform::explain_as`: on the main thread, before any other thread exists and before the
/// loader is first used.
pub unsafe fn explain_as(path: &str) -> Result<(), String> {
    // SAFETY: the caller's promise, which is the callee's contract.
    unsafe { crate::platform::explain_as(path)? };
    crate::cache::write_nothing();
    Ok(())
}

/// Creates an instance, lists its physical devices, destroys it; returns `vkCreateInstance`'s
/// result.
fn create_and_enumerate() -> VkResult {
    let (major, minor) = vk_generated::api_version_major_minor(VK_HEADER_VERSION_COMPLETE);
    let app = VkApplicationInfo {
        pApplicationName: c"vk-loader explain".as_ptr() as *const c_char,
        apiVersion: vk_generated::make_api_version(0, major, minor, 0),
        ..Default::default()
    };
    let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
    let mut instance = VkInstance::NULL;
    // SAFETY: a valid create info whose application info and name outlive the call, no allocator,
    // a place for one handle.
    let result = unsafe { crate::api::instance::vkCreateInstance(&info, std::ptr::null(), &mut instance) };
    if result != VkResult::SUCCESS {
        return result;
    }
    let mut count = 0u32;
    // SAFETY: the instance just created; a count to write and no array.
    if unsafe { crate::api::physical_device::vkEnumeratePhysicalDevices(instance, &mut count, std::ptr::null_mut()) } == VkResult::SUCCESS {
        let mut handles = vec![VkPhysicalDevice::NULL; count as usize];
        // SAFETY: the instance just created; `handles` holds `count` handles.
        unsafe { crate::api::physical_device::vkEnumeratePhysicalDevices(instance, &mut count, handles.as_mut_ptr()) };
    }
    // SAFETY: the instance just created, with no allocator as created; not used after.
    unsafe { crate::api::instance::vkDestroyInstance(instance, std::ptr::null()) };
    result
}
