//! Where driver manifests are found: the XDG search order, SYSCONFDIR fixed at build time, the
//! HOME fallbacks, and the environment overrides and filters. The result is an ordered,
//! de-duplicated list of manifest files, each with the reason it was kept or skipped.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use crate::debug::log::Level;
use crate::plan::name_filter::{self, NameFilter};
use crate::platform;
use crate::reference::variables::*;
use crate::reference::Variable;

/// A manifest file and why discovery kept it or left it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The path in logs, the plan and the driver cache: `file` itself, or with the bytes of a
    /// name that is not UTF-8 written `\xNN` ([`platform::display_path`]).
    pub path: String,
    /// The file to open, as the directory listing named it: a manifest whose file name is not
    /// UTF-8 is read, as the Khronos loader reads it.
    pub file: OsString,
    /// `None` when the manifest is to be used; else why it is skipped (a filter matched), in
    /// the Khronos loader's words.
    pub skipped: Option<String>,
    /// With `skipped`: the filter, its variable and value (`not selected by
    /// VK_LOADER_DRIVERS_SELECT=*nvidia*`), for the user who finds no driver left.
    pub filtered_by: Option<String>,
}

impl Found {
    fn new(file: OsString, skipped: Option<String>) -> Found {
        Found { path: platform::display_path(&file), file, skipped, filtered_by: None }
    }
}

/// The directories searched for `<dir>/vulkan/<kind>` (kind `icd.d`, `explicit_layer.d`, ...),
/// in order, without duplicates.
pub fn search_dirs(kind: &str) -> Vec<String> {
    // Unset in elevated processes (secure_getenv), as are the XDG variables.
    let home = HOME.get();
    let mut bases: Vec<String> = Vec::new();
    bases.extend(xdg_home(&XDG_CONFIG_HOME, home.as_deref(), ".config"));
    bases.extend(split_paths(XDG_CONFIG_DIRS.get().as_deref().unwrap_or("/etc/xdg")));
    bases.push(env!("VK_LOADER_SYSCONFDIR").to_string());
    if let Some(extra) = option_env!("VK_LOADER_EXTRASYSCONFDIR") {
        bases.push(extra.to_string());
    }
    bases.extend(xdg_home(&XDG_DATA_HOME, home.as_deref(), ".local/share"));
    bases.extend(split_paths(XDG_DATA_DIRS.get().as_deref().unwrap_or("/usr/local/share:/usr/share")));
    let mut dirs = Vec::new();
    for base in bases {
        let dir = format!("{}/vulkan/{kind}", base.trim_end_matches('/'));
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// An XDG home variable's directories (a colon list, as the Khronos loader reads it too), or
/// `$HOME/<fallback>` when it names none.
fn xdg_home(var: &Variable, home: Option<&str>, fallback: &str) -> Vec<String> {
    let dirs: Vec<String> = var.get().map(|list| split_paths(&list).collect()).unwrap_or_default();
    if !dirs.is_empty() {
        return dirs;
    }
    home.map(|h| format!("{h}/{fallback}")).into_iter().collect()
}

fn split_paths(list: &str) -> impl Iterator<Item = String> + '_ {
    list.split(':').filter(|p| !p.is_empty()).map(str::to_string)
}

/// The `*.json` files of a directory, sorted by name; a name need not be UTF-8.
fn json_files(dir: &str) -> Vec<OsString> {
    let dir = dir.trim_end_matches('/');
    platform::list_dir_names(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|name| name.as_bytes().ends_with(b".json"))
        .map(|name| {
            let mut path = format!("{dir}/").into_bytes();
            path.extend_from_slice(name.as_bytes());
            OsString::from_vec(path)
        })
        .collect()
}

/// A colon list of files or directories, expanded to manifest files. As for the Khronos loader,
/// an entry ending in `.json` is a file and anything else a directory: no `stat` decides, so an
/// interposer that serves paths the kernel does not know is asked through `fopen` and `opendir`.
fn expand(locations: &[String]) -> Vec<OsString> {
    locations.iter().flat_map(|p| if p.ends_with(".json") { vec![OsString::from(p)] } else { json_files(p) }).collect()
}

/// Where one kind of manifest is looked for: files and directories, in search order.
struct Search {
    locations: Vec<String>,
}

impl Search {
    fn new() -> Search {
        Search { locations: Vec::new() }
    }

    /// The entries of a colon list variable, if it is set.
    fn add_variable(&mut self, var: &Variable) {
        if let Some(list) = var.get() {
            self.add_list(&list);
        }
    }

    fn add_list(&mut self, list: &str) {
        self.locations.extend(split_paths(list));
    }

    fn add_standard_dirs(&mut self, kind: &str) {
        self.locations.extend(search_dirs(kind));
    }

    /// The manifest files found, without duplicates, after logging where they were looked for
    /// in the Khronos loader's words (`what`: "driver", "implicit layer", ...), which scripts and
    /// its test suite search for.
    fn run(&self, level: Level, what: &str) -> Vec<OsString> {
        let mut files = Vec::new();
        for file in expand(&self.locations) {
            if !files.contains(&file) {
                files.push(file);
            }
        }
        if crate::debug::log::wanted(level) {
            crate::debug::log::out_of_line(|| log_search(level, what, &self.locations, &files));
        }
        files
    }
}

fn log_search(level: Level, what: &str, locations: &[String], files: &[OsString]) {
    let log = |line: String| crate::debug::log::log(level, &line);
    log(format!("Searching for {what} manifest files"));
    log("   In following locations:".to_string());
    for location in locations {
        log(format!("      {location}"));
    }
    if files.is_empty() {
        log("   Found no files".to_string());
        return;
    }
    log("   Found the following files:".to_string());
    for file in files {
        log(format!("      {}", platform::display_path(file)));
    }
}

/// Driver manifests, in the order drivers are loaded.
pub fn driver_manifests() -> Vec<Found> {
    let settings = crate::manifest::settings::current();
    // A settings file's device_configurations choose the devices: the driver environment
    // variables (search replacement, additions, filters) no longer apply.
    let env_applies = settings.as_ref().is_none_or(|s| s.device_configurations.is_none());
    let driver_env = |var: &Variable| if env_applies { var.get() } else { None };
    // Set but empty, the replacing variables name no driver, as for the Khronos loader (1.3.239
    // and 1.4.360 alike): `VK_DRIVER_FILES=` is how a script asks for a process without drivers.
    let replacing = |var: &Variable| if env_applies { var.get() } else { None };
    let mut search = Search::new();
    if let Some(list) = replacing(&VK_DRIVER_FILES).or_else(|| replacing(&VK_ICD_FILENAMES)) {
        if list.is_empty() {
            log!(Level::WarnDriver, "VK_DRIVER_FILES or VK_ICD_FILENAMES is set but empty: no driver is searched for");
        }
        search.add_list(&list);
    } else {
        if let Some(list) = driver_env(&VK_ADD_DRIVER_FILES) {
            search.add_list(&list);
        }
        search.add_standard_dirs("icd.d");
    }
    let paths = search.run(Level::Driver, "driver");
    let paths = match &settings {
        Some(settings) => settings.with_additional_drivers(paths),
        None => paths,
    };
    let select = driver_env(&VK_LOADER_DRIVERS_SELECT).map(|l| patterns(VK_LOADER_DRIVERS_SELECT.name, &l)).unwrap_or_default();
    let disable = driver_env(&VK_LOADER_DRIVERS_DISABLE).map(|l| patterns(VK_LOADER_DRIVERS_DISABLE.name, &l)).unwrap_or_default();
    let mut found: Vec<Found> = Vec::new();
    for file in paths {
        if found.iter().any(|f| f.file == file) {
            continue;
        }
        let mut manifest = Found::new(file, None);
        log!(Level::Driver, "Found ICD manifest file {}", manifest.path);
        let file_name = manifest.file.as_bytes().rsplit(|&b| b == b'/').next().unwrap_or_default();
        if let Some(filter) = filtered_out(OsStr::from_bytes(file_name), &select, &disable) {
            manifest.skipped = Some(filter.message(OsStr::from_bytes(file_name)));
            manifest.filtered_by = Some(filter.by());
        }
        found.push(manifest);
    }
    found
}

/// Which driver filter leaves a manifest out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filtered {
    Disabled,
    NotSelected,
}

impl Filtered {
    /// The Khronos loader's words, naming the manifest's file name.
    fn message(self, file_name: &OsStr) -> String {
        let file_name = platform::display_path(file_name);
        match self {
            Filtered::Disabled => format!("Driver \"{file_name}\" ignored because it was disabled by env var 'VK_LOADER_DRIVERS_DISABLE'"),
            Filtered::NotSelected => format!("Driver \"{file_name}\" ignored because not selected by env var 'VK_LOADER_DRIVERS_SELECT'"),
        }
    }

    /// The filter, its variable and the value it has: `disabled by VK_LOADER_DRIVERS_DISABLE=*`.
    fn by(self) -> String {
        let (what, variable) = match self {
            Filtered::Disabled => ("disabled", &VK_LOADER_DRIVERS_DISABLE),
            Filtered::NotSelected => ("not selected", &VK_LOADER_DRIVERS_SELECT),
        };
        format!("{what} by {}={}", variable.name, variable.get().unwrap_or_default())
    }
}

/// Whether `VK_LOADER_DRIVERS_SELECT` / `VK_LOADER_DRIVERS_DISABLE` leave a driver manifest out:
/// a selected name is kept even when a disable pattern matches it too. Names compare ignoring
/// case, as the Khronos loader's filters do (see `plan::name_filter`).
fn filtered_out(file_name: &OsStr, select: &[NameFilter], disable: &[NameFilter]) -> Option<Filtered> {
    let matches = |filters: &[NameFilter]| filters.iter().any(|f| f.matches(file_name.as_bytes()));
    let selected = matches(select);
    if !selected && matches(disable) {
        return Some(Filtered::Disabled);
    }
    if !selected && !select.is_empty() {
        return Some(Filtered::NotSelected);
    }
    None
}

/// Layer manifest files, explicit or implicit, in search order. `VK_LAYER_PATH` /
/// `VK_IMPLICIT_LAYER_PATH` replace the search, `VK_ADD_LAYER_PATH` / `VK_ADD_IMPLICIT_LAYER_PATH`
/// come before it (all ignored by elevated processes).
/// `override_paths` (from the override layer) replace the explicit search, `VK_LAYER_PATH`
/// included, when not empty.
pub fn layer_manifests(implicit: bool, override_paths: &[String]) -> Vec<Found> {
    let what = if implicit { "implicit layer" } else { "explicit layer" };
    layer_search(implicit, override_paths).run(Level::Layer, what).into_iter().map(|file| Found::new(file, None)).collect()
}

/// Says where explicit layer manifests would have been looked for, when instance creation reads
/// none because no explicit layer is asked for.
pub fn log_unread_explicit_layers(override_paths: &[String]) {
    if !crate::debug::log::wanted(Level::Layer) {
        return;
    }
    let search = layer_search(false, override_paths);
    crate::debug::log::out_of_line(|| {
        crate::debug::log::log(Level::Layer, "Not searching for explicit layer manifest files: no explicit layer is enabled");
        crate::debug::log::log(Level::Layer, "   They would be looked for in:");
        for location in &search.locations {
            crate::debug::log::log(Level::Layer, &format!("      {location}"));
        }
    });
}

fn layer_search(implicit: bool, override_paths: &[String]) -> Search {
    let (replace, add, kind) = if implicit {
        (&VK_IMPLICIT_LAYER_PATH, &VK_ADD_IMPLICIT_LAYER_PATH, "implicit_layer.d")
    } else {
        (&VK_LAYER_PATH, &VK_ADD_LAYER_PATH, "explicit_layer.d")
    };
    let mut search = Search::new();
    if !implicit && !override_paths.is_empty() {
        if let Some(ignored) = replace.get() {
            // The Khronos loader's words.
            crate::debug::log::log(
                crate::debug::log::Level::InfoLayer,
                &format!(
                    "Ignoring VK_LAYER_PATH. The Override layer is active and has override paths set, which takes priority. \
                     VK_LAYER_PATH is set to {ignored}"
                ),
            );
        }
        search.add_variable(add);
        search.locations.extend(override_paths.iter().flat_map(|p| split_paths(p)));
    } else if replace.is_set() {
        search.add_variable(replace);
    } else {
        search.add_variable(add);
        search.add_standard_dirs(kind);
    }
    search
}

/// The name filters `var` holds, read as the Khronos loader reads them (`plan::name_filter`:
/// entries as written, not trimmed; `~all~`, `*` match every name; at most sixteen).
fn patterns(var: &str, list: &str) -> Vec<NameFilter> {
    let (filters, left_out) = name_filter::parse_list(list);
    if left_out > 0 {
        log!(Level::WarnDriver, "{var}: only the first {} entries are read, as by the Khronos loader: {left_out} left out", name_filter::MAX_FILTERS);
    }
    filters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_whose_names_are_not_utf8_are_found_and_named_readably() {
        let dir = std::env::temp_dir().join(format!("loader-search-bytes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in [&b"b\xff.json"[..], b"a.json", b"c\xff.txt"] {
            std::fs::write(dir.join(OsStr::from_bytes(name)), b"{}").unwrap();
        }
        let path = dir.to_str().unwrap();
        let files = json_files(&format!("{path}/"));
        assert_eq!(files, [OsString::from(format!("{path}/a.json")), OsString::from_vec([format!("{path}/b").as_bytes(), b"\xff.json"].concat())]);
        let found = Found::new(files[1].clone(), None);
        assert_eq!(found.path, format!("{path}/b\\xFF.json"));
        // The driver filters see the file name's bytes.
        let select = name_filter::parse_list("b*").0;
        assert_eq!(filtered_out(OsStr::from_bytes(b"b\xff.json"), &select, &[]), None);
        let skipped = filtered_out(OsStr::new("a.json"), &select, &[]).unwrap().message(OsStr::new("a.json"));
        assert_eq!(skipped, "Driver \"a.json\" ignored because not selected by env var 'VK_LOADER_DRIVERS_SELECT'");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn driver_filters_are_read_as_written() {
        // Not trimmed, as by the Khronos loader: " *lvp*" is a whole name.
        let disable = patterns("VK_LOADER_DRIVERS_DISABLE", "*intel*, *lvp*");
        assert!(filtered_out(OsStr::new("lvp_icd.x86_64.json"), &[], &disable).is_none());
        assert!(filtered_out(OsStr::new("intel_icd.x86_64.json"), &[], &disable).is_some());
        assert!(filtered_out(OsStr::new("LVP_icd.json"), &[], &patterns("VK_LOADER_DRIVERS_DISABLE", "~all~")).is_some());
    }
}
