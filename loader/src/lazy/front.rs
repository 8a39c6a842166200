//! The table of a driver not loaded yet: physical devices and the recorded queries answered
//! from its record (the live driver asked instead once it is loaded, or when the record lacks the
//! answer). Every other slot is empty, which makes the terminators load the driver.

use vk_generated::padding::ZeroPadding;
use vk_generated::types::*;
use vk_generated::InstanceDispatchTable;

use super::answers::{self, FEATURES, FEATURES_HEAD, FORMAT, FORMAT_HEAD, MEMORY_HEAD, PROPERTIES, PROPERTIES_HEAD};
use super::{resolve, Lazy};
use crate::cache::profile::{answer_key, Family};
use crate::ffi;
use crate::loader_abi::InstanceDispatch;

pub fn table() -> Box<InstanceDispatch> {
    InstanceDispatch::new(InstanceDispatchTable {
        vkDestroyInstance: Some(destroy_instance),
        vkEnumeratePhysicalDevices: Some(enumerate_physical_devices),
        vkEnumeratePhysicalDeviceGroups: Some(enumerate_physical_device_groups),
        vkGetPhysicalDeviceProperties: Some(get_properties),
        vkGetPhysicalDeviceProperties2: Some(get_properties2),
        vkGetPhysicalDeviceFeatures: Some(get_features),
        vkGetPhysicalDeviceFeatures2: Some(get_features2),
        vkGetPhysicalDeviceMemoryProperties: Some(get_memory_properties),
        vkGetPhysicalDeviceMemoryProperties2: Some(get_memory_properties2),
        vkGetPhysicalDeviceQueueFamilyProperties: Some(get_queue_family_properties),
        vkGetPhysicalDeviceQueueFamilyProperties2: Some(get_queue_family_properties2),
        vkGetPhysicalDeviceFormatProperties: Some(get_format_properties),
        vkGetPhysicalDeviceFormatProperties2: Some(get_format_properties2),
        vkEnumerateDeviceExtensionProperties: Some(enumerate_device_extension_properties),
        ..Default::default()
    })
}

/// Points the format slots of a live driver's table (those it fills) at this module's functions,
/// which answer from the driver and record what the record lacks (see the module's documentation).
pub fn route_formats_here(table: &mut InstanceDispatchTable) {
    if table.vkGetPhysicalDeviceFormatProperties.is_some() {
        table.vkGetPhysicalDeviceFormatProperties = Some(get_format_properties);
    }
    if table.vkGetPhysicalDeviceFormatProperties2.is_some() {
        table.vkGetPhysicalDeviceFormatProperties2 = Some(get_format_properties2);
    }
}

/// Nothing to destroy until the driver is loaded (the live instance is destroyed through the live table).
///
/// # Safety
/// None: nothing is read or done.
unsafe extern "system" fn destroy_instance(_instance: VkInstance, _allocator: *const VkAllocationCallbacks) {}

/// `vkEnumeratePhysicalDevices` of a driver not loaded yet: its placeholders (the live driver's
/// devices once it is loaded, none if that failed).
///
/// # Safety
/// `instance` a lazy driver's instance of a live loader instance (the loader calls it so); `count`
/// valid and `out` NULL or valid for `*count` handles (Vulkan's valid usage). A NULL `count` is
/// `VK_ERROR_INITIALIZATION_FAILED`.
unsafe extern "system" fn enumerate_physical_devices(instance: VkInstance, count: *mut u32, out: *mut VkPhysicalDevice) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDevices", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or a lazy driver's instance (`Lazy::handle`: its address) of a live loader
        // instance, which keeps it alive for this call (this function's contract).
        let Some(lazy) = (unsafe { (instance.0 as *const Lazy).as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        match lazy.live.get() {
            None => {
                let fakes: Vec<VkPhysicalDevice> = (0..lazy.devices.len()).map(|i| lazy.fake(i)).collect();
                // SAFETY: the caller's count and array (this function's contract).
                unsafe { ffi::fill(&fakes, count, out) }
            }
            Some(Ok(live)) => match live.instance.table().vkEnumeratePhysicalDevices {
                // SAFETY: the live driver's function with its own instance; the caller's count
                // and array (this function's contract).
                Some(f) => unsafe { f(live.instance.handle(), count, out) },
                // SAFETY: as above.
                None => unsafe { ffi::fill::<VkPhysicalDevice>(&[], count, out) },
            },
            // A driver that failed to load has no device to offer.
            // SAFETY: as above.
            Some(Err(_)) => unsafe { ffi::fill::<VkPhysicalDevice>(&[], count, out) },
        }
    })
}

/// `vkEnumeratePhysicalDeviceGroups` of a driver not loaded yet: the recorded groups of its
/// placeholders while no structure chains anything for the driver to fill; the live driver's
/// otherwise (loaded now if need be).
///
/// # Safety
/// As [`enumerate_physical_devices`], and each of the `*count` structures at a non-NULL `out` has
/// its `sType` and `pNext` set, its chain valid (Vulkan's valid usage of output structures).
unsafe extern "system" fn enumerate_physical_device_groups(instance: VkInstance, count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDeviceGroups", VkResult::ERROR_UNKNOWN, || {
        // SAFETY: NULL or a lazy driver's instance (`Lazy::handle`: its address) of a live loader
        // instance, which keeps it alive for this call (this function's contract).
        let Some(lazy) = (unsafe { (instance.0 as *const Lazy).as_ref() }) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        if let (None, Some(groups)) = (lazy.live.get(), &lazy.profile.groups) {
            // SAFETY: the caller's count and structures (this function's contract).
            let Some(view) = (unsafe { ffi::ChainedOutArray::new(count, out) }) else {
                return VkResult::ERROR_INITIALIZATION_FAILED;
            };
            // The application's structures may chain something for the driver to fill: the driver's.
            if !view.any_chained() {
                lazy.answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let fake = |(members, subset): &(Vec<u8>, VkBool32), next| {
                    let mut g = VkPhysicalDeviceGroupProperties { pNext: next, physicalDeviceCount: members.len() as u32, subsetAllocation: *subset, ..Default::default() };
                    for (slot, &m) in g.physicalDevices.iter_mut().zip(members) {
                        *slot = lazy.fake(m as usize);
                    }
                    g
                };
                return view.fill_keeping_headers(groups.len(), groups.iter(), fake);
            }
        }
        let Some(live) = lazy.load_at("vkEnumeratePhysicalDeviceGroups") else {
            // SAFETY: the caller's count and structures (this function's contract).
            return unsafe { ffi::fill_groups(&[], count, out) };
        };
        match live.instance.table().vkEnumeratePhysicalDeviceGroups {
            // SAFETY: the live driver's function with its own instance; the caller's count and
            // structures (this function's contract).
            Some(f) => unsafe { f(live.instance.handle(), count, out) },
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// One recorded plain structure (the body of a `2` query's head).
fn recorded<T: ZeroPadding + Copy + Default>(answers: &crate::cache::profile::DeviceAnswers, family: Family, input: u32, s_type: VkStructureType) -> Option<T> {
    let list = answers::decode_list::<T>(answers.get(answer_key(family, input, s_type.0 as u32))?)?;
    (list.len() == 1).then(|| list[0])
}

/// A 1.0 query with one output structure of a driver not loaded yet: the record's answer while
/// it has one, else the live driver's (loaded now if need be).
macro_rules! plain_query {
    ($name:ident, $command:literal, $slot:ident, $out_ty:ty, $family:expr, $head:expr $(, $input:ident: $input_ty:ty => $key:expr)?) => {
        #[doc = concat!("`", $command, "` of a driver not loaded yet.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `pd` a physical device of a live instance (a placeholder of a
        /// lazy driver, or the live device that replaced it), `out` valid for writing one
        /// structure. A NULL `out` is checked: nothing is done.
        unsafe extern "system" fn $name(pd: VkPhysicalDevice, $($input: $input_ty,)? out: *mut $out_ty) {
            ffi::guard($command, (), || {
                let Some((lazy, i)) = resolve(pd).filter(|_| !out.is_null()) else {
                    return;
                };
                #[allow(unused_mut, unused_assignments)]
                let mut input = 0u32;
                $(input = $key($input);)?
                let replay = |a: &crate::cache::profile::DeviceAnswers| {
                    let answer = recorded::<$out_ty>(a, $family, input, $head.structure.s_type())?;
                    // SAFETY: a non-NULL `out`, writable for one structure (this function's contract).
                    unsafe { out.write(answer) };
                    Some(())
                };
                let live = |table: &InstanceDispatchTable, handle| {
                    if let Some(f) = table.$slot {
                        // SAFETY: the live driver's function with its own device; `out` as the
                        // caller gave it (this function's contract).
                        unsafe { f(handle, $($input,)? out) }
                    }
                };
                lazy.answer_per_input($command, i, $family, input, replay, live, ())
            })
        }
    };
}

plain_query!(get_properties, "vkGetPhysicalDeviceProperties", vkGetPhysicalDeviceProperties, VkPhysicalDeviceProperties, Family::Properties, PROPERTIES_HEAD);
plain_query!(get_features, "vkGetPhysicalDeviceFeatures", vkGetPhysicalDeviceFeatures, VkPhysicalDeviceFeatures, Family::Features, FEATURES_HEAD);
plain_query!(
    get_memory_properties,
    "vkGetPhysicalDeviceMemoryProperties",
    vkGetPhysicalDeviceMemoryProperties,
    VkPhysicalDeviceMemoryProperties,
    Family::Memory,
    MEMORY_HEAD
);
plain_query!(
    get_format_properties,
    "vkGetPhysicalDeviceFormatProperties",
    vkGetPhysicalDeviceFormatProperties,
    VkFormatProperties,
    Family::Format,
    FORMAT_HEAD,
    format: VkFormat => |f: VkFormat| f.0 as u32
);

/// The `2` queries with a chain: answered when every structure of it was recorded.
macro_rules! chained_query {
    ($name:ident, $command:literal, $slot:ident, $out_ty:ty, $head:expr, $allowed:expr $(, $input:ident: $input_ty:ty => $key:expr)?) => {
        #[doc = concat!("`", $command, "` of a driver not loaded yet.")]
        ///
        /// # Safety
        /// Vulkan's valid usage: `pd` a physical device of a live instance (a placeholder of a
        /// lazy driver, or the live device that replaced it); `out` a writable structure whose
        /// `pNext` chain is valid (each element writable, of the type its `sType` names, its
        /// `sType` and `pNext` set). A NULL `out` is checked: nothing is done.
        unsafe extern "system" fn $name(pd: VkPhysicalDevice, $($input: $input_ty,)? out: *mut $out_ty) {
            ffi::guard($command, (), || {
                let Some((lazy, i)) = resolve(pd) else { return };
                // SAFETY: NULL or the caller's output structure and chain, valid for this call
                // (this function's contract).
                let Some(mut chain) = (unsafe { ffi::OutChain::new(out) }) else { return };
                #[allow(unused_mut, unused_assignments)]
                let mut input = 0u32;
                $(input = $key($input);)?
                let live = |table: &InstanceDispatchTable, handle| {
                    if let Some(f) = table.$slot {
                        // SAFETY: the live driver's function with its own device; `out` as the
                        // caller gave it (this function's contract).
                        unsafe { f(handle, $($input,)? out) }
                    }
                };
                lazy.answer_per_input($command, i, $head.family, input, |a| answers::replay_chain(&mut chain, &$head, $allowed, input, a).then_some(()), live, ())
            })
        }
    };
}

chained_query!(get_properties2, "vkGetPhysicalDeviceProperties2", vkGetPhysicalDeviceProperties2, VkPhysicalDeviceProperties2, PROPERTIES_HEAD, PROPERTIES);
chained_query!(get_features2, "vkGetPhysicalDeviceFeatures2", vkGetPhysicalDeviceFeatures2, VkPhysicalDeviceFeatures2, FEATURES_HEAD, FEATURES);
chained_query!(
    get_memory_properties2,
    "vkGetPhysicalDeviceMemoryProperties2",
    vkGetPhysicalDeviceMemoryProperties2,
    VkPhysicalDeviceMemoryProperties2,
    MEMORY_HEAD,
    &[]
);
chained_query!(
    get_format_properties2,
    "vkGetPhysicalDeviceFormatProperties2",
    vkGetPhysicalDeviceFormatProperties2,
    VkFormatProperties2,
    FORMAT_HEAD,
    FORMAT,
    format: VkFormat => |f: VkFormat| f.0 as u32
);

/// `vkGetPhysicalDeviceQueueFamilyProperties` of a driver not loaded yet.
///
/// # Safety
/// Vulkan's valid usage: `pd` a physical device of a live instance (a placeholder of a lazy
/// driver, or the live device that replaced it); `count` valid; `out` NULL or valid for writing
/// `*count` structures. A NULL `count` is checked: nothing is done.
unsafe extern "system" fn get_queue_family_properties(pd: VkPhysicalDevice, count: *mut u32, out: *mut VkQueueFamilyProperties) {
    ffi::guard("vkGetPhysicalDeviceQueueFamilyProperties", (), || {
        let Some((lazy, i)) = resolve(pd) else { return };
        if count.is_null() {
            return;
        }
        lazy.answer(
            "vkGetPhysicalDeviceQueueFamilyProperties",
            i,
            |a| {
                let families = answers::decode_list::<VkQueueFamilyProperties>(a.get(answer_key(Family::QueueFamilies, 0, 0))?)?;
                // SAFETY: the caller's count and array (this function's contract).
                unsafe { ffi::fill(&families, count, out) };
                Some(())
            },
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceQueueFamilyProperties {
                    // SAFETY: the live driver's function with its own device; the caller's count
                    // and array (this function's contract).
                    unsafe { f(handle, count, out) }
                }
            },
            (),
        )
    })
}

/// `vkGetPhysicalDeviceQueueFamilyProperties2` of a driver not loaded yet: from the record while
/// no structure chains anything (priorities, video, checkpoints are the driver's to fill).
///
/// # Safety
/// As [`get_queue_family_properties`], and each of the `*count` structures at a non-NULL `out`
/// has its `sType` and `pNext` set, its chain valid (Vulkan's valid usage of output structures).
unsafe extern "system" fn get_queue_family_properties2(pd: VkPhysicalDevice, count: *mut u32, out: *mut VkQueueFamilyProperties2) {
    ffi::guard("vkGetPhysicalDeviceQueueFamilyProperties2", (), || {
        let Some((lazy, i)) = resolve(pd) else { return };
        if count.is_null() {
            return;
        }
        lazy.answer(
            "vkGetPhysicalDeviceQueueFamilyProperties2",
            i,
            |a| {
                // SAFETY: the caller's count and structures (this function's contract).
                let view = unsafe { ffi::ChainedOutArray::new(count, out) }?;
                if view.any_chained() {
                    return None;
                }
                let families = answers::decode_list::<VkQueueFamilyProperties>(a.get(answer_key(Family::QueueFamilies, 0, 0))?)?;
                let wrap = |family: &VkQueueFamilyProperties, next| VkQueueFamilyProperties2 { pNext: next, queueFamilyProperties: *family, ..Default::default() };
                view.fill_keeping_headers(families.len(), families.iter(), wrap);
                Some(())
            },
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceQueueFamilyProperties2 {
                    // SAFETY: the live driver's function with its own device; the caller's count
                    // and structures (this function's contract).
                    unsafe { f(handle, count, out) }
                }
            },
            (),
        )
    })
}

/// `vkEnumerateDeviceExtensionProperties` of a driver not loaded yet: the recorded list, written
/// in place, when no layer is named.
///
/// # Safety
/// Vulkan's valid usage: `pd` a physical device of a live instance (a placeholder of a lazy
/// driver, or the live device that replaced it); `layer` NULL or a NUL-terminated name; `count`
/// valid; `out` NULL or valid for writing `*count` structures. A NULL `count` is
/// `VK_ERROR_INITIALIZATION_FAILED` when answered from the record.
unsafe extern "system" fn enumerate_device_extension_properties(
    pd: VkPhysicalDevice,
    layer: *const std::ffi::c_char,
    count: *mut u32,
    out: *mut VkExtensionProperties,
) -> VkResult {
    ffi::guard("vkEnumerateDeviceExtensionProperties", VkResult::ERROR_UNKNOWN, || {
        let Some((lazy, i)) = resolve(pd) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        lazy.answer(
            "vkEnumerateDeviceExtensionProperties",
            i,
            |a| {
                if !layer.is_null() {
                    return None;
                }
                let (bytes, read) = lazy.device_extensions(i, a)?;
                // SAFETY: the caller's count and array (this function's contract).
                match unsafe { ffi::OutArray::new(count, out) } {
                    Some(view) => Some(answers::fill_extensions(bytes, read.count, view)),
                    None => Some(VkResult::ERROR_INITIALIZATION_FAILED),
                }
            },
            |table, handle| match table.vkEnumerateDeviceExtensionProperties {
                // SAFETY: the live driver's function with its own device; the caller's layer
                // name, count and array (this function's contract).
                Some(f) => unsafe { f(handle, layer, count, out) },
                None => VkResult::ERROR_INITIALIZATION_FAILED,
            },
            VkResult::ERROR_INITIALIZATION_FAILED,
        )
    })
}
