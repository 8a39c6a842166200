//! The device chain through enabled layers: `vkCreateDevice` with `VkLayerDeviceCreateInfo` (link
//! info, `vkSetDeviceLoaderData`) through every layer that has a `vkGetDeviceProcAddr`, ending in
//! the driver through [`terminator_CreateDevice`] (which unwraps the physical device); the device
//! table is filled from the top layer's `vkGetDeviceProcAddr`. Also `pfnLayerCreateDevice`: a
//! layer's own device through the layers below it.

use std::ffi::{c_char, c_void, CStr};

use vk_generated::layer_abi::*;
use vk_generated::types::*;

use crate::given::allocator::Allocator;
use crate::given::device_create_info::DeviceCreateInfo;
use crate::object::handed_out::HandedOutPhysicalDevice;
use crate::object::device::NewDeviceData;
use crate::chain::device;
use crate::debug::log::{self, Level};
use crate::ffi::skip_loader_structs;
use crate::ffi;
use crate::load::calls::DeviceCalls;
use crate::load::layer::{Gdpa, Gipa, LoadedLayer};
use crate::object::device::{DeviceData, DeviceInCreation, HandedDown};
use crate::object::instance::{Instance, PhysicalDevice};

/// `vkSetDeviceLoaderData`: a layer's new device-level dispatchable object gets the device's
/// dispatch pointer.
///
/// # Safety
/// The layer interface's contract: `device` NULL or a live device created through this loader
/// (its first word is the loader's dispatch pointer); `object` NULL or a dispatchable object the
/// layer made, whose first word is the loader's to set. Checked anyway: NULL for either fails
/// with `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn set_device_loader_data(device: VkDevice, object: *mut c_void) -> VkResult {
    ffi::guard("vkSetDeviceLoaderData", VkResult::ERROR_INITIALIZATION_FAILED, || {
        if device.is_null() || object.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: the contract: both are dispatchable objects, readable and writable for their
        // first word, which is the loader's.
        unsafe { *(object as *mut *const c_void) = *(device.0 as *const *const c_void) };
        VkResult::SUCCESS
    })
}

/// `vkCreateDevice` with layers: `VkLayerDeviceCreateInfo` links through every layer that has a
/// `vkGetDeviceProcAddr`, ending in [`terminator_CreateDevice`]. `pd` is the application's
/// physical device, of an instance with layers (`VK_ERROR_INITIALIZATION_FAILED` otherwise);
/// `info` the create info as the top layer must see it (its device group naming the handles that
/// layer returned).
pub fn create_device(pd: HandedOutPhysicalDevice, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<VkDevice, VkResult> {
    let Some((instance, chain)) = pd.instance().and_then(|i| Some((i, i.layers.as_deref()?))) else {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    };
    let layers: Vec<&LoadedLayer> = chain.layers.iter().map(|l| &l.loaded).collect();
    if log::enabled(Level::Layer) {
        let names: Vec<&str> = chain.layers.iter().filter(|l| l.loaded.gdpa.is_some()).map(|l| l.manifest.name.as_str()).collect();
        log!(Level::Layer, "device layer chain, application first: {} -> driver", names.join(" -> "));
    }
    let top_handle = pd.chain_calls().handle();
    // SAFETY: the chain's terminator, the instance handle its top layer knows and the handle that
    // layer returned for the device (both of the device's own instance); a valid create info as
    // that layer must see it and valid callbacks (`DeviceCreateInfo`, `Allocator`).
    let (device, mut data) = unsafe { create_device_chain(&layers, chain.terminator_gipa, instance.chain_handle, top_handle, info.raw(), allocator.as_ptr()) }?;
    crate::chain::device::settle_commands_of_instance_extensions(&mut data.get_mut().table, Some(instance));
    // A layer that wrapped the device gets the loader's dispatch pointer in its wrapper too.
    data.install(device);
    Ok(device.handle())
}

/// Creates a device through `layers` (those without `vkGetDeviceProcAddr` are left out), top
/// first, given the instance chain's terminator `vkGetInstanceProcAddr` and the physical device
/// handle the top one expects (the terminator-level one when there is no layer). Returns the
/// device and its data, whose table is filled from the top.
///
/// # Safety
/// `instance_handle` must be the instance the first of `layers` knows (the instance chain's
/// handle) and `physical_device` a physical device it returned (or, without layers, a
/// terminator-level one of this loader); `info` valid as for [`create_device`] (its device group
/// naming handles the first layer knows); `allocator` NULL or valid callbacks.
unsafe fn create_device_chain(
    layers: &[&LoadedLayer],
    terminator_gipa: Gipa,
    instance_handle: VkInstance,
    physical_device: VkPhysicalDevice,
    info: &VkDeviceCreateInfo,
    allocator: *const VkAllocationCallbacks,
) -> Result<(DeviceCalls, NewDeviceData), VkResult> {
    let layers: Vec<&LoadedLayer> = layers.iter().copied().filter(|l| l.gdpa.is_some()).collect();
    let mut links: Vec<VkLayerDeviceLink> = layers
        .iter()
        .skip(1)
        .map(|l| VkLayerDeviceLink { pNext: std::ptr::null_mut(), pfnNextGetInstanceProcAddr: Some(l.gipa), pfnNextGetDeviceProcAddr: l.gdpa })
        .collect();
    links.push(VkLayerDeviceLink { pNext: std::ptr::null_mut(), pfnNextGetInstanceProcAddr: Some(terminator_gipa), pfnNextGetDeviceProcAddr: Some(terminator_gdpa) });
    for i in 1..links.len() {
        let next: *mut VkLayerDeviceLink = &mut links[i];
        links[i - 1].pNext = next;
    }
    let data_callback = VkLayerDeviceCreateInfo {
        pNext: info.pNext,
        function: VkLayerFunction::LOADER_DATA_CALLBACK,
        u: VkLayerDeviceCreateInfoUnion { pfnSetDeviceLoaderData: Some(set_device_loader_data) },
        ..Default::default()
    };
    let link_info = VkLayerDeviceCreateInfo {
        pNext: &data_callback as *const _ as *const c_void,
        function: VkLayerFunction::LAYER_LINK_INFO,
        u: VkLayerDeviceCreateInfoUnion { pLayerInfo: links.as_mut_ptr() },
        ..Default::default()
    };
    let mut chained = *info;
    chained.pNext = &link_info as *const _ as *const c_void;
    let (create, top_gdpa): (PFN_vkCreateDevice, Option<Gdpa>) = match layers.first() {
        Some(top) => {
            // SAFETY: the top layer's vkGetInstanceProcAddr with the instance it knows and a
            // NUL-terminated name; what it answers for this name has vkCreateDevice's signature.
            let create = unsafe { std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateDevice>((top.gipa)(instance_handle, c"vkCreateDevice".as_ptr())) };
            (create, top.gdpa)
        }
        None => (Some(terminator_CreateDevice), None),
    };
    let Some(create) = create else { return Err(VkResult::ERROR_INITIALIZATION_FAILED) };

    let mut data = NewDeviceData::new(top_gdpa, crate::dispatch::unknown::device_slots());
    // The chain gets the device's data at `*pDevice`, as the layer interface says; the
    // terminator replaces it with the driver's device.
    let mut in_creation = DeviceInCreation::new(data.as_ptr());
    let handed_down = in_creation.handle();
    let mut device = handed_down;
    // SAFETY: the top of the chain's vkCreateDevice with a physical device it returned; the
    // chain's structures live to the end of this function, the application's are the caller's
    // promise; `device` is a place for one handle, holding the object the terminator reads (alive
    // until this function returns). The terminator fills `data` meanwhile (through that object):
    // no reference to it is live across the call.
    let result = unsafe { create(physical_device, if layers.is_empty() { info } else { &chained }, allocator, &mut device) };
    let fields = data.get_mut();
    let gdpa = top_gdpa.or(fields.driver_gdpa);
    match (result, gdpa) {
        // A layer that succeeded without calling down leaves the loader's object there: no device.
        (VkResult::SUCCESS, Some(gdpa)) if !device.is_null() && device != handed_down => {
            // SAFETY: the device the top of the chain just created, which that level's
            // vkGetDeviceProcAddr answers for; a dispatchable object whose first word is the
            // loader's (the layer interface: a layer's wrapper too).
            let device = unsafe { DeviceCalls::new(device, gdpa) };
            let mut table = device.table();
            // The application's handles for the objects these commands name are the layers' to
            // translate when layers intercept them; else the loader's functions go to the driver.
            match top_gdpa {
                Some(_) => fields.debug_objects.route_through_layers(&mut table),
                None => fields.debug_objects.route_to_driver(&mut table),
            }
            fields.table = table;
            // SAFETY: the slots live in the device's data until vkDestroyDevice (or
            // pfnLayerDestroyDevice) forgets them; the device is live and `gdpa` answers for it
            // until then.
            unsafe { crate::dispatch::unknown::device_created(&fields.unknown, device.handle(), gdpa) };
            Ok((device, data))
        }
        // The data is freed: no device was created, or the chain's is not used.
        _ => Err(if result == VkResult::SUCCESS { VkResult::ERROR_INITIALIZATION_FAILED } else { result }),
    }
}

/// `pfnLayerCreateDevice` (`VK_LOADER_LAYER_CREATE_DEVICE_CALLBACK`): a layer creates a device of
/// its own through the layers below it (below the one whose `vkGetInstanceProcAddr` is
/// `layerGIPA`; through all of them when it is NULL or unknown), and gets the
/// `vkGetDeviceProcAddr` to use for it. `instance` NULL means `physicalDevice` is one the
/// application was given.
///
/// # Safety
/// The layer interface's contract, with Vulkan's valid usage of `vkCreateDevice`: `instance`
/// NULL or the loader's instance, `physicalDevice` then a physical device the application was
/// given, else one the layers below know; `pCreateInfo` a valid create info; `pAllocator` NULL or
/// valid callbacks; `pDevice` valid for writing a handle; `nextGDPA` NULL or valid for writing a
/// function pointer. Checked anyway: NULL `pCreateInfo` or `pDevice`, or an instance without
/// layers, fails with `VK_ERROR_INITIALIZATION_FAILED`.
pub(crate) unsafe extern "system" fn layer_create_device(
    instance: VkInstance,
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
    layerGIPA: PFN_vkGetInstanceProcAddr,
    nextGDPA: *mut PFN_vkGetDeviceProcAddr,
) -> VkResult {
    ffi::guard("pfnLayerCreateDevice", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: the contract: NULL or a valid create info.
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pDevice.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let (owner, handle) = if instance.is_null() {
            // SAFETY: the contract: a physical device the application was given.
            unsafe { (Instance::of_physical_device(physicalDevice), crate::loader_abi::unwrap_physical_device(physicalDevice)) }
        } else {
            // SAFETY: the contract: the loader's instance.
            (unsafe { Instance::from_handle(instance) }, physicalDevice)
        };
        let Some(owner) = owner else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(chain) = &owner.layers else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let caller = layerGIPA.and_then(|g| chain.layers.iter().position(|l| l.loaded.gipa as usize == g as usize));
        let below: Vec<&LoadedLayer> = chain.layers.iter().skip(caller.map_or(0, |i| i + 1)).map(|l| &l.loaded).collect();
        // SAFETY: the instance's chain handle, which every layer knows, and a physical device the
        // layers below know (the contract); the contract for the rest.
        match unsafe { create_device_chain(&below, chain.terminator_gipa, owner.chain_handle, handle, info, pAllocator) } {
            Ok((device, mut data)) => {
                let chain_gdpa = data.get_mut().chain_gdpa;
                data.leave_to_driver_device();
                // SAFETY: the contract: `pDevice` is valid for writing a handle.
                unsafe { *pDevice = device.handle() };
                if !nextGDPA.is_null() {
                    // SAFETY: the contract: non-NULL, valid for writing a function pointer.
                    unsafe { *nextGDPA = chain_gdpa.or(Some(terminator_gdpa)) };
                }
                VkResult::SUCCESS
            }
            Err(e) => e,
        }
    })
}

/// `pfnLayerDestroyDevice`: destroys a device made by [`layer_create_device`] with the layer's
/// `destroyFunction`, then the loader's data for it.
///
/// # Safety
/// The layer interface's contract: `device` NULL or a device [`layer_create_device`] made, not
/// used afterwards; `pAllocator` NULL or valid callbacks compatible with those it was created
/// with; `destroyFunction` NULL or that device's `vkDestroyDevice`.
pub(crate) unsafe extern "system" fn layer_destroy_device(device: VkDevice, pAllocator: *const VkAllocationCallbacks, destroyFunction: PFN_vkDestroyDevice) {
    ffi::guard("pfnLayerDestroyDevice", (), || {
        if device.is_null() {
            return;
        }
        // SAFETY: the contract: a live device the loader made, whose first word is NULL or its data.
        let data = unsafe { *(device.0 as *const *mut DeviceData) };
        // SAFETY: NULL or the device's data, live until freed below.
        if let Some(data) = unsafe { data.as_ref() } {
            crate::dispatch::unknown::device_destroyed(&data.unknown);
        }
        if let Some(destroy) = destroyFunction {
            // SAFETY: the contract: the device's own vkDestroyDevice and a compatible allocator.
            unsafe { destroy(device, pAllocator) };
        }
        if !data.is_null() {
            // SAFETY: the box `NewDeviceData` left to the device; its device is gone, and with it
            // every way to it.
            drop(unsafe { Box::from_raw(data) });
        }
    })
}

/// The end of the device chain: the driver creates the device, with the extensions it supports
/// (the others were provided by layers) and without the loader's chain structures.
///
/// # Safety
/// Vulkan's valid usage of `vkCreateDevice`, as the last layer passes it on: `physicalDevice` a
/// physical device of this loader (either level); `pCreateInfo` NULL or a valid create info whose
/// device group names such physical devices; `pAllocator` NULL or valid callbacks; `pDevice` NULL
/// or valid for writing a handle, holding the handle the loader gave the chain
/// ([`DeviceInCreation`]). Checked anyway: a NULL create info or device pointer fails with
/// `VK_ERROR_INITIALIZATION_FAILED`; a changed handle stops the process.
pub(crate) unsafe extern "system" fn terminator_CreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    ffi::guard("vkCreateDevice (terminator)", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: the contract: a physical device this loader or a layer returned.
        let Some(pd) = (unsafe { PhysicalDevice::from_any_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        // SAFETY: the contract: NULL or a valid create info.
        let (Some(app_info), false) = (unsafe { pCreateInfo.as_ref() }, pDevice.is_null()) else {
            log::write(Level::Error, "vkCreateDevice: the loader's terminator was called without a create info or a device pointer");
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the contract: `pDevice` is valid; what it holds is the loader's object, unless a
        // layer changed it (then NULL or a pointer readable as that object, which is checked).
        let data = unsafe { handed_down_device(pd, *pDevice) };
        let mut info = *app_info;
        // SAFETY: the contract: a valid chain.
        info.pNext = unsafe { skip_loader_structs(info.pNext, VkStructureType::LOADER_DEVICE_CREATE_INFO) };
        info.enabledLayerCount = 0;
        info.ppEnabledLayerNames = std::ptr::null();
        let supported = pd.driver_calls().extensions().unwrap_or_default();
        // SAFETY: valid usage: `enabledExtensionCount` names, each a C string (NULL ones skipped).
        let names = unsafe { ffi::names(info.ppEnabledExtensionNames, info.enabledExtensionCount) };
        let requested: Vec<*const c_char> =
            names.into_iter().filter(|name| supported.iter().any(|p| ffi::name_of(p) == name.to_bytes())).map(CStr::as_ptr).collect();
        info.enabledExtensionCount = requested.len() as u32;
        info.ppEnabledExtensionNames = requested.as_ptr();
        // SAFETY: the application's create info with its loader structures skipped, no layer names
        // and the extension list replaced by one of this function's (`requested`, whose names are
        // the application's): valid as the contract says, for as long as `requested` lives.
        let info = unsafe { DeviceCreateInfo::new(&info) };
        // SAFETY: the contract for the allocator.
        let allocator = unsafe { Allocator::new(pAllocator) };
        match device::create_on_driver(pd, info, allocator) {
            Ok(created) => {
                let device = created.device;
                // The driver's device points to the pending data, which `create_device_chain` owns.
                device.set_dispatch(data.cast_const().cast());
                // SAFETY: the device's data (`NewDeviceData::as_ptr`, through the intact
                // `DeviceInCreation`), which `create_device_chain` does not touch until the chain
                // returns.
                let data = unsafe { &mut *data };
                created.describe(data);
                // Which swapchain commands the loader must unwrap surfaces for (see terminator_gdpa).
                let mut driver_table = device.table();
                data.debug_objects = crate::object::device::DeviceDebugObjects::of_driver(&driver_table, pd);
                data.wsi = crate::object::device::DeviceWsi::install(&mut driver_table, pd);
                // SAFETY: the contract: non-NULL, valid for writing a handle.
                unsafe { *pDevice = device.handle() };
                VkResult::SUCCESS
            }
            Err(e) => e,
        }
    })
}

/// The device's data from the object the loader handed down at `*pDevice`; stops the process when
/// a layer changed or wrote over it (layer policy LLP_LAYER_22): the device's data cannot be
/// found then. The Khronos loader's words, which its users search for.
///
/// # Safety
/// As for [`DeviceInCreation::read`].
unsafe fn handed_down_device(pd: &PhysicalDevice, handed_down: VkDevice) -> *mut DeviceData {
    const CHECK: &str = "terminator_CreateDevice";
    // SAFETY: the caller's promise.
    let message = match unsafe { DeviceInCreation::read(handed_down) } {
        HandedDown::Intact(data) => return data,
        HandedDown::Null => format!("{CHECK}: Loader device pointer null encountered.  Possibly set by active layer. (Policy #LLP_LAYER_22)"),
        HandedDown::Corrupted(magic) => format!(
            "{CHECK}: Device pointer ({:p}) has invalid MAGIC value 0x{magic:08x}. The expected value is 0x{:X}. Device value possibly \
             corrupted by active layer (Policy #LLP_LAYER_22).",
            handed_down.0,
            crate::object::device::DEVICE_IN_CREATION_MAGIC
        ),
    };
    // The instance's messengers hear it too.
    crate::object::instance::with_messengers_of(pd.instance(), || log::fatal(Level::Error, &message));
    std::process::abort();
}

/// The `pfnNextGetDeviceProcAddr` of the last layer: the driver's own functions.
///
/// # Safety
/// The layer interface's contract: `device` a device the layers below created through this
/// loader (or NULL); `pName` NULL or a NUL-terminated string. Checked anyway: a NULL name is
/// answered with NULL.
pub unsafe extern "system" fn terminator_gdpa(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetDeviceProcAddr (terminator)", None, || {
        // SAFETY: the contract: NULL or NUL-terminated.
        let name = unsafe { pName.as_ref().map(|p| CStr::from_ptr(p)) }?;
        if name == c"vkGetDeviceProcAddr" {
            return ffi::erased!(vkGetDeviceProcAddr => terminator_gdpa);
        }
        // SAFETY: the contract: a live device created through this loader.
        let data = unsafe { DeviceData::of(device) }?;
        if let Some(own) = data.wsi.terminator(name).or_else(|| data.debug_objects.terminator(name)) {
            return Some(own);
        }
        // The debug-utils names and labels end at the loader where the driver lacks them.
        // SAFETY: the driver's vkGetDeviceProcAddr for its own live device, and a NUL-terminated name.
        let driver = data.driver_gdpa.and_then(|gdpa| unsafe { gdpa(device, pName) });
        driver.or_else(|| crate::dispatch::debug_objects::absent_from_driver(name))
    })
}
