//! The trace layer (`VK_LAYER_RUST_trace`, trace-layer/) under both loaders, ours and the
//! system's Khronos loader, on Mesa's lavapipe: `vkcube` in an Xvfb window and `vk-compute`
//! run with the layer enabled, their trace files parsed line by line and the calls checked
//! with their arguments (create infos, submits, draws, presents).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::xvfb::{on_path, Xvfb};
use serde_json::Value;
// The crate is named as its library, `VkLayer_rust_trace`.
use VkLayer_rust_trace as vk_trace_layer;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
const SYSTEM_LOADER: &str = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1";

/// Which `libvulkan.so.1` a program gets.
#[derive(Clone, Copy, Debug)]
enum Loader {
    Ours,
    System,
}

/// A directory with the layer and its manifest (the SDK's manifest writer), and our library as
/// `libvulkan.so.1` in `lib/`.
fn setup(name: &str) -> PathBuf {
    let dir = common::scratch(name);
    let library = common::shipped_library(vk_trace_layer::LIBRARY_FILE);
    std::fs::copy(library, dir.join(vk_trace_layer::LIBRARY_FILE)).unwrap();
    let relative = format!("./{}", vk_trace_layer::LIBRARY_FILE);
    vk_trace_layer::manifest(Path::new(&relative)).write(&dir.join("VkLayer_rust_trace.json")).unwrap();
    std::fs::create_dir(dir.join("lib")).unwrap();
    std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join("lib/libvulkan.so.1")).unwrap();
    dir
}

/// The environment that enables the layer from `dir` and traces into `trace`, through `loader`.
fn layer_env(dir: &Path, trace: &Path, loader: Loader) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("VK_LAYER_PATH", dir.display().to_string()),
        ("VK_INSTANCE_LAYERS", "VK_LAYER_RUST_trace".to_string()),
        ("VK_LAYER_RUST_TRACE_FILE", trace.display().to_string()),
        ("VK_DRIVER_FILES", LAVAPIPE.to_string()),
        // The system loader 1.3.239 reads the older name.
        ("VK_ICD_FILENAMES", LAVAPIPE.to_string()),
    ];
    if let Loader::Ours = loader {
        env.push(("LD_LIBRARY_PATH", dir.join("lib").display().to_string()));
    }
    env
}

/// The trace file's lines, each parsed.
fn read_trace(trace: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(trace).unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))).collect()
}

fn calls<'a>(lines: &'a [Value], command: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["command"] == command).collect()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

/// The length of the array `value[array]`, checked to equal `value[count]`.
fn counted(value: &Value, count: &str, array: &str) -> usize {
    let len = value[array].as_array().map_or(0, Vec::len);
    assert_eq!(value[count].as_u64(), Some(len as u64), "{count} against {array}: {value}");
    len
}

/// What every traced program does: an instance, a device with queues, submits with their
/// command buffers, all successful, and both destroyed again.
fn assert_lifecycle(lines: &[Value], extension: &str) {
    let instance = calls(lines, "vkCreateInstance");
    assert_eq!(instance.len(), 1, "{instance:?}");
    assert_eq!(instance[0]["result"], "VK_SUCCESS");
    let info = &instance[0]["args"]["pCreateInfo"];
    assert_eq!(info["sType"], "VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO");
    assert!(instance[0]["args"]["pInstance"].is_string(), "{}", instance[0]);
    if !extension.is_empty() {
        assert!(strings(&info["ppEnabledExtensionNames"]).contains(&extension), "{info}");
    }

    let device = calls(lines, "vkCreateDevice");
    assert_eq!(device.len(), 1);
    let info = &device[0]["args"]["pCreateInfo"];
    assert!(device[0]["args"]["physicalDevice"].is_string());
    let queues = counted(info, "queueCreateInfoCount", "pQueueCreateInfos");
    assert!(queues >= 1, "{info}");
    let queue = &info["pQueueCreateInfos"][0];
    assert_eq!(queue["sType"], "VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO");
    assert_eq!(counted(queue, "queueCount", "pQueuePriorities"), queue["queueCount"].as_u64().unwrap() as usize);

    let submits = calls(lines, "vkQueueSubmit");
    assert!(!submits.is_empty());
    for submit in &submits {
        assert_eq!(submit["result"], "VK_SUCCESS", "{submit}");
        let count = counted(&submit["args"], "submitCount", "pSubmits");
        for info in submit["args"]["pSubmits"].as_array().unwrap().iter().take(count) {
            assert_eq!(info["sType"], "VK_STRUCTURE_TYPE_SUBMIT_INFO");
            assert!(counted(info, "commandBufferCount", "pCommandBuffers") >= 1, "{info}");
        }
    }
    assert_eq!(calls(lines, "vkDestroyDevice").len(), 1);
    assert_eq!(calls(lines, "vkDestroyInstance").len(), 1);
    assert!(lines.iter().all(|l| l["thread"].as_i64().is_some_and(|t| t > 0)), "every line names its thread");
}

fn vkcube_traced(loader: Loader) {
    let (Some(_), Some(vkcube)) = (on_path("Xvfb"), on_path("vkcube")) else {
        eprintln!("SKIPPED: the trace layer's vkcube test ({loader:?}) needs Xvfb (package xvfb) and vkcube (package vulkan-tools)");
        return;
    };
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    assert!(Path::new(SYSTEM_LOADER).exists(), "{SYSTEM_LOADER} missing: install libvulkan1");
    let x = Xvfb::start();
    let dir = setup(&format!("trace-vkcube-{loader:?}"));
    let trace = dir.join("trace.jsonl");
    let mut cmd = Command::new(vkcube);
    for (var, _) in std::env::vars() {
        if var.starts_with("VK_") {
            cmd.env_remove(var);
        }
    }
    cmd.args(["--c", "5"]).env("DISPLAY", &x.display).env_remove("WAYLAND_DISPLAY").env_remove("LD_LIBRARY_PATH");
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    // No other layers: the host's implicit ones stay out of both loaders' way.
    cmd.env("VK_IMPLICIT_LAYER_PATH", &empty).env("XDG_DATA_DIRS", &empty).env("XDG_CONFIG_DIRS", &empty).env("HOME", &empty);
    cmd.envs(layer_env(&dir, &trace, loader));
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "vkcube failed through {loader:?}: {:?}\n{stdout}\n{stderr}", out.status);
    let lines = read_trace(&trace);
    assert_lifecycle(&lines, "VK_KHR_surface");

    let device = &calls(&lines, "vkCreateDevice")[0]["args"]["pCreateInfo"];
    assert!(strings(&device["ppEnabledExtensionNames"]).contains(&"VK_KHR_swapchain"), "{device}");
    let draws = calls(&lines, "vkCmdDraw");
    assert!(!draws.is_empty());
    // The cube: 12 triangles, one instance.
    assert!(draws.iter().all(|d| d["args"]["vertexCount"] == 36 && d["args"]["instanceCount"] == 1), "{draws:?}");
    let presents = calls(&lines, "vkQueuePresentKHR");
    assert!(presents.len() >= 5, "{} presents", presents.len());
    for present in presents {
        let info = &present["args"]["pPresentInfo"];
        assert_eq!(info["sType"], "VK_STRUCTURE_TYPE_PRESENT_INFO_KHR");
        assert_eq!(counted(info, "swapchainCount", "pSwapchains"), 1, "{info}");
        assert_eq!(info["pImageIndices"].as_array().map(Vec::len), Some(1), "{info}");
        assert!(present["result"] == "VK_SUCCESS" || present["result"] == "VK_SUBOPTIMAL_KHR", "{present}");
    }
    let surface = calls(&lines, "vkCreateXcbSurfaceKHR");
    assert!(surface.len() == 1 && surface[0]["args"]["pSurface"].is_string(), "{surface:?}");
}

#[test]
fn trace_layer_records_vkcube_through_our_loader() {
    vkcube_traced(Loader::Ours);
}

#[test]
fn trace_layer_records_vkcube_through_the_system_loader() {
    vkcube_traced(Loader::System);
}

/// The child side of the vk-compute tests: vk-compute's code in this process, which finds
/// `libvulkan.so.1` by name.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!();
    assert_eq!(scenario, "compute");
    let options = vk_compute::Options { count: 1024, iterations: 2 };
    if let Err(e) = vk_compute::run(&options) {
        panic!("FAIL: {e}");
    }
}

fn compute_traced(loader: Loader) {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let dir = setup(&format!("trace-compute-{loader:?}"));
    let trace = dir.join("trace.jsonl");
    let mut env = layer_env(&dir, &trace, loader);
    if let Loader::System = loader {
        // cargo's own LD_LIBRARY_PATH reaches target/*/deps, which holds ours.
        env.push(("LD_LIBRARY_PATH", String::new()));
    }
    let (ok, out, err) = common::child("compute", &env);
    assert!(ok, "{out}{err}");
    let expected = match loader {
        Loader::Ours => std::fs::canonicalize(common::shipped_libvulkan()).unwrap(),
        Loader::System => std::fs::canonicalize(SYSTEM_LOADER).unwrap(),
    };
    assert!(out.contains(&format!("\nloader: {}\n", expected.display())), "not {}:\n{out}", expected.display());
    assert!(out.contains("PASS: 1024 values x 2 iteration(s) checked"), "{out}");

    let lines = read_trace(&trace);
    assert_lifecycle(&lines, "");
    let dispatches = calls(&lines, "vkCmdDispatch");
    assert!(!dispatches.is_empty() && dispatches.iter().all(|d| d["args"]["groupCountX"].as_u64() > Some(0)));
    let module = calls(&lines, "vkCreateShaderModule");
    assert_eq!(module.len(), 1);
    // SPIR-V is `void`-like data behind a formula length: its address, not its words.
    assert!(module[0]["args"]["pCreateInfo"]["pCode"].is_string(), "{}", module[0]);
    let pipelines = calls(&lines, "vkCreateComputePipelines");
    let stage = &pipelines[0]["args"]["pCreateInfos"][0]["stage"];
    assert_eq!(stage["stage"], "VK_SHADER_STAGE_COMPUTE_BIT");
    assert_eq!(stage["pName"], "main");
}

#[test]
fn trace_layer_records_vk_compute_through_our_loader() {
    compute_traced(Loader::Ours);
}

#[test]
fn trace_layer_records_vk_compute_through_the_system_loader() {
    compute_traced(Loader::System);
}
