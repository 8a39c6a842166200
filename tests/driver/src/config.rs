//! The driver's behaviour, read from the environment (see README.md).
//!
//! Every variable is looked up first with the library's tag appended (`VK_TEST_DRIVER_DEVICES_B`
//! for a copy named `libvk_test_driver_b.so`), then plain, so one process can load several copies
//! of the driver that behave differently.

use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

use vk_generated::make_api_version;
use vk_generated::types::VkPhysicalDeviceType;

const DEFAULT_DEVICES: &str = "discrete:10de:2330";
const DEFAULT_INSTANCE_EXTENSIONS: &[&str] =
    &["VK_KHR_surface", "VK_KHR_get_physical_device_properties2"];
const DEFAULT_DEVICE_EXTENSIONS: &[&str] = &["VK_KHR_swapchain"];
const DEFAULT_VENDOR_ID: u32 = 0x10de;
const DEFAULT_DEVICE_ID: u32 = 0x2330;
/// The newest loader-driver interface this driver speaks.
pub const MAX_INTERFACE_VERSION: u32 = 7;

/// One physical device the driver reports.
#[derive(Clone, Debug)]
pub struct DeviceSpec {
    pub device_type: VkPhysicalDeviceType,
    /// The word used in the variable, for `deviceName`.
    pub type_name: &'static str,
    pub vendor_id: u32,
    pub device_id: u32,
    /// `deviceName` as a driconf file forces it (see [`driconf_device_name`]).
    pub forced_name: Option<String>,
}

/// What an instance of the driver reports, fixed at `vkCreateInstance`.
#[derive(Clone, Debug)]
pub struct Config {
    pub devices: Vec<DeviceSpec>,
    pub api_version: u32,
    pub fail_create_instance: bool,
    pub instance_extensions: Vec<String>,
    pub device_extensions: Vec<String>,
    /// `VkPhysicalDeviceDriverProperties::driverID`.
    pub driver_id: i32,
}

impl Config {
    pub fn from_env() -> Config {
        let forced_name = driconf_device_name();
        let devices = devices().into_iter().map(|d| DeviceSpec { forced_name: forced_name.clone(), ..d }).collect();
        Config {
            devices,
            api_version: api_version(),
            fail_create_instance: flag("FAIL_CREATE_INSTANCE"),
            instance_extensions: instance_extensions(),
            device_extensions: device_extensions(),
            driver_id: number("DRIVER_ID").unwrap_or(0) as i32,
        }
    }
}

/// What a driconf file says of `force_vk_devicename`, read when an instance is created as Mesa's
/// drivers read theirs: `$HOME/.drirc`, a line `<option name="force_vk_devicename" value="..."/>`
/// (the driver cache keys on the file; this lets a test see the live answer change).
fn driconf_device_name() -> Option<String> {
    let text = std::fs::read_to_string(format!("{}/.drirc", std::env::var("HOME").ok()?)).ok()?;
    let line = text.lines().find(|l| l.contains("name=\"force_vk_devicename\""))?;
    let value = line.split("value=\"").nth(1)?;
    Some(value.split('"').next()?.to_string())
}

/// `VK_TEST_DRIVER_API_VERSION`: "1.3" or "1.3.250"; default 1.4.
pub fn api_version() -> u32 {
    var("API_VERSION")
        .and_then(|v| parse_version(&v))
        .unwrap_or(make_api_version(0, 1, 4, 0))
}

/// `VK_TEST_DRIVER_INSTANCE_EXTENSIONS`.
pub fn instance_extensions() -> Vec<String> {
    extension_list("INSTANCE_EXTENSIONS", DEFAULT_INSTANCE_EXTENSIONS)
}

/// `VK_TEST_DRIVER_DEVICE_EXTENSIONS`.
pub fn device_extensions() -> Vec<String> {
    extension_list("DEVICE_EXTENSIONS", DEFAULT_DEVICE_EXTENSIONS)
}

/// `VK_TEST_DRIVER_STRICT_ENTRY_POINTS=1`: instance and physical-device commands of the registry are
/// returned only when the driver's API version or advertised extensions provide them.
pub fn strict_entry_points() -> bool {
    flag("STRICT_ENTRY_POINTS")
}

/// `VK_TEST_DRIVER_WITHOUT_COMMANDS`: whether the comma list names `command`, which the driver
/// then does not hand out (read at each GetProcAddr call).
pub fn withholds(command: &[u8]) -> bool {
    var("WITHOUT_COMMANDS").is_some_and(|list| list.split(',').any(|name| name.trim().as_bytes() == command))
}

/// `VK_TEST_DRIVER_INTERFACE_VERSION`: the newest interface version the driver admits to.
pub fn max_interface_version() -> u32 {
    var("INTERFACE_VERSION")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .map_or(MAX_INTERFACE_VERSION, |v| v.min(MAX_INTERFACE_VERSION))
}

/// `VK_TEST_DRIVER_GROUP_SIZE`: devices per physical-device group (consecutive devices grouped;
/// at least 1), read at each `vkEnumeratePhysicalDeviceGroups`.
pub fn group_size() -> usize {
    number("GROUP_SIZE").unwrap_or(1).max(1) as usize
}

/// `VK_TEST_DRIVER_VISIBLE_DEVICES`: the positions (in `VK_TEST_DRIVER_DEVICES`) of the devices
/// `vkEnumeratePhysicalDevices(Groups)` reports, in that order; `None` when unset (all of them).
/// Read at each call, so a test can add and remove devices under a live instance.
pub fn visible_devices() -> Option<Vec<usize>> {
    let value = var("VISIBLE_DEVICES")?;
    Some(value.split(',').filter_map(|i| i.trim().parse().ok()).collect())
}

/// `VK_TEST_DRIVER_FREE_HIDDEN=1`: a device `VK_TEST_DRIVER_VISIBLE_DEVICES` hides is freed at the
/// next enumeration, and made anew (a new object) once shown again, as a driver does with a GPU
/// unplugged and plugged back in. Read at each call.
pub fn free_hidden() -> bool {
    flag("FREE_HIDDEN")
}

/// `VK_TEST_DRIVER_ENUMERATE_RESULT`: a `VkResult` (decimal) that `vkEnumeratePhysicalDevices`
/// returns instead of its devices, read at each call.
pub fn enumerate_result() -> Option<i32> {
    var("ENUMERATE_RESULT").and_then(|v| v.trim().parse().ok())
}

/// `VK_TEST_DRIVER_GROUPS`: explicit physical-device groups, `;` between groups, each a comma list
/// of positions in `VK_TEST_DRIVER_DEVICES` (`0;1,2`); `None` when unset. Read at each call.
pub fn groups() -> Option<Vec<Vec<usize>>> {
    let value = var("GROUPS")?;
    let group = |g: &str| g.split(',').filter_map(|i| i.trim().parse().ok()).collect::<Vec<usize>>();
    Some(value.split(';').map(group).filter(|g| !g.is_empty()).collect())
}

/// `VK_TEST_DRIVER_SYNTHETIC_COMMANDS`: how many synthetic commands of each level the driver
/// provides (the first N of `synthetic::COUNT`).
pub fn synthetic_commands() -> usize {
    var("SYNTHETIC_COMMANDS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(crate::synthetic::COUNT, |n| n.min(crate::synthetic::COUNT))
}

/// `VK_TEST_DRIVER_NO_MAGIC=1`: command buffers lack `ICD_LOADER_MAGIC` (read at allocation).
pub fn no_magic() -> bool {
    flag("NO_MAGIC")
}

/// `VK_TEST_DRIVER_FAULTS`: whether the comma list names `fault`, a way of misbehaving (see
/// README.md), read at each call.
pub fn fault(fault: &str) -> bool {
    var("FAULTS").is_some_and(|list| list.split(',').any(|f| f.trim() == fault))
}

/// `VK_TEST_DRIVER_NULL_SURFACES=1`: surface creation succeeds without writing a handle, and a
/// NULL surface is accepted as that surface (read at each call).
pub fn null_surfaces() -> bool {
    flag("NULL_SURFACES")
}

/// `VK_TEST_DRIVER_FAIL_NEGOTIATE=1`.
pub fn fail_negotiate() -> bool {
    flag("FAIL_NEGOTIATE")
}

fn number(name: &str) -> Option<u32> {
    var(name).and_then(|v| v.trim().parse().ok())
}

fn flag(name: &str) -> bool {
    var(name).is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes" | "on"))
}

fn devices() -> Vec<DeviceSpec> {
    let value = var("DEVICES").unwrap_or_else(|| DEFAULT_DEVICES.to_owned());
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .filter_map(|entry| {
            let spec = parse_device(entry);
            if spec.is_none() {
                eprintln!("vk_test_driver: ignoring bad device entry {entry:?}");
            }
            spec
        })
        .collect()
}

/// `type[:VENDORID:DEVICEID]`, ids in hex with or without `0x`.
fn parse_device(entry: &str) -> Option<DeviceSpec> {
    let mut parts = entry.split(':');
    let (device_type, type_name) = match parts.next()?.trim() {
        "discrete" => (VkPhysicalDeviceType::DISCRETE_GPU, "discrete"),
        "integrated" => (VkPhysicalDeviceType::INTEGRATED_GPU, "integrated"),
        "virtual" => (VkPhysicalDeviceType::VIRTUAL_GPU, "virtual"),
        "cpu" => (VkPhysicalDeviceType::CPU, "cpu"),
        "other" => (VkPhysicalDeviceType::OTHER, "other"),
        _ => return None,
    };
    let (vendor_id, device_id) = match (parts.next(), parts.next()) {
        (None, None) => (DEFAULT_VENDOR_ID, DEFAULT_DEVICE_ID),
        (Some(vendor), Some(device)) => (parse_hex(vendor)?, parse_hex(device)?),
        _ => return None,
    };
    if parts.next().is_some() {
        return None;
    }
    Some(DeviceSpec {
        device_type,
        type_name,
        vendor_id,
        device_id,
        forced_name: None,
    })
}

fn parse_hex(s: &str) -> Option<u32> {
    let s = s.trim();
    let s = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u32::from_str_radix(s, 16).ok()
}

fn parse_version(s: &str) -> Option<u32> {
    let mut parts = s.trim().split('.').map(|p| p.trim().parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = match parts.next() {
        Some(p) => p?,
        None => 0,
    };
    if parts.next().is_some() || major > 0x7f || minor > 0x3ff || patch > 0xfff {
        return None;
    }
    Some(make_api_version(0, major, minor, patch))
}

/// A comma list replaces the default; a list starting with `+` adds to it; empty means none.
fn extension_list(name: &str, default: &[&str]) -> Vec<String> {
    let mut list: Vec<String> = Vec::new();
    let value = match var(name) {
        None => return default.iter().map(|s| s.to_string()).collect(),
        Some(value) => value,
    };
    let rest = match value.trim().strip_prefix('+') {
        Some(rest) => {
            list.extend(default.iter().map(|s| s.to_string()));
            rest.to_owned()
        }
        None => value,
    };
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        // Longer names do not fit VkExtensionProperties::extensionName.
        if item.len() < 256 && !list.iter().any(|e| e == item) {
            list.push(item.to_owned());
        }
    }
    list
}

/// `VK_TEST_DRIVER_<name>_<TAG>` if set, else `VK_TEST_DRIVER_<name>`. Read on every
/// GetProcAddr call (`STRICT_ENTRY_POINTS`), as real drivers answer from a table: the names are
/// put together on the stack, not formatted into allocated strings.
fn var(name: &str) -> Option<String> {
    if let Some(tag) = library_tag() {
        if let Some(value) = with_name(&["VK_TEST_DRIVER_", name, "_", tag], |key| std::env::var(key).ok()) {
            return Some(value);
        }
    }
    with_name(&["VK_TEST_DRIVER_", name], |key| std::env::var(key).ok())
}

/// `parts` joined, in a stack buffer when they fit.
fn with_name<R>(parts: &[&str], f: impl FnOnce(&str) -> R) -> R {
    let mut buf = [0u8; 128];
    let mut len = 0;
    for part in parts {
        let Some(slot) = buf.get_mut(len..len + part.len()) else { return f(&parts.concat()) };
        slot.copy_from_slice(part.as_bytes());
        len += part.len();
    }
    // Whole &strs were copied: still UTF-8.
    f(std::str::from_utf8(&buf[..len]).expect("joined from &strs"))
}

/// The tag of this copy of the library: the file name after `libvk_test_driver`, before `.so`,
/// upper-cased, with anything but letters and digits as `_` (`libvk_test_driver_b.so` -> `B`).
pub fn library_tag() -> Option<&'static str> {
    static TAG: OnceLock<Option<String>> = OnceLock::new();
    TAG.get_or_init(|| tag_from_file_name(&library_file_name()?))
        .as_deref()
}

fn library_file_name() -> Option<String> {
    // SAFETY: `Dl_info` is a C struct of pointers and integers, for which all zeros (NULL, 0) is
    // a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = library_tag as fn() -> Option<&'static str> as *const c_void;
    // SAFETY: dladdr only reads the address; it fills `info` and returns non-zero on success.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic linker.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    Some(path.rsplit('/').next().unwrap_or_default().to_owned())
}

fn tag_from_file_name(file_name: &str) -> Option<String> {
    let rest = file_name.strip_prefix("libvk_test_driver")?;
    let rest = rest.split(".so").next().unwrap_or_default();
    let rest = rest.trim_start_matches(['_', '-', '.']);
    if rest.is_empty() {
        return None;
    }
    Some(
        rest.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect(),
    )
}

/// `VK_TEST_DRIVER_LOAD_LOG=PATH`: each time the library is loaded, its file name is appended to
/// `PATH.<pid>`, so that a test can tell which drivers a process loaded even after they were
/// unloaded again.
#[used]
#[link_section = ".init_array"]
static LOG_LOAD: extern "C" fn() = log_load;

extern "C" fn log_load() {
    let Some(path) = std::env::var_os("VK_TEST_DRIVER_LOAD_LOG") else { return };
    let Some(name) = library_file_name() else { return };
    let mut path = path;
    path.push(format!(".{}", std::process::id()));
    use std::io::Write;
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(file, "{name}");
    }
}

/// `VK_TEST_DRIVER_NAMES_LOG=PATH`: each `vkCreateInstance` appends the names a real driver
/// matches its application profiles by to `PATH`, one line: glibc's `program_invocation_name`
/// (Mesa's driconf), a tab, the process's `comm` (NVIDIA's profiles).
pub fn log_process_names() {
    let Some(path) = std::env::var_os("VK_TEST_DRIVER_NAMES_LOG") else { return };
    extern "C" {
        static program_invocation_name: *const std::ffi::c_char;
    }
    // SAFETY: glibc sets the pointer before constructors run and changes it only from a program's
    // own code; it is NULL or a NUL-terminated string that lives as long as the process.
    let invocation = unsafe {
        let p = program_invocation_name;
        if p.is_null() { String::new() } else { std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned() }
    };
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    use std::io::Write;
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(file, "{invocation}\t{}", comm.trim_end_matches('\n'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_joined_on_the_stack_or_else_allocated() {
        assert_eq!(with_name(&["VK_TEST_DRIVER_", "DEVICES", "_", "B"], str::to_owned), "VK_TEST_DRIVER_DEVICES_B");
        let long = "X".repeat(200);
        assert_eq!(with_name(&["VK_TEST_DRIVER_", &long], str::len), 215);
    }

    #[test]
    fn tags() {
        assert_eq!(tag_from_file_name("libvk_test_driver.so"), None);
        assert_eq!(
            tag_from_file_name("libvk_test_driver_b.so").as_deref(),
            Some("B")
        );
        assert_eq!(
            tag_from_file_name("libvk_test_driver-gpu-2.so.1").as_deref(),
            Some("GPU_2")
        );
        assert_eq!(tag_from_file_name("libother.so"), None);
    }

    #[test]
    fn device_entries() {
        let d = parse_device("integrated:8086:46a6").unwrap();
        assert_eq!(d.device_type, VkPhysicalDeviceType::INTEGRATED_GPU);
        assert_eq!((d.vendor_id, d.device_id), (0x8086, 0x46a6));
        let d = parse_device("cpu").unwrap();
        assert_eq!(
            (d.vendor_id, d.device_id),
            (DEFAULT_VENDOR_ID, DEFAULT_DEVICE_ID)
        );
        assert!(parse_device("gpu").is_none());
        assert!(parse_device("discrete:10de").is_none());
        assert!(parse_device("discrete:zz:1").is_none());
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("1.3"), Some(make_api_version(0, 1, 3, 0)));
        assert_eq!(
            parse_version("1.2.250"),
            Some(make_api_version(0, 1, 2, 250))
        );
        assert_eq!(parse_version("1"), None);
        assert_eq!(parse_version("x.y"), None);
    }
}
