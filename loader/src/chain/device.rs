//! Devices without layers, and what every device needs: created through the owning driver, the
//! driver's device object gets the loader's device dispatch table (filled from the driver's own
//! `vkGetDeviceProcAddr`) in its first word.

use std::ffi::CStr;

use vk_generated::types::*;
use vk_generated::{DispatchTable, DeviceDispatchTable};

use crate::chain::device_group::with_device_group_handles;
use crate::debug::log::{self, Level};
use crate::load::calls::DeviceCalls;
use crate::object::device::DeviceData;
use crate::object::instance::{Instance, PhysicalDevice};
use crate::plan::layers::Reason;

/// The loader's data for a device being created: owned here until the device points to it
/// ([`install`](Self::install)), from then on the device's (freed by `vkDestroyDevice`); freed
/// here if the creation fails. Kept as the pointer `Box::into_raw` gave, the one the device's
/// first word gets, so that every later use derives from it.
pub(crate) struct NewDeviceData(std::ptr::NonNull<DeviceData>);

impl NewDeviceData {
    /// Empty data for a device about to be created (the table is filled once it exists);
    /// `chain_gdpa` is the top layer's `vkGetDeviceProcAddr` when there are layers.
    pub fn new(chain_gdpa: PFN_vkGetDeviceProcAddr) -> NewDeviceData {
        let data = Box::new(DeviceData {
            table: DeviceDispatchTable::default(),
            unknown: crate::dispatch::unknown::device_slots(),
            driver_gdpa: None,
            chain_gdpa,
            wsi: Default::default(),
            debug_objects: Default::default(),
            core_version_limit: u32::MAX,
        });
        NewDeviceData(std::ptr::NonNull::from(Box::leak(data)))
    }

    /// The data, to fill. Not while the layers' chain runs: its terminator fills it then through
    /// [`as_ptr`](Self::as_ptr).
    pub fn get_mut(&mut self) -> &mut DeviceData {
        // SAFETY: a live box of ours, which no device points to yet (or whose device is not handed
        // out yet), so nothing else refers to it while this borrow of `self` lasts.
        unsafe { self.0.as_mut() }
    }

    /// The data's address, for the terminator of the layers' chain and for the device's first word.
    pub fn as_ptr(&self) -> *mut DeviceData {
        self.0.as_ptr()
    }

    /// Hands the data over to `device`, whose first word now points to it.
    pub fn install(self, device: DeviceCalls) {
        device.set_dispatch(self.as_ptr().cast_const().cast());
        std::mem::forget(self);
    }

    /// Hands the data over to the device the driver created, which the terminator of the layers'
    /// chain pointed to it (the device the layers return is their own).
    pub fn leave_to_driver_device(self) {
        std::mem::forget(self);
    }
}

impl Drop for NewDeviceData {
    fn drop(&mut self) {
        // SAFETY: the box `new` leaked, which no device was handed out with.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// A device the driver created, with what the loader's data for it must say.
pub(crate) struct OnDriver {
    pub device: DeviceCalls,
    /// See [`DeviceData::core_version_limit`].
    pub core_version_limit: u32,
}

impl OnDriver {
    /// Writes what the loader knows of the driver's device into its data.
    pub fn describe(&self, data: &mut DeviceData) {
        data.driver_gdpa = Some(self.device.gdpa());
        data.core_version_limit = self.core_version_limit;
    }
}

/// Device layers are deprecated and ignored; naming layers the instance does not have gets the
/// Khronos loader's warning.
///
/// # Safety
/// `info.ppEnabledLayerNames` must be NULL or valid for `enabledLayerCount` pointers, each NULL or
/// a NUL-terminated string (Vulkan's valid usage of `vkCreateDevice`).
pub(crate) unsafe fn warn_about_device_layers(instance: &Instance, info: &VkDeviceCreateInfo) {
    if info.enabledLayerCount == 0 || info.ppEnabledLayerNames.is_null() {
        return;
    }
    // SAFETY: the caller's promise: `enabledLayerCount` pointers.
    let names = unsafe { std::slice::from_raw_parts(info.ppEnabledLayerNames, info.enabledLayerCount as usize) };
    // SAFETY: the caller's promise: each NULL or NUL-terminated.
    let names: Vec<Option<&CStr>> = names.iter().map(|&name| unsafe { name.as_ref() }.map(|name| unsafe { CStr::from_ptr(name) })).collect();
    warn_about_layer_names(instance, &names);
}

/// [`warn_about_device_layers`] for the names read (NULL ones are `None`).
fn warn_about_layer_names(instance: &Instance, names: &[Option<&CStr>]) {
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
    let known = |name: &Option<&CStr>| name.is_some_and(|name| name.to_str().is_ok_and(|n| instance_layers.contains(&n)));
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
///
/// # Safety
/// Vulkan's valid usage of `vkCreateDevice`: `physicalDevice` a physical device of this loader
/// (terminator-level: the instance has no layers); `info` a valid create info (its arrays valid
/// for their counts, its names NUL-terminated, its chain valid, a device group naming physical
/// devices of this loader); `pAllocator` NULL or valid callbacks; `pDevice` valid for writing a
/// handle.
pub(crate) unsafe fn create_without_layers(
    physicalDevice: VkPhysicalDevice,
    info: &VkDeviceCreateInfo,
    pAllocator: *const VkAllocationCallbacks,
    pDevice: *mut VkDevice,
) -> VkResult {
    // SAFETY: the caller's promise: NULL or a physical device of this loader.
    let Some(pd) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    };
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") || pd.driver_gdpa().is_none() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    let mut data = NewDeviceData::new(None);
    // SAFETY: the caller's promise for `info` and `pAllocator`.
    let created = match unsafe { create_on_driver(pd, info, pAllocator) } {
        Ok(created) => created,
        Err(result) => return result,
    };
    let device = created.device;
    let mut table = device.table();
    let fields = data.get_mut();
    created.describe(fields);
    fields.wsi = crate::object::device::DeviceWsi::install(&mut table, pd);
    // SAFETY: a live loader physical device, its instance NULL or live.
    let debug_objects = unsafe { crate::object::device::DeviceDebugObjects::of_driver(&table, pd) };
    debug_objects.route_to_driver(&mut table);
    settle_commands_of_instance_extensions(&mut table, pd.instance());
    fields.debug_objects = debug_objects;
    fields.table = table;
    // SAFETY: the slots live in the device's data until vkDestroyDevice forgets them
    // (`device_destroyed`); the device is live and the driver's vkGetDeviceProcAddr answers for it
    // until then.
    unsafe { crate::dispatch::unknown::device_created(&fields.unknown, device.handle(), device.gdpa()) };
    data.install(device);
    // SAFETY: the caller's promise: `pDevice` is valid for writing a handle.
    unsafe { *pDevice = device.handle() };
    VkResult::SUCCESS
}

/// Creates the driver's device for a terminator-level physical device (the caller points it to
/// its data).
///
/// # Safety
/// `info` must be valid as for [`create_without_layers`] (a device group naming physical devices
/// this loader or a layer returned), and `pAllocator` NULL or valid callbacks.
pub(crate) unsafe fn create_on_driver(pd: &PhysicalDevice, info: &VkDeviceCreateInfo, pAllocator: *const VkAllocationCallbacks) -> Result<OnDriver, VkResult> {
    // A lazy driver is loaded now (its devices in a group with this one are its own).
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    let Some(gdpa) = pd.driver_gdpa() else {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    };
    let driver = pd.driver_calls();
    // SAFETY: the caller's promise: the group names physical devices this loader or a layer returned.
    let to_driver = |h: VkPhysicalDevice| unsafe { PhysicalDevice::from_any_handle(h) }.map(|pd| pd.term.driver().1);
    let mut created = Err(VkResult::ERROR_INITIALIZATION_FAILED);
    // SAFETY: the caller's promise for `info` and `pAllocator`; the group copy names the driver's
    // own handles for its devices; `gdpa` is the driver's.
    let result = unsafe {
        with_device_group_handles(info, to_driver, |info| {
            created = driver.create_device(info, pAllocator, gdpa);
            created.as_ref().err().copied().unwrap_or(VkResult::SUCCESS)
        })
    };
    if result != VkResult::SUCCESS {
        // The Khronos loader's words; the instance's messengers hear it.
        let instance = pd.instance();
        if let Some(driver) = instance.and_then(|i| i.drivers.get(pd.driver)) {
            crate::object::instance::with_messengers_of(instance, || {
                log::write(Level::ErrorDriver, &format!("terminator_CreateDevice: Failed in ICD {} vkCreateDevice call", driver.driver.library_path))
            });
        }
        return Err(result);
    }
    let device = created?;
    if !device.has_loader_magic() {
        log::write(Level::ErrorDriver, "vkCreateDevice: the driver's VkDevice lacks ICD_LOADER_MAGIC; destroying it");
        // SAFETY: the device just created, used by nothing else; the allocator it was created with.
        unsafe { device.destroy(pAllocator) };
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    // SAFETY: the caller's promise: a valid chain.
    let maintenance5 = unsafe { vk_generated::find_in_chain::<VkPhysicalDeviceMaintenance5Features>(info.pNext) }
        .is_some_and(|f| f.maintenance5 == VK_TRUE)
        // SAFETY: as above.
        || unsafe { vk_generated::find_in_chain::<VkPhysicalDeviceVulkan14Features>(info.pNext) }.is_some_and(|f| f.maintenance5 == VK_TRUE);
    Ok(OnDriver { device, core_version_limit: core_version_limit(maintenance5, pd.instance()) })
}

/// The spec's rule for `maintenance5`: once the feature is enabled, `vkGetDeviceProcAddr` returns
/// NULL for core commands of versions newer than the one the application asked for (its
/// instance's API version); without it, for compatibility, they are handed out.
fn core_version_limit(maintenance5: bool, instance: Option<&Instance>) -> u32 {
    match instance {
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
