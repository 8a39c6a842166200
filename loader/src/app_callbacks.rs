//! The application's debug callbacks (`VK_EXT_debug_utils` messengers, `VK_EXT_debug_report`
//! callbacks) as safe calls: each is made once, where the application hands it over, by an
//! `unsafe fn` whose contract is Vulkan's (the function callable with its user data until the
//! messenger is destroyed); the loader's messages then reach it through safe methods that build
//! the arguments themselves.

use std::ffi::{c_void, CStr};

use vk_generated::types::*;

/// A debug-utils messenger's function and user data.
#[derive(Clone, Copy)]
pub struct UtilsFunction {
    function: PFN_vkDebugUtilsMessengerCallbackEXT,
    user_data: *mut c_void,
}

/// A debug-report callback's function and user data.
#[derive(Clone, Copy)]
pub struct ReportFunction {
    function: PFN_vkDebugReportCallbackEXT,
    user_data: *mut c_void,
}

// SAFETY: the function is callable from any thread (Vulkan's valid usage: the loader and drivers
// call it from whichever thread reports); the user data is the application's, handed back to it,
// never dereferenced by the loader.
unsafe impl Send for UtilsFunction {}
// SAFETY: as for `UtilsFunction`.
unsafe impl Send for ReportFunction {}

/// The name the loader's messages carry as their message id (the Khronos loader's).
const LOADER_MESSAGE: &CStr = c"Loader Message";

impl UtilsFunction {
    /// # Safety
    /// `function` must be NULL or callable as `PFN_vkDebugUtilsMessengerCallbackEXT` with
    /// `user_data` for as long as this value is used (Vulkan: until the messenger is destroyed,
    /// or for a messenger chained to a create info, until the call it was given to returns).
    pub unsafe fn new(function: PFN_vkDebugUtilsMessengerCallbackEXT, user_data: *mut c_void) -> UtilsFunction {
        UtilsFunction { function, user_data }
    }

    /// The function and user data, for the drivers' own messengers.
    pub fn parts(self) -> (PFN_vkDebugUtilsMessengerCallbackEXT, *mut c_void) {
        (self.function, self.user_data)
    }

    /// Delivers one loader message, about `instance` (0 while none exists yet), as one object.
    pub fn loader_message(self, severity: VkDebugUtilsMessageSeverityFlagsEXT, types: VkDebugUtilsMessageTypeFlagsEXT, message: &CStr, instance: u64) {
        let Some(function) = self.function else { return };
        // The object a loader message is about is its instance, as with the Khronos loader.
        let object = VkDebugUtilsObjectNameInfoEXT { objectType: VkObjectType::INSTANCE, objectHandle: instance, ..Default::default() };
        let data = VkDebugUtilsMessengerCallbackDataEXT {
            pMessageIdName: LOADER_MESSAGE.as_ptr(),
            pMessage: message.as_ptr(),
            objectCount: 1,
            pObjects: &object,
            ..Default::default()
        };
        // SAFETY: the application's callback (`new`'s contract) with its user data and callback
        // data whose strings and object live across the call.
        unsafe { function(severity, types, &data, self.user_data) };
    }
}

impl ReportFunction {
    /// # Safety
    /// As [`UtilsFunction::new`], for `PFN_vkDebugReportCallbackEXT`.
    pub unsafe fn new(function: PFN_vkDebugReportCallbackEXT, user_data: *mut c_void) -> ReportFunction {
        ReportFunction { function, user_data }
    }

    /// The function and user data, for the drivers' own callbacks.
    pub fn parts(self) -> (PFN_vkDebugReportCallbackEXT, *mut c_void) {
        (self.function, self.user_data)
    }

    /// Delivers one loader message about `instance` (0 while none exists yet).
    pub fn loader_message(self, flag: VkDebugReportFlagsEXT, message: &CStr, instance: u64) {
        let Some(function) = self.function else { return };
        // SAFETY: the application's callback (`new`'s contract) with its user data and strings
        // that live across the call.
        unsafe {
            function(flag, VkDebugReportObjectTypeEXT::INSTANCE_EXT, instance, 0, 0, LOADER_MESSAGE.as_ptr(), message.as_ptr(), self.user_data)
        };
    }
}
