//! Instance functionality emulated for drivers that lack it (LDP_LOADER_8), so one instance looks
//! the same whatever mix of drivers it spans: the `2` queries of
//! `VK_KHR_get_physical_device_properties2` and `VK_KHR_get_display_properties2` through their
//! 1.0 forms (the application's sType and pNext left untouched), the external memory, semaphore
//! and fence capability queries (no external handle types supported),
//! `vkGetPhysicalDeviceToolProperties` (no tools) and the `VK_KHR_display` queries (no displays). `VK_KHR_get_surface_capabilities2` is in
//! `surface.rs`; device groups (one per device) in `physical_device.rs`.
//!
//! A driver answers itself when it has the function and either the instance is at the core
//! version that added it (the application's or a layer's `apiVersion`, as the Khronos loader
//! decides; the physical device's own version is not asked) or the application enabled the
//! extension and the driver was given it. Emulated calls are logged at `info` in the Khronos loader's words ("Emulating call
//! in ICD"), which the instance's messengers hear too.

use std::ffi::CStr;

use vk_generated::InstanceDispatchTable;
use vk_generated::types::*;

use crate::debug::log::Level;
use crate::ffi::terminator;
use crate::ffi;
use crate::object::instance::{DriverInstance, Instance, PhysicalDevice};

/// The driver side of a loader physical device.
struct Owner<'a> {
    table: &'a InstanceDispatchTable,
    handle: VkPhysicalDevice,
    instance: Option<&'a Instance>,
    /// The instance's API version.
    api_version: u32,
    driver: Option<&'a DriverInstance>,
    /// The physical device's own API version.
    device_version: u32,
}

impl Owner<'_> {
    /// # Safety
    /// `physical_device` must be a physical device this loader returned.
    unsafe fn of<'a>(physical_device: VkPhysicalDevice, command: &str) -> Option<Owner<'a>> {
        let pd = PhysicalDevice::from_handle(physical_device)?;
        // What a driver lacks is emulated: a lazy driver is loaded first, unless its record answers.
        if !crate::lazy::answered_in_front(command) {
            crate::lazy::live_for(&pd.term, command);
        }
        let instance = pd.instance.as_ref();
        let (table, handle) = pd.term.driver();
        Some(Owner {
            table: &*table,
            handle,
            instance,
            api_version: instance.map_or(vk_generated::make_api_version(0, 1, 0, 0), |i| i.api_version),
            driver: instance.and_then(|i| i.drivers.get(pd.driver)),
            device_version: pd.properties.apiVersion,
        })
    }

    /// Whether the driver provides what `core` (major, minor) or `extension` adds. The extension
    /// counts only where the application enabled it: the loader gives drivers
    /// `VK_KHR_get_physical_device_properties2` for its own use, which must not change what the
    /// application sees (the Khronos loader emulates there too).
    fn provides(&self, core: (u32, u32), extension: &[u8]) -> bool {
        let enabled_by_application = || {
            let id = vk_generated::lookup::extension(extension);
            self.instance.is_some_and(|i| id.is_some_and(|id| i.enabled_extensions.contains(id)))
        };
        vk_generated::api_version_major_minor(self.api_version) >= core
            || (self.driver.is_some_and(|d| d.has_extension(extension)) && enabled_by_application())
    }

    /// `slot` if the driver provides it, else `None` (emulate), saying so once per call.
    fn native<F>(&self, slot: Option<F>, core: (u32, u32), extension: &[u8], command: &str) -> Option<F> {
        match slot {
            Some(f) if self.provides(core, extension) => Some(f),
            _ => {
                self.log(Level::Info, || format!("{command}: Emulating call in ICD \"{}\"", self.library()));
                None
            }
        }
    }

    /// The driver's library, as the Khronos loader names a driver in its messages.
    fn library(&self) -> &str {
        self.driver.map_or("?", |d| d.driver.library_path.as_str())
    }

    /// Says that the driver lacks `command`, in the Khronos loader's words.
    fn missing(&self, level: Level, command: &str) {
        self.log(level, || format!("ICD for selected physical device does not export {command}!"));
    }

    /// Logs a message about this physical device, which the instance's messengers hear too.
    fn log(&self, level: Level, message: impl FnOnce() -> String) {
        crate::object::instance::with_messengers_of(self.instance, || log!(level, "{}", message()));
    }
}

const V1_1: (u32, u32) = (1, 1);
const V1_3: (u32, u32) = (1, 3);
const PROPERTIES2: &[u8] = b"VK_KHR_get_physical_device_properties2";
const DISPLAY_PROPERTIES2: &[u8] = b"VK_KHR_get_display_properties2";

/// Emulates a two-call `2` query through its 1.0 form: each output element gets the plain result
/// in its inner struct (`set`) and keeps its sType and pNext.
unsafe fn wrapped<Plain: Copy + Default, Wrapped, R>(
    count: *mut u32,
    out: *mut Wrapped,
    mut query: impl FnMut(*mut u32, *mut Plain) -> R,
    set: impl Fn(&mut Wrapped, Plain),
) -> R {
    if count.is_null() || out.is_null() {
        return query(count, std::ptr::null_mut());
    }
    let mut plain = vec![Plain::default(); *count as usize];
    let result = query(count, plain.as_mut_ptr());
    for (i, item) in plain.into_iter().take(*count as usize).enumerate() {
        set(&mut *out.add(i), item);
    }
    result
}

/// The loader's emulating terminator for a `2` query with one output struct: the driver's own
/// function where it has it, else the 1.0 function into the output's inner struct.
macro_rules! emulate_single {
    ($name:ident, $core:expr, $ext:expr, ($($arg:ident: $ty:ty),*), $out:ident: *mut $out_ty:ty,
     |$owner:ident, $o:ident| $emulated:expr, $ret:ty, $fallback:expr) => {
        #[allow(clippy::unused_unit)] // `-> ()` for the void queries
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, $($arg: $ty,)* $out: *mut $out_ty) -> $ret {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, $fallback, || {
                let Some($owner) = Owner::of(physicalDevice, command) else { return $fallback };
                let Some($o) = $out.as_mut() else { return $fallback };
                let slot = paste_slot!($owner.table, $name);
                match $owner.native(slot, $core, $ext, command) {
                    Some(f) => f($owner.handle, $($arg,)* $o),
                    None => $emulated,
                }
            })
        }
    };
}

/// The driver's slot for the command a terminator is named after.
macro_rules! paste_slot {
    ($table:expr, terminator_vkGetPhysicalDeviceProperties2) => { $table.vkGetPhysicalDeviceProperties2 };
    ($table:expr, terminator_vkGetPhysicalDeviceFeatures2) => { $table.vkGetPhysicalDeviceFeatures2 };
    ($table:expr, terminator_vkGetPhysicalDeviceMemoryProperties2) => { $table.vkGetPhysicalDeviceMemoryProperties2 };
    ($table:expr, terminator_vkGetPhysicalDeviceFormatProperties2) => { $table.vkGetPhysicalDeviceFormatProperties2 };
    ($table:expr, terminator_vkGetPhysicalDeviceImageFormatProperties2) => { $table.vkGetPhysicalDeviceImageFormatProperties2 };
    ($table:expr, terminator_vkGetPhysicalDeviceExternalBufferProperties) => { $table.vkGetPhysicalDeviceExternalBufferProperties };
    ($table:expr, terminator_vkGetPhysicalDeviceExternalSemaphoreProperties) => { $table.vkGetPhysicalDeviceExternalSemaphoreProperties };
    ($table:expr, terminator_vkGetPhysicalDeviceExternalFenceProperties) => { $table.vkGetPhysicalDeviceExternalFenceProperties };
    ($table:expr, terminator_vkGetDisplayPlaneCapabilities2KHR) => { $table.vkGetDisplayPlaneCapabilities2KHR };
}

emulate_single!(terminator_vkGetPhysicalDeviceProperties2, V1_1, PROPERTIES2, (), pProperties: *mut VkPhysicalDeviceProperties2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceProperties { f(owner.handle, &mut out.properties) }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceFeatures2, V1_1, PROPERTIES2, (), pFeatures: *mut VkPhysicalDeviceFeatures2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceFeatures { f(owner.handle, &mut out.features) }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceMemoryProperties2, V1_1, PROPERTIES2, (), pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceMemoryProperties { f(owner.handle, &mut out.memoryProperties) }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceFormatProperties2, V1_1, PROPERTIES2, (format: VkFormat), pFormatProperties: *mut VkFormatProperties2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceFormatProperties { f(owner.handle, format, &mut out.formatProperties) }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceImageFormatProperties2, V1_1, PROPERTIES2,
    (pImageFormatInfo: *const VkPhysicalDeviceImageFormatInfo2), pImageFormatProperties: *mut VkImageFormatProperties2,
    |owner, out| match (owner.table.vkGetPhysicalDeviceImageFormatProperties, pImageFormatInfo.as_ref()) {
        (Some(f), Some(i)) => f(owner.handle, i.format, i.r#type, i.tiling, i.usage, i.flags, &mut out.imageFormatProperties),
        _ => VkResult::ERROR_FORMAT_NOT_SUPPORTED,
    }, VkResult, VkResult::ERROR_INITIALIZATION_FAILED);

// External handles: a driver without the capability queries supports no external handle types.
emulate_single!(terminator_vkGetPhysicalDeviceExternalBufferProperties, V1_1, b"VK_KHR_external_memory_capabilities",
    (pExternalBufferInfo: *const VkPhysicalDeviceExternalBufferInfo), pExternalBufferProperties: *mut VkExternalBufferProperties,
    |_owner, out| out.externalMemoryProperties = VkExternalMemoryProperties::default(), (), ());

emulate_single!(terminator_vkGetPhysicalDeviceExternalSemaphoreProperties, V1_1, b"VK_KHR_external_semaphore_capabilities",
    (pExternalSemaphoreInfo: *const VkPhysicalDeviceExternalSemaphoreInfo), pExternalSemaphoreProperties: *mut VkExternalSemaphoreProperties,
    |_owner, out| {
        out.exportFromImportedHandleTypes = Default::default();
        out.compatibleHandleTypes = Default::default();
        out.externalSemaphoreFeatures = Default::default();
    }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceExternalFenceProperties, V1_1, b"VK_KHR_external_fence_capabilities",
    (pExternalFenceInfo: *const VkPhysicalDeviceExternalFenceInfo), pExternalFenceProperties: *mut VkExternalFenceProperties,
    |_owner, out| {
        out.exportFromImportedHandleTypes = Default::default();
        out.compatibleHandleTypes = Default::default();
        out.externalFenceFeatures = Default::default();
    }, (), ());

emulate_single!(terminator_vkGetDisplayPlaneCapabilities2KHR, (u32::MAX, 0), DISPLAY_PROPERTIES2,
    (pDisplayPlaneInfo: *const VkDisplayPlaneInfo2KHR), pCapabilities: *mut VkDisplayPlaneCapabilities2KHR,
    |owner, out| match (owner.table.vkGetDisplayPlaneCapabilitiesKHR, pDisplayPlaneInfo.as_ref()) {
        (Some(f), Some(i)) => f(owner.handle, i.mode, i.planeIndex, &mut out.capabilities),
        _ => VkResult::ERROR_EXTENSION_NOT_PRESENT,
    }, VkResult, VkResult::ERROR_INITIALIZATION_FAILED);

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceQueueFamilyProperties2(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties2,
) {
    ffi::guard("vkGetPhysicalDeviceQueueFamilyProperties2", (), || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetPhysicalDeviceQueueFamilyProperties2") else {
            return;
        };
        let slot = owner.table.vkGetPhysicalDeviceQueueFamilyProperties2;
        match owner.native(slot, V1_1, PROPERTIES2, "vkGetPhysicalDeviceQueueFamilyProperties2") {
            Some(f) => f(owner.handle, pQueueFamilyPropertyCount, pQueueFamilyProperties),
            None => {
                let Some(plain) = owner.table.vkGetPhysicalDeviceQueueFamilyProperties else { return };
                wrapped(pQueueFamilyPropertyCount, pQueueFamilyProperties, |n, out| plain(owner.handle, n, out), |o, p| {
                    o.queueFamilyProperties = p
                })
            }
        }
    })
}

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSparseImageFormatProperties2(
    physicalDevice: VkPhysicalDevice,
    pFormatInfo: *const VkPhysicalDeviceSparseImageFormatInfo2,
    pPropertyCount: *mut u32,
    pProperties: *mut VkSparseImageFormatProperties2,
) {
    ffi::guard("vkGetPhysicalDeviceSparseImageFormatProperties2", (), || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetPhysicalDeviceSparseImageFormatProperties2") else {
            return;
        };
        let slot = owner.table.vkGetPhysicalDeviceSparseImageFormatProperties2;
        match owner.native(slot, V1_1, PROPERTIES2, "vkGetPhysicalDeviceSparseImageFormatProperties2") {
            Some(f) => f(owner.handle, pFormatInfo, pPropertyCount, pProperties),
            None => {
                let (Some(plain), Some(i)) = (owner.table.vkGetPhysicalDeviceSparseImageFormatProperties, pFormatInfo.as_ref()) else {
                    return;
                };
                wrapped(
                    pPropertyCount,
                    pProperties,
                    |n, out| plain(owner.handle, i.format, i.r#type, i.samples, i.usage, i.tiling, n, out),
                    |o, p| o.properties = p,
                )
            }
        }
    })
}

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceDisplayProperties2KHR(
    physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayProperties2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceDisplayProperties2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetPhysicalDeviceDisplayProperties2KHR") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let slot = owner.table.vkGetPhysicalDeviceDisplayProperties2KHR;
        match owner.native(slot, (u32::MAX, 0), DISPLAY_PROPERTIES2, "vkGetPhysicalDeviceDisplayProperties2KHR") {
            Some(f) => f(owner.handle, pPropertyCount, pProperties),
            None => {
                let Some(plain) = owner.table.vkGetPhysicalDeviceDisplayPropertiesKHR else { return VkResult::ERROR_EXTENSION_NOT_PRESENT };
                wrapped(pPropertyCount, pProperties, |n, out| plain(owner.handle, n, out), |o, p| o.displayProperties = p)
            }
        }
    })
}

pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceDisplayPlaneProperties2KHR(
    physicalDevice: VkPhysicalDevice,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayPlaneProperties2KHR,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceDisplayPlaneProperties2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetPhysicalDeviceDisplayPlaneProperties2KHR") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let slot = owner.table.vkGetPhysicalDeviceDisplayPlaneProperties2KHR;
        match owner.native(slot, (u32::MAX, 0), DISPLAY_PROPERTIES2, "vkGetPhysicalDeviceDisplayPlaneProperties2KHR") {
            Some(f) => f(owner.handle, pPropertyCount, pProperties),
            None => {
                let Some(plain) = owner.table.vkGetPhysicalDeviceDisplayPlanePropertiesKHR else {
                    return VkResult::ERROR_EXTENSION_NOT_PRESENT;
                };
                wrapped(pPropertyCount, pProperties, |n, out| plain(owner.handle, n, out), |o, p| o.displayPlaneProperties = p)
            }
        }
    })
}

pub unsafe extern "system" fn terminator_vkGetDisplayModeProperties2KHR(
    physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pPropertyCount: *mut u32,
    pProperties: *mut VkDisplayModeProperties2KHR,
) -> VkResult {
    ffi::guard("vkGetDisplayModeProperties2KHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetDisplayModeProperties2KHR") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let slot = owner.table.vkGetDisplayModeProperties2KHR;
        match owner.native(slot, (u32::MAX, 0), DISPLAY_PROPERTIES2, "vkGetDisplayModeProperties2KHR") {
            Some(f) => f(owner.handle, display, pPropertyCount, pProperties),
            None => {
                let Some(plain) = owner.table.vkGetDisplayModePropertiesKHR else { return VkResult::ERROR_EXTENSION_NOT_PRESENT };
                wrapped(pPropertyCount, pProperties, |n, out| plain(owner.handle, display, n, out), |o, p| o.displayModeProperties = p)
            }
        }
    })
}

/// A `VK_KHR_display` query answered for a driver without it as for a driver without displays:
/// nothing, successfully (`$count` set to 0), as the Khronos loader answers.
macro_rules! display_query {
    ($name:ident, $slot:ident, ($($arg:ident: $ty:ty),*), $count:ident) => {
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, $($arg: $ty),*) -> VkResult {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                let Some(owner) = Owner::of(physicalDevice, command) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                match owner.table.$slot {
                    Some(f) => f(owner.handle, $($arg),*),
                    None => {
                        owner.missing(Level::Warn, command);
                        if let Some(count) = $count.as_mut() {
                            *count = 0;
                        }
                        VkResult::SUCCESS
                    }
                }
            })
        }
    };
}

display_query!(terminator_vkGetPhysicalDeviceDisplayPropertiesKHR, vkGetPhysicalDeviceDisplayPropertiesKHR,
    (pPropertyCount: *mut u32, pProperties: *mut VkDisplayPropertiesKHR), pPropertyCount);
display_query!(terminator_vkGetPhysicalDeviceDisplayPlanePropertiesKHR, vkGetPhysicalDeviceDisplayPlanePropertiesKHR,
    (pPropertyCount: *mut u32, pProperties: *mut VkDisplayPlanePropertiesKHR), pPropertyCount);
display_query!(terminator_vkGetDisplayPlaneSupportedDisplaysKHR, vkGetDisplayPlaneSupportedDisplaysKHR,
    (planeIndex: u32, pDisplayCount: *mut u32, pDisplays: *mut VkDisplayKHR), pDisplayCount);
display_query!(terminator_vkGetDisplayModePropertiesKHR, vkGetDisplayModePropertiesKHR,
    (display: VkDisplayKHR, pPropertyCount: *mut u32, pProperties: *mut VkDisplayModePropertiesKHR), pPropertyCount);

/// A driver without `VK_KHR_display` has no plane capabilities: all zero.
pub unsafe extern "system" fn terminator_vkGetDisplayPlaneCapabilitiesKHR(
    physicalDevice: VkPhysicalDevice,
    mode: VkDisplayModeKHR,
    planeIndex: u32,
    pCapabilities: *mut VkDisplayPlaneCapabilitiesKHR,
) -> VkResult {
    ffi::guard("vkGetDisplayPlaneCapabilitiesKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetDisplayPlaneCapabilitiesKHR") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        match owner.table.vkGetDisplayPlaneCapabilitiesKHR {
            Some(f) => f(owner.handle, mode, planeIndex, pCapabilities),
            None => {
                owner.missing(Level::Warn, "vkGetDisplayPlaneCapabilitiesKHR");
                if let Some(capabilities) = pCapabilities.as_mut() {
                    *capabilities = VkDisplayPlaneCapabilitiesKHR::default();
                }
                VkResult::SUCCESS
            }
        }
    })
}

/// A display mode cannot be made up for a driver without `VK_KHR_display`.
pub unsafe extern "system" fn terminator_vkCreateDisplayModeKHR(
    physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pCreateInfo: *const VkDisplayModeCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pMode: *mut VkDisplayModeKHR,
) -> VkResult {
    ffi::guard("vkCreateDisplayModeKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkCreateDisplayModeKHR") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        match owner.table.vkCreateDisplayModeKHR {
            Some(f) => f(owner.handle, display, pCreateInfo, pAllocator, pMode),
            None => {
                owner.missing(Level::Error, "vkCreateDisplayModeKHR");
                VkResult::ERROR_INITIALIZATION_FAILED
            }
        }
    })
}

/// Core 1.3 (`VK_EXT_tooling_info` before it, a device extension): a driver without it runs no tools.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceToolProperties(
    physicalDevice: VkPhysicalDevice,
    pToolCount: *mut u32,
    pToolProperties: *mut VkPhysicalDeviceToolProperties,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceToolProperties", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(owner) = Owner::of(physicalDevice, "vkGetPhysicalDeviceToolProperties") else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        let native = owner.table.vkGetPhysicalDeviceToolProperties.filter(|_| {
            vk_generated::api_version_major_minor(owner.device_version) >= V1_3 || device_has_extension(&owner, c"VK_EXT_tooling_info")
        });
        match native {
            Some(f) => f(owner.handle, pToolCount, pToolProperties),
            None => ffi::fill::<VkPhysicalDeviceToolProperties>(&[], pToolCount, pToolProperties),
        }
    })
}

/// Whether the physical device advertises a device extension (asked each time: rare queries only).
unsafe fn device_has_extension(owner: &Owner, name: &CStr) -> bool {
    let Some(enumerate) = owner.table.vkEnumerateDeviceExtensionProperties else { return false };
    ffi::query(|count, out| enumerate(owner.handle, std::ptr::null(), count, out))
        .unwrap_or_default()
        .iter()
        .any(|e| ffi::name_of(e) == name.to_bytes())
}

/// The loader's emulating terminators (instance chain), by command id.
pub const TERMINATORS: &[(u16, PFN_vkVoidFunction)] = &[
    terminator!(vkGetPhysicalDeviceProperties2 => terminator_vkGetPhysicalDeviceProperties2),
    terminator!(vkGetPhysicalDeviceFeatures2 => terminator_vkGetPhysicalDeviceFeatures2),
    terminator!(vkGetPhysicalDeviceMemoryProperties2 => terminator_vkGetPhysicalDeviceMemoryProperties2),
    terminator!(vkGetPhysicalDeviceFormatProperties2 => terminator_vkGetPhysicalDeviceFormatProperties2),
    terminator!(vkGetPhysicalDeviceImageFormatProperties2 => terminator_vkGetPhysicalDeviceImageFormatProperties2),
    terminator!(vkGetPhysicalDeviceQueueFamilyProperties2 => terminator_vkGetPhysicalDeviceQueueFamilyProperties2),
    terminator!(vkGetPhysicalDeviceSparseImageFormatProperties2 => terminator_vkGetPhysicalDeviceSparseImageFormatProperties2),
    terminator!(vkGetPhysicalDeviceExternalBufferProperties => terminator_vkGetPhysicalDeviceExternalBufferProperties),
    terminator!(vkGetPhysicalDeviceExternalSemaphoreProperties => terminator_vkGetPhysicalDeviceExternalSemaphoreProperties),
    terminator!(vkGetPhysicalDeviceExternalFenceProperties => terminator_vkGetPhysicalDeviceExternalFenceProperties),
    terminator!(vkGetPhysicalDeviceDisplayProperties2KHR => terminator_vkGetPhysicalDeviceDisplayProperties2KHR),
    terminator!(vkGetPhysicalDeviceDisplayPlaneProperties2KHR => terminator_vkGetPhysicalDeviceDisplayPlaneProperties2KHR),
    terminator!(vkGetDisplayModeProperties2KHR => terminator_vkGetDisplayModeProperties2KHR),
    terminator!(vkGetDisplayPlaneCapabilities2KHR => terminator_vkGetDisplayPlaneCapabilities2KHR),
    terminator!(vkGetPhysicalDeviceToolProperties => terminator_vkGetPhysicalDeviceToolProperties),
    terminator!(vkGetPhysicalDeviceDisplayPropertiesKHR => terminator_vkGetPhysicalDeviceDisplayPropertiesKHR),
    terminator!(vkGetPhysicalDeviceDisplayPlanePropertiesKHR => terminator_vkGetPhysicalDeviceDisplayPlanePropertiesKHR),
    terminator!(vkGetDisplayPlaneSupportedDisplaysKHR => terminator_vkGetDisplayPlaneSupportedDisplaysKHR),
    terminator!(vkGetDisplayModePropertiesKHR => terminator_vkGetDisplayModePropertiesKHR),
    terminator!(vkGetDisplayPlaneCapabilitiesKHR => terminator_vkGetDisplayPlaneCapabilitiesKHR),
    terminator!(vkCreateDisplayModeKHR => terminator_vkCreateDisplayModeKHR),
];
