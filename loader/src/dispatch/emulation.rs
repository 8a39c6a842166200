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

use std::ffi::{c_void, CStr};

use vk_generated::types::*;
use vk_generated::{InstanceDispatchTable, TaggedStruct};

use crate::debug::log::Level;
use crate::ffi::terminator;
use crate::ffi;
use crate::object::instance::{DriverInstance, Instance, PhysicalDevice};

/// The driver side of a loader physical device.
struct Owner<'a> {
    device: &'a PhysicalDevice,
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
    fn of<'a>(pd: &'a PhysicalDevice, command: &str) -> Owner<'a> {
        // What a driver lacks is emulated: a lazy driver is loaded first, unless its record answers.
        if !crate::lazy::answered_in_front(command) {
            crate::lazy::live_for(&pd.term, command);
        }
        let instance = pd.instance();
        let (table, handle) = pd.driver_side();
        Owner {
            device: pd,
            table,
            handle,
            instance,
            api_version: instance.map_or(vk_generated::make_api_version(0, 1, 0, 0), |i| i.api_version),
            driver: instance.and_then(|i| i.drivers.get(pd.driver)),
            device_version: pd.properties.apiVersion,
        }
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

    /// Whether the physical device advertises a device extension (asked each time: rare queries only).
    fn has_device_extension(&self, name: &CStr) -> bool {
        self.device.driver_calls().extensions().unwrap_or_default().iter().any(|e| ffi::name_of(e) == name.to_bytes())
    }
}

/// The loader's physical device behind a handle the instance chain passed to a terminator.
///
/// # Safety
/// `physical_device` must be NULL or a terminator-level physical device of this loader, live for
/// `'a` (Vulkan's valid usage of the command that passed it).
unsafe fn physical_device<'a>(physical_device: VkPhysicalDevice) -> Option<&'a PhysicalDevice> {
    // SAFETY: this function's contract is `from_handle`'s.
    unsafe { PhysicalDevice::from_handle(physical_device) }
}

const V1_1: (u32, u32) = (1, 1);
const V1_3: (u32, u32) = (1, 3);
const PROPERTIES2: &[u8] = b"VK_KHR_get_physical_device_properties2";
const DISPLAY_PROPERTIES2: &[u8] = b"VK_KHR_get_display_properties2";

/// Emulates a two-call `2` query through its 1.0 form: `query` asks the driver with a count and
/// NULL or an array of plain structures; each output element gets the plain result in its inner
/// struct (`wrap(plain, pNext)`) and keeps its sType and pNext.
fn wrapped<Plain: Copy + Default, Wrapped: TaggedStruct, R>(
    mut out: ffi::ChainedOutArray<Wrapped>,
    mut query: impl FnMut(*mut u32, *mut Plain) -> R,
    wrap: impl Fn(Plain, *mut c_void) -> Wrapped,
) -> R {
    let Some(room) = out.room() else {
        return query(out.count_ptr(), std::ptr::null_mut());
    };
    let mut plain = vec![Plain::default(); room];
    let result = query(out.count_ptr(), plain.as_mut_ptr());
    for (i, item) in plain.into_iter().take(out.count() as usize).enumerate() {
        out.set(i, |next| wrap(item, next));
    }
    result
}

/// The loader's emulating terminator for a `2` query with one output struct: the driver's own
/// function where it has it, else the 1.0 function into the output's inner struct.
macro_rules! emulate_single {
    ($name:ident, $core:expr, $ext:expr, ($($arg:ident: $ty:ty),*), $out:ident: *mut $out_ty:ty,
     |$owner:ident, $o:ident| $emulated:expr, $ret:ty, $fallback:expr) => {
        #[doc = concat!("`", stringify!($name), "`: the driver's own, or emulated through the 1.0 query.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `physicalDevice` a physical device of this loader; the inputs
        /// valid structures (their chains valid); the output a writable structure with its
        /// `sType` and `pNext` set, its chain valid. A NULL `physicalDevice` or output is checked
        /// (nothing done).
        #[allow(clippy::unused_unit)] // `-> ()` for the void queries
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, $($arg: $ty,)* $out: *mut $out_ty) -> $ret {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, $fallback, || {
                // SAFETY: NULL or a physical device of this loader (this function's contract).
                let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return $fallback };
                let $owner = Owner::of(pd, command);
                // SAFETY: NULL or the caller's writable structure (this function's contract).
                let Some($o) = (unsafe { $out.as_mut() }) else { return $fallback };
                let slot = paste_slot!($owner.table, $name);
                match $owner.native(slot, $core, $ext, command) {
                    // SAFETY: the driver's function with its own device; the caller's inputs and
                    // output (this function's contract).
                    Some(f) => unsafe { f($owner.handle, $($arg,)* $o) },
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
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceProperties {
        // SAFETY: the driver's function with its own device and the plain structure inside the caller's.
        unsafe { f(owner.handle, &mut out.properties) }
    }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceFeatures2, V1_1, PROPERTIES2, (), pFeatures: *mut VkPhysicalDeviceFeatures2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceFeatures {
        // SAFETY: the driver's function with its own device and the plain structure inside the caller's.
        unsafe { f(owner.handle, &mut out.features) }
    }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceMemoryProperties2, V1_1, PROPERTIES2, (), pMemoryProperties: *mut VkPhysicalDeviceMemoryProperties2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceMemoryProperties {
        // SAFETY: the driver's function with its own device and the plain structure inside the caller's.
        unsafe { f(owner.handle, &mut out.memoryProperties) }
    }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceFormatProperties2, V1_1, PROPERTIES2, (format: VkFormat), pFormatProperties: *mut VkFormatProperties2,
    |owner, out| if let Some(f) = owner.table.vkGetPhysicalDeviceFormatProperties {
        // SAFETY: the driver's function with its own device and the plain structure inside the caller's.
        unsafe { f(owner.handle, format, &mut out.formatProperties) }
    }, (), ());

emulate_single!(terminator_vkGetPhysicalDeviceImageFormatProperties2, V1_1, PROPERTIES2,
    (pImageFormatInfo: *const VkPhysicalDeviceImageFormatInfo2), pImageFormatProperties: *mut VkImageFormatProperties2,
    // SAFETY: NULL or the caller's valid structure (the command's valid usage).
    |owner, out| match (owner.table.vkGetPhysicalDeviceImageFormatProperties, unsafe { pImageFormatInfo.as_ref() }) {
        // SAFETY: the driver's function with its own device, the caller's values, and the plain
        // structure inside the caller's.
        (Some(f), Some(i)) => unsafe { f(owner.handle, i.format, i.r#type, i.tiling, i.usage, i.flags, &mut out.imageFormatProperties) },
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
    // SAFETY: NULL or the caller's valid structure (the command's valid usage).
    |owner, out| match (owner.table.vkGetDisplayPlaneCapabilitiesKHR, unsafe { pDisplayPlaneInfo.as_ref() }) {
        // SAFETY: the driver's function with its own device, the caller's values, and the plain
        // structure inside the caller's.
        (Some(f), Some(i)) => unsafe { f(owner.handle, i.mode, i.planeIndex, &mut out.capabilities) },
        _ => VkResult::ERROR_EXTENSION_NOT_PRESENT,
    }, VkResult, VkResult::ERROR_INITIALIZATION_FAILED);

/// `vkGetPhysicalDeviceQueueFamilyProperties2`: the driver's own, or emulated through the 1.0 query.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader;
/// `pQueueFamilyPropertyCount` valid; `pQueueFamilyProperties` NULL or that many writable
/// structures, each with its `sType` and `pNext` set. A NULL `physicalDevice` (or, emulated,
/// count) is checked: nothing is done.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceQueueFamilyProperties2(
    physicalDevice: VkPhysicalDevice,
    pQueueFamilyPropertyCount: *mut u32,
    pQueueFamilyProperties: *mut VkQueueFamilyProperties2,
) {
    ffi::guard("vkGetPhysicalDeviceQueueFamilyProperties2", (), || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return };
        let owner = Owner::of(pd, "vkGetPhysicalDeviceQueueFamilyProperties2");
        let slot = owner.table.vkGetPhysicalDeviceQueueFamilyProperties2;
        match owner.native(slot, V1_1, PROPERTIES2, "vkGetPhysicalDeviceQueueFamilyProperties2") {
            // SAFETY: the driver's function with its own device; the caller's count and array
            // (this function's contract).
            Some(f) => unsafe { f(owner.handle, pQueueFamilyPropertyCount, pQueueFamilyProperties) },
            None => {
                let Some(plain) = owner.table.vkGetPhysicalDeviceQueueFamilyProperties else { return };
                // SAFETY: the caller's count and structures (this function's contract).
                let Some(out) = (unsafe { ffi::ChainedOutArray::new(pQueueFamilyPropertyCount, pQueueFamilyProperties) }) else { return };
                // SAFETY: the driver's function with its own device, a valid count and NULL or an
                // array of ours of that many structures.
                let query = |n, out| unsafe { plain(owner.handle, n, out) };
                wrapped(out, query, |p, next| VkQueueFamilyProperties2 { pNext: next, queueFamilyProperties: p, ..Default::default() })
            }
        }
    })
}

/// `vkGetPhysicalDeviceSparseImageFormatProperties2`: the driver's own, or emulated through the
/// 1.0 query.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `pFormatInfo` a
/// valid structure; `pPropertyCount` valid; `pProperties` NULL or that many writable structures,
/// each with its `sType` and `pNext` set. A NULL `physicalDevice` (or, emulated, `pFormatInfo` or
/// count) is checked: nothing is done.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceSparseImageFormatProperties2(
    physicalDevice: VkPhysicalDevice,
    pFormatInfo: *const VkPhysicalDeviceSparseImageFormatInfo2,
    pPropertyCount: *mut u32,
    pProperties: *mut VkSparseImageFormatProperties2,
) {
    ffi::guard("vkGetPhysicalDeviceSparseImageFormatProperties2", (), || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return };
        let owner = Owner::of(pd, "vkGetPhysicalDeviceSparseImageFormatProperties2");
        let slot = owner.table.vkGetPhysicalDeviceSparseImageFormatProperties2;
        match owner.native(slot, V1_1, PROPERTIES2, "vkGetPhysicalDeviceSparseImageFormatProperties2") {
            // SAFETY: the driver's function with its own device; the caller's input, count and
            // array (this function's contract).
            Some(f) => unsafe { f(owner.handle, pFormatInfo, pPropertyCount, pProperties) },
            None => {
                // SAFETY: NULL or the caller's valid structure (this function's contract).
                let (Some(plain), Some(i)) = (owner.table.vkGetPhysicalDeviceSparseImageFormatProperties, unsafe { pFormatInfo.as_ref() }) else {
                    return;
                };
                // SAFETY: the caller's count and structures (this function's contract).
                let Some(out) = (unsafe { ffi::ChainedOutArray::new(pPropertyCount, pProperties) }) else { return };
                // SAFETY: the driver's function with its own device, the caller's values, a valid
                // count and NULL or an array of ours of that many structures.
                let query = |n, out| unsafe { plain(owner.handle, i.format, i.r#type, i.samples, i.usage, i.tiling, n, out) };
                wrapped(out, query, |p, next| VkSparseImageFormatProperties2 { pNext: next, properties: p, ..Default::default() })
            }
        }
    })
}

/// The `VK_KHR_get_display_properties2` two-call queries: the driver's own where it was given the
/// extension, else its `VK_KHR_display` form, each element's inner struct filled ([`wrapped`]);
/// `VK_ERROR_EXTENSION_NOT_PRESENT` for a driver with neither.
macro_rules! display_properties2 {
    ($name:ident, $slot:ident, $plain_slot:ident, ($($arg:ident: $ty:ty),*), $out_ty:ty, |$p:ident, $next:ident| $wrap:expr) => {
        #[doc = concat!("`", stringify!($slot), "`: the driver's own, or emulated through `", stringify!($plain_slot), "`.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `physicalDevice` a physical device of this loader; its other
        /// handles the driver's; `pPropertyCount` valid; `pProperties` NULL or that many writable
        /// structures, each with its `sType` and `pNext` set. A NULL `physicalDevice` (or,
        /// emulated, count) is `VK_ERROR_INITIALIZATION_FAILED`.
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, $($arg: $ty,)* pPropertyCount: *mut u32, pProperties: *mut $out_ty) -> VkResult {
            let command = stringify!($slot);
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                // SAFETY: NULL or a physical device of this loader (this function's contract).
                let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                let owner = Owner::of(pd, command);
                match owner.native(owner.table.$slot, (u32::MAX, 0), DISPLAY_PROPERTIES2, command) {
                    // SAFETY: the driver's function with its own device; the caller's handles,
                    // count and array (this function's contract).
                    Some(f) => unsafe { f(owner.handle, $($arg,)* pPropertyCount, pProperties) },
                    None => {
                        let Some(plain) = owner.table.$plain_slot else { return VkResult::ERROR_EXTENSION_NOT_PRESENT };
                        // SAFETY: the caller's count and structures (this function's contract).
                        let Some(out) = (unsafe { ffi::ChainedOutArray::new(pPropertyCount, pProperties) }) else {
                            return VkResult::ERROR_INITIALIZATION_FAILED;
                        };
                        // SAFETY: the driver's function with its own device, the caller's handles,
                        // a valid count and NULL or an array of ours of that many structures.
                        let query = |n, out| unsafe { plain(owner.handle, $($arg,)* n, out) };
                        wrapped(out, query, |$p, $next| $wrap)
                    }
                }
            })
        }
    };
}

display_properties2!(terminator_vkGetPhysicalDeviceDisplayProperties2KHR, vkGetPhysicalDeviceDisplayProperties2KHR, vkGetPhysicalDeviceDisplayPropertiesKHR,
    (), VkDisplayProperties2KHR, |p, next| VkDisplayProperties2KHR { pNext: next, displayProperties: p, ..Default::default() });
display_properties2!(terminator_vkGetPhysicalDeviceDisplayPlaneProperties2KHR, vkGetPhysicalDeviceDisplayPlaneProperties2KHR, vkGetPhysicalDeviceDisplayPlanePropertiesKHR,
    (), VkDisplayPlaneProperties2KHR, |p, next| VkDisplayPlaneProperties2KHR { pNext: next, displayPlaneProperties: p, ..Default::default() });
display_properties2!(terminator_vkGetDisplayModeProperties2KHR, vkGetDisplayModeProperties2KHR, vkGetDisplayModePropertiesKHR,
    (display: VkDisplayKHR), VkDisplayModeProperties2KHR, |p, next| VkDisplayModeProperties2KHR { pNext: next, displayModeProperties: p, ..Default::default() });

/// A `VK_KHR_display` query answered for a driver without it as for a driver without displays:
/// nothing, successfully (`$count` set to 0), as the Khronos loader answers.
macro_rules! display_query {
    ($name:ident, $slot:ident, ($($arg:ident: $ty:ty),*), $count:ident) => {
        #[doc = concat!("`", stringify!($slot), "`: the driver's, or no displays for a driver without it.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `physicalDevice` a physical device of this loader; its other
        /// handles the driver's; the count valid, the array NULL or valid for that many elements.
        /// A NULL `physicalDevice` is `VK_ERROR_INITIALIZATION_FAILED`; a NULL count is left alone.
        pub unsafe extern "system" fn $name(physicalDevice: VkPhysicalDevice, $($arg: $ty),*) -> VkResult {
            let command = &stringify!($name)["terminator_".len()..];
            ffi::guard(command, VkResult::ERROR_INITIALIZATION_FAILED, || {
                // SAFETY: NULL or a physical device of this loader (this function's contract).
                let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
                let owner = Owner::of(pd, command);
                match owner.table.$slot {
                    // SAFETY: the driver's function with its own device; the caller's arguments
                    // (this function's contract).
                    Some(f) => unsafe { f(owner.handle, $($arg),*) },
                    None => {
                        owner.missing(Level::Warn, command);
                        if !$count.is_null() {
                            // SAFETY: a non-NULL count is writable (this function's contract).
                            unsafe { $count.write(0) };
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
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `mode` the driver's;
/// `pCapabilities` valid for writing the structure. A NULL `physicalDevice` is
/// `VK_ERROR_INITIALIZATION_FAILED`; a NULL `pCapabilities` is left alone.
pub unsafe extern "system" fn terminator_vkGetDisplayPlaneCapabilitiesKHR(
    physicalDevice: VkPhysicalDevice,
    mode: VkDisplayModeKHR,
    planeIndex: u32,
    pCapabilities: *mut VkDisplayPlaneCapabilitiesKHR,
) -> VkResult {
    ffi::guard("vkGetDisplayPlaneCapabilitiesKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let owner = Owner::of(pd, "vkGetDisplayPlaneCapabilitiesKHR");
        match owner.table.vkGetDisplayPlaneCapabilitiesKHR {
            // SAFETY: the driver's function with its own device; the caller's mode and output
            // (this function's contract).
            Some(f) => unsafe { f(owner.handle, mode, planeIndex, pCapabilities) },
            None => {
                owner.missing(Level::Warn, "vkGetDisplayPlaneCapabilitiesKHR");
                if !pCapabilities.is_null() {
                    // SAFETY: a non-NULL `pCapabilities` is writable (this function's contract).
                    unsafe { pCapabilities.write(VkDisplayPlaneCapabilitiesKHR::default()) };
                }
                VkResult::SUCCESS
            }
        }
    })
}

/// A display mode cannot be made up for a driver without `VK_KHR_display`.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `display` the
/// driver's; `pCreateInfo` a valid structure; `pAllocator` NULL or valid callbacks; `pMode` valid
/// for writing a handle. A NULL `physicalDevice` is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkCreateDisplayModeKHR(
    physicalDevice: VkPhysicalDevice,
    display: VkDisplayKHR,
    pCreateInfo: *const VkDisplayModeCreateInfoKHR,
    pAllocator: *const VkAllocationCallbacks,
    pMode: *mut VkDisplayModeKHR,
) -> VkResult {
    ffi::guard("vkCreateDisplayModeKHR", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let owner = Owner::of(pd, "vkCreateDisplayModeKHR");
        match owner.table.vkCreateDisplayModeKHR {
            // SAFETY: the driver's function with its own device; the caller's arguments (this
            // function's contract).
            Some(f) => unsafe { f(owner.handle, display, pCreateInfo, pAllocator, pMode) },
            None => {
                owner.missing(Level::Error, "vkCreateDisplayModeKHR");
                VkResult::ERROR_INITIALIZATION_FAILED
            }
        }
    })
}

/// Core 1.3 (`VK_EXT_tooling_info` before it, a device extension): a driver without it runs no tools.
///
/// # Safety
/// Vulkan's valid usage: `physicalDevice` a physical device of this loader; `pToolCount` valid;
/// `pToolProperties` NULL or that many writable structures. A NULL `physicalDevice` or (emulated)
/// count is `VK_ERROR_INITIALIZATION_FAILED`.
pub unsafe extern "system" fn terminator_vkGetPhysicalDeviceToolProperties(
    physicalDevice: VkPhysicalDevice,
    pToolCount: *mut u32,
    pToolProperties: *mut VkPhysicalDeviceToolProperties,
) -> VkResult {
    ffi::guard("vkGetPhysicalDeviceToolProperties", VkResult::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: NULL or a physical device of this loader (this function's contract).
        let Some(pd) = (unsafe { physical_device(physicalDevice) }) else { return VkResult::ERROR_INITIALIZATION_FAILED };
        let owner = Owner::of(pd, "vkGetPhysicalDeviceToolProperties");
        let native = owner.table.vkGetPhysicalDeviceToolProperties.filter(|_| {
            vk_generated::api_version_major_minor(owner.device_version) >= V1_3 || owner.has_device_extension(c"VK_EXT_tooling_info")
        });
        match native {
            // SAFETY: the driver's function with its own device; the caller's count and array
            // (this function's contract).
            Some(f) => unsafe { f(owner.handle, pToolCount, pToolProperties) },
            // SAFETY: as above.
            None => unsafe { ffi::fill::<VkPhysicalDeviceToolProperties>(&[], pToolCount, pToolProperties) },
        }
    })
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
