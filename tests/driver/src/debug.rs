//! `VK_EXT_debug_utils` in the driver (advertised only when `VK_TEST_DRIVER_INSTANCE_EXTENSIONS`
//! lists it): a messenger hears one warning, "vk_test_driver: messenger created", as it is made,
//! so a test can see the loader hand the application's callback to the driver.

use vk_generated::types::*;

use crate::guard;

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
