//! The project's test layer, built on the `vk-layer` SDK (see README.md): the SDK's chassis does
//! the chain walk, negotiation, `vkGet*ProcAddr` and the per-instance and per-device state; this
//! file is what the layer does, switched by `VK_TEST_LAYER_*` variables.

#![allow(non_snake_case)]
// Boxed wrappers: their addresses are the handles handed out, so they must not move. The hook
// methods are the SDK's safe trait methods: the chassis hands them the pointers a Vulkan caller
// passed, which the API's valid usage makes dereferenceable.
#![allow(clippy::vec_box, clippy::not_unsafe_ptr_arg_deref)]

pub mod install;

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, InstanceState, Layer,
    NextInstanceExtensions, NextInstanceLayers, NextInstanceVersion, ProcAddr, Registered,
};

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

/// The tag of this copy: the file name after `libvk_test_layer`, upper-cased.
fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        // SAFETY: `Dl_info` is pointers and integers, for which all zeroes is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        let addr = tag as *const () as *const c_void;
        // SAFETY: dladdr reads the address and fills `info`.
        if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
            return String::new();
        }
        // SAFETY: the NUL-terminated path dladdr found (not null: checked above).
        let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
        let file = path.rsplit('/').next().unwrap_or_default();
        let rest = file.strip_prefix("libvk_test_layer").unwrap_or_default();
        let rest = rest.split(".so").next().unwrap_or_default().trim_start_matches(['_', '-', '.']);
        rest.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
    })
}

fn var(name: &str) -> Option<String> {
    if !tag().is_empty() {
        if let Ok(v) = std::env::var(format!("VK_TEST_LAYER_{name}_{}", tag())) {
            return Some(v);
        }
    }
    std::env::var(format!("VK_TEST_LAYER_{name}")).ok()
}

/// The flags this layer knows, read once per process (GetProcAddr is called hundreds of times
/// per instance; a benchmark through this layer should measure the loader, not getenv).
const FLAGS: [&str; 13] = [
    "LOG",
    "WRAP",
    "CALLBACK",
    "FAIL_CREATE_INSTANCE",
    "FAIL_CREATE_DEVICE",
    "CREATE_DEVICE_CALLBACK",
    "INTERCEPT",
    "WRAP_INSTANCE",
    "NEXT_FROM_GIPA",
    "CLOBBER_INSTANCE",
    "CLOBBER_DEVICE",
    "REPORT",
    "COUNT_CALLS",
];

fn flags() -> &'static [Option<String>; 13] {
    static FLAG_VALUES: OnceLock<[Option<String>; 13]> = OnceLock::new();
    FLAG_VALUES.get_or_init(|| FLAGS.map(var))
}

fn raw_flag(name: &str) -> Option<&'static str> {
    FLAGS.iter().position(|f| *f == name).and_then(|i| flags()[i].as_deref())
}

fn flag(name: &str) -> bool {
    raw_flag(name).is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
}

fn intercept() -> bool {
    raw_flag("INTERCEPT").is_none_or(|v| v.trim() != "0")
}

fn log(what: &str) {
    if flag("LOG") {
        let t = if tag().is_empty() { "-" } else { tag() };
        println!("TEST_LAYER {t} {what}");
    }
}


fn tag_or_dash() -> &'static str {
    if tag().is_empty() {
        "-"
    } else {
        tag()
    }
}

macro_rules! pfn {
    ($f:expr, $t:ty) => {
        // SAFETY: function pointers of any signature share one representation.
        Some(unsafe { std::mem::transmute::<$t, unsafe extern "system" fn()>($f) })
    };
}

/// A device's name, read within its array (a driver may leave no NUL).
fn device_name(properties: &VkPhysicalDeviceProperties) -> String {
    let bytes = properties.deviceName.map(|c| c as u8);
    let name = CStr::from_bytes_until_nul(&bytes).map_or(&bytes[..], CStr::to_bytes);
    String::from_utf8_lossy(name).into_owned()
}

fn copy_table<T: DispatchTable>(table: &T) -> T {
    let mut copy = T::default();
    copy.slots_mut().copy_from_slice(table.slots());
    copy
}

// ------------------------------------------------------------------------------------------------
// The layer's objects
// ------------------------------------------------------------------------------------------------

/// The layer.
pub struct TestLayer;

/// A physical device as this layer hands it out when wrapping: its own dispatchable object.
#[repr(C)]
struct WrappedPhysicalDevice {
    /// The loader's dispatch pointer (written by vkSetInstanceLoaderData, through the handle:
    /// hence a cell).
    loader_data: AtomicPtr<c_void>,
    inner: VkPhysicalDevice,
}

/// The instance as this layer hands it out when wrapping instances: its own dispatchable object.
#[repr(C)]
struct WrappedInstance {
    /// The loader's dispatch pointer (written by vkSetInstanceLoaderData, through the handle:
    /// hence a cell).
    loader_data: AtomicPtr<c_void>,
}

/// Per instance.
pub struct Instance {
    /// The next level's handle.
    inner: VkInstance,
    next: InstanceDispatchTable,
    link: InstanceLink,
    /// `VK_TEST_LAYER_NEXT_FROM_GIPA`: the next `vk_layerGetPhysicalDeviceProcAddr` and
    /// `vkGetTestDriverRequestedApiVersionTEST`, resolved at vkCreateInstance.
    from_gipa: Option<(vk_layer::vk::layer_abi::PFN_GetPhysicalDeviceProcAddr, PFN_vkVoidFunction)>,
    wrapped: Mutex<Vec<Box<WrappedPhysicalDevice>>>,
    /// The handle handed up when wrapping instances.
    wrapper: Option<Box<WrappedInstance>>,
}

// SAFETY: the raw pointers are handles, usable from any thread; `wrapped` is behind a lock.
unsafe impl Send for Instance {}
// SAFETY: as for `Send`: shared, the handles are only read, and `wrapped` is behind a lock.
unsafe impl Sync for Instance {}

/// Per device.
pub struct Device {
    next: DeviceDispatchTable,
    draws: AtomicU32,
}

impl Instance {
    fn wrapper_handle(&self) -> Option<VkInstance> {
        self.wrapper.as_ref().map(|w| VkInstance(&**w as *const WrappedInstance as *mut c_void))
    }

    /// The next level's handle for a physical device this layer wrapped, if it is one.
    fn wrapped_inner(&self, pd: *mut c_void) -> Option<VkPhysicalDevice> {
        let wrapped = self.wrapped.lock().ok()?;
        wrapped.iter().find(|w| &***w as *const WrappedPhysicalDevice as *mut c_void == pd).map(|w| w.inner)
    }
}

/// The state of the instance a physical device or instance handle belongs to.
fn instance_state(handle: *mut c_void) -> Option<&'static InstanceState<TestLayer>> {
    // SAFETY: a live dispatchable handle, per the caller (the API).
    unsafe { TestLayer::chassis().instance(handle) }
}

/// The hooked commands' switches: whether each goes through the layer (else the next level's
/// function is handed out, as if not hooked).
fn hooked_now(name: &[u8]) -> Option<bool> {
    let (wrap, wrap_instance) = (flag("WRAP"), flag("WRAP_INSTANCE"));
    Some(match name {
        b"vkCmdDraw" => intercept(),
        b"vkGetPhysicalDeviceProperties" => intercept() || wrap,
        b"vkEnumeratePhysicalDevices" => wrap || wrap_instance || flag("COUNT_CALLS"),
        b"vkCreateHeadlessSurfaceEXT" | b"vkDestroySurfaceKHR" | b"vkCreateDebugUtilsMessengerEXT" | b"vkDestroyDebugUtilsMessengerEXT" => {
            wrap_instance
        }
        b"vkSetDebugUtilsObjectNameEXT" => wrap || wrap_instance,
        b"vkGetPhysicalDeviceFeatures"
        | b"vkGetPhysicalDeviceMemoryProperties"
        | b"vkGetPhysicalDeviceQueueFamilyProperties"
        | b"vkEnumerateDeviceExtensionProperties" => wrap,
        _ => return None,
    })
}

/// The layer's commands of its own.
fn own_command(name: &[u8]) -> PFN_vkVoidFunction {
    match name {
        b"vkGetTestLayerDrawsTEST" => pfn!(GetTestLayerDrawsTEST, unsafe extern "system" fn(VkDevice) -> u32),
        _ => None,
    }
}

impl Layer for TestLayer {
    type Instance = Instance;
    type Device = Device;

    fn before_create_instance(_: &mut vk_layer::InstanceCreateInfo<'_>, link: &InstanceLink, p_instance: *mut VkInstance) -> Result<(), VkResult> {
        log("vkCreateInstance");
        // SAFETY: the next level's own function and the caller's output pointer, per the API.
        unsafe {
            if flag("CALLBACK") {
                let f: PFN_vkEnumerateInstanceExtensionProperties =
                    std::mem::transmute((link.gipa)(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties".as_ptr()));
                let mut count = 0;
                let r = f.map(|f| f(std::ptr::null(), &mut count, std::ptr::null_mut()));
                println!("TEST_LAYER_CALLBACK instance extensions {r:?} {count}");
            }
            if flag("CLOBBER_INSTANCE") && !p_instance.is_null() && !(*p_instance).is_null() {
                // A broken layer: zeroes the loader's object behind the handle it is to pass down
                // (its dispatch pointer and its 64-bit magic word).
                std::ptr::write_bytes((*p_instance).0 as *mut u8, 0, std::mem::size_of::<usize>() + std::mem::size_of::<u64>());
            }
        }
        Ok(())
    }

    fn create_instance(
        _: &VkInstanceCreateInfo,
        instance: VkInstance,
        next: &InstanceDispatchTable,
        link: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        if flag("REPORT") {
            // `VK_TEST_LAYER_REPORT`: a message to the application's messengers (those chained at
            // vkCreateInstance hear it now).
            let objects = [vk_layer::report::Object { object_type: VkObjectType::INSTANCE, handle: instance.0 as u64, name: None }];
            let message = vk_layer::report::Message {
                severity: VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
                types: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT,
                id_name: c"TEST-LAYER-report",
                id_number: 1,
                text: c"the test layer reports",
                objects: &objects,
            };
            // SAFETY: the instance just created.
            unsafe { vk_layer::report::<TestLayer>(instance.0, &message) };
        }
        // SAFETY: the next level's own functions, with its live instance.
        let from_gipa = flag("NEXT_FROM_GIPA").then(|| unsafe { next_from_gipa(instance, link) });
        // The wrapper needs the loader's dispatch pointer, which only vkSetInstanceLoaderData gives.
        let wrapper = match (flag("WRAP_INSTANCE"), link.set_loader_data) {
            (true, Some(set)) => {
                let w = Box::new(WrappedInstance { loader_data: AtomicPtr::default() });
                // SAFETY: the loader's callback, with the instance it made and our object.
                unsafe { set(instance, &*w as *const WrappedInstance as *mut c_void) };
                Some(w)
            }
            _ => None,
        };
        if flag("CALLBACK") {
            if let (Some(enumerate), Some(props)) = (next.vkEnumeratePhysicalDevices, next.vkGetPhysicalDeviceProperties) {
                // SAFETY: the next level's own functions, called as the API says.
                unsafe {
                    let mut count = 0;
                    enumerate(instance, &mut count, std::ptr::null_mut());
                    let mut pds = vec![VkPhysicalDevice::NULL; count as usize];
                    enumerate(instance, &mut count, pds.as_mut_ptr());
                    for pd in pds {
                        let mut p = VkPhysicalDeviceProperties::default();
                        props(pd, &mut p);
                        println!("TEST_LAYER_CALLBACK device {}", device_name(&p));
                    }
                }
            }
        }
        if flag("FAIL_CREATE_INSTANCE") {
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        }
        Ok(Instance { inner: instance, next: copy_table(next), link: *link, from_gipa, wrapped: Mutex::new(Vec::new()), wrapper })
    }

    fn returned_instance(object: &Instance, instance: VkInstance) -> VkInstance {
        object.wrapper_handle().unwrap_or(instance)
    }

    /// When wrapping instances, only the wrapper this layer returned is accepted: anything else
    /// is reported and refused, where a real wrapping layer would crash.
    fn unwrap_instance(object: &Instance, handle: VkInstance) -> Option<VkInstance> {
        match object.wrapper_handle() {
            Some(wrapper) if wrapper != handle => {
                println!("TEST_LAYER_WRAP {} {:p}: not the instance this layer returned", tag_or_dash(), handle.0);
                None
            }
            _ => Some(object.inner),
        }
    }

    fn unwrap_physical_device(object: &Instance, handle: VkPhysicalDevice) -> Option<VkPhysicalDevice> {
        Some(object.wrapped_inner(handle.0).unwrap_or(handle))
    }

    fn before_destroy_instance(_: &Instance, _: VkInstance) {
        log("vkDestroyInstance");
    }

    fn before_create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &mut vk_layer::DeviceCreateInfo<'_>,
        _: &DeviceLink,
        p_device: *mut VkDevice,
    ) -> Result<(), VkResult> {
        log("vkCreateDevice");
        // SAFETY: the caller's output pointer, per the API; what it holds is the loader's object.
        unsafe {
            if flag("CLOBBER_DEVICE") && !p_device.is_null() && !(*p_device).is_null() {
                // A broken layer: clears the 128 bytes behind the handle it is to pass down, as
                // the Khronos loader's test of the policy does.
                std::ptr::write_bytes((*p_device).0 as *mut u8, 0, 128);
            }
        }
        Ok(())
    }

    fn create_device(
        instance: &Instance,
        pd: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        device: VkDevice,
        next: &DeviceDispatchTable,
        link: &DeviceLink,
    ) -> Result<Device, VkResult> {
        let inner = instance.wrapped_inner(pd.0).unwrap_or(pd);
        // SAFETY: the next levels' own functions and the loader's callbacks, called as the API says.
        unsafe {
            if flag("CALLBACK") {
                if let Some(props) = instance.next.vkGetPhysicalDeviceProperties {
                    let mut p = VkPhysicalDeviceProperties::default();
                    props(inner, &mut p);
                    println!("TEST_LAYER_CALLBACK creating a device on {}", device_name(&p));
                }
                if let Some(set) = link.set_loader_data {
                    let mut object: [usize; 2] = [0, 0];
                    let r = set(device, object.as_mut_ptr() as *mut c_void);
                    if r == VkResult::SUCCESS && object[0] == *(device.0 as *const usize) {
                        println!("TEST_LAYER_CALLBACK device loader data ok");
                    }
                }
            }
            if flag("CREATE_DEVICE_CALLBACK") {
                private_device(instance, inner, info);
            }
        }
        if flag("FAIL_CREATE_DEVICE") {
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        }
        Ok(Device { next: copy_table(next), draws: AtomicU32::new(0) })
    }

    fn before_destroy_device(_: &Device, _: VkDevice) {
        log("vkDestroyDevice");
    }

    fn instance_proc_addr(name: &CStr) -> ProcAddr {
        let name = name.to_bytes();
        if let Some(own) = own_command(name) {
            return ProcAddr::Own(Some(own));
        }
        if hooked_now(name) == Some(true) {
            return ProcAddr::Chassis;
        }
        // A wrapping layer must unwrap every command it passes down that takes a wrapped handle;
        // this one only offers those it unwraps.
        if let Some(cmd) = vk_layer::vk::lookup::command(name) {
            let level = cmd.info().level;
            if (flag("WRAP") && level == vk_layer::vk::CommandLevel::PhysicalDevice)
                || (flag("WRAP_INSTANCE") && level == vk_layer::vk::CommandLevel::Instance)
            {
                return ProcAddr::Own(None);
            }
        }
        ProcAddr::Next
    }

    fn device_proc_addr(name: &CStr) -> ProcAddr {
        let name = name.to_bytes();
        if let Some(own) = own_command(name) {
            return ProcAddr::Own(Some(own));
        }
        let wrapping = flag("WRAP") || flag("WRAP_INSTANCE");
        match name {
            // The other commands naming objects by handle would need unwrapping too: not offered.
            b"vkSetDebugUtilsObjectTagEXT" | b"vkDebugMarkerSetObjectNameEXT" | b"vkDebugMarkerSetObjectTagEXT" if wrapping => ProcAddr::Own(None),
            _ if hooked_now(name) == Some(true) => ProcAddr::Chassis,
            _ => ProcAddr::Next,
        }
    }

    /// Intercepts the test driver's `vkGetTestDriverRequestedApiVersionTEST`; passes every other
    /// name down.
    fn physical_device_proc_addr(state: &InstanceState<Self>, name: &CStr, next: PFN_vkVoidFunction) -> PFN_vkVoidFunction {
        let below = match state.hooks.from_gipa {
            // SAFETY: the next level's own function, with its live instance.
            Some((gpdpa, _)) => gpdpa.and_then(|g| unsafe { g(state.hooks.inner, name.as_ptr()) }),
            None => next,
        };
        if intercept() && below.is_some() && name == c"vkGetTestDriverRequestedApiVersionTEST" {
            return pfn!(RequestedApiVersion, unsafe extern "system" fn(VkPhysicalDevice) -> u32);
        }
        below
    }

    /// Adds `VK_TEST_pre_instance_extension` to the list the rest of the chain gives.
    unsafe fn enumerate_instance_extension_properties(
        next: NextInstanceExtensions<'_>,
        pLayerName: *const c_char,
        pCount: *mut u32,
        pProps: *mut VkExtensionProperties,
    ) -> VkResult {
        println!("TEST_LAYER_PRE {} extensions", tag());
        let mut count = 0;
        // SAFETY: the caller's name (the trait's contract), our count.
        let r = unsafe { next.call(pLayerName, &mut count, std::ptr::null_mut()) };
        if r != VkResult::SUCCESS || !pLayerName.is_null() {
            // SAFETY: the caller's arguments, per the trait's contract.
            return unsafe { next.call(pLayerName, pCount, pProps) };
        }
        let mut all = vec![VkExtensionProperties::default(); count as usize];
        // SAFETY: our array of `count` elements.
        unsafe { next.call(pLayerName, &mut count, all.as_mut_ptr()) };
        all.truncate(count as usize);
        all.push(vk_layer::extension_properties("VK_TEST_pre_instance_extension", 1));
        // SAFETY: the caller's count and array, per the trait's contract.
        unsafe { vk_layer::fill_array(&all, pCount, pProps) }
    }

    unsafe fn enumerate_instance_layer_properties(next: NextInstanceLayers<'_>, pCount: *mut u32, pProps: *mut VkLayerProperties) -> VkResult {
        println!("TEST_LAYER_PRE {} layers", tag());
        // SAFETY: the caller's arguments, per the trait's contract.
        unsafe { next.call(pCount, pProps) }
    }

    /// Reports at most Vulkan 1.1.
    unsafe fn enumerate_instance_version(next: NextInstanceVersion<'_>, pVersion: *mut u32) -> VkResult {
        println!("TEST_LAYER_PRE {} version", tag());
        // SAFETY: the caller's version, writable per the trait's contract.
        let r = unsafe { next.call(pVersion) };
        if r == VkResult::SUCCESS {
            // SAFETY: as above.
            unsafe { *pVersion = (*pVersion).min(vk_layer::vk::make_api_version(0, 1, 1, 0)) };
        }
        r
    }
}

vk_layer::declare_layer!(TestLayer {
    negotiate: vkNegotiateLoaderLayerInterfaceVersion,
    // Exported under these names for the renamed-function test.
    get_instance_proc_addr: TestLayer_GetInstanceProcAddr,
    get_device_proc_addr: TestLayer_GetDeviceProcAddr,
    // For an implicit manifest's "pre_instance_functions" (not `vk*` names, so nothing interposes).
    enumerate_instance_extension_properties: TestLayer_EnumerateInstanceExtensionProperties,
    enumerate_instance_layer_properties: TestLayer_EnumerateInstanceLayerProperties,
    enumerate_instance_version: TestLayer_EnumerateInstanceVersion,
});

/// As layers built on the Khronos samples do: the next level's `vk_layerGetPhysicalDeviceProcAddr`
/// from its vkGetInstanceProcAddr, and the next functions of the unknown commands this layer
/// intercepts, resolved as soon as the instance exists (before the application names them).
///
/// # Safety
/// `instance` is the next level's live instance and `link` its link.
unsafe fn next_from_gipa(
    instance: VkInstance,
    link: &InstanceLink,
) -> (vk_layer::vk::layer_abi::PFN_GetPhysicalDeviceProcAddr, PFN_vkVoidFunction) {
    // SAFETY: the next level's `vkGetInstanceProcAddr` with its live instance (the caller's
    // contract), and its answer for this name as that command's type.
    let (next_gpdpa, device_command) = unsafe {
        let next_gpdpa: vk_layer::vk::layer_abi::PFN_GetPhysicalDeviceProcAddr =
            std::mem::transmute((link.gipa)(instance, c"vk_layerGetPhysicalDeviceProcAddr".as_ptr()));
        (next_gpdpa, (link.gipa)(instance, c"vkTestDeviceCommand000TEST".as_ptr()))
    };
    // SAFETY: the next level's `vk_layerGetPhysicalDeviceProcAddr`, with its live instance.
    let requested = next_gpdpa.and_then(|g| unsafe { g(instance, c"vkGetTestDriverRequestedApiVersionTEST".as_ptr()) });
    let found = |f: bool| if f { "found" } else { "missing" };
    println!("TEST_LAYER_CALLBACK next vk_layerGetPhysicalDeviceProcAddr {}", found(next_gpdpa.is_some()));
    println!("TEST_LAYER_CALLBACK next vkGetTestDriverRequestedApiVersionTEST {}", found(requested.is_some()));
    println!("TEST_LAYER_CALLBACK next vkTestDeviceCommand000TEST {}", found(device_command.is_some()));
    (next_gpdpa, requested)
}

// ------------------------------------------------------------------------------------------------
// Hooks
// ------------------------------------------------------------------------------------------------

#[vk_layer::hooks(intercept(get_physical_device_properties, create_headless_surface_ext, destroy_surface_khr, create_debug_utils_messenger_ext, destroy_debug_utils_messenger_ext, get_physical_device_features, get_physical_device_memory_properties, get_physical_device_queue_family_properties, enumerate_device_extension_properties))]
impl InstanceHooks for Instance {
    /// `VK_TEST_LAYER_WRAP`: hands out wrapped physical devices (the same wrapper for the same
    /// device every time), each given the loader's dispatch pointer.
    fn pre_call_validate_enumerate_physical_devices(&self, _: &vk_layer::vk::InstanceDispatchTable, instance: VkInstance, pCount: *mut u32, pDevices: *mut VkPhysicalDevice) -> Option<VkResult> {
        // `VK_TEST_LAYER_COUNT_CALLS`: each call the layer receives, on a line of its own.
        if flag("COUNT_CALLS") {
            println!("TEST_LAYER_CALL {} vkEnumeratePhysicalDevices {}", tag_or_dash(), if pDevices.is_null() { "count" } else { "fill" });
        }
        if !flag("WRAP") {
            return None;
        }
        let Some(enumerate) = self.next.vkEnumeratePhysicalDevices else { return Some(VkResult::ERROR_INITIALIZATION_FAILED) };
        let Some(next_instance) = TestLayer::unwrap_instance(self, instance) else { return Some(VkResult::ERROR_INITIALIZATION_FAILED) };
        // SAFETY: the next level's own functions and the caller's arrays, per the API.
        unsafe {
            let mut count = 0;
            let r = enumerate(next_instance, &mut count, std::ptr::null_mut());
            if r != VkResult::SUCCESS {
                return Some(r);
            }
            let mut inner = vec![VkPhysicalDevice::NULL; count as usize];
            enumerate(next_instance, &mut count, inner.as_mut_ptr());
            inner.truncate(count as usize);
            let Ok(mut wrapped) = self.wrapped.lock() else { return Some(VkResult::ERROR_INITIALIZATION_FAILED) };
            let handles: Vec<VkPhysicalDevice> = inner
                .iter()
                .map(|&pd| {
                    if let Some(w) = wrapped.iter().find(|w| w.inner == pd) {
                        return VkPhysicalDevice(&**w as *const WrappedPhysicalDevice as *mut c_void);
                    }
                    let w = Box::new(WrappedPhysicalDevice { loader_data: AtomicPtr::default(), inner: pd });
                    let handle = VkPhysicalDevice(&*w as *const WrappedPhysicalDevice as *mut c_void);
                    if let Some(set) = self.link.set_loader_data {
                        set(next_instance, handle.0);
                    }
                    wrapped.push(w);
                    handle
                })
                .collect();
            Some(vk_layer::fill_array(&handles, pCount, pDevices))
        }
    }
}

#[vk_layer::hooks]
impl DeviceHooks for Device {
    fn pre_call_record_cmd_draw(&self, _: &vk_layer::vk::DeviceDispatchTable, _: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {
        self.draws.fetch_add(1, Ordering::Relaxed);
    }

    /// While wrapping: an instance or physical device named must be one this layer wrapped
    /// (reported and refused with `VK_ERROR_VALIDATION_FAILED_EXT` otherwise), and goes down as
    /// the next level's handle.
    fn pre_call_validate_set_debug_utils_object_name_ext(&self, _: &vk_layer::vk::DeviceDispatchTable, device: VkDevice, pNameInfo: *const VkDebugUtilsObjectNameInfoEXT) -> Option<VkResult> {
        let Some(next) = self.next.vkSetDebugUtilsObjectNameEXT else { return Some(VkResult::ERROR_EXTENSION_NOT_PRESENT) };
        // SAFETY: the caller's structure, per the API.
        let Some(mut info) = (unsafe { pNameInfo.as_ref() }).copied() else { return Some(VkResult::ERROR_INITIALIZATION_FAILED) };
        let object = info.objectHandle as usize as *mut c_void;
        let inner = match info.objectType {
            VkObjectType::INSTANCE if flag("WRAP_INSTANCE") => {
                instance_state(object).and_then(|s| TestLayer::unwrap_instance(&s.hooks, VkInstance(object))).map(|i| i.0 as u64)
            }
            VkObjectType::PHYSICAL_DEVICE if flag("WRAP") => {
                let inner = if object.is_null() { None } else { instance_state(object).and_then(|s| s.hooks.wrapped_inner(object)) };
                if inner.is_none() {
                    println!("TEST_LAYER_WRAP {} vkSetDebugUtilsObjectNameEXT: not a physical device this layer returned", tag_or_dash());
                }
                inner.map(|pd| pd.0 as u64)
            }
            _ => Some(info.objectHandle),
        };
        let Some(inner) = inner else { return Some(VkResult::ERROR_VALIDATION_FAILED_EXT) };
        info.objectHandle = inner;
        // SAFETY: the next level's own function, with the caller's device.
        Some(unsafe { next(device, &info) })
    }
}

// ------------------------------------------------------------------------------------------------
// Commands of the layer's own
// ------------------------------------------------------------------------------------------------

/// `vkGetTestLayerDrawsTEST`: the draws this layer saw on `device`.
///
/// # Safety
/// `device` is a live device.
unsafe extern "system" fn GetTestLayerDrawsTEST(device: VkDevice) -> u32 {
    vk_layer::guard(|| {
        // SAFETY: a live device, per this command's contract.
        unsafe { TestLayer::chassis().device(device.0) }.map_or(0, |d| d.hooks.draws.load(Ordering::Relaxed))
    })
}

/// `vkGetTestDriverRequestedApiVersionTEST`, a physical-device command the registry does not know.
///
/// # Safety
/// `pd` is a live physical device.
unsafe extern "system" fn RequestedApiVersion(pd: VkPhysicalDevice) -> u32 {
    vk_layer::guard(|| {
        log("vkGetTestDriverRequestedApiVersionTEST");
        let Some(state) = instance_state(pd.0) else { return 0 };
        let name = c"vkGetTestDriverRequestedApiVersionTEST";
        let next = match state.hooks.from_gipa {
            Some((_, resolved)) => resolved,
            None => state.next_physical_device_proc_addr(name),
        };
        // SAFETY: the next level's function of this name has this signature.
        let f: Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32> = unsafe { std::mem::transmute(next) };
        let inner = TestLayer::unwrap_physical_device(&state.hooks, pd).unwrap_or(pd);
        // SAFETY: the next level's own function, with its handle.
        f.map_or(0, |f| unsafe { f(inner) })
    })
}

/// Creates a device of the layer's own through the loader's `pfnLayerCreateDevice` (the layers
/// below this one), uses a queue of it, destroys it with `pfnLayerDestroyDevice`.
///
/// # Safety
/// `inner` is the next level's live physical device of `instance`, and `info` a valid device
/// create info.
unsafe fn private_device(instance: &Instance, inner: VkPhysicalDevice, info: *const VkDeviceCreateInfo) {
    let layer_device = instance.link.layer_device;
    let (Some(create), Some(destroy)) = (layer_device.pfnLayerCreateDevice, layer_device.pfnLayerDestroyDevice) else {
        println!("TEST_LAYER_CALLBACK no create-device callback");
        return;
    };
    let alloc = std::ptr::null();
    let mut device = VkDevice::NULL;
    let mut next_gdpa: PFN_vkGetDeviceProcAddr = None;
    // The loader finds this layer in the chain by its vkGetInstanceProcAddr: the chassis's, which
    // negotiation handed out (not the exported wrapper of the same).
    let layer_gipa = vk_layer::chassis::get_instance_proc_addr::<TestLayer>;
    // SAFETY: the loader's callback, with the next level's instance and physical device and the
    // caller's create info (the caller's contract).
    let r = unsafe { create(instance.inner, inner, info, alloc, &mut device, Some(layer_gipa), &mut next_gdpa) };
    let Some(gdpa) = next_gdpa.filter(|_| r == VkResult::SUCCESS) else {
        println!("TEST_LAYER_CALLBACK private device failed {r:?}");
        return;
    };
    // SAFETY: the device just made, through its own `vkGetDeviceProcAddr`, each answer called as
    // its command's type: a queue of the family the create info asked for, then the device
    // destroyed through the loader's callback.
    unsafe {
        let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(gdpa(device, c"vkGetDeviceQueue".as_ptr()));
        let wait: PFN_vkQueueWaitIdle = std::mem::transmute(gdpa(device, c"vkQueueWaitIdle".as_ptr()));
        if let (Some(get_queue), Some(wait)) = (get_queue, wait) {
            let mut queue = VkQueue::NULL;
            get_queue(device, 0, 0, &mut queue);
            println!("TEST_LAYER_CALLBACK private device queue wait {:?}", wait(queue));
        }
        let destroy_fn: PFN_vkDestroyDevice = std::mem::transmute(gdpa(device, c"vkDestroyDevice".as_ptr()));
        destroy(device, alloc, destroy_fn);
    }
}
