//! The project's test layer, built on the generated crate's dispatch tables (see README.md).
//!
//! Per-instance and per-device data are kept under the dispatch key (the first word of the
//! handle, which the loader owns), as the layer guide (seed 003) describes.

#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc, clippy::vec_box)]

pub mod install;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use vk_generated::layer_abi::*;
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
type Gdpa = unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction;

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

/// The tag of this copy: the file name after `libvk_test_layer`, upper-cased.
fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        let addr = tag as *const () as *const c_void;
        // SAFETY: dladdr reads the address and fills `info`.
        if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
            return String::new();
        }
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
const FLAGS: [&str; 10] = [
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
];

fn flags() -> &'static [Option<String>; 10] {
    static FLAG_VALUES: OnceLock<[Option<String>; 10]> = OnceLock::new();
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

fn guard<R>(on_panic: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

// ------------------------------------------------------------------------------------------------
// State, keyed by the dispatch pointer
// ------------------------------------------------------------------------------------------------

unsafe fn key(handle: *mut c_void) -> usize {
    *(handle as *const usize)
}

/// A physical device as this layer hands it out when wrapping: its own dispatchable object.
#[repr(C)]
struct WrappedPhysicalDevice {
    /// The loader's dispatch pointer (written by vkSetInstanceLoaderData).
    loader_data: *const c_void,
    inner: VkPhysicalDevice,
}

/// The instance as this layer hands it out when wrapping instances: its own dispatchable object
/// (the next level's handle is `InstanceData::handle`).
#[repr(C)]
struct WrappedInstance {
    /// The loader's dispatch pointer (written by vkSetInstanceLoaderData).
    loader_data: *const c_void,
}

struct InstanceData {
    key: usize,
    /// The next level's handle.
    handle: VkInstance,
    next_gipa: Gipa,
    next_gpdpa: PFN_GetPhysicalDeviceProcAddr,
    /// `vkGetTestDriverRequestedApiVersionTEST` of the next level, resolved at vkCreateInstance
    /// (`VK_TEST_LAYER_NEXT_FROM_GIPA`); otherwise resolved at each call.
    next_requested_api_version: PFN_vkVoidFunction,
    table: InstanceDispatchTable,
    set_loader_data: PFN_vkSetInstanceLoaderData,
    layer_device: VkLayerInstanceCreateInfoLayerDevice,
    wrapped: Vec<Box<WrappedPhysicalDevice>>,
    /// The handle handed up when wrapping instances.
    wrapper: Option<Box<WrappedInstance>>,
}

struct DeviceData {
    key: usize,
    next_gdpa: Gdpa,
    table: DeviceDispatchTable,
    draws: AtomicU32,
}

// SAFETY: the raw pointers are handles and loader functions, usable from any thread.
unsafe impl Send for InstanceData {}

static INSTANCES: Mutex<Vec<Box<InstanceData>>> = Mutex::new(Vec::new());
static DEVICES: Mutex<Vec<Box<DeviceData>>> = Mutex::new(Vec::new());

fn with_instance<R>(k: usize, f: impl FnOnce(&mut InstanceData) -> R) -> Option<R> {
    let mut all = INSTANCES.lock().ok()?;
    all.iter_mut().find(|i| i.key == k).map(|i| f(i))
}

/// The device's data; boxed, so the reference stays valid after the lock (removed only by
/// vkDestroyDevice, after which the application may not use the device).
fn device(k: usize) -> Option<&'static DeviceData> {
    let all = DEVICES.lock().ok()?;
    all.iter().find(|d| d.key == k).map(|d| unsafe { &*(&**d as *const DeviceData) })
}

/// The handle to pass down for a physical device this layer may have wrapped.
unsafe fn unwrap(pd: VkPhysicalDevice) -> VkPhysicalDevice {
    with_instance(key(pd.0), |i| {
        i.wrapped.iter().find(|w| &***w as *const WrappedPhysicalDevice as *mut c_void == pd.0).map(|w| w.inner)
    })
    .flatten()
    .unwrap_or(pd)
}

/// The next level's handle for an instance handed to this layer. When wrapping instances it must
/// be the wrapper this layer returned: anything else is reported (a line naming `command`) and
/// refused, where a real wrapping layer would crash.
unsafe fn inner_instance(instance: VkInstance, command: &str) -> Option<VkInstance> {
    if instance.is_null() {
        return None;
    }
    let (inner, wrapper) = with_instance(key(instance.0), |i| (i.handle, i.wrapper.as_ref().map(|w| handle_of_wrapper(w))))?;
    match wrapper {
        Some(wrapper) if wrapper != instance => {
            let t = if tag().is_empty() { "-" } else { tag() };
            println!("TEST_LAYER_WRAP {t} {command}: not the instance this layer returned");
            None
        }
        _ => Some(inner),
    }
}

fn handle_of_wrapper(w: &WrappedInstance) -> VkInstance {
    VkInstance(w as *const WrappedInstance as *mut c_void)
}

/// The next level's instance functions; boxed data, valid until vkDestroyInstance (after which the
/// application may not use the instance or its physical devices).
fn instance_table(pd_or_instance: *mut c_void) -> Option<(&'static InstanceDispatchTable, VkInstance)> {
    unsafe { with_instance(key(pd_or_instance), |i| (&*(&i.table as *const InstanceDispatchTable), i.handle)) }
}

fn clone_table(t: &InstanceDispatchTable) -> InstanceDispatchTable {
    let mut copy = InstanceDispatchTable::default();
    copy.slots_mut().copy_from_slice(t.slots());
    copy
}

// ------------------------------------------------------------------------------------------------
// Chain information
// ------------------------------------------------------------------------------------------------

unsafe fn find_instance_info(info: *const VkInstanceCreateInfo, function: VkLayerFunction) -> *mut VkLayerInstanceCreateInfo {
    let mut p = (*info).pNext as *mut VkLayerInstanceCreateInfo;
    while !p.is_null() {
        if (*p).sType == VkStructureType::LOADER_INSTANCE_CREATE_INFO && (*p).function == function {
            return p;
        }
        p = (*p).pNext as *mut VkLayerInstanceCreateInfo;
    }
    std::ptr::null_mut()
}

unsafe fn find_device_info(info: *const VkDeviceCreateInfo, function: VkLayerFunction) -> *mut VkLayerDeviceCreateInfo {
    let mut p = (*info).pNext as *mut VkLayerDeviceCreateInfo;
    while !p.is_null() {
        if (*p).sType == VkStructureType::LOADER_DEVICE_CREATE_INFO && (*p).function == function {
            return p;
        }
        p = (*p).pNext as *mut VkLayerDeviceCreateInfo;
    }
    std::ptr::null_mut()
}

// ------------------------------------------------------------------------------------------------
// Entry points
// ------------------------------------------------------------------------------------------------

/// The layer's only `vk*` export.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(p: *mut VkNegotiateLayerInterface) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(p) = p.as_mut() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if p.sType != VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        p.loaderLayerInterfaceVersion = p.loaderLayerInterfaceVersion.min(2);
        p.pfnGetInstanceProcAddr = Some(TestLayer_GetInstanceProcAddr);
        p.pfnGetDeviceProcAddr = Some(TestLayer_GetDeviceProcAddr);
        p.pfnGetPhysicalDeviceProcAddr = Some(TestLayer_GetPhysicalDeviceProcAddr);
        VkResult::SUCCESS
    })
}

macro_rules! pfn {
    ($f:expr, $t:ty) => {
        Some(std::mem::transmute::<$t, unsafe extern "system" fn()>($f))
    };
}

type Props = unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties);

/// The layer's vkGetInstanceProcAddr (exported under this name for the renamed-function test).
#[no_mangle]
pub unsafe extern "system" fn TestLayer_GetInstanceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    guard(None, || {
        if pName.is_null() {
            return None;
        }
        let name = CStr::from_ptr(pName).to_bytes();
        let wrap = flag("WRAP");
        let wrap_instance = flag("WRAP_INSTANCE");
        let own: PFN_vkVoidFunction = match name {
            b"vkGetInstanceProcAddr" => pfn!(TestLayer_GetInstanceProcAddr, Gipa),
            b"vkGetDeviceProcAddr" => pfn!(TestLayer_GetDeviceProcAddr, Gdpa),
            b"vkCreateInstance" => pfn!(CreateInstance, unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult),
            b"vkDestroyInstance" => pfn!(DestroyInstance, unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks)),
            b"vkCreateDevice" => pfn!(CreateDevice, CreateDeviceFn),
            b"vkDestroyDevice" => pfn!(DestroyDevice, unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks)),
            b"vkGetTestLayerDrawsTEST" => pfn!(GetTestLayerDrawsTEST, unsafe extern "system" fn(VkDevice) -> u32),
            b"vkCmdDraw" if intercept() => pfn!(CmdDraw, unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, u32)),
            b"vkGetPhysicalDeviceProperties" if intercept() || wrap => pfn!(GetPhysicalDeviceProperties, Props),
            b"vkEnumeratePhysicalDevices" if wrap || wrap_instance => pfn!(EnumeratePhysicalDevices, unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult),
            b"vkCreateHeadlessSurfaceEXT" if wrap_instance => pfn!(CreateHeadlessSurfaceEXT, CreateHeadlessSurfaceFn),
            b"vkDestroySurfaceKHR" if wrap_instance => pfn!(DestroySurfaceKHR, unsafe extern "system" fn(VkInstance, VkSurfaceKHR, *const VkAllocationCallbacks)),
            b"vkCreateDebugUtilsMessengerEXT" if wrap_instance => pfn!(CreateDebugUtilsMessengerEXT, CreateMessengerFn),
            b"vkDestroyDebugUtilsMessengerEXT" if wrap_instance => pfn!(DestroyDebugUtilsMessengerEXT, DestroyMessengerFn),
            b"vkSetDebugUtilsObjectNameEXT" if wrap || wrap_instance => pfn!(SetDebugUtilsObjectNameEXT, SetObjectNameFn),
            b"vkGetPhysicalDeviceFeatures" if wrap => pfn!(GetPhysicalDeviceFeatures, unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceFeatures)),
            b"vkGetPhysicalDeviceMemoryProperties" if wrap => pfn!(GetPhysicalDeviceMemoryProperties, unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceMemoryProperties)),
            b"vkGetPhysicalDeviceQueueFamilyProperties" if wrap => pfn!(GetPhysicalDeviceQueueFamilyProperties, unsafe extern "system" fn(VkPhysicalDevice, *mut u32, *mut VkQueueFamilyProperties)),
            b"vkEnumerateDeviceExtensionProperties" if wrap => pfn!(EnumerateDeviceExtensionProperties, unsafe extern "system" fn(VkPhysicalDevice, *const c_char, *mut u32, *mut VkExtensionProperties) -> VkResult),
            _ => None,
        };
        if own.is_some() {
            return own;
        }
        // A wrapping layer must unwrap every command it passes down that takes a wrapped handle;
        // this one only offers those it unwraps.
        if let Some(cmd) = vk_generated::lookup::command(name) {
            let level = cmd.info().level;
            if (wrap && level == vk_generated::CommandLevel::PhysicalDevice) || (wrap_instance && level == vk_generated::CommandLevel::Instance) {
                return None;
            }
        }
        if instance.is_null() {
            return None;
        }
        let (next, inner) = with_instance(key(instance.0), |i| (i.next_gipa, i.handle))?;
        next(inner, pName)
    })
}

/// The layer's vkGetDeviceProcAddr.
#[no_mangle]
pub unsafe extern "system" fn TestLayer_GetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    guard(None, || {
        if pName.is_null() || device.is_null() {
            return None;
        }
        match CStr::from_ptr(pName).to_bytes() {
            b"vkGetDeviceProcAddr" => return pfn!(TestLayer_GetDeviceProcAddr, Gdpa),
            b"vkDestroyDevice" => return pfn!(DestroyDevice, unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks)),
            b"vkGetTestLayerDrawsTEST" => return pfn!(GetTestLayerDrawsTEST, unsafe extern "system" fn(VkDevice) -> u32),
            b"vkCmdDraw" if intercept() => return pfn!(CmdDraw, unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, u32)),
            b"vkSetDebugUtilsObjectNameEXT" if flag("WRAP") || flag("WRAP_INSTANCE") => return pfn!(SetDebugUtilsObjectNameEXT, SetObjectNameFn),
            // The other commands naming objects by handle would need unwrapping too: not offered.
            b"vkSetDebugUtilsObjectTagEXT" | b"vkDebugMarkerSetObjectNameEXT" | b"vkDebugMarkerSetObjectTagEXT" if flag("WRAP") || flag("WRAP_INSTANCE") => {
                return None
            }
            _ => {}
        }
        let d = crate::device(key(device.0))?;
        (d.next_gdpa)(device, pName)
    })
}

type CreateDeviceFn = unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult;

unsafe extern "system" fn CreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        log("vkCreateInstance");
        let link_info = find_instance_info(pCreateInfo, VkLayerFunction::LAYER_LINK_INFO);
        if link_info.is_null() || (*link_info).u.pLayerInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let link = (*link_info).u.pLayerInfo;
        let Some(next_gipa) = (*link).pfnNextGetInstanceProcAddr else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let next_gpdpa = (*link).pfnNextGetPhysicalDeviceProcAddr;
        (*link_info).u.pLayerInfo = (*link).pNext;
        let data_info = find_instance_info(pCreateInfo, VkLayerFunction::LOADER_DATA_CALLBACK);
        let set_loader_data = if data_info.is_null() { None } else { (*data_info).u.pfnSetInstanceLoaderData };
        let device_info = find_instance_info(pCreateInfo, VkLayerFunction::LOADER_LAYER_CREATE_DEVICE_CALLBACK);
        let layer_device = if device_info.is_null() { VkLayerInstanceCreateInfoLayerDevice::default() } else { (*device_info).u.layerDevice };
        if flag("CALLBACK") {
            let f: PFN_vkEnumerateInstanceExtensionProperties =
                std::mem::transmute(next_gipa(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties".as_ptr()));
            let mut count = 0;
            let r = f.map(|f| f(std::ptr::null(), &mut count, std::ptr::null_mut()));
            println!("TEST_LAYER_CALLBACK instance extensions {r:?} {count}");
        }
        let create: PFN_vkCreateInstance = std::mem::transmute(next_gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
        let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if flag("CLOBBER_INSTANCE") && !(*pInstance).is_null() {
            // A broken layer: zeroes the loader's object behind the handle it is to pass down.
            std::ptr::write_bytes((*pInstance).0 as *mut u8, 0, 2 * std::mem::size_of::<usize>());
        }
        let result = create(pCreateInfo, pAllocator, pInstance);
        if result != VkResult::SUCCESS {
            return result;
        }
        let instance = *pInstance;
        let table = InstanceDispatchTable::load(|name| next_gipa(instance, name.as_ptr()));
        let (next_gpdpa, next_requested_api_version) = if flag("NEXT_FROM_GIPA") { next_from_gipa(instance, next_gipa) } else { (next_gpdpa, None) };
        // The wrapper needs the loader's dispatch pointer, which only vkSetInstanceLoaderData gives.
        let wrapper = match (flag("WRAP_INSTANCE"), set_loader_data) {
            (true, Some(set)) => {
                let w = Box::new(WrappedInstance { loader_data: std::ptr::null() });
                set(instance, handle_of_wrapper(&w).0);
                *pInstance = handle_of_wrapper(&w);
                Some(w)
            }
            _ => None,
        };
        if let Ok(mut all) = INSTANCES.lock() {
            all.push(Box::new(InstanceData {
                key: key(instance.0),
                handle: instance,
                next_gipa,
                next_gpdpa,
                next_requested_api_version,
                table: clone_table(&table),
                set_loader_data,
                layer_device,
                wrapped: Vec::new(),
                wrapper,
            }));
        }
        if flag("CALLBACK") {
            if let (Some(enumerate), Some(props)) = (table.vkEnumeratePhysicalDevices, table.vkGetPhysicalDeviceProperties) {
                let mut count = 0;
                enumerate(instance, &mut count, std::ptr::null_mut());
                let mut pds = vec![VkPhysicalDevice::NULL; count as usize];
                enumerate(instance, &mut count, pds.as_mut_ptr());
                for pd in pds {
                    let mut p = VkPhysicalDeviceProperties::default();
                    props(pd, &mut p);
                    println!("TEST_LAYER_CALLBACK device {}", CStr::from_ptr(p.deviceName.as_ptr()).to_string_lossy());
                }
            }
        }
        if flag("FAIL_CREATE_INSTANCE") {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        VkResult::SUCCESS
    })
}

/// As layers built on the Khronos samples do: the next level's `vk_layerGetPhysicalDeviceProcAddr`
/// from its vkGetInstanceProcAddr, and the next functions of the unknown commands this layer
/// intercepts, resolved as soon as the instance exists (before the application names them).
unsafe fn next_from_gipa(instance: VkInstance, next_gipa: Gipa) -> (PFN_GetPhysicalDeviceProcAddr, PFN_vkVoidFunction) {
    let next_gpdpa: PFN_GetPhysicalDeviceProcAddr = std::mem::transmute(next_gipa(instance, c"vk_layerGetPhysicalDeviceProcAddr".as_ptr()));
    let requested = next_gpdpa.and_then(|g| g(instance, c"vkGetTestDriverRequestedApiVersionTEST".as_ptr()));
    let device_command = next_gipa(instance, c"vkTestDeviceCommand000TEST".as_ptr());
    let found = |f: bool| if f { "found" } else { "missing" };
    println!("TEST_LAYER_CALLBACK next vk_layerGetPhysicalDeviceProcAddr {}", found(next_gpdpa.is_some()));
    println!("TEST_LAYER_CALLBACK next vkGetTestDriverRequestedApiVersionTEST {}", found(requested.is_some()));
    println!("TEST_LAYER_CALLBACK next vkTestDeviceCommand000TEST {}", found(device_command.is_some()));
    (next_gpdpa, requested)
}

unsafe extern "system" fn DestroyInstance(instance: VkInstance, pAllocator: *const VkAllocationCallbacks) {
    guard((), || {
        if instance.is_null() {
            return;
        }
        log("vkDestroyInstance");
        let Some(inner) = inner_instance(instance, "vkDestroyInstance") else { return };
        let k = key(instance.0);
        let Some(destroy) = with_instance(k, |i| i.table.vkDestroyInstance).flatten() else { return };
        destroy(inner, pAllocator);
        if let Ok(mut all) = INSTANCES.lock() {
            all.retain(|i| i.key != k);
        }
    })
}

unsafe extern "system" fn EnumeratePhysicalDevices(instance: VkInstance, pCount: *mut u32, pDevices: *mut VkPhysicalDevice) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some((table, _)) = instance_table(instance.0) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(enumerate) = table.vkEnumeratePhysicalDevices else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(next_instance) = inner_instance(instance, "vkEnumeratePhysicalDevices") else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if !flag("WRAP") {
            return enumerate(next_instance, pCount, pDevices);
        }
        let mut count = 0;
        let r = enumerate(next_instance, &mut count, std::ptr::null_mut());
        if r != VkResult::SUCCESS {
            return r;
        }
        let mut inner = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate(next_instance, &mut count, inner.as_mut_ptr());
        inner.truncate(count as usize);
        let wrapped: Vec<VkPhysicalDevice> = with_instance(key(instance.0), |i| {
            inner
                .iter()
                .map(|&pd| {
                    if let Some(w) = i.wrapped.iter().find(|w| w.inner == pd) {
                        return VkPhysicalDevice(&**w as *const WrappedPhysicalDevice as *mut c_void);
                    }
                    let w = Box::new(WrappedPhysicalDevice { loader_data: std::ptr::null(), inner: pd });
                    let handle = VkPhysicalDevice(&*w as *const WrappedPhysicalDevice as *mut c_void);
                    if let Some(set) = i.set_loader_data {
                        set(next_instance, handle.0);
                    }
                    i.wrapped.push(w);
                    handle
                })
                .collect()
        })
        .unwrap_or_default();
        if pDevices.is_null() {
            *pCount = wrapped.len() as u32;
            return VkResult::SUCCESS;
        }
        let n = (*pCount as usize).min(wrapped.len());
        std::ptr::copy_nonoverlapping(wrapped.as_ptr(), pDevices, n);
        *pCount = n as u32;
        if n < wrapped.len() { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
    })
}

unsafe extern "system" fn GetPhysicalDeviceProperties(pd: VkPhysicalDevice, p: *mut VkPhysicalDeviceProperties) {
    guard((), || {
        if let Some(f) = instance_table(pd.0).and_then(|(t, _)| t.vkGetPhysicalDeviceProperties) {
            f(unwrap(pd), p)
        }
    })
}

unsafe extern "system" fn GetPhysicalDeviceFeatures(pd: VkPhysicalDevice, p: *mut VkPhysicalDeviceFeatures) {
    guard((), || {
        if let Some(f) = instance_table(pd.0).and_then(|(t, _)| t.vkGetPhysicalDeviceFeatures) {
            f(unwrap(pd), p)
        }
    })
}

unsafe extern "system" fn GetPhysicalDeviceMemoryProperties(pd: VkPhysicalDevice, p: *mut VkPhysicalDeviceMemoryProperties) {
    guard((), || {
        if let Some(f) = instance_table(pd.0).and_then(|(t, _)| t.vkGetPhysicalDeviceMemoryProperties) {
            f(unwrap(pd), p)
        }
    })
}

unsafe extern "system" fn GetPhysicalDeviceQueueFamilyProperties(pd: VkPhysicalDevice, c: *mut u32, p: *mut VkQueueFamilyProperties) {
    guard((), || {
        if let Some(f) = instance_table(pd.0).and_then(|(t, _)| t.vkGetPhysicalDeviceQueueFamilyProperties) {
            f(unwrap(pd), c, p)
        }
    })
}

unsafe extern "system" fn EnumerateDeviceExtensionProperties(pd: VkPhysicalDevice, l: *const c_char, c: *mut u32, p: *mut VkExtensionProperties) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        match instance_table(pd.0).and_then(|(t, _)| t.vkEnumerateDeviceExtensionProperties) {
            Some(f) => f(unwrap(pd), l, c, p),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

unsafe extern "system" fn CreateDevice(
    pd: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        log("vkCreateDevice");
        let link_info = find_device_info(pCreateInfo, VkLayerFunction::LAYER_LINK_INFO);
        if link_info.is_null() || (*link_info).u.pLayerInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let link = (*link_info).u.pLayerInfo;
        let (Some(next_gipa), Some(next_gdpa)) = ((*link).pfnNextGetInstanceProcAddr, (*link).pfnNextGetDeviceProcAddr) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        (*link_info).u.pLayerInfo = (*link).pNext;
        let Some((table, instance)) = instance_table(pd.0) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let create: PFN_vkCreateDevice = std::mem::transmute(next_gipa(instance, c"vkCreateDevice".as_ptr()));
        let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let inner = unwrap(pd);
        let result = create(inner, pCreateInfo, pAllocator, pDevice);
        if result != VkResult::SUCCESS {
            return result;
        }
        let device = *pDevice;
        let device_table = DeviceDispatchTable::load(|name| next_gdpa(device, name.as_ptr()));
        if let Ok(mut all) = DEVICES.lock() {
            all.push(Box::new(DeviceData { key: key(device.0), next_gdpa, table: device_table, draws: AtomicU32::new(0) }));
        }
        if flag("CALLBACK") {
            if let Some(props) = table.vkGetPhysicalDeviceProperties {
                let mut p = VkPhysicalDeviceProperties::default();
                props(inner, &mut p);
                println!("TEST_LAYER_CALLBACK creating a device on {}", CStr::from_ptr(p.deviceName.as_ptr()).to_string_lossy());
            }
            let data_info = find_device_info(pCreateInfo, VkLayerFunction::LOADER_DATA_CALLBACK);
            if let Some(set) = data_info.as_ref().and_then(|d| d.u.pfnSetDeviceLoaderData) {
                let mut object: [usize; 2] = [0, 0];
                let r = set(device, object.as_mut_ptr() as *mut c_void);
                if r == VkResult::SUCCESS && object[0] == key(device.0) {
                    println!("TEST_LAYER_CALLBACK device loader data ok");
                }
            }
        }
        if flag("CREATE_DEVICE_CALLBACK") {
            private_device(pd, inner, pCreateInfo, pAllocator);
        }
        if flag("FAIL_CREATE_DEVICE") {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        VkResult::SUCCESS
    })
}

unsafe extern "system" fn DestroyDevice(device: VkDevice, pAllocator: *const VkAllocationCallbacks) {
    guard((), || {
        if device.is_null() {
            return;
        }
        log("vkDestroyDevice");
        let k = key(device.0);
        if let Some(destroy) = crate::device(k).and_then(|d| d.table.vkDestroyDevice) {
            destroy(device, pAllocator);
        }
        if let Ok(mut all) = DEVICES.lock() {
            all.retain(|d| d.key != k);
        }
    })
}

unsafe extern "system" fn CmdDraw(cmd: VkCommandBuffer, a: u32, b: u32, c: u32, d: u32) {
    guard((), || {
        let Some(dev) = device(key(cmd.0)) else { return };
        dev.draws.fetch_add(1, Ordering::Relaxed);
        if let Some(f) = dev.table.vkCmdDraw {
            f(cmd, a, b, c, d)
        }
    })
}

unsafe extern "system" fn GetTestLayerDrawsTEST(device: VkDevice) -> u32 {
    guard(0, || crate::device(key(device.0)).map_or(0, |d| d.draws.load(Ordering::Relaxed)))
}

// ------------------------------------------------------------------------------------------------
// Pre-instance interceptors (named in an implicit manifest's "pre_instance_functions")
// ------------------------------------------------------------------------------------------------

/// Adds `VK_TEST_pre_instance_extension` to the list the rest of the chain gives.
#[no_mangle]
pub unsafe extern "system" fn TestLayer_EnumerateInstanceExtensionProperties(
    chain: *const VkEnumerateInstanceExtensionPropertiesChain,
    pLayerName: *const c_char,
    pCount: *mut u32,
    pProps: *mut VkExtensionProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        println!("TEST_LAYER_PRE {} extensions", tag());
        let Some(next) = (*chain).pfnNextLayer else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let mut count = 0;
        let r = next((*chain).pNextLink, pLayerName, &mut count, std::ptr::null_mut());
        if r != VkResult::SUCCESS || !pLayerName.is_null() {
            return next((*chain).pNextLink, pLayerName, pCount, pProps);
        }
        let mut all = vec![VkExtensionProperties::default(); count as usize];
        next((*chain).pNextLink, pLayerName, &mut count, all.as_mut_ptr());
        all.truncate(count as usize);
        let mut extra = VkExtensionProperties { specVersion: 1, ..Default::default() };
        for (d, s) in extra.extensionName.iter_mut().zip(b"VK_TEST_pre_instance_extension") {
            *d = *s as c_char;
        }
        all.push(extra);
        if pProps.is_null() {
            *pCount = all.len() as u32;
            return VkResult::SUCCESS;
        }
        let n = (*pCount as usize).min(all.len());
        std::ptr::copy_nonoverlapping(all.as_ptr(), pProps, n);
        *pCount = n as u32;
        if n < all.len() { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
    })
}

#[no_mangle]
pub unsafe extern "system" fn TestLayer_EnumerateInstanceLayerProperties(
    chain: *const VkEnumerateInstanceLayerPropertiesChain,
    pCount: *mut u32,
    pProps: *mut VkLayerProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        println!("TEST_LAYER_PRE {} layers", tag());
        match (*chain).pfnNextLayer {
            Some(next) => next((*chain).pNextLink, pCount, pProps),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// Reports at most Vulkan 1.1.
#[no_mangle]
pub unsafe extern "system" fn TestLayer_EnumerateInstanceVersion(chain: *const VkEnumerateInstanceVersionChain, pVersion: *mut u32) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        println!("TEST_LAYER_PRE {} version", tag());
        let Some(next) = (*chain).pfnNextLayer else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let r = next((*chain).pNextLink, pVersion);
        if r == VkResult::SUCCESS {
            *pVersion = (*pVersion).min(vk_generated::make_api_version(0, 1, 1, 0));
        }
        r
    })
}

/// Creates a device of the layer's own through the loader's `pfnLayerCreateDevice` (the layers
/// below this one), uses a queue of it, destroys it with `pfnLayerDestroyDevice`.
unsafe fn private_device(pd: VkPhysicalDevice, inner: VkPhysicalDevice, info: *const VkDeviceCreateInfo, alloc: *const VkAllocationCallbacks) {
    let Some((layer_device, instance)) = with_instance(key(pd.0), |i| (i.layer_device, i.handle)) else { return };
    let (Some(create), Some(destroy)) = (layer_device.pfnLayerCreateDevice, layer_device.pfnLayerDestroyDevice) else {
        println!("TEST_LAYER_CALLBACK no create-device callback");
        return;
    };
    let mut device = VkDevice::NULL;
    let mut next_gdpa: PFN_vkGetDeviceProcAddr = None;
    let r = create(instance, inner, info, alloc, &mut device, Some(TestLayer_GetInstanceProcAddr), &mut next_gdpa);
    let Some(gdpa) = next_gdpa.filter(|_| r == VkResult::SUCCESS) else {
        println!("TEST_LAYER_CALLBACK private device failed {r:?}");
        return;
    };
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

// ------------------------------------------------------------------------------------------------
// Physical-device commands unknown to the registry (interface 2)
// ------------------------------------------------------------------------------------------------

/// `vk_layerGetPhysicalDeviceProcAddr`: intercepts the test driver's
/// `vkGetTestDriverRequestedApiVersionTEST`; passes every other name down.
unsafe extern "system" fn TestLayer_GetPhysicalDeviceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    guard(None, || {
        if pName.is_null() || instance.is_null() {
            return None;
        }
        let (next, inner) = with_instance(key(instance.0), |i| (i.next_gpdpa, i.handle))?;
        let below = next?(inner, pName);
        if intercept() && below.is_some() && CStr::from_ptr(pName) == c"vkGetTestDriverRequestedApiVersionTEST" {
            return pfn!(RequestedApiVersion, unsafe extern "system" fn(VkPhysicalDevice) -> u32);
        }
        below
    })
}

unsafe extern "system" fn RequestedApiVersion(pd: VkPhysicalDevice) -> u32 {
    guard(0, || {
        log("vkGetTestDriverRequestedApiVersionTEST");
        let Some((next, resolved, instance)) = with_instance(key(pd.0), |i| (i.next_gpdpa, i.next_requested_api_version, i.handle)) else { return 0 };
        let next = resolved.or_else(|| next.and_then(|g| g(instance, c"vkGetTestDriverRequestedApiVersionTEST".as_ptr())));
        let f: Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32> = std::mem::transmute(next);
        f.map_or(0, |f| f(unwrap(pd)))
    })
}

// ------------------------------------------------------------------------------------------------
// Instance-level commands of a wrapped instance (`VK_TEST_LAYER_WRAP_INSTANCE`)
// ------------------------------------------------------------------------------------------------

type CreateHeadlessSurfaceFn =
    unsafe extern "system" fn(VkInstance, *const VkHeadlessSurfaceCreateInfoEXT, *const VkAllocationCallbacks, *mut VkSurfaceKHR) -> VkResult;
type CreateMessengerFn = unsafe extern "system" fn(
    VkInstance,
    *const VkDebugUtilsMessengerCreateInfoEXT,
    *const VkAllocationCallbacks,
    *mut VkDebugUtilsMessengerEXT,
) -> VkResult;
type DestroyMessengerFn = unsafe extern "system" fn(VkInstance, VkDebugUtilsMessengerEXT, *const VkAllocationCallbacks);
type SetObjectNameFn = unsafe extern "system" fn(VkDevice, *const VkDebugUtilsObjectNameInfoEXT) -> VkResult;

unsafe extern "system" fn CreateHeadlessSurfaceEXT(
    instance: VkInstance,
    pCreateInfo: *const VkHeadlessSurfaceCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pSurface: *mut VkSurfaceKHR,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(inner) = inner_instance(instance, "vkCreateHeadlessSurfaceEXT") else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match instance_table(instance.0).and_then(|(t, _)| t.vkCreateHeadlessSurfaceEXT) {
            Some(f) => f(inner, pCreateInfo, pAllocator, pSurface),
            None => VkResult::ERROR_EXTENSION_NOT_PRESENT,
        }
    })
}

unsafe extern "system" fn DestroySurfaceKHR(instance: VkInstance, surface: VkSurfaceKHR, pAllocator: *const VkAllocationCallbacks) {
    guard((), || {
        let Some(inner) = inner_instance(instance, "vkDestroySurfaceKHR") else { return };
        if let Some(f) = instance_table(instance.0).and_then(|(t, _)| t.vkDestroySurfaceKHR) {
            f(inner, surface, pAllocator)
        }
    })
}

unsafe extern "system" fn CreateDebugUtilsMessengerEXT(
    instance: VkInstance,
    pCreateInfo: *const VkDebugUtilsMessengerCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pMessenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(inner) = inner_instance(instance, "vkCreateDebugUtilsMessengerEXT") else { return VkResult::ERROR_INITIALIZATION_FAILED };
        match instance_table(instance.0).and_then(|(t, _)| t.vkCreateDebugUtilsMessengerEXT) {
            Some(f) => f(inner, pCreateInfo, pAllocator, pMessenger),
            None => VkResult::ERROR_EXTENSION_NOT_PRESENT,
        }
    })
}

unsafe extern "system" fn DestroyDebugUtilsMessengerEXT(instance: VkInstance, messenger: VkDebugUtilsMessengerEXT, pAllocator: *const VkAllocationCallbacks) {
    guard((), || {
        let Some(inner) = inner_instance(instance, "vkDestroyDebugUtilsMessengerEXT") else { return };
        if let Some(f) = instance_table(instance.0).and_then(|(t, _)| t.vkDestroyDebugUtilsMessengerEXT) {
            f(inner, messenger, pAllocator)
        }
    })
}

/// `vkSetDebugUtilsObjectNameEXT` while wrapping: an instance or physical device named must be one
/// this layer wrapped (reported and refused with `VK_ERROR_VALIDATION_FAILED_EXT` otherwise), and
/// goes down as the next level's handle.
unsafe extern "system" fn SetDebugUtilsObjectNameEXT(device: VkDevice, pNameInfo: *const VkDebugUtilsObjectNameInfoEXT) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(next) = crate::device(key(device.0)).and_then(|d| d.table.vkSetDebugUtilsObjectNameEXT) else {
            return VkResult::ERROR_EXTENSION_NOT_PRESENT;
        };
        let Some(mut info) = pNameInfo.as_ref().copied() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let object = info.objectHandle as usize as *mut c_void;
        let inner = match info.objectType {
            VkObjectType::INSTANCE if flag("WRAP_INSTANCE") => inner_instance(VkInstance(object), "vkSetDebugUtilsObjectNameEXT").map(|i| i.0 as u64),
            VkObjectType::PHYSICAL_DEVICE if flag("WRAP") => wrapped_physical_device(object).map(|pd| pd.0 as u64),
            _ => Some(info.objectHandle),
        };
        let Some(inner) = inner else { return VkResult::ERROR_VALIDATION_FAILED_EXT };
        info.objectHandle = inner;
        next(device, &info)
    })
}

/// The next level's handle for a physical device this layer wrapped; reported when it is not one.
unsafe fn wrapped_physical_device(object: *mut c_void) -> Option<VkPhysicalDevice> {
    let inner = if object.is_null() {
        None
    } else {
        with_instance(key(object), |i| i.wrapped.iter().find(|w| &***w as *const WrappedPhysicalDevice as *mut c_void == object).map(|w| w.inner)).flatten()
    };
    if inner.is_none() {
        let t = if tag().is_empty() { "-" } else { tag() };
        println!("TEST_LAYER_WRAP {t} vkSetDebugUtilsObjectNameEXT: not a physical device this layer returned");
    }
    inner
}
