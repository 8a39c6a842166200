//! The end of every instance chain: the generated default terminators (physical-device commands
//! forwarded to the owning driver), with the loader's own implementations laid over them for the
//! commands the loader answers itself: debug messengers (`debug`), surfaces (`surface`) and the
//! queries it emulates for older drivers (`emulation`).

use vk_generated::types::PFN_vkVoidFunction;
use vk_generated::{CommandLevel, DispatchTable, InstanceDispatchTable, COMMANDS};

use crate::{debug, emulation, surface};

/// Erases a terminator's signature for a dispatch-table slot (usable in constants).
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

/// The loader's terminators for the debug commands (`debug`).
const DEBUG: &[(u16, PFN_vkVoidFunction)] = &[
    terminator!(vkCreateDebugUtilsMessengerEXT => debug::terminator_vkCreateDebugUtilsMessengerEXT),
    terminator!(vkDestroyDebugUtilsMessengerEXT => debug::terminator_vkDestroyDebugUtilsMessengerEXT),
    terminator!(vkSubmitDebugUtilsMessageEXT => debug::terminator_vkSubmitDebugUtilsMessageEXT),
    terminator!(vkCreateDebugReportCallbackEXT => debug::terminator_vkCreateDebugReportCallbackEXT),
    terminator!(vkDestroyDebugReportCallbackEXT => debug::terminator_vkDestroyDebugReportCallbackEXT),
    terminator!(vkDebugReportMessageEXT => debug::terminator_vkDebugReportMessageEXT),
];

/// The loader-implemented instance-chain terminators, by command id.
const LOADER_TERMINATORS: [&[(u16, PFN_vkVoidFunction)]; 3] = [DEBUG, surface::TERMINATORS, emulation::TERMINATORS];

/// The terminator table every instance starts from. Built when the library compiles (a static the
/// dynamic linker relocates), so a first `vkCreateInstance` copies it instead of assembling it
/// from the command tables, pages of which it would fault in for the purpose.
pub static INSTANCE_TERMINATORS: InstanceDispatchTable = instance_terminators();

const fn instance_terminators() -> InstanceDispatchTable {
    const SLOTS: usize = InstanceDispatchTable::COMMANDS.len();
    let mut slots: [PFN_vkVoidFunction; SLOTS] = [None; SLOTS];
    let mut slot = 0;
    while slot < SLOTS {
        let id = InstanceDispatchTable::COMMANDS[slot] as usize;
        assert!(COMMANDS[id].slot as usize == slot);
        slots[slot] = crate::trampolines::TERMINATORS[id];
        slot += 1;
    }
    let mut list = 0;
    while list < LOADER_TERMINATORS.len() {
        let mut i = 0;
        while i < LOADER_TERMINATORS[list].len() {
            let (id, terminator) = LOADER_TERMINATORS[list][i];
            let command = &COMMANDS[id as usize];
            assert!(!matches!(command.level, CommandLevel::Device), "a loader terminator for a device command");
            slots[command.slot as usize] = terminator;
            i += 1;
        }
        list += 1;
    }
    // SAFETY: the table is `COMMANDS.len()` pointer-sized `Option<fn>` slots (the `DispatchTable`
    // contract), and `slots` is exactly that.
    unsafe { std::mem::transmute::<[PFN_vkVoidFunction; SLOTS], InstanceDispatchTable>(slots) }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    fn loader_terminators() -> impl Iterator<Item = &'static (u16, PFN_vkVoidFunction)> {
        LOADER_TERMINATORS.iter().flat_map(|list| list.iter())
    }

    #[test]
    fn the_table_holds_the_loader_terminators_over_the_generated_ones() {
        let slots = INSTANCE_TERMINATORS.slots();
        for &(id, terminator) in loader_terminators() {
            assert_eq!(slots[COMMANDS[id as usize].slot as usize], terminator);
        }
        let destroy = vk_generated::command_id::vkDestroyInstance as usize;
        assert_eq!(slots[COMMANDS[destroy].slot as usize], crate::trampolines::TERMINATORS[destroy]);
        assert!(INSTANCE_TERMINATORS.vkCreateDebugUtilsMessengerEXT.is_some());
    }

    /// A generated terminator passes a `VkSurfaceKHR` down unchanged, which is wrong for drivers
    /// that made their own surfaces: every command that takes one must be the loader's.
    #[test]
    fn every_command_taking_a_surface_has_a_loader_terminator() {
        let source = include_str!("../../generated/src/gen/trampolines.rs");
        let ours: Vec<&CStr> = loader_terminators().map(|&(id, _)| COMMANDS[id as usize].name()).collect();
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
