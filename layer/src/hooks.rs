//! The hook traits (`layer/src/gen/hooks.rs`, written by `cargo xtask regen`): [`InstanceHooks`]
//! and [`DeviceHooks`], one pre-call validate, pre-call record and post-call record method per
//! hookable command (every non-global command of the registry but the chassis's own), each given
//! the next level's dispatch table; the hookable commands' ids, by command and by hook-method
//! suffix ([`instance_hook_ids`], [`device_hook_ids`]).
//!
//! Which commands a layer hooks is not written by hand: `#[vk_layer::hooks]` on the `impl` block
//! of the hook methods lists them ([`InstanceHooked`], [`DeviceHooked`]), and
//! [`declare_layer!`](crate::declare_layer) checks the lists at compile time.

// The parameters keep their C names (`pCreateInfo`) and number, as in the specification.
#[allow(non_snake_case, clippy::too_many_arguments)]
#[rustfmt::skip]
#[path = "gen/hooks.rs"]
mod generated;

pub use generated::{
    device_hook_ids, instance_hook_ids, DeviceHooks, InstanceHooks, DEVICE_HOOKABLE,
    DEVICE_HOOK_NAMES, INSTANCE_HOOKABLE, INSTANCE_HOOK_NAMES,
};

/// The instance-level commands a layer's instance object hooks: those whose hook methods its
/// `#[vk_layer::hooks] impl InstanceHooks` block implements, and those it names in
/// `intercept(...)`.
///
/// # Safety
/// Implemented by `#[vk_layer::hooks]` only: a list written by hand can leave out a hook method
/// that then never runs, which is what this trait exists to rule out.
pub unsafe trait InstanceHooked {
    /// The hooked commands' ids (`vk_generated::command_id`).
    const COMMANDS: &'static [u16];
}

/// The device-level commands a layer's device object hooks, as [`InstanceHooked`].
///
/// # Safety
/// As [`InstanceHooked`].
pub unsafe trait DeviceHooked {
    /// The hooked commands' ids.
    const COMMANDS: &'static [u16];
}

/// Hook lists name only hookable commands of their level: [`declare_layer!`](crate::declare_layer)
/// evaluates this at compile time.
pub const fn check_hooks(instance: &[u16], device: &[u16]) {
    let mut i = 0;
    while i < instance.len() {
        assert!(
            contains(INSTANCE_HOOKABLE, instance[i]),
            "an instance hook list names a command without instance-level hooks"
        );
        i += 1;
    }
    let mut i = 0;
    while i < device.len() {
        assert!(
            contains(DEVICE_HOOKABLE, device[i]),
            "a device hook list names a command without device-level hooks"
        );
        i += 1;
    }
}

/// How many of the hookable commands `ids` (named `names`, in the same order) are listed in
/// `listed` or have a name starting with one of `families` (`""`: every command): what
/// `#[vk_layer::hooks(intercept(cmd_*))]` hooks. Evaluated at compile time; a family that names
/// no command fails the build (a misspelt prefix).
#[doc(hidden)]
pub const fn selected_hooks_len(
    ids: &[u16],
    names: &[&str],
    listed: &[u16],
    families: &[&str],
) -> usize {
    let mut f = 0;
    while f < families.len() {
        let mut matched = false;
        let mut i = 0;
        while i < names.len() {
            matched |= starts_with(names[i], families[f]);
            i += 1;
        }
        assert!(
            matched,
            "intercept(prefix*) names no hookable command of this level"
        );
        f += 1;
    }
    let mut n = 0;
    let mut i = 0;
    while i < ids.len() {
        if selected(ids[i], names[i], listed, families) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The commands [`selected_hooks_len`] counts, in the order of `ids`.
#[doc(hidden)]
pub const fn selected_hooks<const N: usize>(
    ids: &[u16],
    names: &[&str],
    listed: &[u16],
    families: &[&str],
) -> [u16; N] {
    let mut out = [0; N];
    let (mut n, mut i) = (0, 0);
    while i < ids.len() {
        if selected(ids[i], names[i], listed, families) {
            out[n] = ids[i];
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "the selection's length");
    out
}

const fn selected(id: u16, name: &str, listed: &[u16], families: &[&str]) -> bool {
    if contains(listed, id) {
        return true;
    }
    let mut f = 0;
    while f < families.len() {
        if starts_with(name, families[f]) {
            return true;
        }
        f += 1;
    }
    false
}

const fn starts_with(name: &str, prefix: &str) -> bool {
    let (name, prefix) = (name.as_bytes(), prefix.as_bytes());
    if prefix.len() > name.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if name[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
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
    fn hook_ids_name_the_commands_by_method_suffix() {
        assert_eq!(device_hook_ids::cmd_draw, id::vkCmdDraw);
        assert_eq!(
            device_hook_ids::cmd_draw_cluster_huawei,
            id::vkCmdDrawClusterHUAWEI
        );
        assert_eq!(
            instance_hook_ids::enumerate_physical_devices,
            id::vkEnumeratePhysicalDevices
        );
    }

    #[test]
    fn hook_lists_are_checked() {
        check_hooks(&[id::vkEnumeratePhysicalDevices], &[id::vkCmdDraw]);
    }

    #[test]
    #[should_panic(expected = "without device-level hooks")]
    fn a_chassis_command_is_not_a_hook() {
        check_hooks(&[], &[id::vkCmdDraw, id::vkCreateDevice]);
    }

    #[test]
    #[should_panic(expected = "without instance-level hooks")]
    fn a_device_command_is_not_an_instance_hook() {
        check_hooks(&[id::vkCmdDraw], &[]);
    }
}
