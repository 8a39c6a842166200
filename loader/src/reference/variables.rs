//! The environment variables the loader reads. `ALL` lists them in the documentation's order.

use super::{Group, Origin, Read, Variable};

const PATH_LIST: &str = "colon list of manifest files (ending in `.json`) and folders of them";
const NAME_GLOBS: &str = "comma list of names, `*` at either end matching anything";

pub const XDG_CONFIG_HOME: Variable = Variable {
    name: "XDG_CONFIG_HOME",
    group: Group::Search,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "colon list of directories",
    default: "`$HOME/.config`",
    what: "searched first for `vulkan/icd.d`, `vulkan/explicit_layer.d`, `vulkan/implicit_layer.d` and the settings file",
};
pub const XDG_CONFIG_DIRS: Variable = Variable {
    name: "XDG_CONFIG_DIRS",
    group: Group::Search,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "colon list of directories",
    default: "`/etc/xdg`",
    what: "searched after `XDG_CONFIG_HOME`, before SYSCONFDIR",
};
pub const XDG_DATA_HOME: Variable = Variable {
    name: "XDG_DATA_HOME",
    group: Group::Search,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "colon list of directories",
    default: "`$HOME/.local/share`",
    what: "searched after SYSCONFDIR",
};
pub const XDG_DATA_DIRS: Variable = Variable {
    name: "XDG_DATA_DIRS",
    group: Group::Search,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "colon list of directories",
    default: "`/usr/local/share:/usr/share`",
    what: "searched last",
};
pub const HOME: Variable = Variable {
    name: "HOME",
    group: Group::Search,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "a directory",
    default: "no per-user directory is searched, and there is no driver cache",
    what: "the base of the XDG defaults above and of `XDG_CACHE_HOME`'s; `~/.drirc` and `~/.nv` are in the driver cache's key",
};

pub const VK_DRIVER_FILES: Variable = Variable {
    name: "VK_DRIVER_FILES",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::SecureEvenEmpty,
    values: PATH_LIST,
    default: "the search",
    what: "the driver manifests, in place of the search; set but empty, no driver (`VK_ERROR_INCOMPATIBLE_DRIVER`)",
};
pub const VK_ICD_FILENAMES: Variable = Variable {
    name: "VK_ICD_FILENAMES",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::SecureEvenEmpty,
    values: PATH_LIST,
    default: "the search",
    what: "the older name of `VK_DRIVER_FILES`, read when that is unset",
};
pub const VK_ADD_DRIVER_FILES: Variable = Variable {
    name: "VK_ADD_DRIVER_FILES",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: PATH_LIST,
    default: "none",
    what: "driver manifests searched before the usual directories",
};
pub const VK_LOADER_DRIVERS_SELECT: Variable = Variable {
    name: "VK_LOADER_DRIVERS_SELECT",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "comma list of manifest file names, `*` at either end matching anything",
    default: "every driver",
    what: "only the drivers matched are loaded (a selected driver is kept even when a disable pattern matches it too)",
};
pub const VK_LOADER_DRIVERS_DISABLE: Variable = Variable {
    name: "VK_LOADER_DRIVERS_DISABLE",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "comma list of manifest file names, `*` at either end matching anything",
    default: "none",
    what: "the drivers matched are not loaded",
};
pub const VK_LOADER_DISABLE_INST_EXT_FILTER: Variable = Variable {
    name: "VK_LOADER_DISABLE_INST_EXT_FILTER",
    group: Group::Drivers,
    origin: Origin::Khronos,
    read: Read::Plain,
    values: "any value",
    default: "instance extensions the loader does not know are not listed",
    what: "instance extensions the loader does not know are listed too",
};

pub const VK_LAYER_PATH: Variable = Variable {
    name: "VK_LAYER_PATH",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: PATH_LIST,
    default: "the search",
    what: "explicit layer manifests, in place of the search (an override layer's `override_paths` take its place)",
};
pub const VK_ADD_LAYER_PATH: Variable = Variable {
    name: "VK_ADD_LAYER_PATH",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: PATH_LIST,
    default: "none",
    what: "explicit layer manifests searched before the usual directories",
};
pub const VK_IMPLICIT_LAYER_PATH: Variable = Variable {
    name: "VK_IMPLICIT_LAYER_PATH",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: PATH_LIST,
    default: "the search",
    what: "implicit layer manifests, in place of the search",
};
pub const VK_ADD_IMPLICIT_LAYER_PATH: Variable = Variable {
    name: "VK_ADD_IMPLICIT_LAYER_PATH",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: PATH_LIST,
    default: "none",
    what: "implicit layer manifests searched before the usual directories",
};
pub const VK_INSTANCE_LAYERS: Variable = Variable {
    name: "VK_INSTANCE_LAYERS",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Plain,
    values: "colon list of layer names",
    default: "none",
    what: "layers enabled as if the application had named them, before its own",
};
pub const VK_LOADER_LAYERS_ENABLE: Variable = Variable {
    name: "VK_LOADER_LAYERS_ENABLE",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "comma list of layer names, `*` at either end matching anything; `~all~` for every layer (16 entries at most)",
    default: "none",
    what: "the layers matched are enabled",
};
pub const VK_LOADER_LAYERS_DISABLE: Variable = Variable {
    name: "VK_LOADER_LAYERS_DISABLE",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "comma list of layer names, `*` at either end matching anything; `~all~`, `~implicit~`, `~explicit~`",
    default: "none",
    what: "the layers matched are disabled, implicit ones too (the `~words~` aside, 16 entries at most)",
};
pub const VK_LOADER_LAYERS_ALLOW: Variable = Variable {
    name: "VK_LOADER_LAYERS_ALLOW",
    group: Group::Layers,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: NAME_GLOBS,
    default: "none",
    what: "the layers matched are kept even when `VK_LOADER_LAYERS_DISABLE` matches them",
};

pub const VK_LOADER_DEVICE_SELECT: Variable = Variable {
    name: "VK_LOADER_DEVICE_SELECT",
    group: Group::Devices,
    origin: Origin::Khronos,
    read: Read::Plain,
    values: "`vendorID:deviceID` in hexadecimal",
    default: "the loader's order",
    what: "that physical device first",
};
pub const VK_LOADER_DISABLE_SELECT: Variable = Variable {
    name: "VK_LOADER_DISABLE_SELECT",
    group: Group::Devices,
    origin: Origin::Khronos,
    read: Read::Plain,
    values: "a number (its leading digits, as C's `strtol` reads them; anything else is 0)",
    default: "`0`",
    what: "other than 0: physical devices unsorted, as the Khronos loader lists them then: the driver found last first, each driver's devices in its own order (`VK_LOADER_DEVICE_SELECT` is ignored)",
};
pub const VK_LOADER_DEVICE_ID_FILTER: Variable = Variable {
    name: "VK_LOADER_DEVICE_ID_FILTER",
    group: Group::Devices,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "comma list of ids (decimal or `0x` hexadecimal) and ranges (`low-high` or `low:high`)",
    default: "no filter",
    what: "only the physical devices whose device id is matched are shown",
};
pub const VK_LOADER_VENDOR_ID_FILTER: Variable = Variable {
    name: "VK_LOADER_VENDOR_ID_FILTER",
    group: Group::Devices,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "as `VK_LOADER_DEVICE_ID_FILTER`",
    default: "no filter",
    what: "only the physical devices whose vendor id is matched are shown",
};
pub const VK_LOADER_DRIVER_ID_FILTER: Variable = Variable {
    name: "VK_LOADER_DRIVER_ID_FILTER",
    group: Group::Devices,
    origin: Origin::Khronos,
    read: Read::Secure,
    values: "as `VK_LOADER_DEVICE_ID_FILTER`, on `VkDriverId` values",
    default: "no filter",
    what: "only the physical devices whose driver id is matched are shown",
};

pub const VK_LOADER_DEBUG: Variable = Variable {
    name: "VK_LOADER_DEBUG",
    group: Group::Logging,
    origin: Origin::Khronos,
    read: Read::Plain,
    values: "comma list of `error`, `warn`, `info`, `debug`, `layer`, `driver` (or `icd`, `implem`), `perf`, `all`; a prefix names the first of these it starts (`d`: `debug`), words are not trimmed",
    default: "nothing is written to stderr",
    what: "the loader's messages of those kinds on stderr",
};
pub const VK_LOADER_EXPLAIN: Variable = Variable {
    name: "VK_LOADER_EXPLAIN",
    group: Group::Logging,
    origin: Origin::Ours,
    read: Read::Secure,
    values: "a file path; `%p` in it is the process id",
    default: "no document is written",
    what: "every `vkCreateInstance` appends one JSON document of the loader's decisions to the file",
};

pub const VK_LOADER_DRIVER_CACHE: Variable = Variable {
    name: "VK_LOADER_DRIVER_CACHE",
    group: Group::Cache,
    origin: Origin::Ours,
    read: Read::Plain,
    values: "`on` (also `1`, `true`, `yes`), `off` (also `0`, `false`, `no`), `verify`; another value is warned about and ignored",
    default: "on",
    what: "`off`: the cache is neither read nor written; `verify`: every driver is loaded anyway and each difference from its record logged",
};
pub const VK_LOADER_LAZY_DRIVERS: Variable = Variable {
    name: "VK_LOADER_LAZY_DRIVERS",
    group: Group::Cache,
    origin: Origin::Ours,
    read: Read::Plain,
    values: "`on` (also `1`, `true`, `yes`), `off` (also `0`, `false`, `no`); another value is warned about and ignored",
    default: "on",
    what: "`off`: the cache is kept, but drivers with physical devices are loaded at `vkCreateInstance`",
};
pub const XDG_CACHE_HOME: Variable = Variable {
    name: "XDG_CACHE_HOME",
    group: Group::Cache,
    origin: Origin::Xdg,
    read: Read::Secure,
    values: "an absolute directory",
    default: "`$HOME/.cache`",
    what: "the cache is `$XDG_CACHE_HOME/vulkan-loader-rs/`; it is used only if the effective user owns it",
};
pub const DRIRC_CONFIGDIR: Variable = Variable {
    name: "DRIRC_CONFIGDIR",
    group: Group::Cache,
    origin: Origin::Mesa,
    read: Read::Secure,
    values: "a directory",
    default: "`/usr/share/drirc.d`",
    what: "Mesa's driconf directory in place of `/usr/share/drirc.d`: its files are in the driver cache's key",
};

pub const MESA_PROCESS_NAME: Variable = Variable {
    name: "MESA_PROCESS_NAME",
    group: Group::Cache,
    origin: Origin::Mesa,
    read: Read::Secure,
    values: "a name",
    default: "the executable's name",
    what: "the name Mesa's driconf matches the application by: one of the names the driver cache tests driconf's rules on for an application it holds no record for",
};
pub const MESA_DRICONF_EXECUTABLE_OVERRIDE: Variable = Variable {
    name: "MESA_DRICONF_EXECUTABLE_OVERRIDE",
    group: Group::Cache,
    origin: Origin::Mesa,
    read: Read::Secure,
    values: "a name",
    default: "the executable's name",
    what: "like `MESA_PROCESS_NAME`, for driconf alone",
};

pub const VK_LOADER_TEST_SYSFS_ROOT: Variable = Variable {
    name: "VK_LOADER_TEST_SYSFS_ROOT",
    group: Group::Testing,
    origin: Origin::Test,
    read: Read::Secure,
    values: "a directory",
    default: "`/`",
    what: "stands for `/` where the driver cache reads `/proc/bus/pci`, `/sys` and `/dev`",
};
pub const VK_LOADER_TEST_BUILD_ID: Variable = Variable {
    name: "VK_LOADER_TEST_BUILD_ID",
    group: Group::Testing,
    origin: Origin::Test,
    read: Read::Secure,
    values: "any text",
    default: "none",
    what: "stands for another build of the loader in the driver cache's key",
};
pub const VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD: Variable = Variable {
    name: "VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD",
    group: Group::Testing,
    origin: Origin::Test,
    read: Read::Secure,
    values: "any value",
    default: "none",
    what: "debug builds only: loading a lazy driver panics, so a test sees the call that needed it fail instead of the process abort",
};

/// Every variable, in the documentation's order.
pub const ALL: &[&Variable] = &[
    &XDG_CONFIG_HOME,
    &XDG_CONFIG_DIRS,
    &XDG_DATA_HOME,
    &XDG_DATA_DIRS,
    &HOME,
    &VK_DRIVER_FILES,
    &VK_ICD_FILENAMES,
    &VK_ADD_DRIVER_FILES,
    &VK_LOADER_DRIVERS_SELECT,
    &VK_LOADER_DRIVERS_DISABLE,
    &VK_LOADER_DISABLE_INST_EXT_FILTER,
    &VK_LAYER_PATH,
    &VK_ADD_LAYER_PATH,
    &VK_IMPLICIT_LAYER_PATH,
    &VK_ADD_IMPLICIT_LAYER_PATH,
    &VK_INSTANCE_LAYERS,
    &VK_LOADER_LAYERS_ENABLE,
    &VK_LOADER_LAYERS_DISABLE,
    &VK_LOADER_LAYERS_ALLOW,
    &VK_LOADER_DEVICE_SELECT,
    &VK_LOADER_DISABLE_SELECT,
    &VK_LOADER_DEVICE_ID_FILTER,
    &VK_LOADER_VENDOR_ID_FILTER,
    &VK_LOADER_DRIVER_ID_FILTER,
    &VK_LOADER_DEBUG,
    &VK_LOADER_EXPLAIN,
    &VK_LOADER_DRIVER_CACHE,
    &VK_LOADER_LAZY_DRIVERS,
    &XDG_CACHE_HOME,
    &DRIRC_CONFIGDIR,
    &MESA_PROCESS_NAME,
    &MESA_DRICONF_EXECUTABLE_OVERRIDE,
    &VK_LOADER_TEST_SYSFS_ROOT,
    &VK_LOADER_TEST_BUILD_ID,
    &VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD,
];
