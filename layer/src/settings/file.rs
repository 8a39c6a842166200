//! `vk_layer_settings.txt`: where it is and what it says. Found, as the issue and LunarG's
//! guide to configuring layers have it, through `VK_LAYER_SETTINGS_PATH` (the file, or a
//! directory holding it), then where the Vulkan Configurator writes it
//! (`$XDG_DATA_HOME/vulkan/settings.d/`, else `$HOME/.local/share/vulkan/settings.d/`), then the
//! working directory. Lines are `key = value`; `#` starts a comment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The file's name.
pub const FILE_NAME: &str = "vk_layer_settings.txt";

/// The first settings file that exists, by the search order above; `env` reads a variable,
/// `is_file` / `is_dir` ask the file system.
pub fn find(
    env: &dyn Fn(&str) -> Option<OsString>,
    is_file: &dyn Fn(&Path) -> bool,
    is_dir: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = set("VK_LAYER_SETTINGS_PATH") {
        let path = if is_dir(&path) {
            path.join(FILE_NAME)
        } else {
            path
        };
        if is_file(&path) {
            return Some(path);
        }
    }
    let data_home =
        set("XDG_DATA_HOME").or_else(|| set("HOME").map(|home| home.join(".local/share")));
    if let Some(configurator) = data_home.map(|d| d.join("vulkan/settings.d").join(FILE_NAME)) {
        if is_file(&configurator) {
            return Some(configurator);
        }
    }
    let here = PathBuf::from(FILE_NAME);
    is_file(&here).then_some(here)
}

/// The file found from the process's environment, if any.
pub fn find_here() -> Option<PathBuf> {
    find(
        &|name| std::env::var_os(name),
        &Path::is_file,
        &Path::is_dir,
    )
}

/// The `key = value` pairs of a settings file's text (the last of a repeated key wins), and the
/// lines that are neither a pair, a comment nor blank (1-based), for a log line each.
pub fn parse(text: &str) -> (BTreeMap<String, String>, Vec<usize>) {
    let mut values = BTreeMap::new();
    let mut malformed = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        match line.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                values.insert(key.trim().to_string(), value.trim().to_string());
            }
            _ if line.trim().is_empty() => {}
            _ => malformed.push(number + 1),
        }
    }
    (values, malformed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn pairs_comments_and_malformed_lines() {
        let text = "# a comment\nrust_trace.file = /tmp/x.jsonl # after\n\n  rust_trace.commands=vkCmd*,vkQueue*\nnonsense\n= no key\nrust_trace.file=/tmp/y\n";
        let (values, malformed) = parse(text);
        assert_eq!(
            values.get("rust_trace.file").map(String::as_str),
            Some("/tmp/y")
        );
        assert_eq!(
            values.get("rust_trace.commands").map(String::as_str),
            Some("vkCmd*,vkQueue*")
        );
        assert_eq!(values.len(), 2);
        assert_eq!(malformed, [5, 6]);
    }

    /// A fake file system: the paths that are files, and those that are directories.
    fn search(vars: &[(&str, &str)], files: &[&str], dirs: &[&str]) -> Option<PathBuf> {
        let files: BTreeSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        let dirs: BTreeSet<PathBuf> = dirs.iter().map(PathBuf::from).collect();
        let env = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        };
        find(&env, &|p| files.contains(p), &|p| dirs.contains(p))
    }

    #[test]
    fn search_order() {
        let all = [
            "/s/vk_layer_settings.txt",
            "/xdg/vulkan/settings.d/vk_layer_settings.txt",
            "vk_layer_settings.txt",
        ];
        let vars = [
            ("VK_LAYER_SETTINGS_PATH", "/s"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ];
        // The variable naming a directory: the file in it first.
        assert_eq!(search(&vars, &all, &["/s"]), Some(PathBuf::from(all[0])));
        // Naming a file.
        let vars_file = [
            ("VK_LAYER_SETTINGS_PATH", "/s/vk_layer_settings.txt"),
            ("XDG_DATA_HOME", "/xdg"),
        ];
        assert_eq!(search(&vars_file, &all, &[]), Some(PathBuf::from(all[0])));
        // Naming nothing that exists: the Configurator's, then HOME's, then the working directory's.
        assert_eq!(search(&vars, &all[1..], &[]), Some(PathBuf::from(all[1])));
        let home = [("HOME", "/home/u")];
        let home_file = "/home/u/.local/share/vulkan/settings.d/vk_layer_settings.txt";
        assert_eq!(
            search(&home, &[home_file, all[2]], &[]),
            Some(PathBuf::from(home_file))
        );
        assert_eq!(search(&home, &[all[2]], &[]), Some(PathBuf::from(all[2])));
        assert_eq!(search(&[], &[], &[]), None);
    }
}
