//! An instance's layer chain as calls: the instance created through the layers' link structures
//! (`VkLayerInstanceCreateInfo`, built here from the opened layers and the loader's functions at
//! the end of the chain), then the chain's own calls (the handle its top layer gave, with the
//! table that layer's `vkGetInstanceProcAddr` filled). The one place that calls a layer's
//! instance-level functions; what the chain decides is `chain::instance_layers`'.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;

use vk_generated::layer_abi::*;
use vk_generated::types::*;
use vk_generated::{DispatchTable, InstanceDispatchTable};

use crate::ffi::{ChainedOutArray, OutArray};
use crate::given::allocator::Allocator;
use crate::given::instance_create_info::InstanceCreateInfo;
use crate::load::layer::{Gipa, LoadedLayer};

/// The loader's functions at the end of an instance chain, and the callbacks every layer is
/// handed with the link structures.
#[derive(Clone, Copy)]
pub struct InstanceChainEnd {
    pub gipa: Gipa,
    pub gpdpa: Gipa,
    pub set_loader_data: PFN_vkSetInstanceLoaderData,
    pub create_device: PFN_vkLayerCreateDevice,
    pub destroy_device: PFN_vkLayerDestroyDevice,
}

/// The loader's instance as a chain that creates it is handed it: a dispatchable object whose
/// first word is its final table, live for `'a`.
#[derive(Clone, Copy)]
pub struct HandedDownInstance<'a> {
    handle: VkInstance,
    lives: PhantomData<&'a ()>,
}

impl<'a> HandedDownInstance<'a> {
    /// # Safety
    /// `handle` must be the loader's instance, live for `'a`, its first word the table its
    /// handles dispatch through from now on.
    pub unsafe fn new(handle: VkInstance) -> HandedDownInstance<'a> {
        HandedDownInstance { handle, lives: PhantomData }
    }

    pub fn handle(self) -> VkInstance {
        self.handle
    }
}

/// What creating an instance through its chain gave: the handle the top layer returned (the
/// loader's own unless that layer wrapped it), and the chain's table, filled from the top layer's
/// `vkGetInstanceProcAddr` for that handle.
pub struct CreatedChain {
    pub handle: VkInstance,
    pub table: InstanceDispatchTable,
}

/// Why an instance chain created nothing.
pub enum ChainNotCreated {
    /// The top layer's `vkGetInstanceProcAddr` gives no `vkCreateInstance`.
    NoCreateInstance,
    /// The chain's `vkCreateInstance` returned an error.
    Failed(VkResult),
}

/// Creates `instance` through `layers` (top first) ending in `end`: the application's create info
/// copied with the link structures chained before its own (its memory is not written), as the
/// layer interface describes them (link info, the loader-data and layer-create-device callbacks,
/// the loader's features).
pub fn create_instance(
    layers: &[LoadedLayer],
    end: InstanceChainEnd,
    info: InstanceCreateInfo<'_>,
    allocator: Allocator<'_>,
    instance: HandedDownInstance<'_>,
) -> Result<CreatedChain, ChainNotCreated> {
    let Some(top) = layers.first() else { return Err(ChainNotCreated::NoCreateInstance) };
    let mut links: Vec<VkLayerInstanceLink> = layers
        .iter()
        .skip(1)
        .map(|next| VkLayerInstanceLink {
            pNext: std::ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(next.gipa),
            pfnNextGetPhysicalDeviceProcAddr: next.gpdpa,
        })
        .collect();
    links.push(VkLayerInstanceLink { pNext: std::ptr::null_mut(), pfnNextGetInstanceProcAddr: Some(end.gipa), pfnNextGetPhysicalDeviceProcAddr: Some(end.gpdpa) });
    for i in 1..links.len() {
        let next: *mut VkLayerInstanceLink = &mut links[i];
        links[i - 1].pNext = next;
    }
    let mut features = VkLayerInstanceCreateInfo {
        pNext: info.raw().pNext,
        function: VkLayerFunction::LOADER_FEATURES,
        u: VkLayerInstanceCreateInfoUnion { loaderFeatures: VK_LOADER_FEATURE_PHYSICAL_DEVICE_SORTING },
        ..Default::default()
    };
    let mut create_device_callback = VkLayerInstanceCreateInfo {
        pNext: &mut features as *mut _ as *const c_void,
        function: VkLayerFunction::LOADER_LAYER_CREATE_DEVICE_CALLBACK,
        u: VkLayerInstanceCreateInfoUnion {
            layerDevice: VkLayerInstanceCreateInfoLayerDevice { pfnLayerCreateDevice: end.create_device, pfnLayerDestroyDevice: end.destroy_device },
        },
        ..Default::default()
    };
    let mut data_callback = VkLayerInstanceCreateInfo {
        pNext: &mut create_device_callback as *mut _ as *const c_void,
        function: VkLayerFunction::LOADER_DATA_CALLBACK,
        u: VkLayerInstanceCreateInfoUnion { pfnSetInstanceLoaderData: end.set_loader_data },
        ..Default::default()
    };
    let link_info = VkLayerInstanceCreateInfo {
        pNext: &mut data_callback as *mut _ as *const c_void,
        function: VkLayerFunction::LAYER_LINK_INFO,
        u: VkLayerInstanceCreateInfoUnion { pLayerInfo: links.as_mut_ptr() },
        ..Default::default()
    };
    // The application's struct is copied, never written: its pNext chain stays as it was.
    let mut chained = *info.raw();
    chained.pNext = &link_info as *const _ as *const c_void;

    // SAFETY: the top layer's vkGetInstanceProcAddr (its library held open by `top`) with no
    // instance and a NUL-terminated name; what it answers for this name has vkCreateInstance's
    // signature.
    let create = unsafe { std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateInstance>((top.gipa)(VkInstance::NULL, c"vkCreateInstance".as_ptr())) };
    let Some(create) = create else { return Err(ChainNotCreated::NoCreateInstance) };
    let mut handle = instance.handle();
    // SAFETY: the top layer's vkCreateInstance; a copy of the application's valid create info
    // (`InstanceCreateInfo`) whose chain starts with this function's link structures, live to its
    // end, then goes on as the application's; NULL or valid callbacks (`Allocator`); a place
    // holding the loader's live instance (`HandedDownInstance`), as the layer interface asks.
    let result = unsafe { create(&chained, allocator.as_ptr(), &mut handle) };
    if result != VkResult::SUCCESS {
        return Err(ChainNotCreated::Failed(result));
    }
    // SAFETY: the top layer's vkGetInstanceProcAddr with the instance it just created and a
    // NUL-terminated name.
    let table = InstanceDispatchTable::load(|name| unsafe { (top.gipa)(handle, name.as_ptr()) });
    Ok(CreatedChain { handle, table })
}

/// An instance as the top of its layer chain knows it, with the chain's table, live for `'a`.
#[derive(Clone, Copy)]
pub struct ChainCalls<'a> {
    handle: VkInstance,
    table: &'a InstanceDispatchTable,
    top_gipa: Gipa,
    first_gpdpa: PFN_GetPhysicalDeviceProcAddr,
}

impl<'a> ChainCalls<'a> {
    /// # Safety
    /// `handle` must be the instance the top layer of a chain (whose `vkGetInstanceProcAddr` is
    /// `top_gipa`) returned, or, while the chain creates it, the loader's own it was handed;
    /// `table` empty or filled from `top_gipa` for `handle`; `first_gpdpa` NULL or the
    /// `vk_layerGetPhysicalDeviceProcAddr` of the first layer of the chain that has one; the
    /// instance live and the layers' libraries open for `'a`.
    pub unsafe fn new(handle: VkInstance, table: &'a InstanceDispatchTable, top_gipa: Gipa, first_gpdpa: PFN_GetPhysicalDeviceProcAddr) -> ChainCalls<'a> {
        ChainCalls { handle, table, top_gipa, first_gpdpa }
    }

    /// The top layer's `vkGetInstanceProcAddr` for `name`.
    pub fn proc_addr(self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: the top layer's function with the handle it knows the instance by (`new`'s
        // contract) and a NUL-terminated name.
        unsafe { (self.top_gipa)(self.handle, name.as_ptr()) }
    }

    /// The first `vk_layerGetPhysicalDeviceProcAddr` of the chain for `name` (NULL when no layer
    /// has one); it calls down the chain itself.
    pub fn physical_device_proc_addr(self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: a layer's vk_layerGetPhysicalDeviceProcAddr with the chain's handle, which every
        // layer knows (`new`'s contract), and a NUL-terminated name.
        self.first_gpdpa.and_then(|gpdpa| unsafe { gpdpa(self.handle, name.as_ptr()) })
    }

    /// `vkEnumeratePhysicalDevices` down the chain with the caller's count and array as they are
    /// (`VK_ERROR_INITIALIZATION_FAILED` when the chain lacks it): what it returned and the handles
    /// it wrote.
    pub fn enumerate_physical_devices<'b>(self, out: OutArray<'b, VkPhysicalDevice>) -> (VkResult, &'b mut [VkPhysicalDevice]) {
        let Some(enumerate) = self.table.vkEnumeratePhysicalDevices else { return (VkResult::ERROR_INITIALIZATION_FAILED, &mut []) };
        // SAFETY: the chain's function with its handle (`new`'s contract), given a valid count and
        // NULL or an array of that many handles (`OutArray`); a Vulkan command keeps the
        // two-call idiom.
        unsafe { out.pass_down(|count, devices| enumerate(self.handle, count, devices)) }
    }

    /// `vkEnumeratePhysicalDeviceGroups` down the chain with the caller's count and structures as
    /// they are (`VK_ERROR_INITIALIZATION_FAILED` when the chain lacks it): what it returned and
    /// the structures it filled.
    pub fn enumerate_physical_device_groups<'b>(
        self,
        out: ChainedOutArray<'b, VkPhysicalDeviceGroupProperties>,
    ) -> (VkResult, &'b mut [VkPhysicalDeviceGroupProperties]) {
        let Some(enumerate) = self.table.vkEnumeratePhysicalDeviceGroups else { return (VkResult::ERROR_INITIALIZATION_FAILED, &mut []) };
        // SAFETY: the chain's function with its handle (`new`'s contract), given a valid count and
        // NULL or that many structures with their headers set (`ChainedOutArray`); a Vulkan
        // command keeps the two-call idiom and the headers of output structures.
        unsafe { out.pass_down(|count, groups| enumerate(self.handle, count, groups)) }
    }

    /// `vkDestroyInstance` down the chain (nothing when the chain lacks it).
    ///
    /// # Safety
    /// `allocator` compatible with the callbacks the instance was created with; nothing calls
    /// the chain with this instance afterwards.
    pub unsafe fn destroy(self, allocator: Allocator<'_>) {
        if let Some(destroy) = self.table.vkDestroyInstance {
            // SAFETY: the chain's function with its handle (`new`'s contract); NULL or valid
            // callbacks (`Allocator`), the caller's promise for them and for what comes after.
            unsafe { destroy(self.handle, allocator.as_ptr()) };
        }
    }
}
