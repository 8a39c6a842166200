//! Wrapping on the way up: a layer with `WRAPS_HANDLES` that wraps images, buffers, command
//! buffers, queues, descriptor sets and pools through `vk_layer::Wrappers` and the `wrap_*` /
//! `forget_*` hooks alone (no hook method of its own). The handles the next level creates,
//! allocates and returns come back wrapped, each distinct from the next level's; calls taking
//! them reach the next level with its own; the same queue and swapchain images come back as the
//! same wrappers; destruction, freeing, a pool's destruction and reset and a swapchain's
//! destruction forget them; physical devices come back wrapped too, and go down unwrapped in a
//! device group at `vkCreateDevice`; a descriptor update template's data, a debug marker's `u64`
//! object and a physical device named through the device go down with the next level's handles.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer, NonDispatchableHandle, Wrappers,
};

// ---- the fake next level: hands out handles, records the ones it is handed ---------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

/// A dispatchable object whose first word is `word`.
fn object(word: usize) -> *mut c_void {
    Box::into_raw(Box::new(word)) as *mut c_void
}

/// What the next level was handed, one line per call.
static HANDED: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The next level's next non-dispatchable handle.
static NEXT: Mutex<u64> = Mutex::new(0x100);
/// The next level's queue (made once), and the dispatchable objects `vkSetDeviceLoaderData` was
/// given.
static QUEUE: Mutex<usize> = Mutex::new(0);
static LOADER_DATA_SET: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn handed(line: String) {
    HANDED.lock().unwrap().push(line);
}
fn next_handle() -> u64 {
    let mut next = NEXT.lock().unwrap();
    *next += 1;
    *next
}

unsafe extern "system" fn next_create_instance(
    _: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    // SAFETY: the caller's output.
    unsafe { *out = VkInstance(object(&INSTANCE_DISPATCH as *const u64 as usize)) };
    VkResult::SUCCESS
}
/// The next level's physical device, made once.
static PHYSICAL_DEVICE: Mutex<usize> = Mutex::new(0);
unsafe extern "system" fn next_enumerate_physical_devices(
    _: VkInstance,
    count: *mut u32,
    out: *mut VkPhysicalDevice,
) -> VkResult {
    let mut pd = PHYSICAL_DEVICE.lock().unwrap();
    if *pd == 0 {
        *pd = object(&INSTANCE_DISPATCH as *const u64 as usize) as usize;
    }
    // SAFETY: the caller's count, and room for it when `out` is not null.
    unsafe {
        if !out.is_null() && *count > 0 {
            *out = VkPhysicalDevice(*pd as *mut c_void);
        }
        *count = 1;
    }
    VkResult::SUCCESS
}
/// Records the physical device it is given and those of a device group in the chain.
unsafe extern "system" fn next_create_device(
    physical_device: VkPhysicalDevice,
    info: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    // SAFETY: a valid create info (its chain as the test builds it), the caller's output.
    unsafe {
        let mut group = Vec::new();
        let mut next = (*info).pNext as *const VkBaseInStructure;
        while !next.is_null() {
            if (*next).sType == VkStructureType::DEVICE_GROUP_DEVICE_CREATE_INFO {
                let g = &*(next as *const VkDeviceGroupDeviceCreateInfo);
                let pds =
                    std::slice::from_raw_parts(g.pPhysicalDevices, g.physicalDeviceCount as usize);
                group.extend(pds.iter().map(|p| format!("{:#x}", p.0 as usize)));
            }
            next = (*next).pNext;
        }
        handed(format!(
            "create device {:#x} group {}",
            physical_device.0 as usize,
            group.join(" ")
        ));
        *out = VkDevice(object(&DEVICE_DISPATCH as *const u64 as usize));
    }
    VkResult::SUCCESS
}
/// `vkCreateImage`, `vkCreateBuffer`, `vkCreateCommandPool`, `vkCreateDescriptorPool` alike.
unsafe extern "system" fn next_create<I, H: NonDispatchableHandle>(
    _: VkDevice,
    _: *const I,
    _: *const VkAllocationCallbacks,
    out: *mut H,
) -> VkResult {
    // SAFETY: the caller's output.
    unsafe { *out = H::from_raw(next_handle()) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy<H: NonDispatchableHandle>(
    _: VkDevice,
    h: H,
    _: *const VkAllocationCallbacks,
) {
    handed(format!("destroy {:?} {:#x}", H::OBJECT_TYPE.0, h.raw()));
}
extern "system" fn next_cmd_copy_buffer(
    cmd: VkCommandBuffer,
    src: VkBuffer,
    dst: VkBuffer,
    _: u32,
    _: *const VkBufferCopy,
) {
    handed(format!(
        "copy {:#x} {:#x} {:#x}",
        cmd.0 as usize, src.0, dst.0
    ));
}
unsafe extern "system" fn next_allocate_command_buffers(
    _: VkDevice,
    info: *const VkCommandBufferAllocateInfo,
    out: *mut VkCommandBuffer,
) -> VkResult {
    // SAFETY: a valid info, and room for its count.
    unsafe {
        handed(format!("allocate from {:#x}", (*info).commandPool.0));
        for i in 0..(*info).commandBufferCount as usize {
            *out.add(i) = VkCommandBuffer(object(ICD_LOADER_MAGIC));
        }
    }
    VkResult::SUCCESS
}
unsafe extern "system" fn next_free_command_buffers(
    _: VkDevice,
    pool: VkCommandPool,
    n: u32,
    cmds: *const VkCommandBuffer,
) {
    // SAFETY: `n` command buffers.
    let cmds = unsafe { std::slice::from_raw_parts(cmds, n as usize) };
    let cmds: Vec<String> = cmds
        .iter()
        .map(|c| format!("{:#x}", c.0 as usize))
        .collect();
    handed(format!("free {:#x} {}", pool.0, cmds.join(" ")));
}
unsafe extern "system" fn next_get_device_queue(_: VkDevice, _: u32, _: u32, out: *mut VkQueue) {
    let mut queue = QUEUE.lock().unwrap();
    if *queue == 0 {
        *queue = object(ICD_LOADER_MAGIC) as usize;
    }
    // SAFETY: the caller's output.
    unsafe { *out = VkQueue(*queue as *mut c_void) };
}
extern "system" fn next_queue_wait_idle(queue: VkQueue) -> VkResult {
    handed(format!("wait {:#x}", queue.0 as usize));
    VkResult::SUCCESS
}
unsafe extern "system" fn next_allocate_sets(
    _: VkDevice,
    info: *const VkDescriptorSetAllocateInfo,
    out: *mut VkDescriptorSet,
) -> VkResult {
    // SAFETY: a valid info, and room for its count.
    unsafe {
        for i in 0..(*info).descriptorSetCount as usize {
            *out.add(i) = VkDescriptorSet(next_handle());
        }
    }
    VkResult::SUCCESS
}
extern "system" fn next_reset_pool(
    _: VkDevice,
    pool: VkDescriptorPool,
    _: VkDescriptorPoolResetFlags,
) -> VkResult {
    handed(format!("reset {:#x}", pool.0));
    VkResult::SUCCESS
}
/// The buffer of the descriptor a template's data holds at byte 4 (unaligned), and the inline
/// bytes after it.
///
/// # Safety
/// `data` holds a `VkDescriptorBufferInfo` at byte 4 and 4 bytes at 28.
unsafe extern "system" fn next_update_with_template(
    _: VkDevice,
    set: VkDescriptorSet,
    template: VkDescriptorUpdateTemplate,
    data: *const c_void,
) {
    // SAFETY: per the contract.
    let (info, bytes) = unsafe {
        let data = data as *const u8;
        (
            data.add(4).cast::<VkDescriptorBufferInfo>().read_unaligned(),
            std::slice::from_raw_parts(data.add(28), 4),
        )
    };
    handed(format!(
        "update {:#x} with {:#x}: buffer {:#x}, bytes {bytes:?}",
        set.0, template.0, info.buffer.0
    ));
}
/// # Safety
/// `info` is a valid name info.
unsafe extern "system" fn next_debug_marker_set_object_name(
    _: VkDevice,
    info: *const VkDebugMarkerObjectNameInfoEXT,
) -> VkResult {
    // SAFETY: per the contract.
    let info = unsafe { *info };
    handed(format!("name {} {:#x}", info.objectType.0, info.object));
    VkResult::SUCCESS
}
/// # Safety
/// `info` is a valid name info.
unsafe extern "system" fn next_set_debug_utils_object_name(
    _: VkDevice,
    info: *const VkDebugUtilsObjectNameInfoEXT,
) -> VkResult {
    // SAFETY: per the contract.
    let info = unsafe { *info };
    handed(format!("utils name {} {:#x}", info.objectType.0, info.objectHandle));
    VkResult::SUCCESS
}
/// Two images per swapchain, the same at every call.
unsafe extern "system" fn next_get_swapchain_images(
    _: VkDevice,
    swapchain: VkSwapchainKHR,
    count: *mut u32,
    images: *mut VkImage,
) -> VkResult {
    // SAFETY: the caller's count, and room for it when `images` is not null.
    unsafe {
        if images.is_null() {
            *count = 2;
        } else {
            for i in 0..(*count).min(2) as usize {
                *images.add(i) = VkImage(swapchain.0 * 16 + i as u64);
            }
        }
    }
    VkResult::SUCCESS
}
unsafe extern "system" fn set_device_loader_data(
    device: VkDevice,
    object: *mut c_void,
) -> VkResult {
    LOADER_DATA_SET.lock().unwrap().push(object as usize);
    // SAFETY: both dispatchable objects, as the loader's callback is given them.
    unsafe { *(object as *mut usize) = *(device.0 as *const usize) };
    VkResult::SUCCESS
}

/// `$f`, checked against its command's type `$pfn`, as a `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkEnumeratePhysicalDevices" => {
            void_fn!(
                PFN_vkEnumeratePhysicalDevices,
                next_enumerate_physical_devices
            )
        }
        b"vkCreateImage" => void_fn!(PFN_vkCreateImage, next_create),
        b"vkCreateBuffer" => void_fn!(PFN_vkCreateBuffer, next_create),
        b"vkCreateCommandPool" => void_fn!(PFN_vkCreateCommandPool, next_create),
        b"vkCreateDescriptorPool" => void_fn!(PFN_vkCreateDescriptorPool, next_create),
        b"vkCreateSwapchainKHR" => void_fn!(PFN_vkCreateSwapchainKHR, next_create),
        b"vkCreateDescriptorUpdateTemplate" => {
            void_fn!(PFN_vkCreateDescriptorUpdateTemplate, next_create)
        }
        b"vkDestroyDescriptorUpdateTemplate" => {
            void_fn!(PFN_vkDestroyDescriptorUpdateTemplate, next_destroy)
        }
        b"vkUpdateDescriptorSetWithTemplate" => {
            void_fn!(PFN_vkUpdateDescriptorSetWithTemplate, next_update_with_template)
        }
        b"vkDebugMarkerSetObjectNameEXT" => {
            void_fn!(PFN_vkDebugMarkerSetObjectNameEXT, next_debug_marker_set_object_name)
        }
        b"vkSetDebugUtilsObjectNameEXT" => {
            void_fn!(PFN_vkSetDebugUtilsObjectNameEXT, next_set_debug_utils_object_name)
        }
        b"vkDestroyImage" => void_fn!(PFN_vkDestroyImage, next_destroy),
        b"vkDestroyBuffer" => void_fn!(PFN_vkDestroyBuffer, next_destroy),
        b"vkDestroyCommandPool" => void_fn!(PFN_vkDestroyCommandPool, next_destroy),
        b"vkDestroyDescriptorPool" => void_fn!(PFN_vkDestroyDescriptorPool, next_destroy),
        b"vkDestroySwapchainKHR" => void_fn!(PFN_vkDestroySwapchainKHR, next_destroy),
        b"vkCmdCopyBuffer" => void_fn!(PFN_vkCmdCopyBuffer, next_cmd_copy_buffer),
        b"vkAllocateCommandBuffers" => {
            void_fn!(PFN_vkAllocateCommandBuffers, next_allocate_command_buffers)
        }
        b"vkFreeCommandBuffers" => void_fn!(PFN_vkFreeCommandBuffers, next_free_command_buffers),
        b"vkGetDeviceQueue" => void_fn!(PFN_vkGetDeviceQueue, next_get_device_queue),
        b"vkQueueWaitIdle" => void_fn!(PFN_vkQueueWaitIdle, next_queue_wait_idle),
        b"vkAllocateDescriptorSets" => void_fn!(PFN_vkAllocateDescriptorSets, next_allocate_sets),
        b"vkResetDescriptorPool" => void_fn!(PFN_vkResetDescriptorPool, next_reset_pool),
        b"vkGetSwapchainImagesKHR" => {
            void_fn!(PFN_vkGetSwapchainImagesKHR, next_get_swapchain_images)
        }
        _ => None,
    }
}
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the layer: wraps every non-dispatchable handle, queues and command buffers -----------------

struct Wrapping;
struct Instance {
    wrappers: Wrappers,
}
struct Device {
    wrappers: Wrappers,
}

impl Layer for Wrapping {
    type Instance = Instance;
    type Device = Device;

    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        Ok(Instance {
            wrappers: Wrappers::new(),
        })
    }
    fn wrap_physical_device(instance: &Instance, pd: VkPhysicalDevice) -> VkPhysicalDevice {
        // SAFETY: the next level's live physical device, as the chassis gives it.
        unsafe { instance.wrappers.wrap_dispatchable(pd) }
    }
    fn unwrap_physical_device(
        instance: &Instance,
        pd: VkPhysicalDevice,
    ) -> Option<VkPhysicalDevice> {
        instance.wrappers.unwrap_dispatchable(pd)
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
            wrappers: Wrappers::new(),
        })
    }
    const WRAPS_HANDLES: bool = true;
    fn wrap_handle<H: NonDispatchableHandle>(device: &Device, handle: H) -> H {
        device.wrappers.wrap(handle)
    }
    fn unwrap_handle<H: NonDispatchableHandle>(device: &Device, handle: H) -> Option<H> {
        device.wrappers.unwrap(handle)
    }
    fn forget_handle<H: NonDispatchableHandle>(device: &Device, handle: H) {
        device.wrappers.forget(handle);
    }
    fn wrap_queue(device: &Device, queue: VkQueue) -> VkQueue {
        // SAFETY: the next level's live queue, as the chassis gives it.
        unsafe { device.wrappers.wrap_dispatchable(queue) }
    }
    fn unwrap_queue(device: &Device, queue: VkQueue) -> Option<VkQueue> {
        device.wrappers.unwrap_dispatchable(queue)
    }
    fn wrap_command_buffer(device: &Device, cmd: VkCommandBuffer) -> VkCommandBuffer {
        // SAFETY: the next level's live command buffer, as the chassis gives it.
        unsafe { device.wrappers.wrap_dispatchable(cmd) }
    }
    fn unwrap_command_buffer(device: &Device, cmd: VkCommandBuffer) -> Option<VkCommandBuffer> {
        device.wrappers.unwrap_dispatchable(cmd)
    }
    fn forget_command_buffer(device: &Device, cmd: VkCommandBuffer) {
        device.wrappers.forget_dispatchable(cmd);
    }
}

#[vk_layer::hooks(intercept(*))]
impl InstanceHooks for Instance {}

#[vk_layer::hooks(intercept(*))]
impl DeviceHooks for Device {}

vk_layer::declare_layer!(Wrapping);

// ---- the application ------------------------------------------------------------------------------

/// A device created through the layer with the loader's chain structures, and its physical
/// device as the layer handed it out.
///
/// # Safety
/// Called once.
unsafe fn create_device() -> (VkDevice, VkPhysicalDevice) {
    // SAFETY: the layer's entry points as their own types, with the loader's chains alive for
    // each call.
    unsafe {
        let mut link = VkLayerInstanceLink {
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            ..Default::default()
        };
        let mut chain = VkLayerInstanceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let info = VkInstanceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(vkGetInstanceProcAddr(
            VkInstance::NULL,
            c"vkCreateInstance".as_ptr(),
        ));
        let mut instance = VkInstance::NULL;
        assert_eq!(
            create.unwrap()(&info, ptr::null(), &mut instance),
            VkResult::SUCCESS
        );
        let mut link = VkLayerDeviceLink {
            pNext: ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            pfnNextGetDeviceProcAddr: Some(next_gdpa),
        };
        // The physical device as the layer hands it out (twice: one wrapper), in a device group
        // after the loader's structures, as the loaders chain them.
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(vkGetInstanceProcAddr(
            instance,
            c"vkEnumeratePhysicalDevices".as_ptr(),
        ));
        let (mut physical, mut again, mut count) =
            (VkPhysicalDevice::NULL, VkPhysicalDevice::NULL, 1);
        assert_eq!(
            enumerate.unwrap()(instance, &mut count, &mut physical),
            VkResult::SUCCESS
        );
        assert_eq!(
            enumerate.unwrap()(instance, &mut count, &mut again),
            VkResult::SUCCESS
        );
        assert_eq!(physical, again, "one physical device, one wrapper");
        assert_ne!(physical.0 as usize, *PHYSICAL_DEVICE.lock().unwrap());
        let group = VkDeviceGroupDeviceCreateInfo {
            physicalDeviceCount: 1,
            pPhysicalDevices: &physical,
            ..Default::default()
        };
        let mut chain = VkLayerDeviceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        chain.pNext = &group as *const _ as *const c_void;
        let mut data = VkLayerDeviceCreateInfo {
            function: VkLayerFunction::LOADER_DATA_CALLBACK,
            ..Default::default()
        };
        data.u.pfnSetDeviceLoaderData = Some(set_device_loader_data);
        data.pNext = &mut chain as *mut _ as *const c_void;
        let info = VkDeviceCreateInfo {
            pNext: &data as *const _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateDevice =
            std::mem::transmute(vkGetInstanceProcAddr(instance, c"vkCreateDevice".as_ptr()));
        let mut device = VkDevice::NULL;
        assert_eq!(
            create.unwrap()(physical, &info, ptr::null(), &mut device),
            VkResult::SUCCESS
        );
        assert_eq!(
            group.pPhysicalDevices, &physical as *const _,
            "the caller's chain as it was"
        );
        (device, physical)
    }
}

/// The layer's entry point for `name`, as its type `F`.
///
/// # Safety
/// `F` is the command's `PFN_*` type; `device` a live device of the layer.
unsafe fn proc_addr<F: Copy>(device: VkDevice, name: &CStr) -> F {
    // SAFETY: per the contract.
    unsafe {
        let f = vkGetDeviceProcAddr(device, name.as_ptr());
        assert!(f.is_some(), "{name:?} is routed through the layer");
        std::mem::transmute_copy(&f)
    }
}

#[test]
fn handles_come_back_wrapped_go_down_unwrapped_and_are_forgotten() {
    // SAFETY: the layer's entry points as their own types, called as an application through
    // the loader would, with the handles the layer handed back.
    unsafe {
        let (device, physical) = create_device();
        let wrappers = || {
            &<Wrapping as vk_layer::Registered>::chassis()
                .device(device.0)
                .expect("the device's state")
                .hooks
                .wrappers
        };
        let none = ptr::null();

        // Created: each one wrapped, distinct from the next level's.
        let create_buffer: PFN_vkCreateBuffer = proc_addr(device, c"vkCreateBuffer");
        let (mut a, mut b) = (VkBuffer::NULL, VkBuffer::NULL);
        for buffer in [&mut a, &mut b] {
            let info = VkBufferCreateInfo::default();
            assert_eq!(
                create_buffer.unwrap()(device, &info, none, buffer),
                VkResult::SUCCESS
            );
        }
        let inner = |b: VkBuffer| wrappers().unwrap(b).expect("a wrapped buffer").0;
        let (inner_a, inner_b) = (inner(a), inner(b));
        assert_eq!((inner_a, inner_b), (0x101, 0x102), "the next level's own");
        assert!(a.0 != inner_a && b.0 != inner_b && a != b, "{a:?} {b:?}");
        let create_image: PFN_vkCreateImage = proc_addr(device, c"vkCreateImage");
        let mut image = VkImage::NULL;
        let info = VkImageCreateInfo::default();
        assert_eq!(
            create_image.unwrap()(device, &info, none, &mut image),
            VkResult::SUCCESS
        );
        assert_eq!(wrappers().unwrap(image), Some(VkImage(0x103)));

        // Command buffers: allocated from a pool, wrapped, the next level's given the loader's
        // dispatch word first (`vkSetDeviceLoaderData`), which the wrapper copies.
        let create_pool: PFN_vkCreateCommandPool = proc_addr(device, c"vkCreateCommandPool");
        let mut pool = VkCommandPool::NULL;
        let info = VkCommandPoolCreateInfo::default();
        assert_eq!(
            create_pool.unwrap()(device, &info, none, &mut pool),
            VkResult::SUCCESS
        );
        let allocate: PFN_vkAllocateCommandBuffers = proc_addr(device, c"vkAllocateCommandBuffers");
        let info = VkCommandBufferAllocateInfo {
            commandPool: pool,
            commandBufferCount: 3,
            ..Default::default()
        };
        let mut cmds = [VkCommandBuffer::NULL; 3];
        assert_eq!(
            allocate.unwrap()(device, &info, cmds.as_mut_ptr()),
            VkResult::SUCCESS
        );
        let inner_cmds: Vec<VkCommandBuffer> = cmds
            .iter()
            .map(|&c| {
                wrappers()
                    .unwrap_dispatchable(c)
                    .expect("a wrapped command buffer")
            })
            .collect();
        for (c, i) in cmds.iter().zip(&inner_cmds) {
            assert_ne!(c, i);
            assert_eq!(
                *(c.0 as *const usize),
                &DEVICE_DISPATCH as *const u64 as usize
            );
            assert_eq!(
                *(i.0 as *const usize),
                &DEVICE_DISPATCH as *const u64 as usize
            );
        }
        assert!(inner_cmds
            .iter()
            .all(|i| LOADER_DATA_SET.lock().unwrap().contains(&(i.0 as usize))));

        // Calls taking them reach the next level with its own.
        let copy: PFN_vkCmdCopyBuffer = proc_addr(device, c"vkCmdCopyBuffer");
        copy.unwrap()(cmds[0], a, b, 0, ptr::null());

        // Queues: the same wrapper at every call.
        let get_queue: PFN_vkGetDeviceQueue = proc_addr(device, c"vkGetDeviceQueue");
        let (mut q1, mut q2) = (VkQueue::NULL, VkQueue::NULL);
        get_queue.unwrap()(device, 0, 0, &mut q1);
        get_queue.unwrap()(device, 0, 0, &mut q2);
        assert_eq!(q1, q2, "one queue, one wrapper");
        assert_ne!(q1.0 as usize, *QUEUE.lock().unwrap());
        let wait: PFN_vkQueueWaitIdle = proc_addr(device, c"vkQueueWaitIdle");
        assert_eq!(wait.unwrap()(q1), VkResult::SUCCESS);

        // Swapchain images: the same wrappers at every call, forgotten with the swapchain.
        let create_swapchain: PFN_vkCreateSwapchainKHR = proc_addr(device, c"vkCreateSwapchainKHR");
        let mut swapchain = VkSwapchainKHR::NULL;
        let info = VkSwapchainCreateInfoKHR::default();
        assert_eq!(
            create_swapchain.unwrap()(device, &info, none, &mut swapchain),
            VkResult::SUCCESS
        );
        let inner_swapchain = wrappers().unwrap(swapchain).unwrap();
        let get_images: PFN_vkGetSwapchainImagesKHR = proc_addr(device, c"vkGetSwapchainImagesKHR");
        let mut count = 0;
        assert_eq!(
            get_images.unwrap()(device, swapchain, &mut count, ptr::null_mut()),
            VkResult::SUCCESS
        );
        let (mut first, mut again) = ([VkImage::NULL; 2], [VkImage::NULL; 2]);
        for images in [&mut first, &mut again] {
            assert_eq!(
                get_images.unwrap()(device, swapchain, &mut count, images.as_mut_ptr()),
                VkResult::SUCCESS
            );
        }
        assert_eq!(first, again, "the same wrappers");
        assert_eq!(
            wrappers().unwrap(first[1]),
            Some(VkImage(inner_swapchain.0 * 16 + 1))
        );

        // Descriptor sets: forgotten at the pool's reset.
        let create_dpool: PFN_vkCreateDescriptorPool = proc_addr(device, c"vkCreateDescriptorPool");
        let mut dpool = VkDescriptorPool::NULL;
        let info = VkDescriptorPoolCreateInfo::default();
        assert_eq!(
            create_dpool.unwrap()(device, &info, none, &mut dpool),
            VkResult::SUCCESS
        );
        let allocate_sets: PFN_vkAllocateDescriptorSets =
            proc_addr(device, c"vkAllocateDescriptorSets");
        let info = VkDescriptorSetAllocateInfo {
            descriptorPool: dpool,
            descriptorSetCount: 2,
            ..Default::default()
        };
        let mut sets = [VkDescriptorSet::NULL; 2];
        assert_eq!(
            allocate_sets.unwrap()(device, &info, sets.as_mut_ptr()),
            VkResult::SUCCESS
        );
        assert!(sets.iter().all(|&s| wrappers().unwrap(s).is_some()));
        assert_eq!(wrappers().live(VkObjectType::DESCRIPTOR_SET), 2);
        let reset: PFN_vkResetDescriptorPool = proc_addr(device, c"vkResetDescriptorPool");
        assert_eq!(
            reset.unwrap()(device, dpool, VkDescriptorPoolResetFlags(0)),
            VkResult::SUCCESS
        );
        assert_eq!(
            wrappers().live(VkObjectType::DESCRIPTOR_SET),
            0,
            "reset frees the sets"
        );
        assert!(wrappers().unwrap(dpool).is_some(), "not the pool");

        // Freed and destroyed: forgotten, so refused afterwards.
        let free: PFN_vkFreeCommandBuffers = proc_addr(device, c"vkFreeCommandBuffers");
        free.unwrap()(device, pool, 1, &cmds[0]);
        assert_eq!(wrappers().unwrap_dispatchable(cmds[0]), None);
        assert_eq!(wrappers().live(VkObjectType::COMMAND_BUFFER), 2);
        let destroy_buffer: PFN_vkDestroyBuffer = proc_addr(device, c"vkDestroyBuffer");
        destroy_buffer.unwrap()(device, a, none);
        assert_eq!(wrappers().unwrap(a), None);
        copy.unwrap()(cmds[1], a, b, 0, ptr::null()); // refused: not passed down
        let destroy_pool: PFN_vkDestroyCommandPool = proc_addr(device, c"vkDestroyCommandPool");
        destroy_pool.unwrap()(device, pool, none);
        assert_eq!(
            wrappers().live(VkObjectType::COMMAND_BUFFER),
            0,
            "the pool's destruction frees its command buffers"
        );
        let destroy_swapchain: PFN_vkDestroySwapchainKHR =
            proc_addr(device, c"vkDestroySwapchainKHR");
        destroy_swapchain.unwrap()(device, swapchain, none);
        assert_eq!(
            wrappers().unwrap(first[0]),
            None,
            "the swapchain's images go with it"
        );
        assert_eq!(
            wrappers().live(VkObjectType::IMAGE),
            1,
            "the created image stays"
        );

        // A descriptor update template's data goes down with its buffer unwrapped, in a copy
        // that keeps the rest of the bytes; the application's data is left as it was. The
        // template is refused once destroyed.
        let create_template: PFN_vkCreateDescriptorUpdateTemplate =
            proc_addr(device, c"vkCreateDescriptorUpdateTemplate");
        let entries = [
            VkDescriptorUpdateTemplateEntry {
                descriptorCount: 1,
                descriptorType: VkDescriptorType::UNIFORM_BUFFER,
                offset: 4,
                ..Default::default()
            },
            VkDescriptorUpdateTemplateEntry {
                descriptorCount: 4,
                descriptorType: VkDescriptorType::INLINE_UNIFORM_BLOCK,
                offset: 28,
                ..Default::default()
            },
        ];
        let info = VkDescriptorUpdateTemplateCreateInfo {
            descriptorUpdateEntryCount: 2,
            pDescriptorUpdateEntries: entries.as_ptr(),
            ..Default::default()
        };
        let mut template = VkDescriptorUpdateTemplate::NULL;
        assert_eq!(
            create_template.unwrap()(device, &info, none, &mut template),
            VkResult::SUCCESS
        );
        let inner_template = wrappers().unwrap(template).expect("a wrapped template");
        let mut data = [0u8; 32];
        let buffer_info = VkDescriptorBufferInfo {
            buffer: b,
            offset: 0,
            range: 16,
        };
        data.as_mut_ptr()
            .add(4)
            .cast::<VkDescriptorBufferInfo>()
            .write_unaligned(buffer_info);
        data[28..].copy_from_slice(&[1, 2, 3, 4]);
        let given = data;
        let update: PFN_vkUpdateDescriptorSetWithTemplate =
            proc_addr(device, c"vkUpdateDescriptorSetWithTemplate");
        update.unwrap()(device, VkDescriptorSet::NULL, template, data.as_ptr().cast());
        assert_eq!(data, given, "the application's data as it was");
        let destroy_template: PFN_vkDestroyDescriptorUpdateTemplate =
            proc_addr(device, c"vkDestroyDescriptorUpdateTemplate");
        destroy_template.unwrap()(device, template, none);
        update.unwrap()(device, VkDescriptorSet::NULL, template, data.as_ptr().cast()); // refused

        // A debug marker's u64 object goes down as the next level's handle of its type.
        let set_name: PFN_vkDebugMarkerSetObjectNameEXT =
            proc_addr(device, c"vkDebugMarkerSetObjectNameEXT");
        let name = VkDebugMarkerObjectNameInfoEXT {
            objectType: VkDebugReportObjectTypeEXT::BUFFER_EXT,
            object: b.0,
            pObjectName: c"b".as_ptr(),
            ..Default::default()
        };
        assert_eq!(set_name.unwrap()(device, &name), VkResult::SUCCESS);
        // So does a physical device named through the device, unwrapped by the instance's object.
        let set_name: PFN_vkSetDebugUtilsObjectNameEXT =
            proc_addr(device, c"vkSetDebugUtilsObjectNameEXT");
        let name = VkDebugUtilsObjectNameInfoEXT {
            objectType: VkObjectType::PHYSICAL_DEVICE,
            objectHandle: physical.0 as u64,
            pObjectName: c"gpu".as_ptr(),
            ..Default::default()
        };
        assert_eq!(set_name.unwrap()(device, &name), VkResult::SUCCESS);

        let handed = HANDED.lock().unwrap().clone();
        let pd = *PHYSICAL_DEVICE.lock().unwrap();
        let expected = [
            format!("create device {pd:#x} group {pd:#x}"),
            "allocate from 0x104".to_string(),
            format!(
                "copy {:#x} {inner_a:#x} {inner_b:#x}",
                inner_cmds[0].0 as usize
            ),
            format!("wait {:#x}", *QUEUE.lock().unwrap()),
            format!("reset {:#x}", wrappers().unwrap(dpool).unwrap().0),
            format!("free 0x104 {:#x}", inner_cmds[0].0 as usize),
            format!("destroy {} {inner_a:#x}", VkObjectType::BUFFER.0),
            format!("destroy {} 0x104", VkObjectType::COMMAND_POOL.0),
            format!(
                "destroy {} {:#x}",
                VkObjectType::SWAPCHAIN_KHR.0,
                inner_swapchain.0
            ),
            format!(
                "update 0x0 with {:#x}: buffer {inner_b:#x}, bytes [1, 2, 3, 4]",
                inner_template.0
            ),
            format!(
                "destroy {} {:#x}",
                VkObjectType::DESCRIPTOR_UPDATE_TEMPLATE.0,
                inner_template.0
            ),
            format!(
                "name {} {inner_b:#x}",
                VkDebugReportObjectTypeEXT::BUFFER_EXT.0
            ),
            format!("utils name {} {pd:#x}", VkObjectType::PHYSICAL_DEVICE.0),
        ];
        assert_eq!(handed, expected);
    }
}
