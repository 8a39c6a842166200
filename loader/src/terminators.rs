//! The end of every instance chain: the generated default terminators (physical-device commands
//! forwarded to the owning driver), with the loader's own implementations laid over them for the
//! commands the loader answers itself (debug messengers; surfaces and emulated queries to come).

use std::ffi::CStr;
use std::sync::OnceLock;

use vk_generated::types::PFN_vkVoidFunction;
use vk_generated::{DispatchTable, InstanceDispatchTable, COMMANDS};

use crate::debug;

/// Erases a terminator's signature for a dispatch-table slot.
macro_rules! erased {
    ($f:path) => {
        // SAFETY: stored in the slot of the command whose signature `$f` has; read back as that type.
        Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>($f as *const ()) })
    };
}

/// The loader-implemented instance-level terminators, by command name.
fn loader_terminators() -> [(&'static CStr, PFN_vkVoidFunction); 6] {
    [
        (c"vkCreateDebugUtilsMessengerEXT", erased!(debug::terminator_vkCreateDebugUtilsMessengerEXT)),
        (c"vkDestroyDebugUtilsMessengerEXT", erased!(debug::terminator_vkDestroyDebugUtilsMessengerEXT)),
        (c"vkSubmitDebugUtilsMessageEXT", erased!(debug::terminator_vkSubmitDebugUtilsMessageEXT)),
        (c"vkCreateDebugReportCallbackEXT", erased!(debug::terminator_vkCreateDebugReportCallbackEXT)),
        (c"vkDestroyDebugReportCallbackEXT", erased!(debug::terminator_vkDestroyDebugReportCallbackEXT)),
        (c"vkDebugReportMessageEXT", erased!(debug::terminator_vkDebugReportMessageEXT)),
    ]
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
    fn every_loader_terminator_names_an_instance_command() {
        for (name, _) in loader_terminators() {
            let command = vk_generated::lookup::command(name.to_bytes()).expect("a registry command");
            assert_eq!(command.info().level, vk_generated::CommandLevel::Instance, "{name:?}");
        }
        assert!(instance_terminators().vkCreateDebugUtilsMessengerEXT.is_some());
    }
}
