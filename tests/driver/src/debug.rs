//! `VK_EXT_debug_utils` in the driver (advertised only when `VK_TEST_DRIVER_INSTANCE_EXTENSIONS`
//! lists it): a messenger hears one warning, "vk_test_driver: messenger created", as it is made,
//! so a test can see the loader hand the application's callback to the driver. A messenger chained
//! to `VkInstanceCreateInfo` hears "vk_test_driver: instance created for `<application name>`" when
//! the driver was given the extension, so a test can see what the driver's instance was created
//! with (the loader may create it long after `vkCreateInstance`: lazy drivers).
//!
//! The object naming commands of `VK_EXT_debug_utils` and `VK_EXT_debug_marker` check the handle
//! of an instance, physical device or surface they name as a real driver would use it: it must be
//! the driver's own (see [`named_object_is_own`]).

use vk_generated::layer_abi::valid_loader_magic_value;
use vk_generated::types::*;

use crate::ffi::{c_str, c_string_list};
use crate::guard;

/// Tells a messenger chained to the create info that the instance exists, naming the application.
///
/// # Safety
/// `info` is a valid `VkInstanceCreateInfo` (valid usage of `vkCreateInstance`): its extension
/// names, application info (with its name) and `pNext` chain readable, and the callback of a
/// chained `VkDebugUtilsMessengerCreateInfoEXT` callable with its `pUserData`.
pub(crate) unsafe fn instance_created(info: &VkInstanceCreateInfo) {
    // SAFETY: the members of a valid create info (this function's contract).
    let (given, messenger, application) = unsafe {
        (
            c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount),
            vk_generated::find_in_chain::<VkDebugUtilsMessengerCreateInfoEXT>(info.pNext),
            info.pApplicationInfo.as_ref().and_then(|a| c_str(a.pApplicationName)),
        )
    };
    if !given.iter().any(|e| e.to_bytes() == b"VK_EXT_debug_utils") {
        return;
    }
    let Some(messenger) = messenger else { return };
    let text = format!("vk_test_driver: instance created for {}\0", application.map(|n| n.to_string_lossy()).unwrap_or_default());
    // SAFETY: the application's callback, called as `VK_EXT_debug_utils` says with its own
    // `pUserData` (this function's contract) and a message that outlives the call.
    unsafe { call_if_warning(messenger, &text) };
}

/// Calls the messenger's callback with `text` (NUL-terminated) as a general warning, if it asked
/// for those.
///
/// # Safety
/// `messenger.pfnUserCallback` is NULL or callable with `messenger.pUserData`.
unsafe fn call_if_warning(messenger: &VkDebugUtilsMessengerCreateInfoEXT, text: &str) {
    debug_assert!(text.ends_with('\0'));
    let Some(callback) = messenger.pfnUserCallback else { return };
    let data = VkDebugUtilsMessengerCallbackDataEXT { pMessage: text.as_ptr().cast(), ..Default::default() };
    let (warning, general) = (VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT, VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT);
    if messenger.messageSeverity.contains(warning) && messenger.messageType.contains(general) {
        // SAFETY: this function's contract; `data` lives across the call.
        unsafe { callback(warning, general, &data, messenger.pUserData) };
    }
}

struct Messenger {
    _callback: PFN_vkDebugUtilsMessengerCallbackEXT,
}

/// `vkCreateDebugUtilsMessengerEXT`: a messenger that hears one warning as it is made.
///
/// # Safety
/// Valid usage of `vkCreateDebugUtilsMessengerEXT`: `pCreateInfo` is a valid
/// `VkDebugUtilsMessengerCreateInfoEXT` whose callback is callable with its `pUserData`, and
/// `pMessenger` is valid for a write. A NULL `pCreateInfo` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the instance and the allocator are not used.
pub unsafe extern "system" fn vkCreateDebugUtilsMessengerEXT(
    _instance: VkInstance,
    pCreateInfo: *const VkDebugUtilsMessengerCreateInfoEXT,
    _pAllocator: *const VkAllocationCallbacks,
    pMessenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: a callback callable with its `pUserData` (this function's contract).
        unsafe { call_if_warning(info, "vk_test_driver: messenger created\0") };
        let messenger = Box::new(Messenger { _callback: info.pfnUserCallback });
        // SAFETY: `pMessenger` is writable (this function's contract).
        unsafe { pMessenger.write(VkDebugUtilsMessengerEXT(Box::into_raw(messenger) as u64)) };
        VkResult::SUCCESS
    })
}

/// `vkDestroyDebugUtilsMessengerEXT`.
///
/// # Safety
/// Valid usage of `vkDestroyDebugUtilsMessengerEXT`: `messenger` is NULL (ignored) or a messenger
/// this driver made and has not destroyed. The instance and the allocator are not used.
pub unsafe extern "system" fn vkDestroyDebugUtilsMessengerEXT(
    _instance: VkInstance,
    messenger: VkDebugUtilsMessengerEXT,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !messenger.is_null() {
            // SAFETY: `vkCreateDebugUtilsMessengerEXT` made it with `Box::into_raw`, and it is
            // destroyed once (this function's contract).
            drop(unsafe { Box::from_raw(messenger.0 as *mut Messenger) });
        }
    })
}

/// Whether an instance, physical device or surface named by handle is one the driver can use:
/// an instance of its own (its first word still `ICD_LOADER_MAGIC`, unlike a loader's or a
/// layer's), the physical device `device` was created from, a surface the WSI commands accept.
/// Other objects are not checked.
///
/// # Safety
/// `device` is NULL or a device this driver made and has not destroyed; `handle` is a valid
/// handle of type `object` (valid usage of the naming commands): a non-NULL instance is a
/// dispatchable object whose first word is readable, a surface is as [`crate::surface::resolve`]
/// asks.
unsafe fn named_object_is_own(device: VkDevice, object: VkObjectType, handle: u64) -> bool {
    match object {
        VkObjectType::INSTANCE => {
            // SAFETY: a non-NULL instance handle points to a readable first word (contract).
            handle != 0 && unsafe { valid_loader_magic_value(handle as usize as *mut std::ffi::c_void) }
        }
        VkObjectType::PHYSICAL_DEVICE => {
            // SAFETY: NULL or a live device of ours (this function's contract).
            let physical_device = unsafe { crate::device::physical_device_of(device) };
            physical_device.is_some_and(|pd| pd.0 as u64 == handle)
        }
        VkObjectType::SURFACE_KHR => {
            // SAFETY: a valid surface handle (this function's contract).
            unsafe { crate::surface::resolve(VkSurfaceKHR(handle)) }.is_ok()
        }
        _ => true,
    }
}

/// The same check for the `VK_EXT_debug_marker` object types.
///
/// # Safety
/// As [`named_object_is_own`].
unsafe fn marked_object_is_own(device: VkDevice, object: VkDebugReportObjectTypeEXT, handle: u64) -> bool {
    let object = match object {
        VkDebugReportObjectTypeEXT::INSTANCE_EXT => VkObjectType::INSTANCE,
        VkDebugReportObjectTypeEXT::PHYSICAL_DEVICE_EXT => VkObjectType::PHYSICAL_DEVICE,
        VkDebugReportObjectTypeEXT::SURFACE_KHR_EXT => VkObjectType::SURFACE_KHR,
        _ => return true,
    };
    // SAFETY: this function's contract.
    unsafe { named_object_is_own(device, object, handle) }
}

fn checked(own: bool) -> VkResult {
    if own {
        VkResult::SUCCESS
    } else {
        VkResult::ERROR_VALIDATION_FAILED_EXT
    }
}

/// `vkSetDebugUtilsObjectNameEXT`: checks the object as a real driver would use it; nothing is recorded.
///
/// # Safety
/// Valid usage of `vkSetDebugUtilsObjectNameEXT`: `device` is one this driver made and has not destroyed, `pNameInfo` is a
/// valid `VkDebugUtilsObjectNameInfoEXT` naming a valid handle of its type. A NULL `pNameInfo` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the name or tag is not read.
pub unsafe extern "system" fn vkSetDebugUtilsObjectNameEXT(device: VkDevice, pNameInfo: *const VkDebugUtilsObjectNameInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid info naming a valid handle, on a live device of ours (this
        // function's contract).
        match unsafe { pNameInfo.as_ref().map(|info| named_object_is_own(device, info.objectType, info.objectHandle)) } {
            Some(own) => checked(own),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// `vkSetDebugUtilsObjectTagEXT`: checks the object as a real driver would use it; nothing is recorded.
///
/// # Safety
/// Valid usage of `vkSetDebugUtilsObjectTagEXT`: `device` is one this driver made and has not destroyed, `pTagInfo` is a
/// valid `VkDebugUtilsObjectTagInfoEXT` naming a valid handle of its type. A NULL `pTagInfo` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the name or tag is not read.
pub unsafe extern "system" fn vkSetDebugUtilsObjectTagEXT(device: VkDevice, pTagInfo: *const VkDebugUtilsObjectTagInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid info naming a valid handle, on a live device of ours (this
        // function's contract).
        match unsafe { pTagInfo.as_ref().map(|info| named_object_is_own(device, info.objectType, info.objectHandle)) } {
            Some(own) => checked(own),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// `vkDebugMarkerSetObjectNameEXT`: checks the object as a real driver would use it; nothing is recorded.
///
/// # Safety
/// Valid usage of `vkDebugMarkerSetObjectNameEXT`: `device` is one this driver made and has not destroyed, `pNameInfo` is a
/// valid `VkDebugMarkerObjectNameInfoEXT` naming a valid handle of its type. A NULL `pNameInfo` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the name or tag is not read.
pub unsafe extern "system" fn vkDebugMarkerSetObjectNameEXT(device: VkDevice, pNameInfo: *const VkDebugMarkerObjectNameInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid info naming a valid handle, on a live device of ours (this
        // function's contract).
        match unsafe { pNameInfo.as_ref().map(|info| marked_object_is_own(device, info.objectType, info.object)) } {
            Some(own) => checked(own),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// `vkDebugMarkerSetObjectTagEXT`: checks the object as a real driver would use it; nothing is recorded.
///
/// # Safety
/// Valid usage of `vkDebugMarkerSetObjectTagEXT`: `device` is one this driver made and has not destroyed, `pTagInfo` is a
/// valid `VkDebugMarkerObjectTagInfoEXT` naming a valid handle of its type. A NULL `pTagInfo` is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`; the name or tag is not read.
pub unsafe extern "system" fn vkDebugMarkerSetObjectTagEXT(device: VkDevice, pTagInfo: *const VkDebugMarkerObjectTagInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid info naming a valid handle, on a live device of ours (this
        // function's contract).
        match unsafe { pTagInfo.as_ref().map(|info| marked_object_is_own(device, info.objectType, info.object)) } {
            Some(own) => checked(own),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}
