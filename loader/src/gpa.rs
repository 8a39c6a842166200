//! `vkGetInstanceProcAddr`: the loader's own functions for the commands it implements by hand,
//! the generated trampolines for the rest, NULL for names not enabled on the instance.

use std::ffi::{c_char, CStr};

use vk_generated::types::*;
use vk_generated::CommandLevel;

use crate::trampolines::TRAMPOLINES;

use crate::instance::Instance;
use crate::{device, ffi, instance, physical_device};

type VoidFunction = unsafe extern "system" fn();

macro_rules! void_fn {
    ($f:path) => {
        // SAFETY: function pointers are handed out as PFN_vkVoidFunction and cast back by callers.
        Some(unsafe { std::mem::transmute::<*const (), VoidFunction>($f as *const ()) })
    };
}

/// The loader's implementation of a hand-written command, by canonical name.
pub fn hand_written(name: &CStr) -> PFN_vkVoidFunction {
    match name.to_bytes() {
        b"vkCreateInstance" => void_fn!(instance::vkCreateInstance),
        b"vkDestroyInstance" => void_fn!(instance::vkDestroyInstance),
        b"vkEnumerateInstanceVersion" => void_fn!(instance::vkEnumerateInstanceVersion),
        b"vkEnumerateInstanceExtensionProperties" => void_fn!(instance::vkEnumerateInstanceExtensionProperties),
        b"vkEnumerateInstanceLayerProperties" => void_fn!(instance::vkEnumerateInstanceLayerProperties),
        b"vkGetInstanceProcAddr" => void_fn!(vkGetInstanceProcAddr),
        b"vkGetDeviceProcAddr" => void_fn!(device::vkGetDeviceProcAddr),
        b"vkEnumeratePhysicalDevices" => void_fn!(physical_device::vkEnumeratePhysicalDevices),
        b"vkEnumeratePhysicalDeviceGroups" => void_fn!(physical_device::vkEnumeratePhysicalDeviceGroups),
        b"vkEnumerateDeviceExtensionProperties" => void_fn!(physical_device::vkEnumerateDeviceExtensionProperties),
        b"vkEnumerateDeviceLayerProperties" => void_fn!(physical_device::vkEnumerateDeviceLayerProperties),
        b"vkCreateDevice" => void_fn!(device::vkCreateDevice),
        b"vkDestroyDevice" => void_fn!(device::vkDestroyDevice),
        _ => None,
    }
}

pub unsafe extern "system" fn vkGetInstanceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetInstanceProcAddr", None, || {
        if pName.is_null() {
            return None;
        }
        let name = vk_generated::lookup::command_c(pName)?;
        let info = name.info();
        if info.level == CommandLevel::Global || info.name == c"vkGetInstanceProcAddr" {
            return hand_written(info.name);
        }
        let instance = Instance::from_handle(instance)?;
        // Device commands are handed out whatever is enabled (the device decides); instance and
        // physical-device commands only when the instance's version or extensions provide them.
        if info.level != CommandLevel::Device && !name.is_available(instance.api_version, &instance.enabled_extensions) {
            return None;
        }
        hand_written(info.name).or(TRAMPOLINES[name.command as usize])
    })
}
