//! `VK_LAYER_RUST_wrap_all` (tests/wrap-all-layer, the release build), which hands the
//! application its own handle for every object, dispatchable ones included, on Mesa's lavapipe:
//! `vulkaninfo --json` writes the profile it writes without the layer, and the compute program
//! checks its values, through our loader and through the system's; the layer reports the object
//! types it wrapped, so a run that bypassed it fails.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const LAYER: &str = "VK_LAYER_RUST_wrap_all";

/// The object types a run must have wrapped: instance, physical device, device, queue, command
/// buffer (the dispatchable ones), and the compute program's memory, buffer, shader module,
/// pipeline layout, pipeline, descriptor set layout, pool and set, and command pool.
const COMPUTE_TYPES: &[i32] = &[1, 2, 3, 4, 6, 8, 9, 15, 17, 19, 20, 22, 23, 25];

/// A scratch directory holding our library under both names programs open, and the layer's
/// library with the manifest the SDK writes beside it.
fn setup(name: &str) -> PathBuf {
    assert!(Path::new(common::LAVAPIPE).exists(), "{} missing: install mesa-vulkan-drivers", common::LAVAPIPE);
    let dir = common::scratch(name);
    for link in ["libvulkan.so", "libvulkan.so.1"] {
        std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join(link)).unwrap();
    }
    let library = dir.join("libVkLayer_rust_wrap_all.so");
    std::fs::copy(common::shipped_library("libVkLayer_rust_wrap_all.so"), &library).unwrap();
    vk_layer::write_manifest_beside::<VkLayer_rust_wrap_all::WrapAll>(&library).unwrap();
    dir
}

/// The variables that enable the layer from `dir` and make it report what it wrapped.
fn with_layer(dir: &Path) -> Vec<(&'static str, String)> {
    vec![("VK_LAYER_PATH", dir.display().to_string()), ("VK_INSTANCE_LAYERS", LAYER.into()), ("WRAP_ALL_REPORT", "1".into())]
}

/// The object types the layer reports having wrapped (its `WRAP_ALL_WRAPPED` line on stderr).
fn wrapped_types(stderr: &str) -> Vec<i32> {
    let line = stderr.lines().find_map(|l| l.strip_prefix("WRAP_ALL_WRAPPED ")).unwrap_or_else(|| panic!("the layer did not run:\n{stderr}"));
    line.split(' ').map(|t| t.parse().unwrap()).collect()
}

/// `vulkaninfo --json` in `work` through the loader in `library_dir` (the system's with `None`),
/// lavapipe the only driver, the host's layers hidden, `env` added: stdout, stderr, and the
/// profile it wrote.
fn vulkaninfo_json(library_dir: Option<&Path>, work: &Path, env: &[(&str, String)]) -> (String, String, String) {
    std::fs::create_dir_all(work).unwrap();
    let empty = work.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = Command::new(common::vulkaninfo());
    cmd.arg("--json").current_dir(work).env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("VK_DRIVER_FILES", common::LAVAPIPE);
    for var in ["XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME"] {
        cmd.env(var, &empty);
    }
    if let Some(dir) = library_dir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "vulkaninfo --json failed:\n{stdout}{stderr}");
    let files: Vec<PathBuf> = std::fs::read_dir(work).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
    assert_eq!(files.len(), 1, "expected one profile in {}: {files:?}", work.display());
    (stdout, stderr, std::fs::read_to_string(&files[0]).unwrap())
}

fn differences(with: &str, without: &str) -> String {
    similar::TextDiff::from_lines(without, with).unified_diff().context_radius(2).header("without the layer", "with it").to_string()
}

/// `vulkaninfo --json` through the layer writes the profile it writes without it, through our
/// loader and through the system's.
#[test]
fn vulkaninfo_json_through_the_wrap_all_layer_is_unchanged() {
    let dir = setup("wrap-all-vulkaninfo");
    for (loader, library) in [("ours", Some(dir.as_path())), ("system", None)] {
        let (_, _, without) = vulkaninfo_json(library, &dir.join(format!("{loader}-without")), &[]);
        let (out, err, with) = vulkaninfo_json(library, &dir.join(format!("{loader}-with")), &with_layer(&dir));
        let types = wrapped_types(&err);
        for t in [1, 2] {
            assert!(types.contains(&t), "{loader}: object type {t} not wrapped: {types:?}\n{out}{err}");
        }
        assert!(with == without, "{loader}: the profiles differ:\n{}", differences(&with, &without));
    }
}

/// The child side of `compute_program_through_the_wrap_all_layer_checks_its_values`.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!(); // the harness's "test scenario_entry ... " stays on a line of its own
    match scenario.as_str() {
        "compute" => {
            let options = vk_compute::Options { count: 4096, iterations: 3 };
            if let Err(e) = vk_compute::run(&options) {
                panic!("FAIL: {e}");
            }
        }
        other => panic!("unknown scenario {other}"),
    }
}

/// The compute program (instance, device, buffer, memory, pipeline, descriptor set, command
/// buffer, three dispatches, every value checked) through the layer, every handle it gets the
/// layer's: through our loader and through the system's.
#[test]
fn compute_program_through_the_wrap_all_layer_checks_its_values() {
    let dir = setup("wrap-all-compute");
    let system = common::scratch("wrap-all-compute-system");
    std::os::unix::fs::symlink(common::system_library("libvulkan.so.1"), system.join("libvulkan.so.1")).unwrap();
    for (loader, library) in [("ours", &dir), ("system", &system)] {
        let mut env = with_layer(&dir);
        env.push(("LD_LIBRARY_PATH", library.display().to_string()));
        env.push(("VK_DRIVER_FILES", common::LAVAPIPE.into()));
        let (ok, out, err) = common::child("compute", &env);
        assert!(ok, "{loader}: {out}{err}");
        assert!(out.contains("\nPASS: 4096 values x 3 iteration(s) checked\n"), "{loader}: {out}");
        let types = wrapped_types(&err);
        for t in COMPUTE_TYPES {
            assert!(types.contains(t), "{loader}: object type {t} not wrapped: {types:?}\n{out}{err}");
        }
    }
}
