//! `VK_LOADER_DEVICE_ID_FILTER`, `VK_LOADER_VENDOR_ID_FILTER` and `VK_LOADER_DRIVER_ID_FILTER`:
//! comma lists of ids (decimal or `0x` hex) and inclusive ranges (`0x1000-0x10ff` or
//! `0x1000:0x10ff`); a physical device is reported only if it passes every filter that is set.

use crate::debug::log::Level;
use crate::reference::{variables, Variable};

/// One filter variable, parsed.
#[derive(Debug, PartialEq)]
pub struct IdFilter {
    variable: &'static str,
    ranges: Vec<(u32, u32)>,
}

impl IdFilter {
    /// Parses `value`, logging and dropping the entries that are not ids or ranges.
    pub fn parse(variable: &'static str, value: &str) -> IdFilter {
        let mut ranges = Vec::new();
        for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            // Ranges are `low-high`, or `low:high` as the Khronos loader's documentation writes them.
            let range = match entry.split_once(['-', ':']) {
                Some((low, high)) => parse_id(low).zip(parse_id(high)).filter(|(l, h)| l <= h),
                None => parse_id(entry).map(|id| (id, id)),
            };
            match range {
                Some(range) => ranges.push(range),
                None => log!(Level::Warn, "{variable}: ignoring {entry:?}: not an id or a low-high range"),
            }
        }
        IdFilter { variable, ranges }
    }

    /// The filter `variable` sets, if it is set (elevated processes ignore it). A value with no
    /// id or range in it filters nothing, with a warning: set but empty, the Khronos loader
    /// ignores it too, and an unparsable value hiding every device would be a typo's doing.
    pub fn from_env(variable: &'static Variable) -> Option<IdFilter> {
        IdFilter::from_value(variable.name, &variable.get()?)
    }

    /// [`IdFilter::parse`], `None` (with a warning) when `value` holds no id or range.
    fn from_value(variable: &'static str, value: &str) -> Option<IdFilter> {
        let filter = IdFilter::parse(variable, value);
        if filter.ranges.is_empty() {
            if !value.trim().is_empty() {
                log!(Level::Warn, "{variable}={value:?} names no id or range: ignored, no device is filtered by it");
            }
            return None;
        }
        Some(filter)
    }

    pub fn admits(&self, id: u32) -> bool {
        self.ranges.iter().any(|&(low, high)| (low..=high).contains(&id))
    }

    pub fn variable(&self) -> &'static str {
        self.variable
    }
}

fn parse_id(text: &str) -> Option<u32> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// The three filters as the environment sets them.
pub struct DeviceFilters {
    pub device_id: Option<IdFilter>,
    pub vendor_id: Option<IdFilter>,
    pub driver_id: Option<IdFilter>,
}

impl DeviceFilters {
    pub fn from_env() -> DeviceFilters {
        DeviceFilters {
            device_id: IdFilter::from_env(&variables::VK_LOADER_DEVICE_ID_FILTER),
            vendor_id: IdFilter::from_env(&variables::VK_LOADER_VENDOR_ID_FILTER),
            driver_id: IdFilter::from_env(&variables::VK_LOADER_DRIVER_ID_FILTER),
        }
    }

    /// Whether any filter is set.
    pub fn any(&self) -> bool {
        self.device_id.is_some() || self.vendor_id.is_some() || self.driver_id.is_some()
    }

    /// The filter that rejects a device with these ids, if one does. `driver_id` is `None` when
    /// the driver cannot report it (`VkPhysicalDeviceDriverProperties` needs Vulkan 1.2 or
    /// `VK_KHR_driver_properties`); such a device fails a driver-id filter.
    pub fn rejecting(&self, vendor_id: u32, device_id: u32, driver_id: impl FnOnce() -> Option<u32>) -> Option<&'static str> {
        let fails = |filter: &Option<IdFilter>, id: u32| filter.as_ref().filter(|f| !f.admits(id)).map(|f| f.variable());
        fails(&self.vendor_id, vendor_id)
            .or_else(|| fails(&self.device_id, device_id))
            .or_else(|| {
                let filter = self.driver_id.as_ref()?;
                match driver_id() {
                    Some(id) if filter.admits(id) => None,
                    _ => Some(filter.variable()),
                }
            })
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_ranges_in_decimal_and_hex() {
        let f = IdFilter::parse("V", "0x10de, 4098-4100,0X1002 ,7,0x20:0x2f");
        assert_eq!(f.ranges, [(0x10de, 0x10de), (4098, 4100), (0x1002, 0x1002), (7, 7), (0x20, 0x2f)]);
        for id in [0x10de, 4098, 4099, 4100, 7] {
            assert!(f.admits(id), "{id}");
        }
        for id in [0, 4097, 4101, 8] {
            assert!(!f.admits(id), "{id}");
        }
    }

    #[test]
    fn bad_entries_are_dropped() {
        let f = IdFilter::parse("V", "zz,5-3,0x,1-,12");
        assert_eq!(f.ranges, [(12, 12)]);
        // Nothing valid: no filter at all, rather than one that hides every device.
        assert_eq!(IdFilter::from_value("V", "zzz"), None);
        assert_eq!(IdFilter::from_value("V", " , "), None);
        assert!(IdFilter::from_value("V", "zzz,12").is_some_and(|f| f.admits(12) && !f.admits(0)));
    }

    #[test]
    fn every_set_filter_must_pass() {
        let filters = DeviceFilters {
            device_id: Some(IdFilter::parse("D", "1-9")),
            vendor_id: Some(IdFilter::parse("V", "0x10de")),
            driver_id: None,
        };
        assert_eq!(filters.rejecting(0x10de, 5, || None), None);
        assert_eq!(filters.rejecting(0x1002, 5, || None), Some("V"));
        assert_eq!(filters.rejecting(0x10de, 10, || None), Some("D"));
        let by_driver = DeviceFilters { device_id: None, vendor_id: None, driver_id: Some(IdFilter::parse("R", "13")) };
        assert_eq!(by_driver.rejecting(0, 0, || Some(13)), None);
        assert_eq!(by_driver.rejecting(0, 0, || Some(4)), Some("R"));
        assert_eq!(by_driver.rejecting(0, 0, || None), Some("R"), "an unknown driver id fails the filter");
    }
}
