//! The device chain through enabled layers: `vkCreateDevice` with `VkLayerDeviceCreateInfo` (link
//! info, `vkSetDeviceLoaderData`) through every layer that has a `vkGetDeviceProcAddr`, ending in
//! the driver through [`terminator_CreateDevice`] (which unwraps the physical device); the device
//! table is filled from the top layer's `vkGetDeviceProcAddr`. Also `pfnLayerCreateDevice`: a
//! layer's own device through the layers below it.

use std::ffi::{c_char, c_void, CStr};

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
use crate::load::device_chain::{DeviceChainEnd, DeviceChainStart};
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
    let Some((instance, start)) = pd.device_chain() else {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    };
    if log::enabled(Level::Layer) {
        let chain = instance.layers.iter().flat_map(|chain| chain.layers.iter());
        let names: Vec<&str> = chain.filter(|l| l.loaded.gdpa.is_some()).map(|l| l.manifest.name.as_str()).collect();
        log!(Level::Layer, "device layer chain, application first: {} -> driver", names.join(" -> "));
    }
    let (device, mut data) = create_device_chain(&start, info, allocator)?;
    crate::chain::device::settle_commands_of_instance_extensions(&mut data.get_mut().table, Some(instance));
    // A layer that wrapped the device gets the loader's dispatch pointer in its wrapper too.
    crate::dispatch::unknown::device_created(data.install(device));
    Ok(device.handle())
}

/// Creates a device through `start`'s chain. Returns the device and its data, whose table is
/// filled from the top.
fn create_device_chain(start: &DeviceChainStart<'_>, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<(DeviceCalls, NewDeviceData), VkResult> {
    let top_gdpa = start.top_gdpa();
    let mut data = NewDeviceData::new(top_gdpa, crate::dispatch::unknown::device_slots());
    let end = DeviceChainEnd { gdpa: terminator_gdpa, create_device: terminator_CreateDevice, set_loader_data: Some(set_device_loader_data) };
    // The data is freed on failure: no device was created, or the chain's is not used.
    let device = data.create_through(start, end, info, allocator)?;
    let fields = data.get_mut();
    let mut table = device.table();
    // The application's handles for the objects these commands name are the layers' to
    // translate when layers intercept them; else the loader's functions go to the driver.
    match top_gdpa {
        Some(_) => fields.debug_objects.route_through_layers(&mut table),
        None => fields.debug_objects.route_to_driver(&mut table),
    }
    fields.table = table;
    Ok((device, data))
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
        let below = chain.layers.iter().skip(caller.map_or(0, |i| i + 1)).map(|l| &l.loaded);
        // SAFETY: the instance's chain handle, which every layer knows, and a physical device the
        // layers below know (the contract); the instance chain's end; the instance (and with it
        // the layers' libraries) lives for the call.
        let start = unsafe { DeviceChainStart::new(below, chain.terminator_gipa, owner.chain_handle, handle) };
        // SAFETY: the contract: a valid create info (its group naming physical devices the layers
        // below know), NULL or valid callbacks.
        let (info, allocator) = unsafe { (DeviceCreateInfo::new(info), Allocator::new(pAllocator)) };
        match create_device_chain(&start, info, allocator) {
            Ok((device, mut data)) => {
                let chain_gdpa = data.get_mut().chain_gdpa;
                crate::dispatch::unknown::device_created(data.leave_to_driver_device(device));
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
        // layer changed it (then NULL, misaligned or a pointer readable as that object).
        let found = unsafe { (*pDevice, DeviceInCreation::read(*pDevice)) };
        let data = handed_down_device(pd, found.0, found.1);
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
        let created = crate::object::device::with_lent(data, |fields, created_here| {
            let on_driver = device::create_on_driver(pd, info, allocator)?;
            let device = on_driver.device;
            // The driver's device points to the pending data, which `create_device_chain` owns.
            device.set_dispatch(data.cast_const().cast());
            on_driver.describe(fields);
            // Which swapchain commands the loader must unwrap surfaces for (see terminator_gdpa).
            let mut driver_table = device.table();
            fields.debug_objects = crate::object::device::DeviceDebugObjects::of_driver(&driver_table, pd);
            fields.wsi = crate::object::device::DeviceWsi::install(&mut driver_table, pd);
            *created_here = Some(device);
            Ok(device.handle())
        });
        match created {
            Some(Ok(device)) => {
                // SAFETY: the contract: non-NULL, valid for writing a handle.
                unsafe { *pDevice = device };
                VkResult::SUCCESS
            }
            Some(Err(e)) => e,
            None => {
                log::write(Level::Error, "vkCreateDevice: the loader's terminator was called outside of the device creation it was handed");
                VkResult::ERROR_INITIALIZATION_FAILED
            }
        }
    })
}

/// The device's data from the object the loader handed down at `*pDevice` (`handed_down`, found
/// there as `found`); stops the process when a layer changed or wrote over it (layer policy LLP_LAYER_22): the
/// device's data cannot be found then. The Khronos loader's words, which its users search for.
fn handed_down_device(pd: &PhysicalDevice, handed_down: VkDevice, found: HandedDown) -> *mut DeviceData {
    const CHECK: &str = "terminator_CreateDevice";
    let message = match found {
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
