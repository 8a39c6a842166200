//! Seed 003's sample layer in Rust: draw-call statistics per command buffer (see README.md).
//!
//! The structure follows the guide: instance and device dispatch tables keyed by the loader's
//! dispatch pointer (`key`), the chain information read from `VkLayer*CreateInfo`, a few
//! intercepted commands that do their work and call the next level.

#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

use vk_generated::layer_abi::*;
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
type Gdpa = unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction;

#[derive(Default, Clone, Copy)]
struct CommandStats {
    draws: u32,
    instances: u32,
    vertices: u32,
}

#[derive(Default)]
struct State {
    instances: HashMap<usize, (InstanceDispatchTable, Gipa)>,
    devices: HashMap<usize, (DeviceDispatchTable, Gdpa)>,
    stats: HashMap<usize, CommandStats>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(State::default))
}

/// The loader's dispatch pointer: the same for a device and all its queues and command buffers.
unsafe fn key(handle: *mut c_void) -> usize {
    *(handle as *const usize)
}

/// A copy of the next level's device function, taken under the lock and called after it.
fn next_device<T>(handle: *mut c_void, get: impl FnOnce(&DeviceDispatchTable) -> Option<T>) -> Option<T> {
    let k = unsafe { key(handle) };
    with_state(|s| s.devices.get(&k).and_then(|(t, _)| get(t)))
}

macro_rules! pfn {
    ($f:expr, $t:ty) => {
        Some(std::mem::transmute::<$t, unsafe extern "system" fn()>($f))
    };
}

type CreateInstanceFn = unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult;
type DestroyInstanceFn = unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks);
type CreateDeviceFn = unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult;
type DestroyDeviceFn = unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks);
type BeginFn = unsafe extern "system" fn(VkCommandBuffer, *const VkCommandBufferBeginInfo) -> VkResult;
type EndFn = unsafe extern "system" fn(VkCommandBuffer) -> VkResult;
type DrawFn = unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, u32);
type DrawIndexedFn = unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, i32, u32);

/// The device-level commands this layer intercepts.
unsafe fn device_command(name: &[u8]) -> PFN_vkVoidFunction {
    match name {
        b"vkGetDeviceProcAddr" => pfn!(SampleLayer_GetDeviceProcAddr, Gdpa),
        b"vkDestroyDevice" => pfn!(DestroyDevice, DestroyDeviceFn),
        b"vkBeginCommandBuffer" => pfn!(BeginCommandBuffer, BeginFn),
        b"vkEndCommandBuffer" => pfn!(EndCommandBuffer, EndFn),
        b"vkCmdDraw" => pfn!(CmdDraw, DrawFn),
        b"vkCmdDrawIndexed" => pfn!(CmdDrawIndexed, DrawIndexedFn),
        _ => None,
    }
}

#[no_mangle]
pub unsafe extern "system" fn SampleLayer_GetInstanceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    if pName.is_null() {
        return None;
    }
    let name = CStr::from_ptr(pName).to_bytes();
    let own = match name {
        b"vkGetInstanceProcAddr" => pfn!(SampleLayer_GetInstanceProcAddr, Gipa),
        b"vkCreateInstance" => pfn!(CreateInstance, CreateInstanceFn),
        b"vkDestroyInstance" => pfn!(DestroyInstance, DestroyInstanceFn),
        b"vkCreateDevice" => pfn!(CreateDevice, CreateDeviceFn),
        _ => device_command(name),
    };
    if own.is_some() || instance.is_null() {
        return own;
    }
    let next = with_state(|s| s.instances.get(&key(instance.0)).map(|(_, gipa)| *gipa))?;
    next(instance, pName)
}

#[no_mangle]
pub unsafe extern "system" fn SampleLayer_GetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    if pName.is_null() || device.is_null() {
        return None;
    }
    if let Some(own) = device_command(CStr::from_ptr(pName).to_bytes()) {
        return Some(own);
    }
    let next = with_state(|s| s.devices.get(&key(device.0)).map(|(_, gdpa)| *gdpa))?;
    next(device, pName)
}

unsafe extern "system" fn CreateInstance(info: *const VkInstanceCreateInfo, alloc: *const VkAllocationCallbacks, pInstance: *mut VkInstance) -> VkResult {
    // The loader's link info for this layer: take the next GetInstanceProcAddr, move the chain on.
    let mut p = (*info).pNext as *mut VkLayerInstanceCreateInfo;
    while !p.is_null() && ((*p).sType != VkStructureType::LOADER_INSTANCE_CREATE_INFO || (*p).function != VkLayerFunction::LAYER_LINK_INFO) {
        p = (*p).pNext as *mut VkLayerInstanceCreateInfo;
    }
    if p.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    let link = (*p).u.pLayerInfo;
    let Some(next_gipa) = (*link).pfnNextGetInstanceProcAddr else { return VkResult::ERROR_INITIALIZATION_FAILED };
    (*p).u.pLayerInfo = (*link).pNext;
    let create: PFN_vkCreateInstance = std::mem::transmute(next_gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
    let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
    let result = create(info, alloc, pInstance);
    if result == VkResult::SUCCESS {
        let instance = *pInstance;
        let table = InstanceDispatchTable::load(|name| next_gipa(instance, name.as_ptr()));
        with_state(|s| s.instances.insert(key(instance.0), (table, next_gipa)));
    }
    result
}

unsafe extern "system" fn DestroyInstance(instance: VkInstance, alloc: *const VkAllocationCallbacks) {
    let Some((table, _)) = with_state(|s| s.instances.remove(&key(instance.0))) else { return };
    if let Some(destroy) = table.vkDestroyInstance {
        destroy(instance, alloc);
    }
}

unsafe extern "system" fn CreateDevice(
    physical_device: VkPhysicalDevice,
    info: *const VkDeviceCreateInfo,
    alloc: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    let mut p = (*info).pNext as *mut VkLayerDeviceCreateInfo;
    while !p.is_null() && ((*p).sType != VkStructureType::LOADER_DEVICE_CREATE_INFO || (*p).function != VkLayerFunction::LAYER_LINK_INFO) {
        p = (*p).pNext as *mut VkLayerDeviceCreateInfo;
    }
    if p.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    let link = (*p).u.pLayerInfo;
    let (Some(next_gipa), Some(next_gdpa)) = ((*link).pfnNextGetInstanceProcAddr, (*link).pfnNextGetDeviceProcAddr) else {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    };
    (*p).u.pLayerInfo = (*link).pNext;
    let create: PFN_vkCreateDevice = std::mem::transmute(next_gipa(VkInstance::NULL, c"vkCreateDevice".as_ptr()));
    let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
    let result = create(physical_device, info, alloc, pDevice);
    if result == VkResult::SUCCESS {
        let device = *pDevice;
        let table = DeviceDispatchTable::load(|name| next_gdpa(device, name.as_ptr()));
        with_state(|s| s.devices.insert(key(device.0), (table, next_gdpa)));
    }
    result
}

unsafe extern "system" fn DestroyDevice(device: VkDevice, alloc: *const VkAllocationCallbacks) {
    let Some((table, _)) = with_state(|s| s.devices.remove(&key(device.0))) else { return };
    if let Some(destroy) = table.vkDestroyDevice {
        destroy(device, alloc);
    }
}

unsafe extern "system" fn BeginCommandBuffer(cmd: VkCommandBuffer, info: *const VkCommandBufferBeginInfo) -> VkResult {
    with_state(|s| s.stats.insert(cmd.0 as usize, CommandStats::default()));
    match next_device(cmd.0, |t| t.vkBeginCommandBuffer) {
        Some(f) => f(cmd, info),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}

unsafe extern "system" fn CmdDraw(cmd: VkCommandBuffer, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) {
    with_state(|s| {
        let stats = s.stats.entry(cmd.0 as usize).or_default();
        stats.draws += 1;
        stats.instances += instance_count;
        stats.vertices += instance_count * vertex_count;
    });
    if let Some(f) = next_device(cmd.0, |t| t.vkCmdDraw) {
        f(cmd, vertex_count, instance_count, first_vertex, first_instance)
    }
}

unsafe extern "system" fn CmdDrawIndexed(cmd: VkCommandBuffer, index_count: u32, instance_count: u32, first_index: u32, vertex_offset: i32, first_instance: u32) {
    with_state(|s| {
        let stats = s.stats.entry(cmd.0 as usize).or_default();
        stats.draws += 1;
        stats.instances += instance_count;
        stats.vertices += instance_count * index_count;
    });
    if let Some(f) = next_device(cmd.0, |t| t.vkCmdDrawIndexed) {
        f(cmd, index_count, instance_count, first_index, vertex_offset, first_instance)
    }
}

unsafe extern "system" fn EndCommandBuffer(cmd: VkCommandBuffer) -> VkResult {
    let s = with_state(|s| s.stats.get(&(cmd.0 as usize)).copied().unwrap_or_default());
    println!("Command buffer {:p} ended with {} draws, {} instances and {} vertices", cmd.0, s.draws, s.instances, s.vertices);
    match next_device(cmd.0, |t| t.vkEndCommandBuffer) {
        Some(f) => f(cmd),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}
