//! The chassis for wrapping layers: `call_down_*` replaces what goes down (the arguments, or the
//! call itself) and `post_call_record_*` still runs; `intercept(cmd_*)` / `intercept(*)` route
//! families of commands without listing them; a handle the layer does not know is reported once
//! per command, the application getting the command's fallback value.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{command_id as id, DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooked, DeviceHooks, DeviceLink, InstanceHooked, InstanceHooks, InstanceLink, Layer,
    LayerProperties,
};

// ---- the fake next level: records what it is handed -------------------------------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;
static ELSEWHERE_DISPATCH: u64 = 3;

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

/// What the next level was called with, in order.
static HANDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn handed(line: String) {
    HANDED.lock().unwrap().push(line);
}

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
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_device(
    _: VkPhysicalDevice,
    _: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDevice(handle(&DEVICE_DISPATCH)) };
    VkResult::SUCCESS
}
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_messenger(
    _: VkInstance,
    _: *const VkDebugUtilsMessengerCreateInfoEXT,
    _: *const VkAllocationCallbacks,
    out: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDebugUtilsMessengerEXT(77) };
    VkResult::SUCCESS
}
extern "system" fn next_cmd_draw(cmd: VkCommandBuffer, vertices: u32, _: u32, _: u32, _: u32) {
    handed(format!("vkCmdDraw {:#x} {vertices}", cmd.0 as usize));
}
extern "system" fn next_cmd_dispatch(cmd: VkCommandBuffer, x: u32, _: u32, _: u32) {
    handed(format!("vkCmdDispatch {:#x} {x}", cmd.0 as usize));
}
extern "system" fn next_queue_wait_idle(queue: VkQueue) -> VkResult {
    handed(format!("vkQueueWaitIdle {:#x}", queue.0 as usize));
    VkResult::SUCCESS
}
extern "system" fn next_device_wait_idle(device: VkDevice) -> VkResult {
    handed(format!("vkDeviceWaitIdle {:#x}", device.0 as usize));
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
        b"vkCreateDebugUtilsMessengerEXT" => {
            void_fn!(PFN_vkCreateDebugUtilsMessengerEXT, next_create_messenger)
        }
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        b"vkCmdDispatch" => void_fn!(PFN_vkCmdDispatch, next_cmd_dispatch),
        b"vkQueueWaitIdle" => void_fn!(PFN_vkQueueWaitIdle, next_queue_wait_idle),
        b"vkDeviceWaitIdle" => void_fn!(PFN_vkDeviceWaitIdle, next_device_wait_idle),
        _ => None,
    }
}
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the application's messenger --------------------------------------------------------------

static HEARD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// # Safety
/// As a `PFN_vkDebugUtilsMessengerCallbackEXT`.
unsafe extern "system" fn messenger(
    _: VkDebugUtilsMessageSeverityFlagsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut c_void,
) -> VkBool32 {
    // SAFETY: per the caller's contract: the data, its first object and its strings.
    let line = unsafe {
        let data = &*data;
        format!(
            "{} {} [{:#x}]",
            CStr::from_ptr(data.pMessageIdName).to_string_lossy(),
            CStr::from_ptr(data.pMessage).to_string_lossy(),
            (*data.pObjects).objectHandle
        )
    };
    HEARD.lock().unwrap().push(line);
    0
}

// ---- the layer: draws doubled on the way down, one command buffer refused, cmd_* routed --------

struct Doubling;
struct Instance;
struct Device {
    /// The command buffer the layer's unwrap refuses.
    refused: usize,
    /// (vertices as the caller passed them, result) per `post_call_record_*`.
    posts: Mutex<Vec<String>>,
}

/// The command buffer `Device::refused` names.
static REFUSED: Mutex<usize> = Mutex::new(0);

impl Layer for Doubling {
    type Instance = Instance;
    type Device = Device;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_TEST_doubling",
        spec_version: 0,
        implementation_version: 1,
        description: "doubles draws",
        instance_extensions: &[],
        device_extensions: &[],
    });
    const MESSAGES: bool = true;

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
            refused: *REFUSED.lock().unwrap(),
            posts: Mutex::new(Vec::new()),
        })
    }
    fn unwrap_command_buffer(object: &Device, handle: VkCommandBuffer) -> Option<VkCommandBuffer> {
        (handle.0 as usize != object.refused).then_some(handle)
    }
}

#[vk_layer::hooks(intercept(*))]
impl InstanceHooks for Instance {}

#[vk_layer::hooks(intercept(cmd_*, device_wait_idle))]
impl DeviceHooks for Device {
    /// Twice the vertices go down.
    unsafe fn call_down_cmd_draw(
        &self,
        next: &DeviceDispatchTable,
        cmd: VkCommandBuffer,
        vertices: u32,
        instances: u32,
        first_vertex: u32,
        first_instance: u32,
    ) {
        // SAFETY: the next level's function with the arguments as they go down, per the contract.
        unsafe { next.vkCmdDraw.unwrap()(cmd, 2 * vertices, instances, first_vertex, first_instance) }
    }
    fn post_call_record_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        vertices: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
        self.posts.lock().unwrap().push(format!("draw {vertices}"));
    }
    /// Answered here: the next level never sees it.
    unsafe fn call_down_queue_wait_idle(&self, _: &DeviceDispatchTable, _: VkQueue) -> VkResult {
        VkResult::TIMEOUT
    }
    fn post_call_record_queue_wait_idle(&self, _: &DeviceDispatchTable, _: VkQueue, result: VkResult) {
        self.posts.lock().unwrap().push(format!("wait {}", result.0));
    }
}

vk_layer::declare_layer!(Doubling);

#[test]
fn intercept_families_name_every_command_of_the_family() {
    let device = <Device as DeviceHooked>::COMMANDS;
    // Hook methods and `device_wait_idle` listed, every vkCmd* by the family.
    for command in [id::vkCmdDraw, id::vkCmdDispatch, id::vkCmdBeginRendering, id::vkQueueWaitIdle, id::vkDeviceWaitIdle] {
        assert!(device.contains(&command), "{command}");
    }
    assert!(!device.contains(&id::vkQueueSubmit) && !device.contains(&id::vkCreateImage));
    let commands = vk_layer::DEVICE_HOOKABLE
        .iter()
        .zip(vk_layer::DEVICE_HOOK_NAMES)
        .filter(|(_, name)| name.starts_with("cmd_"))
        .count();
    assert_eq!(device.len(), commands + 2, "no command twice");
    // `*`: every instance-level command.
    assert_eq!(<Instance as InstanceHooked>::COMMANDS, vk_layer::INSTANCE_HOOKABLE);
}

#[test]
fn call_down_replaces_what_goes_down_and_post_call_record_still_runs() {
    let refused = handle(&DEVICE_DISPATCH) as usize;
    *REFUSED.lock().unwrap() = refused;
    // SAFETY: the layer's entry points as their own types, called as an application through the
    // loader would: create infos and the loader's chains that live until each call returns, and
    // the handles the fake level made.
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
        assert_eq!(create.unwrap()(&info, ptr::null(), &mut instance), VkResult::SUCCESS);
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(
            vkGetInstanceProcAddr(instance, c"vkCreateDebugUtilsMessengerEXT".as_ptr()),
        );
        let messenger_info = VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
            messageType: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT,
            pfnUserCallback: Some(messenger),
            ..Default::default()
        };
        let mut m = VkDebugUtilsMessengerEXT::NULL;
        assert_eq!(
            create_messenger.unwrap()(instance, &messenger_info, ptr::null(), &mut m),
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
        let physical = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
        assert_eq!(create.unwrap()(physical, &info, ptr::null(), &mut device), VkResult::SUCCESS);

        let draw: PFN_vkCmdDraw =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkCmdDraw".as_ptr()));
        let dispatch: PFN_vkCmdDispatch =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkCmdDispatch".as_ptr()));
        let wait: PFN_vkQueueWaitIdle =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkQueueWaitIdle".as_ptr()));
        let device_wait: PFN_vkDeviceWaitIdle =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkDeviceWaitIdle".as_ptr()));
        let own = |f: PFN_vkVoidFunction| f.map(|f| f as usize);
        assert_ne!(
            own(std::mem::transmute::<PFN_vkCmdDispatch, PFN_vkVoidFunction>(dispatch)),
            own(next_function(c"vkCmdDispatch".as_ptr())),
            "intercept(cmd_*) routes vkCmdDispatch through the layer"
        );
        let cmd = handle(&DEVICE_DISPATCH);
        let queue = VkQueue(handle(&DEVICE_DISPATCH));
        draw.unwrap()(VkCommandBuffer(cmd), 3, 1, 0, 0);
        dispatch.unwrap()(VkCommandBuffer(cmd), 5, 1, 1);
        assert_eq!(wait.unwrap()(queue), VkResult::TIMEOUT, "call_down's own answer");
        assert_eq!(device_wait.unwrap()(device), VkResult::SUCCESS);
        // The refused command buffer: not passed down, reported once per command.
        for _ in 0..2 {
            draw.unwrap()(VkCommandBuffer(refused as *mut c_void), 7, 1, 0, 0);
            dispatch.unwrap()(VkCommandBuffer(refused as *mut c_void), 9, 1, 1);
        }
        // A command buffer of no device of this layer (another level's): not passed down either.
        let stranger = handle(&ELSEWHERE_DISPATCH);
        draw.unwrap()(VkCommandBuffer(stranger), 11, 1, 0, 0);
        assert_eq!(wait.unwrap()(VkQueue(stranger)), VkResult::ERROR_UNKNOWN);

        assert_eq!(
            *HANDED.lock().unwrap(),
            [
                format!("vkCmdDraw {:#x} 6", cmd as usize),
                format!("vkCmdDispatch {:#x} 5", cmd as usize),
                format!("vkDeviceWaitIdle {:#x}", device.0 as usize),
            ]
        );
        let state = <Doubling as vk_layer::Registered>::chassis()
            .device(device.0)
            .expect("the device's state");
        // The post-call hooks saw the caller's arguments and call_down's result (VK_TIMEOUT, 2); none ran for
        // the refused calls.
        assert_eq!(*state.hooks.posts.lock().unwrap(), ["draw 3", "wait 2"]);
        assert_eq!(
            *HEARD.lock().unwrap(),
            [
                format!(
                    "vk-layer-unknown-handle vkCmdDraw: VkCommandBuffer {refused:#x} is not a \
                     handle this layer knows (its unwrap refused it); the call is not passed \
                     down and returns nothing (the call is dropped). Reported once per command. \
                     [{refused:#x}]"
                ),
                format!(
                    "vk-layer-unknown-handle vkCmdDispatch: VkCommandBuffer {refused:#x} is not \
                     a handle this layer knows (its unwrap refused it); the call is not passed \
                     down and returns nothing (the call is dropped). Reported once per command. \
                     [{refused:#x}]"
                ),
            ],
            "the stranger's calls are on stderr only: no instance to send them to"
        );
    }
}
