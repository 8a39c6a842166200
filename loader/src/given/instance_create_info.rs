//! A `VkInstanceCreateInfo` as Vulkan's valid usage describes it, read safely: its application
//! info, its extension names and the structures of its `pNext` chain by type.

use std::ffi::CStr;

use vk_generated::types::*;
use vk_generated::TaggedStruct;

use crate::app_callbacks::{ReportFunction, UtilsFunction};
use crate::debug::messengers::Callback;
use crate::ffi;

/// A valid `VkInstanceCreateInfo`, for `'a`.
#[derive(Clone, Copy)]
pub struct InstanceCreateInfo<'a> {
    raw: &'a VkInstanceCreateInfo,
}

/// What the application says of itself in `VkApplicationInfo`.
pub struct Application<'a> {
    pub name: Option<&'a CStr>,
    pub version: u32,
    pub engine: Option<&'a CStr>,
    pub engine_version: u32,
    pub api_version: u32,
}

impl<'a> InstanceCreateInfo<'a> {
    /// # Safety
    /// `raw` must be valid as Vulkan's valid usage of `vkCreateInstance` says, for `'a`:
    /// `pApplicationInfo` NULL or valid, its names NULL or NUL-terminated; the layer and extension
    /// names valid for their counts, each NULL or NUL-terminated; the `pNext` chain NULL-terminated,
    /// each element a valid structure of the type its `sType` names (its own arrays valid for
    /// their counts), the functions of its debug messengers and report callbacks callable with
    /// their user data until the instance is destroyed (they hear `vkDestroyInstance` too).
    pub unsafe fn new(raw: &'a VkInstanceCreateInfo) -> InstanceCreateInfo<'a> {
        InstanceCreateInfo { raw }
    }

    /// The structure, for the level below.
    pub fn raw(self) -> &'a VkInstanceCreateInfo {
        self.raw
    }

    /// `VkApplicationInfo`, as it is.
    pub fn application_info(self) -> Option<&'a VkApplicationInfo> {
        // SAFETY: `new`'s contract: NULL or valid.
        unsafe { self.raw.pApplicationInfo.as_ref() }
    }

    /// `VkApplicationInfo`, its names read.
    pub fn application(self) -> Option<Application<'a>> {
        let app = self.application_info()?;
        // SAFETY: `new`'s contract: each name NULL or NUL-terminated.
        let text = |name| unsafe { ffi::c_str(name) };
        Some(Application {
            name: text(app.pApplicationName),
            version: app.applicationVersion,
            engine: text(app.pEngineName),
            engine_version: app.engineVersion,
            api_version: app.apiVersion,
        })
    }

    /// `ppEnabledExtensionNames`, NULL entries left out.
    pub fn extension_names(self) -> Vec<&'a CStr> {
        // SAFETY: `new`'s contract: the array valid for its count, each entry NULL or NUL-terminated.
        unsafe { ffi::names(self.raw.ppEnabledExtensionNames, self.raw.enabledExtensionCount) }
    }

    /// The debug messengers and report callbacks chained to the create info, in order.
    pub fn debug_callbacks(self) -> Vec<Callback> {
        // SAFETY: `new`'s contract: a valid chain, whose elements live for `'a`.
        let elements = unsafe { vk_generated::chain_elements(self.raw.pNext) };
        elements
            .filter_map(|(s_type, element)| match s_type {
                VkStructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT => {
                    // SAFETY: an element of a valid chain whose `sType` names this structure, with
                    // a callback callable until the instance is destroyed (`new`'s contract).
                    let info = unsafe { &*element.cast::<VkDebugUtilsMessengerCreateInfoEXT>() };
                    // SAFETY: as above.
                    let callback = unsafe { UtilsFunction::new(info.pfnUserCallback, info.pUserData) };
                    Some(Callback::Utils { severity: info.messageSeverity, types: info.messageType, callback })
                }
                VkStructureType::DEBUG_REPORT_CALLBACK_CREATE_INFO_EXT => {
                    // SAFETY: as above, for this structure.
                    let info = unsafe { &*element.cast::<VkDebugReportCallbackCreateInfoEXT>() };
                    // SAFETY: as above.
                    let callback = unsafe { ReportFunction::new(info.pfnCallback, info.pUserData) };
                    Some(Callback::Report { flags: info.flags, callback })
                }
                _ => None,
            })
            .collect()
    }

    /// The first structure of type `T` in the `pNext` chain.
    pub fn find<T: TaggedStruct>(self) -> Option<&'a T> {
        // SAFETY: `new`'s contract: a valid chain, whose elements live for `'a`.
        unsafe { vk_generated::find_in_chain::<T>(self.raw.pNext) }
    }
}
