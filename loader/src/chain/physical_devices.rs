//! Physical devices: gathered from every driver, wrapped once per instance (handles stay stable
//! across calls), and ordered the Linux way.

use vk_generated::types::*;

use crate::debug::log::Level;
use crate::ffi;
use crate::load::calls::{GroupChains, PhysicalDeviceCalls};
use crate::loader_abi::TerminatorPhysicalDevice;
use crate::manifest::settings::DeviceConfiguration;
use crate::object::instance::{DriverInstance, Instance, PhysicalDevice, PhysicalDevices};
use crate::plan::device_filter::DeviceFilters;
use crate::plan::{self, Decision, DeviceEntry};

impl PhysicalDevices {
    /// Asks every driver for its devices: the wrappers in the order the application sees them.
    /// `VK_ERROR_INITIALIZATION_FAILED` when no driver reports any device.
    pub fn refresh<'a>(&'a self, instance: &Instance) -> Result<Vec<Listed<'a>>, VkResult> {
        // The drivers are asked with no lock held.
        let (reported, selection) = select(report(instance)?, instance);
        let hidden = match selection {
            DeviceSelection::NoneMatched { hidden } => hidden,
            DeviceSelection::Usual | DeviceSelection::BySettings => 0,
        };
        self.none_matched.store(hidden, std::sync::atomic::Ordering::Relaxed);
        plan::record(|p| {
            let listed: Vec<u64> = reported.iter().filter(|r| r.hidden_by.is_none()).map(|r| r.handle().0 as u64).collect();
            let settings_path = instance.device_configurations.as_ref().and_then(|_| crate::manifest::settings::current()).map(|s| s.path.clone());
            p.device_order(&listed, settings_path.as_deref());
        });
        let (devices, kept) = self.find_or_add(&reported, same_device, |r| wrap(instance, r));
        // Said with no lock held (a messenger may enumerate again), as the Khronos loader says it
        // at the debug level: the handles the application has stay valid.
        for (old, new) in kept {
            log!(Level::DebugDriver, "Copying old device {old} into new device {new}");
        }
        Ok(devices.into_iter().zip(&reported).map(|(device, r)| Listed { device, order: r.order }).collect())
    }

    /// `Some(found)` when, at the last refresh, a loader settings file's `device_configurations`
    /// named none of the `found` devices: the Khronos loader then counts them but fails to list
    /// them (`VK_ERROR_INITIALIZATION_FAILED`).
    pub fn none_matched(&self) -> Option<u32> {
        Some(self.none_matched.load(std::sync::atomic::Ordering::Relaxed)).filter(|&n| n > 0)
    }
}

/// Whether `d` is the wrapper of a reported device.
fn same_device(d: &PhysicalDevice, reported: &Reported) -> bool {
    let handle = d.term.driver().1;
    d.driver == reported.driver && (handle == reported.handle() || crate::lazy::same_device(handle, reported.handle()))
}

/// A device in the order the application sees, with the key that put it there.
pub struct Listed<'a> {
    pub device: &'a PhysicalDevice,
    order: OrderKey,
}

/// Where a device goes in the Linux order, smaller first: the `VK_LOADER_DEVICE_SELECT` device,
/// then the type's rank, then the PCI address (devices without one last). All equal when
/// sorting is disabled (`VK_LOADER_DISABLE_SELECT`): the drivers' order.
type OrderKey = (bool, u8, [u32; 4]);

/// A device as a driver reported it, before it is wrapped.
struct Reported<'a> {
    /// Index of the driver in `Instance::drivers`.
    driver: usize,
    device: PhysicalDeviceCalls<'a>,
    properties: VkPhysicalDeviceProperties,
    order: OrderKey,
    /// The id filter that hides it from the application, if one does.
    hidden_by: Option<&'static str>,
}

impl Reported<'_> {
    fn handle(&self) -> VkPhysicalDevice {
        self.device.handle()
    }
}

/// Every driver's physical devices, sorted. A driver whose enumeration fails counts
/// as having none (running out of memory is reported); none at all is
/// `VK_ERROR_INITIALIZATION_FAILED`.
fn report(instance: &Instance) -> Result<Vec<Reported<'_>>, VkResult> {
    let filters = DeviceFilters::from_env();
    let mut any = false;
    let mut devices = Vec::new();
    for (index, d) in instance.drivers.iter().enumerate() {
        let listed = driver_devices(d)?;
        any |= !listed.is_empty();
        for device in listed {
            let properties = device.properties();
            // The filters act above the layers (`filtered_devices`); here they are only told.
            let driver_id = || driver_id(device);
            let hidden_by = filters.rejecting(properties.vendorID, properties.deviceID, driver_id);
            if let Some(variable) = hidden_by {
                let name = device_name(&properties);
                log!(Level::Driver, "physical device {name:?} from {} hidden by {variable}", d.driver.manifest_path);
            }
            devices.push(Reported { driver: index, device, properties, order: OrderKey::default(), hidden_by });
        }
    }
    if !any {
        log!(Level::Error, "setup_loader_term_phys_devs:  Failed to detect any valid GPUs in the current config");
        return Err(VkResult::ERROR_INITIALIZATION_FAILED);
    }
    let unsorted = if sorting_disabled() {
        Some("VK_LOADER_DISABLE_SELECT is set")
    } else if !sort_keys_readable(instance) {
        Some("no driver here reads PCI addresses (vkGetPhysicalDeviceProperties2 is not available)")
    } else {
        None
    };
    match unsorted {
        Some(_) => in_driver_order(&mut devices),
        None => sort(&mut devices, &instance.drivers),
    }
    plan::record(|p| {
        for r in &devices {
            let d = &instance.drivers[r.driver];
            if let Some(variable) = r.hidden_by {
                let value = crate::reference::variable(variable).and_then(|v| v.get()).unwrap_or_default();
                p.device(device_entry(d, r.handle(), &r.properties, Decision::Hidden, format!("hidden by {variable}={value}")));
                continue;
            }
            let reason = match unsorted {
                Some(why) => format!("{why}: the drivers' order, the driver found last first"),
                None => sorted_reason(r),
            };
            p.device(device_entry(d, r.handle(), &r.properties, Decision::Used, reason));
        }
    });
    Ok(devices)
}

/// Whether the Khronos loader would sort this instance's devices: it reads their PCI addresses
/// through `vkGetPhysicalDeviceProperties2`, so it sorts when the application asked for Vulkan
/// 1.1 or `VK_KHR_get_physical_device_properties2`, or some driver was given that extension.
/// Otherwise (only 1.0 drivers without it) it lists them unsorted, and so do we: the same order
/// through either loader.
fn sort_keys_readable(instance: &Instance) -> bool {
    const PROPERTIES2: &[u8] = b"VK_KHR_get_physical_device_properties2";
    vk_generated::api_version_major_minor(instance.api_version) >= (1, 1)
        || instance.enabled_extensions.contains(vk_generated::extension_id::VK_KHR_get_physical_device_properties2)
        || instance.drivers.iter().any(|d| d.has_extension(PROPERTIES2))
}

/// A stable sort by key for the few items here (physical devices, their groups): an insertion sort,
/// a small fraction of the code `slice::sort_by_key` instantiates for each element type.
fn sort_few_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    for i in 1..v.len() {
        let k = key(&v[i]);
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > k {
            j -= 1;
        }
        v[j..=i].rotate_right(1);
    }
}

/// The order when sorting is disabled or impossible: as the Khronos loader lists them then, the drivers found
/// last come first, each driver's devices in its own order (so that a user who turns sorting off
/// sees the same order through either loader). The key's PCI-address part carries the rank.
fn in_driver_order(devices: &mut [Reported]) {
    for d in devices.iter_mut() {
        d.order = (false, 0, [u32::MAX - d.driver as u32, 0, 0, 0]);
    }
    sort_few_by_key(devices, |d| d.order);
}

/// What a loader settings file's `device_configurations` made of an instance's devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeviceSelection {
    /// No `device_configurations`: the devices the filters let through, in the usual order.
    Usual,
    /// Only the devices the settings file names, in its order (a group with another device in it
    /// is then not reported, as for any hidden device).
    BySettings,
    /// The settings file names devices of which none is here; `hidden` devices were found.
    NoneMatched { hidden: u32 },
}

/// The devices as reported, or chosen and ordered by the `device_configurations` of the loader
/// settings file the instance was created with.
fn select<'a>(reported: Vec<Reported<'a>>, instance: &Instance) -> (Vec<Reported<'a>>, DeviceSelection) {
    match &instance.device_configurations {
        Some(configurations) => select_by_settings(reported, configurations),
        None => (reported, DeviceSelection::Usual),
    }
}

/// Keeps the devices the settings file's `device_configurations` name (same device UUID, driver
/// UUID and driver version), in the file's order. Only devices of Vulkan 1.1 or later have UUIDs.
fn select_by_settings<'a>(devices: Vec<Reported<'a>>, configurations: &[DeviceConfiguration]) -> (Vec<Reported<'a>>, DeviceSelection) {
    log!(Level::Info, "Selecting and ordering VkPhysicalDevices to match the loader settings device configurations list");
    let ids: Vec<Option<VkPhysicalDeviceIDProperties>> = devices.iter().map(device_ids).collect();
    let found = devices.len() as u32;
    let mut left: Vec<Option<Reported>> = devices.into_iter().map(Some).collect();
    let mut chosen = Vec::with_capacity(configurations.len());
    for wanted in configurations {
        let matches = |i: usize| {
            let (Some(device), Some(id)) = (&left[i], &ids[i]) else { return false };
            id.deviceUUID == wanted.device_uuid && id.driverUUID == wanted.driver_uuid && device.properties.driverVersion == wanted.driver_version
        };
        match (0..left.len()).find(|&i| matches(i)) {
            Some(i) => chosen.extend(left[i].take()),
            None => log!(
                Level::Warn,
                "loader settings file: device_configuration {:?} (deviceUUID {}, driverUUID {}, driverVersion {}) matches no VkPhysicalDevice",
                wanted.device_name,
                uuid_string(&wanted.device_uuid),
                uuid_string(&wanted.driver_uuid),
                wanted.driver_version
            ),
        }
    }
    for device in left.iter().flatten() {
        let name = device_name(&device.properties);
        log!(Level::Info, "VkPhysicalDevice {name:?} did not appear in the settings file device configurations list, so was not added to the pPhysicalDevices array");
    }
    if chosen.is_empty() {
        log!(Level::Warn, "None of the settings file device configurations had deviceUUID's that corresponded to enumerated VkPhysicalDevices");
        return (chosen, DeviceSelection::NoneMatched { hidden: found });
    }
    (chosen, DeviceSelection::BySettings)
}

/// A device's UUIDs, where it has them (Vulkan 1.1 or later, `vkGetPhysicalDeviceProperties2`).
fn device_ids(device: &Reported) -> Option<VkPhysicalDeviceIDProperties> {
    if vk_generated::api_version_major_minor(device.properties.apiVersion) < (1, 1) {
        return None;
    }
    device.device.properties2()
}

fn uuid_string(uuid: &[u8; 16]) -> String {
    uuid.iter().map(|b| format!("{b:02x}")).collect()
}

/// The settings file's refusal to list devices it named none of (see
/// [`PhysicalDevices::none_matched`]): the count alone succeeds, the list fails.
fn none_matched(instance: &Instance, count: Option<&mut u32>, count_only: bool) -> Option<VkResult> {
    let hidden = instance.physical_devices.none_matched()?;
    let Some(count) = count else {
        return Some(VkResult::ERROR_INITIALIZATION_FAILED);
    };
    if count_only {
        *count = hidden;
        return Some(VkResult::SUCCESS);
    }
    Some(VkResult::ERROR_INITIALIZATION_FAILED)
}

/// `VK_LOADER_DISABLE_SELECT` set to a number other than 0 (read as C's `strtol` would: its
/// leading digits; anything else is 0), as the Khronos loader reads it.
fn sorting_disabled() -> bool {
    let Some(value) = crate::reference::variables::VK_LOADER_DISABLE_SELECT.get() else { return false };
    let value = value.trim_start();
    let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
    digits.chars().take_while(char::is_ascii_digit).any(|d| d != '0')
}

/// One driver's physical devices; none when its enumeration fails, except for running out of
/// memory, which is the application's error too.
fn driver_devices(d: &DriverInstance) -> Result<Vec<PhysicalDeviceCalls<'_>>, VkResult> {
    match d.calls().physical_devices() {
        Ok(listed) => {
            if listed.wrote_null {
                log!(Level::WarnDriver, "{}: vkEnumeratePhysicalDevices wrote fewer devices than it counted (NULL handles skipped)", d.driver.manifest_path);
            }
            Ok(listed.devices)
        }
        Err(e) => {
            log!(
                Level::Error,
                "setup_loader_term_phys_devs: Call to 'vkEnumeratePhysicalDevices' in ICD {} failed with error code {}",
                d.driver.library_path,
                e.0
            );
            if e == VkResult::ERROR_OUT_OF_HOST_MEMORY { Err(e) } else { Ok(Vec::new()) }
        }
    }
}

/// How many physical devices each driver reports now (none where its enumeration fails).
pub fn counts_per_driver(drivers: &[DriverInstance]) -> Vec<usize> {
    drivers.iter().map(|d| d.calls().physical_device_count() as usize).collect()
}

/// The loader's wrapper for a device a driver reported.
fn wrap(instance: &Instance, reported: &Reported) -> Box<PhysicalDevice> {
    let d = &instance.drivers[reported.driver];
    let (table, _) = d.live();
    // A lazy driver's is set when it is loaded.
    let driver_gdpa = match d.is_unloaded() {
        true => None,
        false => d.calls().device_proc_addr(),
    };
    let mut device = Box::new(PhysicalDevice {
        term: TerminatorPhysicalDevice {
            dispatch: instance.dispatch,
            magic: crate::handles::PHYSICAL_DEVICE_MAGIC,
            unwrapped: VkPhysicalDevice::NULL,
            instance: instance as *const Instance as *const std::ffi::c_void,
            driver_table: std::sync::atomic::AtomicPtr::new((table as *const crate::loader_abi::InstanceDispatch).cast_mut().cast()),
            driver_handle: std::sync::atomic::AtomicPtr::new(reported.handle().0),
        },
        driver: reported.driver,
        instance,
        gdpa: std::sync::atomic::AtomicUsize::new(driver_gdpa.map_or(0, |f| f as usize)),
        properties: reported.properties,
    });
    device.term.unwrapped = device.handle();
    device
}

/// The physical-device groups: the drivers' own groups where they have them (Vulkan 1.1 or
/// `VK_KHR_device_group_creation`), else one group per device. A group with a hidden device is
/// left out (no hidden device is reachable), as the Khronos loader does. Ordered like the devices,
/// by each group's first device; ties keep the drivers' order of their groups. `app_chains`
/// holds the `pNext` of each of the application's structs: a driver hears the `i`-th for the
/// group it writes into the `i`-th (NULL past the application's array).
pub fn groups(instance: &Instance, app_chains: &GroupChains) -> Result<Vec<Group>, VkResult> {
    let devices = instance.physical_devices.refresh(instance)?;
    let position = |driver: usize, handle: VkPhysicalDevice| {
        devices.iter().position(|d| {
            let own = d.device.term.driver().1;
            d.device.driver == driver && (own == handle || crate::lazy::same_device(own, handle))
        })
    };
    let mut groups: Vec<(Vec<usize>, VkBool32)> = Vec::new();
    for (index, d) in instance.drivers.iter().enumerate() {
        let first = groups.len();
        let driver_groups = driver_groups(d, &app_chains.after(first)).unwrap_or_else(|| {
            let own = devices.iter().filter(|p| p.device.driver == index);
            own.map(|p| (vec![p.device.term.driver().1], VK_FALSE)).collect()
        });
        for (members, subset_allocation) in driver_groups {
            let Some(mut members) = members.into_iter().map(|h| position(index, h)).collect::<Option<Vec<usize>>>() else {
                continue;
            };
            members.sort_unstable();
            if !members.is_empty() {
                groups.push((members, subset_allocation));
            }
        }
    }
    // A stable sort: ties keep the drivers' group order.
    sort_few_by_key(&mut groups, |(members, _)| devices[members[0]].order);
    let handle = |i: usize| devices[i].device.handle();
    Ok(groups
        .into_iter()
        .map(|(members, subset_allocation)| Group { members: members.into_iter().map(handle).collect(), subset_allocation })
        .collect())
}

/// One physical-device group as the application sees it.
pub struct Group {
    pub members: Vec<VkPhysicalDevice>,
    pub subset_allocation: VkBool32,
}

/// A driver's own physical-device groups (its handles), if it can report them; its `i`-th
/// struct carries the `i`-th of `chains` as its `pNext`.
fn driver_groups(d: &DriverInstance, chains: &GroupChains) -> Option<Vec<(Vec<VkPhysicalDevice>, VkBool32)>> {
    let core = vk_generated::api_version_major_minor(d.driver.instance_version()) >= (1, 1);
    if !core && !d.has_extension(b"VK_KHR_device_group_creation") {
        return None;
    }
    match d.calls().physical_device_groups(chains)? {
        Ok(groups) => Some(groups.iter().map(|g| (g.physicalDevices[..(g.physicalDeviceCount as usize).min(g.physicalDevices.len())].to_vec(), g.subsetAllocation)).collect()),
        Err(e) => {
            log!(Level::WarnDriver, "{}: vkEnumeratePhysicalDeviceGroups failed ({e:?}); one group per device", d.driver.manifest_path);
            None
        }
    }
}

/// Linux order: the `VK_LOADER_DEVICE_SELECT` device first, then discrete > integrated > virtual
/// > other > cpu, then PCI domain/bus/device/function where known; ties keep driver order.
fn sort(devices: &mut [Reported], drivers: &[DriverInstance]) {
    let selected = crate::reference::variables::VK_LOADER_DEVICE_SELECT.get().and_then(|v| {
        let (vendor, device) = v.split_once(':')?;
        let parse = |s: &str| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok();
        Some((parse(vendor)?, parse(device)?))
    });
    let rank = |t: VkPhysicalDeviceType| match t {
        VkPhysicalDeviceType::DISCRETE_GPU => 0,
        VkPhysicalDeviceType::INTEGRATED_GPU => 1,
        VkPhysicalDeviceType::VIRTUAL_GPU => 2,
        VkPhysicalDeviceType::CPU => 4,
        _ => 3,
    };
    for d in devices.iter_mut() {
        let p = &d.properties;
        let is_selected = selected == Some((p.vendorID, p.deviceID));
        d.order = (!is_selected, rank(p.deviceType), pci_address(d.device).unwrap_or([u32::MAX; 4]));
    }
    // A stable sort: ties keep driver order.
    sort_few_by_key(devices, |d| d.order);
    for d in devices.iter() {
        let name = device_name(&d.properties);
        log!(Level::Driver, "physical device {name:?} ({:?}) from {}", d.properties.deviceType, drivers[d.driver].driver.manifest_path);
    }
}

/// Why a device sits where the Linux order puts it, for the plan.
fn sorted_reason(device: &Reported) -> String {
    let (not_selected, _, pci) = device.order;
    if !not_selected {
        let value = crate::reference::variables::VK_LOADER_DEVICE_SELECT.get().unwrap_or_default();
        return format!("selected by VK_LOADER_DEVICE_SELECT={value}: first");
    }
    let kind = device_type_name(device.properties.deviceType);
    let by_type = format!("a {kind} device (discrete, integrated, virtual, other, cpu come in that order)");
    match pci {
        [u32::MAX, ..] => format!("{by_type}; no PCI address (VK_EXT_pci_bus_info): after those of its type that have one"),
        [domain, bus, dev, function] => format!("{by_type}; then by PCI address {domain:04x}:{bus:02x}:{dev:02x}.{function:x}"),
    }
}

/// A device's name as the log and the plan show it, bounded by its array.
fn device_name(properties: &VkPhysicalDeviceProperties) -> String {
    String::from_utf8_lossy(ffi::fixed_str(&properties.deviceName)).into_owned()
}

fn device_type_name(t: VkPhysicalDeviceType) -> &'static str {
    match t {
        VkPhysicalDeviceType::DISCRETE_GPU => "discrete",
        VkPhysicalDeviceType::INTEGRATED_GPU => "integrated",
        VkPhysicalDeviceType::VIRTUAL_GPU => "virtual",
        VkPhysicalDeviceType::CPU => "cpu",
        _ => "other",
    }
}

/// A device's plan entry.
fn device_entry(d: &DriverInstance, handle: VkPhysicalDevice, properties: &VkPhysicalDeviceProperties, decision: Decision, reason: String) -> DeviceEntry {
    DeviceEntry {
        key: handle.0 as u64,
        name: device_name(properties),
        device_type: device_type_name(properties.deviceType).to_string(),
        vendor_id: properties.vendorID,
        device_id: properties.deviceID,
        api_version: properties.apiVersion,
        driver: d.driver.manifest_path.clone(),
        decision,
        reason,
        position: None,
    }
}

/// Whether a driver's physical device supports `VK_EXT_pci_bus_info`.
fn has_pci_bus_info(device: PhysicalDeviceCalls) -> bool {
    if let Some(recorded) = crate::lazy::recorded_pci_bus_info(device) {
        return recorded;
    }
    let extensions = device.extensions().unwrap_or_default();
    extensions.iter().any(|e| ffi::name_of(e) == crate::lazy::PCI_BUS_INFO.to_bytes())
}

/// PCI domain, bus, device, function through `VK_EXT_pci_bus_info`, where the driver has it.
fn pci_address(device: PhysicalDeviceCalls) -> Option<[u32; 4]> {
    if !has_pci_bus_info(device) {
        return None;
    }
    let pci: VkPhysicalDevicePCIBusInfoPropertiesEXT = device.properties2()?;
    Some([pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction])
}

/// `VkPhysicalDeviceDriverProperties::driverID`, asked through the driver's
/// `vkGetPhysicalDeviceProperties2` whether or not the device advertises Vulkan 1.2 or
/// `VK_KHR_driver_properties`, as the Khronos loader does (a device that does not know the struct
/// leaves it zeroed).
fn driver_id(device: PhysicalDeviceCalls) -> Option<u32> {
    let driver_properties: VkPhysicalDeviceDriverProperties = device.properties2()?;
    Some(driver_properties.driverID.0 as u32)
}

/// The end of the instance chain: the loader's terminator-level physical devices.
///
/// # Safety
/// Vulkan's valid usage, as the layer above passes it on: `instance` the loader's `VkInstance`
/// (or NULL); `pPhysicalDeviceCount` NULL or valid for reading and writing a `u32`;
/// `pPhysicalDevices` NULL or valid for writing `*pPhysicalDeviceCount` handles. Checked anyway:
/// a NULL `instance` or count fails with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_EnumeratePhysicalDevices(
    instance: VkInstance,
    pPhysicalDeviceCount: *mut u32,
    pPhysicalDevices: *mut VkPhysicalDevice,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDevices", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or the loader's live instance (the contract).
        let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let handles: Vec<VkPhysicalDevice> = match instance.physical_devices.refresh(instance) {
            Ok(devices) => devices.iter().map(|d| d.device.handle()).collect(),
            Err(e) => return e,
        };
        instance.record_profiles_once();
        // SAFETY: the count is NULL or valid for a `u32` (the contract), and used through no
        // other pointer while this reference lives.
        if let Some(result) = none_matched(instance, unsafe { pPhysicalDeviceCount.as_mut() }, pPhysicalDevices.is_null()) {
            return result;
        }
        // SAFETY: as above, read only.
        let room = unsafe { pPhysicalDeviceCount.as_ref() }.copied();
        if let Some(room) = room.filter(|&room| !pPhysicalDevices.is_null() && (room as usize) < handles.len()) {
            let total = handles.len();
            crate::object::instance::with_messengers_of(Some(instance), || {
                log!(Level::Info, "terminator_EnumeratePhysicalDevices : Trimming device count from {total} to {room}.")
            });
        }
        // SAFETY: the count and the array as the contract says.
        unsafe { ffi::fill(&handles, pPhysicalDeviceCount, pPhysicalDevices) }
    })
}

/// The end of the instance chain: the physical-device groups (see [`groups`]).
///
/// # Safety
/// Vulkan's valid usage, as the layer above passes it on: `instance` the loader's `VkInstance`
/// (or NULL); `pPhysicalDeviceGroupCount` valid for reading and writing a `u32`;
/// `pPhysicalDeviceGroupProperties` NULL or valid for `*pPhysicalDeviceGroupCount` structures
/// whose `sType` and `pNext` are set (their chains are given to the drivers to fill). Checked
/// anyway: a NULL `instance` or count fails with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_EnumeratePhysicalDeviceGroups(
    instance: VkInstance,
    pPhysicalDeviceGroupCount: *mut u32,
    pPhysicalDeviceGroupProperties: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDeviceGroups", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or the loader's live instance (the contract).
        let Some(instance) = (unsafe { Instance::from_handle(instance) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        if pPhysicalDeviceGroupCount.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // Asked of the drivers on every call, as the Khronos loader does: their groups may change,
        // and a count left from an earlier call must not outrun the application's array.
        // SAFETY: the count is valid, the array NULL or that many structures whose chains the
        // drivers may fill (the contract).
        let app_chains = unsafe { GroupChains::new(pPhysicalDeviceGroupProperties, *pPhysicalDeviceGroupCount as usize) };
        let groups = match groups(instance, &app_chains) {
            Ok(groups) => groups,
            Err(e) => return e,
        };
        // SAFETY: as above; the count is used through no other pointer while this reference lives.
        if let Some(result) = none_matched(instance, unsafe { pPhysicalDeviceGroupCount.as_mut() }, pPhysicalDeviceGroupProperties.is_null()) {
            return result;
        }
        let all: Vec<VkPhysicalDeviceGroupProperties> = groups
            .iter()
            .map(|g| {
                let mut group = VkPhysicalDeviceGroupProperties { physicalDeviceCount: g.members.len() as u32, subsetAllocation: g.subset_allocation, ..Default::default() };
                group.physicalDevices[..g.members.len()].copy_from_slice(&g.members);
                group
            })
            .collect();
        // SAFETY: the count and the array as the contract says.
        unsafe { ffi::fill_groups(&all, pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties) }
    })
}

/// The end of the instance chain: the driver's device extensions, and those of the implicit
/// layers enabled on the instance.
///
/// # Safety
/// Vulkan's valid usage, as the layer above passes it on: `physicalDevice` a terminator-level
/// physical device of this loader (or NULL); `pLayerName` NULL or a NUL-terminated string;
/// `pPropertyCount` valid for reading and writing a `u32`; `pProperties` NULL or valid for
/// writing `*pPropertyCount` structures. Checked anyway: a NULL `physicalDevice`, or a driver
/// without the command, fails with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_EnumerateDeviceExtensionProperties(
    physicalDevice: VkPhysicalDevice,
    pLayerName: *const std::ffi::c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateDeviceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or a physical device of this loader (the contract).
        let Some(device) = (unsafe { PhysicalDevice::from_handle(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let driver = device.driver_calls();
        // SAFETY: as above.
        let instance = unsafe { Instance::of_physical_device(physicalDevice) };
        let from_layers = instance.and_then(|i| i.layers.as_ref()).map(|l| l.implicit_device_extensions());
        match from_layers {
            Some(extra) if pLayerName.is_null() && !extra.is_empty() => {
                let mut all = match driver.extensions() {
                    Ok(list) => list,
                    Err(e) => return e,
                };
                for e in extra {
                    if !all.iter().any(|p| crate::ffi::name_of(p) == crate::ffi::name_of(&e)) {
                        all.push(e);
                    }
                }
                // SAFETY: the count and the array as the contract says.
                unsafe { ffi::fill(&all, pPropertyCount, pProperties) }
            }
            // SAFETY: the layer name, count and array as the contract says.
            _ => unsafe { driver.enumerate_extensions(pLayerName, pPropertyCount, pProperties) },
        }
    })
}

/// The end of the instance chain: the instance's layers (device layers are deprecated).
///
/// # Safety
/// Vulkan's valid usage, as the layer above passes it on: `physicalDevice` a physical device of
/// this loader; `pPropertyCount` valid for reading and writing a `u32`; `pProperties` NULL or
/// valid for writing `*pPropertyCount` structures. Checked anyway: a `physicalDevice` without the
/// loader's magic word is reported and the process stops; a NULL count fails with
/// `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_EnumerateDeviceLayerProperties(
    physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkLayerProperties,
) -> VkResult {
    // SAFETY: a dispatchable handle (the contract) is readable as a `HandleHeader`.
    unsafe { crate::handles::check_physical_device(physicalDevice.0, "vkEnumerateDeviceLayerProperties", "physicalDevice") };
    ffi::guard("vkEnumerateDeviceLayerProperties", VkResult::ERROR_UNKNOWN, || {
        // Device layers are the instance's layers (device-only layers are deprecated).
        // SAFETY: a physical device of this loader, its magic checked above.
        let instance = unsafe { Instance::of_physical_device(physicalDevice) };
        let layers = instance.and_then(|i| i.layers.as_ref()).map(|l| l.properties()).unwrap_or_default();
        // SAFETY: the count and the array as the contract says.
        unsafe { ffi::fill(&layers, pPropertyCount, pProperties) }
    })
}
