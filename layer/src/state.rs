//! The layer's state: the [`Layer`] a layer author implements, the [`Registered`] layer that
//! `declare_layer!` makes of it, and its [`Chassis`]: per-instance and per-device state keyed by
//! the dispatch pointer, in [`DispatchMap`]s (read without a lock; see there why).

use std::ffi::{c_char, CStr};

use vk_generated::layer_abi::{
    VkEnumerateInstanceExtensionPropertiesChain, VkEnumerateInstanceLayerPropertiesChain,
    VkEnumerateInstanceVersionChain,
};
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};

use crate::chain::{DeviceLink, InstanceLink};
use crate::create_info::{DeviceCreateInfo, InstanceCreateInfo};
use crate::dispatch_map::DispatchMap;
use crate::hooks::{DeviceHooked, DeviceHooks, InstanceHooked, InstanceHooks};
use crate::report::Messengers;

/// A layer: its per-instance and per-device objects (whose `#[vk_layer::hooks]` blocks say which
/// commands it hooks), and optional lifecycle hooks, handle wrapping, `vkGet*ProcAddr` overrides
/// and pre-instance interceptors (every optional item has a default that adds nothing to any call).
pub trait Layer: Sized + 'static {
    /// Made at `vkCreateInstance`, dropped at `vkDestroyInstance` (after the next level's call).
    /// Its hook methods run for the commands they hook; every other command goes straight to the
    /// next level.
    type Instance: InstanceHooks + InstanceHooked;
    /// Made at `vkCreateDevice`, dropped at `vkDestroyDevice` (after the next level's call).
    type Device: DeviceHooks + DeviceHooked;
    /// The layer's own name, versions and extensions. When set, the chassis answers
    /// `vkEnumerate{Instance,Device}{Layer,Extension}Properties` for this layer from it
    /// (`vkEnumerateDeviceExtensionProperties` for another layer goes down the chain), and
    /// [`Manifest::of`](crate::Manifest::of) writes the manifest from it.
    const PROPERTIES: Option<LayerProperties> = None;
    /// The layer's settings (key, type and default, description), read with
    /// [`Settings::of`](crate::Settings::of) from the environment, `vk_layer_settings.txt` and
    /// the application's `VkLayerSettingsCreateInfoEXT`. With [`PROPERTIES`](Self::PROPERTIES),
    /// the chassis then advertises `VK_EXT_layer_settings` and
    /// [`Manifest::of`](crate::Manifest::of) writes them for the Vulkan Configurator.
    const SETTINGS: &'static [crate::Setting] = &[];
    /// Whether the chassis tracks the messengers and report callbacks the application creates
    /// after `vkCreateInstance` and the debug names it gives objects (intercepting those five
    /// commands, around the layer's own hooks of them), so that [`report`](crate::report())
    /// reaches them too and names the objects. Those chained at `vkCreateInstance` are known to
    /// every layer.
    const MESSAGES: bool = false;
    /// The purposes of this layer as a tool (`VK_TOOL_PURPOSE_TRACING_BIT`, ...). When set, with
    /// [`PROPERTIES`](Self::PROPERTIES), the chassis answers `vkGetPhysicalDeviceToolProperties`
    /// (`VK_EXT_tooling_info`): the tools below, then this layer.
    const TOOL_PURPOSES: VkToolPurposeFlags = VkToolPurposeFlags(0);

    /// Before the next level's `vkCreateInstance`: an error fails the call without calling down.
    /// `info` is what goes down, which the hook may change (add an extension, raise the API
    /// version, push a `pNext` structure); `create_instance` then sees it as sent.
    /// `p_instance` is the caller's (the loader's) output pointer, as the next level gets it.
    fn before_create_instance(
        info: &mut InstanceCreateInfo<'_>,
        link: &InstanceLink,
        p_instance: *mut VkInstance,
    ) -> Result<(), VkResult> {
        let _ = (info, link, p_instance);
        Ok(())
    }

    /// The layer's object for a new instance, after the next level created it; an error destroys
    /// the instance again and fails `vkCreateInstance` with it.
    fn create_instance(
        info: &VkInstanceCreateInfo,
        instance: VkInstance,
        next: &InstanceDispatchTable,
        link: &InstanceLink,
    ) -> Result<Self::Instance, VkResult>;

    /// The handle `vkCreateInstance` returns to the level above: `instance` (the next level's),
    /// or a dispatchable object of the layer's own (a wrapping layer; give it the loader's
    /// dispatch pointer with [`InstanceLink::set_loader_data`]). Called once the object is stored.
    fn returned_instance(object: &Self::Instance, instance: VkInstance) -> VkInstance {
        let _ = object;
        instance
    }

    /// The next level's handle for an instance the level above passed (a wrapping layer's
    /// unwrap), in every generated entry point and the chassis's; `None` refuses the call (it
    /// returns `VK_ERROR_UNKNOWN`, zero or nothing).
    #[inline(always)]
    fn unwrap_instance(object: &Self::Instance, handle: VkInstance) -> Option<VkInstance> {
        let _ = object;
        Some(handle)
    }

    /// As [`unwrap_instance`](Self::unwrap_instance), for physical devices.
    #[inline(always)]
    fn unwrap_physical_device(
        object: &Self::Instance,
        handle: VkPhysicalDevice,
    ) -> Option<VkPhysicalDevice> {
        let _ = object;
        Some(handle)
    }

    /// The handle `vkCreateDevice` returns to the level above: `device` (the next level's), or a
    /// dispatchable object of the layer's own (give it the loader's dispatch pointer with
    /// [`DeviceLink::set_loader_data`]). Called once the object is stored. Queues and command
    /// buffers go through [`wrap_queue`](Self::wrap_queue) and
    /// [`wrap_command_buffer`](Self::wrap_command_buffer) with [`WRAPS_HANDLES`](Self::WRAPS_HANDLES).
    fn returned_device(object: &Self::Device, device: VkDevice) -> VkDevice {
        let _ = object;
        device
    }

    /// The next level's handle for a device the level above passed, in every generated
    /// device-level entry point whose first parameter it is, in `vkGetDeviceProcAddr` and
    /// `vkDestroyDevice`; `None` refuses the call (reported once per command). Handles inside
    /// structures and arrays (`VkSubmitInfo::pCommandBuffers`) too with
    /// [`WRAPS_HANDLES`](Self::WRAPS_HANDLES).
    #[inline(always)]
    fn unwrap_device(object: &Self::Device, handle: VkDevice) -> Option<VkDevice> {
        let _ = object;
        Some(handle)
    }

    /// As [`unwrap_device`](Self::unwrap_device), for queues.
    #[inline(always)]
    fn unwrap_queue(object: &Self::Device, handle: VkQueue) -> Option<VkQueue> {
        let _ = object;
        Some(handle)
    }

    /// As [`unwrap_device`](Self::unwrap_device), for command buffers.
    #[inline(always)]
    fn unwrap_command_buffer(
        object: &Self::Device,
        handle: VkCommandBuffer,
    ) -> Option<VkCommandBuffer> {
        let _ = object;
        Some(handle)
    }

    /// Whether the layer wraps handles beyond the first parameter's: with it, every generated
    /// entry point walks its other parameters before `call_down_*` and unwraps every handle it
    /// reaches, of every type: by value, in arrays, in the structures they point to (nested,
    /// `pNext` chains included: `VkRenderingAttachmentInfo::imageView`, `VkWriteDescriptorSet`'s
    /// image, buffer and texel buffer view arrays, barriers, `VkMemoryDedicatedAllocateInfo`,
    /// `VkSubmitInfo::pCommandBuffers`, ...) and `u64` object handles. Non-dispatchable handles
    /// go through [`unwrap_handle`](Self::unwrap_handle) (device-level commands) or
    /// [`unwrap_instance_handle`](Self::unwrap_instance_handle) (instance-level commands),
    /// dispatchable ones through `unwrap_device`, `unwrap_queue`, `unwrap_command_buffer`
    /// (`unwrap_instance`, `unwrap_physical_device`), `u64` ones through
    /// [`unwrap_object`](Self::unwrap_object); null handles go down as they are. A structure or
    /// array is copied only when a handle in it changes, the copy living for the call; the
    /// application's memory is only read. `call_down_*` gets what goes down, the other hooks the
    /// caller's arguments. What the walk does not reach is listed in
    /// [`NOT_UNWRAPPED`](crate::NOT_UNWRAPPED). On the way up, every handle a command brings back
    /// goes through [`wrap_handle`](Self::wrap_handle), [`wrap_queue`](Self::wrap_queue), ...
    /// before `post_call_record_*`, and those destroyed or freed (a pool's and a swapchain's
    /// with them) through [`forget_handle`](Self::forget_handle) or
    /// [`forget_command_buffer`](Self::forget_command_buffer) after it
    /// ([`WRAP_EXCEPTIONS`](crate::WRAP_EXCEPTIONS), [`NOT_WRAPPED`](crate::NOT_WRAPPED)).
    /// Without it (the default) no entry point walks or wraps anything: the check is a constant,
    /// and a layer that wraps nothing pays nothing.
    const WRAPS_HANDLES: bool = false;

    /// The next level's handle for a non-dispatchable handle `handle` the level above passed to a
    /// device-level command, for every type (`H::OBJECT_TYPE` says which; a layer keys its map by
    /// it and `handle.raw()`), with [`WRAPS_HANDLES`](Self::WRAPS_HANDLES). `None` refuses the
    /// call: it is not passed down, returns the command's fallback value, and is reported once per
    /// command, naming the command and the handle. A handle the command may ignore (marked
    /// `noautovalidity`: `VkGraphicsPipelineCreateInfo::basePipelineHandle`) goes down as it is
    /// instead. The handles the layer hands out are made by [`wrap_handle`](Self::wrap_handle)
    /// and forgotten by [`forget_handle`](Self::forget_handle).
    #[inline(always)]
    fn unwrap_handle<H: crate::NonDispatchableHandle>(
        object: &Self::Device,
        handle: H,
    ) -> Option<H> {
        let _ = object;
        Some(handle)
    }

    /// As [`unwrap_handle`](Self::unwrap_handle), for the instance-level commands (surfaces,
    /// display objects, debug messengers: `vkGetPhysicalDeviceSurfaceSupportKHR`'s `surface`).
    #[inline(always)]
    fn unwrap_instance_handle<H: crate::NonDispatchableHandle>(
        object: &Self::Instance,
        handle: H,
    ) -> Option<H> {
        let _ = object;
        Some(handle)
    }

    /// The next level's object for a `u64` handle of type `object_type` the level above passed:
    /// `vkSetPrivateData` / `vkGetPrivateData`'s `objectHandle`, the `objectHandle` of
    /// `VkDebugUtilsObjectNameInfoEXT` and `VkDebugUtilsObjectTagInfoEXT` (a copy goes down when
    /// it changes), in the generated device-level entry points with
    /// [`WRAPS_HANDLES`](Self::WRAPS_HANDLES). The default applies the layer's unwrap of that type
    /// (`unwrap_device`, `unwrap_queue`, `unwrap_command_buffer`, and
    /// [`unwrap_handle`](Self::unwrap_handle) for every non-dispatchable type); `None` refuses the
    /// call. The chassis's own `vkSetDebugUtilsObjectNameEXT` (with
    /// [`MESSAGES`](Self::MESSAGES)) applies it too; without `MESSAGES`, a wrapping layer routes
    /// the command through itself (`intercept(set_debug_utils_object_name_ext)`), or the next
    /// level gets the layer's handle.
    fn unwrap_object(object: &Self::Device, object_type: VkObjectType, handle: u64) -> Option<u64> {
        crate::unwrap::unwrap_object_of::<Self>(object, object_type, handle)
    }

    /// The layer's handle for a non-dispatchable handle `handle` the next level brought back from
    /// a device-level command (created, allocated, or an object that exists already: swapchain
    /// images), with [`WRAPS_HANDLES`](Self::WRAPS_HANDLES): the generated entry point writes it
    /// over the next level's in the caller's output, before `post_call_record_*` (which sees it)
    /// and the caller. An object a query returns again (a swapchain's images) is wrapped once:
    /// the chassis hands out the same wrapper afterwards, found by the next level's handle, and
    /// calls this under its lock of those records (so it must not call the layer's own entry
    /// points). The default is the handle itself. [`Wrappers`](crate::Wrappers) is a map that
    /// makes and keeps wrappers.
    #[inline(always)]
    fn wrap_handle<H: crate::NonDispatchableHandle>(object: &Self::Device, handle: H) -> H {
        let _ = object;
        handle
    }

    /// As [`wrap_handle`](Self::wrap_handle), for the instance-level commands (surfaces, display
    /// objects, debug messengers).
    #[inline(always)]
    fn wrap_instance_handle<H: crate::NonDispatchableHandle>(
        object: &Self::Instance,
        handle: H,
    ) -> H {
        let _ = object;
        handle
    }

    /// The layer's `handle` (as the caller knows it) is gone, with
    /// [`WRAPS_HANDLES`](Self::WRAPS_HANDLES): destroyed or freed (`vkDestroy*`, `vkFree*`), or
    /// freed with what owned it (a command pool's command buffers, a descriptor pool's sets at its
    /// destruction or reset, a swapchain's images), called after the next level's call and
    /// `post_call_record_*`. Never called for a null handle.
    #[inline(always)]
    fn forget_handle<H: crate::NonDispatchableHandle>(object: &Self::Device, handle: H) {
        let _ = (object, handle);
    }

    /// As [`forget_handle`](Self::forget_handle), for the instance-level commands
    /// (`vkDestroySurfaceKHR`).
    #[inline(always)]
    fn forget_instance_handle<H: crate::NonDispatchableHandle>(object: &Self::Instance, handle: H) {
        let _ = (object, handle);
    }

    /// As [`wrap_handle`](Self::wrap_handle), for the physical devices
    /// `vkEnumeratePhysicalDevices` and `vkEnumeratePhysicalDeviceGroups` bring back: once per
    /// physical device. A wrapper's first word is the next level's first word (the loader's
    /// dispatch pointer): [`Wrappers::wrap_dispatchable`](crate::Wrappers::wrap_dispatchable).
    #[inline(always)]
    fn wrap_physical_device(object: &Self::Instance, handle: VkPhysicalDevice) -> VkPhysicalDevice {
        let _ = object;
        handle
    }

    /// As [`wrap_physical_device`](Self::wrap_physical_device), for the queues of
    /// `vkGetDeviceQueue` and `vkGetDeviceQueue2` (once per queue). The chassis has given the
    /// next level's queue the loader's dispatch pointer (`vkSetDeviceLoaderData`) before: the
    /// layers below find their state by it.
    #[inline(always)]
    fn wrap_queue(object: &Self::Device, handle: VkQueue) -> VkQueue {
        let _ = object;
        handle
    }

    /// As [`wrap_queue`](Self::wrap_queue), for the command buffers of
    /// `vkAllocateCommandBuffers`.
    #[inline(always)]
    fn wrap_command_buffer(object: &Self::Device, handle: VkCommandBuffer) -> VkCommandBuffer {
        let _ = object;
        handle
    }

    /// As [`forget_handle`](Self::forget_handle), for command buffers: freed by
    /// `vkFreeCommandBuffers` or with their pool.
    #[inline(always)]
    fn forget_command_buffer(object: &Self::Device, handle: VkCommandBuffer) {
        let _ = (object, handle);
    }

    /// Before the next level's `vkDestroyInstance`; `instance` as the level above passed it.
    fn before_destroy_instance(object: &Self::Instance, instance: VkInstance) {
        let _ = (object, instance);
    }

    /// Before the next level's `vkCreateDevice`, as [`before_create_instance`](Self::before_create_instance).
    /// The layer's own device extensions ([`PROPERTIES`](Self::PROPERTIES)) are already removed
    /// from `info`: the levels below do not know them. To pass one down, add it back here.
    /// `p_device` is the caller's (the loader's) output pointer, as the next level gets it: what
    /// it holds is the loader's (layer policy LLP_LAYER_22).
    fn before_create_device(
        instance: &Self::Instance,
        physical_device: VkPhysicalDevice,
        info: &mut DeviceCreateInfo<'_>,
        link: &DeviceLink,
        p_device: *mut VkDevice,
    ) -> Result<(), VkResult> {
        let _ = (instance, physical_device, info, link, p_device);
        Ok(())
    }

    /// The layer's object for a new device, as [`create_instance`](Self::create_instance);
    /// `physical_device` as the level above passed it.
    fn create_device(
        instance: &Self::Instance,
        physical_device: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        device: VkDevice,
        next: &DeviceDispatchTable,
        link: &DeviceLink,
    ) -> Result<Self::Device, VkResult>;

    /// Before the next level's `vkDestroyDevice`.
    fn before_destroy_device(object: &Self::Device, device: VkDevice) {
        let _ = (object, device);
    }

    /// The layer's say on its `vkGetInstanceProcAddr(name)` (after the chassis's own commands):
    /// by default the hooked commands' entry points, the next level's pointer for the rest.
    fn instance_proc_addr(name: &CStr) -> ProcAddr {
        let _ = name;
        ProcAddr::Chassis
    }

    /// The same for `vkGetDeviceProcAddr(name)`.
    fn device_proc_addr(name: &CStr) -> ProcAddr {
        let _ = name;
        ProcAddr::Chassis
    }

    /// `vk_layerGetPhysicalDeviceProcAddr(name)` (physical-device commands the loader does not
    /// know): `next` is the next level's answer, which the default returns.
    fn physical_device_proc_addr(
        instance: &InstanceState<Self>,
        name: &CStr,
        next: PFN_vkVoidFunction,
    ) -> PFN_vkVoidFunction {
        let _ = (instance, name);
        next
    }

    /// An implicit layer's `vkEnumerateInstanceExtensionProperties` interceptor (exported by
    /// `declare_layer!` under the name its manifest's `pre_instance_functions` gives).
    ///
    /// # Safety
    /// The arguments are the application's, as for `vkEnumerateInstanceExtensionProperties`.
    unsafe fn enumerate_instance_extension_properties(
        next: NextInstanceExtensions<'_>,
        layer_name: *const c_char,
        p_count: *mut u32,
        p_properties: *mut VkExtensionProperties,
    ) -> VkResult {
        // SAFETY: per the caller's contract.
        unsafe { next.call(layer_name, p_count, p_properties) }
    }

    /// An implicit layer's `vkEnumerateInstanceLayerProperties` interceptor.
    ///
    /// # Safety
    /// As for `vkEnumerateInstanceLayerProperties`.
    unsafe fn enumerate_instance_layer_properties(
        next: NextInstanceLayers<'_>,
        p_count: *mut u32,
        p_properties: *mut VkLayerProperties,
    ) -> VkResult {
        // SAFETY: per the caller's contract.
        unsafe { next.call(p_count, p_properties) }
    }

    /// An implicit layer's `vkEnumerateInstanceVersion` interceptor.
    ///
    /// # Safety
    /// As for `vkEnumerateInstanceVersion`.
    unsafe fn enumerate_instance_version(
        next: NextInstanceVersion<'_>,
        p_api_version: *mut u32,
    ) -> VkResult {
        // SAFETY: per the caller's contract.
        unsafe { next.call(p_api_version) }
    }
}

/// A layer's answer to `vkGetInstanceProcAddr` / `vkGetDeviceProcAddr` for one name.
#[derive(Clone, Copy, Debug)]
pub enum ProcAddr {
    /// What the chassis answers: the hooked command's entry point, else the next level's pointer.
    Chassis,
    /// The next level's pointer, even for a hooked command (a hook turned off at run time).
    Next,
    /// This function (a command of the layer's own); `Own(None)` hides the command.
    Own(PFN_vkVoidFunction),
}

/// A layer's own properties (see [`Layer::PROPERTIES`]).
#[derive(Clone, Copy, Debug)]
pub struct LayerProperties {
    /// `VK_LAYER_<VENDOR>_<name>`.
    pub name: &'static str,
    /// The Vulkan version the layer was written against (`VK_MAKE_API_VERSION`).
    pub spec_version: u32,
    /// The layer's own version.
    pub implementation_version: u32,
    /// What the layer does, for people choosing layers.
    pub description: &'static str,
    /// The instance extensions the layer implements: (name, spec version).
    pub instance_extensions: &'static [(&'static str, u32)],
    /// The device extensions the layer implements: (name, spec version, entry points).
    pub device_extensions: &'static [(&'static str, u32, &'static [&'static str])],
}

impl LayerProperties {
    /// As `VkLayerProperties`.
    pub fn to_vk(&self) -> VkLayerProperties {
        let mut p = VkLayerProperties {
            specVersion: self.spec_version,
            implementationVersion: self.implementation_version,
            ..Default::default()
        };
        copy_str(&mut p.layerName, self.name);
        copy_str(&mut p.description, self.description);
        p
    }
}

/// An extension as `VkExtensionProperties`.
pub fn extension_properties(name: &str, spec_version: u32) -> VkExtensionProperties {
    let mut p = VkExtensionProperties {
        specVersion: spec_version,
        ..Default::default()
    };
    copy_str(&mut p.extensionName, name);
    p
}

/// `text` into a fixed-size C string, cut to fit with its NUL.
fn copy_str(out: &mut [c_char], text: &str) {
    let n = text.len().min(out.len() - 1);
    for (d, s) in out.iter_mut().zip(&text.as_bytes()[..n]) {
        *d = *s as c_char;
    }
    out[n] = 0;
}

/// Answers a Vulkan two-call enumeration from `items`: the count when `p_items` is null, else as
/// many as fit, `VK_INCOMPLETE` when not all did.
///
/// # Safety
/// `p_count` is valid; `p_items` is null or has room for `*p_count` items.
pub unsafe fn fill_array<T: Copy>(items: &[T], p_count: *mut u32, p_items: *mut T) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe {
        let Some(count) = p_count.as_mut() else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if p_items.is_null() {
            *count = items.len() as u32;
            return VkResult::SUCCESS;
        }
        let n = (*count as usize).min(items.len());
        std::ptr::copy_nonoverlapping(items.as_ptr(), p_items, n);
        *count = n as u32;
        if n < items.len() {
            VkResult::INCOMPLETE
        } else {
            VkResult::SUCCESS
        }
    }
}

/// The rest of the `vkEnumerateInstanceExtensionProperties` pre-instance chain.
#[derive(Clone, Copy)]
pub struct NextInstanceExtensions<'a>(pub(crate) &'a VkEnumerateInstanceExtensionPropertiesChain);
/// The rest of the `vkEnumerateInstanceLayerProperties` pre-instance chain.
#[derive(Clone, Copy)]
pub struct NextInstanceLayers<'a>(pub(crate) &'a VkEnumerateInstanceLayerPropertiesChain);
/// The rest of the `vkEnumerateInstanceVersion` pre-instance chain.
#[derive(Clone, Copy)]
pub struct NextInstanceVersion<'a>(pub(crate) &'a VkEnumerateInstanceVersionChain);

impl NextInstanceExtensions<'_> {
    /// Calls the next level.
    ///
    /// # Safety
    /// As `vkEnumerateInstanceExtensionProperties`.
    pub unsafe fn call(
        &self,
        layer_name: *const c_char,
        p_count: *mut u32,
        p_properties: *mut VkExtensionProperties,
    ) -> VkResult {
        match self.0.pfnNextLayer {
            // SAFETY: the loader's chain, called as `vk_layer.h` says.
            Some(next) => unsafe { next(self.0.pNextLink, layer_name, p_count, p_properties) },
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    }
}

impl NextInstanceLayers<'_> {
    /// Calls the next level.
    ///
    /// # Safety
    /// As `vkEnumerateInstanceLayerProperties`.
    pub unsafe fn call(&self, p_count: *mut u32, p_properties: *mut VkLayerProperties) -> VkResult {
        match self.0.pfnNextLayer {
            // SAFETY: the loader's chain, called as `vk_layer.h` says.
            Some(next) => unsafe { next(self.0.pNextLink, p_count, p_properties) },
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    }
}

impl NextInstanceVersion<'_> {
    /// Calls the next level.
    ///
    /// # Safety
    /// As `vkEnumerateInstanceVersion`.
    pub unsafe fn call(&self, p_api_version: *mut u32) -> VkResult {
        match self.0.pfnNextLayer {
            // SAFETY: the loader's chain, called as `vk_layer.h` says.
            Some(next) => unsafe { next(self.0.pNextLink, p_api_version) },
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    }
}

/// A layer with its chassis, as [`declare_layer!`](crate::declare_layer) declares it.
///
/// # Safety
/// `chassis` returns the same static every time.
pub unsafe trait Registered: Layer {
    /// The layer's state.
    fn chassis() -> &'static Chassis<Self>;
    /// The entry points of the instance object's hooked commands ([`InstanceHooked::COMMANDS`]),
    /// in that order ([`hook_entries`](crate::hook_entries)).
    fn instance_entries() -> &'static [PFN_vkVoidFunction];
    /// The entry points of the device object's hooked commands ([`DeviceHooked::COMMANDS`]).
    fn device_entries() -> &'static [PFN_vkVoidFunction];
}

/// What the chassis keeps per instance.
pub struct InstanceState<L: Layer> {
    /// The next level's instance-level functions.
    pub next: InstanceDispatchTable,
    /// The next level's handle of the instance.
    pub handle: VkInstance,
    /// What the loader gave at `vkCreateInstance`.
    pub link: InstanceLink,
    /// The application's messengers and report callbacks ([`report`](crate::report())).
    pub messengers: Messengers,
    /// The layer's object.
    pub hooks: L::Instance,
    /// The wrapped handles other objects of the instance own (`crate::wrap`).
    pub(crate) owned: crate::wrap::Owned<L::Instance>,
}

impl<L: Layer> InstanceState<L> {
    /// The application's messengers of the instance.
    pub fn messengers(&self) -> &Messengers {
        &self.messengers
    }

    /// The next level's `vkGetInstanceProcAddr(instance, name)`.
    pub fn next_proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: the next level's own function, with its own live instance.
        unsafe { (self.link.gipa)(self.handle, name.as_ptr()) }
    }

    /// The next level's `vk_layerGetPhysicalDeviceProcAddr(instance, name)`, when it has one.
    pub fn next_physical_device_proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: as `next_proc_addr`.
        self.link
            .gpdpa
            .and_then(|gpdpa| unsafe { gpdpa(self.handle, name.as_ptr()) })
    }
}

/// What the chassis keeps per device.
pub struct DeviceState<L: Layer> {
    /// The next level's device-level functions.
    pub next: DeviceDispatchTable,
    /// What the loader gave at `vkCreateDevice`.
    pub link: DeviceLink,
    /// The state of the device's instance.
    pub(crate) instance: InstanceOf<L>,
    /// The layer's object.
    pub hooks: L::Device,
    /// The wrapped handles other objects of the device own (`crate::wrap`).
    pub(crate) owned: crate::wrap::Owned<L::Device>,
    /// The layouts of its descriptor update templates' data (`crate::templates`), recorded when
    /// the layer wraps handles.
    pub(crate) templates: crate::templates::Templates,
}

/// The state of a device's instance, which outlives the device's (the API destroys devices before
/// their instance): its messengers, and its layer object, which unwraps the instance and physical
/// devices a device-level command names by a `u64`.
pub(crate) struct InstanceOf<L: Layer>(*const InstanceState<L>);

// SAFETY: `InstanceState` is `Sync` (the bound), so a pointer to it may move to another thread; it
// is only read while the instance lives.
unsafe impl<L: Layer> Send for InstanceOf<L> where InstanceState<L>: Sync {}
// SAFETY: as for `Send`: sharing the pointer shares only `&InstanceState`, which is `Sync`.
unsafe impl<L: Layer> Sync for InstanceOf<L> where InstanceState<L>: Sync {}

impl<L: Layer> InstanceOf<L> {
    pub(crate) fn new(instance: &InstanceState<L>) -> Self {
        InstanceOf(instance)
    }
}

impl<L: Layer> DeviceState<L> {
    /// The application's messengers of the device's instance.
    pub fn messengers(&self) -> &Messengers {
        &self.instance().messengers
    }

    /// The state of the device's instance.
    pub(crate) fn instance(&self) -> &InstanceState<L> {
        // SAFETY: the instance's state is boxed, and outlives its devices (see `InstanceOf`).
        unsafe { &*self.instance.0 }
    }

    /// The next level's `vkGetDeviceProcAddr(device, name)`.
    ///
    /// # Safety
    /// `device` is this state's live device.
    pub unsafe fn next_proc_addr(&self, device: VkDevice, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: the next level's own function, per the caller's contract.
        unsafe { (self.link.gdpa)(device, name.as_ptr()) }
    }
}

/// A layer's state: instances and devices by dispatch pointer.
pub struct Chassis<L: Layer> {
    pub(crate) instances: DispatchMap<InstanceState<L>>,
    pub(crate) devices: DispatchMap<DeviceState<L>>,
    /// The commands that reported a handle the layer does not know.
    pub(crate) reported: crate::unknown::Reported,
    /// The commands that reported one passed down as it was (in a member they may ignore).
    pub(crate) passed_unknown_reported: crate::unknown::Reported,
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
            reported: crate::unknown::Reported::new(),
            passed_unknown_reported: crate::unknown::Reported::new(),
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
pub(crate) unsafe fn dispatch_key(handle: *mut std::ffi::c_void) -> Option<usize> {
    // SAFETY: per the caller's contract.
    (!handle.is_null()).then(|| unsafe { *(handle as *const usize) })
}
