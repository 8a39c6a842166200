//! `VK_LAYER_RUST_wrap_all`: a layer on the `vk-layer` SDK that wraps every handle it can. Each
//! instance, physical device, device, queue and command buffer the application gets is the
//! layer's own dispatchable object, and every non-dispatchable handle (images, buffers, pipelines,
//! surfaces, swapchains, ...) a number of the layer's: all of them distinct from the driver's.
//! The SDK's generated entry points, for every command (`intercept(*)`), unwrap each handle on the
//! way down and wrap each one coming back (`Layer::WRAPS_HANDLES`). One map per instance, shared
//! with its devices, since device-level commands take instance-level handles (a swapchain's
//! surface). `loader/tests/wrap_all.rs` runs `vulkaninfo` and the compute program through it.

// The library is named as layers are (`libVkLayer_<name>.so`).
#![allow(non_snake_case)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer, LayerProperties,
    NonDispatchableHandle, Wrappers,
};

/// The layer.
pub struct WrapAll;

/// The object types wrapped in this process, printed (`WRAP_ALL_WRAPPED <types>`) when an
/// instance is destroyed if `WRAP_ALL_REPORT` is set: what the tests check was wrapped.
static WRAPPED: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Notes that a handle of `object_type` was wrapped.
fn wrapped(object_type: VkObjectType) {
    WRAPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(object_type.0);
}

impl Drop for Instance {
    fn drop(&mut self) {
        if std::env::var_os("WRAP_ALL_REPORT").is_some() {
            let types = WRAPPED.lock().unwrap_or_else(|e| e.into_inner());
            let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            eprintln!("WRAP_ALL_WRAPPED {}", types.join(" "));
        }
    }
}

/// An instance: its wrapper, and the wrappers of everything made from it.
pub struct Instance {
    wrappers: Arc<Wrappers>,
    instance: VkInstance,
}

/// A device: its wrapper, and its instance's wrappers.
pub struct Device {
    wrappers: Arc<Wrappers>,
    device: VkDevice,
}

impl Layer for WrapAll {
    type Instance = Instance;
    type Device = Device;

    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_RUST_wrap_all",
        spec_version: vk_layer::vk::make_api_version(0, 1, 4, 0),
        implementation_version: 1,
        description: "wraps every handle",
        instance_extensions: &[],
        device_extensions: &[],
    });
    const WRAPS_HANDLES: bool = true;

    fn create_instance(
        _: &VkInstanceCreateInfo,
        instance: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        let wrappers = Arc::new(Wrappers::new());
        wrapped(VkObjectType::INSTANCE);
        // SAFETY: the instance the next level has just made.
        let instance = unsafe { wrappers.wrap_dispatchable(instance) };
        Ok(Instance { wrappers, instance })
    }
    fn returned_instance(object: &Instance, _: VkInstance) -> VkInstance {
        object.instance
    }
    fn unwrap_instance(object: &Instance, handle: VkInstance) -> Option<VkInstance> {
        object.wrappers.unwrap_dispatchable(handle)
    }
    fn wrap_physical_device(object: &Instance, handle: VkPhysicalDevice) -> VkPhysicalDevice {
        wrapped(VkObjectType::PHYSICAL_DEVICE);
        // SAFETY: a physical device the next level has just returned.
        unsafe { object.wrappers.wrap_dispatchable(handle) }
    }
    fn unwrap_physical_device(
        object: &Instance,
        handle: VkPhysicalDevice,
    ) -> Option<VkPhysicalDevice> {
        object.wrappers.unwrap_dispatchable(handle)
    }
    fn wrap_instance_handle<H: NonDispatchableHandle>(object: &Instance, handle: H) -> H {
        wrapped(H::OBJECT_TYPE);
        object.wrappers.wrap(handle)
    }
    fn unwrap_instance_handle<H: NonDispatchableHandle>(object: &Instance, handle: H) -> Option<H> {
        object.wrappers.unwrap(handle)
    }
    fn forget_instance_handle<H: NonDispatchableHandle>(object: &Instance, handle: H) {
        object.wrappers.forget(handle);
    }

    fn create_device(
        instance: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        device: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        let wrappers = instance.wrappers.clone();
        wrapped(VkObjectType::DEVICE);
        // SAFETY: the device the next level has just made.
        let device = unsafe { wrappers.wrap_dispatchable(device) };
        Ok(Device { wrappers, device })
    }
    fn returned_device(object: &Device, _: VkDevice) -> VkDevice {
        object.device
    }
    fn unwrap_device(object: &Device, handle: VkDevice) -> Option<VkDevice> {
        object.wrappers.unwrap_dispatchable(handle)
    }
    fn wrap_queue(object: &Device, handle: VkQueue) -> VkQueue {
        wrapped(VkObjectType::QUEUE);
        // SAFETY: a queue the next level has just returned.
        unsafe { object.wrappers.wrap_dispatchable(handle) }
    }
    fn unwrap_queue(object: &Device, handle: VkQueue) -> Option<VkQueue> {
        object.wrappers.unwrap_dispatchable(handle)
    }
    fn wrap_command_buffer(object: &Device, handle: VkCommandBuffer) -> VkCommandBuffer {
        wrapped(VkObjectType::COMMAND_BUFFER);
        // SAFETY: a command buffer the next level has just returned.
        unsafe { object.wrappers.wrap_dispatchable(handle) }
    }
    fn unwrap_command_buffer(object: &Device, handle: VkCommandBuffer) -> Option<VkCommandBuffer> {
        object.wrappers.unwrap_dispatchable(handle)
    }
    fn forget_command_buffer(object: &Device, handle: VkCommandBuffer) {
        object.wrappers.forget_dispatchable(handle);
    }
    fn wrap_handle<H: NonDispatchableHandle>(object: &Device, handle: H) -> H {
        wrapped(H::OBJECT_TYPE);
        object.wrappers.wrap(handle)
    }
    fn unwrap_handle<H: NonDispatchableHandle>(object: &Device, handle: H) -> Option<H> {
        object.wrappers.unwrap(handle)
    }
    fn forget_handle<H: NonDispatchableHandle>(object: &Device, handle: H) {
        object.wrappers.forget(handle);
    }
}

/// The device's own wrapper goes with it (the instance's lives as long as the map).
impl Drop for Device {
    fn drop(&mut self) {
        self.wrappers.forget_dispatchable(self.device);
    }
}

#[vk_layer::hooks(intercept(*))]
impl InstanceHooks for Instance {}

#[vk_layer::hooks(intercept(*))]
impl DeviceHooks for Device {}

vk_layer::declare_layer!(WrapAll);
