//! The loader's terminators of `VK_EXT_debug_utils` and `VK_EXT_debug_report`: messengers and
//! report callbacks an application creates on an instance (see `debug::messengers` for how the
//! loader's messages reach them), with a per-driver messenger where the driver has the extension.

use std::ffi::c_char;

use vk_generated::types::*;

use crate::app_callbacks::{ReportFunction, UtilsFunction};
use crate::debug::log::Level;
use crate::debug::messengers::{Callback, Messenger};
use crate::object::instance::{DriverInstance, Instance};
use crate::platform::host_alloc::AllocatorScope;

/// The drivers of `instance` that had `extension` enabled at creation.
fn drivers_with<'a>(instance: &'a Instance, extension: &'a [u8]) -> impl Iterator<Item = (usize, &'a DriverInstance)> {
    // A driver not loaded yet gets no messenger of its own (it hears the ones chained at creation).
    instance.drivers.iter().enumerate().filter(move |(_, d)| d.has_extension(extension) && !d.is_unloaded())
}

/// Creates a loader messenger with a driver messenger in every driver that supports the extension.
///
/// # Safety
/// `instance` must be NULL or an instance this loader created and has not destroyed; `allocator`
/// NULL or valid callbacks that outlive the messenger; `out` NULL or valid for writing a `u64`.
/// A NULL `instance` or `out` returns `VK_ERROR_INITIALIZATION_FAILED`.
unsafe fn create(
    instance: VkInstance,
    callback: Callback,
    mut create_in_driver: impl FnMut(&DriverInstance) -> Result<u64, VkResult>,
    mut destroy_in_driver: impl FnMut(&DriverInstance, u64),
    extension: &[u8],
    allocator: *const VkAllocationCallbacks,
    out: *mut u64,
) -> VkResult {
    // SAFETY: NULL or a live instance of this loader (the contract).
    let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    if out.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    // SAFETY: NULL or callbacks that outlive the messenger, so every block of the scope (the contract).
    let memory = unsafe { AllocatorScope::enter(allocator, VkSystemAllocationScope::OBJECT) };
    let mut per_driver = Vec::new();
    for (index, driver) in drivers_with(instance, extension) {
        match create_in_driver(driver) {
            Ok(handle) => per_driver.push((index, handle)),
            Err(result) => {
                for (index, handle) in per_driver {
                    destroy_in_driver(&instance.drivers[index], handle);
                }
                return result;
            }
        }
    }
    // SAFETY: NULL or valid callbacks (the contract), copied.
    let messenger = Box::new(Messenger { callback, per_driver, allocator: unsafe { allocator.as_ref() }.copied() });
    if memory.failed() {
        for &(index, handle) in &messenger.per_driver {
            destroy_in_driver(&instance.drivers[index], handle);
        }
        return VkResult::ERROR_OUT_OF_HOST_MEMORY;
    }
    let handle = instance.messengers.insert(messenger);
    // SAFETY: `out` is not NULL, so valid for writing a `u64` (the contract).
    unsafe { *out = handle };
    VkResult::SUCCESS
}

/// Destroys a loader messenger and its driver messengers.
///
/// # Safety
/// `instance` must be NULL (nothing is done) or an instance this loader created and has not
/// destroyed.
unsafe fn destroy(instance: VkInstance, handle: u64, mut destroy_in_driver: impl FnMut(&DriverInstance, u64)) {
    // SAFETY: NULL or a live instance of this loader (the contract).
    let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return };
    if handle == 0 {
        return;
    }
    match instance.messengers.remove(handle) {
        Some(messenger) => {
            for (index, driver_handle) in messenger.per_driver {
                destroy_in_driver(&instance.drivers[index], driver_handle);
            }
        }
        None => log!(Level::Warn, "debug messenger {handle:#x} is not one of this instance's"),
    }
}

const DEBUG_UTILS: &[u8] = b"VK_EXT_debug_utils";

const DEBUG_REPORT: &[u8] = b"VK_EXT_debug_report";

/// The end of the instance chain's `vkCreateDebugUtilsMessengerEXT`.
///
/// # Safety
/// Vulkan's valid usage: `instance` the loader's instance as the end of the chain receives it;
/// `pCreateInfo` a valid create info, its callback callable with its user data until the
/// messenger is destroyed; `pAllocator` NULL or valid callbacks that outlive the messenger;
/// `pMessenger` valid for writing one handle. Checked anyway: a NULL `instance`, `pCreateInfo` or
/// `pMessenger` returns `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkCreateDebugUtilsMessengerEXT(
    instance: VkInstance,
    pCreateInfo: *const VkDebugUtilsMessengerCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pMessenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    crate::ffi::guard("vkCreateDebugUtilsMessengerEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (the contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let create_in_driver = |d: &DriverInstance| {
            let mut handle = VkDebugUtilsMessengerEXT::NULL;
            let (table, driver_instance) = d.live();
            // SAFETY: the live driver's function with its own instance, the application's valid
            // create info and allocator, and a place for one handle.
            match table.vkCreateDebugUtilsMessengerEXT.map(|f| unsafe { f(driver_instance, info, pAllocator, &mut handle) }) {
                Some(VkResult::SUCCESS) => Ok(handle.0),
                Some(error) => Err(error),
                None => Ok(0),
            }
        };
        // SAFETY: each handle is one the driver just made with `pAllocator`.
        let destroy_in_driver = |d: &DriverInstance, handle| unsafe { destroy_utils_in_driver(d, handle, pAllocator) };
        // SAFETY: the contract: `instance` NULL or live, `pAllocator` NULL or valid, `pMessenger`
        // NULL or valid for one (64-bit) handle, the application's callback callable until the
        // messenger is destroyed.
        unsafe {
            let callback = UtilsFunction::new(info.pfnUserCallback, info.pUserData);
            let callback = Callback::Utils { severity: info.messageSeverity, types: info.messageType, callback };
            create(instance, callback, create_in_driver, destroy_in_driver, DEBUG_UTILS, pAllocator, pMessenger as *mut u64)
        }
    })
}

/// Destroys driver `d`'s messenger `handle` (0: none).
///
/// # Safety
/// `d`'s live instance is not destroyed, `handle` is 0 or a messenger it made and has not
/// destroyed, and `allocator` NULL or compatible with the callbacks it was made with.
unsafe fn destroy_utils_in_driver(d: &DriverInstance, handle: u64, allocator: *const VkAllocationCallbacks) {
    let (table, driver_instance) = d.live();
    if let (Some(f), true) = (table.vkDestroyDebugUtilsMessengerEXT, handle != 0) {
        // SAFETY: the live driver's function with its own instance and messenger (the contract).
        unsafe { f(driver_instance, VkDebugUtilsMessengerEXT(handle), allocator) };
    }
}

/// The end of the instance chain's `vkDestroyDebugUtilsMessengerEXT`.
///
/// # Safety
/// Vulkan's valid usage: `instance` the loader's instance as the end of the chain receives it;
/// `messenger` NULL or one created on it and not destroyed; `pAllocator` NULL or compatible with
/// the callbacks it was created with. Checked anyway: a NULL `instance` or `messenger` does
/// nothing; a handle that is not one of the instance's messengers is logged and ignored.
pub unsafe extern "system" fn terminator_vkDestroyDebugUtilsMessengerEXT(
    instance: VkInstance,
    messenger: VkDebugUtilsMessengerEXT,
    pAllocator: *const VkAllocationCallbacks,
) {
    crate::ffi::guard("vkDestroyDebugUtilsMessengerEXT", (), || {
        // SAFETY: the driver messengers `destroy` hands over are the loader messenger's own.
        let destroy_in_driver = |d: &DriverInstance, handle| unsafe { destroy_utils_in_driver(d, handle, pAllocator) };
        // SAFETY: `instance` NULL or live (the contract).
        unsafe { destroy(instance, messenger.0, destroy_in_driver) }
    })
}

/// Gives driver `index` of `instance`, just loaded (a lazy driver), a messenger of its own for each
/// messenger the application created before, as it would have had loaded at `vkCreateInstance`.
/// No lock is held while the driver runs (it may call the callback at once).
pub fn give_to_loaded_driver(instance: &Instance, index: usize) {
    let Some(d) = instance.drivers.get(index) else { return };
    for (handle, callback, allocator) in instance.messengers.missing_in_driver(index) {
        let allocator_ptr = allocator.as_ref().map_or(std::ptr::null(), |a| a as *const _);
        let (table, driver_instance) = d.live();
        // SAFETY: the live driver's instance and functions; create infos made from the
        // application's own callbacks.
        let created = unsafe {
            match callback {
                Callback::Utils { severity, types, callback } if d.has_extension(DEBUG_UTILS) => {
                    let (callback, user_data) = callback.parts();
                    let info = VkDebugUtilsMessengerCreateInfoEXT { messageSeverity: severity, messageType: types, pfnUserCallback: callback, pUserData: user_data, ..Default::default() };
                    let mut out = VkDebugUtilsMessengerEXT::NULL;
                    table.vkCreateDebugUtilsMessengerEXT.map(|f| (f(driver_instance, &info, allocator_ptr, &mut out), out.0))
                }
                Callback::Report { flags, callback } if d.has_extension(DEBUG_REPORT) => {
                    let (callback, user_data) = callback.parts();
                    let info = VkDebugReportCallbackCreateInfoEXT { flags, pfnCallback: callback, pUserData: user_data, ..Default::default() };
                    let mut out = VkDebugReportCallbackEXT::NULL;
                    table.vkCreateDebugReportCallbackEXT.map(|f| (f(driver_instance, &info, allocator_ptr, &mut out), out.0))
                }
                _ => None,
            }
        };
        match created {
            // Destroyed while the driver made its own: that one goes too.
            // SAFETY: the messenger the live driver just made, with these callbacks.
            Some((VkResult::SUCCESS, driver_handle)) if !instance.messengers.add_driver_messenger(handle, index, driver_handle) => unsafe {
                match callback {
                    Callback::Utils { .. } => destroy_utils_in_driver(d, driver_handle, allocator_ptr),
                    Callback::Report { .. } => destroy_report_in_driver(d, driver_handle, allocator_ptr),
                }
            },
            Some((VkResult::SUCCESS, _)) => {}
            Some((error, _)) => log!(Level::WarnDriver, "{}: the messenger created before it was loaded not made in it: {error:?}", d.driver.manifest_path),
            None => {}
        }
    }
}

/// Delivered to the loader's messengers only: the drivers' messengers carry the same callbacks, so
/// passing the message down as well would deliver it twice.
///
/// # Safety
/// Vulkan's valid usage: `instance` the loader's instance as the end of the chain receives it;
/// `pCallbackData` a valid callback data, handed to the application's callbacks unread. Checked
/// anyway: a NULL `instance` does nothing.
pub unsafe extern "system" fn terminator_vkSubmitDebugUtilsMessageEXT(
    instance: VkInstance,
    messageSeverity: VkDebugUtilsMessageSeverityFlagBitsEXT,
    messageTypes: VkDebugUtilsMessageTypeFlagsEXT,
    pCallbackData: *const VkDebugUtilsMessengerCallbackDataEXT,
) {
    crate::ffi::guard("vkSubmitDebugUtilsMessageEXT", (), || {
        // SAFETY: NULL or a live instance of this loader (the contract).
        let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return };
        for callback in instance.messengers.callbacks() {
            if let Callback::Utils { severity, types, callback } = callback {
                let (Some(f), user_data) = callback.parts() else { continue };
                if severity.intersects(messageSeverity) && types.intersects(messageTypes) {
                    // SAFETY: the application's callback with its own user data and the
                    // application's valid callback data.
                    unsafe { f(messageSeverity, messageTypes, pCallbackData, user_data) };
                }
            }
        }
    })
}

/// The end of the instance chain's `vkCreateDebugReportCallbackEXT`.
///
/// # Safety
/// As [`terminator_vkCreateDebugUtilsMessengerEXT`], for a report callback: a NULL `instance`,
/// `pCreateInfo` or `pCallback` returns `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkCreateDebugReportCallbackEXT(
    instance: VkInstance,
    pCreateInfo: *const VkDebugReportCallbackCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pCallback: *mut VkDebugReportCallbackEXT,
) -> VkResult {
    crate::ffi::guard("vkCreateDebugReportCallbackEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (the contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let create_in_driver = |d: &DriverInstance| {
            let mut handle = VkDebugReportCallbackEXT::NULL;
            let (table, driver_instance) = d.live();
            // SAFETY: the live driver's function with its own instance, the application's valid
            // create info and allocator, and a place for one handle.
            match table.vkCreateDebugReportCallbackEXT.map(|f| unsafe { f(driver_instance, info, pAllocator, &mut handle) }) {
                Some(VkResult::SUCCESS) => Ok(handle.0),
                Some(error) => Err(error),
                None => Ok(0),
            }
        };
        // SAFETY: each handle is one the driver just made with `pAllocator`.
        let destroy_in_driver = |d: &DriverInstance, handle| unsafe { destroy_report_in_driver(d, handle, pAllocator) };
        // SAFETY: the contract: `instance` NULL or live, `pAllocator` NULL or valid, `pCallback`
        // NULL or valid for one (64-bit) handle, the application's callback callable until the
        // callback is destroyed.
        unsafe {
            let callback = Callback::Report { flags: info.flags, callback: ReportFunction::new(info.pfnCallback, info.pUserData) };
            create(instance, callback, create_in_driver, destroy_in_driver, DEBUG_REPORT, pAllocator, pCallback as *mut u64)
        }
    })
}

/// Destroys driver `d`'s report callback `handle` (0: none).
///
/// # Safety
/// As [`destroy_utils_in_driver`], for a report callback.
unsafe fn destroy_report_in_driver(d: &DriverInstance, handle: u64, allocator: *const VkAllocationCallbacks) {
    let (table, driver_instance) = d.live();
    if let (Some(f), true) = (table.vkDestroyDebugReportCallbackEXT, handle != 0) {
        // SAFETY: the live driver's function with its own instance and callback (the contract).
        unsafe { f(driver_instance, VkDebugReportCallbackEXT(handle), allocator) };
    }
}

/// The end of the instance chain's `vkDestroyDebugReportCallbackEXT`.
///
/// # Safety
/// As [`terminator_vkDestroyDebugUtilsMessengerEXT`], for a report callback.
pub unsafe extern "system" fn terminator_vkDestroyDebugReportCallbackEXT(
    instance: VkInstance,
    callback: VkDebugReportCallbackEXT,
    pAllocator: *const VkAllocationCallbacks,
) {
    crate::ffi::guard("vkDestroyDebugReportCallbackEXT", (), || {
        // SAFETY: the driver callbacks `destroy` hands over are the loader callback's own.
        let destroy_in_driver = |d: &DriverInstance, handle| unsafe { destroy_report_in_driver(d, handle, pAllocator) };
        // SAFETY: `instance` NULL or live (the contract).
        unsafe { destroy(instance, callback.0, destroy_in_driver) }
    })
}

/// Delivered to the loader's report callbacks only (see `vkSubmitDebugUtilsMessageEXT`).
///
/// # Safety
/// Vulkan's valid usage: `instance` the loader's instance as the end of the chain receives it;
/// `pLayerPrefix` and `pMessage` NUL-terminated strings, handed to the application's callbacks
/// unread. Checked anyway: a NULL `instance` does nothing.
pub unsafe extern "system" fn terminator_vkDebugReportMessageEXT(
    instance: VkInstance,
    flags: VkDebugReportFlagsEXT,
    objectType: VkDebugReportObjectTypeEXT,
    object: u64,
    location: usize,
    messageCode: i32,
    pLayerPrefix: *const c_char,
    pMessage: *const c_char,
) {
    crate::ffi::guard("vkDebugReportMessageEXT", (), || {
        // SAFETY: NULL or a live instance of this loader (the contract).
        let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return };
        for callback in instance.messengers.callbacks() {
            if let Callback::Report { flags: wanted, callback } = callback {
                let (Some(f), user_data) = callback.parts() else { continue };
                if wanted.intersects(flags) {
                    // SAFETY: the application's callback with its own user data and the
                    // application's strings.
                    unsafe { f(flags, objectType, object, location, messageCode, pLayerPrefix, pMessage, user_data) };
                }
            }
        }
    })
}

