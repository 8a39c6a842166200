//! `#[vk_layer::hooks]`: the hooked commands are the ones whose hook methods a block implements
//! (each command once, whichever of its three methods), plus `intercept(...)`; a block with no
//! methods hooks nothing.

use vk_layer::vk::command_id as id;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceHooked, DeviceHooks, InstanceHooked, InstanceHooks};

struct Nothing;
#[vk_layer::hooks]
impl InstanceHooks for Nothing {}

struct Some3;
#[vk_layer::hooks(intercept(queue_submit))]
impl DeviceHooks for Some3 {
    fn pre_call_validate_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) -> Option<()> {
        None
    }
    fn post_call_record_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
    }
    fn pre_call_record_cmd_dispatch(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
    ) {
    }
}

/// A type may be both an instance and a device object.
struct Both;
#[vk_layer::hooks]
impl InstanceHooks for Both {
    fn post_call_record_enumerate_physical_devices(
        &self,
        _: &InstanceDispatchTable,
        _: VkInstance,
        _: *mut u32,
        _: *mut VkPhysicalDevice,
        _: VkResult,
    ) {
    }
}
#[vk_layer::hooks]
impl DeviceHooks for Both {}

#[test]
fn the_methods_written_are_the_commands_hooked() {
    assert!(<Nothing as InstanceHooked>::COMMANDS.is_empty());
    assert_eq!(
        <Some3 as DeviceHooked>::COMMANDS,
        &[id::vkCmdDraw, id::vkCmdDispatch, id::vkQueueSubmit]
    );
    assert_eq!(
        <Both as InstanceHooked>::COMMANDS,
        &[id::vkEnumeratePhysicalDevices]
    );
    assert!(<Both as DeviceHooked>::COMMANDS.is_empty());
}
