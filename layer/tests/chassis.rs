//! The chassis in one process, against a fake next level: negotiation, the chain walk,
//! `vkGet*ProcAddr` answers, hooks around calls, skipped calls, caught panics, state lifetime.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::SeqCst};

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer};

// ---- the fake next level ----------------------------------------------------------------------

/// The dispatch words of the fake level's instance and device (any distinct addresses).
static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;
static NEXT_DRAWS: AtomicU32 = AtomicU32::new(0);
/// Held by each test that creates an instance and a device: they share the fake level's dispatch
/// words, which key the layer's process-wide maps, and a key taken by one test's live object
/// refuses the other's (the test harness runs tests on parallel threads).
static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`CREATING`], held also after a test that held it failed.
fn creating() -> std::sync::MutexGuard<'static, ()> {
    CREATING.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A dispatchable handle whose first word is `dispatch`.
fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

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
extern "system" fn next_destroy_instance(_: VkInstance, _: *const VkAllocationCallbacks) {
    NEXT_DESTROYED.with(|n| n.set(n.get() + 1));
}
/// The fake level's `vkCreateDevice`: a new handle.
///
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
extern "system" fn next_destroy_device(_: VkDevice, _: *const VkAllocationCallbacks) {
    NEXT_DESTROYED.with(|n| n.set(n.get() + 1));
}

thread_local! {
    /// Instances and devices of the fake level destroyed on this thread (tests run in parallel).
    static NEXT_DESTROYED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// The layer's device constructor panics on this thread.
    static PANIC_IN_CREATE_DEVICE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
/// The fake level's `vkEnumeratePhysicalDevices`: one device, never written.
///
/// # Safety
/// `count` is writable.
unsafe extern "system" fn next_enumerate(
    _: VkInstance,
    count: *mut u32,
    _: *mut VkPhysicalDevice,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *count = 1 };
    VkResult::INCOMPLETE
}
extern "system" fn next_properties(_: VkPhysicalDevice, _: *mut VkPhysicalDeviceProperties) {}
extern "system" fn next_cmd_draw(_: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {
    NEXT_DRAWS.fetch_add(1, SeqCst);
}
extern "system" fn next_cmd_dispatch(_: VkCommandBuffer, _: u32, _: u32, _: u32) {}
extern "system" fn next_draw_indirect_count(
    _: VkCommandBuffer,
    _: VkBuffer,
    _: VkDeviceSize,
    _: VkBuffer,
    _: VkDeviceSize,
    _: u32,
    _: u32,
) {
}

/// `$f`, checked against its command's type `$pfn`, as a `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// The fake level's functions by name; it has no `vkQueueSubmit`.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkDestroyInstance" => void_fn!(PFN_vkDestroyInstance, next_destroy_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkDestroyDevice" => void_fn!(PFN_vkDestroyDevice, next_destroy_device),
        b"vkEnumeratePhysicalDevices" => void_fn!(PFN_vkEnumeratePhysicalDevices, next_enumerate),
        b"vkGetPhysicalDeviceProperties" => {
            void_fn!(PFN_vkGetPhysicalDeviceProperties, next_properties)
        }
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        b"vkCmdDispatch" => void_fn!(PFN_vkCmdDispatch, next_cmd_dispatch),
        // Only under the extension's name, an alias of the core command.
        b"vkCmdDrawIndirectCountKHR" => {
            void_fn!(PFN_vkCmdDrawIndirectCount, next_draw_indirect_count)
        }
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
/// The fake level's `vkGetDeviceProcAddr`.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the layer under test ---------------------------------------------------------------------

struct TestLayer;
struct Instance {
    enumerated: AtomicU32,
}
struct Device {
    draws: AtomicU32,
}
static DEVICES_DROPPED: AtomicUsize = AtomicUsize::new(0);
impl Drop for Device {
    fn drop(&mut self) {
        DEVICES_DROPPED.fetch_add(1, SeqCst);
    }
}

impl Layer for TestLayer {
    type Instance = Instance;
    type Device = Device;

    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        next: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        assert!(next.vkEnumeratePhysicalDevices.is_some());
        Ok(Instance {
            enumerated: AtomicU32::new(0),
        })
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        next: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        assert!(next.vkCmdDraw.is_some());
        assert!(
            !PANIC_IN_CREATE_DEVICE.with(|p| p.get()),
            "a panicking constructor"
        );
        Ok(Device {
            draws: AtomicU32::new(0),
        })
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {
    fn post_call_record_enumerate_physical_devices(
        &self,
        next: &InstanceDispatchTable,
        _: VkInstance,
        count: *mut u32,
        _: *mut VkPhysicalDevice,
        result: VkResult,
    ) {
        // The hook reaches the next level's table: the fake level's own function.
        assert_eq!(
            next.vkEnumeratePhysicalDevices.map(|f| f as usize),
            Some(next_enumerate as *const () as usize)
        );
        // SAFETY: the count the fake level wrote.
        assert_eq!((unsafe { *count }, result), (1, VkResult::INCOMPLETE));
        self.enumerated.fetch_add(1, SeqCst);
    }
}

#[vk_layer::hooks(intercept(queue_submit, cmd_draw_indirect_count))]
impl DeviceHooks for Device {
    fn pre_call_validate_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        _: VkCommandBuffer,
        vertex_count: u32,
        _: u32,
        _: u32,
        _: u32,
    ) -> Option<()> {
        assert_ne!(vertex_count, 666, "a panicking hook");
        (vertex_count == 0).then_some(())
    }
    fn post_call_record_cmd_draw(
        &self,
        next: &DeviceDispatchTable,
        _: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
        assert_eq!(
            next.vkCmdDraw.map(|f| f as usize),
            Some(next_cmd_draw as *const () as usize)
        );
        self.draws.fetch_add(1, SeqCst);
    }
}

vk_layer::declare_layer!(TestLayer);

// ---- helpers ----------------------------------------------------------------------------------

/// The layer's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `instance` is null or a live instance of the layer.
unsafe fn gipa(instance: VkInstance, name: &CStr) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract, and a NUL-terminated name.
    unsafe { vkGetInstanceProcAddr(instance, name.as_ptr()) }
}
/// The layer's `vkGetDeviceProcAddr`.
///
/// # Safety
/// `device` is a live device of the layer, or one it has destroyed (then the answer is NULL).
unsafe fn gdpa(device: VkDevice, name: &CStr) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract, and a NUL-terminated name.
    unsafe { vkGetDeviceProcAddr(device, name.as_ptr()) }
}
/// A function's address, for comparing pointers.
fn addr(f: PFN_vkVoidFunction) -> usize {
    f.map_or(0, |f| f as *const () as usize)
}

/// An instance and a device created through the layer with the loader's chain structures.
fn create() -> (VkInstance, VkDevice) {
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
    let mut instance = VkInstance::NULL;
    // SAFETY: the layer's `vkCreateInstance` as its own type, with the loader's chain.
    let result = unsafe {
        let create: PFN_vkCreateInstance =
            std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance"));
        create.unwrap()(&info, ptr::null(), &mut instance)
    };
    assert_eq!(result, VkResult::SUCCESS);
    // SAFETY: `function` is `LAYER_LINK_INFO`: `pLayerInfo` is the live member.
    assert!(unsafe { chain.u.pLayerInfo }.is_null(), "the link moves on");

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
    let physical_device = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
    let mut device = VkDevice::NULL;
    // SAFETY: the layer's `vkCreateDevice` as its own type, for a physical device of the live
    // instance, with the loader's chain.
    let result = unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(gipa(instance, c"vkCreateDevice"));
        create.unwrap()(physical_device, &info, ptr::null(), &mut device)
    };
    assert_eq!(result, VkResult::SUCCESS);
    (instance, device)
}

// ---- tests -------------------------------------------------------------------------------------

/// A panic in the layer's device constructor fails vkCreateDevice and destroys the device the
/// level below made (it leaked).
#[test]
fn panicking_constructor_destroys_what_the_level_below_made() {
    let _creating = creating();
    PANIC_IN_CREATE_DEVICE.with(|p| p.set(true));
    let result = std::panic::catch_unwind(create);
    PANIC_IN_CREATE_DEVICE.with(|p| p.set(false));
    assert!(result.is_err(), "create() asserts vkCreateDevice succeeded");
    assert_eq!(NEXT_DESTROYED.with(|n| n.get()), 1);
}

#[test]
fn negotiation() {
    let mut interface = VkNegotiateLayerInterface {
        sType: VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT,
        loaderLayerInterfaceVersion: 5,
        ..Default::default()
    };
    // SAFETY: a negotiation structure, as the loader passes it.
    let result = unsafe { vkNegotiateLoaderLayerInterfaceVersion(&mut interface) };
    assert_eq!(result, VkResult::SUCCESS);
    assert_eq!(interface.loaderLayerInterfaceVersion, 2);
    assert_eq!(
        interface
            .pfnGetInstanceProcAddr
            .map(|f| f as *const () as usize),
        Some(vk_layer::chassis::get_instance_proc_addr::<TestLayer> as *const () as usize)
    );
    assert_eq!(
        interface
            .pfnGetDeviceProcAddr
            .map(|f| f as *const () as usize),
        Some(vk_layer::chassis::get_device_proc_addr::<TestLayer> as *const () as usize)
    );
    let mut bad = VkNegotiateLayerInterface::default();
    // SAFETY: a structure of the wrong type, then none: both refused.
    let results = unsafe {
        (
            vkNegotiateLoaderLayerInterfaceVersion(&mut bad),
            vkNegotiateLoaderLayerInterfaceVersion(ptr::null_mut()),
        )
    };
    assert_eq!(
        results,
        (
            VkResult::ERROR_INITIALIZATION_FAILED,
            VkResult::ERROR_INITIALIZATION_FAILED
        )
    );
}

/// One test: the layer's state is process-wide, and the steps build on each other.
#[test]
fn calls_through_the_chassis() {
    let _creating = creating();
    let (instance, device) = create();
    // SAFETY: the layer's entry points, called as the loader and an application would: with the
    // handles it made (and, once, a destroyed device it must no longer know), each function
    // called as the type of the command it was asked for.
    unsafe {
        // Without an instance only the chassis's own global functions are answered.
        assert!(gipa(VkInstance::NULL, c"vkCmdDispatch").is_none());

        // Unhooked commands, and hookable ones the layer does not hook: the next level's own.
        assert_eq!(
            addr(gipa(instance, c"vkCmdDispatch")),
            next_cmd_dispatch as *const () as usize
        );
        assert_eq!(
            addr(gipa(instance, c"vkGetPhysicalDeviceProperties")),
            next_properties as *const () as usize
        );
        assert_eq!(
            addr(gdpa(device, c"vkCmdDispatch")),
            next_cmd_dispatch as *const () as usize
        );
        assert!(gdpa(device, c"vkNoSuchCommand").is_none());
        // A hooked command asked for by an alias: the layer's entry.
        let by_alias = gdpa(device, c"vkCmdDrawIndirectCountKHR");
        assert!(
            by_alias.is_some() && addr(by_alias) != next_draw_indirect_count as *const () as usize
        );
        // A hooked command the next level lacks is not offered either.
        assert!(gdpa(device, c"vkQueueSubmit").is_none());
        // Instance-level hooks are not answered as device commands: whatever the next level says.
        assert_eq!(
            addr(gdpa(device, c"vkEnumeratePhysicalDevices")),
            next_enumerate as *const () as usize
        );

        // Hooked instance command: the layer's entry, the hooks see the next level's result.
        let enumerate = gipa(instance, c"vkEnumeratePhysicalDevices");
        assert_ne!(addr(enumerate), next_enumerate as *const () as usize);
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(enumerate);
        let mut count = 0;
        assert_eq!(
            enumerate.unwrap()(instance, &mut count, ptr::null_mut()),
            VkResult::INCOMPLETE
        );
        let chassis = <TestLayer as vk_layer::Registered>::chassis();
        assert_eq!(
            chassis
                .instance(instance.0)
                .unwrap()
                .hooks
                .enumerated
                .load(SeqCst),
            1
        );

        // Hooked device command, reached from either GetProcAddr, on a command buffer of the device.
        let draw = gdpa(device, c"vkCmdDraw");
        assert_ne!(addr(draw), next_cmd_draw as *const () as usize);
        assert_eq!(addr(gipa(instance, c"vkCmdDraw")), addr(draw));
        let draw: PFN_vkCmdDraw = std::mem::transmute(draw);
        let cmd = VkCommandBuffer(handle(&DEVICE_DISPATCH));
        draw.unwrap()(cmd, 3, 1, 0, 0);
        draw.unwrap()(cmd, 0, 1, 0, 0); // skipped by pre_call_validate
        draw.unwrap()(cmd, 666, 1, 0, 0); // the hook panics: caught, not passed down
        draw.unwrap()(cmd, 6, 1, 0, 0);
        assert_eq!(NEXT_DRAWS.load(SeqCst), 2);
        assert_eq!(
            chassis.device(device.0).unwrap().hooks.draws.load(SeqCst),
            2
        );

        // Destruction: the next level's destroy runs and the layer's objects go away.
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(gdpa(device, c"vkDestroyDevice"));
        destroy.unwrap()(device, ptr::null());
        assert_eq!(
            (
                NEXT_DESTROYED.with(|n| n.get()),
                DEVICES_DROPPED.load(SeqCst)
            ),
            (1, 1)
        );
        assert!(chassis.device(device.0).is_none());
        assert!(gdpa(device, c"vkCmdDispatch").is_none());
        draw.unwrap()(cmd, 3, 1, 0, 0); // an unknown device: nothing to call
        assert_eq!(NEXT_DRAWS.load(SeqCst), 2);
        let destroy: PFN_vkDestroyInstance =
            std::mem::transmute(gipa(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, ptr::null());
        assert_eq!(NEXT_DESTROYED.with(|n| n.get()), 2);
        assert!(chassis.instance(instance.0).is_none());
    }
}
