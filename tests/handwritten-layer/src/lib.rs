//! A pass-through layer written by hand on the dispatch tables (see README.md): the baseline of
//! `cargo xtask bench layer-sdk`. Its design is the test layer's before the SDK: data per
//! dispatch pointer in a locked list, `vkCmdDraw` intercepted and counted. A copy whose file name
//! contains `lockfree` finds the device of a `vkCmdDraw` without the lock instead (a linear scan
//! of atomic slots): a hand-written layer tuned for the call path.

// Boxed data: `device()` hands out references that outlive the lock, so entries must not move.
#![allow(non_snake_case, clippy::vec_box)]

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use vk_generated::layer_abi::*;
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
type Gdpa = unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction;

fn guard<R>(on_panic: R, f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// The loader's dispatch pointer: the first word of a dispatchable handle.
///
/// # Safety
/// `handle` is a live dispatchable handle.
unsafe fn key(handle: *mut c_void) -> usize {
    // SAFETY: per the caller's contract, at least one readable word.
    unsafe { *(handle as *const usize) }
}

struct InstanceData {
    key: usize,
    next_gipa: Gipa,
    table: InstanceDispatchTable,
}

struct DeviceData {
    key: usize,
    next_gdpa: Gdpa,
    table: DeviceDispatchTable,
    draws: AtomicU32,
}

static INSTANCES: Mutex<Vec<Box<InstanceData>>> = Mutex::new(Vec::new());

/// Whether this copy is the lock-free one: its file name says `lockfree`.
fn lock_free() -> bool {
    static LOCK_FREE: OnceLock<bool> = OnceLock::new();
    *LOCK_FREE.get_or_init(|| {
        // SAFETY: `Dl_info` is pointers and integers, for which all zeroes is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr reads the address and fills `info`.
        if unsafe { libc::dladdr(lock_free as *const () as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return false;
        }
        // SAFETY: the NUL-terminated path dladdr found (not null: checked above).
        unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().contains("lockfree")
    })
}

/// The lock-free copy's devices: (dispatch key, data) slots, scanned in order; a device's data
/// stays in `DEVICES` (which owns it) and is published here too.
const SLOTS: usize = 16;
#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: (AtomicUsize, AtomicPtr<DeviceData>) = (AtomicUsize::new(0), AtomicPtr::new(std::ptr::null_mut()));
static FAST_DEVICES: [(AtomicUsize, AtomicPtr<DeviceData>); SLOTS] = [EMPTY_SLOT; SLOTS];

fn fast_device(k: usize) -> Option<&'static DeviceData> {
    for (key, data) in &FAST_DEVICES {
        if key.load(Ordering::Acquire) == k {
            // SAFETY: published before the key, unpublished before it is freed.
            return unsafe { data.load(Ordering::Acquire).as_ref() };
        }
    }
    None
}
static DEVICES: Mutex<Vec<Box<DeviceData>>> = Mutex::new(Vec::new());

/// The instance's next `vkGetInstanceProcAddr` and a function of its table.
fn instance_data<R>(k: usize, f: impl FnOnce(&InstanceData) -> R) -> Option<R> {
    let all = INSTANCES.lock().ok()?;
    all.iter().find(|i| i.key == k).map(|i| f(i))
}

/// The device's data; boxed, so the reference stays valid after the lock (removed only by
/// vkDestroyDevice, after which the application may not use the device).
fn device(k: usize) -> Option<&'static DeviceData> {
    let all = DEVICES.lock().ok()?;
    // SAFETY: the box lives until vkDestroyDevice, after which the application may not use the
    // device (nor so any reference to its data).
    all.iter().find(|d| d.key == k).map(|d| unsafe { &*(&**d as *const DeviceData) })
}

/// `$f`, checked against its type `$t`, as a `PFN_vkVoidFunction`.
macro_rules! pfn {
    ($f:expr, $t:ty) => {{
        let f: $t = $f;
        // SAFETY: function pointers of one size; the caller casts it back to `$t`.
        Some(unsafe { std::mem::transmute::<$t, unsafe extern "system" fn()>(f) })
    }};
}

type CreateInstanceFn = unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult;
type DestroyInstanceFn = unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks);
type CreateDeviceFn = unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult;
type DestroyDeviceFn = unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks);
type DrawFn = unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, u32);

/// The layer's only export.
///
/// # Safety
/// `p` is null or the loader's negotiation structure.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(p: *mut VkNegotiateLayerInterface) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: null or the loader's structure, per the caller's contract.
        let Some(p) = (unsafe { p.as_mut() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if p.sType != VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        p.loaderLayerInterfaceVersion = p.loaderLayerInterfaceVersion.min(2);
        p.pfnGetInstanceProcAddr = Some(GetInstanceProcAddr);
        p.pfnGetDeviceProcAddr = Some(GetDeviceProcAddr);
        p.pfnGetPhysicalDeviceProcAddr = None;
        VkResult::SUCCESS
    })
}

/// The layer's `vkGetInstanceProcAddr`: its own functions, the next level's for the rest.
///
/// # Safety
/// As `vkGetInstanceProcAddr`: `instance` is null or a live instance, `pName` null or
/// NUL-terminated.
unsafe extern "system" fn GetInstanceProcAddr(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction {
    guard(None, || {
        if pName.is_null() {
            return None;
        }
        // SAFETY: NUL-terminated, per the caller's contract.
        let own = match unsafe { CStr::from_ptr(pName) }.to_bytes() {
            b"vkGetInstanceProcAddr" => pfn!(GetInstanceProcAddr, Gipa),
            b"vkGetDeviceProcAddr" => pfn!(GetDeviceProcAddr, Gdpa),
            b"vkCreateInstance" => pfn!(CreateInstance, CreateInstanceFn),
            b"vkDestroyInstance" => pfn!(DestroyInstance, DestroyInstanceFn),
            b"vkCreateDevice" => pfn!(CreateDevice, CreateDeviceFn),
            b"vkDestroyDevice" => pfn!(DestroyDevice, DestroyDeviceFn),
            b"vkCmdDraw" if lock_free() => pfn!(CmdDrawLockFree, DrawFn),
            b"vkCmdDraw" => pfn!(CmdDraw, DrawFn),
            _ => None,
        };
        if own.is_some() || instance.is_null() {
            return own;
        }
        // SAFETY: a live instance, per the caller's contract.
        let next = instance_data(unsafe { key(instance.0) }, |i| i.next_gipa)?;
        // SAFETY: the next level's own function, with the caller's arguments.
        unsafe { next(instance, pName) }
    })
}

/// The layer's `vkGetDeviceProcAddr`, as [`GetInstanceProcAddr`] for device commands.
///
/// # Safety
/// As `vkGetDeviceProcAddr`: `device` is null or a live device, `pName` null or NUL-terminated.
unsafe extern "system" fn GetDeviceProcAddr(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    guard(None, || {
        if pName.is_null() || device.is_null() {
            return None;
        }
        // SAFETY: NUL-terminated, per the caller's contract.
        match unsafe { CStr::from_ptr(pName) }.to_bytes() {
            b"vkGetDeviceProcAddr" => return pfn!(GetDeviceProcAddr, Gdpa),
            b"vkDestroyDevice" => return pfn!(DestroyDevice, DestroyDeviceFn),
            b"vkCmdDraw" if lock_free() => return pfn!(CmdDrawLockFree, DrawFn),
            b"vkCmdDraw" => return pfn!(CmdDraw, DrawFn),
            _ => {}
        }
        // SAFETY: a live device, per the caller's contract.
        let d = crate::device(unsafe { key(device.0) })?;
        // SAFETY: the next level's own function, with the caller's arguments.
        unsafe { (d.next_gdpa)(device, pName) }
    })
}

/// `vkCreateInstance`: takes this layer's link, creates the instance below, records its table.
///
/// # Safety
/// As `vkCreateInstance` through the loader: `info` is a valid create info whose chain holds the
/// loader's `VkLayerInstanceCreateInfo` (checked), `alloc` null or valid, `pInstance` writable.
unsafe extern "system" fn CreateInstance(info: *const VkInstanceCreateInfo, alloc: *const VkAllocationCallbacks, pInstance: *mut VkInstance) -> VkResult {
    // SAFETY: per the caller's contract: the loader's chain structures, read field by field once
    // their `sType` is checked, and its link moved on in place (the loader-layer interface); the
    // next level's functions called as their own types; its new instance's first word.
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        let mut p = (*info).pNext as *mut VkLayerInstanceCreateInfo;
        while !p.is_null() && ((*p).sType != VkStructureType::LOADER_INSTANCE_CREATE_INFO || (*p).function != VkLayerFunction::LAYER_LINK_INFO) {
            p = (*p).pNext as *mut VkLayerInstanceCreateInfo;
        }
        if p.is_null() || (*p).u.pLayerInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let link = (*p).u.pLayerInfo;
        let Some(next_gipa) = (*link).pfnNextGetInstanceProcAddr else { return VkResult::ERROR_INITIALIZATION_FAILED };
        (*p).u.pLayerInfo = (*link).pNext;
        let create: PFN_vkCreateInstance = std::mem::transmute(next_gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
        let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let result = create(info, alloc, pInstance);
        if result != VkResult::SUCCESS {
            return result;
        }
        let instance = *pInstance;
        let table = InstanceDispatchTable::load(|name| next_gipa(instance, name.as_ptr()));
        if let Ok(mut all) = INSTANCES.lock() {
            all.push(Box::new(InstanceData { key: key(instance.0), next_gipa, table }));
        }
        VkResult::SUCCESS
    })
}

/// `vkDestroyInstance`: destroys the instance below, then forgets it.
///
/// # Safety
/// As `vkDestroyInstance`: `instance` is null or a live instance no other thread uses.
unsafe extern "system" fn DestroyInstance(instance: VkInstance, alloc: *const VkAllocationCallbacks) {
    guard((), || {
        if instance.is_null() {
            return;
        }
        // SAFETY: a live instance, per the caller's contract.
        let k = unsafe { key(instance.0) };
        if let Some(destroy) = instance_data(k, |i| i.table.vkDestroyInstance).flatten() {
            // SAFETY: the next level's own function, with the caller's arguments.
            unsafe { destroy(instance, alloc) };
        }
        if let Ok(mut all) = INSTANCES.lock() {
            all.retain(|i| i.key != k);
        }
    })
}

/// `vkCreateDevice`: as [`CreateInstance`], for a device.
///
/// # Safety
/// As `vkCreateDevice` through the loader: `pd` is a live physical device, `info` a valid create
/// info whose chain holds the loader's `VkLayerDeviceCreateInfo` (checked), `alloc` null or
/// valid, `pDevice` writable.
unsafe extern "system" fn CreateDevice(
    pd: VkPhysicalDevice,
    info: *const VkDeviceCreateInfo,
    alloc: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    // SAFETY: as in `CreateInstance`, for the device chain and the new device.
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || unsafe {
        let mut p = (*info).pNext as *mut VkLayerDeviceCreateInfo;
        while !p.is_null() && ((*p).sType != VkStructureType::LOADER_DEVICE_CREATE_INFO || (*p).function != VkLayerFunction::LAYER_LINK_INFO) {
            p = (*p).pNext as *mut VkLayerDeviceCreateInfo;
        }
        if p.is_null() || (*p).u.pLayerInfo.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let link = (*p).u.pLayerInfo;
        let (Some(next_gipa), Some(next_gdpa)) = ((*link).pfnNextGetInstanceProcAddr, (*link).pfnNextGetDeviceProcAddr) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        (*p).u.pLayerInfo = (*link).pNext;
        let create: PFN_vkCreateDevice = std::mem::transmute(next_gipa(VkInstance::NULL, c"vkCreateDevice".as_ptr()));
        let Some(create) = create else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let result = create(pd, info, alloc, pDevice);
        if result != VkResult::SUCCESS {
            return result;
        }
        let device = *pDevice;
        let table = DeviceDispatchTable::load(|name| next_gdpa(device, name.as_ptr()));
        if let Ok(mut all) = DEVICES.lock() {
            let data = Box::new(DeviceData { key: key(device.0), next_gdpa, table, draws: AtomicU32::new(0) });
            if lock_free() {
                if let Some((k, d)) = FAST_DEVICES.iter().find(|(k, _)| k.load(Ordering::Relaxed) == 0) {
                    d.store(&*data as *const DeviceData as *mut DeviceData, Ordering::Release);
                    k.store(data.key, Ordering::Release);
                }
            }
            all.push(data);
        }
        VkResult::SUCCESS
    })
}

/// `vkDestroyDevice`: destroys the device below, then forgets it.
///
/// # Safety
/// As `vkDestroyDevice`: `device` is null or a live device no other thread uses, now or later.
unsafe extern "system" fn DestroyDevice(device: VkDevice, alloc: *const VkAllocationCallbacks) {
    guard((), || {
        if device.is_null() {
            return;
        }
        // SAFETY: a live device, per the caller's contract.
        let k = unsafe { key(device.0) };
        if let Some(destroy) = crate::device(k).and_then(|d| d.table.vkDestroyDevice) {
            // SAFETY: the next level's own function, with the caller's arguments.
            unsafe { destroy(device, alloc) };
        }
        if let Ok(mut all) = DEVICES.lock() {
            for (key, data) in &FAST_DEVICES {
                if key.load(Ordering::Relaxed) == k {
                    key.store(0, Ordering::Release);
                    data.store(std::ptr::null_mut(), Ordering::Release);
                }
            }
            all.retain(|d| d.key != k);
        }
    })
}

/// `vkCmdDraw`: counted, then passed down; the device found under the lock.
///
/// # Safety
/// As `vkCmdDraw`: `cmd` is a live command buffer in the recording state.
unsafe extern "system" fn CmdDraw(cmd: VkCommandBuffer, a: u32, b: u32, c: u32, d: u32) {
    guard((), || {
        // SAFETY: a live command buffer, per the caller's contract.
        let Some(dev) = device(unsafe { key(cmd.0) }) else { return };
        dev.draws.fetch_add(1, Ordering::Relaxed);
        if let Some(f) = dev.table.vkCmdDraw {
            // SAFETY: the next level's own function, with the caller's arguments.
            unsafe { f(cmd, a, b, c, d) }
        }
    })
}

/// `vkCmdDraw` as [`CmdDraw`], the device found without the lock.
///
/// # Safety
/// As [`CmdDraw`].
unsafe extern "system" fn CmdDrawLockFree(cmd: VkCommandBuffer, a: u32, b: u32, c: u32, d: u32) {
    guard((), || {
        // SAFETY: a live command buffer, per the caller's contract.
        let Some(dev) = fast_device(unsafe { key(cmd.0) }) else { return };
        dev.draws.fetch_add(1, Ordering::Relaxed);
        if let Some(f) = dev.table.vkCmdDraw {
            // SAFETY: the next level's own function, with the caller's arguments.
            unsafe { f(cmd, a, b, c, d) }
        }
    })
}
