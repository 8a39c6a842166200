//! Global, instance and physical-device commands.

use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, PoisonError};

use vk_generated::layer_abi::ICD_LOADER_MAGIC;
use vk_generated::types::*;
use vk_generated::{api_version_major_minor, lookup, make_api_version, EXTENSIONS};

use crate::config::{self, Config, DeviceSpec};
use crate::{c_string_list, enumerate, guard, interface_version, write_c_string, write_name};

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

unsafe fn instance_ref<'a>(instance: VkInstance) -> Option<&'a Instance> {
    (instance.0 as *const Instance).as_ref()
}

pub(crate) unsafe fn physical_device_ref<'a>(
    physical_device: VkPhysicalDevice,
) -> Option<&'a PhysicalDevice> {
    (physical_device.0 as *const PhysicalDevice).as_ref()
}

fn physical_device_handle(physical_device: &PhysicalDevice) -> VkPhysicalDevice {
    VkPhysicalDevice(physical_device as *const PhysicalDevice as *mut c_void)
}

fn spec_version(extension: &str) -> u32 {
    lookup::extension(extension.as_bytes()).map_or(1, |id| EXTENSIONS[id as usize].spec_version)
}

unsafe fn enumerate_extensions(
    names: &[String],
    count: *mut u32,
    out: *mut VkExtensionProperties,
) -> VkResult {
    enumerate(names.len(), count, out, |i, dst| {
        let mut props = VkExtensionProperties {
            extensionName: [0; VK_MAX_EXTENSION_NAME_SIZE as usize],
            specVersion: 0,
        };
        write_name(&mut props.extensionName, &names[i]);
        props.specVersion = spec_version(&names[i]);
        dst.write(props);
    })
}

pub unsafe extern "system" fn vkCreateInstance(
    pCreateInfo: *const VkInstanceCreateInfo,
    _pAllocator: *const VkAllocationCallbacks,
    pInstance: *mut VkInstance,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if pInstance.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        let config = Config::from_env();
        if config.fail_create_instance {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        for name in c_string_list(info.ppEnabledExtensionNames, info.enabledExtensionCount) {
            if !config
                .instance_extensions
                .iter()
                .any(|e| e.as_bytes() == name.to_bytes())
            {
                return VkResult::ERROR_EXTENSION_NOT_PRESENT;
            }
        }
        if config::fault("null_instance") {
            pInstance.write(VkInstance::NULL);
            return VkResult::SUCCESS;
        }
        crate::debug::instance_created(info);
        let requested = info
            .pApplicationInfo
            .as_ref()
            .map_or(0, |app| app.apiVersion);
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
        pInstance.write(VkInstance(Box::into_raw(instance).cast()));
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkDestroyInstance(
    instance: VkInstance,
    _pAllocator: *const VkAllocationCallbacks,
) {
    guard((), || {
        if !instance.is_null() {
            drop(Box::from_raw(instance.0 as *mut Instance));
        }
        let live = crate::surface::live_surfaces();
        if live > 0 {
            eprintln!("vk_test_driver: {live} surface(s) not destroyed at vkDestroyInstance");
        }
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceExtensionProperties(
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if !pLayerName.is_null() {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        }
        enumerate_extensions(&config::instance_extensions(), pPropertyCount, pProperties)
    })
}

pub unsafe extern "system" fn vkEnumerateInstanceVersion(pApiVersion: *mut u32) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        if pApiVersion.is_null() {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        }
        pApiVersion.write(config::api_version());
        VkResult::SUCCESS
    })
}

pub unsafe extern "system" fn vkEnumeratePhysicalDevices(
    instance: VkInstance,
    pPhysicalDeviceCount: *mut u32,
    pPhysicalDevices: *mut VkPhysicalDevice,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(instance) = instance_ref(instance) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if let Some(result) = config::enumerate_result() {
            return VkResult(result);
        }
        let devices = instance.visible_devices();
        if let Some(result) = enumerate_with_faults(&devices, pPhysicalDeviceCount, pPhysicalDevices) {
            return result;
        }
        enumerate(
            devices.len(),
            pPhysicalDeviceCount,
            pPhysicalDevices,
            // SAFETY: `enumerate` passes each of the caller's slots once.
            |i, dst| unsafe { dst.write(devices[i]) },
        )
    })
}

/// `vkEnumeratePhysicalDevices` as a broken driver answers it, when a fault asks: a count two
/// higher than the devices it then writes (the caller's count left as it was, `VK_SUCCESS`), or
/// `VK_INCOMPLETE` forever with nothing written.
unsafe fn enumerate_with_faults(devices: &[VkPhysicalDevice], count: *mut u32, out: *mut VkPhysicalDevice) -> Option<VkResult> {
    if count.is_null() {
        return None;
    }
    if config::fault("inflated_device_count") {
        if out.is_null() {
            *count = devices.len() as u32 + 2;
        } else {
            // SAFETY: valid usage: `count` is readable and `out` holds `*count` handles.
            let room = unsafe { *count } as usize;
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

pub unsafe extern "system" fn vkEnumeratePhysicalDeviceGroups(
    instance: VkInstance,
    pPhysicalDeviceGroupCount: *mut u32,
    pPhysicalDeviceGroupProperties: *mut VkPhysicalDeviceGroupProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(instance) = instance_ref(instance) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let groups = instance.groups();
        enumerate(
            groups.len(),
            pPhysicalDeviceGroupCount,
            pPhysicalDeviceGroupProperties,
            |i, dst| {
                // sType and pNext are the caller's.
                let group = &mut *dst;
                group.physicalDeviceCount = groups[i].len() as u32;
                group.physicalDevices = [VkPhysicalDevice::NULL; VK_MAX_DEVICE_GROUP_SIZE as usize];
                for (slot, &device) in group.physicalDevices.iter_mut().zip(&groups[i]) {
                    *slot = device;
                }
                group.subsetAllocation = VK_FALSE;
                // Test-only: shows that the application's chain reached the driver.
                // SAFETY: a device of this instance, freed only by a later enumeration.
                if let Some(first) = unsafe { physical_device_ref(groups[i][0]) } {
                    // SAFETY: valid usage: the caller's `pNext` chain of output structures.
                    unsafe { fill_properties_chain(first, group.pNext.cast()) };
                }
            },
        )
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

pub unsafe extern "system" fn vkGetPhysicalDeviceProperties(
    physicalDevice: VkPhysicalDevice,
    pProperties: *mut VkPhysicalDeviceProperties,
) {
    guard((), || {
        if let (Some(pd), false) = (physical_device_ref(physicalDevice), pProperties.is_null()) {
            pProperties.write(properties(pd));
        }
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceProperties2(
    physicalDevice: VkPhysicalDevice,
    pProperties: *mut VkPhysicalDeviceProperties2,
) {
    guard((), || {
        let (Some(pd), Some(props)) = (physical_device_ref(physicalDevice), pProperties.as_mut())
        else {
            return;
        };
        props.properties = properties(pd);
        fill_properties_chain(pd, props.pNext.cast());
    })
}

/// Fills the extension structures the driver knows in a `VkPhysicalDeviceProperties2` chain.
unsafe fn fill_properties_chain(pd: &PhysicalDevice, mut next: *mut VkBaseOutStructure) {
    while let Some(item) = next.as_mut() {
        match item.sType {
            VkStructureType::PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT => {
                let pci = &mut *(next as *mut VkPhysicalDevicePCIBusInfoPropertiesEXT);
                pci.pciDomain = 0;
                pci.pciBus = pd.index;
                pci.pciDevice = 0;
                pci.pciFunction = 0;
            }
            VkStructureType::PHYSICAL_DEVICE_ID_PROPERTIES => {
                let id = &mut *(next as *mut VkPhysicalDeviceIDProperties);
                let mut uuid = [0u8; VK_UUID_SIZE as usize];
                uuid[..4].copy_from_slice(b"VKTD");
                uuid[4..8].copy_from_slice(&pd.spec.vendor_id.to_le_bytes());
                uuid[8..12].copy_from_slice(&pd.spec.device_id.to_le_bytes());
                uuid[12..16].copy_from_slice(&pd.index.to_le_bytes());
                id.deviceUUID = uuid;
                id.driverUUID = *b"vk_test_driver\0\0";
                id.deviceLUID = [0; VK_LUID_SIZE as usize];
                id.deviceNodeMask = 0;
                id.deviceLUIDValid = VK_FALSE;
            }
            VkStructureType::PHYSICAL_DEVICE_DRIVER_PROPERTIES => {
                // 0 unless configured: VkDriverId has no value for a test driver.
                let driver = &mut *(next as *mut VkPhysicalDeviceDriverProperties);
                driver.driverID = VkDriverId(pd.driver_id);
                write_c_string(&mut driver.driverName, "vk_test_driver");
                write_c_string(&mut driver.driverInfo, config::library_tag().unwrap_or(""));
                driver.conformanceVersion = VkConformanceVersion::default();
            }
            _ => {}
        }
        next = item.pNext;
    }
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

pub unsafe extern "system" fn vkGetPhysicalDeviceFeatures(
    physicalDevice: VkPhysicalDevice,
    pFeatures: *mut VkPhysicalDeviceFeatures,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pFeatures.is_null() {
            pFeatures.write(features());
        }
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceFeatures2(
    physicalDevice: VkPhysicalDevice,
    pFeatures: *mut VkPhysicalDeviceFeatures2,
) {
    guard((), || {
        if let (false, Some(f)) = (physicalDevice.is_null(), pFeatures.as_mut()) {
            f.features = features();
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

pub unsafe extern "system" fn vkGetPhysicalDeviceQueueFamilyProperties(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties,
) {
    guard((), || {
        if !physicalDevice.is_null() {
            enumerate(
                1,
                pQueueFamilyPropertyCount,
                pQueueFamilyProperties,
                |_, dst| dst.write(queue_family()),
            );
        }
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceQueueFamilyProperties2(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties2,
) {
    guard((), || {
        if !physicalDevice.is_null() {
            enumerate(
                1,
                pQueueFamilyPropertyCount,
                pQueueFamilyProperties,
                |_, dst| (*dst).queueFamilyProperties = queue_family(),
            );
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

pub unsafe extern "system" fn vkGetPhysicalDeviceMemoryProperties(
    physicalDevice: VkPhysicalDevice,
    pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties,
) {
    guard((), || {
        if !physicalDevice.is_null() && !pMemoryProperties.is_null() {
            pMemoryProperties.write(memory_properties());
        }
    })
}

pub unsafe extern "system" fn vkGetPhysicalDeviceMemoryProperties2(
    physicalDevice: VkPhysicalDevice,
    pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties2,
) {
    guard((), || {
        if let (false, Some(m)) = (physicalDevice.is_null(), pMemoryProperties.as_mut()) {
            m.memoryProperties = memory_properties();
        }
    })
}

// The Khronos loader requires every core 1.0 instance command of a driver, so these three exist:
// no format has features, no image can be created, nothing is sparse.

pub unsafe extern "system" fn vkGetPhysicalDeviceFormatProperties(
    physicalDevice: VkPhysicalDevice,
    _format: VkFormat,
    pFormatProperties: *mut VkFormatProperties,
) {
    if !physicalDevice.is_null() && !pFormatProperties.is_null() {
        pFormatProperties.write(VkFormatProperties::default());
    }
}

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
        pPropertyCount.write(0);
    }
}

pub unsafe extern "system" fn vkEnumerateDeviceExtensionProperties(
    physicalDevice: VkPhysicalDevice,
    pLayerName: *const c_char,
    pPropertyCount: *mut u32,
    pProperties: *mut VkExtensionProperties,
) -> VkResult {
    guard(VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(pd) = physical_device_ref(physicalDevice) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if !pLayerName.is_null() {
            return VkResult::ERROR_LAYER_NOT_PRESENT;
        }
        enumerate_extensions(&pd.device_extensions, pPropertyCount, pProperties)
    })
}

/// `vkGetTestDriverRequestedApiVersionTEST` (test only, a physical-device command so that a
/// loader can reach it as an unknown one): the `apiVersion` the driver's `vkCreateInstance` got.
pub unsafe extern "system" fn vkGetTestDriverRequestedApiVersionTEST(
    physicalDevice: VkPhysicalDevice,
) -> u32 {
    guard(0, || {
        physical_device_ref(physicalDevice).map_or(0, |pd| pd.instance_api_version_requested)
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
