//! The table of a driver not loaded yet: physical devices and the recorded queries answered
//! from its record (the live driver asked instead once it is loaded, or when the record lacks the
//! answer). Every other slot is empty, which makes the terminators load the driver.

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

/// The lazy driver a front instance-level function received.
unsafe fn lazy_of<'a>(instance: VkInstance) -> Option<&'a Lazy> {
    (instance.0 as *const Lazy).as_ref()
}

/// Nothing to destroy until the driver is loaded (the live instance is destroyed through the live table).
unsafe extern "system" fn destroy_instance(_instance: VkInstance, _allocator: *const VkAllocationCallbacks) {}

unsafe extern "system" fn enumerate_physical_devices(instance: VkInstance, count: *mut u32, out: *mut VkPhysicalDevice) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDevices", VkResult::ERROR_UNKNOWN, || {
        let Some(lazy) = lazy_of(instance) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        match lazy.live.get() {
            None => {
                let fakes: Vec<VkPhysicalDevice> = (0..lazy.devices.len()).map(|i| lazy.fake(i)).collect();
                ffi::fill(&fakes, count, out)
            }
            Some(Ok(live)) => match live.table.vkEnumeratePhysicalDevices {
                Some(f) => f(live.handle, count, out),
                None => ffi::fill::<VkPhysicalDevice>(&[], count, out),
            },
            // A driver that failed to load has no device to offer.
            Some(Err(_)) => ffi::fill::<VkPhysicalDevice>(&[], count, out),
        }
    })
}

unsafe extern "system" fn enumerate_physical_device_groups(instance: VkInstance, count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties) -> VkResult {
    ffi::guard("vkEnumeratePhysicalDeviceGroups", VkResult::ERROR_UNKNOWN, || {
        let Some(lazy) = lazy_of(instance) else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // The application's structures may chain something for the driver to fill: the driver's.
        let plain = out.is_null() || (0..*count as usize).all(|i| (*out.add(i)).pNext.is_null());
        if let (None, true, Some(groups)) = (lazy.live.get(), plain, &lazy.profile.groups) {
            lazy.answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let all: Vec<VkPhysicalDeviceGroupProperties> = groups
                .iter()
                .map(|(members, subset)| {
                    let mut g = VkPhysicalDeviceGroupProperties { physicalDeviceCount: members.len() as u32, subsetAllocation: *subset, ..Default::default() };
                    for (slot, &m) in g.physicalDevices.iter_mut().zip(members) {
                        *slot = lazy.fake(m as usize);
                    }
                    g
                })
                .collect();
            return ffi::fill_groups(&all, count, out);
        }
        let Some(live) = lazy.load_at("vkEnumeratePhysicalDeviceGroups") else {
            return ffi::fill_groups(&[], count, out);
        };
        match live.table.vkEnumeratePhysicalDeviceGroups {
            Some(f) => f(live.handle, count, out),
            None => VkResult::ERROR_INITIALIZATION_FAILED,
        }
    })
}

/// One recorded plain structure (the body of a `2` query's head).
fn recorded<T: Copy + Default>(answers: &crate::cache::profile::DeviceAnswers, family: Family, input: u32, s_type: VkStructureType) -> Option<T> {
    let list = answers::decode_list::<T>(answers.get(answer_key(family, input, s_type.0 as u32))?)?;
    (list.len() == 1).then(|| list[0])
}

unsafe extern "system" fn get_properties(pd: VkPhysicalDevice, out: *mut VkPhysicalDeviceProperties) {
    ffi::guard("vkGetPhysicalDeviceProperties", (), || {
        let Some((lazy, i)) = resolve(pd).filter(|_| !out.is_null()) else {
            return;
        };
        lazy.answer(
            "vkGetPhysicalDeviceProperties",
            i,
            |a| recorded(a, Family::Properties, 0, PROPERTIES_HEAD.s_type).map(|p| *out = p),
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceProperties {
                    f(handle, out)
                }
            },
            (),
        )
    })
}

unsafe extern "system" fn get_features(pd: VkPhysicalDevice, out: *mut VkPhysicalDeviceFeatures) {
    ffi::guard("vkGetPhysicalDeviceFeatures", (), || {
        let Some((lazy, i)) = resolve(pd).filter(|_| !out.is_null()) else {
            return;
        };
        lazy.answer(
            "vkGetPhysicalDeviceFeatures",
            i,
            |a| recorded(a, Family::Features, 0, FEATURES_HEAD.s_type).map(|p| *out = p),
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceFeatures {
                    f(handle, out)
                }
            },
            (),
        )
    })
}

unsafe extern "system" fn get_memory_properties(pd: VkPhysicalDevice, out: *mut VkPhysicalDeviceMemoryProperties) {
    ffi::guard("vkGetPhysicalDeviceMemoryProperties", (), || {
        let Some((lazy, i)) = resolve(pd).filter(|_| !out.is_null()) else {
            return;
        };
        lazy.answer(
            "vkGetPhysicalDeviceMemoryProperties",
            i,
            |a| recorded(a, Family::Memory, 0, MEMORY_HEAD.s_type).map(|p| *out = p),
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceMemoryProperties {
                    f(handle, out)
                }
            },
            (),
        )
    })
}

unsafe extern "system" fn get_format_properties(pd: VkPhysicalDevice, format: VkFormat, out: *mut VkFormatProperties) {
    ffi::guard("vkGetPhysicalDeviceFormatProperties", (), || {
        let Some((lazy, i)) = resolve(pd).filter(|_| !out.is_null()) else {
            return;
        };
        lazy.answer(
            "vkGetPhysicalDeviceFormatProperties",
            i,
            |a| recorded(a, Family::Format, format.0 as u32, FORMAT_HEAD.s_type).map(|p| *out = p),
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceFormatProperties {
                    f(handle, format, out)
                }
            },
            (),
        )
    })
}

/// The `2` queries with a chain: answered when every structure of it was recorded.
macro_rules! chained_query {
    ($name:ident, $command:literal, $slot:ident, $out_ty:ty, $head:expr, $allowed:expr $(, $input:ident: $input_ty:ty => $key:expr)?) => {
        unsafe extern "system" fn $name(pd: VkPhysicalDevice, $($input: $input_ty,)? out: *mut $out_ty) {
            ffi::guard($command, (), || {
                let Some((lazy, i)) = resolve(pd) else { return };
                if out.is_null() {
                    return;
                }
                #[allow(unused_mut, unused_assignments)]
                let mut input = 0u32;
                $(input = $key($input);)?
                lazy.answer(
                    $command,
                    i,
                    |a| answers::replay_chain(out.cast(), &$head, $allowed, input, a).then_some(()),
                    |table, handle| {
                        if let Some(f) = table.$slot {
                            f(handle, $($input,)? out)
                        }
                    },
                    (),
                )
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
                ffi::fill(&families, count, out);
                Some(())
            },
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceQueueFamilyProperties {
                    f(handle, count, out)
                }
            },
            (),
        )
    })
}

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
                // Extension structures (priorities, video, checkpoints) are the driver's to fill.
                if !out.is_null() && (0..*count as usize).any(|j| !(*out.add(j)).pNext.is_null()) {
                    return None;
                }
                let families = answers::decode_list::<VkQueueFamilyProperties>(a.get(answer_key(Family::QueueFamilies, 0, 0))?)?;
                if out.is_null() {
                    *count = families.len() as u32;
                    return Some(());
                }
                let n = (*count as usize).min(families.len());
                for (j, family) in families.iter().take(n).enumerate() {
                    (*out.add(j)).queueFamilyProperties = *family;
                }
                *count = n as u32;
                Some(())
            },
            |table, handle| {
                if let Some(f) = table.vkGetPhysicalDeviceQueueFamilyProperties2 {
                    f(handle, count, out)
                }
            },
            (),
        )
    })
}

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
                Some(answers::fill_extensions(bytes, read.count, count, out))
            },
            |table, handle| match table.vkEnumerateDeviceExtensionProperties {
                Some(f) => f(handle, layer, count, out),
                None => VkResult::ERROR_INITIALIZATION_FAILED,
            },
            VkResult::ERROR_INITIALIZATION_FAILED,
        )
    })
}
