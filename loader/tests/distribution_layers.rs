//! The layers Debian packages (every package that installs into /usr/share/vulkan/*_layer.d, as
//! `apt-file` lists them; Mesa's device-select and overlay layers and the validation layer are in
//! real_layers.rs) activate through our library exactly as through the system loader:
//! `vulkaninfo --summary` on lavapipe, run through each loader, ends the same way, and the layer's
//! own output (for one that prints nothing, each loader's log) shows it ran. Their manifests are
//! as distributions write them: `/usr/$LIB/...` paths (MangoHud, MangoApp, vkBasalt), bare file
//! names for the dynamic linker's search (gfxreconstruct, PrimusVK, Mesa's INTEL nullhw), an
//! absolute path (RenderDoc).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// One packaged layer: its manifest and package, how a user turns it on, and what the layer itself
/// prints when it runs (to stdout or stderr, or to its own log file).
struct PackagedLayer {
    manifest: &'static str,
    package: &'static str,
    enable: (&'static str, &'static str),
    evidence: &'static str,
    log: LayerLog,
}

impl PackagedLayer {
    /// What shows the layer ran through our library: the layer's own `evidence`, or for a layer
    /// that prints nothing, our loader's log line (see [`LayerLog::LoaderLog`]).
    fn our_evidence(&self) -> &'static str {
        match self.log {
            LayerLog::LoaderLog { ours } => ours,
            _ => self.evidence,
        }
    }
}

/// Where a layer writes what shows it ran.
#[derive(PartialEq, Clone, Copy)]
enum LayerLog {
    Output,
    /// RenderDoc writes its log to `RENDERDOC_DEBUG_LOG_FILE` and deletes it when its library
    /// unloads (no capture made): `c/keep_file.c`, preloaded, keeps it for the test to read.
    RenderDocFile,
    /// A layer that prints nothing on lavapipe: each loader's own log (`VK_LOADER_DEBUG`) shows
    /// the layer in the chain; `evidence` is the system loader's line, `ours` ours.
    LoaderLog { ours: &'static str },
}

/// What one vulkaninfo run showed.
struct Run {
    status: Option<i32>,
    output: String,
    devices: usize,
}

/// `vulkaninfo --summary` through our library (`ours`) or the system's, in `dir` (gfxreconstruct
/// writes its capture file to the working directory).
fn vulkaninfo(layer: &PackagedLayer, ours: bool, dir: &Path) -> Run {
    let which = if ours { "ours" } else { "system" };
    let work = dir.join(which);
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = Command::new("vulkaninfo");
    cmd.arg("--summary").current_dir(&work);
    for (k, _) in std::env::vars() {
        if k.starts_with("VK_") || k.starts_with("MESA_") || k.starts_with("ENABLE_") || k.starts_with("MANGO") {
            cmd.env_remove(k);
        }
    }
    cmd.env("VK_DRIVER_FILES", LAVAPIPE).env(layer.enable.0, layer.enable.1).env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    if ours {
        let lib_dir = work.join("lib");
        std::fs::create_dir_all(&lib_dir).unwrap();
        for name in ["libvulkan.so.1", "libvulkan.so"] {
            let _ = std::fs::remove_file(lib_dir.join(name));
            std::os::unix::fs::symlink(common::shipped_libvulkan(), lib_dir.join(name)).unwrap();
        }
        cmd.env("LD_LIBRARY_PATH", &lib_dir);
    } else {
        cmd.env_remove("LD_LIBRARY_PATH");
    }
    if let LayerLog::LoaderLog { .. } = layer.log {
        cmd.env("VK_LOADER_DEBUG", "layer,info");
    }
    let log_file = work.join("layer.log");
    if layer.log == LayerLog::RenderDocFile {
        let _ = std::fs::remove_file(&log_file);
        cmd.env("RENDERDOC_DEBUG_LOG_FILE", &log_file).env("KEEP_FILE", &log_file).env("LD_PRELOAD", common::preload_library(&work, "keep_file"));
    }
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut output = stdout.clone() + &String::from_utf8_lossy(&out.stderr);
    output += &std::fs::read_to_string(&log_file).unwrap_or_default();
    let devices = stdout.lines().filter(|l| l.trim_start().starts_with("deviceName")).count();
    Run { status: out.status.code(), output, devices }
}

fn assert_activates_as_through_the_system_loader(name: &str, layer: &PackagedLayer) {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    assert!(Path::new(layer.manifest).exists(), "{} missing: install {}", layer.manifest, layer.package);
    let dir: PathBuf = common::scratch(&format!("distribution-layer-{name}"));
    let (system, ours) = (vulkaninfo(layer, false, &dir), vulkaninfo(layer, true, &dir));
    assert!(system.output.contains(layer.evidence), "the system loader did not run {name}:\n{}", system.output);
    assert!(ours.output.contains(layer.our_evidence()), "{name} did not run through our library:\n{}", ours.output);
    assert_eq!(ours.status, system.status, "exit status, ours then the system's:\n{}\n---\n{}", ours.output, system.output);
    assert_eq!(ours.devices, system.devices, "devices listed, ours then the system's:\n{}\n---\n{}", ours.output, system.output);
}

#[test]
fn mangohud_from_a_lib_token_path() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/implicit_layer.d/MangoHud.json",
        package: "mangohud",
        enable: ("MANGOHUD", "1"),
        evidence: "[MANGOHUD]",
        log: LayerLog::Output,
    };
    assert_activates_as_through_the_system_loader("mangohud", &layer);
}

#[test]
fn mangoapp_from_a_lib_token_path() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/implicit_layer.d/libMangoApp.json",
        package: "mangoapp",
        enable: ("MANGOAPP", "1"),
        evidence: "MANGOAPP LAYER: Init",
        log: LayerLog::Output,
    };
    assert_activates_as_through_the_system_loader("mangoapp", &layer);
}

#[test]
fn vkbasalt_from_a_lib_token_path() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/implicit_layer.d/vkBasalt.json",
        package: "vkbasalt",
        enable: ("ENABLE_VKBASALT", "1"),
        evidence: "vkBasalt",
        log: LayerLog::Output,
    };
    assert_activates_as_through_the_system_loader("vkbasalt", &layer);
}

#[test]
fn gfxreconstruct_from_a_bare_library_name() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/explicit_layer.d/VkLayer_gfxreconstruct.json",
        package: "gfxreconstruct",
        enable: ("VK_INSTANCE_LAYERS", "VK_LAYER_LUNARG_gfxreconstruct"),
        evidence: "[gfxrecon] INFO - Recording graphics API capture to",
        log: LayerLog::Output,
    };
    assert_activates_as_through_the_system_loader("gfxreconstruct", &layer);
}

/// PrimusVK looks for two GPUs (a display and a render one) and fails instance creation with one:
/// the same failure through either loader.
#[test]
fn primus_vk_from_a_bare_library_name() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/implicit_layer.d/primus_vk.json",
        package: "libprimus-vk1",
        enable: ("ENABLE_PRIMUS_LAYER", "1"),
        evidence: "PrimusVK: Searching for display GPU",
        log: LayerLog::Output,
    };
    assert_activates_as_through_the_system_loader("primus-vk", &layer);
}

/// RenderDoc wraps the VkInstance it creates.
#[test]
fn renderdoc_capture_layer_from_an_absolute_path() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/implicit_layer.d/renderdoc_capture.json",
        package: "librenderdoc",
        enable: ("ENABLE_VULKAN_RENDERDOC_CAPTURE", "1"),
        evidence: "Initialised capture layer in Vulkan instance",
        log: LayerLog::RenderDocFile,
    };
    assert_activates_as_through_the_system_loader("renderdoc", &layer);
}

/// Mesa's null-hardware layer (for Intel GPUs) prints nothing on lavapipe: the loaders' logs show
/// it inserted into the device chain (vulkaninfo creates a device).
#[test]
fn intel_nullhw_from_a_bare_library_name() {
    let layer = PackagedLayer {
        manifest: "/usr/share/vulkan/explicit_layer.d/VkLayer_INTEL_nullhw.json",
        package: "mesa-vulkan-drivers",
        enable: ("VK_INSTANCE_LAYERS", "VK_LAYER_INTEL_nullhw"),
        evidence: "Inserted device layer \"VK_LAYER_INTEL_nullhw\"",
        log: LayerLog::LoaderLog { ours: "device layer chain, application first: VK_LAYER_INTEL_nullhw -> driver" },
    };
    assert_activates_as_through_the_system_loader("intel-nullhw", &layer);
}
