//! The end of every instance chain: the generated default terminators (physical-device commands
//! forwarded to the owning driver), with the loader's own implementations laid over them for the
//! commands the loader answers itself: debug messengers (`debug`), surfaces (`surface`) and the
//! queries it emulates for older drivers (`emulation`).

use std::ffi::CStr;
use std::sync::OnceLock;

use vk_generated::types::PFN_vkVoidFunction;
use vk_generated::{DispatchTable, InstanceDispatchTable, COMMANDS};

use crate::{debug, emulation, surface};

/// Erases a terminator's signature for a dispatch-table slot.
macro_rules! erased {
    ($f:path) => {
        // SAFETY: stored in the slot of the command whose signature `$f` has; read back as that type.
        Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ()) })
    };
}
pub(crate) use erased;

/// The loader-implemented instance-chain terminators, by command name.
fn loader_terminators() -> Vec<(&'static CStr, PFN_vkVoidFunction)> {
    let debug = [
        (c"vkCreateDebugUtilsMessengerEXT", erased!(debug::terminator_vkCreateDebugUtilsMessengerEXT)),
        (c"vkDestroyDebugUtilsMessengerEXT", erased!(debug::terminator_vkDestroyDebugUtilsMessengerEXT)),
        (c"vkSubmitDebugUtilsMessageEXT", erased!(debug::terminator_vkSubmitDebugUtilsMessageEXT)),
        (c"vkCreateDebugReportCallbackEXT", erased!(debug::terminator_vkCreateDebugReportCallbackEXT)),
        (c"vkDestroyDebugReportCallbackEXT", erased!(debug::terminator_vkDestroyDebugReportCallbackEXT)),
        (c"vkDebugReportMessageEXT", erased!(debug::terminator_vkDebugReportMessageEXT)),
    ];
    debug.into_iter().chain(surface::terminators()).chain(emulation::terminators()).collect()
}

/// The terminator table every instance starts from (built once per process).
pub fn instance_terminators() -> &'static InstanceDispatchTable {
    static TABLE: OnceLock<InstanceDispatchTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = InstanceDispatchTable::default();
        for (slot, &id) in InstanceDispatchTable::COMMANDS.iter().enumerate() {
            debug_assert_eq!(COMMANDS[id as usize].slot as usize, slot);
            table.slots_mut()[slot] = crate::trampolines::TERMINATORS[id as usize];
        }
        for (name, terminator) in loader_terminators() {
            // Every name above is a registry instance command: the lookup cannot miss.
            if let Some(command) = vk_generated::lookup::command(name.to_bytes()) {
                table.slots_mut()[command.info().slot as usize] = terminator;
            }
        }
        table
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loader_terminator_names_an_instance_or_physical_device_command() {
        for (name, _) in loader_terminators() {
            let command = vk_generated::lookup::command(name.to_bytes()).expect("a registry command");
            assert_ne!(command.info().level, vk_generated::CommandLevel::Device, "{name:?}");
        }
        assert!(instance_terminators().vkCreateDebugUtilsMessengerEXT.is_some());
    }

    /// A generated terminator passes a `VkSurfaceKHR` down unchanged, which is wrong for drivers
    /// that made their own surfaces: every command that takes one must be the loader's.
    #[test]
    fn every_command_taking_a_surface_has_a_loader_terminator() {
        let source = include_str!("../../generated/src/gen/trampolines.rs");
        let ours: Vec<&CStr> = loader_terminators().iter().map(|(name, _)| *name).collect();
        let mut checked = 0;
        for item in source.split("pub unsafe extern \"system\" fn terminator_").skip(1) {
            let (name, rest) = item.split_once('(').unwrap();
            let params = rest.split_once(')').unwrap().0;
            if params.contains("VkSurfaceKHR") || params.contains("VkPhysicalDeviceSurfaceInfo2KHR") {
                checked += 1;
                assert!(ours.iter().any(|n| n.to_bytes() == name.as_bytes()), "{name} passes a surface through unchanged");
            }
        }
        assert!(checked >= 9, "only {checked} surface commands found: has the generated file changed shape?");
    }
}
