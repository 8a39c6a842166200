//! Seed 003's sample layer in Rust on the `vk-layer` SDK: draw-call statistics per command buffer
//! (see README.md).
//!
//! The guide's plumbing (dispatch tables keyed by the loader's dispatch pointer, the chain
//! information of `VkLayer*CreateInfo`, `GetProcAddr` answering) is the SDK's chassis; what is
//! left is the guide's point: four hooked commands that count and print.

// The library is named as layers are (`libVkLayer_<name>.so`); the exports as in the guide.
#![allow(non_snake_case)]

use std::collections::HashMap;
use std::sync::Mutex;

use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer};

#[derive(Default, Clone, Copy)]
struct CommandStats {
    draws: u32,
    instances: u32,
    vertices: u32,
}

/// The layer.
pub struct SampleLayer;

/// Nothing to keep per instance.
pub struct Instance;

/// The statistics of the device's command buffers, by command buffer.
pub struct Device {
    stats: Mutex<HashMap<usize, CommandStats>>,
}

impl Device {
    fn count(&self, cmd: VkCommandBuffer, instances: u32, vertices: u32) {
        let mut all = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        let stats = all.entry(cmd.0 as usize).or_default();
        stats.draws += 1;
        stats.instances += instances;
        stats.vertices += instances * vertices;
    }
}

impl Layer for SampleLayer {
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
            stats: Mutex::new(HashMap::new()),
        })
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {}

#[vk_layer::hooks]
impl DeviceHooks for Device {
    fn pre_call_record_begin_command_buffer(
        &self,
        _: &vk_layer::vk::DeviceDispatchTable,
        cmd: VkCommandBuffer,
        _: *const VkCommandBufferBeginInfo,
    ) {
        let mut all = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        all.insert(cmd.0 as usize, CommandStats::default());
    }

    fn pre_call_record_cmd_draw(
        &self,
        _: &vk_layer::vk::DeviceDispatchTable,
        cmd: VkCommandBuffer,
        vertex_count: u32,
        instance_count: u32,
        _: u32,
        _: u32,
    ) {
        self.count(cmd, instance_count, vertex_count);
    }

    fn pre_call_record_cmd_draw_indexed(
        &self,
        _: &vk_layer::vk::DeviceDispatchTable,
        cmd: VkCommandBuffer,
        index_count: u32,
        instance_count: u32,
        _: u32,
        _: i32,
        _: u32,
    ) {
        self.count(cmd, instance_count, index_count);
    }

    fn pre_call_record_end_command_buffer(&self, _: &vk_layer::vk::DeviceDispatchTable, cmd: VkCommandBuffer) {
        let all = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        let s = all.get(&(cmd.0 as usize)).copied().unwrap_or_default();
        println!(
            "Command buffer {:p} ended with {} draws, {} instances and {} vertices",
            cmd.0, s.draws, s.instances, s.vertices
        );
    }
}

// As in the guide: only renamed GetProcAddr functions, which the manifest maps.
vk_layer::declare_layer!(SampleLayer {
    get_instance_proc_addr: SampleLayer_GetInstanceProcAddr,
    get_device_proc_addr: SampleLayer_GetDeviceProcAddr,
});
