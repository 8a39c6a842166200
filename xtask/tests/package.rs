//! `cargo xtask package` builds a Debian package that installs our loader in place of the
//! system's `libvulkan1`: unpacked into a scratch root, its library serves `vulkaninfo` on Mesa's
//! lavapipe (packages mesa-vulkan-drivers and vulkan-tools; dpkg-deb and strip come with Debian's
//! dpkg and binutils), and with its trace layer's manifest the layer traces `vulkaninfo`'s calls.

use std::path::{Path, PathBuf};
use std::process::Command;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// The debug build of a library cargo made for these tests (xtask dev-depends on the loader and
/// depends on the trace layer).
fn built(file: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join(file), deps.parent().unwrap().join(file)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{file} built beside the test"))
}

/// `vk-loader` of the same build (built here when this package's tests run alone).
fn our_tool() -> PathBuf {
    let profile_dir = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().to_path_buf();
    let tool = profile_dir.join("vk-loader");
    if !tool.exists() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        run(Command::new(cargo).args(["build", "-p", "loader", "--bin", "vk-loader"]));
    }
    tool
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{command:?} failed:\n{text}");
    text
}

#[test]
fn the_package_replaces_libvulkan1_and_its_library_serves_vulkaninfo() {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let dir = scratch("package");
    run(Command::new(env!("CARGO_BIN_EXE_xtask")).arg("package")
        .arg("--library")
        .arg(built("libvulkan.so"))
        .arg("--trace-layer")
        .arg(built("libVkLayer_rust_trace.so"))
        .arg("--tool")
        .arg(our_tool())
        .arg("--out")
        .arg(&dir));
    let deb = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|e| e == "deb")).unwrap();
    let name = deb.file_name().unwrap().to_string_lossy().into_owned();
    // libvulkan1-rs_<vulkan version>+<crate version>_<arch>.deb
    let version = name.split('_').nth(1).unwrap();
    let vulkan_version = version.split('+').next().unwrap();

    let fields = run(Command::new("dpkg-deb").arg("-f").arg(&deb).args(["Package", "Provides", "Conflicts", "Replaces", "Depends"]));
    for expected in [
        "Package: libvulkan1-rs".to_string(),
        format!("Provides: libvulkan1 (= {version})"),
        "Conflicts: libvulkan1".to_string(),
        "Replaces: libvulkan1, libvulkan-dev".to_string(),
        "Depends: libc6 (>= 2.".to_string(),
    ] {
        assert!(fields.contains(&expected), "no {expected:?} in the control fields:\n{fields}");
    }

    let root = dir.join("root");
    run(Command::new("dpkg").arg("-x").arg(&deb).arg(&root));
    let lib_dir = root.join(format!("usr/lib/{}-linux-gnu", std::env::consts::ARCH));
    assert_eq!(std::fs::read_link(lib_dir.join("libvulkan.so.1")).unwrap(), Path::new(&format!("libvulkan.so.{vulkan_version}")));
    assert_eq!(std::fs::read_link(lib_dir.join("libvulkan.so")).unwrap(), Path::new("libvulkan.so.1"));
    let pc = std::fs::read_to_string(lib_dir.join("pkgconfig/vulkan.pc")).unwrap();
    assert!(pc.contains(&format!("Version: {vulkan_version}")), "{pc}");

    // The system loader reports its own, older version; ours the registry's.
    let summary = run(Command::new("vulkaninfo")
        .arg("--summary")
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("VK_DRIVER_FILES", LAVAPIPE)
        .env_remove("VK_ICD_FILENAMES"));
    assert!(summary.contains(&format!("Vulkan Instance Version: {vulkan_version}")), "not our loader:\n{summary}");
    assert!(summary.contains("llvmpipe"), "no lavapipe device:\n{summary}");

    // The trace layer, found by its packaged manifest (its library named bare: here through
    // LD_LIBRARY_PATH, installed through the multiarch directory), traces vulkaninfo's calls.
    let layers = root.join("usr/share/vulkan/explicit_layer.d");
    assert!(lib_dir.join("libVkLayer_rust_trace.so").is_file());
    let trace = dir.join("trace.jsonl");
    run(Command::new("vulkaninfo")
        .arg("--summary")
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("VK_DRIVER_FILES", LAVAPIPE)
        .env_remove("VK_ICD_FILENAMES")
        .env("VK_LAYER_PATH", &layers)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_RUST_trace")
        .env("VK_LAYER_RUST_TRACE_FILE", &trace));
    let trace = std::fs::read_to_string(&trace).unwrap();
    assert!(trace.lines().any(|l| l.contains(r#""command":"vkEnumeratePhysicalDevices""#)), "{trace}");

    // The explain tool comes with it.
    let explained = run(Command::new(root.join("usr/bin/vk-loader")).args(["explain", "--no-devices"]).env("VK_DRIVER_FILES", LAVAPIPE));
    assert!(explained.contains("lvp_icd.x86_64.json"), "{explained}");
}
