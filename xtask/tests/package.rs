//! `cargo xtask package` builds the Debian packages of the release build: the loader
//! (`Multi-Arch: same`, replacing only the `libvulkan1` of its own architecture), its development
//! files, `vk-loader` and the trace layer, each in a package of its own. Unpacked into a scratch
//! root, the library serves `vulkaninfo` on Mesa's lavapipe (packages mesa-vulkan-drivers and
//! vulkan-tools; debhelper builds the packages), and with its trace layer's manifest the layer
//! traces `vulkaninfo`'s calls. (`cargo xtask package-test` installs them on the system.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn lavapipe() -> String {
    format!("/usr/share/vulkan/icd.d/lvp_icd.{}.json", std::env::consts::ARCH)
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
fn the_packages_replace_libvulkan1_of_their_architecture_and_the_library_serves_vulkaninfo() {
    let lavapipe = lavapipe();
    assert!(Path::new(&lavapipe).exists(), "{lavapipe} missing: install mesa-vulkan-drivers");
    let dir = scratch("package");
    run(Command::new(env!("CARGO_BIN_EXE_xtask")).arg("package").arg("--out").arg(&dir));
    let arch = run(Command::new("dpkg").arg("--print-architecture")).trim().to_string();
    let deb = |package: &str| {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{package}_")))
            .unwrap_or_else(|| panic!("no {package} package in {}", dir.display()))
    };
    let loader = deb("libvulkan1-rs");
    let name = loader.file_name().unwrap().to_string_lossy().into_owned();
    // libvulkan1-rs_<vulkan version>+<crate version>_<arch>.deb
    let version = name.split('_').nth(1).unwrap().to_string();
    let vulkan_version = version.split('+').next().unwrap();

    let fields = |deb: &Path| run(Command::new("dpkg-deb").arg("-f").arg(deb));
    let expect = |deb: &Path, expected: &[String]| {
        let fields = fields(deb);
        for expected in expected {
            assert!(fields.lines().any(|l| l.starts_with(expected.as_str())), "no {expected:?} in the control fields:\n{fields}");
        }
    };
    // Architecture-qualified: unqualified, they would take libvulkan1:i386 away too.
    expect(&loader, &[
        "Multi-Arch: same".into(),
        format!("Provides: libvulkan1 (= {version})"),
        format!("Conflicts: libvulkan1:{arch}"),
        format!("Replaces: libvulkan1:{arch}"),
        "Depends: libc6 (>= 2.".into(),
    ]);
    expect(&deb("libvulkan-rs-dev"), &[
        "Multi-Arch: same".into(),
        format!("Depends: libvulkan1-rs (= {version})"),
        format!("Conflicts: libvulkan-dev:{arch}"),
    ]);
    expect(&deb("vk-loader"), &["Multi-Arch: foreign".into()]);
    expect(&deb("vulkan-layer-rust-trace"), &["Multi-Arch: same".into()]);
    // As Debian's libvulkan1: shlibs, symbols, the ldconfig trigger.
    let control = dir.join("control");
    run(Command::new("dpkg-deb").arg("-e").arg(&loader).arg(&control));
    let symbols = std::fs::read_to_string(control.join("symbols")).unwrap();
    assert!(symbols.starts_with("libvulkan.so.1 libvulkan1-rs #MINVER#\n"), "{symbols}");
    assert!(symbols.contains(&format!(" vkCreateInstance@Base {vulkan_version}\n")), "{symbols}");
    assert!(std::fs::read_to_string(control.join("shlibs")).unwrap().starts_with("libvulkan 1 libvulkan1-rs"));
    assert!(std::fs::read_to_string(control.join("triggers")).unwrap().contains("activate-noawait ldconfig"));

    let root = dir.join("root");
    for package in ["libvulkan1-rs", "libvulkan-rs-dev", "vk-loader", "vulkan-layer-rust-trace"] {
        run(Command::new("dpkg").arg("-x").arg(deb(package)).arg(&root));
    }
    let multiarch = run(Command::new("dpkg-architecture").arg("-qDEB_HOST_MULTIARCH")).trim().to_string();
    let lib_dir = root.join("usr/lib").join(multiarch);
    assert_eq!(std::fs::read_link(lib_dir.join("libvulkan.so.1")).unwrap(), Path::new(&format!("libvulkan.so.{vulkan_version}")));
    assert_eq!(std::fs::read_link(lib_dir.join("libvulkan.so")).unwrap(), Path::new("libvulkan.so.1"));
    let pc = std::fs::read_to_string(lib_dir.join("pkgconfig/vulkan.pc")).unwrap();
    assert!(pc.contains(&format!("Version: {vulkan_version}")), "{pc}");

    // The system loader reports its own, older version; ours the registry's.
    let summary = run(Command::new("vulkaninfo")
        .arg("--summary")
        .env("LD_LIBRARY_PATH", &lib_dir)
        .env("VK_DRIVER_FILES", &lavapipe)
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
        .env("VK_DRIVER_FILES", &lavapipe)
        .env_remove("VK_ICD_FILENAMES")
        .env("VK_LAYER_PATH", &layers)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_RUST_trace")
        .env("VK_LAYER_RUST_TRACE_FILE", &trace));
    let trace = std::fs::read_to_string(&trace).unwrap();
    assert!(trace.lines().any(|l| l.contains(r#""command":"vkEnumeratePhysicalDevices""#)), "{trace}");

    // The explain tool comes with it.
    let explained = run(Command::new(root.join("usr/bin/vk-loader")).args(["explain", "--no-devices"]).env("VK_DRIVER_FILES", &lavapipe));
    assert!(explained.contains(&lavapipe), "{explained}");
}
