//! What the loader decided for one instance, and why: every driver and layer manifest it
//! considered with its decision and a reason naming the cause (a variable and its value, a
//! manifest field, the settings file, a filter pattern, a library that cannot be opened), the
//! layer order, and the physical devices in the order the application sees them.
//!
//! The plan is recorded where the loader decides, and only while someone asks (`VK_LOADER_EXPLAIN`,
//! `vk-loader explain`): otherwise [`record`] is one thread-local read. `document` writes it as
//! one JSON document of the schema [`SCHEMA`] (docs/user-guide/explaining-and-logging.md).

pub mod device_filter;
pub mod document;
pub mod layers;
pub mod name_filter;

use std::cell::RefCell;

/// The JSON document's schema name and version: a reader checks both.
pub const SCHEMA: &str = "vk-loader-explain";
pub const SCHEMA_VERSION: u32 = 1;

/// What became of a driver manifest, a layer or a physical device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// In the instance: a driver whose instance exists, a layer in the chain, a listed device.
    Used,
    /// Left out by a rule that applies to it (a filter, a duplicate, another architecture, no
    /// devices, portability enumeration not enabled).
    Skipped,
    /// A layer that is not switched on (an explicit layer nobody named, an implicit layer whose
    /// `disable_environment` is set, one turned off by a variable or the settings file).
    Off,
    /// A layer the override layer (`VK_LAYER_LUNARG_override`) or the settings file replaces.
    Overridden,
    /// Broken: a manifest that cannot be parsed, a library that cannot be opened, a driver or
    /// layer whose calls fail.
    Rejected,
    /// A physical device a filter variable or the settings file hides from the application.
    Hidden,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Decision::Used => "used",
            Decision::Skipped => "skipped",
            Decision::Off => "off",
            Decision::Overridden => "overridden",
            Decision::Rejected => "rejected",
            Decision::Hidden => "hidden",
        }
    }
}

/// One driver manifest (or driver handed over through `VK_LUNARG_direct_driver_loading`).
#[derive(Debug, Clone, PartialEq)]
pub struct DriverEntry {
    pub manifest: String,
    pub library: Option<String>,
    pub decision: Decision,
    pub reason: String,
}

/// One layer, by name and manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerEntry {
    pub name: String,
    pub manifest: String,
    pub implicit: bool,
    pub decision: Decision,
    pub reason: String,
    /// Place in the instance chain, 0 nearest the application, when used.
    pub position: Option<usize>,
}

/// One physical device a driver reported.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceEntry {
    /// The driver's handle: which device this is across enumerations (not written out).
    pub key: u64,
    pub name: String,
    pub device_type: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub api_version: u32,
    pub driver: String,
    pub decision: Decision,
    pub reason: String,
    /// Index in `vkEnumeratePhysicalDevices`'s list, when listed.
    pub position: Option<usize>,
}

/// What the driver cache holds for one driver and the application explained (see
/// `cache::recorded_for`).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheRecord {
    pub manifest: String,
    /// The application's digest (its executable, names and `VkApplicationInfo`), in hexadecimal.
    pub application: String,
    pub physical_devices: u32,
    /// Whether what its physical devices answered is recorded too (the driver can stay unloaded).
    pub device_answers: bool,
    /// When it was recorded (seconds since the epoch), and how long ago, for people.
    pub written: u64,
    pub age: String,
}

/// Everything decided for one instance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The loader settings file in force, if any.
    pub settings_file: Option<String>,
    /// Where no settings file is in force but one exists: the file and why it gives nothing.
    pub settings_file_unused: Option<String>,
    /// The executable decided for, and the application digest its driver cache records are
    /// kept under (known once `vkCreateInstance` saw its `VkApplicationInfo`).
    pub executable: Option<String>,
    pub application: Option<String>,
    /// The driver cache's records stored for the executable.
    pub cache_records: Vec<CacheRecord>,
    pub drivers: Vec<DriverEntry>,
    pub layers: Vec<LayerEntry>,
    /// Devices in the order they were decided; the document lists them by position.
    pub devices: Vec<DeviceEntry>,
    /// `vkCreateInstance`'s result, once known.
    pub result: Option<String>,
}

impl Plan {
    /// Records a driver's decision; a later decision about the same manifest replaces an
    /// earlier one (loaded, then its instance failed).
    pub fn driver(&mut self, manifest: &str, library: Option<&str>, decision: Decision, reason: impl Into<String>) {
        let entry = DriverEntry { manifest: manifest.to_string(), library: library.map(str::to_string), decision, reason: reason.into() };
        match self.drivers.iter_mut().find(|d| d.manifest == manifest) {
            Some(existing) => {
                let library = entry.library.clone().or(existing.library.take());
                *existing = DriverEntry { library, ..entry };
            }
            None => self.drivers.push(entry),
        }
    }

    /// Records a layer's decision; a later decision about the same layer (name and manifest)
    /// replaces an earlier one (found, then chosen, then failed to load).
    pub fn layer(&mut self, name: &str, manifest: &str, implicit: bool, decision: Decision, reason: impl Into<String>) {
        let reason = reason.into();
        match self.layers.iter_mut().find(|l| l.name == name && l.manifest == manifest) {
            Some(existing) => {
                existing.decision = decision;
                existing.reason = reason;
                if decision != Decision::Used {
                    existing.position = None;
                }
            }
            None => self.layers.push(LayerEntry {
                name: name.to_string(),
                manifest: manifest.to_string(),
                implicit,
                decision,
                reason,
                position: None,
            }),
        }
    }

    /// Records a layer as found, unless a decision about it is already recorded (the catalog
    /// may be read again after the layers were chosen).
    pub fn layer_found(&mut self, name: &str, manifest: &str, implicit: bool) {
        if !self.layers.iter().any(|l| l.name == name && l.manifest == manifest) {
            let reason = if implicit {
                "implicit layer, not switched on"
            } else {
                "explicit layer that nothing names (the application's ppEnabledLayerNames, VK_INSTANCE_LAYERS, \
                 VK_LOADER_LAYERS_ENABLE or the loader settings file)"
            };
            self.layer(name, manifest, implicit, Decision::Off, reason);
        }
    }

    /// Gives the used layers their chain positions, in `order` (names, nearest the application
    /// first).
    pub fn layer_order(&mut self, order: &[(&str, &str)]) {
        for (position, (name, manifest)) in order.iter().enumerate() {
            if let Some(l) = self.layers.iter_mut().find(|l| l.name == *name && l.manifest == *manifest) {
                l.position = Some(position);
            }
        }
    }

    /// Records a device as a driver reported it; the same device reported again (at another
    /// enumeration) replaces its entry.
    pub fn device(&mut self, entry: DeviceEntry) {
        match self.devices.iter_mut().find(|d| d.key == entry.key) {
            Some(existing) => *existing = entry,
            None => self.devices.push(entry),
        }
    }

    /// Gives the listed devices (by key) their positions. The other devices recorded as used
    /// were left out by the settings file's `device_configurations` (`by_settings`).
    pub fn device_order(&mut self, listed: &[u64], by_settings: Option<&str>) {
        for d in &mut self.devices {
            d.position = listed.iter().position(|&k| k == d.key);
            match (d.position, by_settings) {
                (Some(at), Some(file)) => d.reason = format!("position {at} of the device_configurations of the loader settings file {file}"),
                (None, Some(file)) if d.decision == Decision::Used => {
                    d.decision = Decision::Hidden;
                    d.reason = format!("not in the device_configurations of the loader settings file {file}");
                }
                _ => {}
            }
        }
    }
}

/// The entries with a position first, by position, then the others in recorded order. (A
/// handful of entries: picked by position rather than sorted, which would instantiate a sort.)
pub(crate) fn ordered<T>(entries: &[T], position: impl Fn(&T) -> Option<usize>) -> Vec<&T> {
    let position = &position;
    let mut out: Vec<&T> = (0..entries.len()).flat_map(|at| entries.iter().filter(move |e| position(e) == Some(at))).collect();
    out.extend(entries.iter().filter(|e| position(e).is_none()));
    out
}

/// `major.minor.patch` of a Vulkan version number.
pub fn version_text(version: u32) -> String {
    let (major, minor) = vk_generated::api_version_major_minor(version);
    format!("{major}.{minor}.{}", version & 0xfff)
}

thread_local! {
    /// The plan being recorded on this thread (instance creation runs on the caller's thread,
    /// layers included), if anyone asked for one.
    static RECORDING: RefCell<Option<Plan>> = const { RefCell::new(None) };
}

/// Whether a plan is being recorded on this thread: the places that decide may then gather
/// what they otherwise skip (the explicit layers nobody named).
pub fn recording() -> bool {
    RECORDING.with(|r| r.try_borrow().is_ok_and(|r| r.is_some()))
}

/// Lets `f` write into the plan being recorded, if one is. Cold and out of line: the decision
/// points pay one thread-local read when nobody asks, and their code stays small.
#[cold]
#[inline(never)]
pub fn record(f: impl FnOnce(&mut Plan)) {
    RECORDING.with(|r| {
        if let Ok(mut slot) = r.try_borrow_mut() {
            if let Some(plan) = slot.as_mut() {
                f(plan);
            }
        }
    });
}

/// While alive, decisions on this thread are recorded; [`Recording::finish`] hands them over.
/// A recording already under way (an explain run that creates an instance with
/// `VK_LOADER_EXPLAIN` set) is continued, and handed over by whoever started it.
pub struct Recording {
    started_here: bool,
}

impl Recording {
    pub fn start() -> Recording {
        let started_here = RECORDING.with(|r| {
            let mut slot = r.borrow_mut();
            let fresh = slot.is_none();
            if fresh {
                *slot = Some(Plan::default());
            }
            fresh
        });
        Recording { started_here }
    }

    /// The plan recorded so far (a copy, when the recording belongs to an outer one).
    pub fn finish(self) -> Plan {
        let plan = RECORDING.with(|r| {
            let mut slot = r.borrow_mut();
            if self.started_here { slot.take() } else { slot.clone() }
        });
        std::mem::forget(self);
        plan.unwrap_or_default()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if self.started_here {
            RECORDING.with(|r| r.borrow_mut().take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_decisions_replace_earlier_ones_and_keep_the_library() {
        let mut plan = Plan::default();
        plan.driver("/a.json", Some("/liba.so"), Decision::Used, "loaded");
        plan.driver("/a.json", None, Decision::Rejected, "its vkCreateInstance returned ERROR_INITIALIZATION_FAILED");
        assert_eq!(plan.drivers.len(), 1);
        assert_eq!(plan.drivers[0].decision, Decision::Rejected);
        assert_eq!(plan.drivers[0].library.as_deref(), Some("/liba.so"));
    }

    #[test]
    fn a_layer_that_fails_after_being_chosen_loses_its_position() {
        let mut plan = Plan::default();
        plan.layer("A", "/a.json", false, Decision::Used, "named in VK_INSTANCE_LAYERS");
        plan.layer_order(&[("A", "/a.json")]);
        plan.layer("A", "/a.json", false, Decision::Rejected, "cannot open /liba.so");
        assert_eq!(plan.layers[0].position, None);
    }

    #[test]
    fn nothing_is_recorded_unless_a_recording_runs() {
        record(|p| p.driver("/x.json", None, Decision::Used, "x"));
        assert!(!recording());
        let recording = Recording::start();
        assert!(super::recording());
        record(|p| p.driver("/y.json", None, Decision::Used, "y"));
        let inner = Recording::start();
        record(|p| p.driver("/z.json", None, Decision::Used, "z"));
        assert_eq!(inner.finish().drivers.len(), 2, "an inner recording continues the outer one");
        let plan = recording.finish();
        assert_eq!(plan.drivers.iter().map(|d| d.manifest.as_str()).collect::<Vec<_>>(), ["/y.json", "/z.json"]);
        assert!(!super::recording());
    }
}
