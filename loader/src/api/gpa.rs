//! `vkGetInstanceProcAddr`: the loader's own functions for the commands it implements by hand,
//! the generated trampolines for the rest, NULL for extension commands not enabled on the instance.

use std::ffi::{c_char, CStr};

use vk_generated::CommandLevel;
use vk_generated::types::*;

use crate::dispatch::names::{from_instance_extensions_only, is_vulkan_name};
use crate::object::instance::Instance;
use crate::trampolines::TRAMPOLINES;
use crate::{ffi, hand_written};

/// `vkGetInstanceProcAddr`.
///
/// # Safety
/// Vulkan's valid usage: `instance` NULL or a valid `VkInstance` of this loader; `pName` a
/// NUL-terminated string. Checked anyway: a NULL `pName` or one not starting with "vk" answers
/// NULL without reading further; a non-NULL `instance` without the loader's magic word is
/// reported and the process stops (see `handles`).
#[inline]
pub unsafe extern "system" fn vkGetInstanceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    // Not a Vulkan name: NULL without a lookup or asking the drivers (as vkGetDeviceProcAddr).
    // SAFETY: `pName` is NULL or NUL-terminated (the contract).
    if !unsafe { is_vulkan_name(pName) } {
        return None;
    }
    // SAFETY: the contract, with `pName` now known not to be NULL.
    unsafe { instance_proc_addr(instance, pName) }
}

/// [`vkGetInstanceProcAddr`] past its cheap check.
///
/// # Safety
/// As [`vkGetInstanceProcAddr`], with `pName` not NULL.
#[inline(never)]
unsafe extern "system" fn instance_proc_addr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetInstanceProcAddr", None, || {
        if !instance.is_null() {
            // SAFETY: a valid dispatchable handle is readable as a `HandleHeader` (the contract).
            unsafe { crate::handles::check_instance(instance.0, "vkGetInstanceProcAddr", "instance") };
        }
        // SAFETY: `pName` is a non-NULL NUL-terminated string (the contract).
        let Some(name) = (unsafe { vk_generated::lookup::command_c(pName) }) else {
            // Not in the registry: an extension command some driver or layer may know.
            // SAFETY: NULL or, with its magic word checked above, an instance of this loader;
            // `pName` NUL-terminated.
            let (instance, name) = unsafe { (Instance::from_handle(instance)?, CStr::from_ptr(pName)) };
            return match &instance.layers {
                Some(_) => crate::chain::instance_layers::unknown_command(instance, name),
                None => crate::dispatch::unknown::instance_proc_addr(instance, name),
            };
        };
        let info = name.info();
        if name.command == vk_generated::command_id::vkGetInstanceProcAddr {
            return hand_written(name.command);
        }
        if info.level == CommandLevel::Global {
            // SAFETY: NULL or, with its magic word checked above, an instance of this loader.
            return unsafe { global_command(instance, name.command) };
        }
        // SAFETY: as above.
        let instance = unsafe { Instance::from_handle(instance) }?;
        // The spec's table: core commands of every version, and device commands whatever is
        // enabled (the device decides), are handed out; instance and physical-device extension
        // commands only when an enabled extension provides them, and so are device commands
        // that only instance extensions provide. (The Khronos loader also hands out 1.1+ core
        // commands on a 1.0 instance; applications rely on it.)
        let needs_extension = match info.level {
            CommandLevel::Device => from_instance_extensions_only(name),
            _ => !name.is_core(),
        };
        if needs_extension && !available(name, instance) {
            return None;
        }
        hand_written(name.command).or(TRAMPOLINES[name.command as usize])
    })
}

/// A global command: always with a NULL instance; with an instance, only for applications of
/// Vulkan 1.2 and older (the spec made it NULL from 1.2.193 on, and the Khronos loader applies
/// that from instances of 1.3).
///
/// # Safety
/// `instance` is NULL or an instance this loader created.
unsafe fn global_command(instance: VkInstance, command: u16) -> PFN_vkVoidFunction {
    // SAFETY: NULL or an instance of this loader (the contract).
    match unsafe { Instance::from_handle(instance) } {
        Some(instance) if vk_generated::api_version_major_minor(instance.api_version) >= (1, 3) => None,
        _ => hand_written(command),
    }
}

/// Whether the instance's version and extensions provide `name`. Device extensions are enabled on
/// devices, not instances: their physical-device commands (`vkGetPhysicalDevicePresentRectanglesKHR`
/// of `VK_KHR_swapchain`) count as provided, as the spec says for `vkGetInstanceProcAddr`.
fn available(name: &vk_generated::lookup::CommandName, instance: &Instance) -> bool {
    if name.is_available(instance.api_version, &instance.enabled_extensions) {
        return true;
    }
    if name.info().level != CommandLevel::PhysicalDevice {
        return false;
    }
    let mut with_device_extensions = instance.enabled_extensions.clone();
    with_device_extensions.union_with(device_extensions());
    name.is_available(instance.api_version, &with_device_extensions)
}

/// Every device extension of the registry, collected once (a loop over all extensions on every
/// lookup doubled the cost of `vkGetInstanceProcAddr` over all names).
fn device_extensions() -> &'static vk_generated::lookup::ExtensionSet {
    static SET: std::sync::OnceLock<vk_generated::lookup::ExtensionSet> = std::sync::OnceLock::new();
    SET.get_or_init(|| {
        let mut set = vk_generated::lookup::ExtensionSet::new();
        for (id, extension) in vk_generated::EXTENSIONS.iter().enumerate() {
            if extension.kind == vk_generated::ExtensionKind::Device {
                set.insert(id as u16);
            }
        }
        set
    })
}

