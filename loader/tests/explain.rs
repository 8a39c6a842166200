//! `vk-loader explain` and `VK_LOADER_EXPLAIN`: every driver and layer manifest with the decision
//! and the reason that names its cause, and the physical devices, on Mesa's lavapipe (package
//! mesa-vulkan-drivers) and `vulkaninfo` (vulkan-tools).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const LAVAPIPE: &str = common::LAVAPIPE;

/// A directory with a malformed driver manifest, one whose library is missing, and an implicit
/// layer (our test layer) with a `disable_environment`; returns the directory and the variables
/// that point the loader at them and at lavapipe only.
fn troubled_setup(name: &str) -> (PathBuf, Vec<(&'static str, String)>) {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let dir = common::scratch(name);
    let broken = dir.join("broken.json");
    std::fs::write(&broken, r#"{"file_format_version": "1.0.0", "ICD": {"library_path": "#).unwrap();
    let missing = common::driver_manifest(&dir, "missing.json", Path::new("/nonexistent/libvulkan_gone.so"));
    let layers = dir.join("implicit");
    std::fs::create_dir(&layers).unwrap();
    let extra = r#", "disable_environment": {"EXPLAIN_TEST_DISABLE": "1"}"#;
    common::layer_manifest(&layers, "switched_off.json", "VK_LAYER_TEST_switched_off", &common::test_layer(), extra);
    let drivers = [broken.display().to_string(), missing.display().to_string(), LAVAPIPE.to_string()].join(":");
    let env = vec![
        ("VK_DRIVER_FILES", drivers),
        ("VK_IMPLICIT_LAYER_PATH", layers.display().to_string()),
        ("VK_LAYER_PATH", dir.join("no-explicit-layers").display().to_string()),
        ("EXPLAIN_TEST_DISABLE", "1".to_string()),
        // No settings file or layers of the machine's user.
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_DATA_HOME", dir.join("data").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("XDG_DATA_DIRS", dir.join("share").display().to_string()),
    ];
    (dir, env)
}

fn vk_loader(args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_vk-loader"));
    command.args(args).env_remove("VK_ICD_FILENAMES").env_remove("VK_ADD_DRIVER_FILES").env_remove("VK_LOADER_EXPLAIN");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The entry of `list` whose `key` ends with `suffix`.
fn entry<'a>(doc: &'a Value, list: &str, key: &str, suffix: &str) -> &'a Value {
    doc[list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list} array in {doc:#}"))
        .iter()
        .find(|e| e[key].as_str().is_some_and(|v| v.ends_with(suffix)))
        .unwrap_or_else(|| panic!("no {list} entry with {key} ending in {suffix} in {doc:#}"))
}

/// Checks a document of the troubled setup: each manifest with its decision and reason, and
/// lavapipe's device listed first.
fn check_troubled_document(doc: &Value) {
    assert_eq!(doc["schema"], "vk-loader-explain", "{doc:#}");
    assert_eq!(doc["schema_version"], 1);

    let broken = entry(doc, "drivers", "manifest", "/broken.json");
    assert_eq!(broken["decision"], "rejected", "{broken:#}");
    assert!(broken["reason"].as_str().unwrap().contains("invalid JSON"), "{broken:#}");

    let missing = entry(doc, "drivers", "manifest", "/missing.json");
    assert_eq!(missing["decision"], "rejected", "{missing:#}");
    assert!(missing["reason"].as_str().unwrap().contains("/nonexistent/libvulkan_gone.so"), "{missing:#}");

    let lavapipe = entry(doc, "drivers", "manifest", LAVAPIPE);
    assert_eq!(lavapipe["decision"], "used", "{lavapipe:#}");
    assert!(lavapipe["library"].as_str().unwrap().contains("libvulkan_lvp.so"), "{lavapipe:#}");

    let layer = entry(doc, "layers", "name", "VK_LAYER_TEST_switched_off");
    assert_eq!(layer["decision"], "off", "{layer:#}");
    assert_eq!(layer["type"], "implicit");
    assert!(layer["reason"].as_str().unwrap().contains("disable_environment EXPLAIN_TEST_DISABLE"), "{layer:#}");
    assert_eq!(layer["position"], Value::Null);
}

#[test]
fn explain_json_names_each_decision_and_its_cause() {
    let (_dir, env) = troubled_setup("explain-json");
    let run = vk_loader(&["explain", "--json"], &env);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    check_troubled_document(&doc);
    assert_eq!(doc["result"], "VK_SUCCESS");
    let device = &doc["devices"][0];
    assert!(device["name"].as_str().unwrap().starts_with("llvmpipe"), "{doc:#}");
    assert_eq!((&device["decision"], &device["position"], &device["type"]), (&"used".into(), &0.into(), &"cpu".into()));
    assert_eq!(device["driver"], LAVAPIPE);
    assert!(device["reason"].as_str().unwrap().contains("cpu device"), "{device:#}");
    assert_eq!(doc["context"]["environment"]["EXPLAIN_TEST_DISABLE"], Value::Null, "only the loader's variables are listed");
    assert_eq!(doc["context"]["environment"]["VK_DRIVER_FILES"], env[0].1.as_str());
}

#[test]
fn explain_without_devices_creates_no_instance() {
    let (_dir, env) = troubled_setup("explain-no-devices");
    let run = vk_loader(&["explain", "--json", "--no-devices"], &env);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    check_troubled_document(&doc);
    assert_eq!(doc["result"], Value::Null);
    assert_eq!(doc["devices"], Value::Array(Vec::new()));
}

#[test]
fn explain_table_shows_decisions_and_reasons() {
    let (_dir, env) = troubled_setup("explain-table");
    let run = vk_loader(&["explain"], &env);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}");
    assert!(out.contains("DRIVERS (3)"), "{out}");
    let off = out.lines().position(|l| l.contains("off") && l.contains("VK_LAYER_TEST_switched_off")).expect(&out);
    assert!(out.lines().nth(off + 1).unwrap().contains("disable_environment EXPLAIN_TEST_DISABLE"), "{out}");
    assert!(out.lines().any(|l| l.starts_with(" 0 used") && l.contains("llvmpipe")), "{out}");
}

#[test]
fn bad_arguments_are_refused_with_the_usage() {
    let run = vk_loader(&["explain", "--jsn"], &[]);
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown option `--jsn`"));
}

#[test]
fn vk_loader_explain_writes_one_document_per_instance_of_vulkaninfo() {
    let (dir, mut env) = troubled_setup("explain-vulkaninfo");
    let libs = dir.join("lib");
    std::fs::create_dir(&libs).unwrap();
    for link in ["libvulkan.so", "libvulkan.so.1"] {
        std::os::unix::fs::symlink(common::libvulkan(), libs.join(link)).unwrap();
    }
    let file = dir.join("plan-%p.jsonl");
    env.push(("VK_LOADER_EXPLAIN", file.display().to_string()));
    env.push(("LD_LIBRARY_PATH", libs.display().to_string()));
    let mut command = Command::new(common::vulkaninfo());
    command.arg("--summary").env_remove("VK_ICD_FILENAMES").env_remove("VK_ADD_DRIVER_FILES");
    for (name, value) in &env {
        command.env(name, value);
    }
    let run = command.output().expect("vulkaninfo (install vulkan-tools)");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    // One file, named with vulkaninfo's process id.
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("plan-"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name != "plan-%p.jsonl" && name.trim_start_matches("plan-").trim_end_matches(".jsonl").parse::<u32>().is_ok(), "{name}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let docs: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!docs.is_empty());
    for doc in &docs {
        check_troubled_document(doc);
        assert!(doc["context"]["process"].as_str().unwrap().ends_with("vulkaninfo"), "{doc:#}");
        assert!(doc["devices"][0]["name"].as_str().unwrap().starts_with("llvmpipe"), "{doc:#}");
    }
}

#[test]
fn explain_shows_a_used_layer_in_its_place_and_a_hidden_device_with_its_filter() {
    let (dir, mut env) = troubled_setup("explain-used-hidden");
    let explicit = dir.join("explicit");
    std::fs::create_dir(&explicit).unwrap();
    common::layer_manifest(&explicit, "named.json", "VK_LAYER_TEST_named", &common::test_layer(), "");
    for (name, value) in &mut env {
        if *name == "VK_LAYER_PATH" {
            *value = explicit.display().to_string();
        }
    }
    env.push(("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_named".into()));
    // lavapipe's vendor id is 0x10005: this filter hides it.
    env.push(("VK_LOADER_VENDOR_ID_FILTER", "0x1002".into()));
    let run = vk_loader(&["explain", "--json"], &env);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)));
    let layer = entry(&doc, "layers", "name", "VK_LAYER_TEST_named");
    assert_eq!((&layer["decision"], &layer["position"], &layer["type"]), (&"used".into(), &0.into(), &"explicit".into()), "{doc:#}");
    assert!(layer["reason"].as_str().unwrap().contains("VK_INSTANCE_LAYERS"), "{layer:#}");
    assert_eq!(doc["layers"][0]["name"], "VK_LAYER_TEST_named", "the chain comes first");
    let device = entry(&doc, "devices", "name", "");
    assert!(device["name"].as_str().unwrap().starts_with("llvmpipe"), "{doc:#}");
    assert_eq!((&device["decision"], &device["position"]), (&"hidden".into(), &Value::Null), "{device:#}");
    assert_eq!(device["reason"], "hidden by VK_LOADER_VENDOR_ID_FILTER=0x1002");
}

/// `vk-loader explain --as /usr/bin/vulkaninfo` decides as vulkaninfo does where the executable
/// decides: the settings file's entry for it applies (its layer off), and it lists the driver
/// cache records stored for vulkaninfo, among them the one vulkaninfo's own instances are kept
/// under (its `VK_LOADER_EXPLAIN` document names that application digest). Without `--as`, explain
/// says that a settings file exists and why no entry of it applies.
#[test]
fn explain_as_an_executable_sees_its_settings_entry_and_cache_records() {
    let vulkaninfo = Path::new("/usr/bin/vulkaninfo");
    assert!(vulkaninfo.exists(), "install vulkan-tools");
    let dir = common::scratch("explain-as");
    let implicit = dir.join("implicit");
    std::fs::create_dir_all(&implicit).unwrap();
    let manifest = common::layer_manifest(&implicit, "app.json", "VK_LAYER_TEST_app", &common::test_layer(), r#", "disable_environment": {"NO_APP_LAYER": "1"}"#);
    let settings = dir.join("config/vulkan/loader_settings.d/vk_loader_settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let entry = format!(r#"{{"name": "VK_LAYER_TEST_app", "path": "{}", "control": "off", "treat_as_implicit_manifest": true}}"#, manifest.display());
    let text = format!(r#"{{"file_format_version": "1.0.0", "settings_array": [{{"app_keys": ["{}"], "layers": [{entry}]}}]}}"#, vulkaninfo.display());
    std::fs::write(&settings, text).unwrap();
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let env = [
        ("VK_DRIVER_FILES", LAVAPIPE.to_string()),
        ("VK_IMPLICIT_LAYER_PATH", implicit.display().to_string()),
        ("VK_LAYER_PATH", dir.join("none").display().to_string()),
        ("HOME", dir.join("home").display().to_string()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("XDG_CONFIG_HOME", dir.join("config").display().to_string()),
        ("XDG_DATA_HOME", dir.join("data").display().to_string()),
        ("XDG_CONFIG_DIRS", dir.join("etc").display().to_string()),
        ("XDG_DATA_DIRS", dir.join("share").display().to_string()),
    ];
    // vulkaninfo itself, on our libvulkan, writing its documents.
    let libs = dir.join("lib");
    std::fs::create_dir(&libs).unwrap();
    for link in ["libvulkan.so", "libvulkan.so.1"] {
        std::os::unix::fs::symlink(common::libvulkan(), libs.join(link)).unwrap();
    }
    let written = dir.join("vulkaninfo.jsonl");
    let run = Command::new(vulkaninfo)
        .arg("--summary")
        .env_remove("VK_ICD_FILENAMES")
        .env_remove("VK_ADD_DRIVER_FILES")
        .env_remove("VK_INSTANCE_LAYERS")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("LD_LIBRARY_PATH", &libs)
        .env("VK_LOADER_EXPLAIN", &written)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let own: Value = serde_json::from_str(std::fs::read_to_string(&written).unwrap().lines().next().unwrap()).unwrap();
    let app_layer = |doc: &Value| doc["layers"].as_array().unwrap().iter().find(|l| l["name"] == "VK_LAYER_TEST_app").cloned().unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(own["settings_file"], settings.display().to_string(), "{own:#}");
    assert_eq!(app_layer(&own)["decision"], "off", "{own:#}");
    let application = own["context"]["application"].as_str().unwrap_or_else(|| panic!("no application digest: {own:#}")).to_string();

    let explain = |extra: &[&str]| -> Value {
        let run = Command::new(env!("CARGO_BIN_EXE_vk-loader"))
            .args(["explain", "--json"])
            .args(extra)
            .env_remove("VK_LOADER_EXPLAIN")
            .env_remove("VK_INSTANCE_LAYERS")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)))
    };
    let as_vulkaninfo = explain(&["--as", "/usr/bin/vulkaninfo"]);
    assert_eq!(as_vulkaninfo["settings_file"], own["settings_file"], "{as_vulkaninfo:#}");
    assert_eq!(app_layer(&as_vulkaninfo)["decision"], "off");
    assert_eq!(app_layer(&as_vulkaninfo)["reason"], app_layer(&own)["reason"]);
    assert_eq!(as_vulkaninfo["context"]["executable"], "/usr/bin/vulkaninfo");
    let records = as_vulkaninfo["cache_records"].as_array().unwrap();
    let record = records.iter().find(|r| r["application"] == application.as_str()).unwrap_or_else(|| panic!("{application} not in {records:#?}"));
    assert_eq!((&record["manifest"], &record["physical_devices"]), (&LAVAPIPE.into(), &1.into()), "{record:#}");
    // Recording nothing in vulkaninfo's name: its records are the ones vulkaninfo made.
    assert!(records.iter().all(|r| r["application"] == application.as_str()), "{records:#?}");

    let plain = explain(&[]);
    assert_eq!(plain["settings_file"], Value::Null);
    let unused = plain["settings_file_unused"].as_str().unwrap_or_else(|| panic!("{plain:#}"));
    assert!(unused.starts_with(&settings.display().to_string()) && unused.contains("none names it (they name /usr/bin/vulkaninfo"), "{unused}");
    assert_eq!(app_layer(&plain)["decision"], "used", "{plain:#}");
}

/// `vk-loader explain --as PATH` gives the drivers the names they match their application profiles
/// by as that executable would: glibc's `program_invocation_name` (Mesa's driconf) is PATH and the
/// process's `comm` (NVIDIA's profiles) its file name, cut to 15 bytes as the kernel cuts it. The
/// test driver writes what it sees at its `vkCreateInstance`.
#[test]
fn explain_as_gives_drivers_the_executable_names() {
    let dir = common::scratch("explain-as-names");
    let manifest = common::driver_manifest(&dir, "test_driver.json", &common::test_driver());
    let names = dir.join("names.log");
    let game = "/opt/games/bin/a-game-with-a-long-name";
    let run = Command::new(env!("CARGO_BIN_EXE_vk-loader"))
        .args(["explain", "--json", "--as", game])
        .env_remove("VK_LOADER_EXPLAIN")
        .env_remove("VK_INSTANCE_LAYERS")
        .env("VK_DRIVER_FILES", &manifest)
        .env("VK_LOADER_DRIVER_CACHE", "off")
        .env("VK_IMPLICIT_LAYER_PATH", dir.join("none"))
        .env("VK_TEST_DRIVER_NAMES_LOG", &names)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let seen = std::fs::read_to_string(&names).unwrap_or_else(|e| panic!("the test driver was not asked to create an instance ({e})"));
    let first = seen.lines().next().unwrap();
    assert_eq!(first, format!("{game}\ta-game-with-a-l"), "{seen}");
    assert!(seen.lines().all(|line| line == first), "{seen}");
}
