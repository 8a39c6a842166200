//! The hook traits (`layer/src/gen/hooks.rs`, written by `cargo xtask regen`): [`InstanceHooks`]
//! and [`DeviceHooks`], one pre-call validate, pre-call record and post-call record method per
//! hookable command (every non-global command of the registry but the chassis's own), the
//! hookable commands' ids, and the check of a layer's hook list against them.

// The parameters keep their C names (`pCreateInfo`) and number, as in the specification.
#[allow(non_snake_case, clippy::too_many_arguments)]
#[rustfmt::skip]
#[path = "gen/hooks.rs"]
mod generated;

pub use generated::{DeviceHooks, InstanceHooks, DEVICE_HOOKABLE, INSTANCE_HOOKABLE};

/// A hook list names only hookable commands: [`declare_layer!`](crate::declare_layer) evaluates
/// this at compile time.
pub const fn check_hooks(hooks: &[u16]) {
    let mut i = 0;
    while i < hooks.len() {
        assert!(
            contains(INSTANCE_HOOKABLE, hooks[i]) || contains(DEVICE_HOOKABLE, hooks[i]),
            "Layer::HOOKS names a command without generated hooks"
        );
        i += 1;
    }
}

const fn contains(list: &[u16], id: u16) -> bool {
    let mut i = 0;
    while i < list.len() {
        if list[i] == id {
            return true;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk_generated::command_id as id;

    #[test]
    fn every_non_global_command_but_the_chassis_ones_is_hookable_at_its_level() {
        for hookable in [
            id::vkEnumeratePhysicalDevices,
            id::vkGetPhysicalDeviceProperties2,
            id::vkCreateDebugUtilsMessengerEXT,
        ] {
            assert!(INSTANCE_HOOKABLE.contains(&hookable) && !DEVICE_HOOKABLE.contains(&hookable));
        }
        for hookable in [
            id::vkCmdDraw,
            id::vkQueueSubmit,
            id::vkCreateImage,
            id::vkQueuePresentKHR,
        ] {
            assert!(DEVICE_HOOKABLE.contains(&hookable) && !INSTANCE_HOOKABLE.contains(&hookable));
        }
        let chassis = [
            id::vkCreateInstance,
            id::vkDestroyInstance,
            id::vkCreateDevice,
            id::vkDestroyDevice,
        ];
        let global = [
            id::vkEnumerateInstanceVersion,
            id::vkEnumerateInstanceExtensionProperties,
        ];
        for not_hookable in chassis
            .iter()
            .chain(&global)
            .chain(&[id::vkGetInstanceProcAddr, id::vkGetDeviceProcAddr])
        {
            assert!(
                !INSTANCE_HOOKABLE.contains(not_hookable)
                    && !DEVICE_HOOKABLE.contains(not_hookable)
            );
        }
        // Every non-global command but the chassis's five (vkCreateInstance is global).
        let non_global = vk_generated::COMMANDS
            .iter()
            .filter(|c| c.level != vk_generated::CommandLevel::Global)
            .count();
        assert_eq!(
            INSTANCE_HOOKABLE.len() + DEVICE_HOOKABLE.len(),
            non_global - 5
        );
    }

    #[test]
    fn hook_lists_are_checked() {
        check_hooks(&[id::vkCmdDraw, id::vkEnumeratePhysicalDevices]);
    }

    #[test]
    #[should_panic(expected = "without generated hooks")]
    fn a_chassis_command_is_not_a_hook() {
        check_hooks(&[id::vkCmdDraw, id::vkCreateDevice]);
    }
}
