//! Where driver manifests are found: the XDG search order, SYSCONFDIR fixed at build time, the
//! HOME fallbacks, and the environment overrides and filters. The result is an ordered,
//! de-duplicated list of manifest files, each with the reason it was kept or skipped.

use crate::log::Level;
use crate::platform;

/// A manifest file and why discovery kept it or left it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: String,
    /// `None` when the manifest is to be used; else why it is skipped (a filter matched).
    pub skipped: Option<String>,
}

/// The directories searched for `<dir>/vulkan/<kind>` (kind `icd.d`, `explicit_layer.d`, ...),
/// in order, without duplicates.
pub fn search_dirs(kind: &str) -> Vec<String> {
    // Unset in elevated processes (secure_getenv), as are the XDG variables.
    let home = platform::env("HOME");
    let mut bases: Vec<String> = Vec::new();
    match platform::env("XDG_CONFIG_HOME") {
        Some(dir) => bases.push(dir),
        None => bases.extend(home.iter().map(|h| format!("{h}/.config"))),
    }
    bases.extend(split_paths(platform::env("XDG_CONFIG_DIRS").as_deref().unwrap_or("/etc/xdg")));
    bases.push(env!("VK_LOADER_SYSCONFDIR").to_string());
    if let Some(extra) = option_env!("VK_LOADER_EXTRASYSCONFDIR") {
        bases.push(extra.to_string());
    }
    match platform::env("XDG_DATA_HOME") {
        Some(dir) => bases.push(dir),
        None => bases.extend(home.iter().map(|h| format!("{h}/.local/share"))),
    }
    bases.extend(split_paths(platform::env("XDG_DATA_DIRS").as_deref().unwrap_or("/usr/local/share:/usr/share")));
    let mut dirs = Vec::new();
    for base in bases {
        let dir = format!("{}/vulkan/{kind}", base.trim_end_matches('/'));
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

fn split_paths(list: &str) -> impl Iterator<Item = String> + '_ {
    list.split(':').filter(|p| !p.is_empty()).map(str::to_string)
}

/// The `*.json` files of a directory, sorted by name.
fn json_files(dir: &str) -> Vec<String> {
    platform::list_dir(dir)
        .unwrap_or_default()
        .iter()
        .filter(|n| n.ends_with(".json"))
        .map(|n| format!("{}/{n}", dir.trim_end_matches('/')))
        .collect()
}

/// A colon list of files or directories, expanded to manifest files. As for the Khronos loader,
/// an entry ending in `.json` is a file and anything else a directory: no `stat` decides, so an
/// interposer that serves paths the kernel does not know is asked through `fopen` and `opendir`.
fn expand(list: &str) -> Vec<String> {
    split_paths(list).flat_map(|p| if p.ends_with(".json") { vec![p] } else { json_files(&p) }).collect()
}

/// Driver manifests, in the order drivers are loaded.
pub fn driver_manifests() -> Vec<Found> {
    let settings = crate::settings::current();
    // A settings file's device_configurations choose the devices: the driver environment
    // variables (search replacement, additions, filters) no longer apply.
    let driver_env = |name: &str| match &settings {
        Some(s) if s.device_configurations.is_some() => None,
        _ => platform::env(name),
    };
    let replacement = driver_env("VK_DRIVER_FILES").or_else(|| driver_env("VK_ICD_FILENAMES"));
    let paths: Vec<String> = match replacement {
        Some(list) => {
            log!(Level::Driver, "driver manifests from VK_DRIVER_FILES/VK_ICD_FILENAMES: {list}");
            expand(&list)
        }
        None => {
            let mut paths = driver_env("VK_ADD_DRIVER_FILES").map(|l| expand(&l)).unwrap_or_default();
            let dirs = search_dirs("icd.d");
            log!(Level::Driver, "searching for driver manifests in {}", dirs.join(":"));
            for dir in dirs {
                paths.extend(json_files(&dir));
            }
            paths
        }
    };
    let paths = match &settings {
        Some(settings) => settings.with_additional_drivers(paths),
        None => paths,
    };
    let select = driver_env("VK_LOADER_DRIVERS_SELECT").map(|l| patterns("VK_LOADER_DRIVERS_SELECT", &l)).unwrap_or_default();
    let disable = driver_env("VK_LOADER_DRIVERS_DISABLE").map(|l| patterns("VK_LOADER_DRIVERS_DISABLE", &l)).unwrap_or_default();
    let mut found: Vec<Found> = Vec::new();
    for path in paths {
        if found.iter().any(|f| f.path == path) {
            continue;
        }
        let file_name = path.rsplit('/').next().unwrap_or(&path);
        let skipped = if !select.is_empty() {
            (!select.iter().any(|p| p.matches(file_name)))
                .then(|| "not matched by VK_LOADER_DRIVERS_SELECT".to_string())
        } else if disable.iter().any(|p| p.matches(file_name)) {
            Some("matched by VK_LOADER_DRIVERS_DISABLE".to_string())
        } else {
            None
        };
        log!(Level::Driver, "found driver manifest {path}");
        found.push(Found { path, skipped });
    }
    found
}

/// Layer manifest files, explicit or implicit, in search order. `VK_LAYER_PATH` /
/// `VK_IMPLICIT_LAYER_PATH` replace the search, `VK_ADD_LAYER_PATH` / `VK_ADD_IMPLICIT_LAYER_PATH`
/// come before it (all ignored by elevated processes: `platform::env` is `secure_getenv`).
/// `override_paths` (from the override layer) replace the explicit search, `VK_LAYER_PATH`
/// included, when not empty.
pub fn layer_manifests(implicit: bool, override_paths: &[String]) -> Vec<String> {
    let (replace, add, kind) = if implicit {
        ("VK_IMPLICIT_LAYER_PATH", "VK_ADD_IMPLICIT_LAYER_PATH", "implicit_layer.d")
    } else {
        ("VK_LAYER_PATH", "VK_ADD_LAYER_PATH", "explicit_layer.d")
    };
    let replacement = platform::env(replace);
    let mut paths: Vec<String> = if !implicit && !override_paths.is_empty() {
        if replacement.is_some() {
            crate::log::log(crate::log::Level::Layer, "VK_LAYER_PATH ignored: the override layer's override_paths take priority");
        }
        let mut paths = platform::env(add).map(|l| expand(&l)).unwrap_or_default();
        paths.extend(override_paths.iter().flat_map(|p| expand(p)));
        paths
    } else if let Some(list) = replacement {
        expand(&list)
    } else {
        let mut paths = platform::env(add).map(|l| expand(&l)).unwrap_or_default();
        for dir in search_dirs(kind) {
            paths.extend(json_files(&dir));
        }
        paths
    };
    let mut seen = Vec::with_capacity(paths.len());
    paths.retain(|p| {
        let new = !seen.contains(p);
        if new {
            seen.push(p.clone());
        }
        new
    });
    paths
}

/// The comma-separated glob patterns `var` holds; invalid ones are logged and dropped.
fn patterns(var: &str, list: &str) -> Vec<glob::Pattern> {
    list.split(',')
        .filter(|p| !p.is_empty())
        .filter_map(|p| match glob::Pattern::new(p) {
            Ok(pattern) => Some(pattern),
            Err(e) => {
                log!(Level::Warn, "{var}: ignoring bad pattern \"{p}\": {e}");
                None
            }
        })
        .collect()
}
