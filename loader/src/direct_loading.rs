//! `VK_LUNARG_direct_driver_loading`: drivers the application hands over in
//! `VkInstanceCreateInfo::pNext`, beside (inclusive mode) or instead of (exclusive mode) the drivers
//! found through manifests.

use std::ffi::CStr;

use vk_generated::types::*;

use crate::driver::Gipa;
use crate::log::{self, Level};

pub const EXTENSION: &CStr = c"VK_LUNARG_direct_driver_loading";

/// The drivers of a `VkDirectDriverLoadingListLUNARG`.
pub struct DirectDrivers {
    /// Exclusive mode: manifests are not searched at all.
    pub exclusive: bool,
    /// Each driver's `vk_icdGetInstanceProcAddr`, with a name for messages.
    pub drivers: Vec<(String, Gipa)>,
}

/// The list chained to `info`, if the application chained one and enabled the extension.
///
/// # Safety
/// `info` must be a valid create info.
pub unsafe fn requested(info: &VkInstanceCreateInfo, extension_enabled: bool) -> Option<DirectDrivers> {
    let list: &VkDirectDriverLoadingListLUNARG = vk_generated::find_in_chain(info.pNext)?;
    if !extension_enabled {
        log::log(Level::Warn, "VkDirectDriverLoadingListLUNARG ignored: VK_LUNARG_direct_driver_loading is not enabled");
        return None;
    }
    let infos: &[VkDirectDriverLoadingInfoLUNARG] = match list.pDrivers.is_null() {
        true => &[],
        false => std::slice::from_raw_parts(list.pDrivers, list.driverCount as usize),
    };
    let mut drivers = Vec::new();
    for (index, driver) in infos.iter().enumerate() {
        let name = format!("VkDirectDriverLoadingListLUNARG::pDrivers[{index}]");
        match driver.pfnGetInstanceProcAddr {
            Some(gipa) => drivers.push((name, gipa)),
            None => log!(Level::Warn, "{name}: skipped: pfnGetInstanceProcAddr is NULL"),
        }
    }
    let exclusive = list.mode == VkDirectDriverLoadingModeLUNARG::EXCLUSIVE_LUNARG;
    log!(Level::Driver, "{} direct driver(s), {} mode", drivers.len(), if exclusive { "exclusive" } else { "inclusive" });
    Some(DirectDrivers { exclusive, drivers })
}
