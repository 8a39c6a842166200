//! The end of every instance chain: the generated default terminators (physical-device commands
//! forwarded to the owning driver), with the loader's own implementations laid over them for the
//! commands the loader answers itself: debug messengers (`debug`), surfaces (`surface`) and the
//! queries it emulates for older drivers (`emulation`).

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

/// A loader terminator as `(command id, erased function)`: the name is checked against the
/// registry when this compiles, and the table is filled without a name lookup.
macro_rules! terminator {
    ($name:ident => $f:path) => {
        (vk_generated::command_id::$name, $crate::terminators::erased!($f))
    };
}
pub(crate) use terminator;

/// The loader-implemented instance-chain terminators, by command id.
fn loader_terminators() -> Vec<(u16, PFN_vkVoidFunction)> {
    let debug = [
        terminator!(vkCreateDebugUtilsMessengerEXT => debug::terminator_vkCreateDebugUtilsMessengerEXT),
        terminator!(vkDestroyDebugUtilsMessengerEXT => debug::terminator_vkDestroyDebugUtilsMessengerEXT),
        terminator!(vkSubmitDebugUtilsMessageEXT => debug::terminator_vkSubmitDebugUtilsMessageEXT),
        terminator!(vkCreateDebugReportCallbackEXT => debug::terminator_vkCreateDebugReportCallbackEXT),
        terminator!(vkDestroyDebugReportCallbackEXT => debug::terminator_vkDestroyDebugReportCallbackEXT),
        terminator!(vkDebugReportMessageEXT => debug::terminator_vkDebugReportMessageEXT),
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
        for (id, terminator) in loader_terminators() {
            table.slots_mut()[COMMANDS[id as usize].slot as usize] = terminator;
        }
        table
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    #[test]
    fn every_loader_terminator_names_an_instance_or_physical_device_command() {
        for (id, _) in loader_terminators() {
            let info = &COMMANDS[id as usize];
            assert_ne!(info.level, vk_generated::CommandLevel::Device, "{:?}", info.name());
        }
        assert!(instance_terminators().vkCreateDebugUtilsMessengerEXT.is_some());
    }

    /// A generated terminator passes a `VkSurfaceKHR` down unchanged, which is wrong for drivers
    /// that made their own surfaces: every command that takes one must be the loader's.
    #[test]
    fn every_command_taking_a_surface_has_a_loader_terminator() {
        let source = include_str!("../../generated/src/gen/trampolines.rs");
        let ours: Vec<&CStr> = loader_terminators().iter().map(|&(id, _)| COMMANDS[id as usize].name()).collect();
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
