//! Device, queue, command pool and command buffer commands.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use vk_generated::layer_abi::ICD_LOADER_MAGIC;

use crate::config;
use vk_generated::types::*;

use crate::instance::{features_supported, physical_device_ref, QUEUE_COUNT};
use crate::{c_string_list, device_proc_addr, guard};

/// A `VkDevice`. The first word is the loader's (ICD_LOADER_MAGIC until it takes the object).
#[repr(C)]
struct Device {
    loader_data: usize,
    /// The physical device's `deviceID`, for the synthetic commands to say where they ran.
    device_id: u32,
    /// The physical device it was created from (the driver's handle).
    physical_device: VkPhysicalDevice,
    queues: Vec<Box<Queue>>,
    /// Command pools, each owning its command buffers; destroyed with the device at the latest.
    pools: Mutex<Vec<Box<CommandPool>>>,
}

#[repr(C)]
struct Queue {
    loader_data: usize,
    family: u32,
    index: u32,
}

/// A `VkCommandPool` (non-dispatchable: its address is the handle).
struct CommandPool {
    buffers: Vec<Box<CommandBuffer>>,
}

#[repr(C)]
struct CommandBuffer {
    loader_data: usize,
    /// `vkCmdDraw` and `vkCmdDispatch` calls since `vkBeginCommandBuffer`.
    draws: AtomicU32,
}

impl Device {
    fn pools(&self) -> MutexGuard<'_, Vec<Box<CommandPool>>> {
        self.pools
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn pool_handle(pool: &CommandPool) -> VkCommandPool {
    VkCommandPool(pool as *const CommandPool as u64)
}

fn command_buffer_handle(buffer: &CommandBuffer) -> VkCommandBuffer {
    VkCommandBuffer(buffer as *const CommandBuffer as *mut c_void)
}

unsafe fn device_ref<'a>(device: VkDevice) -> Option<&'a Device> {
    (device.0 as *const Device).as_ref()
}

/// The `deviceID` of the physical device `device` was created from.
pub(crate) unsafe fn device_id(device: VkDevice) -> Option<u32> {
    device_ref(device).map(|d| d.device_id)
}

/// The physical device (the driver's handle) `device` was created from.
pub(crate) unsafe fn physical_device_of(device: VkDevice) -> Option<VkPhysicalDevice> {
    device_ref(device).map(|d| d.physical_device)
}

unsafe fn command_buffer_ref<'a>(command_buffer: VkCommandBuffer) -> Option<&'a CommandBuffer> {
    (command_buffer.0 as *const CommandBuffer).as_ref()
}

pub unsafe extern "system" fn vkCreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let (Some(pd), Some(info), false) = (
            physical_device_ref(physicalDevice),
            pCreateInfo.as_ref(),
            pDevice.is_null(),
        ) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if crate::config::fault("fail_create_device") {
            return VkResult::ERROR_DEVICE_LOST;
        }
        if crate::config::fault("null_device") {
            pDevice.write(VkDevice::NULL);
            return VkResult::SUCCESS;
        }
        for name in c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount) {
            if !pd.supports_extension(name) {
                return VkResult::ERROR_EXTENSION_NOT_PRESENT;
            }
        }
        if let Some(features) = info.pEnabledFeatures.as_ref() {
            if !features_supported(features) {
                return VkResult::ERROR_FEATURE_NOT_PRESENT;
            }
        }
        let mut next = info.pNext as *const VkBaseInStructure;
        while let Some(item) = next.as_ref() {
            if item.sType == VkStructureType::PHYSICAL_DEVICE_FEATURES_2
                && !features_supported(&(*(next as *const VkPhysicalDeviceFeatures2)).features)
            {
                return VkResult::ERROR_FEATURE_NOT_PRESENT;
            }
            // A real driver would dereference these as its own physical devices: the loader
            // must have replaced the application's (loader) handles with the driver's.
            if item.sType == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO {
                let group = &*(next as *const VkDeviceGroupDeviceCreateInfo);
                let members = std::slice::from_raw_parts(group.pPhysicalDevices, group.physicalDeviceCount as usize);
                if members.iter().any(|m| !vk_generated::layer_abi::valid_loader_magic_value(m.0)) {
                    eprintln!("vk_test_driver: VkDeviceGroupDeviceCreateInfo names a physical device that is not the driver's");
                    return VkResult::ERROR_INITIALIZATION_FAILED;
                }
            }
            next = item.pNext;
        }
        let queue_infos = match (info.queueCreateInfoCount, info.pQueueCreateInfos.is_null()) {
            (0, _) => &[][..],
            (_, true) => return VkResult::ERROR_INITIALIZATION_FAILED,
            (n, false) => std::slice::from_raw_parts(info.pQueueCreateInfos, n as usize),
        };
        let mut queues = Vec::new();
        for (i, q) in queue_infos.iter().enumerate() {
            let duplicate = queue_infos[..i]
                .iter()
                .any(|p| p.queueFamilyIndex == q.queueFamilyIndex);
            if q.queueFamilyIndex != 0
                || q.queueCount == 0
                || q.queueCount > QUEUE_COUNT
                || duplicate
            {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            }
            queues.extend((0..q.queueCount).map(|index| {
                Box::new(Queue {
                    loader_data: ICD_LOADER_MAGIC,
                    family: q.queueFamilyIndex,
                    index,
                })
            }));
        }
        let device = Box::new(Device {
            loader_data: ICD_LOADER_MAGIC,
            device_id: pd.spec.device_id,
            physical_device: physicalDevice,
            queues,
            pools: Mutex::new(Vec::new()),
        });
        pDevice.write(VkDevice(Box::into_raw(device).cast()));
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkDestroyDevice(
    device: VkDevice,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !device.is_null() {
            drop(Box::from_raw(device.0 as *mut Device));
        }
    })
}

pub unsafe extern "system" fn vkGetDeviceProcAddr(
    _device: VkDevice,
    pName: *const c_char,
) -> PFN_vkVoidFunction {
    guard(None, || device_proc_addr(pName))
}

pub unsafe extern "system" fn vkGetDeviceQueue(
    device: VkDevice,
    queueFamilyIndex: u32,
    queueIndex: u32,
    pQueue: *mut VkQueue,
) {
    guard((), || {
        let (Some(device), false) = (device_ref(device), pQueue.is_null()) else {
            return;
        };
        let queue = device
            .queues
            .iter()
            .find(|q| q.family == queueFamilyIndex && q.index == queueIndex);
        pQueue.write(queue.map_or(VkQueue::NULL, |q| {
            VkQueue(&**q as *const Queue as *mut c_void)
        }));
    })
}

pub unsafe extern "system" fn vkDeviceWaitIdle(device: VkDevice) -> VkResult {
    if device.is_null() {
        VkResult::ERROR_DEVICE_LOST
    } else {
        VkResult::SUCCESS
    }
}

pub unsafe extern "system" fn vkQueueWaitIdle(queue: VkQueue) -> VkResult {
    if queue.is_null() {
        VkResult::ERROR_DEVICE_LOST
    } else {
        VkResult::SUCCESS
    }
}

pub unsafe extern "system" fn vkCreateCommandPool(
    device: VkDevice,
    pCreateInfo: *const VkCommandPoolCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pCommandPool: *mut VkCommandPool,
) -> VkResult {
    guard(VkResult::ERROR_OUT_OF_HOST_MEMORY, || {
        let (Some(device), false, false) = (
            device_ref(device),
            pCreateInfo.is_null(),
            pCommandPool.is_null(),
        ) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let pool = Box::new(CommandPool {
            buffers: Vec::new(),
        });
        pCommandPool.write(pool_handle(&pool));
        device.pools().push(pool);
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkDestroyCommandPool(
    device: VkDevice,
    commandPool: VkCommandPool,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        let Some(device) = device_ref(device) else {
            return;
        };
        let removed = {
            let mut pools = device.pools();
            let position = pools.iter().position(|p| pool_handle(p) == commandPool);
            position.map(|i| pools.swap_remove(i))
        };
        drop(removed);
    })
}

pub unsafe extern "system" fn vkAllocateCommandBuffers(
    device: VkDevice,
    pAllocateInfo: *const VkCommandBufferAllocateInfo,
    pCommandBuffers: *mut VkCommandBuffer,
) -> VkResult {
    guard(VkResult::ERROR_OUT_OF_HOST_MEMORY, || {
        let (Some(device), Some(info)) = (device_ref(device), pAllocateInfo.as_ref()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if info.commandBufferCount > 0 && pCommandBuffers.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let mut pools = device.pools();
        let Some(pool) = pools
            .iter_mut()
            .find(|p| pool_handle(p) == info.commandPool)
        else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        for i in 0..info.commandBufferCount as usize {
            let magic = if config::no_magic() { 0 } else { ICD_LOADER_MAGIC };
            let buffer = Box::new(CommandBuffer {
                loader_data: magic,
                draws: AtomicU32::new(0),
            });
            pCommandBuffers.add(i).write(command_buffer_handle(&buffer));
            pool.buffers.push(buffer);
        }
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkFreeCommandBuffers(
    device: VkDevice,
    commandPool: VkCommandPool,
    commandBufferCount: u32,
    pCommandBuffers: *const VkCommandBuffer,
) {
    guard((), || {
        let (Some(device), false) = (device_ref(device), pCommandBuffers.is_null()) else {
            return;
        };
        let handles = std::slice::from_raw_parts(pCommandBuffers, commandBufferCount as usize);
        let mut pools = device.pools();
        let Some(pool) = pools.iter_mut().find(|p| pool_handle(p) == commandPool) else {
            return;
        };
        // Unknown or already freed handles are ignored rather than freed twice.
        pool.buffers
            .retain(|b| !handles.contains(&command_buffer_handle(b)));
    })
}

pub unsafe extern "system" fn vkBeginCommandBuffer(
    commandBuffer: VkCommandBuffer,
    _pBeginInfo: *const VkCommandBufferBeginInfo,
) -> VkResult {
    match command_buffer_ref(commandBuffer) {
        Some(buffer) => {
            buffer.draws.store(0, Ordering::Relaxed);
            VkResult::SUCCESS
        }
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}

pub unsafe extern "system" fn vkEndCommandBuffer(commandBuffer: VkCommandBuffer) -> VkResult {
    if commandBuffer.is_null() {
        VkResult::ERROR_INITIALIZATION_FAILED
    } else {
        VkResult::SUCCESS
    }
}

unsafe fn count_draw(command_buffer: VkCommandBuffer) {
    if let Some(buffer) = command_buffer_ref(command_buffer) {
        buffer.draws.fetch_add(1, Ordering::Relaxed);
    }
}

pub unsafe extern "system" fn vkCmdDraw(
    commandBuffer: VkCommandBuffer,
    _vertexCount: u32,
    _instanceCount: u32,
    _firstVertex: u32,
    _firstInstance: u32,
) {
    count_draw(commandBuffer);
}

pub unsafe extern "system" fn vkCmdDispatch(
    commandBuffer: VkCommandBuffer,
    _groupCountX: u32,
    _groupCountY: u32,
    _groupCountZ: u32,
) {
    count_draw(commandBuffer);
}

/// Records nothing: the driver has no execution to order.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "system" fn vkCmdPipelineBarrier(
    _commandBuffer: VkCommandBuffer,
    _srcStageMask: VkPipelineStageFlags,
    _dstStageMask: VkPipelineStageFlags,
    _dependencyFlags: VkDependencyFlags,
    _memoryBarrierCount: u32,
    _pMemoryBarriers: *const VkMemoryBarrier,
    _bufferMemoryBarrierCount: u32,
    _pBufferMemoryBarriers: *const VkBufferMemoryBarrier,
    _imageMemoryBarrierCount: u32,
    _pImageMemoryBarriers: *const VkImageMemoryBarrier,
) {
}

/// `vkGetTestDriverDrawCountTEST` (test only): `vkCmdDraw` + `vkCmdDispatch` calls recorded into
/// the command buffer since its `vkBeginCommandBuffer`.
pub unsafe extern "system" fn vkGetTestDriverDrawCountTEST(commandBuffer: VkCommandBuffer) -> u32 {
    command_buffer_ref(commandBuffer).map_or(0, |b| b.draws.load(Ordering::Relaxed))
}

// The signatures above are exactly the registry's.
const _: () = {
    let _: PFN_vkCreateDevice = Some(vkCreateDevice);
    let _: PFN_vkDestroyDevice = Some(vkDestroyDevice);
    let _: PFN_vkGetDeviceProcAddr = Some(vkGetDeviceProcAddr);
    let _: PFN_vkGetDeviceQueue = Some(vkGetDeviceQueue);
    let _: PFN_vkDeviceWaitIdle = Some(vkDeviceWaitIdle);
    let _: PFN_vkQueueWaitIdle = Some(vkQueueWaitIdle);
    let _: PFN_vkCreateCommandPool = Some(vkCreateCommandPool);
    let _: PFN_vkDestroyCommandPool = Some(vkDestroyCommandPool);
    let _: PFN_vkAllocateCommandBuffers = Some(vkAllocateCommandBuffers);
    let _: PFN_vkFreeCommandBuffers = Some(vkFreeCommandBuffers);
    let _: PFN_vkBeginCommandBuffer = Some(vkBeginCommandBuffer);
    let _: PFN_vkEndCommandBuffer = Some(vkEndCommandBuffer);
    let _: PFN_vkCmdDraw = Some(vkCmdDraw);
    let _: PFN_vkCmdDispatch = Some(vkCmdDispatch);
};
