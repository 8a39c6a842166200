//! Device, queue, command pool and command buffer commands.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use vk_generated::layer_abi::ICD_LOADER_MAGIC;

use crate::config;
use vk_generated::types::*;

use crate::ffi::{c_string_list, slice};
use crate::instance::{features_supported, physical_device_ref, QUEUE_COUNT};
use crate::{device_proc_addr, guard};

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
    /// The device that owns it (set once the device has its address).
    device: *const Device,
    /// `vkQueueSubmit` calls that succeeded, and the draws of the command buffers they submitted.
    submits: AtomicU32,
    submitted_draws: AtomicU32,
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

/// The device behind a handle, `None` for NULL.
///
/// # Safety
/// `device` is NULL or a device this driver made and has not destroyed, alive for `'a`.
unsafe fn device_ref<'a>(device: VkDevice) -> Option<&'a Device> {
    // SAFETY: NULL or a live `Device` of ours (this function's contract).
    unsafe { (device.0 as *const Device).as_ref() }
}

/// The `deviceID` of the physical device `device` was created from.
///
/// # Safety
/// As [`device_ref`].
pub(crate) unsafe fn device_id(device: VkDevice) -> Option<u32> {
    // SAFETY: this function's contract.
    unsafe { device_ref(device) }.map(|d| d.device_id)
}

/// The physical device (the driver's handle) `device` was created from.
///
/// # Safety
/// As [`device_ref`].
pub(crate) unsafe fn physical_device_of(device: VkDevice) -> Option<VkPhysicalDevice> {
    // SAFETY: this function's contract.
    unsafe { device_ref(device) }.map(|d| d.physical_device)
}

/// The command buffer behind a handle, `None` for NULL.
///
/// # Safety
/// `command_buffer` is NULL or a command buffer this driver allocated and has not freed (nor its
/// pool or device destroyed), alive for `'a`.
unsafe fn command_buffer_ref<'a>(command_buffer: VkCommandBuffer) -> Option<&'a CommandBuffer> {
    // SAFETY: NULL or a live `CommandBuffer` of ours (this function's contract).
    unsafe { (command_buffer.0 as *const CommandBuffer).as_ref() }
}

/// `vkCreateDevice`: checks the extensions, features and queues asked for, and that a device
/// group names the driver's own physical devices.
///
/// # Safety
/// Valid usage of `vkCreateDevice`: `physicalDevice` is one this driver made and has not freed,
/// `pCreateInfo` is a valid `VkDeviceCreateInfo` (its extension names, features, queue create
/// infos and `pNext` chain included; the physical devices of a `VkDeviceGroupDeviceCreateInfo`
/// are valid handles, whose first word is readable), and `pDevice` is valid for a write. A NULL
/// `physicalDevice`, `pCreateInfo` or `pDevice`, or NULL queue create infos with a count, is
/// answered with `VK_ERROR_INITIALIZATION_FAILED`; the allocator is not used.
pub unsafe extern "system" fn vkCreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live physical device of ours, NULL or a valid create info (this
        // function's contract).
        let (pd, info) = unsafe { (physical_device_ref(physicalDevice), pCreateInfo.as_ref()) };
        let (Some(pd), Some(info), false) = (pd, info, pDevice.is_null()) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if crate::config::fault("fail_create_device") {
            return VkResult::ERROR_DEVICE_LOST;
        }
        if crate::config::fault("null_device") {
            // SAFETY: a non-NULL `pDevice` is writable (this function's contract).
            unsafe { pDevice.write(VkDevice::NULL) };
            return VkResult::SUCCESS;
        }
        // SAFETY: the members of a valid create info (this function's contract).
        let (extensions, features) = unsafe {
            (
                c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount),
                info.pEnabledFeatures.as_ref(),
            )
        };
        for name in extensions {
            if !pd.supports_extension(name) {
                return VkResult::ERROR_EXTENSION_NOT_PRESENT;
            }
        }
        if let Some(features) = features {
            if !features_supported(features) {
                return VkResult::ERROR_FEATURE_NOT_PRESENT;
            }
        }
        // SAFETY: a valid create info's `pNext` chain (this function's contract).
        if let Some(result) = unsafe { check_chain(info.pNext) } {
            return result;
        }
        if info.queueCreateInfoCount > 0 && info.pQueueCreateInfos.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a valid create info's `queueCreateInfoCount` queue create infos (this
        // function's contract).
        let queue_infos = unsafe { slice(info.pQueueCreateInfos, info.queueCreateInfoCount) };
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
                    device: std::ptr::null(),
                    submits: AtomicU32::new(0),
                    submitted_draws: AtomicU32::new(0),
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
        let device = Box::into_raw(device);
        // SAFETY: the device just leaked, whose queues no other thread has seen yet; from here
        // on the queues reach it through this pointer alone, read-only.
        unsafe {
            for queue in &mut (*device).queues {
                queue.device = device;
            }
        }
        // SAFETY: a non-NULL `pDevice` is writable (this function's contract).
        unsafe { pDevice.write(VkDevice(device.cast())) };
        VkResult::SUCCESS
    })
}

/// What `vkCreateDevice` refuses in a create info's `pNext` chain: features it lacks
/// (`VK_ERROR_FEATURE_NOT_PRESENT`), a device group naming physical devices that are not the
/// driver's (`VK_ERROR_INITIALIZATION_FAILED`: a real driver would dereference them as its own,
/// so the loader must have replaced the application's handles with the driver's).
///
/// # Safety
/// `next` is NULL or a valid chain of input structures; the physical devices of a
/// `VkDeviceGroupDeviceCreateInfo` are valid handles, whose first word is readable.
unsafe fn check_chain(next: *const c_void) -> Option<VkResult> {
    // SAFETY: a valid chain (this function's contract).
    for (stype, item) in unsafe { vk_generated::chain_elements(next) } {
        if stype == VkStructureType::PHYSICAL_DEVICE_FEATURES_2 {
            // SAFETY: an element whose `sType` says so is a `VkPhysicalDeviceFeatures2`.
            let features = unsafe { &*item.cast::<VkPhysicalDeviceFeatures2>() };
            if !features_supported(&features.features) {
                return Some(VkResult::ERROR_FEATURE_NOT_PRESENT);
            }
        }
        if stype == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO {
            // SAFETY: an element whose `sType` says so is a `VkDeviceGroupDeviceCreateInfo`, and
            // its `physicalDeviceCount` handles are valid (this function's contract).
            let own = unsafe {
                let group = &*item.cast::<VkDeviceGroupDeviceCreateInfo>();
                let members = slice(group.pPhysicalDevices, group.physicalDeviceCount);
                members.iter().all(|m| vk_generated::layer_abi::valid_loader_magic_value(m.0))
            };
            if !own {
                eprintln!("vk_test_driver: VkDeviceGroupDeviceCreateInfo names a physical device that is not the driver's");
                return Some(VkResult::ERROR_INITIALIZATION_FAILED);
            }
        }
    }
    None
}

/// `vkDestroyDevice`: frees the device, its queues, pools and command buffers.
///
/// # Safety
/// Valid usage of `vkDestroyDevice`: `device` is NULL or a device this driver made, not
/// destroyed before, and no longer used (nor its queues, pools and command buffers) by any other
/// thread. The allocator is not used.
pub unsafe extern "system" fn vkDestroyDevice(
    device: VkDevice,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !device.is_null() {
            // SAFETY: `vkCreateDevice` made it with `Box::into_raw`, and it is destroyed once
            // (this function's contract).
            let device = unsafe { Box::from_raw(device.0 as *mut Device) };
            report_submits(&device);
        }
    })
}

/// `vkGetDeviceProcAddr`: device-level commands only.
///
/// # Safety
/// Valid usage of `vkGetDeviceProcAddr`: `pName` is a NUL-terminated string (NULL is answered with
/// NULL). `device` is not used.
pub unsafe extern "system" fn vkGetDeviceProcAddr(
    _device: VkDevice,
    pName: *const c_char,
) -> PFN_vkVoidFunction {
    // SAFETY: `pName` is NULL or NUL-terminated (this function's contract).
    guard(None, || unsafe { device_proc_addr(pName) })
}

/// `vkGetDeviceQueue`: the queue created for that family and index, or NULL.
///
/// # Safety
/// Valid usage of `vkGetDeviceQueue`: `device` is one this driver made and has not destroyed,
/// `pQueue` is valid for a write. NULL for either is ignored.
pub unsafe extern "system" fn vkGetDeviceQueue(
    device: VkDevice,
    queueFamilyIndex: u32,
    queueIndex: u32,
    pQueue: *mut VkQueue,
) {
    guard((), || {
        // SAFETY: NULL or a live device of ours (this function's contract).
        let (Some(device), false) = (unsafe { device_ref(device) }, pQueue.is_null()) else {
            return;
        };
        let queue = device
            .queues
            .iter()
            .find(|q| q.family == queueFamilyIndex && q.index == queueIndex);
        let handle = queue.map_or(VkQueue::NULL, |q| VkQueue(&**q as *const Queue as *mut c_void));
        // SAFETY: a non-NULL `pQueue` is writable (this function's contract).
        unsafe { pQueue.write(handle) };
    })
}

/// `vkDeviceWaitIdle`: nothing to wait for.
///
/// # Safety
/// None beyond the signature: the handle is only compared with NULL.
pub unsafe extern "system" fn vkDeviceWaitIdle(device: VkDevice) -> VkResult {
    if device.is_null() {
        VkResult::ERROR_DEVICE_LOST
    } else {
        VkResult::SUCCESS
    }
}

/// `vkQueueWaitIdle`: nothing to wait for.
///
/// # Safety
/// None beyond the signature: the handle is only compared with NULL.
pub unsafe extern "system" fn vkQueueWaitIdle(queue: VkQueue) -> VkResult {
    if queue.is_null() {
        VkResult::ERROR_DEVICE_LOST
    } else {
        VkResult::SUCCESS
    }
}

/// What a device's queues were given, on stdout when there was anything (a test reads it
/// through any layer, where a query command would need every layer to pass it down).
fn report_submits(device: &Device) {
    let submits: u32 = device.queues.iter().map(|q| q.submits.load(Ordering::Relaxed)).sum();
    let draws: u32 = device.queues.iter().map(|q| q.submitted_draws.load(Ordering::Relaxed)).sum();
    if submits > 0 {
        println!("vk_test_driver: device destroyed after {submits} submits of {draws} draws");
    }
}

/// `vkQueueSubmit`: counts the submit and the draws recorded in its command buffers. A command
/// buffer that is not one of the queue's device's (a layer's wrapper passed down unwrapped) is
/// refused with `VK_ERROR_DEVICE_LOST` and a line on stderr, where a real driver would read it as
/// its own; the fence and semaphores are not used.
///
/// # Safety
/// Valid usage of `vkQueueSubmit`: `queue` is one this driver made and whose device has not been
/// destroyed (NULL is answered with `VK_ERROR_DEVICE_LOST`), `pSubmits` points to `submitCount`
/// valid `VkSubmitInfo`s, each with `commandBufferCount` readable handles. The handles are only
/// compared with the device's.
pub unsafe extern "system" fn vkQueueSubmit(
    queue: VkQueue,
    submitCount: u32,
    pSubmits: *const VkSubmitInfo,
    _fence: VkFence,
) -> VkResult {
    guard(VkResult::ERROR_DEVICE_LOST, || {
        // SAFETY: NULL or a live queue of ours (this function's contract).
        let Some(target) = (unsafe { (queue.0 as *const Queue).as_ref() }) else {
            return VkResult::ERROR_DEVICE_LOST;
        };
        // SAFETY: `submitCount` valid submit infos (this function's contract).
        let submits = unsafe { slice(pSubmits, submitCount) };
        // SAFETY: a queue's device outlives its use (this function's contract), and
        // `vkCreateDevice` set the pointer before handing the queue out.
        let device = unsafe { &*target.device };
        let pools = device.pools();
        let mut draws = 0;
        for submit in submits {
            // SAFETY: `commandBufferCount` readable handles (this function's contract).
            for &handle in unsafe { slice(submit.pCommandBuffers, submit.commandBufferCount) } {
                let ours = pools.iter().flat_map(|p| &p.buffers).find(|b| command_buffer_handle(b) == handle);
                let Some(buffer) = ours else {
                    eprintln!("vk_test_driver: vkQueueSubmit names a command buffer that is not the driver's ({:p})", handle.0);
                    return VkResult::ERROR_DEVICE_LOST;
                };
                draws += buffer.draws.load(Ordering::Relaxed);
            }
        }
        target.submits.fetch_add(1, Ordering::Relaxed);
        target.submitted_draws.fetch_add(draws, Ordering::Relaxed);
        VkResult::SUCCESS
    })
}

/// `vkCreateCommandPool`: a pool owned by the device.
///
/// # Safety
/// Valid usage of `vkCreateCommandPool`: `device` is one this driver made and has not destroyed,
/// `pCommandPool` is valid for a write. A NULL `device`, `pCreateInfo` or `pCommandPool` is
/// answered with `VK_ERROR_INITIALIZATION_FAILED`; the create info is not read, the allocator not
/// used.
pub unsafe extern "system" fn vkCreateCommandPool(
    device: VkDevice,
    pCreateInfo: *const VkCommandPoolCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pCommandPool: *mut VkCommandPool,
) -> VkResult {
    guard(VkResult::ERROR_OUT_OF_HOST_MEMORY, || {
        // SAFETY: NULL or a live device of ours (this function's contract).
        let device = unsafe { device_ref(device) };
        let (Some(device), false, false) = (device, pCreateInfo.is_null(), pCommandPool.is_null())
        else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let pool = Box::new(CommandPool {
            buffers: Vec::new(),
        });
        // SAFETY: a non-NULL `pCommandPool` is writable (this function's contract).
        unsafe { pCommandPool.write(pool_handle(&pool)) };
        device.pools().push(pool);
        VkResult::SUCCESS
    })
}

/// `vkDestroyCommandPool`: frees the pool and its command buffers; an unknown pool is ignored.
///
/// # Safety
/// Valid usage of `vkDestroyCommandPool`: `device` is NULL (ignored) or one this driver made and
/// has not destroyed, and the pool's command buffers are no longer used by any other thread.
/// The allocator is not used.
pub unsafe extern "system" fn vkDestroyCommandPool(
    device: VkDevice,
    commandPool: VkCommandPool,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        // SAFETY: NULL or a live device of ours (this function's contract).
        let Some(device) = (unsafe { device_ref(device) }) else {
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

/// `vkAllocateCommandBuffers`: command buffers owned by their pool.
///
/// # Safety
/// Valid usage of `vkAllocateCommandBuffers`: `device` is one this driver made and has not
/// destroyed, `pAllocateInfo` is a valid `VkCommandBufferAllocateInfo`, and `pCommandBuffers` is
/// valid for writes of its `commandBufferCount` handles. A NULL `device` or `pAllocateInfo`, a
/// NULL `pCommandBuffers` with a count, or an unknown pool is answered with
/// `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkAllocateCommandBuffers(
    device: VkDevice,
    pAllocateInfo: *const VkCommandBufferAllocateInfo,
    pCommandBuffers: *mut VkCommandBuffer,
) -> VkResult {
    guard(VkResult::ERROR_OUT_OF_HOST_MEMORY, || {
        // SAFETY: NULL or a live device of ours, NULL or a valid allocate info (this function's
        // contract).
        let (device, info) = unsafe { (device_ref(device), pAllocateInfo.as_ref()) };
        let (Some(device), Some(info)) = (device, info) else {
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
            // SAFETY: a non-NULL `pCommandBuffers` holds `commandBufferCount` handles (this
            // function's contract), and `i` is below it.
            unsafe { pCommandBuffers.add(i).write(command_buffer_handle(&buffer)) };
            pool.buffers.push(buffer);
        }
        VkResult::SUCCESS
    })
}

/// `vkFreeCommandBuffers`: frees those of the pool's command buffers that are listed; unknown
/// or already freed handles (NULL ones included) are ignored.
///
/// # Safety
/// Valid usage of `vkFreeCommandBuffers`: `device` is one this driver made and has not destroyed,
/// `pCommandBuffers` is valid for reads of `commandBufferCount` handles, and those command
/// buffers are no longer used by any other thread. A NULL `device` or `pCommandBuffers` is
/// ignored.
pub unsafe extern "system" fn vkFreeCommandBuffers(
    device: VkDevice,
    commandPool: VkCommandPool,
    commandBufferCount: u32,
    pCommandBuffers: *const VkCommandBuffer,
) {
    guard((), || {
        // SAFETY: NULL or a live device of ours (this function's contract).
        let (Some(device), false) = (unsafe { device_ref(device) }, pCommandBuffers.is_null()) else {
            return;
        };
        // SAFETY: `commandBufferCount` readable handles (this function's contract).
        let handles = unsafe { slice(pCommandBuffers, commandBufferCount) };
        let mut pools = device.pools();
        let Some(pool) = pools.iter_mut().find(|p| pool_handle(p) == commandPool) else {
            return;
        };
        // Unknown or already freed handles are ignored rather than freed twice.
        pool.buffers
            .retain(|b| !handles.contains(&command_buffer_handle(b)));
    })
}

/// `vkBeginCommandBuffer`: resets the draw count.
///
/// # Safety
/// Valid usage of `vkBeginCommandBuffer`: `commandBuffer` is one this driver allocated and has
/// not freed (NULL is answered with `VK_ERROR_INITIALIZATION_FAILED`). The begin info is not read.
pub unsafe extern "system" fn vkBeginCommandBuffer(
    commandBuffer: VkCommandBuffer,
    _pBeginInfo: *const VkCommandBufferBeginInfo,
) -> VkResult {
    // SAFETY: NULL or a live command buffer of ours (this function's contract).
    match unsafe { command_buffer_ref(commandBuffer) } {
        Some(buffer) => {
            buffer.draws.store(0, Ordering::Relaxed);
            VkResult::SUCCESS
        }
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}

/// `vkEndCommandBuffer`: nothing to finish.
///
/// # Safety
/// None beyond the signature: the handle is only compared with NULL.
pub unsafe extern "system" fn vkEndCommandBuffer(commandBuffer: VkCommandBuffer) -> VkResult {
    if commandBuffer.is_null() {
        VkResult::ERROR_INITIALIZATION_FAILED
    } else {
        VkResult::SUCCESS
    }
}

/// Counts a draw or dispatch recorded into `command_buffer`.
///
/// # Safety
/// As [`command_buffer_ref`].
unsafe fn count_draw(command_buffer: VkCommandBuffer) {
    // SAFETY: this function's contract.
    if let Some(buffer) = unsafe { command_buffer_ref(command_buffer) } {
        buffer.draws.fetch_add(1, Ordering::Relaxed);
    }
}

/// `vkCmdDraw`: counted, nothing drawn.
///
/// # Safety
/// Valid usage of `vkCmdDraw`: `commandBuffer` is one this driver allocated and has not freed
/// (NULL is ignored).
pub unsafe extern "system" fn vkCmdDraw(
    commandBuffer: VkCommandBuffer,
    _vertexCount: u32,
    _instanceCount: u32,
    _firstVertex: u32,
    _firstInstance: u32,
) {
    // SAFETY: NULL or a live command buffer of ours (this function's contract).
    unsafe { count_draw(commandBuffer) };
}

/// `vkCmdDispatch`: counted as a draw, nothing run.
///
/// # Safety
/// Valid usage of `vkCmdDispatch`: `commandBuffer` is one this driver allocated and has not
/// freed (NULL is ignored).
pub unsafe extern "system" fn vkCmdDispatch(
    commandBuffer: VkCommandBuffer,
    _groupCountX: u32,
    _groupCountY: u32,
    _groupCountZ: u32,
) {
    // SAFETY: NULL or a live command buffer of ours (this function's contract).
    unsafe { count_draw(commandBuffer) };
}

/// Records nothing: the driver has no execution to order.
///
/// # Safety
/// None beyond the signature: no handle or pointer is read.
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
///
/// # Safety
/// `commandBuffer` is NULL (answered with 0) or one this driver allocated and has not freed.
pub unsafe extern "system" fn vkGetTestDriverDrawCountTEST(commandBuffer: VkCommandBuffer) -> u32 {
    // SAFETY: NULL or a live command buffer of ours (this function's contract).
    let buffer = unsafe { command_buffer_ref(commandBuffer) };
    buffer.map_or(0, |b| b.draws.load(Ordering::Relaxed))
}

// The signatures above are exactly the registry's.
const _: () = {
    let _: PFN_vkCreateDevice = Some(vkCreateDevice);
    let _: PFN_vkDestroyDevice = Some(vkDestroyDevice);
    let _: PFN_vkGetDeviceProcAddr = Some(vkGetDeviceProcAddr);
    let _: PFN_vkGetDeviceQueue = Some(vkGetDeviceQueue);
    let _: PFN_vkDeviceWaitIdle = Some(vkDeviceWaitIdle);
    let _: PFN_vkQueueWaitIdle = Some(vkQueueWaitIdle);
    let _: PFN_vkQueueSubmit = Some(vkQueueSubmit);
    let _: PFN_vkCreateCommandPool = Some(vkCreateCommandPool);
    let _: PFN_vkDestroyCommandPool = Some(vkDestroyCommandPool);
    let _: PFN_vkAllocateCommandBuffers = Some(vkAllocateCommandBuffers);
    let _: PFN_vkFreeCommandBuffers = Some(vkFreeCommandBuffers);
    let _: PFN_vkBeginCommandBuffer = Some(vkBeginCommandBuffer);
    let _: PFN_vkEndCommandBuffer = Some(vkEndCommandBuffer);
    let _: PFN_vkCmdDraw = Some(vkCmdDraw);
    let _: PFN_vkCmdDispatch = Some(vkCmdDispatch);
};
