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

use crate::guard;

/// Tells a messenger chained to the create info that the instance exists, naming the application.
///
/// # Safety
/// `info` must be a valid create info.
pub unsafe fn instance_created(info: &VkInstanceCreateInfo) {
    let given = crate::c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount);
    if !given.iter().any(|e| e.to_bytes() == b"VK_EXT_debug_utils") {
        return;
    }
    let Some(messenger) = vk_generated::find_in_chain::<VkDebugUtilsMessengerCreateInfoEXT>(info.pNext) else { return };
    let Some(callback) = messenger.pfnUserCallback else { return };
    let application = info.pApplicationInfo.as_ref().filter(|a| !a.pApplicationName.is_null()).map(|a| std::ffi::CStr::from_ptr(a.pApplicationName));
    let text = format!("vk_test_driver: instance created for {}\0", application.map(|n| n.to_string_lossy()).unwrap_or_default());
    let data = VkDebugUtilsMessengerCallbackDataEXT { pMessage: text.as_ptr().cast(), ..Default::default() };
    let (warning, general) = (VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT, VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT);
    if messenger.messageSeverity.contains(warning) && messenger.messageType.contains(general) {
        callback(warning, general, &data, messenger.pUserData);
    }
}

struct Messenger {
    _callback: PFN_vkDebugUtilsMessengerCallbackEXT,
}

pub unsafe extern "system" fn vkCreateDebugUtilsMessengerEXT(
    _instance: VkInstance,
    pCreateInfo: *const VkDebugUtilsMessengerCreateInfoEXT,
    _pAllocator: *const VkAllocationCallbacks,
    pMessenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let warning = VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT;
        let general = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;
        if let Some(callback) = info.pfnUserCallback {
            if info.messageSeverity.contains(warning) && info.messageType.contains(general) {
                let data = VkDebugUtilsMessengerCallbackDataEXT {
                    pMessage: c"vk_test_driver: messenger created".as_ptr(),
                    ..Default::default()
                };
                callback(warning, general, &data, info.pUserData);
            }
        }
        let messenger = Box::new(Messenger { _callback: info.pfnUserCallback });
        pMessenger.write(VkDebugUtilsMessengerEXT(Box::into_raw(messenger) as u64));
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkDestroyDebugUtilsMessengerEXT(
    _instance: VkInstance,
    messenger: VkDebugUtilsMessengerEXT,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !messenger.is_null() {
            drop(Box::from_raw(messenger.0 as *mut Messenger));
        }
    })
}

/// Whether an instance, physical device or surface named by handle is one the driver can use:
/// an instance of its own (its first word still `ICD_LOADER_MAGIC`, unlike a loader's or a
/// layer's), the physical device `device` was created from, a surface the WSI commands accept.
/// Other objects are not checked.
unsafe fn named_object_is_own(device: VkDevice, object: VkObjectType, handle: u64) -> bool {
    match object {
        VkObjectType::INSTANCE => handle != 0 && valid_loader_magic_value(handle as usize as *mut std::ffi::c_void),
        VkObjectType::PHYSICAL_DEVICE => crate::device::physical_device_of(device).is_some_and(|pd| pd.0 as u64 == handle),
        VkObjectType::SURFACE_KHR => crate::surface::resolve(VkSurfaceKHR(handle)).is_ok(),
        _ => true,
    }
}

/// The same check for the `VK_EXT_debug_marker` object types.
unsafe fn marked_object_is_own(device: VkDevice, object: VkDebugReportObjectTypeEXT, handle: u64) -> bool {
    let object = match object {
        VkDebugReportObjectTypeEXT::INSTANCE_EXT => VkObjectType::INSTANCE,
        VkDebugReportObjectTypeEXT::PHYSICAL_DEVICE_EXT => VkObjectType::PHYSICAL_DEVICE,
        VkDebugReportObjectTypeEXT::SURFACE_KHR_EXT => VkObjectType::SURFACE_KHR,
        _ => return true,
    };
    named_object_is_own(device, object, handle)
}

fn checked(own: bool) -> VkResult {
    if own {
        VkResult::SUCCESS
    } else {
        VkResult::ERROR_VALIDATION_FAILED_EXT
    }
}

pub unsafe extern "system" fn vkSetDebugUtilsObjectNameEXT(device: VkDevice, pNameInfo: *const VkDebugUtilsObjectNameInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || match pNameInfo.as_ref() {
        Some(info) => checked(named_object_is_own(device, info.objectType, info.objectHandle)),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    })
}

pub unsafe extern "system" fn vkSetDebugUtilsObjectTagEXT(device: VkDevice, pTagInfo: *const VkDebugUtilsObjectTagInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || match pTagInfo.as_ref() {
        Some(info) => checked(named_object_is_own(device, info.objectType, info.objectHandle)),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    })
}

pub unsafe extern "system" fn vkDebugMarkerSetObjectNameEXT(device: VkDevice, pNameInfo: *const VkDebugMarkerObjectNameInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || match pNameInfo.as_ref() {
        Some(info) => checked(marked_object_is_own(device, info.objectType, info.object)),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    })
}

pub unsafe extern "system" fn vkDebugMarkerSetObjectTagEXT(device: VkDevice, pTagInfo: *const VkDebugMarkerObjectTagInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || match pTagInfo.as_ref() {
        Some(info) => checked(marked_object_is_own(device, info.objectType, info.object)),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    })
}
