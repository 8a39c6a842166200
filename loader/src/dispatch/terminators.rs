//! The end of every instance chain: the generated default terminators (physical-device commands
//! forwarded to the owning driver), with the loader's own implementations laid over them for the
//! commands the loader answers itself: debug messengers (`messengers`), surfaces (`wsi`) and the
//! queries it emulates for older drivers (`emulation`).

use vk_generated::types::PFN_vkVoidFunction;
use vk_generated::{CommandLevel, DispatchTable, InstanceDispatchTable, COMMANDS};

use crate::dispatch::{emulation, messengers};
use crate::ffi::terminator;
use crate::wsi;

/// The loader's terminators for the debug commands (`messengers`).
const DEBUG: &[(u16, PFN_vkVoidFunction)] = &[
    terminator!(vkCreateDebugUtilsMessengerEXT => messengers::terminator_vkCreateDebugUtilsMessengerEXT),
    terminator!(vkDestroyDebugUtilsMessengerEXT => messengers::terminator_vkDestroyDebugUtilsMessengerEXT),
    terminator!(vkSubmitDebugUtilsMessageEXT => messengers::terminator_vkSubmitDebugUtilsMessageEXT),
    terminator!(vkCreateDebugReportCallbackEXT => messengers::terminator_vkCreateDebugReportCallbackEXT),
    terminator!(vkDestroyDebugReportCallbackEXT => messengers::terminator_vkDestroyDebugReportCallbackEXT),
    terminator!(vkDebugReportMessageEXT => messengers::terminator_vkDebugReportMessageEXT),
];

/// The loader-implemented instance-chain terminators, by command id.
const LOADER_TERMINATORS: [&[(u16, PFN_vkVoidFunction)]; 3] = [DEBUG, wsi::TERMINATORS, emulation::TERMINATORS];

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
        // Addresses compared as numbers: the table must hold these very functions.
        let address = |f: PFN_vkVoidFunction| f.map(|f| f as usize);
        let slots = INSTANCE_TERMINATORS.slots();
        for &(id, terminator) in loader_terminators() {
            assert_eq!(address(slots[COMMANDS[id as usize].slot as usize]), address(terminator));
        }
        let destroy = vk_generated::command_id::vkDestroyInstance as usize;
        assert_eq!(address(slots[COMMANDS[destroy].slot as usize]), address(crate::trampolines::TERMINATORS[destroy]));
        assert!(INSTANCE_TERMINATORS.vkCreateDebugUtilsMessengerEXT.is_some());
    }

    /// A generated terminator passes a `VkSurfaceKHR` down unchanged, which is wrong for drivers
    /// that made their own surfaces: every command that takes one must be the loader's.
    #[test]
    fn every_command_taking_a_surface_has_a_loader_terminator() {
        let source = include_str!("../../../generated/src/gen/trampolines.rs");
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
