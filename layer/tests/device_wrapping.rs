//! Device-level handle wrapping: a layer hands up its own `VkDevice` and command buffers; every
//! generated device-level entry point, `vkGetDeviceProcAddr` and `vkDestroyDevice` pass the next
//! level's handles down, while the hooks see the layer's.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer};

// ---- the fake next level: records the handles it is handed ------------------------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

/// The next level's device and command buffer, and what it was handed.
static INNER_DEVICE: AtomicUsize = AtomicUsize::new(0);
static INNER_COMMAND_BUFFER: AtomicUsize = AtomicUsize::new(0);
static HANDED: Mutex<Vec<(&str, usize)>> = Mutex::new(Vec::new());

/// The fake level's `vkCreateInstance`: a new handle.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_instance(
    _: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkInstance(handle(&INSTANCE_DISPATCH)) };
    VkResult::SUCCESS
}
/// The fake level's `vkCreateDevice`: a new handle, recorded.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_device(
    _: VkPhysicalDevice,
    _: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    let device = handle(&DEVICE_DISPATCH);
    INNER_DEVICE.store(device as usize, SeqCst);
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDevice(device) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_device(device: VkDevice, _: *const VkAllocationCallbacks) {
    HANDED
        .lock()
        .unwrap()
        .push(("vkDestroyDevice", device.0 as usize));
}
/// The fake level's `vkAllocateCommandBuffers`: one new handle, recorded.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_allocate(
    device: VkDevice,
    _: *const VkCommandBufferAllocateInfo,
    out: *mut VkCommandBuffer,
) -> VkResult {
    HANDED
        .lock()
        .unwrap()
        .push(("vkAllocateCommandBuffers", device.0 as usize));
    let cmd = handle(&DEVICE_DISPATCH);
    INNER_COMMAND_BUFFER.store(cmd as usize, SeqCst);
    // SAFETY: per the caller's contract.
    unsafe { *out = VkCommandBuffer(cmd) };
    VkResult::SUCCESS
}
extern "system" fn next_cmd_draw(cmd: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {
    HANDED.lock().unwrap().push(("vkCmdDraw", cmd.0 as usize));
}

/// `$f`, checked against its command's type `$pfn`, as a `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// The fake level's functions by name.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkDestroyDevice" => void_fn!(PFN_vkDestroyDevice, next_destroy_device),
        b"vkAllocateCommandBuffers" => void_fn!(PFN_vkAllocateCommandBuffers, next_allocate),
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        _ => None,
    }
}
/// The fake level's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
/// The fake level's `vkGetDeviceProcAddr`: the device it was handed recorded.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gdpa(device: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    HANDED
        .lock()
        .unwrap()
        .push(("vkGetDeviceProcAddr", device.0 as usize));
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the layer: wraps devices and command buffers ---------------------------------------------

/// A wrapper: the loader's dispatch word first (as `vkSetDeviceLoaderData` would write it), then
/// the next level's handle.
#[repr(C)]
struct Wrapper {
    dispatch: usize,
    inner: usize,
}

/// A new wrapper of `inner`.
///
/// # Safety
/// `inner` is a live dispatchable handle.
unsafe fn wrap(inner: *mut c_void) -> *mut c_void {
    // SAFETY: per the caller's contract: a dispatchable handle's first word.
    let dispatch = unsafe { *(inner as *const usize) };
    Box::into_raw(Box::new(Wrapper {
        dispatch,
        inner: inner as usize,
    })) as *mut c_void
}

struct Wrapping;
struct Instance;
struct Device {
    wrapper: usize,
    command_buffers: Mutex<Vec<usize>>,
    /// The handles the hooks saw.
    seen: Mutex<Vec<usize>>,
}

impl Device {
    fn inner_of(&self, handle: *mut c_void, known: &[usize]) -> Option<*mut c_void> {
        known
            .contains(&(handle as usize))
            // SAFETY: a wrapper this layer made and never frees.
            .then(|| unsafe { (*(handle as *const Wrapper)).inner as *mut c_void })
    }
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
        Ok(Instance)
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        device: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        Ok(Device {
            // SAFETY: the device the next level just made.
            wrapper: unsafe { wrap(device.0) } as usize,
            command_buffers: Mutex::new(Vec::new()),
            seen: Mutex::new(Vec::new()),
        })
    }
    fn returned_device(object: &Device, _: VkDevice) -> VkDevice {
        VkDevice(object.wrapper as *mut c_void)
    }
    fn unwrap_device(object: &Device, handle: VkDevice) -> Option<VkDevice> {
        object.inner_of(handle.0, &[object.wrapper]).map(VkDevice)
    }
    fn unwrap_command_buffer(object: &Device, handle: VkCommandBuffer) -> Option<VkCommandBuffer> {
        object
            .inner_of(handle.0, &object.command_buffers.lock().unwrap())
            .map(VkCommandBuffer)
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {}

#[vk_layer::hooks]
impl DeviceHooks for Device {
    /// Hands out wrapped command buffers.
    fn post_call_record_allocate_command_buffers(
        &self,
        _: &DeviceDispatchTable,
        device: VkDevice,
        _: *const VkCommandBufferAllocateInfo,
        out: *mut VkCommandBuffer,
        result: VkResult,
    ) {
        self.seen.lock().unwrap().push(device.0 as usize);
        if result == VkResult::SUCCESS {
            // SAFETY: the caller's array (of one, as the test allocates), which the next level
            // filled with a live command buffer.
            unsafe {
                let wrapper = wrap((*out).0);
                self.command_buffers.lock().unwrap().push(wrapper as usize);
                *out = VkCommandBuffer(wrapper);
            }
        }
    }
    fn pre_call_record_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        cmd: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
        self.seen.lock().unwrap().push(cmd.0 as usize);
    }
}

vk_layer::declare_layer!(Wrapping);

#[test]
fn wrapped_devices_and_command_buffers_go_down_unwrapped() {
    // SAFETY: the layer's entry points as their own types, called as an application through the
    // loader would: create infos and the loader's chains that live until each call returns, and
    // the handles the layer handed up.
    unsafe {
        let mut link = VkLayerInstanceLink {
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            ..Default::default()
        };
        let mut chain = VkLayerInstanceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        // The layer moves the link on in place: the chain holds a pointer that may write.
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
        let mut chain = VkLayerDeviceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let info = VkDeviceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateDevice =
            std::mem::transmute(vkGetInstanceProcAddr(instance, c"vkCreateDevice".as_ptr()));
        let mut device = VkDevice::NULL;
        assert_eq!(
            create.unwrap()(
                VkPhysicalDevice(handle(&INSTANCE_DISPATCH)),
                &info,
                ptr::null(),
                &mut device
            ),
            VkResult::SUCCESS
        );
        let inner_device = INNER_DEVICE.load(SeqCst);
        assert_ne!(
            device.0 as usize, inner_device,
            "the layer's own device is handed up"
        );
        HANDED.lock().unwrap().clear(); // the chassis's table load at creation

        let allocate: PFN_vkAllocateCommandBuffers = std::mem::transmute(vkGetDeviceProcAddr(
            device,
            c"vkAllocateCommandBuffers".as_ptr(),
        ));
        let mut cmd = VkCommandBuffer::NULL;
        assert_eq!(
            allocate.unwrap()(device, &VkCommandBufferAllocateInfo::default(), &mut cmd),
            VkResult::SUCCESS
        );
        let inner_cmd = INNER_COMMAND_BUFFER.load(SeqCst);
        assert_ne!(
            cmd.0 as usize, inner_cmd,
            "the layer's own command buffer is handed up"
        );
        let draw: PFN_vkCmdDraw =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkCmdDraw".as_ptr()));
        draw.unwrap()(cmd, 3, 1, 0, 0);
        let destroy: PFN_vkDestroyDevice =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkDestroyDevice".as_ptr()));
        let seen = {
            let state = <Wrapping as vk_layer::Registered>::chassis()
                .device(device.0)
                .expect("the device's state");
            state.hooks.seen.lock().unwrap().clone()
        };
        destroy.unwrap()(device, ptr::null());
        let handed = HANDED.lock().unwrap().clone();
        // vkGetDeviceProcAddr of the next level gets its own device (for the names the layer
        // passes through, asked by the chassis), the commands their own handles.
        assert!(
            handed
                .iter()
                .filter(|(c, _)| *c == "vkGetDeviceProcAddr")
                .all(|&(_, h)| h == inner_device),
            "{handed:?}"
        );
        let commands: Vec<_> = handed
            .into_iter()
            .filter(|(c, _)| *c != "vkGetDeviceProcAddr")
            .collect();
        assert_eq!(
            commands,
            [
                ("vkAllocateCommandBuffers", inner_device),
                ("vkCmdDraw", inner_cmd),
                ("vkDestroyDevice", inner_device)
            ]
        );
        // The hooks saw the layer's handles.
        assert_eq!(seen, [device.0 as usize, cmd.0 as usize]);
    }
}
