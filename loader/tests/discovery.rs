//! Driver discovery: the XDG search order with HOME fallbacks, empty variables as unset,
//! duplicate directories and manifests once, only `*.json`, names sorted; VK_DRIVER_FILES /
//! VK_ICD_FILENAMES replacing the search and VK_ADD_DRIVER_FILES coming first; the SELECT and
//! DISABLE globs. Read from the loader's `VK_LOADER_DEBUG=driver` lines in a child process.

mod common;

use std::ffi::c_char;
use std::path::{Path, PathBuf};

use common::child;
use vk_generated::types::*;

#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").is_err() {
        return;
    }
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    let enumerate: libloading::Symbol<unsafe extern "system" fn(*const c_char, *mut u32, *mut VkExtensionProperties) -> VkResult> =
        // SAFETY: the exported vkEnumerateInstanceExtensionProperties has this type; `lib` outlives it.
        unsafe { lib.get(b"vkEnumerateInstanceExtensionProperties\0").unwrap() };
    let mut count = 0;
    // SAFETY: no layer name, a local count and no array: a count query.
    unsafe { enumerate(std::ptr::null(), &mut count, std::ptr::null_mut()) };
}

/// A scratch tree with a driver manifest (pointing at the test driver) at each `relative` path.
fn tree(name: &str, manifests: &[&str]) -> PathBuf {
    let root = common::scratch(name);
    for relative in manifests {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        common::driver_manifest(path.parent().unwrap(), path.file_name().unwrap().to_str().unwrap(), &common::test_driver());
    }
    root
}

fn p(root: &Path, relative: &str) -> String {
    root.join(relative).display().to_string()
}

/// The manifests the loader found under `root`, in order, relative to it.
fn found(root: &Path, env: &[(&str, String)]) -> Vec<String> {
    let mut env = env.to_vec();
    env.push(("VK_LOADER_DEBUG", "driver".into()));
    let (ok, out, err) = child("enumerate", &env);
    assert!(ok, "{out}{err}");
    let prefix = format!("{}/", root.display());
    err.lines()
        .filter_map(|l| l.split("Found ICD manifest file ").nth(1))
        .filter_map(|path| path.strip_prefix(&prefix).map(String::from))
        .collect()
}

/// Loader lines about one manifest (loaded, skipped, ...).
fn lines_about(root: &Path, env: &[(&str, String)], relative: &str) -> Vec<String> {
    let mut env = env.to_vec();
    env.push(("VK_LOADER_DEBUG", "all".into()));
    let (_, out, err) = child("enumerate", &env);
    let path = p(root, relative);
    let lines: Vec<String> = err.lines().filter(|l| l.contains(&format!("{path}:"))).map(String::from).collect();
    assert!(!lines.is_empty(), "nothing said about {path}:\n{out}{err}");
    lines
}

#[test]
fn xdg_order_home_fallbacks_duplicates_and_json_only() {
    let root = tree(
        "discovery-xdg",
        &[
            "home/.config/vulkan/icd.d/a.json",
            "cfg1/vulkan/icd.d/b.json",
            "cfg2/vulkan/icd.d/d.json",
            "cfg2/vulkan/icd.d/c.json",
            "home/.local/share/vulkan/icd.d/e.json",
            "data1/vulkan/icd.d/f.json",
        ],
    );
    std::fs::write(root.join("cfg1/vulkan/icd.d/notes.txt"), "not a manifest").unwrap();
    let env = [
        ("HOME", p(&root, "home")),
        ("XDG_CONFIG_HOME", String::new()), // empty counts as unset: $HOME/.config
        ("XDG_CONFIG_DIRS", format!("{}:{}", p(&root, "cfg1"), p(&root, "cfg2"))),
        ("XDG_DATA_HOME", String::new()),
        // A duplicate directory is searched once; a trailing slash is the same directory.
        ("XDG_DATA_DIRS", format!("{}:{}/", p(&root, "data1"), p(&root, "data1"))),
    ];
    assert_eq!(
        found(&root, &env),
        [
            "home/.config/vulkan/icd.d/a.json",
            "cfg1/vulkan/icd.d/b.json",
            "cfg2/vulkan/icd.d/c.json",
            "cfg2/vulkan/icd.d/d.json",
            "home/.local/share/vulkan/icd.d/e.json",
            "data1/vulkan/icd.d/f.json",
        ]
    );
    // Set XDG homes win over the HOME fallbacks.
    let root2 = tree("discovery-xdg-set", &["config/vulkan/icd.d/g.json", "home/.config/vulkan/icd.d/h.json"]);
    let env = [("HOME", p(&root2, "home")), ("XDG_CONFIG_HOME", p(&root2, "config")), ("XDG_DATA_DIRS", p(&root2, "none"))];
    assert_eq!(found(&root2, &env), ["config/vulkan/icd.d/g.json"]);
}

#[test]
fn driver_files_replace_the_search_and_add_driver_files_come_first() {
    let root = tree("discovery-env", &["xdg/vulkan/icd.d/searched.json", "extra/added.json", "only/x.json", "only/y.json", "legacy.json"]);
    let base = [("XDG_CONFIG_DIRS", p(&root, "xdg")), ("HOME", p(&root, "nohome"))];
    let with = |extra: &[(&'static str, String)]| base.iter().cloned().chain(extra.iter().cloned()).collect::<Vec<_>>();
    assert_eq!(
        found(&root, &with(&[("VK_ADD_DRIVER_FILES", p(&root, "extra/added.json"))])),
        ["extra/added.json", "xdg/vulkan/icd.d/searched.json"]
    );
    // A directory in the list is expanded; the same manifest named twice is found once; the
    // additions are ignored under a replacement.
    let replace = format!("{}:{}:{}", p(&root, "only"), p(&root, "only/x.json"), p(&root, "legacy.json"));
    assert_eq!(
        found(&root, &with(&[("VK_DRIVER_FILES", replace.clone()), ("VK_ADD_DRIVER_FILES", p(&root, "extra/added.json"))])),
        ["only/x.json", "only/y.json", "legacy.json"]
    );
    // VK_ICD_FILENAMES is the older name; VK_DRIVER_FILES wins over it.
    assert_eq!(found(&root, &with(&[("VK_ICD_FILENAMES", p(&root, "legacy.json"))])), ["legacy.json"]);
    assert_eq!(
        found(&root, &with(&[("VK_ICD_FILENAMES", p(&root, "legacy.json")), ("VK_DRIVER_FILES", p(&root, "only/x.json"))])),
        ["only/x.json"]
    );
}

#[test]
fn select_and_disable_globs_on_the_file_name() {
    let root = tree("discovery-globs", &["d/amd_icd.json", "d/intel_icd.json", "d/lvp_icd.json"]);
    let env = |extra: &[(&'static str, &str)]| {
        let mut env = vec![("VK_DRIVER_FILES", p(&root, "d"))];
        env.extend(extra.iter().map(|(k, v)| (*k, v.to_string())));
        env
    };
    // The Khronos loader's words, which users search for.
    let skipped = |env: &[(&str, String)], name: &str| {
        let mut env = env.to_vec();
        env.push(("VK_LOADER_DEBUG", "all".into()));
        let (ok, out, err) = child("enumerate", &env);
        assert!(ok, "{out}{err}");
        err.lines().any(|l| l.contains(&format!("Driver \"{name}\" ignored because")))
    };
    let disable = env(&[("VK_LOADER_DRIVERS_DISABLE", "*intel*,lvp_*")]);
    assert!(skipped(&disable, "intel_icd.json") && skipped(&disable, "lvp_icd.json") && !skipped(&disable, "amd_icd.json"));
    // SELECT wins over DISABLE.
    let both = env(&[("VK_LOADER_DRIVERS_SELECT", "lvp*"), ("VK_LOADER_DRIVERS_DISABLE", "*")]);
    assert!(!skipped(&both, "lvp_icd.json") && skipped(&both, "amd_icd.json") && skipped(&both, "intel_icd.json"));
    // `~all~` is every driver, as for the Khronos loader.
    let all = env(&[("VK_LOADER_DRIVERS_DISABLE", "~all~")]);
    assert!(["amd_icd.json", "intel_icd.json", "lvp_icd.json"].iter().all(|name| skipped(&all, name)));
}

#[test]
fn two_manifests_of_one_library_load_it_once() {
    let root = tree("discovery-samelib", &["one.json", "two.json"]);
    let env = [("VK_DRIVER_FILES", format!("{}:{}", p(&root, "one.json"), p(&root, "two.json")))];
    assert!(lines_about(&root, &env, "one.json").iter().any(|l| l.contains("loaded")));
    assert!(lines_about(&root, &env, "two.json").iter().any(|l| l.contains("already loaded through another manifest")));
}
