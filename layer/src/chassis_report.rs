//! The chassis's side of reporting: the messenger, report-callback and object-name commands it
//! intercepts for a layer with [`Layer::MESSAGES`](crate::Layer::MESSAGES) (recording what the
//! next level created and the names given, around the layer's own hooks when it has them), [`report`] itself, and
//! `vkGetPhysicalDeviceToolProperties` answered from the layer's properties
//! ([`Layer::TOOL_PURPOSES`](crate::Layer::TOOL_PURPOSES)).

use std::ffi::c_void;

use vk_generated::types::*;

use crate::guard::guard;
use crate::report::{in_lifecycle, prefix, Message};
use crate::state::{fill_array, Registered};

/// A function pointer of any signature as `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of any signature share one representation.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// Sends `message` to the application's messengers and report callbacks of the instance that
/// `handle` (any dispatchable handle: instance, physical device, device, queue, command buffer)
/// belongs to; from `before_create_instance`, `create_instance` and `before_destroy_instance`,
/// to those chained at `vkCreateInstance` too. Messengers created after `vkCreateInstance` are
/// known to a layer with [`Layer::MESSAGES`](crate::Layer::MESSAGES).
///
/// # Safety
/// `handle` is null or a live dispatchable handle.
pub unsafe fn report<L: Registered>(handle: *mut c_void, message: &Message<'_>) {
    let layer = prefix(L::PROPERTIES.map_or("vk-layer", |p| p.name));
    if in_lifecycle(|m| m.send(&layer, message, true)).is_some() {
        return;
    }
    // SAFETY: per the caller's contract.
    unsafe {
        if let Some(instance) = L::chassis().instance(handle) {
            instance.messengers.send(&layer, message, false);
        } else if let Some(device) = L::chassis().device(handle) {
            device.messengers().send(&layer, message, false);
        }
    }
}

/// The chassis's functions for `name` (with the next level's answer `next`): the messenger
/// commands for a layer with `MESSAGES`, the tool-properties query for one with
/// `TOOL_PURPOSES`; neither when the layer passes the command on (`intercept` false).
pub(crate) fn own<L: Registered>(
    name: &[u8],
    next: PFN_vkVoidFunction,
    intercept: bool,
) -> PFN_vkVoidFunction {
    match name {
        b"vkGetPhysicalDeviceToolProperties" | b"vkGetPhysicalDeviceToolPropertiesEXT"
            if L::TOOL_PURPOSES.0 != 0 && L::PROPERTIES.is_some() && intercept =>
        {
            void_fn!(PFN_vkGetPhysicalDeviceToolProperties, tool_properties::<L>)
        }
        _ if !L::MESSAGES || !intercept || next.is_none() => None,
        b"vkCreateDebugUtilsMessengerEXT" => {
            void_fn!(PFN_vkCreateDebugUtilsMessengerEXT, create_messenger::<L>)
        }
        b"vkDestroyDebugUtilsMessengerEXT" => {
            void_fn!(PFN_vkDestroyDebugUtilsMessengerEXT, destroy_messenger::<L>)
        }
        b"vkCreateDebugReportCallbackEXT" => {
            void_fn!(PFN_vkCreateDebugReportCallbackEXT, create_report::<L>)
        }
        b"vkDestroyDebugReportCallbackEXT" => {
            void_fn!(PFN_vkDestroyDebugReportCallbackEXT, destroy_report::<L>)
        }
        b"vkSetDebugUtilsObjectNameEXT" => {
            void_fn!(PFN_vkSetDebugUtilsObjectNameEXT, set_object_name::<L>)
        }
        _ => None,
    }
}

/// For `vkGetDeviceProcAddr`: the object-name command, for a layer with `MESSAGES`.
pub(crate) fn own_device<L: Registered>(
    name: &[u8],
    next: PFN_vkVoidFunction,
    intercept: bool,
) -> PFN_vkVoidFunction {
    match name {
        b"vkSetDebugUtilsObjectNameEXT" => own::<L>(name, next, intercept),
        _ => None,
    }
}

/// `vkSetDebugUtilsObjectNameEXT`: the layer's hook or the next level, then the name recorded
/// for the instance's messages.
///
/// # Safety
/// As `vkSetDebugUtilsObjectNameEXT`: `device` is a live device of this layer's chain and `info`
/// a valid name info whose `pObjectName` is null or NUL-terminated.
unsafe extern "system" fn set_object_name<L: Registered>(
    device: VkDevice,
    info: *const VkDebugUtilsObjectNameInfoEXT,
) -> VkResult {
    guard(|| {
        // SAFETY: a live device, per the API.
        let Some(state) = (unsafe { L::chassis().device(device.0) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the layer's entry point of this command's type.
        let hooked = unsafe {
            std::mem::transmute::<PFN_vkVoidFunction, PFN_vkSetDebugUtilsObjectNameEXT>(
                crate::chassis::hooked::<L>(b"vkSetDebugUtilsObjectNameEXT", false),
            )
        };
        let result = match hooked {
            // SAFETY: the caller's arguments.
            Some(f) => unsafe { f(device, info) },
            None => {
                let (Some(next), Some(down)) = (
                    state.next.vkSetDebugUtilsObjectNameEXT,
                    L::unwrap_device(&state.hooks, device),
                ) else {
                    return VkResult::ERROR_INITIALIZATION_FAILED;
                };
                // The named object as the next level knows it (`Layer::unwrap_object`).
                // SAFETY: the caller's structure, valid or null, per the API.
                let copy = match unsafe { info.as_ref() } {
                    Some(named) => {
                        let Some(handle) =
                            L::unwrap_object(&state.hooks, named.objectType, named.objectHandle)
                        else {
                            return crate::unknown::refused::<L, VkResult>(
                                state.messengers(),
                                vk_generated::command_id::vkSetDebugUtilsObjectNameEXT,
                                named.objectType,
                                named.objectHandle,
                            );
                        };
                        Some(VkDebugUtilsObjectNameInfoEXT {
                            objectHandle: handle,
                            ..*named
                        })
                    }
                    None => None,
                };
                let down_info = copy.as_ref().map_or(info, |c| c as *const _);
                // SAFETY: the next level's own function, with its own handles.
                unsafe { next(down, down_info) }
            }
        };
        // SAFETY: the caller's structure, valid or null, per the API.
        if let (VkResult::SUCCESS, Some(info)) = (result, unsafe { info.as_ref() }) {
            let name = (!info.pObjectName.is_null()).then(|| {
                // SAFETY: a NUL-terminated name when not null, per the API.
                unsafe { std::ffi::CStr::from_ptr(info.pObjectName) }
            });
            state
                .messengers()
                .set_name(info.objectType, info.objectHandle, name);
        }
        result
    })
}

/// The function that handles `name` below the chassis: the layer's hook entry when it hooks the
/// command, else the next level's (with the instance unwrapped).
fn below<L: Registered>(name: &[u8]) -> PFN_vkVoidFunction {
    crate::chassis::hooked::<L>(name, true)
}

/// `vkCreateDebugUtilsMessengerEXT`: the layer's hook or the next level, then the messenger
/// recorded, so that the layer's own messages reach it.
///
/// # Safety
/// As `vkCreateDebugUtilsMessengerEXT`: `instance` is a live instance of this layer's chain,
/// `info` a valid create info, `allocator` null or valid and `p_messenger` writable.
unsafe extern "system" fn create_messenger<L: Registered>(
    instance: VkInstance,
    info: *const VkDebugUtilsMessengerCreateInfoEXT,
    allocator: *const VkAllocationCallbacks,
    p_messenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    guard(|| {
        // SAFETY: a live instance, per the API.
        let Some(state) = (unsafe { L::chassis().instance(instance.0) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let result = match below::<L>(b"vkCreateDebugUtilsMessengerEXT") {
            // SAFETY: the layer's entry point of this command's type, with the caller's arguments.
            Some(hooked) => unsafe {
                std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateDebugUtilsMessengerEXT>(Some(
                    hooked,
                ))
                .map_or(VkResult::ERROR_INITIALIZATION_FAILED, |f| {
                    f(instance, info, allocator, p_messenger)
                })
            },
            None => {
                let (Some(next), Some(down)) = (
                    state.next.vkCreateDebugUtilsMessengerEXT,
                    L::unwrap_instance(&state.hooks, instance),
                ) else {
                    return VkResult::ERROR_INITIALIZATION_FAILED;
                };
                // SAFETY: the next level's own function.
                unsafe { next(down, info, allocator, p_messenger) }
            }
        };
        if result != VkResult::SUCCESS {
            return result;
        }
        // SAFETY: the caller's create info, valid per the API.
        let info = unsafe { info.as_ref() };
        // SAFETY: the caller's output, which the level below wrote as it succeeded.
        let messenger = unsafe { p_messenger.as_ref() };
        if let (Some(info), Some(messenger)) = (info, messenger) {
            state.messengers.add_utils(messenger.0, info);
        }
        result
    })
}

/// `vkDestroyDebugUtilsMessengerEXT`: the messenger forgotten, then the layer's hook or the next
/// level.
///
/// # Safety
/// As `vkDestroyDebugUtilsMessengerEXT`: `instance` is a live instance of this layer's chain,
/// `messenger` null or one of its messengers, `allocator` as at creation.
unsafe extern "system" fn destroy_messenger<L: Registered>(
    instance: VkInstance,
    messenger: VkDebugUtilsMessengerEXT,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: a live instance, per the API.
        let Some(state) = (unsafe { L::chassis().instance(instance.0) }) else {
            return;
        };
        state.messengers.remove(messenger.0, true);
        match below::<L>(b"vkDestroyDebugUtilsMessengerEXT") {
            // SAFETY: as in `create_messenger`.
            Some(hooked) => unsafe {
                if let Some(f) = std::mem::transmute::<
                    PFN_vkVoidFunction,
                    PFN_vkDestroyDebugUtilsMessengerEXT,
                >(Some(hooked))
                {
                    f(instance, messenger, allocator)
                }
            },
            None => {
                if let (Some(next), Some(down)) = (
                    state.next.vkDestroyDebugUtilsMessengerEXT,
                    L::unwrap_instance(&state.hooks, instance),
                ) {
                    // SAFETY: the next level's own function.
                    unsafe { next(down, messenger, allocator) }
                }
            }
        }
    })
}

/// `vkCreateDebugReportCallbackEXT`: as [`create_messenger`], for a report callback.
///
/// # Safety
/// As `vkCreateDebugReportCallbackEXT`: `instance` is a live instance of this layer's chain,
/// `info` a valid create info, `allocator` null or valid and `p_callback` writable.
unsafe extern "system" fn create_report<L: Registered>(
    instance: VkInstance,
    info: *const VkDebugReportCallbackCreateInfoEXT,
    allocator: *const VkAllocationCallbacks,
    p_callback: *mut VkDebugReportCallbackEXT,
) -> VkResult {
    guard(|| {
        // SAFETY: a live instance, per the API.
        let Some(state) = (unsafe { L::chassis().instance(instance.0) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let result = match below::<L>(b"vkCreateDebugReportCallbackEXT") {
            // SAFETY: as in `create_messenger`.
            Some(hooked) => unsafe {
                std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateDebugReportCallbackEXT>(Some(
                    hooked,
                ))
                .map_or(VkResult::ERROR_INITIALIZATION_FAILED, |f| {
                    f(instance, info, allocator, p_callback)
                })
            },
            None => {
                let (Some(next), Some(down)) = (
                    state.next.vkCreateDebugReportCallbackEXT,
                    L::unwrap_instance(&state.hooks, instance),
                ) else {
                    return VkResult::ERROR_INITIALIZATION_FAILED;
                };
                // SAFETY: the next level's own function.
                unsafe { next(down, info, allocator, p_callback) }
            }
        };
        if result != VkResult::SUCCESS {
            return result;
        }
        // SAFETY: the caller's create info, valid per the API.
        let info = unsafe { info.as_ref() };
        // SAFETY: the caller's output, which the level below wrote as it succeeded.
        let callback = unsafe { p_callback.as_ref() };
        if let (Some(info), Some(callback)) = (info, callback) {
            state.messengers.add_report(callback.0, info);
        }
        result
    })
}

/// `vkDestroyDebugReportCallbackEXT`: as [`destroy_messenger`], for a report callback.
///
/// # Safety
/// As `vkDestroyDebugReportCallbackEXT`: `instance` is a live instance of this layer's chain,
/// `callback` null or one of its callbacks, `allocator` as at creation.
unsafe extern "system" fn destroy_report<L: Registered>(
    instance: VkInstance,
    callback: VkDebugReportCallbackEXT,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: a live instance, per the API.
        let Some(state) = (unsafe { L::chassis().instance(instance.0) }) else {
            return;
        };
        state.messengers.remove(callback.0, false);
        match below::<L>(b"vkDestroyDebugReportCallbackEXT") {
            // SAFETY: as in `create_messenger`.
            Some(hooked) => unsafe {
                if let Some(f) = std::mem::transmute::<
                    PFN_vkVoidFunction,
                    PFN_vkDestroyDebugReportCallbackEXT,
                >(Some(hooked))
                {
                    f(instance, callback, allocator)
                }
            },
            None => {
                if let (Some(next), Some(down)) = (
                    state.next.vkDestroyDebugReportCallbackEXT,
                    L::unwrap_instance(&state.hooks, instance),
                ) {
                    // SAFETY: the next level's own function.
                    unsafe { next(down, callback, allocator) }
                }
            }
        }
    })
}

/// `vkGetPhysicalDeviceToolProperties`: the tools below, then this layer.
///
/// # Safety
/// As `vkGetPhysicalDeviceToolProperties`: `physical_device` is a live physical device of this
/// layer's chain, `p_count` valid and `p_properties` null or an array of `*p_count` elements.
unsafe extern "system" fn tool_properties<L: Registered>(
    physical_device: VkPhysicalDevice,
    p_count: *mut u32,
    p_properties: *mut VkPhysicalDeviceToolProperties,
) -> VkResult {
    guard(|| {
        let Some(own) = L::PROPERTIES else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let mut tool = VkPhysicalDeviceToolProperties {
            purposes: L::TOOL_PURPOSES,
            ..Default::default()
        };
        copy(&mut tool.name, own.name);
        copy(&mut tool.version, &own.implementation_version.to_string());
        copy(&mut tool.description, own.description);
        copy(&mut tool.layer, own.name);
        // SAFETY: a live physical device, per the API.
        let state = unsafe { L::chassis().instance(physical_device.0) };
        // The layer's own hook of the command when it has one (it unwraps), else the next level.
        // SAFETY: the layer's entry point of this command's type.
        let hooked: PFN_vkGetPhysicalDeviceToolProperties =
            unsafe { std::mem::transmute(below::<L>(b"vkGetPhysicalDeviceToolProperties")) };
        let next = match hooked {
            Some(f) => Some((f, physical_device)),
            None => state.and_then(|s| {
                Some((
                    s.next.vkGetPhysicalDeviceToolProperties?,
                    L::unwrap_physical_device(&s.hooks, physical_device)?,
                ))
            }),
        };
        // SAFETY: the next level's own function and the caller's arrays, per the API.
        unsafe {
            let mut below = 0u32;
            if let Some((f, pd)) = next {
                let r = f(pd, &mut below, std::ptr::null_mut());
                if r != VkResult::SUCCESS {
                    below = 0;
                }
            }
            let mut tools = vec![VkPhysicalDeviceToolProperties::default(); below as usize];
            if let (Some((f, pd)), true) = (next, below > 0) {
                if f(pd, &mut below, tools.as_mut_ptr()) != VkResult::SUCCESS && below == 0 {
                    tools.clear();
                }
                tools.truncate(below as usize);
            }
            tools.push(tool);
            fill_array(&tools, p_count, p_properties)
        }
    })
}

fn copy(out: &mut [std::ffi::c_char], text: &str) {
    let n = text.len().min(out.len() - 1);
    for (d, s) in out.iter_mut().zip(&text.as_bytes()[..n]) {
        *d = *s as std::ffi::c_char;
    }
    out[n] = 0;
}
