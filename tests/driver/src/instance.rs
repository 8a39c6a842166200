//! Global, instance and physical-device commands.

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, PoisonError};

use vk_generated::layer_abi::ICD_LOADER_MAGIC;
use vk_generated::types::*;
use vk_generated::{api_version_major_minor, lookup, make_api_version, EXTENSIONS};

use crate::config::{self, Config, DeviceSpec};
use crate::ffi::{c_string_list, enumerate, enumerate_chained, write_keeping_header};
use crate::{guard, interface_version, write_c_string, write_name};

/// A `VkInstance`. The first word is the loader's (ICD_LOADER_MAGIC until it takes the object).
#[repr(C)]
pub(crate) struct Instance {
    loader_data: usize,
    /// What the devices are made from (again, for one freed while hidden).
    config: Config,
    /// `VkApplicationInfo::apiVersion` as received (1.0 when absent or 0).
    requested: u32,
    /// The devices of `VK_TEST_DRIVER_DEVICES` by position; `None` for one freed while hidden
    /// (`VK_TEST_DRIVER_FREE_HIDDEN`).
    physical_devices: Mutex<Vec<Option<Box<PhysicalDevice>>>>,
}

/// A `VkPhysicalDevice`, owned by its instance.
#[repr(C)]
pub(crate) struct PhysicalDevice {
    loader_data: usize,
    /// Position in the driver's list; also the PCI bus number it reports.
    pub index: u32,
    pub spec: DeviceSpec,
    pub api_version: u32,
    pub device_extensions: Vec<String>,
    /// `VkApplicationInfo::apiVersion` as the driver received it at `vkCreateInstance` (1.0 when
    /// absent or 0), for `vkGetTestDriverRequestedApiVersionTEST`.
    pub instance_api_version_requested: u32,
    /// `VkPhysicalDeviceDriverProperties::driverID`.
    pub driver_id: i32,
}

impl PhysicalDevice {
    pub(crate) fn supports_extension(&self, name: &CStr) -> bool {
        self.device_extensions
            .iter()
            .any(|e| e.as_bytes() == name.to_bytes())
    }
}

impl Instance {
    /// The device at `index` of `VK_TEST_DRIVER_DEVICES`, made.
    fn new_device(config: &Config, index: usize, requested: u32) -> Box<PhysicalDevice> {
        Box::new(PhysicalDevice {
            loader_data: ICD_LOADER_MAGIC,
            index: index as u32,
            spec: config.devices[index].clone(),
            api_version: config.api_version,
            device_extensions: config.device_extensions.clone(),
            instance_api_version_requested: requested,
            driver_id: config.driver_id,
        })
    }

    /// `VK_TEST_DRIVER_GROUPS` if set (positions past the end left out), else the visible
    /// devices, `VK_TEST_DRIVER_GROUP_SIZE` consecutive ones at a time.
    fn groups(&self) -> Vec<Vec<VkPhysicalDevice>> {
        let max = VK_MAX_DEVICE_GROUP_SIZE as usize;
        let visible = self.visible_devices();
        if let Some(groups) = config::groups() {
            let devices = self.physical_devices.lock().unwrap_or_else(PoisonError::into_inner);
            let members = |g: &Vec<usize>| g.iter().filter_map(|&i| devices.get(i)?.as_deref().map(physical_device_handle)).take(max).collect();
            return groups.iter().map(members).filter(|g: &Vec<_>| !g.is_empty()).collect();
        }
        let size = config::group_size().min(max);
        visible.chunks(size).map(<[_]>::to_vec).collect()
    }

    /// The devices `VK_TEST_DRIVER_VISIBLE_DEVICES` shows now (all of them when it is unset);
    /// positions past the end are left out. With `VK_TEST_DRIVER_FREE_HIDDEN`, the hidden ones
    /// are freed first, and those shown again made anew.
    fn visible_devices(&self) -> Vec<VkPhysicalDevice> {
        let positions = config::visible_devices();
        let shown = |i: usize| positions.as_ref().is_none_or(|p| p.contains(&i));
        let free_hidden = config::free_hidden();
        let mut devices = self.physical_devices.lock().unwrap_or_else(PoisonError::into_inner);
        for (i, slot) in devices.iter_mut().enumerate() {
            if free_hidden && !shown(i) {
                *slot = None;
            } else if slot.is_none() && shown(i) {
                *slot = Some(Self::new_device(&self.config, i, self.requested));
            }
        }
        let order = positions.unwrap_or_else(|| (0..devices.len()).collect());
        order.iter().filter_map(|&i| devices.get(i)?.as_deref().map(physical_device_handle)).collect()
    }
}

/// The instance behind a handle, `None` for NULL.
///
/// # Safety
/// `instance` is NULL or an instance this driver made and has not destroyed, alive for `'a`.
unsafe fn instance_ref<'a>(instance: VkInstance) -> Option<&'a Instance> {
    // SAFETY: NULL or a live `Instance` of ours (this function's contract).
    unsafe { (instance.0 as *const Instance).as_ref() }
}

/// The physical device behind a handle, `None` for NULL.
///
/// # Safety
/// `physical_device` is NULL or a physical device this driver made and has not freed (a device
/// is freed only with its instance or, with `VK_TEST_DRIVER_FREE_HIDDEN`, by an enumeration that
/// no longer reports it), alive for `'a`.
pub(crate) unsafe fn physical_device_ref<'a>(
    physical_device: VkPhysicalDevice,
) -> Option<&'a PhysicalDevice> {
    // SAFETY: NULL or a live `PhysicalDevice` of ours (this function's contract).
    unsafe { (physical_device.0 as *const PhysicalDevice).as_ref() }
}

fn physical_device_handle(physical_device: &PhysicalDevice) -> VkPhysicalDevice {
    VkPhysicalDevice(physical_device as *const PhysicalDevice as *mut c_void)
}

fn spec_version(extension: &str) -> u32 {
    lookup::extension(extension.as_bytes()).map_or(1, |id| EXTENSIONS[id as usize].spec_version)
}

/// Writes `names` as extension properties with the two-call idiom.
///
/// # Safety
/// As [`enumerate`].
unsafe fn enumerate_extensions(
    names: &[String],
    count: *mut u32,
    out: *mut VkExtensionProperties,
) -> VkResult {
    let item = |i: usize| {
        let mut props = VkExtensionProperties {
            extensionName: [0; VK_MAX_EXTENSION_NAME_SIZE as usize],
            specVersion: 0,
        };
        write_name(&mut props.extensionName, &names[i]);
        props.specVersion = spec_version(&names[i]);
        props
    };
    // SAFETY: this function's contract.
    unsafe { enumerate(names.len(), count, out, item) }
}

/// `vkCreateInstance`.
///
/// # Safety
/// Valid usage of `vkCreateInstance`: `pCreateInfo` is a valid `VkInstanceCreateInfo` (its
/// extension names, application info and `pNext` chain included) and `pInstance` is valid for a
/// write. A NULL `pCreateInfo` or `pInstance` is answered with `VK_ERROR_INITIALIZATION_FAILED`;
/// the allocator is not used.
pub unsafe extern "system" fn vkCreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a valid create info (this function's contract).
        let Some(info) = (unsafe { pCreateInfo.as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if pInstance.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        config::log_process_names();
        let config = Config::from_env();
        if config.fail_create_instance {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a valid create info's `enabledExtensionCount` names (this function's contract).
        let extensions = unsafe { c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount) };
        for name in extensions {
            if !config
                .instance_extensions
                .iter()
                .any(|e| e.as_bytes() == name.to_bytes())
            {
                return VkResult::ERROR_EXTENSION_NOT_PRESENT;
            }
        }
        if config::fault("null_instance") {
            // SAFETY: a non-NULL `pInstance` is writable (this function's contract).
            unsafe { pInstance.write(VkInstance::NULL) };
            return VkResult::SUCCESS;
        }
        // SAFETY: a valid create info (this function's contract).
        let application = unsafe {
            crate::debug::instance_created(info);
            info.pApplicationInfo.as_ref()
        };
        let requested = application.map_or(0, |app| app.apiVersion);
        let requested = if requested == 0 {
            make_api_version(0, 1, 0, 0)
        } else {
            requested
        };
        // Before interface 5 the loader does not check the version: a driver must refuse > 1.0.
        if interface_version() < 5 && api_version_major_minor(requested) > (1, 0) {
            return VkResult::ERROR_INCOMPATIBLE_DRIVER;
        }
        let physical_devices = (0..config.devices.len()).map(|index| Some(Instance::new_device(&config, index, requested))).collect();
        let instance = Box::new(Instance {
            loader_data: ICD_LOADER_MAGIC,
            config,
            requested,
            physical_devices: Mutex::new(physical_devices),
        });
        // SAFETY: a non-NULL `pInstance` is writable (this function's contract).
        unsafe { pInstance.write(VkInstance(Box::into_raw(instance).cast())) };
        VkResult::SUCCESS
    })
}

/// `vkDestroyInstance`: frees the instance and its physical devices.
///
/// # Safety
/// Valid usage of `vkDestroyInstance`: `instance` is NULL or an instance this driver made, not
/// destroyed before, and no longer used (nor its physical devices) by any other thread. The
/// allocator is not used.
pub unsafe extern "system" fn vkDestroyInstance(
    instance: VkInstance,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !instance.is_null() {
            // SAFETY: `vkCreateInstance` made it with `Box::into_raw`, and it is destroyed once
            // (this function's contract).
            drop(unsafe { Box::from_raw(instance.0 as *mut Instance) });
        }
        let live = crate::surface::live_surfaces();
        if live > 0 {
            eprintln!("vk_test_driver: {live} surface(s) not destroyed at vkDestroyInstance");
        }
    })
}

/// `vkEnumerateInstanceExtensionProperties`: the instance extensions configured.
///
/// # Safety
/// Valid usage of `vkEnumerateInstanceExtensionProperties`: `pPropertyCount` is valid for a read
/// and a write, and a non-NULL `pProperties` for writes of `*pPropertyCount` elements. A NULL
/// `pPropertyCount` is answered with `VK_ERROR_INITIALIZATION_FAILED`; any layer name with
/// `VK_ERROR_LAYER_NOT_PRESENT` (it is not read).
pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if !pLayerName.is_null() {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        }
        // SAFETY: the two-call output array (this function's contract).
        unsafe { enumerate_extensions(&config::instance_extensions(), pPropertyCount, pProperties) }
    })
}

/// `vkEnumerateInstanceVersion`: `VK_TEST_DRIVER_API_VERSION`.
///
/// # Safety
/// Valid usage of `vkEnumerateInstanceVersion`: `pApiVersion` is valid for a write. A NULL one is
/// answered with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumerateInstanceVersion(pApiVersion: *mut u32) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pApiVersion.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        // SAFETY: a non-NULL `pApiVersion` is writable (this function's contract).
        unsafe { pApiVersion.write(config::api_version()) };
        VkResult::SUCCESS
    })
}

/// `vkEnumeratePhysicalDevices`: the visible devices, or what a fault asks for.
///
/// # Safety
/// Valid usage of `vkEnumeratePhysicalDevices`: `instance` is one this driver made and has not
/// destroyed, `pPhysicalDeviceCount` is valid for a read and a write, and a non-NULL
/// `pPhysicalDevices` for writes of `*pPhysicalDeviceCount` handles. A NULL `instance` or
/// `pPhysicalDeviceCount` is answered with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumeratePhysicalDevices(
    instance: VkInstance,
    pPhysicalDeviceCount: *mut u32,
    pPhysicalDevices: *mut VkPhysicalDevice,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live instance of ours (this function's contract).
        let Some(instance) = (unsafe { instance_ref(instance) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if let Some(result) = config::enumerate_result() {
            return VkResult(result);
        }
        let devices = instance.visible_devices();
        // SAFETY: the two-call output array (this function's contract).
        unsafe {
            if let Some(result) = enumerate_with_faults(&devices, pPhysicalDeviceCount, pPhysicalDevices) {
                return result;
            }
            enumerate(devices.len(), pPhysicalDeviceCount, pPhysicalDevices, |i| devices[i])
        }
    })
}

/// `vkEnumeratePhysicalDevices` as a broken driver answers it, when a fault asks: a count two
/// higher than the devices it then writes (the caller's count left as it was, `VK_SUCCESS`), or
/// `VK_INCOMPLETE` forever with nothing written.
///
/// # Safety
/// As [`enumerate`].
unsafe fn enumerate_with_faults(devices: &[VkPhysicalDevice], count: *mut u32, out: *mut VkPhysicalDevice) -> Option<VkResult> {
    if count.is_null() {
        return None;
    }
    if config::fault("inflated_device_count") {
        if out.is_null() {
            // SAFETY: a non-NULL `count` is writable (this function's contract).
            unsafe { count.write(devices.len() as u32 + 2) };
        } else {
            // SAFETY: a non-NULL `count` is readable and `out` holds `*count` handles (this
            // function's contract).
            let room = unsafe { count.read() } as usize;
            for (i, &device) in devices.iter().take(room).enumerate() {
                // SAFETY: as above; `i` is below `*count`.
                unsafe { out.add(i).write(device) };
            }
        }
        return Some(VkResult::SUCCESS);
    }
    if config::fault("endless_incomplete") && !out.is_null() {
        return Some(VkResult::INCOMPLETE);
    }
    None
}

/// `vkEnumeratePhysicalDeviceGroups`: the groups of `VK_TEST_DRIVER_GROUPS` or
/// `VK_TEST_DRIVER_GROUP_SIZE`. The properties structures the driver knows in each group's
/// `pNext` chain are filled for its first device (test only: it shows that the application's
/// chain reached the driver).
///
/// # Safety
/// Valid usage of `vkEnumeratePhysicalDeviceGroups`: `instance` is one this driver made and has
/// not destroyed, `pPhysicalDeviceGroupCount` is valid for a read and a write, and a non-NULL
/// `pPhysicalDeviceGroupProperties` for reads and writes of `*pPhysicalDeviceGroupCount`
/// elements, each with its `sType` set and a valid `pNext` chain of output structures. A NULL
/// `instance` or `pPhysicalDeviceGroupCount` is answered with `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn vkEnumeratePhysicalDeviceGroups(
    instance: VkInstance,
    pPhysicalDeviceGroupCount: *mut u32,
    pPhysicalDeviceGroupProperties: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live instance of ours (this function's contract).
        let Some(instance) = (unsafe { instance_ref(instance) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let groups = instance.groups();
        let group = |i: usize, next: *mut VkBaseOutStructure| {
            let mut devices = [VkPhysicalDevice::NULL; VK_MAX_DEVICE_GROUP_SIZE as usize];
            for (slot, &device) in devices.iter_mut().zip(&groups[i]) {
                *slot = device;
            }
            // SAFETY: a device of this instance that the enumeration above kept (freed only by a
            // later one).
            if let Some(first) = unsafe { physical_device_ref(groups[i][0]) } {
                // SAFETY: the caller's `pNext` chain of output structures (this function's
                // contract).
                unsafe { fill_properties_chain(first, next) };
            }
            VkPhysicalDeviceGroupProperties {
                physicalDeviceCount: groups[i].len() as u32,
                physicalDevices: devices,
                subsetAllocation: VK_FALSE,
                ..Default::default()
            }
        };
        // SAFETY: the two-call output array of structures with their headers set (this
        // function's contract).
        unsafe {
            enumerate_chained(groups.len(), pPhysicalDeviceGroupCount, pPhysicalDeviceGroupProperties, group)
        }
    })
}

fn properties(physical_device: &PhysicalDevice) -> VkPhysicalDeviceProperties {
    let mut props = VkPhysicalDeviceProperties {
        apiVersion: physical_device.api_version,
        driverVersion: make_api_version(0, 0, 1, 0),
        vendorID: physical_device.spec.vendor_id,
        deviceID: physical_device.spec.device_id,
        deviceType: physical_device.spec.device_type,
        ..Default::default()
    };
    let name = physical_device.spec.forced_name.clone().unwrap_or_else(|| format!(
        "Test Driver {} {}",
        physical_device.spec.type_name, physical_device.index
    ));
    write_name(&mut props.deviceName, &name);
    props.pipelineCacheUUID = *b"vk_test_driver\0\0";
    props.pipelineCacheUUID[15] = physical_device.index as u8;
    let limits = &mut props.limits;
    limits.maxImageDimension1D = 16384;
    limits.maxImageDimension2D = 16384;
    limits.maxImageDimension3D = 2048;
    limits.maxImageDimensionCube = 16384;
    limits.maxImageArrayLayers = 2048;
    limits.maxUniformBufferRange = 65536;
    limits.maxStorageBufferRange = 1 << 30;
    limits.maxPushConstantsSize = 256;
    limits.maxMemoryAllocationCount = 4096;
    limits.maxBoundDescriptorSets = 8;
    limits.maxComputeWorkGroupCount = [65535; 3];
    limits.maxComputeWorkGroupInvocations = 1024;
    limits.maxComputeWorkGroupSize = [1024, 1024, 64];
    limits.maxViewports = 16;
    limits.maxViewportDimensions = [16384; 2];
    limits.maxFramebufferWidth = 16384;
    limits.maxFramebufferHeight = 16384;
    limits.maxFramebufferLayers = 2048;
    limits.maxColorAttachments = 8;
    limits.minMemoryMapAlignment = 64;
    limits.nonCoherentAtomSize = 64;
    limits.timestampPeriod = 1.0;
    limits.discreteQueuePriorities = 2;
    props
}

/// `vkGetPhysicalDeviceProperties`.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceProperties`: `physicalDevice` is one this driver made and
/// has not freed, `pProperties` is valid for a write. NULL for either is ignored.
pub unsafe extern "system" fn vkGetPhysicalDeviceProperties(
    physicalDevice: VkPhysicalDevice,
    pProperties: *mut VkPhysicalDeviceProperties,
) {
    guard((), || {
        // SAFETY: NULL or a live physical device of ours (this function's contract).
        let pd = unsafe { physical_device_ref(physicalDevice) };
        if let (Some(pd), false) = (pd, pProperties.is_null()) {
            // SAFETY: a non-NULL `pProperties` is writable (this function's contract).
            unsafe { pProperties.write(properties(pd)) };
        }
    })
}

/// `vkGetPhysicalDeviceProperties2`: the core properties and the structures of the chain the
/// driver knows (PCI bus info, IDs, driver properties).
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceProperties2`: `physicalDevice` is one this driver made and
/// has not freed, `pProperties` is valid for reads and writes, its `sType` set and its `pNext` a
/// valid chain of output structures. NULL for either handle or pointer is ignored.
pub unsafe extern "system" fn vkGetPhysicalDeviceProperties2(
    physicalDevice: VkPhysicalDevice,
    pProperties: *mut VkPhysicalDeviceProperties2,
) {
    guard((), || {
        // SAFETY: NULL or a live physical device of ours (this function's contract).
        let Some(pd) = (unsafe { physical_device_ref(physicalDevice) }) else { return };
        if pProperties.is_null() {
            return;
        }
        let properties2 = |next| {
            // SAFETY: the caller's chain of output structures (this function's contract).
            unsafe { fill_properties_chain(pd, next) };
            VkPhysicalDeviceProperties2 { properties: properties(pd), ..Default::default() }
        };
        // SAFETY: a non-NULL `pProperties` is a writable output structure with its header set
        // (this function's contract).
        unsafe { write_keeping_header(pProperties, properties2) };
    })
}

/// Fills the extension structures the driver knows in a `VkPhysicalDeviceProperties2` chain,
/// each written whole with its header kept.
///
/// # Safety
/// `next` is NULL or a valid chain of output structures: each element valid for reads and
/// writes of the structure its `sType` names, its `sType` and `pNext` set.
unsafe fn fill_properties_chain(pd: &PhysicalDevice, mut next: *mut VkBaseOutStructure) {
    while !next.is_null() {
        // SAFETY: a chain element's header is readable (this function's contract).
        let header = unsafe { next.read() };
        let pci_bus_info = |_| VkPhysicalDevicePCIBusInfoPropertiesEXT {
            pciDomain: 0,
            pciBus: pd.index,
            pciDevice: 0,
            pciFunction: 0,
            ..Default::default()
        };
        // SAFETY: an element whose `sType` names a structure is that structure, with its header
        // set (this function's contract).
        unsafe {
            match header.sType {
                VkStructureType::PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT => {
                    write_keeping_header(next.cast(), pci_bus_info)
                }
                VkStructureType::PHYSICAL_DEVICE_ID_PROPERTIES => {
                    write_keeping_header(next.cast(), |_| id_properties(pd))
                }
                VkStructureType::PHYSICAL_DEVICE_DRIVER_PROPERTIES => {
                    write_keeping_header(next.cast(), |_| driver_properties(pd))
                }
                _ => {}
            }
        }
        next = header.pNext;
    }
}

fn id_properties(pd: &PhysicalDevice) -> VkPhysicalDeviceIDProperties {
    let mut uuid = [0u8; VK_UUID_SIZE as usize];
    uuid[..4].copy_from_slice(b"VKTD");
    uuid[4..8].copy_from_slice(&pd.spec.vendor_id.to_le_bytes());
    uuid[8..12].copy_from_slice(&pd.spec.device_id.to_le_bytes());
    uuid[12..16].copy_from_slice(&pd.index.to_le_bytes());
    VkPhysicalDeviceIDProperties {
        deviceUUID: uuid,
        driverUUID: *b"vk_test_driver\0\0",
        deviceLUID: [0; VK_LUID_SIZE as usize],
        deviceNodeMask: 0,
        deviceLUIDValid: VK_FALSE,
        ..Default::default()
    }
}

/// `driverID` is 0 unless configured: `VkDriverId` has no value for a test driver.
fn driver_properties(pd: &PhysicalDevice) -> VkPhysicalDeviceDriverProperties {
    let mut driver = VkPhysicalDeviceDriverProperties {
        driverID: VkDriverId(pd.driver_id),
        conformanceVersion: VkConformanceVersion::default(),
        ..Default::default()
    };
    write_c_string(&mut driver.driverName, "vk_test_driver");
    write_c_string(&mut driver.driverInfo, config::library_tag().unwrap_or(""));
    driver
}

fn features() -> VkPhysicalDeviceFeatures {
    VkPhysicalDeviceFeatures {
        robustBufferAccess: VK_TRUE,
        ..Default::default()
    }
}

/// Whether every feature `requested` enables is one the driver reports.
pub(crate) fn features_supported(requested: &VkPhysicalDeviceFeatures) -> bool {
    const WORDS: usize = size_of::<VkPhysicalDeviceFeatures>() / size_of::<VkBool32>();
    let supported = features();
    // SAFETY: VkPhysicalDeviceFeatures is a C struct of VkBool32 members only.
    let (requested, supported) = unsafe {
        (
            &*(requested as *const VkPhysicalDeviceFeatures as *const [VkBool32; WORDS]),
            &*(&supported as *const VkPhysicalDeviceFeatures as *const [VkBool32; WORDS]),
        )
    };
    requested
        .iter()
        .zip(supported)
        .all(|(&r, &s)| r == VK_FALSE || s != VK_FALSE)
}

/// `vkGetPhysicalDeviceFeatures`: `robustBufferAccess` only.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceFeatures`: `pFeatures` is valid for a write (NULL is
/// ignored, as is a NULL `physicalDevice`; the handle is not read).
pub unsafe extern "system" fn vkGetPhysicalDeviceFeatures(
    physicalDevice: VkPhysicalDevice,
    pFeatures: *mut VkPhysicalDeviceFeatures,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pFeatures.is_null() {
            // SAFETY: a non-NULL `pFeatures` is writable (this function's contract).
            unsafe { pFeatures.write(features()) };
        }
    })
}

/// `vkGetPhysicalDeviceFeatures2`: the core features; the chain is left as it is.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceFeatures2`: `pFeatures` is valid for reads and writes,
/// its `sType` and `pNext` set (NULL is ignored, as is a NULL `physicalDevice`; the handle is not
/// read).
pub unsafe extern "system" fn vkGetPhysicalDeviceFeatures2(
    physicalDevice: VkPhysicalDevice,
    pFeatures: *mut VkPhysicalDeviceFeatures2,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pFeatures.is_null() {
            let features2 = |_| VkPhysicalDeviceFeatures2 { features: features(), ..Default::default() };
            // SAFETY: a non-NULL `pFeatures` is a writable output structure with its header set
            // (this function's contract).
            unsafe { write_keeping_header(pFeatures, features2) };
        }
    })
}

fn queue_family() -> VkQueueFamilyProperties {
    VkQueueFamilyProperties {
        queueFlags: VkQueueFlags::GRAPHICS_BIT
            | VkQueueFlags::COMPUTE_BIT
            | VkQueueFlags::TRANSFER_BIT,
        queueCount: QUEUE_COUNT,
        timestampValidBits: 64,
        minImageTransferGranularity: VkExtent3D {
            width: 1,
            height: 1,
            depth: 1,
        },
    }
}

/// The one queue family has this many queues.
pub(crate) const QUEUE_COUNT: u32 = 2;

/// `vkGetPhysicalDeviceQueueFamilyProperties`: one family.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceQueueFamilyProperties`: `pQueueFamilyPropertyCount` is
/// valid for a read and a write, a non-NULL `pQueueFamilyProperties` for writes of
/// `*pQueueFamilyPropertyCount` elements. A NULL `physicalDevice` or count is ignored; the
/// handle is not read.
pub unsafe extern "system" fn vkGetPhysicalDeviceQueueFamilyProperties(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties,
) {
    guard((), || {
        if !physicalDevice.is_null() {
            // SAFETY: the two-call output array (this function's contract).
            unsafe { enumerate(1, pQueueFamilyPropertyCount, pQueueFamilyProperties, |_| queue_family()) };
        }
    })
}

/// `vkGetPhysicalDeviceQueueFamilyProperties2`: one family; the chains are left as they are.
///
/// # Safety
/// As [`vkGetPhysicalDeviceQueueFamilyProperties`], and each element has its `sType` and `pNext`
/// set.
pub unsafe extern "system" fn vkGetPhysicalDeviceQueueFamilyProperties2(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties2,
) {
    guard((), || {
        if !physicalDevice.is_null() {
            let family = |_, _| VkQueueFamilyProperties2 { queueFamilyProperties: queue_family(), ..Default::default() };
            // SAFETY: the two-call output array of structures with their headers set (this
            // function's contract).
            unsafe { enumerate_chained(1, pQueueFamilyPropertyCount, pQueueFamilyProperties, family) };
        }
    })
}

fn memory_properties() -> VkPhysicalDeviceMemoryProperties {
    let mut props = VkPhysicalDeviceMemoryProperties {
        memoryTypeCount: 2,
        memoryHeapCount: 2,
        ..Default::default()
    };
    props.memoryTypes[0] = VkMemoryType {
        propertyFlags: VkMemoryPropertyFlags::DEVICE_LOCAL_BIT,
        heapIndex: 0,
    };
    props.memoryTypes[1] = VkMemoryType {
        propertyFlags: VkMemoryPropertyFlags::HOST_VISIBLE_BIT
            | VkMemoryPropertyFlags::HOST_COHERENT_BIT,
        heapIndex: 1,
    };
    props.memoryHeaps[0] = VkMemoryHeap {
        size: 8 << 30,
        flags: VkMemoryHeapFlags::DEVICE_LOCAL_BIT,
    };
    props.memoryHeaps[1] = VkMemoryHeap {
        size: 16 << 30,
        flags: VkMemoryHeapFlags::empty(),
    };
    props
}

/// `vkGetPhysicalDeviceMemoryProperties`: a device-local heap and a host-visible one.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceMemoryProperties`: `pMemoryProperties` is valid for a write
/// (NULL is ignored, as is a NULL `physicalDevice`; the handle is not read).
pub unsafe extern "system" fn vkGetPhysicalDeviceMemoryProperties(
    physicalDevice: VkPhysicalDevice,
    pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pMemoryProperties.is_null() {
            // SAFETY: a non-NULL `pMemoryProperties` is writable (this function's contract).
            unsafe { pMemoryProperties.write(memory_properties()) };
        }
    })
}

/// `vkGetPhysicalDeviceMemoryProperties2`: as the 1-variant; the chain is left as it is.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceMemoryProperties2`: `pMemoryProperties` is valid for reads
/// and writes, its `sType` and `pNext` set (NULL is ignored, as is a NULL `physicalDevice`; the
/// handle is not read).
pub unsafe extern "system" fn vkGetPhysicalDeviceMemoryProperties2(
    physicalDevice: VkPhysicalDevice,
    pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties2,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pMemoryProperties.is_null() {
            let memory2 = |_| VkPhysicalDeviceMemoryProperties2 { memoryProperties: memory_properties(), ..Default::default() };
            // SAFETY: a non-NULL `pMemoryProperties` is a writable output structure with its
            // header set (this function's contract).
            unsafe { write_keeping_header(pMemoryProperties, memory2) };
        }
    })
}

// The Khronos loader requires every core 1.0 instance command of a driver, so these three exist:
// no format has tiling features, no image can be created, nothing is sparse.

/// `vkGetPhysicalDeviceFormatProperties`: no tiling features, and the format's own number as its
/// buffer features (an answer that tells formats apart). With the fault `abort_on_format_query`,
/// aborts the process instead, as a driver that crashes on a format it does not expect (the
/// Khronos suite's test driver reads past its empty format table).
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceFormatProperties`: `pFormatProperties` is valid for a write
/// (NULL is ignored, as is a NULL `physicalDevice`; the handle is not read).
pub unsafe extern "system" fn vkGetPhysicalDeviceFormatProperties(
    physicalDevice: VkPhysicalDevice,
    format: VkFormat,
    pFormatProperties: *mut VkFormatProperties,
) {
    if config::fault("abort_on_format_query") {
        eprintln!("vk_test_driver: vkGetPhysicalDeviceFormatProperties called with abort_on_format_query");
        std::process::abort();
    }
    if !physicalDevice.is_null() && !pFormatProperties.is_null() {
        // SAFETY: a non-NULL `pFormatProperties` is writable (this function's contract).
        unsafe { pFormatProperties.write(VkFormatProperties { bufferFeatures: VkFormatFeatureFlags(format.0 as u32), ..Default::default() }) };
    }
}

/// `vkGetPhysicalDeviceImageFormatProperties`: `VK_ERROR_FORMAT_NOT_SUPPORTED`, nothing written.
///
/// # Safety
/// None beyond the signature: no pointer is read or written.
pub unsafe extern "system" fn vkGetPhysicalDeviceImageFormatProperties(
    _physicalDevice: VkPhysicalDevice,
    _format: VkFormat,
    _type: VkImageType,
    _tiling: VkImageTiling,
    _usage: VkImageUsageFlags,
    _flags: VkImageCreateFlags,
    _pImageFormatProperties: *mut VkImageFormatProperties,
) -> VkResult {
    VkResult::ERROR_FORMAT_NOT_SUPPORTED
}

/// `vkGetPhysicalDeviceSparseImageFormatProperties`: no properties.
///
/// # Safety
/// Valid usage of `vkGetPhysicalDeviceSparseImageFormatProperties`: `pPropertyCount` is valid for
/// a write (NULL is ignored). `pProperties` is not written.
pub unsafe extern "system" fn vkGetPhysicalDeviceSparseImageFormatProperties(
    _physicalDevice: VkPhysicalDevice,
    _format: VkFormat,
    _type: VkImageType,
    _samples: VkSampleCountFlagBits,
    _usage: VkImageUsageFlags,
    _tiling: VkImageTiling,
    pPropertyCount: *mut u32,
    _pProperties: *mut VkSparseImageFormatProperties,
) {
    if !pPropertyCount.is_null() {
        // SAFETY: a non-NULL `pPropertyCount` is writable (this function's contract).
        unsafe { pPropertyCount.write(0) };
    }
}

/// `vkEnumerateDeviceExtensionProperties`: the device extensions configured.
///
/// # Safety
/// Valid usage of `vkEnumerateDeviceExtensionProperties`: `physicalDevice` is one this driver
/// made and has not freed, `pPropertyCount` is valid for a read and a write, and a non-NULL
/// `pProperties` for writes of `*pPropertyCount` elements. A NULL `physicalDevice` or
/// `pPropertyCount` is answered with `VK_ERROR_INITIALIZATION_FAILED`; any layer name with
/// `VK_ERROR_LAYER_NOT_PRESENT` (it is not read).
pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    physicalDevice: VkPhysicalDevice,
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a live physical device of ours (this function's contract).
        let Some(pd) = (unsafe { physical_device_ref(physicalDevice) }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if !pLayerName.is_null() {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        }
        // SAFETY: the two-call output array (this function's contract).
        unsafe { enumerate_extensions(&pd.device_extensions, pPropertyCount, pProperties) }
    })
}

/// `vkGetTestDriverRequestedApiVersionTEST` (test only, a physical-device command so that a
/// loader can reach it as an unknown one): the `apiVersion` the driver's `vkCreateInstance` got.
///
/// # Safety
/// `physicalDevice` is NULL (answered with 0) or one this driver made and has not freed.
pub unsafe extern "system" fn vkGetTestDriverRequestedApiVersionTEST(
    physicalDevice: VkPhysicalDevice,
) -> u32 {
    guard(0, || {
        // SAFETY: NULL or a live physical device of ours (this function's contract).
        let pd = unsafe { physical_device_ref(physicalDevice) };
        pd.map_or(0, |pd| pd.instance_api_version_requested)
    })
}

// The signatures above are exactly the registry's.
const _: () = {
    let _: PFN_vkCreateInstance = Some(vkCreateInstance);
    let _: PFN_vkDestroyInstance = Some(vkDestroyInstance);
    let _: PFN_vkEnumerateInstanceExtensionProperties =
        Some(vkEnumerateInstanceExtensionProperties);
    let _: PFN_vkEnumerateInstanceVersion = Some(vkEnumerateInstanceVersion);
    let _: PFN_vkEnumeratePhysicalDevices = Some(vkEnumeratePhysicalDevices);
    let _: PFN_vkEnumeratePhysicalDeviceGroups = Some(vkEnumeratePhysicalDeviceGroups);
    let _: PFN_vkGetPhysicalDeviceProperties = Some(vkGetPhysicalDeviceProperties);
    let _: PFN_vkGetPhysicalDeviceProperties2 = Some(vkGetPhysicalDeviceProperties2);
    let _: PFN_vkGetPhysicalDeviceFeatures = Some(vkGetPhysicalDeviceFeatures);
    let _: PFN_vkGetPhysicalDeviceFeatures2 = Some(vkGetPhysicalDeviceFeatures2);
    let _: PFN_vkGetPhysicalDeviceQueueFamilyProperties =
        Some(vkGetPhysicalDeviceQueueFamilyProperties);
    let _: PFN_vkGetPhysicalDeviceQueueFamilyProperties2 =
        Some(vkGetPhysicalDeviceQueueFamilyProperties2);
    let _: PFN_vkGetPhysicalDeviceMemoryProperties = Some(vkGetPhysicalDeviceMemoryProperties);
    let _: PFN_vkGetPhysicalDeviceMemoryProperties2 = Some(vkGetPhysicalDeviceMemoryProperties2);
    let _: PFN_vkGetPhysicalDeviceFormatProperties = Some(vkGetPhysicalDeviceFormatProperties);
    let _: PFN_vkGetPhysicalDeviceImageFormatProperties =
        Some(vkGetPhysicalDeviceImageFormatProperties);
    let _: PFN_vkGetPhysicalDeviceSparseImageFormatProperties =
        Some(vkGetPhysicalDeviceSparseImageFormatProperties);
    let _: PFN_vkEnumerateDeviceExtensionProperties = Some(vkEnumerateDeviceExtensionProperties);
};
