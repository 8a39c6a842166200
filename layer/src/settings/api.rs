//! The application's `VkLayerSettingsCreateInfoEXT` (`VK_EXT_layer_settings`): every such
//! structure in the `vkCreateInstance` `pNext` chain, the first entry for a layer and setting
//! winning.

use std::ffi::{c_char, c_void, CStr};

use vk_generated::types::{
    VkLayerSettingEXT, VkLayerSettingTypeEXT, VkLayerSettingsCreateInfoEXT, VkStructureType,
};

use super::Raw;

/// The value the application gives `layer`'s `setting`, if any, as the raw strings or numbers of
/// its type; `Err` names what is wrong with it.
///
/// # Safety
/// `p_next` is a valid `pNext` chain (the application's, per the API).
pub unsafe fn find(
    p_next: *const c_void,
    layer: &str,
    setting: &str,
) -> Option<Result<Raw, String>> {
    // SAFETY: per the caller's contract, a valid chain.
    let elements = unsafe { vk_generated::chain_elements(p_next) };
    for (s_type, element) in elements {
        if s_type != VkStructureType::LAYER_SETTINGS_CREATE_INFO_EXT {
            continue;
        }
        // SAFETY: its `sType` says this structure is a `VkLayerSettingsCreateInfoEXT`.
        let info = unsafe { &*(element as *const VkLayerSettingsCreateInfoEXT) };
        if info.pSettings.is_null() {
            continue;
        }
        // SAFETY: the application's array of `settingCount` entries.
        let entries =
            unsafe { std::slice::from_raw_parts(info.pSettings, info.settingCount as usize) };
        for entry in entries {
            // SAFETY: NUL-terminated names or null, per the API.
            let named = unsafe {
                c_str(entry.pLayerName) == Some(layer) && c_str(entry.pSettingName) == Some(setting)
            };
            if named {
                // SAFETY: `pValues` holds `valueCount` values of `type`.
                return Some(unsafe { values(entry) });
            }
        }
    }
    None
}

/// # Safety
/// `p` is null or NUL-terminated.
unsafe fn c_str<'a>(p: *const c_char) -> Option<&'a str> {
    // SAFETY: per the caller's contract.
    (!p.is_null())
        .then(|| unsafe { CStr::from_ptr(p) }.to_str().ok())
        .flatten()
}

/// # Safety
/// `entry.pValues` holds `entry.valueCount` values of `entry.type`.
unsafe fn values(entry: &VkLayerSettingEXT) -> Result<Raw, String> {
    let n = entry.valueCount as usize;
    if n > 0 && entry.pValues.is_null() {
        return Err("pValues is null".into());
    }
    /// # Safety
    /// `p` holds `n` values of `T` (or `n` is 0).
    unsafe fn read<T: Copy, U>(p: *const c_void, n: usize, f: impl Fn(T) -> U) -> Vec<U> {
        if n == 0 {
            return Vec::new();
        }
        // SAFETY: per the caller's contract.
        unsafe { std::slice::from_raw_parts(p as *const T, n) }
            .iter()
            .map(|&v| f(v))
            .collect()
    }
    let p = entry.pValues;
    // SAFETY: per the caller's contract, `pValues` is an array of the named type.
    unsafe {
        Ok(match entry.r#type {
            VkLayerSettingTypeEXT::BOOL32_EXT => Raw::Bools(read(p, n, |v: u32| v != 0)),
            VkLayerSettingTypeEXT::INT32_EXT => Raw::Ints(read(p, n, |v: i32| i128::from(v))),
            VkLayerSettingTypeEXT::INT64_EXT => Raw::Ints(read(p, n, |v: i64| i128::from(v))),
            VkLayerSettingTypeEXT::UINT32_EXT => Raw::Ints(read(p, n, |v: u32| i128::from(v))),
            VkLayerSettingTypeEXT::UINT64_EXT => Raw::Ints(read(p, n, |v: u64| i128::from(v))),
            VkLayerSettingTypeEXT::STRING_EXT => {
                let strings = read(p, n, |s: *const c_char| c_str(s).map(str::to_string));
                Raw::Strings(
                    strings
                        .into_iter()
                        .collect::<Option<Vec<_>>>()
                        .ok_or("a string is null or not UTF-8")?,
                )
            }
            other => return Err(format!("type {} is not supported by this layer", other.0)),
        })
    }
}
