//! The keys of the loader settings file (`vk_loader_settings.json`, as the Vulkan Configurator
//! writes it). `ALL` lists them in the documentation's order.

use super::{Origin, SettingsKey};

const TOP: &str = "the file";
const ENTRY: &str = "an entry";

pub const FILE_FORMAT_VERSION: SettingsKey = SettingsKey {
    name: "file_format_version",
    within: TOP,
    origin: Origin::Khronos,
    values: "a version string",
    default: "the file is not used",
    what: "required",
};
pub const SETTINGS_ARRAY: SettingsKey = SettingsKey {
    name: "settings_array",
    within: TOP,
    origin: Origin::Khronos,
    values: "an array of entries",
    default: "`settings` is read",
    what: "the entry whose `app_keys` name the executable applies, else the first without `app_keys`",
};
pub const SETTINGS: SettingsKey = SettingsKey {
    name: "settings",
    within: TOP,
    origin: Origin::Khronos,
    values: "one entry",
    default: "the file is not used (unless `settings_array` is there)",
    what: "the one entry, where there is no `settings_array`",
};
pub const APP_KEYS: SettingsKey = SettingsKey {
    name: "app_keys",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of executable paths",
    default: "the entry applies to every program",
    what: "the programs the entry applies to",
};
pub const STDERR_LOG: SettingsKey = SettingsKey {
    name: "stderr_log",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of `VK_LOADER_DEBUG` words",
    default: "`VK_LOADER_DEBUG` decides",
    what: "the messages written to stderr, in place of `VK_LOADER_DEBUG`",
};
pub const LOG_LOCATIONS: SettingsKey = SettingsKey {
    name: "log_locations",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of `{ destinations, filters }`",
    default: "no log file",
    what: "files that take some of the messages",
};
pub const DESTINATIONS: SettingsKey = SettingsKey {
    name: "destinations",
    within: "`log_locations`",
    origin: Origin::Khronos,
    values: "an array of absolute file paths",
    default: "the element is ignored",
    what: "the files the messages are appended to (a directory is ignored)",
};
pub const FILTERS: SettingsKey = SettingsKey {
    name: "filters",
    within: "`log_locations`",
    origin: Origin::Khronos,
    values: "an array of `VK_LOADER_DEBUG` words (`filter` is read too)",
    default: "the element is ignored",
    what: "which messages those files take",
};
pub const FILTER: SettingsKey = SettingsKey {
    name: "filter",
    within: "`log_locations`",
    origin: Origin::Khronos,
    values: "as `filters`",
    default: "`filters` is read",
    what: "the name the Khronos loader's tests write for `filters`",
};
pub const LAYERS: SettingsKey = SettingsKey {
    name: "layers",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of `{ name, path, control, treat_as_implicit_manifest }` and one `{ control: \"unordered_layer_location\" }`",
    default: "the usual layer rules",
    what: "which layers exist and in which order; the marker says where the layers the file does not name go",
};
pub const NAME: SettingsKey = SettingsKey {
    name: "name",
    within: "`layers`",
    origin: Origin::Khronos,
    values: "a layer name",
    default: "the list is ignored",
    what: "the layer",
};
pub const PATH: SettingsKey = SettingsKey {
    name: "path",
    within: "`layers`, `additional_drivers`",
    origin: Origin::Khronos,
    values: "a manifest path ending in `.json`",
    default: "the list is ignored",
    what: "the layer's or driver's manifest",
};
pub const CONTROL: SettingsKey = SettingsKey {
    name: "control",
    within: "`layers`",
    origin: Origin::Khronos,
    values: "`on`, `off`, `auto`, `unordered_layer_location`",
    default: "the list is ignored",
    what: "`on`: always in the chain; `off`: never loaded; `auto` (or anything else): the usual rules",
};
pub const TREAT_AS_IMPLICIT_MANIFEST: SettingsKey = SettingsKey {
    name: "treat_as_implicit_manifest",
    within: "`layers`",
    origin: Origin::Khronos,
    values: "`true`, `false`",
    default: "`false`",
    what: "the layer is implicit (its enable and disable variables apply)",
};
pub const ADDITIONAL_DRIVERS: SettingsKey = SettingsKey {
    name: "additional_drivers",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of `{ path }`",
    default: "none",
    what: "driver manifests loaded before the others",
};
pub const ADDITIONAL_DRIVERS_USE_EXCLUSIVELY: SettingsKey = SettingsKey {
    name: "additional_drivers_use_exclusively",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "`true`, `false`",
    default: "`false`",
    what: "`true`: the additional drivers are the only ones",
};
pub const DEVICE_CONFIGURATIONS: SettingsKey = SettingsKey {
    name: "device_configurations",
    within: ENTRY,
    origin: Origin::Khronos,
    values: "an array of `{ deviceUUID, driverUUID, driverVersion, deviceName, driverName }`",
    default: "every physical device, and the driver variables apply",
    what: "the only physical devices shown, in this order (a group with a device not configured is left out); the driver variables no longer apply",
};
pub const DEVICE_UUID: SettingsKey = SettingsKey {
    name: "deviceUUID",
    within: "`device_configurations`",
    origin: Origin::Khronos,
    values: "an array of 16 numbers 0-255",
    default: "the element is ignored",
    what: "the device's `VkPhysicalDeviceIDProperties::deviceUUID`",
};
pub const DRIVER_UUID: SettingsKey = SettingsKey {
    name: "driverUUID",
    within: "`device_configurations`",
    origin: Origin::Khronos,
    values: "an array of 16 numbers 0-255",
    default: "the element is ignored",
    what: "the device's `VkPhysicalDeviceIDProperties::driverUUID`",
};
pub const DRIVER_VERSION: SettingsKey = SettingsKey {
    name: "driverVersion",
    within: "`device_configurations`",
    origin: Origin::Khronos,
    values: "a 32-bit number",
    default: "the element is ignored",
    what: "the device's `driverVersion`",
};
pub const DEVICE_NAME: SettingsKey = SettingsKey {
    name: "deviceName",
    within: "`device_configurations`",
    origin: Origin::Khronos,
    values: "a string",
    default: "empty",
    what: "for messages",
};
pub const DRIVER_NAME: SettingsKey = SettingsKey {
    name: "driverName",
    within: "`device_configurations`",
    origin: Origin::Khronos,
    values: "a string",
    default: "empty",
    what: "for messages",
};
pub const DRIVER_CACHE: SettingsKey = SettingsKey {
    name: "driver_cache",
    within: ENTRY,
    origin: Origin::Ours,
    values: "`\"off\"`",
    default: "on",
    what: "`off`: no driver cache, as `VK_LOADER_DRIVER_CACHE=off` (the Khronos loader ignores the key)",
};

/// Every key, in the documentation's order.
pub const ALL: &[&SettingsKey] = &[
    &FILE_FORMAT_VERSION,
    &SETTINGS_ARRAY,
    &SETTINGS,
    &APP_KEYS,
    &STDERR_LOG,
    &LOG_LOCATIONS,
    &DESTINATIONS,
    &FILTERS,
    &FILTER,
    &LAYERS,
    &NAME,
    &PATH,
    &CONTROL,
    &TREAT_AS_IMPLICIT_MANIFEST,
    &ADDITIONAL_DRIVERS,
    &ADDITIONAL_DRIVERS_USE_EXCLUSIVELY,
    &DEVICE_CONFIGURATIONS,
    &DEVICE_UUID,
    &DRIVER_UUID,
    &DRIVER_VERSION,
    &DEVICE_NAME,
    &DRIVER_NAME,
    &DRIVER_CACHE,
];
