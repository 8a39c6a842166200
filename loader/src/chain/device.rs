//! Devices without layers, and what every device needs: created through the owning driver, the
//! driver's device object gets the loader's device dispatch table (filled from the driver's own
//! `vkGetDeviceProcAddr`) in its first word.

use std::ffi::CStr;

use vk_generated::types::*;
use vk_generated::{DispatchTable, DeviceDispatchTable};

use crate::debug::log::{self, Level};
use crate::given::allocator::Allocator;
use crate::given::device_create_info::DeviceCreateInfo;
use crate::load::calls::DeviceCalls;
use crate::object::device::{DeviceData, NewDeviceData};
use crate::object::instance::{Instance, PhysicalDevice};
use crate::plan::layers::Reason;

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
pub(crate) fn warn_about_device_layers(instance: &Instance, info: DeviceCreateInfo<'_>) {
    let names = info.layer_names();
    if !names.is_empty() {
        warn_about_layer_names(instance, &names);
    }
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
pub(crate) fn create_without_layers(pd: &PhysicalDevice, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<VkDevice, VkResult> {
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") || pd.driver_gdpa().is_none() {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    let mut data = NewDeviceData::new(None, crate::dispatch::unknown::device_slots());
    let created = create_on_driver(pd, info, allocator)?;
    let device = created.device;
    let mut table = device.table();
    let fields = data.get_mut();
    created.describe(fields);
    fields.wsi = crate::object::device::DeviceWsi::install(&mut table, pd);
    let debug_objects = crate::object::device::DeviceDebugObjects::of_driver(&table, pd);
    debug_objects.route_to_driver(&mut table);
    settle_commands_of_instance_extensions(&mut table, pd.instance());
    fields.debug_objects = debug_objects;
    fields.table = table;
    crate::dispatch::unknown::device_created(data.install(device));
    Ok(device.handle())
}

/// Creates the driver's device for a terminator-level physical device (the caller points it to
/// its data); `info`'s device group names physical devices this loader or a layer returned.
pub(crate) fn create_on_driver(pd: &PhysicalDevice, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<OnDriver, VkResult> {
    // A lazy driver is loaded now (its devices in a group with this one are its own).
    if !crate::lazy::live_for(&pd.term, "vkCreateDevice") {
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    let device = match pd.create_driver_device(info, allocator) {
        Ok(device) => device,
        Err(result) => {
            // The Khronos loader's words; the instance's messengers hear it.
            let instance = pd.instance();
            if let Some(driver) = instance.and_then(|i| i.drivers.get(pd.driver)) {
                crate::object::instance::with_messengers_of(instance, || {
                    log::write(Level::ErrorDriver, &format!("terminator_CreateDevice: Failed in ICD {} vkCreateDevice call", driver.driver.library_path))
                });
            }
            return Err(result);
        }
    };
    let maintenance5 = info.find::<VkPhysicalDeviceMaintenance5Features>().is_some_and(|f| f.maintenance5 == VK_TRUE)
        || info.find::<VkPhysicalDeviceVulkan14Features>().is_some_and(|f| f.maintenance5 == VK_TRUE);
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
