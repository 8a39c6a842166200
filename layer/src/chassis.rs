//! The hand-written chassis: interface negotiation, `vkGet*ProcAddr`, and instance and device
//! creation and destruction.
//!
//! Which commands a layer hooks is [`Layer::HOOKS`](crate::Layer::HOOKS), a list of
//! `vk_generated::command_id` constants checked at compile time by
//! [`declare_layer!`](crate::declare_layer). Only those (and the lifecycle commands the chassis
//! needs) are answered with the layer's own entry points; every other name gets the next level's
//! pointer, so unhooked commands cost the layer nothing.

use std::ffi::{c_char, CStr};

use vk_generated::layer_abi::{
    VkNegotiateLayerInterface, VkNegotiateLayerStructType, CURRENT_LOADER_LAYER_INTERFACE_VERSION,
};
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

use crate::chain::{take_device_link, take_instance_link};
use crate::guard::guard;
use crate::hooks::{DEVICE_HOOKABLE, INSTANCE_HOOKABLE};
use crate::state::{dispatch_key, DeviceState, InstanceState, Registered};

/// `vkNegotiateLoaderLayerInterfaceVersion`: agrees on interface 2 (or the loader's lower one)
/// and hands the loader this layer's `vkGet*ProcAddr`.
///
/// # Safety
/// `interface` is null or the loader's negotiation structure.
pub unsafe fn negotiate<L: Registered>(interface: *mut VkNegotiateLayerInterface) -> VkResult {
    guard(|| {
        // SAFETY: per the caller's contract.
        let Some(interface) = (unsafe { interface.as_mut() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if interface.sType != VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        interface.loaderLayerInterfaceVersion = interface
            .loaderLayerInterfaceVersion
            .min(CURRENT_LOADER_LAYER_INTERFACE_VERSION);
        interface.pfnGetInstanceProcAddr = Some(get_instance_proc_addr::<L>);
        interface.pfnGetDeviceProcAddr = Some(get_device_proc_addr::<L>);
        interface.pfnGetPhysicalDeviceProcAddr = None;
        VkResult::SUCCESS
    })
}

/// A function pointer of any signature as `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of any signature share one representation.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// The commands the chassis itself implements, answered for any handle.
fn lifecycle<L: Registered>(name: &[u8]) -> PFN_vkVoidFunction {
    match name {
        b"vkGetInstanceProcAddr" => {
            void_fn!(PFN_vkGetInstanceProcAddr, get_instance_proc_addr::<L>)
        }
        b"vkGetDeviceProcAddr" => void_fn!(PFN_vkGetDeviceProcAddr, get_device_proc_addr::<L>),
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, create_instance::<L>),
        b"vkDestroyInstance" => void_fn!(PFN_vkDestroyInstance, destroy_instance::<L>),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, create_device::<L>),
        b"vkDestroyDevice" => void_fn!(PFN_vkDestroyDevice, destroy_device::<L>),
        _ => None,
    }
}

/// The layer's entry point for `name` when the layer hooks it at one of `levels`.
fn hooked<L: Registered>(name: &[u8], levels: &[&[u16]]) -> PFN_vkVoidFunction {
    let id = vk_generated::lookup::command(name)?.command;
    // The layer's short list first: most names are not hooked.
    let index = L::HOOKS.iter().position(|&hook| hook == id)?;
    let hookable = levels.iter().any(|list| list.contains(&id));
    if hookable {
        L::hook_entries().get(index).copied().flatten()
    } else {
        None
    }
}

/// The layer's `vkGetInstanceProcAddr`: the chassis's and the hooked commands (when the next
/// level has them), the next level's pointer for everything else.
///
/// # Safety
/// As `vkGetInstanceProcAddr`.
pub unsafe extern "system" fn get_instance_proc_addr<L: Registered>(
    instance: VkInstance,
    name: *const c_char,
) -> PFN_vkVoidFunction {
    guard(|| {
        if name.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name, per the API.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
        if let Some(own) = lifecycle::<L>(bytes) {
            return Some(own);
        }
        // SAFETY: a live instance or null, per the API.
        let state = unsafe { L::chassis().instance(instance.0) }?;
        // SAFETY: the next level's own function, called as the API says.
        let next = unsafe { (state.gipa)(instance, name) };
        next?;
        hooked::<L>(bytes, &[INSTANCE_HOOKABLE, DEVICE_HOOKABLE]).or(next)
    })
}

/// The layer's `vkGetDeviceProcAddr`, as [`get_instance_proc_addr`] for device-level commands.
///
/// # Safety
/// As `vkGetDeviceProcAddr`.
pub unsafe extern "system" fn get_device_proc_addr<L: Registered>(
    device: VkDevice,
    name: *const c_char,
) -> PFN_vkVoidFunction {
    guard(|| {
        if name.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name, per the API.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
        match bytes {
            b"vkGetDeviceProcAddr" | b"vkDestroyDevice" => return lifecycle::<L>(bytes),
            _ => {}
        }
        // SAFETY: a live device or null, per the API.
        let state = unsafe { L::chassis().device(device.0) }?;
        // SAFETY: the next level's own function, called as the API says.
        let next = unsafe { (state.gdpa)(device, name) };
        next?;
        hooked::<L>(bytes, &[DEVICE_HOOKABLE]).or(next)
    })
}

/// `vkCreateInstance`: takes the link, creates the instance below, makes the layer's object.
unsafe extern "system" fn create_instance<L: Registered>(
    info: *const VkInstanceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    p_instance: *mut VkInstance,
) -> VkResult {
    guard(|| {
        // SAFETY: the loader's create info, per the loader-layer interface.
        let Some(gipa) = (unsafe { take_instance_link(info) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the next level's own functions, called as the API says.
        unsafe {
            let create: PFN_vkCreateInstance =
                std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
            let Some(create) = create else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            let result = create(info, allocator, p_instance);
            if result != VkResult::SUCCESS {
                return result;
            }
            let instance = *p_instance;
            let next = InstanceDispatchTable::load(|name| gipa(instance, name.as_ptr()));
            // A panicking constructor is a failed one: the instance below is destroyed too.
            match created(|| L::create_instance(&*info, instance, &next)) {
                Ok(hooks) => {
                    if let Some(key) = dispatch_key(instance.0) {
                        L::chassis()
                            .instances
                            .insert(key, Box::new(InstanceState { next, gipa, hooks }));
                    }
                    VkResult::SUCCESS
                }
                Err(error) => {
                    if let Some(destroy) = next.vkDestroyInstance {
                        destroy(instance, allocator);
                    }
                    error
                }
            }
        }
    })
}

/// The layer's constructor of an instance or device object, a panic in it turned into
/// `VK_ERROR_INITIALIZATION_FAILED` so that the caller destroys what the level below made.
fn created<T>(construct: impl FnOnce() -> Result<T, VkResult>) -> Result<T, VkResult> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(construct))
        .unwrap_or(Err(VkResult::ERROR_INITIALIZATION_FAILED))
}

/// `vkDestroyInstance`: destroys the instance below, then drops the layer's object.
unsafe extern "system" fn destroy_instance<L: Registered>(
    instance: VkInstance,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: the application no longer uses the instance anywhere (the API's rule).
        let Some(state) = (unsafe {
            dispatch_key(instance.0).and_then(|key| L::chassis().instances.remove(key))
        }) else {
            return;
        };
        if let Some(destroy) = state.next.vkDestroyInstance {
            // SAFETY: the next level's own function.
            unsafe { destroy(instance, allocator) };
        }
    })
}

/// `vkCreateDevice`: as [`create_instance`], with the instance's object at hand.
unsafe extern "system" fn create_device<L: Registered>(
    physical_device: VkPhysicalDevice,
    info: *const VkDeviceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    p_device: *mut VkDevice,
) -> VkResult {
    guard(|| {
        // SAFETY: a live physical device, per the API.
        let Some(instance) = (unsafe { L::chassis().instance(physical_device.0) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the loader's create info, per the loader-layer interface.
        let Some((gipa, gdpa)) = (unsafe { take_device_link(info) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the next level's own functions, called as the API says.
        unsafe {
            let create: PFN_vkCreateDevice =
                std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateDevice".as_ptr()));
            let Some(create) = create else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            let result = create(physical_device, info, allocator, p_device);
            if result != VkResult::SUCCESS {
                return result;
            }
            let device = *p_device;
            let next = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
            match created(|| {
                L::create_device(&instance.hooks, physical_device, &*info, device, &next)
            }) {
                Ok(hooks) => {
                    if let Some(key) = dispatch_key(device.0) {
                        L::chassis()
                            .devices
                            .insert(key, Box::new(DeviceState { next, gdpa, hooks }));
                    }
                    VkResult::SUCCESS
                }
                Err(error) => {
                    if let Some(destroy) = next.vkDestroyDevice {
                        destroy(device, allocator);
                    }
                    error
                }
            }
        }
    })
}

/// `vkDestroyDevice`: destroys the device below, then drops the layer's object.
unsafe extern "system" fn destroy_device<L: Registered>(
    device: VkDevice,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: the application no longer uses the device anywhere (the API's rule).
        let Some(state) =
            (unsafe { dispatch_key(device.0).and_then(|key| L::chassis().devices.remove(key)) })
        else {
            return;
        };
        if let Some(destroy) = state.next.vkDestroyDevice {
            // SAFETY: the next level's own function.
            unsafe { destroy(device, allocator) };
        }
    })
}
