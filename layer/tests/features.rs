//! The SDK's optional features, against a fake next level: entry points exported under names of
//! the layer's choosing, lifecycle hooks, a layer that wraps the instance it returns (and unwraps
//! it on the way down), `vkGet*ProcAddr` overrides, `vk_layerGetPhysicalDeviceProcAddr`, the
//! layer's own properties and the pre-instance interceptors.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer, LayerProperties,
    NextInstanceExtensions, NextInstanceVersion, ProcAddr, Registered,
};

// ---- the fake next level ----------------------------------------------------------------------

/// The loader's dispatch word for the instance (any distinct address).
static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

/// What happened, in order, across the layer and the fake level.
static EVENTS: Mutex<Vec<String>> = Mutex::new(Vec::new());
fn event(what: impl Into<String>) {
    EVENTS.lock().unwrap().push(what.into());
}
fn take_events() -> Vec<String> {
    std::mem::take(&mut *EVENTS.lock().unwrap())
}

/// The next level's instance handle.
static NEXT_INSTANCE: AtomicUsize = AtomicUsize::new(0);

/// The fake level's `vkCreateInstance`: a new handle, recorded.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_instance(
    _: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    event("next vkCreateInstance");
    let instance = handle(&INSTANCE_DISPATCH);
    NEXT_INSTANCE.store(instance as usize, SeqCst);
    // SAFETY: per the caller's contract.
    unsafe { *out = VkInstance(instance) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_instance(i: VkInstance, _: *const VkAllocationCallbacks) {
    let inner = i.0 as usize == NEXT_INSTANCE.load(SeqCst);
    event(format!("next vkDestroyInstance inner={inner}"));
}
/// The fake level's `vkEnumeratePhysicalDevices`: none.
///
/// # Safety
/// `count` is writable.
unsafe extern "system" fn next_enumerate(
    i: VkInstance,
    count: *mut u32,
    _: *mut VkPhysicalDevice,
) -> VkResult {
    let inner = i.0 as usize == NEXT_INSTANCE.load(SeqCst);
    event(format!("next vkEnumeratePhysicalDevices inner={inner}"));
    // SAFETY: per the caller's contract.
    unsafe { *count = 0 };
    VkResult::SUCCESS
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
    event("next vkCreateDevice");
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDevice(handle(&DEVICE_DISPATCH)) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_device(_: VkDevice, _: *const VkAllocationCallbacks) {
    event("next vkDestroyDevice");
}
extern "system" fn next_cmd_draw(_: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {}
/// The fake level's `vkEnumerateDeviceExtensionProperties`: a count of 7, nothing written.
///
/// # Safety
/// `count` is writable.
unsafe extern "system" fn next_enumerate_device_extensions(
    _: VkPhysicalDevice,
    _: *const c_char,
    count: *mut u32,
    _: *mut VkExtensionProperties,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *count = 7 };
    VkResult::SUCCESS
}
/// An unknown physical-device command of the next level.
extern "system" fn next_unknown(_: VkPhysicalDevice) -> u32 {
    1
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
        b"vkDestroyInstance" => void_fn!(PFN_vkDestroyInstance, next_destroy_instance),
        b"vkEnumeratePhysicalDevices" => void_fn!(PFN_vkEnumeratePhysicalDevices, next_enumerate),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkDestroyDevice" => void_fn!(PFN_vkDestroyDevice, next_destroy_device),
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        b"vkEnumerateDeviceExtensionProperties" => void_fn!(
            PFN_vkEnumerateDeviceExtensionProperties,
            next_enumerate_device_extensions
        ),
        b"vkGetPhysicalDeviceFeatures" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
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
/// The fake level's `vk_layerGetPhysicalDeviceProcAddr`: its unknown command.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gpdpa(i: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    assert_eq!(
        i.0 as usize,
        NEXT_INSTANCE.load(SeqCst),
        "the next level's own instance"
    );
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkUnknownTEST" | b"vkReplacedTEST" => {
            void_fn!(
                Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32>,
                next_unknown
            )
        }
        _ => None,
    }
}
/// `vkSetInstanceLoaderData`: writes the loader's dispatch word into the layer's object.
///
/// # Safety
/// `i` is a live dispatchable handle and `object` a dispatchable object whose first word may be
/// written.
unsafe extern "system" fn set_instance_loader_data(i: VkInstance, object: *mut c_void) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *(object as *mut usize) = *(i.0 as *const usize) };
    VkResult::SUCCESS
}

// ---- the layer under test: it wraps the instance it returns ------------------------------------

struct Wrapping;

/// The instance as this layer hands it out: its own dispatchable object, whose first word the
/// loader writes (through the handle, hence a cell).
#[repr(C)]
struct Wrapper {
    loader_data: AtomicUsize,
}

struct Instance {
    inner: VkInstance,
    wrapper: Box<Wrapper>,
}
struct Device;

impl Instance {
    fn wrapper_handle(&self) -> VkInstance {
        VkInstance(&*self.wrapper as *const Wrapper as *mut c_void)
    }
}

/// The layer's own device command: 42 for a device of the layer.
///
/// # Safety
/// `device` is a live device.
unsafe extern "system" fn private_command(device: VkDevice) -> u32 {
    vk_layer::guard(|| {
        // SAFETY: a live device, per this command's contract.
        unsafe { Wrapping::chassis().device(device.0) }.map_or(0, |_| 42)
    })
}
extern "system" fn replaced_unknown(_: VkPhysicalDevice) -> u32 {
    2
}

impl Layer for Wrapping {
    type Instance = Instance;
    type Device = Device;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_TEST_wrapping",
        spec_version: vk_layer::vk::make_api_version(0, 1, 3, 0),
        implementation_version: 4,
        description: "wraps",
        instance_extensions: &[("VK_TEST_instance_ext", 2)],
        device_extensions: &[("VK_TEST_device_ext", 3, &["vkPrivateTEST"])],
    });

    fn before_create_instance(
        _: &mut vk_layer::InstanceCreateInfo<'_>,
        link: &InstanceLink,
        _: *mut VkInstance,
    ) -> Result<(), VkResult> {
        event("layer before vkCreateInstance");
        assert!(link.set_loader_data.is_some() && link.gpdpa.is_some());
        Ok(())
    }
    fn create_instance(
        _: &VkInstanceCreateInfo,
        instance: VkInstance,
        _: &InstanceDispatchTable,
        link: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        event("layer create_instance");
        let object = Instance {
            inner: instance,
            wrapper: Box::new(Wrapper {
                loader_data: AtomicUsize::new(0),
            }),
        };
        // SAFETY: the loader's callback, with the next level's live instance.
        unsafe { link.set_loader_data.unwrap()(instance, object.wrapper_handle().0) };
        Ok(object)
    }
    fn returned_instance(object: &Instance, _: VkInstance) -> VkInstance {
        object.wrapper_handle()
    }
    fn unwrap_instance(object: &Instance, handle: VkInstance) -> Option<VkInstance> {
        (handle == object.wrapper_handle()).then_some(object.inner)
    }
    fn before_destroy_instance(_: &Instance, _: VkInstance) {
        event("layer before vkDestroyInstance");
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        link: &DeviceLink,
    ) -> Result<Device, VkResult> {
        assert!(link.set_loader_data.is_none());
        Ok(Device)
    }
    fn before_destroy_device(_: &Device, _: VkDevice) {
        event("layer before vkDestroyDevice");
    }
    fn instance_proc_addr(name: &CStr) -> ProcAddr {
        match name.to_bytes() {
            b"vkPrivateTEST" => ProcAddr::Own(void_fn!(
                Option<unsafe extern "system" fn(VkDevice) -> u32>,
                private_command
            )),
            b"vkGetPhysicalDeviceFeatures" => ProcAddr::Own(None),
            _ => ProcAddr::Chassis,
        }
    }
    fn device_proc_addr(name: &CStr) -> ProcAddr {
        match name.to_bytes() {
            b"vkPrivateTEST" => Self::instance_proc_addr(name),
            // A hook turned off: the next level's own function.
            b"vkCmdDraw" => ProcAddr::Next,
            _ => ProcAddr::Chassis,
        }
    }
    fn physical_device_proc_addr(
        _: &vk_layer::InstanceState<Self>,
        name: &CStr,
        next: PFN_vkVoidFunction,
    ) -> PFN_vkVoidFunction {
        match name.to_bytes() {
            b"vkReplacedTEST" if next.is_some() => void_fn!(
                Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32>,
                replaced_unknown
            ),
            _ => next,
        }
    }
    unsafe fn enumerate_instance_extension_properties(
        next: NextInstanceExtensions<'_>,
        layer_name: *const c_char,
        p_count: *mut u32,
        p_properties: *mut VkExtensionProperties,
    ) -> VkResult {
        // SAFETY: the trait's contract: the caller's name, count and array.
        let result = unsafe { next.call(layer_name, p_count, p_properties) };
        // SAFETY: as above: the count is valid.
        unsafe { *p_count += 1 };
        result
    }
    unsafe fn enumerate_instance_version(
        next: NextInstanceVersion<'_>,
        version: *mut u32,
    ) -> VkResult {
        // SAFETY: the trait's contract: `version` is writable.
        let result = unsafe { next.call(version) };
        // SAFETY: as above.
        unsafe { *version = (*version).min(vk_layer::vk::make_api_version(0, 1, 1, 0)) };
        result
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {
    fn pre_call_record_enumerate_physical_devices(
        &self,
        _: &InstanceDispatchTable,
        instance: VkInstance,
        _: *mut u32,
        _: *mut VkPhysicalDevice,
    ) {
        // The hooks see the caller's handle; the next level gets its own.
        let wrapper = instance == self.wrapper_handle();
        event(format!(
            "layer hook vkEnumeratePhysicalDevices wrapper={wrapper}"
        ));
    }
}
#[vk_layer::hooks(intercept(cmd_draw))]
impl DeviceHooks for Device {}

vk_layer::declare_layer!(Wrapping {
    negotiate: Wrapping_Negotiate,
    get_instance_proc_addr: Wrapping_GetInstanceProcAddr,
    get_device_proc_addr: Wrapping_GetDeviceProcAddr,
    enumerate_instance_extension_properties: Wrapping_EnumerateInstanceExtensionProperties,
    enumerate_instance_layer_properties: Wrapping_EnumerateInstanceLayerProperties,
    enumerate_instance_version: Wrapping_EnumerateInstanceVersion,
});

// ---- helpers ----------------------------------------------------------------------------------

/// The layer's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `instance` is null or a live instance of the layer.
unsafe fn gipa(instance: VkInstance, name: &CStr) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract, and a NUL-terminated name.
    unsafe { Wrapping_GetInstanceProcAddr(instance, name.as_ptr()) }
}
/// The layer's `vkGetDeviceProcAddr`.
///
/// # Safety
/// `device` is a live device of the layer.
unsafe fn gdpa(device: VkDevice, name: &CStr) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract, and a NUL-terminated name.
    unsafe { Wrapping_GetDeviceProcAddr(device, name.as_ptr()) }
}
fn addr(f: PFN_vkVoidFunction) -> usize {
    f.map_or(0, |f| f as *const () as usize)
}

/// An instance created through the layer with the loader's chain structures.
fn create_instance() -> VkInstance {
    let mut link = VkLayerInstanceLink {
        pfnNextGetInstanceProcAddr: Some(next_gipa),
        pfnNextGetPhysicalDeviceProcAddr: Some(next_gpdpa),
        ..Default::default()
    };
    let mut chain = VkLayerInstanceCreateInfo::default();
    chain.u.pLayerInfo = &mut link;
    let mut data = VkLayerInstanceCreateInfo {
        function: VkLayerFunction::LOADER_DATA_CALLBACK,
        ..Default::default()
    };
    data.u.pfnSetInstanceLoaderData = Some(set_instance_loader_data);
    // The layer moves the link on in place: the chain holds a pointer that may write.
    data.pNext = &mut chain as *mut _ as *const c_void;
    let info = VkInstanceCreateInfo {
        pNext: &data as *const _ as *const c_void,
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
    instance
}

/// A device of `instance` created through the layer with the loader's chain structures.
///
/// # Safety
/// `instance` is a live instance of the layer.
unsafe fn create_device(instance: VkInstance) -> VkDevice {
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
    let mut device = VkDevice::NULL;
    let physical_device = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
    // SAFETY: the layer's `vkCreateDevice` as its own type, for a physical device of the
    // caller's live instance, with the loader's chain.
    let result = unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(gipa(instance, c"vkCreateDevice"));
        create.unwrap()(physical_device, &info, ptr::null(), &mut device)
    };
    assert_eq!(result, VkResult::SUCCESS);
    device
}

// ---- tests -------------------------------------------------------------------------------------

#[test]
fn negotiation_gives_the_physical_device_proc_addr() {
    let mut interface = VkNegotiateLayerInterface {
        sType: VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT,
        loaderLayerInterfaceVersion: 2,
        ..Default::default()
    };
    // SAFETY: a negotiation structure, as the loader passes it.
    let result = unsafe { Wrapping_Negotiate(&mut interface) };
    assert_eq!(result, VkResult::SUCCESS);
    assert!(interface.pfnGetPhysicalDeviceProcAddr.is_some());
}

/// One test: the steps share the layer's process-wide state.
#[test]
fn wrapping_lifecycle_overrides_and_properties() {
    let instance = create_instance();
    // SAFETY: the layer's entry points, called as the loader and an application would: with the
    // handles it handed up (and, once, a handle it must refuse), arrays of the counts passed, and
    // each function called as the type of the command it was asked for.
    unsafe {
        let inner = NEXT_INSTANCE.load(SeqCst);
        assert_ne!(
            instance.0 as usize, inner,
            "the caller gets the layer's wrapper"
        );
        assert_eq!(
            take_events(),
            [
                "layer before vkCreateInstance",
                "next vkCreateInstance",
                "layer create_instance"
            ]
        );

        // A generated entry point: the hook sees the wrapper, the next level its own instance.
        let enumerate: PFN_vkEnumeratePhysicalDevices =
            std::mem::transmute(gipa(instance, c"vkEnumeratePhysicalDevices"));
        let mut count = 5;
        assert_eq!(
            enumerate.unwrap()(instance, &mut count, ptr::null_mut()),
            VkResult::SUCCESS
        );
        assert_eq!(
            take_events(),
            [
                "layer hook vkEnumeratePhysicalDevices wrapper=true",
                "next vkEnumeratePhysicalDevices inner=true"
            ]
        );
        // A handle that is not the wrapper is refused, not passed down.
        assert_eq!(
            enumerate.unwrap()(
                VkInstance(inner as *mut c_void),
                &mut count,
                ptr::null_mut()
            ),
            VkResult::ERROR_UNKNOWN
        );
        assert_eq!(
            take_events(),
            ["layer hook vkEnumeratePhysicalDevices wrapper=false"]
        );

        // Overrides: a command of the layer's own, a hidden one.
        let private = gipa(instance, c"vkPrivateTEST");
        assert_eq!(addr(private), private_command as *const () as usize);
        assert!(
            gipa(VkInstance::NULL, c"vkPrivateTEST").is_some(),
            "own commands need no instance"
        );
        assert!(
            gipa(instance, c"vkGetPhysicalDeviceFeatures").is_none(),
            "hidden"
        );

        // vk_layerGetPhysicalDeviceProcAddr: the next level's answer, or the layer's.
        let mut interface = VkNegotiateLayerInterface {
            sType: VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT,
            loaderLayerInterfaceVersion: 2,
            ..Default::default()
        };
        Wrapping_Negotiate(&mut interface);
        let gpdpa = interface.pfnGetPhysicalDeviceProcAddr.unwrap();
        assert_eq!(
            addr(gpdpa(instance, c"vkUnknownTEST".as_ptr())),
            next_unknown as *const () as usize
        );
        assert_eq!(
            addr(gpdpa(instance, c"vkReplacedTEST".as_ptr())),
            replaced_unknown as *const () as usize
        );
        assert!(gpdpa(instance, c"vkNothingTEST".as_ptr()).is_none());

        // The layer's own properties.
        let layers: PFN_vkEnumerateDeviceLayerProperties =
            std::mem::transmute(gipa(instance, c"vkEnumerateDeviceLayerProperties"));
        let mut props = [VkLayerProperties::default(); 2];
        let mut n = 2;
        let pd = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
        assert_eq!(
            layers.unwrap()(pd, &mut n, props.as_mut_ptr()),
            VkResult::SUCCESS
        );
        assert_eq!(n, 1);
        assert_eq!(
            CStr::from_ptr(props[0].layerName.as_ptr()),
            c"VK_LAYER_TEST_wrapping"
        );
        assert_eq!(
            (props[0].implementationVersion, props[0].specVersion >> 22),
            (4, 1)
        );
        let extensions: PFN_vkEnumerateDeviceExtensionProperties =
            std::mem::transmute(gipa(instance, c"vkEnumerateDeviceExtensionProperties"));
        let mut ext = [VkExtensionProperties::default(); 1];
        let mut n = 1;
        let own = c"VK_LAYER_TEST_wrapping".as_ptr();
        assert_eq!(
            extensions.unwrap()(pd, own, &mut n, ext.as_mut_ptr()),
            VkResult::SUCCESS
        );
        assert_eq!(
            (n, CStr::from_ptr(ext[0].extensionName.as_ptr())),
            (1, c"VK_TEST_device_ext")
        );
        // Another layer's (or the driver's) extensions: from the next level.
        assert_eq!(
            extensions.unwrap()(pd, ptr::null(), &mut n, ptr::null_mut()),
            VkResult::SUCCESS
        );
        assert_eq!(n, 7);
        let instance_extensions: PFN_vkEnumerateInstanceExtensionProperties = std::mem::transmute(
            gipa(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"),
        );
        let mut n = 0;
        assert_eq!(
            instance_extensions.unwrap()(own, &mut n, ptr::null_mut()),
            VkResult::SUCCESS
        );
        assert_eq!(n, 1);
        assert_eq!(
            instance_extensions.unwrap()(c"VK_LAYER_other".as_ptr(), &mut n, ptr::null_mut()),
            VkResult::ERROR_LAYER_NOT_PRESENT
        );

        // A device: its own command works through the override; a hook turned off is the next
        // level's function.
        let device = create_device(instance);
        take_events();
        let private: Option<unsafe extern "system" fn(VkDevice) -> u32> =
            std::mem::transmute(gdpa(device, c"vkPrivateTEST"));
        assert_eq!(private.unwrap()(device), 42);
        assert_eq!(
            addr(gdpa(device, c"vkCmdDraw")),
            next_cmd_draw as *const () as usize
        );
        assert_ne!(
            addr(gipa(instance, c"vkCmdDraw")),
            next_cmd_draw as *const () as usize
        );

        // Destruction: the layer's hook before the next level's call, which gets its own handle.
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(gdpa(device, c"vkDestroyDevice"));
        destroy.unwrap()(device, ptr::null());
        let destroy: PFN_vkDestroyInstance =
            std::mem::transmute(gipa(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, ptr::null());
        assert_eq!(
            take_events(),
            [
                "layer before vkDestroyDevice",
                "next vkDestroyDevice",
                "layer before vkDestroyInstance",
                "next vkDestroyInstance inner=true"
            ]
        );
        assert!(Wrapping::chassis().instance(instance.0).is_none());
    }
}

/// The chain's end for `vkEnumerateInstanceExtensionProperties`: a count of 3.
///
/// # Safety
/// `count` is writable.
unsafe extern "system" fn bottom_extensions(
    _: *const VkEnumerateInstanceExtensionPropertiesChain,
    _: *const c_char,
    count: *mut u32,
    _: *mut VkExtensionProperties,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *count = 3 };
    VkResult::SUCCESS
}
/// The chain's end for `vkEnumerateInstanceLayerProperties`: a count of 9.
///
/// # Safety
/// `count` is writable.
unsafe extern "system" fn bottom_layers(
    _: *const VkEnumerateInstanceLayerPropertiesChain,
    count: *mut u32,
    _: *mut VkLayerProperties,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *count = 9 };
    VkResult::SUCCESS
}
/// The chain's end for `vkEnumerateInstanceVersion`: 1.4.
///
/// # Safety
/// `version` is writable.
unsafe extern "system" fn bottom_version(
    _: *const VkEnumerateInstanceVersionChain,
    version: *mut u32,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *version = vk_layer::vk::make_api_version(0, 1, 4, 0) };
    VkResult::SUCCESS
}

/// The exported pre-instance interceptors call the layer's methods, which call down the chain.
#[test]
fn pre_instance_interceptors() {
    // SAFETY: the interceptors called as the loader calls them: with its chain structures (and
    // once none), and writable counts and versions.
    unsafe {
        let chain = VkEnumerateInstanceExtensionPropertiesChain {
            pfnNextLayer: Some(bottom_extensions),
            ..Default::default()
        };
        let mut count = 0;
        let r = Wrapping_EnumerateInstanceExtensionProperties(
            &chain,
            ptr::null(),
            &mut count,
            ptr::null_mut(),
        );
        assert_eq!(
            (r, count),
            (VkResult::SUCCESS, 4),
            "the layer's method added one"
        );
        let chain = VkEnumerateInstanceLayerPropertiesChain {
            pfnNextLayer: Some(bottom_layers),
            ..Default::default()
        };
        let r = Wrapping_EnumerateInstanceLayerProperties(&chain, &mut count, ptr::null_mut());
        assert_eq!(
            (r, count),
            (VkResult::SUCCESS, 9),
            "the default passes through"
        );
        let chain = VkEnumerateInstanceVersionChain {
            pfnNextLayer: Some(bottom_version),
            ..Default::default()
        };
        let mut version = 0;
        let r = Wrapping_EnumerateInstanceVersion(&chain, &mut version);
        assert_eq!(
            (r, version),
            (
                VkResult::SUCCESS,
                vk_layer::vk::make_api_version(0, 1, 1, 0)
            )
        );
        // A null chain is refused, not followed.
        let r = Wrapping_EnumerateInstanceVersion(ptr::null(), &mut version);
        assert_eq!(r, VkResult::ERROR_INITIALIZATION_FAILED);
    }
}

/// The manifest written from the layer's properties.
#[test]
fn manifest_from_the_layer_properties() {
    let mut extensions = Vec::new();
    let manifest =
        vk_layer::Manifest::of::<Wrapping>(std::path::Path::new("libw.so"), &mut extensions)
            .unwrap();
    let value: serde_json::Value = serde_json::from_str(&manifest.to_json()).unwrap();
    assert_eq!(value["layer"]["name"], "VK_LAYER_TEST_wrapping");
    assert_eq!(value["layer"]["api_version"], "1.3.0");
    assert_eq!(
        value["layer"]["instance_extensions"][0]["name"],
        "VK_TEST_instance_ext"
    );
    assert_eq!(
        value["layer"]["device_extensions"][0]["entrypoints"][0],
        "vkPrivateTEST"
    );
}
