//! The device chain through enabled layers: `vkCreateDevice` with `VkLayerDeviceCreateInfo` (link
//! info, `vkSetDeviceLoaderData`) through every layer that has a `vkGetDeviceProcAddr`, ending in
//! the driver through [`terminator_CreateDevice`] (which unwraps the physical device); the device
//! table is filled from the top layer's `vkGetDeviceProcAddr`. Also `pfnLayerCreateDevice`: a
//! layer's own device through the layers below it.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};

use vk_generated::layer_abi::*;
use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable};

use crate::chain::{device, physical_devices};
use crate::debug::log::{self, Level};
use crate::ffi::skip_loader_structs;
use crate::ffi;
use crate::load::layer::{Gdpa, Gipa, LoadedLayer};
use crate::object::device::DeviceData;
use crate::object::instance::{Instance, PhysicalDevice};
use crate::object::layers::InstanceLayers;

thread_local! {
    /// The device data being created, for the terminator of `vkCreateDevice` (layers call down on
    /// the application's thread).
    static PENDING_DEVICE: Cell<*mut DeviceData> = const { Cell::new(std::ptr::null_mut()) };
}

/// `vkSetDeviceLoaderData`: a layer's new device-level dispatchable object gets the device's
/// dispatch pointer.
unsafe extern "system" fn set_device_loader_data(device: VkDevice, object: *mut c_void) -> VkResult {
    ffi::guard("vkSetDeviceLoaderData", VkResult::ERROR_INITIALIZATION_FAILED, || {
        if device.is_null() || object.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        *(object as *mut *const c_void) = *(device.0 as *const *const c_void);
        VkResult::SUCCESS
    })
}


/// `vkCreateDevice` with layers: `VkLayerDeviceCreateInfo` links through every layer that has a
/// `vkGetDeviceProcAddr`, ending in [`terminator_CreateDevice`].
pub unsafe fn create_device(
    instance: &Instance,
    chain: &InstanceLayers,
    physical_device: VkPhysicalDevice,
    info: &VkDeviceCreateInfo,
    allocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    let layers: Vec<&LoadedLayer> = chain.layers.iter().map(|l| &l.loaded).collect();
    if log::enabled(Level::Layer) {
        let names: Vec<&str> = chain.layers.iter().filter(|l| l.loaded.gdpa.is_some()).map(|l| l.manifest.name.as_str()).collect();
        log!(Level::Layer, "device layer chain, application first: {} -> driver", names.join(" -> "));
    }
    let top_handle = crate::loader_abi::unwrap_physical_device(physical_device);
    match create_device_chain(&layers, chain.terminator_gipa, instance.chain_handle, top_handle, info, allocator) {
        Ok((device, data)) => {
            crate::chain::device::settle_commands_of_instance_extensions(&mut (*data).table, Some(instance));
            // A layer that wrapped the device gets the loader's dispatch pointer in its wrapper too.
            *(device.0 as *mut *const DeviceData) = data;
            *pDevice = device;
            VkResult::SUCCESS
        }
        Err(e) => e,
    }
}

/// Creates a device through `layers` (those without `vkGetDeviceProcAddr` are left out), top
/// first, given the instance chain's terminator `vkGetInstanceProcAddr` and the physical device
/// handle the top one expects (the terminator-level one when there is no layer). Returns the device and its data, whose table is filled from the top.
unsafe fn create_device_chain(
    layers: &[&LoadedLayer],
    terminator_gipa: Gipa,
    instance_handle: VkInstance,
    physical_device: VkPhysicalDevice,
    info: &VkDeviceCreateInfo,
    allocator: *const VkAllocationCallbacks,
) -> Result<(VkDevice, *mut DeviceData), VkResult> {
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
        Some(top) => (std::mem::transmute::<PFN_vkVoidFunction, PFN_vkCreateDevice>((top.gipa)(instance_handle, c"vkCreateDevice".as_ptr())), top.gdpa),
        None => (Some(terminator_CreateDevice), None),
    };
    let Some(create) = create else { return Err(VkResult::ERROR_INITIALIZATION_FAILED) };

    let data = DeviceData::new(top_gdpa);
    PENDING_DEVICE.with(|p| p.set(data));
    let mut device = VkDevice::NULL;
    let result = create(physical_device, if layers.is_empty() { info } else { &chained }, allocator, &mut device);
    PENDING_DEVICE.with(|p| p.set(std::ptr::null_mut()));
    let gdpa = top_gdpa.or((*data).driver_gdpa);
    match (result, gdpa) {
        (VkResult::SUCCESS, Some(gdpa)) if !device.is_null() => {
            let mut table = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
            // The application's handles for the objects these commands name are the layers' to
            // translate when layers intercept them; else the loader's functions go to the driver.
            let debug_objects = &mut (*data).debug_objects;
            match top_gdpa {
                Some(_) => debug_objects.route_through_layers(&mut table),
                None => debug_objects.route_to_driver(&mut table),
            }
            (*data).table = table;
            crate::dispatch::unknown::device_created(&(*data).unknown, device, gdpa);
            Ok((device, data))
        }
        _ => {
            drop(Box::from_raw(data));
            Err(if result == VkResult::SUCCESS { VkResult::ERROR_INITIALIZATION_FAILED } else { result })
        }
    }
}

/// `pfnLayerCreateDevice` (`VK_LOADER_LAYER_CREATE_DEVICE_CALLBACK`): a layer creates a device of
/// its own through the layers below it (below the one whose `vkGetInstanceProcAddr` is
/// `layerGIPA`; through all of them when it is NULL or unknown), and gets the
/// `vkGetDeviceProcAddr` to use for it. `instance` NULL means `physicalDevice` is one the
/// application was given.
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
        if pCreateInfo.is_null() || pDevice.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let (owner, handle) = if instance.is_null() {
            (physical_devices::instance_of(physicalDevice), crate::loader_abi::unwrap_physical_device(physicalDevice))
        } else {
            (Instance::from_handle(instance), physicalDevice)
        };
        let Some(owner) = owner else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let Some(chain) = &owner.layers else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let caller = layerGIPA.and_then(|g| chain.layers.iter().position(|l| l.loaded.gipa as usize == g as usize));
        let below: Vec<&LoadedLayer> = chain.layers.iter().skip(caller.map_or(0, |i| i + 1)).map(|l| &l.loaded).collect();
        match create_device_chain(&below, chain.terminator_gipa, owner.chain_handle, handle, &*pCreateInfo, pAllocator) {
            Ok((device, data)) => {
                *pDevice = device;
                if !nextGDPA.is_null() {
                    *nextGDPA = (*data).chain_gdpa.or(Some(terminator_gdpa));
                }
                VkResult::SUCCESS
            }
            Err(e) => e,
        }
    })
}

/// `pfnLayerDestroyDevice`: destroys a device made by [`layer_create_device`] with the layer's
/// `destroyFunction`, then the loader's data for it.
pub(crate) unsafe extern "system" fn layer_destroy_device(device: VkDevice, pAllocator: *const VkAllocationCallbacks, destroyFunction: PFN_vkDestroyDevice) {
    ffi::guard("pfnLayerDestroyDevice", (), || {
        if device.is_null() {
            return;
        }
        let data = *(device.0 as *const *mut DeviceData);
        if !data.is_null() {
            crate::dispatch::unknown::device_destroyed(&(*data).unknown);
        }
        if let Some(destroy) = destroyFunction {
            destroy(device, pAllocator);
        }
        if !data.is_null() {
            drop(Box::from_raw(data));
        }
    })
}

/// The end of the device chain: the driver creates the device, with the extensions it supports
/// (the others were provided by layers) and without the loader's chain structures.
pub(crate) unsafe extern "system" fn terminator_CreateDevice(
    physicalDevice: VkPhysicalDevice,
    pCreateInfo: *const VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    ffi::guard("vkCreateDevice (terminator)", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let data = PENDING_DEVICE.with(|p| p.get());
        let Some(pd) = PhysicalDevice::from_any_handle(physicalDevice) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if data.is_null() || pCreateInfo.is_null() || pDevice.is_null() {
            log::write(Level::Error, "vkCreateDevice: the loader's terminator was called outside of device creation");
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let mut info = *pCreateInfo;
        info.pNext = skip_loader_structs(info.pNext, VkStructureType::LOADER_DEVICE_CREATE_INFO);
        info.enabledLayerCount = 0;
        info.ppEnabledLayerNames = std::ptr::null();
        let (driver, handle) = pd.term.driver();
        let supported = match (*driver).vkEnumerateDeviceExtensionProperties {
            Some(f) => ffi::query(|c, o| f(handle, std::ptr::null(), c, o)).unwrap_or_default(),
            None => Vec::new(),
        };
        // SAFETY: valid usage: `enabledExtensionCount` names, each a C string (NULL ones skipped).
        let names = unsafe { ffi::names(info.ppEnabledExtensionNames, info.enabledExtensionCount) };
        let requested: Vec<*const c_char> =
            names.into_iter().filter(|name| supported.iter().any(|p| ffi::name_of(p) == name.to_bytes())).map(CStr::as_ptr).collect();
        info.enabledExtensionCount = requested.len() as u32;
        info.ppEnabledExtensionNames = requested.as_ptr();
        match device::create_on_driver(pd, &info, pAllocator, data) {
            Ok(device) => {
                // Which swapchain commands the loader must unwrap surfaces for (see terminator_gdpa).
                if let Some(gdpa) = (*data).driver_gdpa {
                    let mut driver_table = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
                    (*data).debug_objects = crate::object::device::DeviceDebugObjects::of_driver(&driver_table, pd);
                    (*data).wsi = crate::object::device::DeviceWsi::install(&mut driver_table, pd);
                }
                *pDevice = device;
                VkResult::SUCCESS
            }
            Err(e) => e,
        }
    })
}

/// The `pfnNextGetDeviceProcAddr` of the last layer: the driver's own functions.
pub unsafe extern "system" fn terminator_gdpa(device: VkDevice, pName: *const c_char) -> PFN_vkVoidFunction {
    ffi::guard("vkGetDeviceProcAddr (terminator)", None, || {
        if pName.is_null() {
            return None;
        }
        if CStr::from_ptr(pName) == c"vkGetDeviceProcAddr" {
            return Some(std::mem::transmute::<Gdpa, unsafe extern "system" fn()>(terminator_gdpa));
        }
        let data = DeviceData::of(device)?;
        let name = CStr::from_ptr(pName);
        if let Some(own) = data.wsi.terminator(name).or_else(|| data.debug_objects.terminator(name)) {
            return Some(own);
        }
        // The debug-utils names and labels end at the loader where the driver lacks them.
        data.driver_gdpa.and_then(|gdpa| gdpa(device, pName)).or_else(|| crate::dispatch::debug_objects::absent_from_driver(name))
    })
}
