//! A complete layer on the `vk-layer` SDK: it passes every call through and counts the
//! `vkCmdDraw` calls recorded on each device, printing `SDK_DRAW_COUNT <n>` when the device is
//! destroyed. `loader/tests/layers.rs` runs it through our loader.

// The library is named as layers are (`libVkLayer_<name>.so`).
#![allow(non_snake_case)]

use std::sync::atomic::{AtomicU32, Ordering};

use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer};

/// The layer.
pub struct DrawCount;

/// Nothing to keep per instance.
pub struct Instance;

/// The draws recorded on one device.
pub struct Device {
    draws: AtomicU32,
}

impl Layer for DrawCount {
    type Instance = Instance;
    type Device = Device;

    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        Ok(Instance)
    }

    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        Ok(Device {
            draws: AtomicU32::new(0),
        })
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {}

#[vk_layer::hooks]
impl DeviceHooks for Device {
    fn pre_call_record_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
        self.draws.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        println!("SDK_DRAW_COUNT {}", self.draws.load(Ordering::Relaxed));
    }
}

vk_layer::declare_layer!(DrawCount);
