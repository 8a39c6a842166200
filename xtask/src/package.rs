//! `cargo xtask package [--out DIR]`: the Debian packages of our loader, built from the release
//! builds by debhelper (`debian/`) into DIR (default `target/debian`):
//!
//! - `libvulkan1-rs`: `libvulkan.so.<vulkan version>` and its `libvulkan.so.1` link in the
//!   multiarch library directory. `Multi-Arch: same`, as Debian's `libvulkan1`; it Provides
//!   `libvulkan1` and Conflicts with and Replaces `libvulkan1:<its architecture>` only, so
//!   `apt install ./<file>.deb` swaps the loader of that architecture for ours and leaves the
//!   others (`libvulkan1:i386`) installed; `apt install libvulkan1` swaps it back.
//! - `libvulkan-rs-dev`: the `libvulkan.so` link and `pkgconfig/vulkan.pc` (in place of those of
//!   `libvulkan-dev`, which depends on the exact version of Debian's `libvulkan1`).
//! - `vk-loader`: the explain tool, `/usr/bin/vk-loader`, its manual page (`debian/vk-loader.1`,
//!   written by `cargo xtask regen`) and the user guide (`docs/user-guide/*.md`) in
//!   `/usr/share/doc/vk-loader/`, where `vk-loader --help` points.
//! - `vulkan-layer-rust-trace`: the trace layer, `libVkLayer_rust_trace.so` in the multiarch
//!   directory and its manifest in `/usr/share/vulkan/explicit_layer.d`.
//!
//! This file builds and stages the files (`DIR/stage`), checks that `debian/changelog` names
//! the version they are (`<vulkan version>+<crate version>`), and runs `debian/rules binary`,
//! which strips them, writes the shlibs and symbols files and the ldconfig trigger, computes
//! the dependencies and builds the packages.

use std::path::Path;
use std::process::Command;

/// The packages, in the order `debian/control` lists them.
pub const PACKAGES: &[&str] = &["libvulkan1-rs", "libvulkan-rs-dev", "vk-loader", "vulkan-layer-rust-trace"];

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let out = match args {
        [] => root.join("target/debian"),
        [flag, dir] if flag == "--out" => std::path::absolute(dir).map_err(|e| format!("{dir}: {e}"))?,
        _ => return Err(format!("usage: cargo xtask package [--out DIR]; got {}", args.join(" "))),
    };
    let vulkan_version = crate::registry_version(&root)?;
    let version = format!("{vulkan_version}+{}", env!("CARGO_PKG_VERSION"));
    let changelog = command_output("dpkg-parsechangelog", &["-l", &root.join("debian/changelog").display().to_string(), "-SVersion"])?;
    if changelog != version {
        return Err(format!(
            "debian/changelog's latest entry is {changelog}, the build is {version}: add an entry (dch -v {version})"
        ));
    }
    build_release(&root)?;
    let stage = out.join("stage");
    stage_files(&root, &vulkan_version, &stage)?;
    write_symbols(&root, &vulkan_version)?;
    let status = Command::new(root.join("debian/rules"))
        .arg("binary")
        .env("DEB_STAGE", &stage)
        .env("DEB_OUT", &out)
        // cargo's, for xtask itself; dpkg-shlibdeps would search it.
        .env_remove("LD_LIBRARY_PATH")
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run debian/rules (needs debhelper): {e}"))?;
    if !status.success() {
        return Err(format!("debian/rules binary failed ({status}); is debhelper installed?"));
    }
    let arch = command_output("dpkg", &["--print-architecture"])?;
    for package in PACKAGES {
        println!("{}", out.join(format!("{package}_{version}_{arch}.deb")).display());
    }
    Ok(())
}

fn build_release(root: &Path) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "loader", "-p", "vk-trace-layer"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    status.success().then_some(()).ok_or(format!("cargo build failed ({status})"))
}

/// Lays the release build out under `stage` as it is installed (`debian/*.install` split it
/// into the packages).
fn stage_files(root: &Path, vulkan_version: &str, stage: &Path) -> Result<(), String> {
    let release = root.join("target/release");
    let multiarch = command_output("dpkg-architecture", &["-qDEB_HOST_MULTIARCH"])?;
    let _ = std::fs::remove_dir_all(stage);
    let lib_dir = stage.join("usr/lib").join(&multiarch);
    let bin_dir = stage.join("usr/bin");
    for dir in [lib_dir.join("pkgconfig"), bin_dir.clone()] {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let real_name = format!("libvulkan.so.{vulkan_version}");
    copy(&release.join("libvulkan.so"), &lib_dir.join(&real_name))?;
    crate::install::link(&real_name, &lib_dir.join("libvulkan.so.1"))?;
    crate::install::link("libvulkan.so.1", &lib_dir.join("libvulkan.so"))?;
    let pc = crate::install::pkg_config("/usr", &format!("/usr/lib/{multiarch}"), vulkan_version);
    std::fs::write(lib_dir.join("pkgconfig/vulkan.pc"), pc).map_err(|e| format!("vulkan.pc: {e}"))?;
    copy(&release.join(TRACE_LAYER), &lib_dir.join(TRACE_LAYER))?;
    // Named bare: the dynamic linker finds it in the multiarch directory, as Debian's layers are.
    crate::install::write_trace_layer_manifest(&stage.join("usr/share/vulkan/explicit_layer.d"), Path::new(TRACE_LAYER))?;
    copy(&release.join("vk-loader"), &bin_dir.join("vk-loader"))
}

/// `debian/libvulkan1-rs.symbols`, from which dh_makeshlibs writes the package's symbols file:
/// every exported command (the golden list), each first in this Vulkan version's package, so a
/// program built against ours depends on `libvulkan1-rs (>= <vulkan version>)`.
fn write_symbols(root: &Path, vulkan_version: &str) -> Result<(), String> {
    let exports = root.join("generator/tests/golden/exports.txt");
    let exports = std::fs::read_to_string(&exports).map_err(|e| format!("{}: {e}", exports.display()))?;
    let mut symbols = "libvulkan.so.1 libvulkan1-rs #MINVER#\n* Build-Depends-Package: libvulkan-rs-dev\n".to_string();
    for name in exports.lines() {
        symbols.push_str(&format!(" {name}@Base {vulkan_version}\n"));
    }
    let path = root.join("debian/libvulkan1-rs.symbols");
    std::fs::write(&path, symbols).map_err(|e| format!("{}: {e}", path.display()))
}

/// The trace layer's library file.
const TRACE_LAYER: &str = VkLayer_rust_trace::LIBRARY_FILE;

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))
}

fn command_output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{program} {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
