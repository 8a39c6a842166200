//! A device's layer chain as calls: the device created through the layers' link structures
//! (`VkLayerDeviceCreateInfo`, built here from the opened layers and the loader's functions at the
//! end of the chain), its top's `vkGetDeviceProcAddr` answering for it afterwards. The one place
//! that calls a layer's `vkCreateDevice`; what the chain decides is `chain::device_layers`'.

use std::ffi::c_void;
use std::marker::PhantomData;

use vk_generated::layer_abi::*;
use vk_generated::types::*;

use crate::given::allocator::Allocator;
use crate::given::device_create_info::DeviceCreateInfo;
use crate::load::calls::DeviceCalls;
use crate::load::layer::{Gdpa, Gipa, LoadedLayer};

/// The loader's functions at the end of a device chain, and the callback every layer is handed
/// with the link structures.
#[derive(Clone, Copy)]
pub struct DeviceChainEnd {
    pub gdpa: Gdpa,
    pub create_device: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult,
    pub set_loader_data: PFN_vkSetDeviceLoaderData,
}

/// Where a device chain starts: its layers that have a `vkGetDeviceProcAddr` (top first), the
/// instance chain's `vkGetInstanceProcAddr` at its end, and the instance and physical device as
/// the top layer knows them, live for `'a`.
pub struct DeviceChainStart<'a> {
    layers: Vec<&'a LoadedLayer>,
    terminator_gipa: Gipa,
    instance: VkInstance,
    physical_device: VkPhysicalDevice,
}

impl<'a> DeviceChainStart<'a> {
    /// The chain through `layers` (those without `vkGetDeviceProcAddr` are left out).
    ///
    /// # Safety
    /// `instance` must be the instance the first of `layers` knows (the instance chain's handle,
    /// which every layer of it knows) and `physical_device` a physical device that layer returned
    /// (or, without such a layer, a terminator-level one of this loader), both live for `'a`;
    /// `terminator_gipa` the `vkGetInstanceProcAddr` at the end of that instance chain; the
    /// layers' libraries open for `'a` (`LoadedLayer`).
    pub unsafe fn new(layers: impl IntoIterator<Item = &'a LoadedLayer>, terminator_gipa: Gipa, instance: VkInstance, physical_device: VkPhysicalDevice) -> DeviceChainStart<'a> {
        let layers = layers.into_iter().filter(|l| l.gdpa.is_some()).collect();
        DeviceChainStart { layers, terminator_gipa, instance, physical_device }
    }

    /// The top layer's `vkGetDeviceProcAddr`; `None` without layers (the chain is the loader's end).
    pub fn top_gdpa(&self) -> Option<Gdpa> {
        self.layers.first().and_then(|l| l.gdpa)
    }
}

/// The object the loader hands the chain at `*pDevice` (its terminator reads it), live and
/// writable for `'a`.
#[derive(Clone, Copy)]
pub struct HandedDownDevice<'a> {
    handle: VkDevice,
    lives: PhantomData<&'a mut ()>,
}

impl<'a> HandedDownDevice<'a> {
    /// # Safety
    /// `handle` must be the loader's object for a device being created, live and writable for
    /// `'a` (a broken layer writes there; the terminator sees it).
    pub unsafe fn new(handle: VkDevice) -> HandedDownDevice<'a> {
        HandedDownDevice { handle, lives: PhantomData }
    }

    pub fn handle(self) -> VkDevice {
        self.handle
    }
}

/// What the top of a device chain created.
pub enum CreatedDevice {
    /// A layer's device (the driver's or the layer's wrapper), with the top layer's
    /// `vkGetDeviceProcAddr`.
    Layered(DeviceCalls),
    /// Without layers: the handle the chain's end wrote, the driver's device.
    AtTheEnd(VkDevice),
}

/// Creates a device through `start`'s layers ending in `end`: the application's create info
/// copied with the link structures chained before its own (its memory is not written), as the
/// layer interface describes them (link info, the loader-data callback); `device` is what the
/// chain gets at `*pDevice`. Fails with the chain's error, or `VK_ERROR_INITIALIZATION_FAILED`
/// when the top layer gives no `vkCreateDevice` or succeeds without calling down (leaving the
/// loader's object or NULL).
pub fn create_device(start: &DeviceChainStart<'_>, end: DeviceChainEnd, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>, device: HandedDownDevice<'_>) -> Result<CreatedDevice, VkResult> {
    let mut links: Vec<VkLayerDeviceLink> = start
        .layers
        .iter()
        .skip(1)
        .map(|l| VkLayerDeviceLink { pNext: std::ptr::null_mut(), pfnNextGetInstanceProcAddr: Some(l.gipa), pfnNextGetDeviceProcAddr: l.gdpa })
        .collect();
    links.push(VkLayerDeviceLink { pNext: std::ptr::null_mut(), pfnNextGetInstanceProcAddr: Some(start.terminator_gipa), pfnNextGetDeviceProcAddr: Some(end.gdpa) });
    for i in 1..links.len() {
        let next: *mut VkLayerDeviceLink = &mut links[i];
        links[i - 1].pNext = next;
    }
    let data_callback = VkLayerDeviceCreateInfo {
        pNext: info.raw().pNext,
        function: VkLayerFunction::LOADER_DATA_CALLBACK,
        u: VkLayerDeviceCreateInfoUnion { pfnSetDeviceLoaderData: end.set_loader_data },
        ..Default::default()
    };
    let link_info = VkLayerDeviceCreateInfo {
        pNext: &data_callback as *const _ as *const c_void,
        function: VkLayerFunction::LAYER_LINK_INFO,
        u: VkLayerDeviceCreateInfoUnion { pLayerInfo: links.as_mut_ptr() },
        ..Default::default()
    };
    // The application's struct is copied, never written: its pNext chain stays as it was.
    let mut chained = *info.raw();
    chained.pNext = &link_info as *const _ as *const c_void;
    let handed_down = device.handle();
    let mut handle = handed_down;
    let Some(top) = start.layers.first() else {
        // SAFETY: the loader's end of the chain with a terminator-level physical device (`start`'s
        // contract), a valid create info (`DeviceCreateInfo`) and NULL or valid callbacks
        // (`Allocator`); a place holding the loader's live object (`HandedDownDevice`).
        let result = unsafe { (end.create_device)(start.physical_device, info.raw(), allocator.as_ptr(), &mut handle) };
        return match result {
            VkResult::SUCCESS if !handle.is_null() && handle != handed_down => Ok(CreatedDevice::AtTheEnd(handle)),
            VkResult::SUCCESS => Err(VkResult::ERROR_INITIALIZATION_FAILED),
            error => Err(error),
        };
    };
    // SAFETY: the top layer's vkGetInstanceProcAddr (its library held open, `start`'s contract)
    // with the instance it knows and a NUL-terminated name; what it answers for this name has
    // vkCreateDevice's signature.
    let create = unsafe { std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateDevice>((top.gipa)(start.instance, c"vkCreateDevice".as_ptr())) };
    let (Some(create), Some(gdpa)) = (create, top.gdpa) else { return Err(VkResult::ERROR_INITIALIZATION_FAILED) };
    // SAFETY: the top layer's vkCreateDevice with a physical device it returned (`start`'s
    // contract); a copy of the application's valid create info (`DeviceCreateInfo`) whose chain
    // starts with this function's link structures, live to its end, then goes on as the
    // application's; NULL or valid callbacks (`Allocator`); a place holding the loader's live
    // object (`HandedDownDevice`), as the layer interface asks.
    let result = unsafe { create(start.physical_device, &chained, allocator.as_ptr(), &mut handle) };
    match result {
        // A layer that succeeded without calling down leaves the loader's object there: no device.
        VkResult::SUCCESS if !handle.is_null() && handle != handed_down => {
            // SAFETY: the device the top layer just created, which its vkGetDeviceProcAddr
            // answers for; a dispatchable object whose first word is the loader's (the layer
            // interface: a layer's wrapper too).
            Ok(CreatedDevice::Layered(unsafe { DeviceCalls::new(handle, gdpa) }))
        }
        VkResult::SUCCESS => Err(VkResult::ERROR_INITIALIZATION_FAILED),
        error => Err(error),
    }
}
