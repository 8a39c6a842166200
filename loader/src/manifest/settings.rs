//! The loader settings file, `vk_loader_settings.json`, as the Vulkan Configurator (vkconfig)
//! writes it: which layers are on, off or left to the usual rules and in which order, what the
//! loader logs to stderr and to which files (`log_locations`), which extra drivers it loads, and which devices the application sees.
//!
//! The first `vulkan/loader_settings.d/vk_loader_settings.json` found in the search order of
//! [`candidate_paths`] is the file: found with `access` and read through `fopen` (never a `stat`,
//! so an interposer serving paths is asked), parsed again only when it changes (file_cache).
//! A file that cannot be used is ignored whole, with one log line naming it and why.

use std::cell::RefCell;
use std::sync::Arc;

use crate::debug::log::{self, Level};
use crate::manifest::json::{self, Json};
use crate::platform::call_files;
use crate::platform::file_cache::ParseCache;
use crate::reference::settings_keys as keys;
use crate::reference::variables::{HOME, XDG_CONFIG_DIRS, XDG_CONFIG_HOME, XDG_DATA_DIRS, XDG_DATA_HOME};
use crate::platform;

/// A warning about a settings file, said once per process: a file younger than the parse cache
/// trusts is parsed again at each API call, and its faults were said at each (68 times in one
/// `vulkaninfo` run). Recorded as said only when someone hears it (`VK_LOADER_DEBUG`, a
/// messenger), so a messenger made later still hears it.
macro_rules! warn_once {
    ($($format:tt)*) => {
        if log::wanted(Level::Warn) {
            warn_if_new(&format!($($format)*));
        }
    };
}

#[cold]
#[inline(never)]
fn warn_if_new(message: &str) {
    use std::hash::{Hash, Hasher};
    static SAID: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    message.hash(&mut hasher);
    let key = hasher.finish();
    // Process-lifetime bookkeeping: from the system allocator, as the loader's other statics.
    let new = platform::host_alloc::with_system_allocator(|| {
        let mut said = SAID.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let new = !said.contains(&key);
        if new {
            said.push(key);
        }
        new
    });
    if new {
        log::write(Level::Warn, message);
    }
}

/// The file's name inside each searched `vulkan/loader_settings.d` directory.
const FILE_NAME: &str = "vk_loader_settings.json";

/// A settings file larger than this is not read: vkconfig writes a few kilobytes.
const MAX_FILE_SIZE: usize = 4 << 20;

/// What the file says about one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Always in the chain, whatever the environment and the application ask.
    On,
    /// Never loaded.
    Off,
    /// Enabled as the usual rules say (environment, application, implicit layer's own switches).
    Auto,
}

/// One entry of the file's `layers` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerEntry {
    /// A layer named by the file, with the manifest it is read from.
    Named { name: String, path: String, control: Control, treat_as_implicit_manifest: bool },
    /// `unordered_layer_location`: where the layers the file does not name go.
    UnorderedLocation,
}

/// One `device_configurations` entry: a physical device the application sees, in this order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceConfiguration {
    pub device_uuid: [u8; 16],
    pub driver_uuid: [u8; 16],
    pub driver_version: u32,
    pub device_name: String,
    pub driver_name: String,
}

/// The settings that apply to this process (the file's entry chosen by `app_keys`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    pub path: String,
    /// `stderr_log`: `VK_LOADER_DEBUG` categories (log::Level bits); 0 when absent.
    pub stderr_log: u32,
    /// `log_locations`: files that take the messages of some categories, each file once per
    /// entry naming it. Not used by elevated processes (see `current`).
    pub log_locations: Vec<log::Destination>,
    /// `layers`, when present: the file then decides which layers exist and their order.
    pub layers: Option<Vec<LayerEntry>>,
    pub additional_drivers: Vec<String>,
    pub additional_drivers_use_exclusively: bool,
    /// `device_configurations`, when present: the only devices shown, in this order.
    pub device_configurations: Option<Vec<DeviceConfiguration>>,
    /// `"driver_cache": "off"`: this loader's own switch (the Khronos loader has no driver cache
    /// and ignores the key): no driver's answers are taken from or written to the cache.
    pub driver_cache_off: bool,
}

impl Settings {
    /// Whether the file's entry sets anything at all (the Khronos loader's test).
    fn is_active(&self) -> bool {
        self.stderr_log != 0
            || !self.log_locations.is_empty()
            || self.layers.is_some()
            || !self.additional_drivers.is_empty()
            || self.device_configurations.is_some()
            || self.driver_cache_off
    }

    /// Whether the file decides the layers (a `layers` list, even an empty one).
    pub fn decides_layers(&self) -> bool {
        self.layers.is_some()
    }

    /// The driver manifests to load: the `additional_drivers` (`.json` files only) first, as the
    /// Khronos loader finds them, then `found` (the usual search) unless
    /// `additional_drivers_use_exclusively`.
    /// Paths are `String`s or the `OsString`s discovery opens (see `discover::search::Found`).
    pub fn with_additional_drivers<P: From<String>>(&self, found: Vec<P>) -> Vec<P> {
        let kept = if self.additional_drivers_use_exclusively { Vec::new() } else { found };
        let additional = self.additional_drivers.iter().filter(|p| p.ends_with(".json")).map(|p| P::from(p.clone()));
        additional.chain(kept).collect()
    }
}

/// The `vulkan/loader_settings.d/vk_loader_settings.json` paths, in the order they are tried:
/// `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, their `HOME` fallbacks (`~/.config`, `~/.local/share`)
/// where unset, `XDG_CONFIG_DIRS`, SYSCONFDIR (and EXTRASYSCONFDIR), `XDG_DATA_DIRS`. All read
/// with `secure_getenv`: an elevated process only looks in the system directories.
fn candidate_paths() -> Vec<String> {
    let config_home = XDG_CONFIG_HOME.get();
    let data_home = XDG_DATA_HOME.get();
    let home = HOME.get();
    let mut bases: Vec<String> = Vec::new();
    bases.extend(config_home.iter().flat_map(|l| split_list(l)));
    bases.extend(data_home.iter().flat_map(|l| split_list(l)));
    if let Some(home) = &home {
        if config_home.is_none() {
            bases.push(format!("{home}/.config"));
        }
        if data_home.is_none() {
            bases.push(format!("{home}/.local/share"));
        }
    }
    bases.extend(split_list(&XDG_CONFIG_DIRS.get().unwrap_or_else(|| "/etc/xdg".into())));
    bases.push(env!("VK_LOADER_SYSCONFDIR").to_string());
    if let Some(extra) = option_env!("VK_LOADER_EXTRASYSCONFDIR") {
        bases.push(extra.to_string());
    }
    bases.extend(split_list(&XDG_DATA_DIRS.get().unwrap_or_else(|| "/usr/local/share:/usr/share".into())));
    let mut paths: Vec<String> = Vec::with_capacity(bases.len());
    for base in bases {
        let path = format!("{}/vulkan/loader_settings.d/{FILE_NAME}", base.trim_end_matches('/'));
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// A settings file's path as the Khronos loader spells it in its lines (its "vulkan/" directory
/// name is followed by another slash), which tools and scripts look for; our own lines name the
/// file with one slash.
fn khronos_spelling(path: &str) -> String {
    path.replacen("/vulkan/loader_settings.d/", "/vulkan//loader_settings.d/", 1)
}

fn split_list(list: &str) -> Vec<String> {
    list.split(':').filter(|p| !p.is_empty()).map(str::to_string).collect()
}

/// Settings files as last parsed, by path (see file_cache): an unchanged file is not read again.
/// The executable's path, which picks the entry, cannot change while the process runs.
static PARSED: ParseCache<Result<Option<Arc<Settings>>, String>> = ParseCache::new();

/// The settings in force now: the first settings file found, if it sets anything. Looks at the
/// file system once per API call (see `OneLook`), so a file vkconfig writes or removes is seen by
/// the next call.
pub fn current() -> Option<Arc<Settings>> {
    let remembered = LOOK.with(|look| match &*look.borrow() {
        Look::Done(settings) => Some(settings.clone()),
        _ => None,
    });
    if let Some(settings) = remembered {
        return settings;
    }
    let settings = find();
    log::set_settings_mask(settings.as_ref().map(|s| s.stderr_log));
    // A file the loader writes is the user's to choose, but not an elevated process's: it would
    // write wherever the user says with the process's rights.
    let destinations = settings.as_ref().filter(|_| !platform::elevated()).map(|s| &s.log_locations[..]);
    log::set_destinations(destinations.unwrap_or_default());
    LOOK.with(|look| {
        let mut look = look.borrow_mut();
        if matches!(*look, Look::Pending) {
            *look = Look::Done(settings.clone());
        }
    });
    settings
}

/// Where this thread is with the settings of the API call under way.
enum Look {
    /// No API call that looks once: each `current` looks.
    Each,
    /// Inside one, the file system not yet looked at.
    Pending,
    /// Inside one, with what the look found.
    Done(Option<Arc<Settings>>),
}

thread_local! {
    static LOOK: RefCell<Look> = const { RefCell::new(Look::Each) };
}

/// While alive, `current` on this thread looks for the settings file once and answers later
/// calls from that look: one API call (instance creation asks about layers, drivers and
/// devices) costs one look, and logs a bad file once. The look is one API call's: each file is
/// asked about once in it (see `call_files`).
pub struct OneLook {
    outermost: bool,
    _call: call_files::OneCall,
}

impl OneLook {
    pub fn enter() -> OneLook {
        // Only the outermost scope on the thread starts (and later ends) a look.
        let outermost = LOOK.with(|look| {
            let mut look = look.borrow_mut();
            let outermost = matches!(*look, Look::Each);
            if outermost {
                *look = Look::Pending;
            }
            outermost
        });
        OneLook { outermost, _call: call_files::OneCall::enter() }
    }
}

impl Drop for OneLook {
    fn drop(&mut self) {
        if self.outermost {
            LOOK.with(|look| *look.borrow_mut() = Look::Each);
        }
    }
}

fn find() -> Option<Arc<Settings>> {
    // The first file there wins, as with the Khronos loader (which asks `access` too).
    for path in candidate_paths().into_iter().filter(|p| platform::readable(p)) {
        let exe = crate::platform::executable_path;
        let parse = |text: &[u8]| parse(text, &path, exe().as_deref()).map(|s| s.map(Arc::new));
        let parsed = PARSED.get_at_most(&path, &path, MAX_FILE_SIZE, parse);
        let parsed = match parsed {
            Err(_) => continue, // gone since: the next place is tried
            Ok(parsed) => parsed,
        };
        return match &*parsed {
            Ok(settings) => settings.clone(),
            Err(why) => {
                warn_once!("loader settings file {path} ignored: {why}");
                None
            }
        };
    }
    None
}

/// Where a settings file exists but gives this process nothing: the file, and why (it cannot be
/// used, no entry's `app_keys` names the executable and no entry is for every executable, or its
/// entry sets nothing). `None` where no file exists, or where one is in force. For explain: a
/// file that applies to other executables is not hidden from the user.
pub fn why_unused() -> Option<String> {
    let path = candidate_paths().into_iter().find(|p| platform::readable(p))?;
    let exe = platform::executable_path();
    let text = platform::read_file(&path, MAX_FILE_SIZE)?;
    let why = match parse(&text, &path, exe.as_deref()) {
        Ok(Some(_)) => return None,
        Err(why) => format!("ignored: {why}"),
        Ok(None) => no_entry_applies(&text, exe.as_deref()),
    };
    Some(format!("{path}: {why}"))
}

/// Why a file that parses gives `exe` no settings.
fn no_entry_applies(text: &[u8], exe: Option<&str>) -> String {
    let top = json::parse(text).unwrap_or(Json::Null);
    let entries: Vec<&Json> = match top.get(keys::SETTINGS_ARRAY.name) {
        Some(Json::Array(list)) => list.iter().collect(),
        _ => top.get(keys::SETTINGS.name).into_iter().collect(),
    };
    if choose_entry(&entries, exe).is_some() {
        return "the entry for this executable sets nothing the loader uses".into();
    }
    let named: Vec<&str> = entries
        .iter()
        .take_while(|e| e.is_object())
        .filter_map(|e| e.get(keys::APP_KEYS.name))
        .flat_map(|keys| keys.as_array().unwrap_or_default().iter().filter_map(Json::as_str))
        .collect();
    let exe = exe.unwrap_or("(unknown executable)");
    match named.is_empty() {
        true => format!("no entry applies to {exe}"),
        false => format!(
            "no entry applies to {exe}: every entry has \"app_keys\", and none names it (they name {}; `vk-loader explain --as PATH` shows what PATH gets)",
            named.join(", ")
        ),
    }
}

/// Logs what the settings say, as the Khronos loader does when an instance is created with them
/// (tools and tests look for its first line).
pub fn log_in_use(settings: &Settings) {
    if !log::wanted(Level::Info) && !log::wanted(Level::Debug) {
        return;
    }
    let filters = |mask: u32| -> String {
        let names: Vec<&str> = Level::ALL.iter().filter(|&&l| mask & l as u32 != 0).map(|l| l.name()).collect();
        names.join(" | ")
    };
    if settings.stderr_log != 0 {
        log::log(Level::Debug, &format!("Loader Settings Filters for Logging to Standard Error: {}", filters(settings.stderr_log)));
    }
    for destination in &settings.log_locations {
        let ignored = if platform::elevated() { " (ignored: elevated process)" } else { "" };
        log::log(Level::Debug, &format!("Loader Settings Filters for Logging to {}: {}{ignored}", destination.path, filters(destination.mask)));
    }
    log::log(Level::Info, &format!("Using layer configurations found in loader settings from {}", khronos_spelling(&settings.path)));
    if let Some(layers) = &settings.layers {
        log::log(Level::Debug, &format!("Layer Configurations count = {}", layers.len()));
        for (i, entry) in layers.iter().enumerate() {
            log::log(Level::Debug, &format!("---- Layer Configuration [{i}] ----"));
            match entry {
                LayerEntry::Named { name, path, control, treat_as_implicit_manifest } => {
                    log::log(Level::Debug, &format!("Name: {name}"));
                    log::log(Level::Debug, &format!("Path: {path}"));
                    let kind = if *treat_as_implicit_manifest { "Implicit" } else { "Explicit" };
                    log::log(Level::Debug, &format!("Layer Type: {kind}"));
                    log::log(Level::Debug, &format!("Control: {}", control_name(*control)));
                }
                LayerEntry::UnorderedLocation => log::log(Level::Debug, "Control: unordered_layer_location"),
            }
        }
    }
    log::log(Level::Debug, "---------------------------------");
}

fn control_name(control: Control) -> &'static str {
    match control {
        Control::On => "on",
        Control::Off => "off",
        Control::Auto => "auto",
    }
}

/// Parses a settings file: `Ok(None)` when it holds nothing for this executable, `Err` with the
/// reason when it cannot be used at all. `exe` picks the `settings_array` entry by `app_keys`.
pub fn parse(text: &[u8], path: &str, exe: Option<&str>) -> Result<Option<Settings>, String> {
    if text.len() >= MAX_FILE_SIZE {
        return Err(format!("larger than {MAX_FILE_SIZE} bytes"));
    }
    // Read as the Khronos loader reads it (see `manifest::json`).
    let top = json::parse(text).map_err(|e| format!("invalid JSON: {e}"))?;
    if !top.is_object() {
        return Err("not a JSON object".into());
    }
    if top.get(keys::FILE_FORMAT_VERSION.name).and_then(Json::as_str).is_none() {
        return Err("missing required field file_format_version".into());
    }
    let entries: Vec<&Json> = match (top.get(keys::SETTINGS_ARRAY.name), top.get(keys::SETTINGS.name)) {
        (Some(Json::Array(list)), _) => list.iter().collect(),
        (Some(_), _) => return Err("\"settings_array\" is not an array".into()),
        (None, Some(one)) => vec![one],
        (None, None) => return Err("neither \"settings\" nor \"settings_array\" is present".into()),
    };
    let Some(entry) = choose_entry(&entries, exe) else {
        log!(Level::Debug, "loader settings file {path}: no global settings and no app_keys matching this executable; not used");
        return Ok(None);
    };
    let settings = parse_entry(entry, path);
    if !settings.is_active() {
        log!(Level::Info, "vk_loader_settings.json file found at \"{}\" but did not contain any valid settings.", khronos_spelling(path));
        return Ok(None);
    }
    Ok(Some(settings))
}

/// The entry whose `app_keys` name the executable, else the first without `app_keys`. Entries
/// are read up to the first that is not an object.
fn choose_entry<'a>(entries: &[&'a Json], exe: Option<&str>) -> Option<&'a Json> {
    let mut global = None;
    for &entry in entries {
        if !entry.is_object() {
            break;
        }
        match entry.get(keys::APP_KEYS.name) {
            None => {
                global.get_or_insert(entry);
            }
            Some(keys) => {
                let keys = keys.as_array().unwrap_or_default();
                if exe.is_some_and(|exe| keys.iter().any(|k| k.as_str() == Some(exe))) {
                    return Some(entry);
                }
            }
        }
    }
    global
}

/// One entry's settings. A part that is malformed is left out (logged); the others still apply.
fn parse_entry(entry: &Json, path: &str) -> Settings {
    let mut settings = Settings { path: path.to_string(), ..Settings::default() };
    if let Some(filters) = entry.get(keys::STDERR_LOG.name).and_then(Json::as_array) {
        settings.stderr_log = filters.iter().filter_map(Json::as_str).map(log_bits).fold(0, |a, b| a | b);
    }
    if let Some(locations) = entry.get(keys::LOG_LOCATIONS.name) {
        settings.log_locations = parse_log_locations(locations, path);
    }
    if let Some(layers) = entry.get(keys::LAYERS.name) {
        match parse_layers(layers) {
            Ok(list) => settings.layers = Some(list),
            Err(why) => warn_once!("loader settings file {path}: \"layers\" ignored: {why}"),
        }
    }
    settings.additional_drivers_use_exclusively = entry.get(keys::ADDITIONAL_DRIVERS_USE_EXCLUSIVELY.name).is_some_and(Json::is_true);
    settings.driver_cache_off = entry.get(keys::DRIVER_CACHE.name).and_then(Json::as_str) == Some("off");
    if let Some(drivers) = entry.get(keys::ADDITIONAL_DRIVERS.name) {
        match parse_drivers(drivers) {
            Ok(list) => settings.additional_drivers = list,
            Err(why) => warn_once!("loader settings file {path}: \"additional_drivers\" ignored: {why}"),
        }
    }
    if let Some(devices) = entry.get(keys::DEVICE_CONFIGURATIONS.name) {
        let list = devices.as_array().unwrap_or_default();
        settings.device_configurations = Some(list.iter().filter_map(parse_device).collect());
    }
    settings
}

/// The `VK_LOADER_DEBUG` bits of one `stderr_log` word.
fn log_bits(word: &str) -> u32 {
    let bits = |l: Level| l as u32;
    match word {
        "all" => Level::ALL.iter().map(|&l| bits(l)).fold(0, |a, b| a | b),
        "perf" => bits(Level::Perf),
        "error" => bits(Level::Error),
        "warn" => bits(Level::Warn),
        "info" => bits(Level::Info),
        "debug" => bits(Level::Debug),
        "layer" => bits(Level::Layer),
        "driver" => bits(Level::Driver),
        _ => 0,
    }
}

/// The `log_locations` list: objects with `destinations` (absolute file paths) and `filters` (the
/// words of `stderr_log`; `filter`, as the Khronos loader's tests write it, is read too). A
/// malformed element is left out alone, with a line naming it.
fn parse_log_locations(value: &Json, path: &str) -> Vec<log::Destination> {
    let Some(list) = value.as_array() else {
        warn_once!("loader settings file {path}: \"log_locations\" ignored: not an array");
        return Vec::new();
    };
    let mut out: Vec<log::Destination> = Vec::new();
    for (i, element) in list.iter().enumerate() {
        let strings = |key: &str| -> Option<Vec<&str>> { element.get(key)?.as_array()?.iter().map(Json::as_str).collect() };
        let (Some(destinations), Some(filters)) = (strings(keys::DESTINATIONS.name), strings(keys::FILTERS.name).or_else(|| strings(keys::FILTER.name))) else {
            warn_once!("loader settings file {path}: log_locations[{i}] ignored: it needs \"destinations\" and \"filters\", arrays of strings");
            continue;
        };
        let mask = filters.iter().map(|word| log_bits(word)).fold(0, |a, b| a | b);
        for destination in destinations {
            if !destination.starts_with('/') {
                warn_once!("loader settings file {path}: log_locations[{i}]: destination \"{destination}\" ignored: not an absolute path");
            } else if platform::is_directory(destination) {
                // A directory cannot take the lines (the Khronos loader's own tests name `/tmp`).
                warn_once!("loader settings file {path}: log_locations[{i}]: destination \"{destination}\" ignored: a directory");
            } else if mask != 0 {
                out.push(log::Destination { path: destination.to_string(), mask });
            }
        }
    }
    out
}

/// The `layers` list: every element an object with a `control`; all but the
/// `unordered_layer_location` marker with a `name` and a `path`.
fn parse_layers(value: &Json) -> Result<Vec<LayerEntry>, String> {
    let list = value.as_array().ok_or("not an array")?;
    let mut out = Vec::with_capacity(list.len());
    for (i, object) in list.iter().enumerate() {
        if !object.is_object() {
            return Err(format!("layers[{i}] is not an object"));
        }
        let string = |key: &str| object.get(key).and_then(Json::as_str).ok_or_else(|| format!("layers[{i}] has no string \"{key}\""));
        let control = match string(keys::CONTROL.name)? {
            "unordered_layer_location" => {
                out.push(LayerEntry::UnorderedLocation);
                continue;
            }
            "on" => Control::On,
            "off" => Control::Off,
            _ => Control::Auto,
        };
        out.push(LayerEntry::Named {
            name: string(keys::NAME.name)?.to_string(),
            path: string(keys::PATH.name)?.to_string(),
            control,
            treat_as_implicit_manifest: object.get(keys::TREAT_AS_IMPLICIT_MANIFEST.name).is_some_and(Json::is_true),
        });
    }
    Ok(out)
}

/// The `additional_drivers` list: objects with a `path`.
fn parse_drivers(value: &Json) -> Result<Vec<String>, String> {
    let list = value.as_array().ok_or("not an array")?;
    list.iter()
        .enumerate()
        .map(|(i, d)| d.get(keys::PATH.name).and_then(Json::as_str).map(str::to_string).ok_or_else(|| format!("additional_drivers[{i}] has no string \"path\"")))
        .collect()
}

/// One `device_configurations` entry; `None` (skipped alone) when malformed.
fn parse_device(object: &Json) -> Option<DeviceConfiguration> {
    if !object.is_object() {
        return None;
    }
    let uuid = |key: &str| -> Option<[u8; 16]> {
        let list = object.get(key)?.as_array()?;
        let bytes: Vec<u8> = list.iter().map(|v| v.as_u64().filter(|b| *b <= 255).map(|b| b as u8)).collect::<Option<_>>()?;
        bytes.try_into().ok()
    };
    let name = |key: &str| object.get(key).and_then(Json::as_str).unwrap_or_default().to_string();
    Some(DeviceConfiguration {
        device_uuid: uuid(keys::DEVICE_UUID.name)?,
        driver_uuid: uuid(keys::DRIVER_UUID.name)?,
        driver_version: object.get(keys::DRIVER_VERSION.name)?.as_u64().and_then(|v| u32::try_from(v).ok())?,
        device_name: name(keys::DEVICE_NAME.name),
        driver_name: name(keys::DRIVER_NAME.name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str, exe: Option<&str>) -> Result<Option<Settings>, String> {
        parse(text.as_bytes(), "/s.json", exe)
    }

    #[test]
    fn vkconfig_style_file() {
        let text = r#"{
            "file_format_version": "1.0.0",
            "settings_array": [
                { "app_keys": ["/usr/bin/other"], "stderr_log": ["all"] },
                {
                    "stderr_log": ["error", "warn"],
                    "layers": [
                        { "name": "VK_LAYER_KHRONOS_validation", "path": "/v.json", "control": "on" },
                        { "control": "unordered_layer_location" },
                        { "name": "VK_LAYER_MESA_device_select", "path": "/d.json", "control": "off", "treat_as_implicit_manifest": true }
                    ]
                }
            ]
        }"#;
        let s = parse_str(text, Some("/usr/bin/app")).unwrap().unwrap();
        assert_eq!(s.stderr_log, Level::Error as u32 | Level::Warn as u32);
        let layers = s.layers.unwrap();
        assert_eq!(layers[1], LayerEntry::UnorderedLocation);
        assert_eq!(layers.len(), 3);
        assert_eq!(
            layers[2],
            LayerEntry::Named { name: "VK_LAYER_MESA_device_select".into(), path: "/d.json".into(), control: Control::Off, treat_as_implicit_manifest: true }
        );
        let other = parse_str(text, Some("/usr/bin/other")).unwrap().unwrap();
        assert_eq!(other.stderr_log, 127, "all: every category, PERF included");
        assert!(other.layers.is_none());
    }

    #[test]
    fn unusable_files_say_why() {
        for (text, why) in [
            ("{", "invalid JSON"),
            ("[]", "not a JSON object"),
            (r#"{"settings": {}}"#, "file_format_version"),
            (r#"{"file_format_version": "1.0.0"}"#, "neither"),
        ] {
            let err = parse_str(text, None).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_str(&deep, None).is_err());
        // Nothing for this executable, or nothing set: not in force, not an error.
        assert_eq!(parse_str(r#"{"file_format_version": "1.0.0", "settings": {"app_keys": ["/x"]}}"#, Some("/y")), Ok(None));
        assert_eq!(parse_str(r#"{"file_format_version": "1.0.0", "settings": {}}"#, None), Ok(None));
    }

    #[test]
    fn log_locations_are_files_with_filters() {
        let text = r#"{"file_format_version": "1.0.0", "settings": {
            "log_locations": [
                { "destinations": ["/tmp/a.log", "/tmp/b.log"], "filters": ["error", "warn"] },
                { "destinations": ["/tmp/c.log"], "filter": ["all"] },
                { "destinations": ["relative.log"], "filters": ["all"] },
                { "destinations": "/tmp/d.log", "filters": ["all"] },
                { "destinations": ["/tmp/e.log"], "filters": ["nonsense"] },
                { "filters": ["all"] }
            ]
        }}"#;
        let s = parse_str(text, None).unwrap().unwrap();
        let errors = Level::Error as u32 | Level::Warn as u32;
        let d = |path: &str, mask: u32| log::Destination { path: path.into(), mask };
        assert_eq!(s.log_locations, [d("/tmp/a.log", errors), d("/tmp/b.log", errors), d("/tmp/c.log", 127)]);
        assert_eq!(s.stderr_log, 0, "log_locations leave stderr to VK_LOADER_DEBUG");
        // A file with only log_locations is in force; one whose destinations are all unusable is not.
        let unusable = r#"{"file_format_version": "1.0.0", "settings": {"log_locations": [{"destinations": ["x"], "filters": ["all"]}]}}"#;
        assert_eq!(parse_str(unusable, None), Ok(None));
        let a_directory = r#"{"file_format_version": "1.0.0", "settings": {"log_locations": [{"destinations": ["/tmp"], "filters": ["all"]}]}}"#;
        assert!(parse_str(a_directory, None).unwrap().is_none(), "a directory takes no lines: nothing in force");
        let not_a_list = r#"{"file_format_version": "1.0.0", "settings": {"stderr_log": ["error"], "log_locations": {}}}"#;
        assert!(parse_str(not_a_list, None).unwrap().unwrap().log_locations.is_empty());
    }

    #[test]
    fn bad_parts_are_dropped_alone() {
        let text = r#"{"file_format_version": "1.0.0", "settings": {
            "layers": [{ "name": "A", "control": "on" }],
            "additional_drivers": [{ "path": "/d.json" }],
            "device_configurations": [
                { "deviceUUID": [1], "driverUUID": [], "driverVersion": 1 },
                { "deviceUUID": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15], "driverUUID": [0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0], "driverVersion": 7 }
            ]
        }}"#;
        let s = parse_str(text, None).unwrap().unwrap();
        assert!(s.layers.is_none(), "a layer without a path spoils the list");
        assert_eq!(s.additional_drivers, ["/d.json"]);
        let devices = s.device_configurations.unwrap();
        assert_eq!(devices.len(), 1);
        assert_eq!(devices[0].driver_version, 7);
        assert_eq!(devices[0].device_uuid[15], 15);
    }

    #[test]
    fn read_as_the_khronos_loader_reads_json() {
        let text = r#"{"file_format_version": "1.0.0", "settings": {"stderr_log": ["error"], "STDERR_LOG": ["all"]}, "settings": {"stderr_log": ["warn"]}}"#;
        let expected = Some(Level::Error as u32);
        for variant in [text.as_bytes().to_vec(), [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(), [text.as_bytes(), b"\0trailing"].concat()] {
            let settings = parse(&variant, "/s.json", None).unwrap().unwrap();
            assert_eq!(Some(settings.stderr_log), expected, "the first of a key given twice, whatever its case");
        }
    }

    #[test]
    fn why_no_entry_applies_names_the_executables_it_is_for() {
        let text = br#"{"file_format_version": "1.0.0", "settings_array": [
            {"app_keys": ["/usr/bin/vkcube"], "stderr_log": ["all"]},
            {"app_keys": ["/usr/bin/vulkaninfo", "/opt/game"], "stderr_log": ["all"]}]}"#;
        let why = no_entry_applies(text, Some("/usr/bin/vk-loader"));
        assert!(why.starts_with("no entry applies to /usr/bin/vk-loader: every entry has \"app_keys\", and none names it (they name /usr/bin/vkcube, /usr/bin/vulkaninfo, /opt/game;"), "{why}");
        let empty = br#"{"file_format_version": "1.0.0", "settings": {}}"#;
        assert_eq!(no_entry_applies(empty, Some("/x")), "the entry for this executable sets nothing the loader uses");
    }
}
