//! Devices without layers, and what every device needs: created through the owning driver, the
//! driver's device object gets the loader's device dispatch table (filled from the driver's own
//! `vkGetDeviceProcAddr`) in its first word.

use std::ffi::{c_char, CStr};

use vk_generated::types::*;
use vk_generated::{DispatchTable, DeviceDispatchTable};

use crate::chain::device_group::with_device_group_handles;
use crate::debug::log::{self, Level};
use crate::object::device::DeviceData;
use crate::object::instance::{Instance, PhysicalDevice};
use crate::plan::layers::Reason;

impl DeviceData {
    /// Empty data for a device about to be created (the table is filled once it exists);
    /// `chain_gdpa` is the top layer's `vkGetDeviceProcAddr` when there are layers.
    pub fn new(chain_gdpa: PFN_vkGetDeviceProcAddr) -> *mut DeviceData {
        Box::into_raw(Box::new(DeviceData {
            table: DeviceDispatchTable::default(),
            unknown: crate::dispatch::unknown::device_slots(),
            driver_gdpa: None,
            chain_gdpa,
            wsi: Default::default(),
            debug_objects: Default::default(),
            core_version_limit: u32::MAX,
        }))
    }
}

/// Device layers are deprecated and ignored; naming layers the instance does not have gets the
/// Khronos loader's warning.
pub(crate) unsafe fn warn_about_device_layers(instance: &Instance, info: &VkDeviceCreateInfo) {
    if info.enabledLayerCount == 0 || info.ppEnabledLayerNames.is_null() {
        return;
    }
    let active = instance.layers.iter().flat_map(|chain| chain.layers.iter());
    let instance_layers: Vec<&str> = active
        .flat_map(|l| {
            let meta = match &l.reason {
                Reason::Component(meta, _) => Some(meta.as_str()),
                _ => None,
            };
            std::iter::once(l.manifest.name.as_str()).chain(meta)
        })
        .collect();
    let names = std::slice::from_raw_parts(info.ppEnabledLayerNames, info.enabledLayerCount as usize);
    let known = |&name: &*const c_char| !name.is_null() && CStr::from_ptr(name).to_str().is_ok_and(|n| instance_layers.contains(&n));
    if !names.iter().all(known) {
        // The instance's messengers hear it too.
        crate::object::instance::with_messengers_of(Some(instance), || {
            log::log(
                Level::Warn,
                "loader_create_device_chain: Using deprecated and ignored 'ppEnabledLayerNames' member of 'VkDeviceCreateInfo' when \
                 creating a Vulkan device.",
            )
        });
    }
}

/// The direct path: the driver's device, its own functions in the table.
pub(crate) unsafe fn create_without_layers(
    physicalDevice: VkPhysicalDevice,
    info: &VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    let Some(pd) = PhysicalDevice::from_handle(physicalDevice) else {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    };
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    let Some(gdpa) = pd.driver_gdpa() else {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    };
    let data = DeviceData::new(None);
    match create_on_driver(pd, info, pAllocator, data) {
        Ok(device) => {
            let mut table = DeviceDispatchTable::load(|name| gdpa(device, name.as_ptr()));
            (*data).wsi = crate::object::device::DeviceWsi::install(&mut table, pd);
            let debug_objects = crate::object::device::DeviceDebugObjects::of_driver(&table, pd);
            debug_objects.route_to_driver(&mut table);
            settle_commands_of_instance_extensions(&mut table, pd.instance.as_ref());
            (*data).debug_objects = debug_objects;
            (*data).table = table;
            crate::dispatch::unknown::device_created(&(*data).unknown, device, gdpa);
            *pDevice = device;
            VkResult::SUCCESS
        }
        Err(result) => {
            drop(Box::from_raw(data));
            result
        }
    }
}

/// Creates the driver's device for a terminator-level physical device and makes its first word
/// point to `data` (whose table the caller fills).
pub(crate) unsafe fn create_on_driver(
    pd: &PhysicalDevice,
    info: &VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    data: *mut DeviceData,
) -> Result<VkDevice, VkResult> {
    // A lazy driver is loaded now (its devices in a group with this one are its own).
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    let (driver, handle) = pd.term.driver();
    let (Some(create), Some(gdpa)) = ((*driver).vkCreateDevice, pd.driver_gdpa()) else {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    };
    let mut device = VkDevice::NULL;
    let to_driver = |h: VkPhysicalDevice| PhysicalDevice::from_any_handle(h).map(|pd| pd.term.driver().1);
    let result = with_device_group_handles(info, to_driver, |info| create(handle, info, pAllocator, &mut device));
    if result != VkResult::SUCCESS {
        return Err(result);
    }
    if device.is_null() {
        log::write(Level::ErrorDriver, "vkCreateDevice: the driver returned no device (VK_SUCCESS with VK_NULL_HANDLE)");
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    if !vk_generated::layer_abi::valid_loader_magic_value(device.0) {
        log::write(Level::ErrorDriver, "vkCreateDevice: the driver's VkDevice lacks ICD_LOADER_MAGIC; destroying it");
        if let Some(destroy) = DeviceDispatchTable::load(|n| gdpa(device, n.as_ptr())).vkDestroyDevice {
            destroy(device, pAllocator);
        }
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    (*data).driver_gdpa = Some(gdpa);
    (*data).core_version_limit = core_version_limit(info, pd);
    *(device.0 as *mut *const DeviceData) = data;
    Ok(device)
}

/// The spec's rule for `maintenance5`: once the feature is enabled, `vkGetDeviceProcAddr` returns
/// NULL for core commands of versions newer than the one the application asked for (its
/// instance's API version); without it, for compatibility, they are handed out.
unsafe fn core_version_limit(info: &VkDeviceCreateInfo, pd: &PhysicalDevice) -> u32 {
    let maintenance5 = vk_generated::find_in_chain::<VkPhysicalDeviceMaintenance5Features>(info.pNext)
        .is_some_and(|f| f.maintenance5 == VK_TRUE)
        || vk_generated::find_in_chain::<VkPhysicalDeviceVulkan14Features>(info.pNext).is_some_and(|f| f.maintenance5 == VK_TRUE);
    match pd.instance.as_ref() {
        Some(instance) if maintenance5 => instance.api_version,
        _ => u32::MAX,
    }
}

/// The slots of the device commands that only instance extensions provide (`VK_EXT_debug_utils`'s
/// object names and labels): emptied where the instance enabled none of them, so that
/// `vkGetDeviceProcAddr` answers NULL for those as the Khronos loader does (a driver may hand them
/// out regardless); where it did and neither the driver nor a layer has one, the loader's
/// function that does nothing successfully, as the Khronos loader's terminators do.
pub(crate) fn settle_commands_of_instance_extensions(table: &mut DeviceDispatchTable, instance: Option<&Instance>) {
    let slots = table.slots_mut();
    for &(slot, name) in commands_of_instance_extensions() {
        let enabled = instance.is_some_and(|i| name.is_available(i.api_version, &i.enabled_extensions));
        let slot = &mut slots[slot as usize];
        if !enabled {
            *slot = None;
        } else if slot.is_none() {
            *slot = crate::dispatch::debug_objects::absent_from_driver(name.info().name());
        }
    }
}

/// The device commands only instance extensions provide, with their slots: found once.
fn commands_of_instance_extensions() -> &'static [(u16, &'static vk_generated::lookup::CommandName)] {
    static LIST: std::sync::OnceLock<Vec<(u16, &'static vk_generated::lookup::CommandName)>> = std::sync::OnceLock::new();
    // Process-lifetime memory: never from an application's allocation callbacks.
    LIST.get_or_init(|| {
        crate::platform::host_alloc::with_system_allocator(|| {
            let device_commands = vk_generated::COMMANDS.iter().filter(|c| c.level == vk_generated::CommandLevel::Device);
            device_commands
                .filter_map(|c| Some((c.slot, vk_generated::lookup::command(c.name().to_bytes())?)))
                .filter(|(_, name)| crate::dispatch::names::from_instance_extensions_only(name))
                .collect()
        })
    })
}

/// Whether `name` is a core command newer than the device's `core_version_limit`.
pub(crate) fn beyond_core_version(name: &vk_generated::lookup::CommandName, limit: u32) -> bool {
    limit != u32::MAX && name.is_core() && !name.is_available(limit, &vk_generated::lookup::ExtensionSet::new())
}
