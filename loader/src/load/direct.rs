//! `VK_LUNARG_direct_driver_loading`: drivers the application hands over in
//! `VkInstanceCreateInfo::pNext`, beside (inclusive mode) or instead of (exclusive mode) the drivers
//! found through manifests. The messages are the Khronos loader's, which its users search for.

use std::ffi::CStr;

use vk_generated::types::*;

use crate::debug::log::{self, Level};
use crate::given::instance_create_info::InstanceCreateInfo;
use crate::load::driver::Gipa;

pub const EXTENSION: &CStr = c"VK_LUNARG_direct_driver_loading";

/// The drivers of a `VkDirectDriverLoadingListLUNARG`.
pub struct DirectDrivers {
    /// Exclusive mode: manifests are not searched at all.
    pub exclusive: bool,
    /// Each driver's `vk_icdGetInstanceProcAddr`, with its index in `pDrivers`.
    pub drivers: Vec<(usize, Gipa)>,
}

/// The list chained to `info`, if the application chained one and enabled the extension; a NULL
/// `pDrivers` or a zero count is logged and ignored.
pub fn requested(info: InstanceCreateInfo<'_>, extension_enabled: bool) -> Option<DirectDrivers> {
    let Some(list) = info.find::<VkDirectDriverLoadingListLUNARG>() else {
        if extension_enabled {
            log::log(
                Level::WarnDriver,
                "loader_scan_for_direct_drivers: The VK_LUNARG_direct_driver_loading extension was enabled but the pNext chain \
                 of VkInstanceCreateInfo did not contain the VkDirectDriverLoadingListLUNARG structure.",
            );
        }
        return None;
    };
    if !extension_enabled {
        log::log(
            Level::WarnDriver,
            "loader_scan_for_direct_drivers: The pNext chain of VkInstanceCreateInfo contained the \
             VkDirectDriverLoadingListLUNARG structure, but the VK_LUNARG_direct_driver_loading extension was not enabled.",
        );
        return None;
    }
    let exclusive = list.mode == VkDirectDriverLoadingModeLUNARG::EXCLUSIVE_LUNARG;
    if exclusive {
        log::log(
            Level::InfoDriver,
            "loader_scan_for_direct_drivers: The VK_LUNARG_direct_driver_loading extension is active and specified \
             VK_DIRECT_DRIVER_LOADING_MODE_EXCLUSIVE_LUNARG, skipping system and environment variable driver search mechanisms.",
        );
    }
    // SAFETY: a structure of a valid create info's chain (`InstanceCreateInfo`): its `pDrivers`
    // NULL or valid for `driverCount` elements.
    Some(DirectDrivers { exclusive, drivers: unsafe { drivers_of(list) } })
}

/// The entries of the list that name a `vk_icdGetInstanceProcAddr`.
///
/// # Safety
/// `list.pDrivers` must be NULL or valid for `list.driverCount` elements.
unsafe fn drivers_of(list: &VkDirectDriverLoadingListLUNARG) -> Vec<(usize, Gipa)> {
    if list.pDrivers.is_null() {
        log::log(
            Level::WarnDriver,
            "loader_scan_for_direct_drivers: The VkDirectDriverLoadingListLUNARG structure in the pNext chain of \
             VkInstanceCreateInfo has a NULL pDrivers member.",
        );
        return Vec::new();
    }
    if list.driverCount == 0 {
        log::log(
            Level::WarnDriver,
            "loader_scan_for_direct_drivers: The VkDirectDriverLoadingListLUNARG structure in the pNext chain of \
             VkInstanceCreateInfo has a non-null pDrivers member but a driverCount member with a value of zero.",
        );
        return Vec::new();
    }
    // SAFETY: `pDrivers` is not NULL and, by the caller's contract, valid for `driverCount`
    // elements, which the application does not change during the call.
    let infos = unsafe { std::slice::from_raw_parts(list.pDrivers, list.driverCount as usize) };
    let mut drivers = Vec::with_capacity(infos.len());
    for (index, driver) in infos.iter().enumerate() {
        match driver.pfnGetInstanceProcAddr {
            Some(gipa) => drivers.push((index, gipa)),
            None => log!(
                Level::ErrorDriver,
                "loader_add_direct_driver: VkDirectDriverLoadingInfoLUNARG structure at index {index} contains a NULL pointer \
                 for the pfnGetInstanceProcAddr member, skipping."
            ),
        }
    }
    drivers
}
