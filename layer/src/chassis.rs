//! The hand-written chassis: interface negotiation, `vkGet*ProcAddr` and
//! `vk_layerGetPhysicalDeviceProcAddr`, instance and device creation and destruction (with the
//! layer's lifecycle hooks and handle wrapping), the layer's own properties and the pre-instance
//! interceptors.
//!
//! Which commands a layer hooks is what its `#[vk_layer::hooks]` blocks implement
//! ([`InstanceHooked`], [`DeviceHooked`]), checked at
//! compile time by [`declare_layer!`](crate::declare_layer). Only those (and the lifecycle
//! commands the chassis needs) are answered with the layer's own entry points; every other name
//! gets the next level's pointer, so unhooked commands cost the layer nothing.

use std::ffi::{c_char, CStr};

use vk_generated::layer_abi::{
    VkEnumerateInstanceExtensionPropertiesChain, VkEnumerateInstanceLayerPropertiesChain,
    VkEnumerateInstanceVersionChain, VkNegotiateLayerInterface, VkNegotiateLayerStructType,
    CURRENT_LOADER_LAYER_INTERFACE_VERSION,
};
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

use crate::chain::{take_device_link, take_instance_link};
use crate::chassis_report;
use crate::create_info::{DeviceCreateInfo, InstanceCreateInfo};
use crate::dispatch_map::DispatchMap;
use crate::guard::guard;
use crate::hooks::{DeviceHooked, InstanceHooked};
use crate::manifest::{LAYER_SETTINGS_EXTENSION, TOOLING_INFO_EXTENSION};
use crate::report::{during_lifecycle, Messengers};
use crate::state::{
    dispatch_key, extension_properties, fill_array, DeviceState, InstanceState, LayerProperties,
    InstanceOf, NextInstanceExtensions, NextInstanceLayers, NextInstanceVersion, ProcAddr,
    Registered,
};

/// `vkNegotiateLoaderLayerInterfaceVersion`: agrees on interface 2 (or the loader's lower one)
/// and hands the loader this layer's `vkGet*ProcAddr` and `vk_layerGetPhysicalDeviceProcAddr`.
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
        interface.pfnGetPhysicalDeviceProcAddr = Some(get_physical_device_proc_addr::<L>);
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
        _ => properties::<L>(name),
    }
}

/// The enumeration commands answered from [`Layer::PROPERTIES`](crate::Layer::PROPERTIES), when
/// the layer has them.
fn properties<L: Registered>(name: &[u8]) -> PFN_vkVoidFunction {
    L::PROPERTIES?;
    match name {
        b"vkEnumerateInstanceLayerProperties" => void_fn!(
            PFN_vkEnumerateInstanceLayerProperties,
            enumerate_instance_layer_properties::<L>
        ),
        b"vkEnumerateInstanceExtensionProperties" => void_fn!(
            PFN_vkEnumerateInstanceExtensionProperties,
            enumerate_instance_extension_properties::<L>
        ),
        b"vkEnumerateDeviceLayerProperties" => void_fn!(
            PFN_vkEnumerateDeviceLayerProperties,
            enumerate_device_layer_properties::<L>
        ),
        b"vkEnumerateDeviceExtensionProperties" => void_fn!(
            PFN_vkEnumerateDeviceExtensionProperties,
            enumerate_device_extension_properties::<L>
        ),
        _ => None,
    }
}

/// The layer's entry point for `name` when its device object hooks it, or (`instance_level`)
/// its instance object.
pub(crate) fn hooked<L: Registered>(name: &[u8], instance_level: bool) -> PFN_vkVoidFunction {
    let id = vk_generated::lookup::command(name)?.command;
    let find = |ids: &[u16], entries: &[PFN_vkVoidFunction]| {
        let index = ids.iter().position(|&hook| hook == id)?;
        entries.get(index).copied().flatten()
    };
    find(<L::Device as DeviceHooked>::COMMANDS, L::device_entries()).or_else(|| {
        if instance_level {
            find(
                <L::Instance as InstanceHooked>::COMMANDS,
                L::instance_entries(),
            )
        } else {
            None
        }
    })
}

/// The layer's `vkGetInstanceProcAddr`: the chassis's commands, the layer's answer
/// ([`Layer::instance_proc_addr`](crate::Layer::instance_proc_addr)), then the hooked commands
/// (when the next level has them) and the next level's pointer for everything else.
///
/// # Safety
/// As `vkGetInstanceProcAddr`.
// Not inlined: `declare_layer!` exports a wrapper under the same Vulkan name, and an
// optimized build's function merging would otherwise make this function and that exported,
// interposable symbol one, so that the pointer negotiation hands the loader resolves through the
// GOT to the first `vkGetDeviceProcAddr` of the process: the loader's own (a release trace layer
// made our loader answer NULL and the Khronos loader spin in its own `vkGetDeviceProcAddr`).
#[inline(never)]
pub unsafe extern "system" fn get_instance_proc_addr<L: Registered>(
    instance: VkInstance,
    name: *const c_char,
) -> PFN_vkVoidFunction {
    guard(|| {
        if name.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name, per the API.
        let name = unsafe { CStr::from_ptr(name) };
        let bytes = name.to_bytes();
        if let Some(own) = lifecycle::<L>(bytes) {
            return Some(own);
        }
        let answer = L::instance_proc_addr(name);
        if let ProcAddr::Own(own) = answer {
            return own;
        }
        // SAFETY: a live instance or null, per the API.
        let state = unsafe { L::chassis().instance(instance.0) }?;
        let next = state.next_proc_addr(name);
        let intercept = matches!(answer, ProcAddr::Chassis);
        if let Some(own) = chassis_report::own::<L>(bytes, next, intercept) {
            return Some(own);
        }
        next?;
        match answer {
            ProcAddr::Chassis => hooked::<L>(bytes, true).or(next),
            _ => next,
        }
    })
}

/// The layer's `vkGetDeviceProcAddr`, as [`get_instance_proc_addr`] for device-level commands.
///
/// # Safety
/// As `vkGetDeviceProcAddr`.
// Not inlined: see `get_instance_proc_addr`.
#[inline(never)]
pub unsafe extern "system" fn get_device_proc_addr<L: Registered>(
    device: VkDevice,
    name: *const c_char,
) -> PFN_vkVoidFunction {
    guard(|| {
        if name.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name, per the API.
        let name = unsafe { CStr::from_ptr(name) };
        let bytes = name.to_bytes();
        match bytes {
            b"vkGetDeviceProcAddr" | b"vkDestroyDevice" => return lifecycle::<L>(bytes),
            _ => {}
        }
        let answer = L::device_proc_addr(name);
        if let ProcAddr::Own(own) = answer {
            return own;
        }
        // SAFETY: a live device or null, per the API.
        let state = unsafe { L::chassis().device(device.0) }?;
        let down = L::unwrap_device(&state.hooks, device)?;
        // SAFETY: the state's own device, as the next level knows it.
        let next = unsafe { state.next_proc_addr(down, name) };
        let intercept = matches!(answer, ProcAddr::Chassis);
        if let Some(own) = chassis_report::own_device::<L>(bytes, next, intercept) {
            return Some(own);
        }
        next?;
        match answer {
            ProcAddr::Chassis => hooked::<L>(bytes, false).or(next),
            _ => next,
        }
    })
}

/// The layer's `vk_layerGetPhysicalDeviceProcAddr`: the next level's answer, through
/// [`Layer::physical_device_proc_addr`](crate::Layer::physical_device_proc_addr).
///
/// # Safety
/// As `vk_layerGetPhysicalDeviceProcAddr`.
// Not inlined: see `get_instance_proc_addr`.
#[inline(never)]
pub unsafe extern "system" fn get_physical_device_proc_addr<L: Registered>(
    instance: VkInstance,
    name: *const c_char,
) -> PFN_vkVoidFunction {
    guard(|| {
        if name.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated name, per the API.
        let name = unsafe { CStr::from_ptr(name) };
        // SAFETY: a live instance or null, per the API.
        let state = unsafe { L::chassis().instance(instance.0) }?;
        let next = state.next_physical_device_proc_addr(name);
        L::physical_device_proc_addr(state, name, next)
    })
}

/// `vkCreateInstance`: takes the link, creates the instance below, makes the layer's object.
///
/// # Safety
/// As `vkCreateInstance` through the loader: `info` is a valid create info whose `pNext` chain
/// holds the loader's `VkLayerInstanceCreateInfo` link for this layer (checked: a missing link is
/// `VK_ERROR_INITIALIZATION_FAILED`), `allocator` is null or valid and `p_instance` is writable.
unsafe extern "system" fn create_instance<L: Registered>(
    info: *const VkInstanceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    p_instance: *mut VkInstance,
) -> VkResult {
    guard(|| {
        // SAFETY: the loader's create info, per the loader-layer interface.
        let Some(link) = (unsafe { take_instance_link(info) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let gipa = link.gipa;
        // SAFETY: the next level's own functions, called as the API says.
        unsafe {
            let create: PFN_vkCreateInstance =
                std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
            let Some(create) = create else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            // The messengers chained at creation hear the layer while the instance is created.
            let messengers = Messengers::chained((*info).pNext);
            let mut down = InstanceCreateInfo::new(&*info);
            let made = during_lifecycle(&messengers, || {
                created(|| L::before_create_instance(&mut down, &link, p_instance))?;
                let info = &*down;
                let result = create(down.as_ptr(), allocator, p_instance);
                if result != VkResult::SUCCESS {
                    return Err(result);
                }
                let instance = *p_instance;
                let next = InstanceDispatchTable::load(|name| gipa(instance, name.as_ptr()));
                // A panicking constructor is a failed one: the instance below is destroyed too.
                let hooks = created(|| L::create_instance(info, instance, &next, &link));
                Ok((instance, next, hooks))
            });
            let (instance, next, hooks) = match made {
                Ok(made) => made,
                Err(error) => return error,
            };
            match hooks {
                Ok(hooks) => {
                    let Some(key) = dispatch_key(instance.0) else {
                        return VkResult::ERROR_INITIALIZATION_FAILED;
                    };
                    let destroy = next.vkDestroyInstance;
                    let state = Box::new(InstanceState {
                        next,
                        handle: instance,
                        link,
                        messengers,
                        hooks,
                        owned: Default::default(),
                    });
                    // The key is the dispatch pointer of the instance just created.
                    let Some(state) = store_created(&L::chassis().instances, key, state) else {
                        if let Some(destroy) = destroy {
                            destroy(instance, allocator);
                        }
                        return VkResult::ERROR_INITIALIZATION_FAILED;
                    };
                    *p_instance = L::returned_instance(&state.hooks, instance);
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

/// Stores the state of an object the level below has just created under the object's dispatch
/// pointer `key`, and returns it as stored (`None` only if `key` is no dispatch pointer).
///
/// # Safety
/// `key` is the dispatch pointer of the object just created.
unsafe fn store_created<T>(states: &DispatchMap<T>, key: usize, state: Box<T>) -> Option<&T> {
    let state = match states.insert(key, state) {
        Ok(stored) => return Some(stored),
        Err(state) => state,
    };
    // SAFETY: the loader gives every live dispatchable object its own dispatch table, so a state
    // still stored under a new object's key belongs to an object destroyed without this layer's
    // `vkDestroy*` removing it (its handle was not recognised by the layer's unwrap hook). The API
    // forbids any further use of that object, and so of its state.
    drop(unsafe { states.remove(key) });
    states.insert(key, state).ok()
}

/// The layer's constructor of an instance or device object, a panic in it turned into
/// `VK_ERROR_INITIALIZATION_FAILED` so that the caller destroys what the level below made.
fn created<T>(construct: impl FnOnce() -> Result<T, VkResult>) -> Result<T, VkResult> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(construct))
        .unwrap_or(Err(VkResult::ERROR_INITIALIZATION_FAILED))
}

/// `vkDestroyInstance`: destroys the instance below, then drops the layer's object.
///
/// # Safety
/// As `vkDestroyInstance`: `instance` is null or a live instance (of this layer's chain) that no
/// other thread uses, now or later, and whose devices are destroyed; `allocator` as at creation.
unsafe extern "system" fn destroy_instance<L: Registered>(
    instance: VkInstance,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: a live instance or null, per the API.
        let Some(state) = (unsafe { L::chassis().instance(instance.0) }) else {
            return;
        };
        during_lifecycle(&state.messengers, || {
            L::before_destroy_instance(&state.hooks, instance)
        });
        let Some(inner) = L::unwrap_instance(&state.hooks, instance) else {
            return;
        };
        // SAFETY: the application no longer uses the instance anywhere (the API's rule).
        let Some(state) = (unsafe {
            dispatch_key(instance.0).and_then(|key| L::chassis().instances.remove(key))
        }) else {
            return;
        };
        if let Some(destroy) = state.next.vkDestroyInstance {
            // SAFETY: the next level's own function.
            unsafe { destroy(inner, allocator) };
        }
    })
}

/// `vkCreateDevice`: as [`create_instance`], with the instance's object at hand.
///
/// # Safety
/// As `vkCreateDevice` through the loader: `physical_device` is a live physical device of an
/// instance this layer made, `info` a valid create info whose `pNext` chain holds the loader's
/// `VkLayerDeviceCreateInfo` link (checked: a missing link is `VK_ERROR_INITIALIZATION_FAILED`),
/// `allocator` null or valid and `p_device` writable.
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
        let Some(inner) = L::unwrap_physical_device(&instance.hooks, physical_device) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the loader's create info, per the loader-layer interface.
        let Some(link) = (unsafe { take_device_link(info) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let (gipa, gdpa) = (link.gipa, link.gdpa);
        // SAFETY: the next level's own functions, called as the API says.
        unsafe {
            let create: PFN_vkCreateDevice =
                std::mem::transmute(gipa(instance.handle, c"vkCreateDevice".as_ptr()));
            let Some(create) = create else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            let mut down = DeviceCreateInfo::new(&*info);
            for &(own, ..) in L::PROPERTIES.map_or(&[][..], |p| p.device_extensions) {
                if let Ok(own) = std::ffi::CString::new(own) {
                    down.remove_extension(&own);
                }
            }
            if let Err(error) = created(|| {
                L::before_create_device(&instance.hooks, physical_device, &mut down, &link, p_device)
            }) {
                return error;
            }
            let info = &*down;
            // A wrapping layer's physical devices in the chain (`VkDeviceGroupDeviceCreateInfo`)
            // go down as the next level's, in copies that live for the call (the walk reads the
            // caller's chain, valid per the API, and the loader's structures at its head).
            let mut scratch = crate::unwrap::Scratch::new();
            let mut sent = *down.as_ptr();
            if L::WRAPS_HANDLES {
                let at = crate::unwrap::AtInstance::<L>(instance);
                match crate::unwrap::chain(&at, sent.pNext, &mut scratch) {
                    Ok(p_next) => sent.pNext = p_next,
                    Err(r) => {
                        return crate::unknown::refused::<L, VkResult>(
                            &instance.messengers,
                            vk_generated::command_id::vkCreateDevice,
                            r.0,
                            r.1,
                        )
                    }
                }
            }
            let result = create(inner, &sent, allocator, p_device);
            if result != VkResult::SUCCESS {
                return result;
            }
            let device = *p_device;
            let next = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
            match created(|| {
                L::create_device(&instance.hooks, physical_device, info, device, &next, &link)
            }) {
                Ok(hooks) => {
                    let Some(key) = dispatch_key(device.0) else {
                        return VkResult::ERROR_INITIALIZATION_FAILED;
                    };
                    let instance = InstanceOf::new(instance);
                    let destroy = next.vkDestroyDevice;
                    let state = Box::new(DeviceState {
                        next,
                        link,
                        instance,
                        hooks,
                        owned: Default::default(),
                        templates: Default::default(),
                    });
                    // The key is the dispatch pointer of the device just created.
                    let Some(state) = store_created(&L::chassis().devices, key, state) else {
                        if let Some(destroy) = destroy {
                            destroy(device, allocator);
                        }
                        return VkResult::ERROR_INITIALIZATION_FAILED;
                    };
                    *p_device = L::returned_device(&state.hooks, device);
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
///
/// # Safety
/// As `vkDestroyDevice`: `device` is null or a live device that no other thread uses, now or
/// later; `allocator` as at creation.
unsafe extern "system" fn destroy_device<L: Registered>(
    device: VkDevice,
    allocator: *const VkAllocationCallbacks,
) {
    guard(|| {
        // SAFETY: a live device or null, per the API.
        let Some(state) = (unsafe { L::chassis().device(device.0) }) else {
            return;
        };
        L::before_destroy_device(&state.hooks, device);
        let Some(inner) = L::unwrap_device(&state.hooks, device) else {
            return;
        };
        // SAFETY: the application no longer uses the device anywhere (the API's rule).
        let Some(state) =
            (unsafe { dispatch_key(device.0).and_then(|key| L::chassis().devices.remove(key)) })
        else {
            return;
        };
        if let Some(destroy) = state.next.vkDestroyDevice {
            // SAFETY: the next level's own function.
            unsafe { destroy(inner, allocator) };
        }
    })
}

// ------------------------------------------------------------------------------------------------
// The layer's own properties (`Layer::PROPERTIES`)
// ------------------------------------------------------------------------------------------------

/// Whether `layer_name` (null or a C string) is this layer's name.
///
/// # Safety
/// `layer_name` is null or NUL-terminated.
unsafe fn is_own_name(layer_name: *const c_char, own: &LayerProperties) -> bool {
    // SAFETY: per the caller's contract.
    !layer_name.is_null() && unsafe { CStr::from_ptr(layer_name) }.to_bytes() == own.name.as_bytes()
}

/// `vkEnumerateInstanceLayerProperties` answered by this layer: itself.
///
/// # Safety
/// As `vkEnumerateInstanceLayerProperties`: `p_count` is valid and `p_properties` null or an
/// array of `*p_count` elements.
unsafe extern "system" fn enumerate_instance_layer_properties<L: Registered>(
    p_count: *mut u32,
    p_properties: *mut VkLayerProperties,
) -> VkResult {
    guard(|| {
        let own = L::PROPERTIES.map(|p| p.to_vk());
        // SAFETY: the caller's arrays, per the API.
        unsafe { fill_array(own.as_slice(), p_count, p_properties) }
    })
}

/// `vkEnumerateInstanceExtensionProperties` answered by this layer: its instance extensions for
/// its own name, none for a null name, `VK_ERROR_LAYER_NOT_PRESENT` for another layer's.
///
/// # Safety
/// As `vkEnumerateInstanceExtensionProperties`: `layer_name` is null or NUL-terminated,
/// `p_count` is valid and `p_properties` null or an array of `*p_count` elements.
unsafe extern "system" fn enumerate_instance_extension_properties<L: Registered>(
    layer_name: *const c_char,
    p_count: *mut u32,
    p_properties: *mut VkExtensionProperties,
) -> VkResult {
    guard(|| {
        let Some(own) = L::PROPERTIES else {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        };
        // SAFETY: the caller's name and arrays, per the API.
        unsafe {
            if is_own_name(layer_name, &own) {
                let mut list: Vec<_> = own
                    .instance_extensions
                    .iter()
                    .map(|&(name, version)| extension_properties(name, version))
                    .collect();
                // A layer with settings reads `VkLayerSettingsCreateInfoEXT`.
                let (settings, version) = LAYER_SETTINGS_EXTENSION;
                if !L::SETTINGS.is_empty()
                    && !own.instance_extensions.iter().any(|&(n, _)| n == settings)
                {
                    list.push(extension_properties(settings, version));
                }
                fill_array(&list, p_count, p_properties)
            } else if layer_name.is_null() {
                fill_array::<VkExtensionProperties>(&[], p_count, p_properties)
            } else {
                VkResult::ERROR_LAYER_NOT_PRESENT
            }
        }
    })
}

/// `vkEnumerateDeviceLayerProperties` answered by this layer: itself.
///
/// # Safety
/// As `vkEnumerateDeviceLayerProperties`: `p_count` is valid and `p_properties` null or an array
/// of `*p_count` elements (the physical device is not used).
unsafe extern "system" fn enumerate_device_layer_properties<L: Registered>(
    _physical_device: VkPhysicalDevice,
    p_count: *mut u32,
    p_properties: *mut VkLayerProperties,
) -> VkResult {
    // SAFETY: as the instance-level one.
    unsafe { enumerate_instance_layer_properties::<L>(p_count, p_properties) }
}

/// `vkEnumerateDeviceExtensionProperties`: this layer's device extensions for its own name, the
/// next level's answer (the physical device unwrapped) for any other name.
///
/// # Safety
/// As `vkEnumerateDeviceExtensionProperties`: `physical_device` is a live physical device of an
/// instance this layer made, `layer_name` null or NUL-terminated, `p_count` valid and
/// `p_properties` null or an array of `*p_count` elements.
unsafe extern "system" fn enumerate_device_extension_properties<L: Registered>(
    physical_device: VkPhysicalDevice,
    layer_name: *const c_char,
    p_count: *mut u32,
    p_properties: *mut VkExtensionProperties,
) -> VkResult {
    guard(|| {
        let Some(own) = L::PROPERTIES else {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        };
        // SAFETY: the caller's name and arrays, per the API.
        unsafe {
            if is_own_name(layer_name, &own) {
                let mut list: Vec<_> = own
                    .device_extensions
                    .iter()
                    .map(|&(name, version, _)| extension_properties(name, version))
                    .collect();
                // A tool answers `vkGetPhysicalDeviceToolProperties`.
                let (tooling, version, _) = TOOLING_INFO_EXTENSION;
                if L::TOOL_PURPOSES.0 != 0
                    && !own.device_extensions.iter().any(|&(n, ..)| n == tooling)
                {
                    list.push(extension_properties(tooling, version));
                }
                return fill_array(&list, p_count, p_properties);
            }
            let Some(state) = L::chassis().instance(physical_device.0) else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            let (Some(inner), Some(next)) = (
                L::unwrap_physical_device(&state.hooks, physical_device),
                state.next.vkEnumerateDeviceExtensionProperties,
            ) else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            next(inner, layer_name, p_count, p_properties)
        }
    })
}

// ------------------------------------------------------------------------------------------------
// Pre-instance interceptors (an implicit layer's `pre_instance_functions`)
// ------------------------------------------------------------------------------------------------

/// The `vkEnumerateInstanceExtensionProperties` interceptor `declare_layer!` exports.
///
/// # Safety
/// As the loader calls a pre-instance function.
pub unsafe extern "system" fn pre_instance_extension_properties<L: Registered>(
    chain: *const VkEnumerateInstanceExtensionPropertiesChain,
    layer_name: *const c_char,
    p_count: *mut u32,
    p_properties: *mut VkExtensionProperties,
) -> VkResult {
    guard(|| {
        // SAFETY: the loader's chain, per the interface.
        let Some(chain) = (unsafe { chain.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the caller's arguments.
        unsafe {
            L::enumerate_instance_extension_properties(
                NextInstanceExtensions(chain),
                layer_name,
                p_count,
                p_properties,
            )
        }
    })
}

/// The `vkEnumerateInstanceLayerProperties` interceptor `declare_layer!` exports.
///
/// # Safety
/// As the loader calls a pre-instance function.
pub unsafe extern "system" fn pre_instance_layer_properties<L: Registered>(
    chain: *const VkEnumerateInstanceLayerPropertiesChain,
    p_count: *mut u32,
    p_properties: *mut VkLayerProperties,
) -> VkResult {
    guard(|| {
        // SAFETY: the loader's chain, per the interface.
        let Some(chain) = (unsafe { chain.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the caller's arguments.
        unsafe {
            L::enumerate_instance_layer_properties(NextInstanceLayers(chain), p_count, p_properties)
        }
    })
}

/// The `vkEnumerateInstanceVersion` interceptor `declare_layer!` exports.
///
/// # Safety
/// As the loader calls a pre-instance function.
pub unsafe extern "system" fn pre_instance_version<L: Registered>(
    chain: *const VkEnumerateInstanceVersionChain,
    p_api_version: *mut u32,
) -> VkResult {
    guard(|| {
        // SAFETY: the loader's chain, per the interface.
        let Some(chain) = (unsafe { chain.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the caller's arguments.
        unsafe { L::enumerate_instance_version(NextInstanceVersion(chain), p_api_version) }
    })
}
