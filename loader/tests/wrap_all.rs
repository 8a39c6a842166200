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

/// `vkcube --c 300` on an Xvfb display through our loader, lavapipe the only driver, the layers
/// of `layers` (application side first) from `dir` and the system's explicit layers: its exit
/// status, stdout and stderr.
fn vkcube(x: &common::xvfb::Xvfb, dir: &Path, layers: &[&str]) -> (bool, String, String) {
    let mut cmd = Command::new("vkcube");
    cmd.args(["--c", "300"]).env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("DISPLAY", &x.display);
    cmd.env("VK_DRIVER_FILES", common::LAVAPIPE).env("LD_LIBRARY_PATH", dir).env("HOME", dir.join("home"));
    cmd.env("XDG_DATA_DIRS", dir.join("none")).env("XDG_CONFIG_DIRS", dir.join("none"));
    cmd.env("VK_LAYER_PATH", format!("{}:/usr/share/vulkan/explicit_layer.d", dir.display()));
    cmd.env("VK_INSTANCE_LAYERS", layers.join(":")).env("WRAP_ALL_REPORT", "1").env("VK_LOADER_DEBUG", "layer");
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// vkcube (300 frames: xcb surface, swapchain, render pass, pipelines, descriptor sets, textures,
/// presents) through the layer exits as without it; an SDK layer below it that counts the draws
/// counts as many as without it; the Khronos validation layer above it and below it reports
/// nothing.
#[test]
fn vkcube_through_the_wrap_all_layer_runs_as_without_it() {
    let (Some(_), Some(_)) = (common::xvfb::on_path("Xvfb"), common::xvfb::on_path("vkcube")) else {
        eprintln!("SKIPPED: vkcube_through_the_wrap_all_layer_runs_as_without_it needs Xvfb (package xvfb) and vkcube (package vulkan-tools)");
        return;
    };
    let validation = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";
    assert!(Path::new(validation).exists(), "{validation} missing: install vulkan-validationlayers");
    let dir = setup("wrap-all-vkcube");
    let count = dir.join("libVkLayer_sdk_draw_count.so");
    std::fs::copy(common::shipped_library("libVkLayer_sdk_draw_count.so"), &count).unwrap();
    let manifest = vk_layer::Manifest {
        name: "VK_LAYER_TEST_sdk_draw_count",
        library_path: Path::new("./libVkLayer_sdk_draw_count.so"),
        api_version: vk_generated::make_api_version(0, 1, 4, 0),
        implementation_version: 1,
        description: "counts draws",
        ..vk_layer::Manifest::default()
    };
    manifest.write(&dir.join("sdk_draw_count.json")).unwrap();
    let x = common::xvfb::Xvfb::start();
    let draws = |out: &str| out.lines().find(|l| l.starts_with("SDK_DRAW_COUNT ")).map(str::to_string);

    let (ok, out, err) = vkcube(&x, &dir, &["VK_LAYER_TEST_sdk_draw_count"]);
    assert!(ok, "vkcube without the layer failed:\n{out}{err}");
    let without = draws(&out).unwrap_or_else(|| panic!("the counting layer did not report:\n{out}{err}"));
    assert_ne!(without, "SDK_DRAW_COUNT 0", "vkcube records its draws");
    eprintln!("{without}");
    let (ok, out, err) = vkcube(&x, &dir, &[LAYER, "VK_LAYER_TEST_sdk_draw_count"]);
    assert!(ok, "vkcube through the layer failed:\n{out}{err}");
    assert_eq!(draws(&out), Some(without), "the layer below counted otherwise:\n{out}{err}");
    let types = wrapped_types(&err);
    // Beside the compute program's: semaphore, fence, image, image view, render pass, framebuffer,
    // sampler, surface, swapchain.
    for t in COMPUTE_TYPES.iter().chain(&[5, 7, 10, 14, 18, 21, 24, 1000000000, 1000001000]) {
        assert!(types.contains(t), "object type {t} not wrapped: {types:?}\n{out}{err}");
    }
    for layers in [[LAYER, "VK_LAYER_KHRONOS_validation"], ["VK_LAYER_KHRONOS_validation", LAYER]] {
        let (ok, out, err) = vkcube(&x, &dir, &layers);
        assert!(ok, "vkcube with {layers:?} failed:\n{out}{err}");
        // Both in the device's chain, in that order.
        let chain = err.lines().find(|l| l.contains("device layer chain")).unwrap_or_default();
        let at = |name: &str| chain.find(name).unwrap_or_else(|| panic!("{name} not in the chain:\n{err}"));
        assert!(at(layers[0]) < at(layers[1]), "{layers:?}: not in that order: {chain}");
        assert!(!out.contains("VUID") && !err.contains("VUID") && !err.contains("Validation Error"), "{layers:?}: validation reported:\n{out}{err}");
    }
}
