//! The hand-written chassis: the layer's state, instance and device creation and destruction,
//! `vkGet*ProcAddr`, interface negotiation, and the guard that keeps panics inside.
//!
//! Which commands a layer hooks is [`Layer::HOOKS`], a list of `vk_generated::command_id`
//! constants checked at compile time by [`declare_layer!`](crate::declare_layer). Only those
//! (and the lifecycle commands the chassis needs) are answered with the layer's own entry points;
//! every other name gets the next level's pointer, so unhooked commands cost the layer nothing.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use vk_generated::layer_abi::{
    VkNegotiateLayerInterface, VkNegotiateLayerStructType, CURRENT_LOADER_LAYER_INTERFACE_VERSION,
};
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

use crate::chain::{take_device_link, take_instance_link, Gdpa, Gipa};
use crate::dispatch_map::DispatchMap;
use crate::hooks::{entry, DeviceHooks, InstanceHooks, DEVICE_HOOKABLE, INSTANCE_HOOKABLE};

/// A layer: its per-instance and per-device objects and the commands it hooks.
pub trait Layer: Sized + 'static {
    /// Made at `vkCreateInstance`, dropped at `vkDestroyInstance` (after the next level's call).
    type Instance: InstanceHooks;
    /// Made at `vkCreateDevice`, dropped at `vkDestroyDevice` (after the next level's call).
    type Device: DeviceHooks;
    /// The hooked commands (`vk_generated::command_id::vkCmdDraw`, ...): their hook methods run,
    /// every other command goes straight to the next level.
    const HOOKS: &'static [u16];

    /// The layer's object for a new instance, after the next level created it; an error destroys
    /// the instance again and fails `vkCreateInstance` with it.
    fn create_instance(
        info: &VkInstanceCreateInfo,
        instance: VkInstance,
        next: &InstanceDispatchTable,
    ) -> Result<Self::Instance, VkResult>;

    /// The layer's object for a new device, as [`create_instance`](Self::create_instance).
    fn create_device(
        instance: &Self::Instance,
        physical_device: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        device: VkDevice,
        next: &DeviceDispatchTable,
    ) -> Result<Self::Device, VkResult>;
}

/// A layer with its chassis, as [`declare_layer!`](crate::declare_layer) declares it.
///
/// # Safety
/// `chassis` returns the same static every time.
pub unsafe trait Registered: Layer {
    /// The layer's state.
    fn chassis() -> &'static Chassis<Self>;
    /// The entry points of [`Layer::HOOKS`], in that order ([`hook_entries`]).
    fn hook_entries() -> &'static [PFN_vkVoidFunction];
}

/// The entry points of `L::HOOKS` (`N` of them), in order. Evaluated at compile time by
/// [`declare_layer!`](crate::declare_layer), so only the hooked commands' entry points are built.
pub const fn hook_entries<L: Registered, const N: usize>() -> [PFN_vkVoidFunction; N] {
    let mut entries = [None; N];
    let mut i = 0;
    while i < N {
        entries[i] = entry::<L>(L::HOOKS[i]);
        i += 1;
    }
    entries
}

/// What the chassis keeps per instance.
pub struct InstanceState<L: Layer> {
    /// The next level's instance-level functions.
    pub next: InstanceDispatchTable,
    gipa: Gipa,
    /// The layer's object.
    pub hooks: L::Instance,
}

/// What the chassis keeps per device.
pub struct DeviceState<L: Layer> {
    /// The next level's device-level functions.
    pub next: DeviceDispatchTable,
    gdpa: Gdpa,
    /// The layer's object.
    pub hooks: L::Device,
}

/// A layer's state: instances and devices by dispatch pointer.
pub struct Chassis<L: Layer> {
    instances: DispatchMap<InstanceState<L>>,
    devices: DispatchMap<DeviceState<L>>,
}

impl<L: Layer> Default for Chassis<L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L: Layer> Chassis<L> {
    /// No instances, no devices; usable in a `static`.
    pub const fn new() -> Self {
        Chassis {
            instances: DispatchMap::new(),
            devices: DispatchMap::new(),
        }
    }

    /// The state of the instance that `handle` (a `VkInstance` or `VkPhysicalDevice`) belongs to.
    ///
    /// # Safety
    /// `handle` is null or a live dispatchable handle.
    pub unsafe fn instance(&self, handle: *mut std::ffi::c_void) -> Option<&InstanceState<L>> {
        // SAFETY: per the caller's contract.
        self.instances.get(unsafe { dispatch_key(handle) }?)
    }

    /// The state of the device that `handle` (a `VkDevice`, `VkQueue` or `VkCommandBuffer`)
    /// belongs to.
    ///
    /// # Safety
    /// `handle` is null or a live dispatchable handle.
    pub unsafe fn device(&self, handle: *mut std::ffi::c_void) -> Option<&DeviceState<L>> {
        // SAFETY: per the caller's contract.
        self.devices.get(unsafe { dispatch_key(handle) }?)
    }
}

/// The loader's dispatch pointer, the first word of a dispatchable handle: one per instance (its
/// physical devices share it) and one per device (its queues and command buffers share it).
///
/// # Safety
/// `handle` is null or points to at least one readable word.
unsafe fn dispatch_key(handle: *mut std::ffi::c_void) -> Option<usize> {
    // SAFETY: per the caller's contract.
    (!handle.is_null()).then(|| unsafe { *(handle as *const usize) })
}

/// The value an entry point returns when it cannot call down (a panic, an unknown handle).
pub(crate) trait Fallback {
    fn fallback() -> Self;
}

impl Fallback for () {
    fn fallback() {}
}

impl Fallback for VkResult {
    fn fallback() -> Self {
        VkResult::ERROR_UNKNOWN
    }
}

impl Fallback for PFN_vkVoidFunction {
    fn fallback() -> Self {
        None
    }
}

/// `VkBool32` (`VK_FALSE`) and counts.
impl Fallback for u32 {
    fn fallback() -> Self {
        0
    }
}

/// `VkDeviceAddress`, `VkDeviceSize` and other 64-bit values: zero, "none".
impl Fallback for u64 {
    fn fallback() -> Self {
        0
    }
}

impl Fallback for *mut std::ffi::c_void {
    fn fallback() -> Self {
        std::ptr::null_mut()
    }
}

/// Runs `f`; a panic in it (the layer's code) becomes the fallback value instead of unwinding
/// into the application through `extern "system"`.
pub(crate) fn guard<R: Fallback>(f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| R::fallback())
}

/// A hook list names only hookable commands: [`declare_layer!`](crate::declare_layer) evaluates
/// this at compile time.
pub const fn check_hooks(hooks: &[u16]) {
    let mut i = 0;
    while i < hooks.len() {
        assert!(
            contains(INSTANCE_HOOKABLE, hooks[i]) || contains(DEVICE_HOOKABLE, hooks[i]),
            "Layer::HOOKS names a command without generated hooks"
        );
        i += 1;
    }
}

const fn contains(list: &[u16], id: u16) -> bool {
    let mut i = 0;
    while i < list.len() {
        if list[i] == id {
            return true;
        }
        i += 1;
    }
    false
}

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
            match L::create_instance(&*info, instance, &next) {
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
            match L::create_device(&instance.hooks, physical_device, &*info, device, &next) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use vk_generated::command_id as id;

    #[test]
    fn every_non_global_command_but_the_chassis_ones_is_hookable_at_its_level() {
        for hookable in [
            id::vkEnumeratePhysicalDevices,
            id::vkGetPhysicalDeviceProperties2,
            id::vkCreateDebugUtilsMessengerEXT,
        ] {
            assert!(INSTANCE_HOOKABLE.contains(&hookable) && !DEVICE_HOOKABLE.contains(&hookable));
        }
        for hookable in [
            id::vkCmdDraw,
            id::vkQueueSubmit,
            id::vkCreateImage,
            id::vkQueuePresentKHR,
        ] {
            assert!(DEVICE_HOOKABLE.contains(&hookable) && !INSTANCE_HOOKABLE.contains(&hookable));
        }
        let chassis = [
            id::vkCreateInstance,
            id::vkDestroyInstance,
            id::vkCreateDevice,
            id::vkDestroyDevice,
        ];
        let global = [
            id::vkEnumerateInstanceVersion,
            id::vkEnumerateInstanceExtensionProperties,
        ];
        for not_hookable in chassis
            .iter()
            .chain(&global)
            .chain(&[id::vkGetInstanceProcAddr, id::vkGetDeviceProcAddr])
        {
            assert!(
                !INSTANCE_HOOKABLE.contains(not_hookable)
                    && !DEVICE_HOOKABLE.contains(not_hookable)
            );
        }
        // Every non-global command but the chassis's five (vkCreateInstance is global).
        let non_global = vk_generated::COMMANDS
            .iter()
            .filter(|c| c.level != vk_generated::CommandLevel::Global)
            .count();
        assert_eq!(
            INSTANCE_HOOKABLE.len() + DEVICE_HOOKABLE.len(),
            non_global - 5
        );
    }

    #[test]
    fn hook_lists_are_checked() {
        check_hooks(&[id::vkCmdDraw, id::vkEnumeratePhysicalDevices]);
    }

    #[test]
    #[should_panic(expected = "without generated hooks")]
    fn a_chassis_command_is_not_a_hook() {
        check_hooks(&[id::vkCmdDraw, id::vkCreateDevice]);
    }
}
