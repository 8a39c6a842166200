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
//!
//! `--target i686-unknown-linux-gnu` builds the i386 packages on an amd64 machine: the libraries
//! by `cargo build --release --target i686-unknown-linux-gnu` (the same release profile), and
//! `debian/rules` run with `dpkg-architecture -a i386`'s variables, so the files go to
//! `/usr/lib/i386-linux-gnu`, the Conflicts name `libvulkan1:i386`, `i686-linux-gnu-strip` strips
//! them (`binutils-i686-linux-gnu`) and `dpkg-shlibdeps` reads `libc6:i386`. What is missing of
//! that is installed first, as `cargo xtask test-i686` does (root or `sudo -n`). Only the
//! `Multi-Arch: same` packages are built there ([`CROSS_PACKAGES`]); their files outside the
//! multiarch directory (documentation, the trace layer's manifest) are byte for byte those of
//! the amd64 packages, so dpkg installs the two side by side.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages, in the order `debian/control` lists them.
pub const PACKAGES: &[&str] = &["libvulkan1-rs", "libvulkan-rs-dev", "vk-loader", "vulkan-layer-rust-trace"];

/// The packages built for another architecture (`--target`): the `Multi-Arch: same` ones, which
/// are installed beside the native ones. `vk-loader` (`Multi-Arch: foreign`) is built for the
/// machine's architecture only: one explain tool serves every architecture's programs.
pub const CROSS_PACKAGES: &[&str] = &["libvulkan1-rs", "libvulkan-rs-dev", "vulkan-layer-rust-trace"];

/// The Rust targets `--target` takes, with their Debian architecture.
const CROSS_TARGETS: &[(&str, &str)] = &[(crate::cross::I686, "i386")];

/// The file name debhelper gives a package.
pub fn deb_name(package: &str, version: &str, arch: &str) -> String {
    format!("{package}_{version}_{arch}.deb")
}

/// What one run builds: for this machine's architecture, or for another Rust target.
struct Build {
    /// The Rust target given to cargo (`--target`); `None` for the machine's own.
    target: Option<&'static str>,
    /// Its Debian architecture (`amd64`, `i386`).
    arch: String,
    packages: &'static [&'static str],
}

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let usage = || format!("usage: cargo xtask package [--out DIR] [--target TRIPLE]; got {}", args.join(" "));
    let mut out = root.join("target/debian");
    let mut target = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or_else(usage)?;
        match flag.as_str() {
            "--out" => out = std::path::absolute(value).map_err(|e| format!("{value}: {e}"))?,
            "--target" => target = Some(value.as_str()),
            _ => return Err(usage()),
        }
    }
    let build = match target {
        None => Build { target: None, arch: command_output("dpkg", &["--print-architecture"])?, packages: PACKAGES },
        Some(triple) => {
            let Some(&(triple, arch)) = CROSS_TARGETS.iter().find(|(t, _)| *t == triple) else {
                let known: Vec<&str> = CROSS_TARGETS.iter().map(|(t, _)| *t).collect();
                return Err(format!("--target {triple}: packages are built for {} (or, without --target, this machine)", known.join(", ")));
            };
            // dh_strip runs i686-linux-gnu-strip; dpkg-shlibdeps reads libc6:i386's symbols.
            crate::cross::install_i686_build(&["binutils-i686-linux-gnu"], &["libc6:i386"])?;
            Build { target: Some(triple), arch: arch.to_string(), packages: CROSS_PACKAGES }
        }
    };
    let vulkan_version = crate::registry_version(&root)?;
    let version = format!("{vulkan_version}+{}", env!("CARGO_PKG_VERSION"));
    let changelog = command_output("dpkg-parsechangelog", &["-l", &root.join("debian/changelog").display().to_string(), "-SVersion"])?;
    if changelog != version {
        return Err(format!(
            "debian/changelog's latest entry is {changelog}, the build is {version}: add an entry (dch -v {version})"
        ));
    }
    let release = build_release(&root, build.target)?;
    let dpkg_env = dpkg_architecture(&build)?;
    let multiarch = dpkg_env
        .iter()
        .find(|(name, _)| name == "DEB_HOST_MULTIARCH")
        .map(|(_, value)| value.clone())
        .ok_or("dpkg-architecture gave no DEB_HOST_MULTIARCH")?;
    let stage = out.join("stage");
    stage_files(&release, &vulkan_version, &multiarch, build.packages.contains(&"vk-loader"), &stage)?;
    write_symbols(&root, &vulkan_version)?;
    debian_rules_binary(&root, &dpkg_env, &stage, &out)?;
    for package in build.packages {
        let deb = out.join(deb_name(package, &version, &build.arch));
        if !deb.is_file() {
            return Err(format!("debian/rules binary left no {}", deb.display()));
        }
        println!("{}", deb.display());
    }
    Ok(())
}

/// The release build of the loader and the trace layer for `target` (the machine's own when
/// `None`); the directory it is in. For another target only the libraries are built (the
/// `vk-loader` tool is not packaged there).
fn build_release(root: &Path, target: Option<&str>) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args(["build", "--release", "-p", "loader", "-p", "vk-trace-layer"]).current_dir(root);
    if let Some(target) = target {
        command.args(["--lib", "--target", target]);
    }
    let status = command.status().map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let target_dir = crate::cross::target_dir(root);
    Ok(match target {
        Some(target) => target_dir.join(target).join("release"),
        None => target_dir.join("release"),
    })
}

/// The `DEB_*` variables of the build's architecture, as `dpkg-architecture -a ARCH` sets them
/// for a cross build (`DEB_HOST_ARCH=i386`, `DEB_HOST_MULTIARCH=i386-linux-gnu`,
/// `DEB_HOST_GNU_TYPE=i686-linux-gnu`: debhelper then strips with `i686-linux-gnu-strip`).
/// Its warning that `gcc` targets another system is left out: nothing here compiles C. A cross
/// build also gets what `dpkg-buildpackage -a` would give it: the `cross` build profile, and
/// `nocheck` (there are no tests in `debian/rules` to run, and dh warns that it could not).
fn dpkg_architecture(build: &Build) -> Result<Vec<(String, String)>, String> {
    let listing = command_output("dpkg-architecture", &["-a", &build.arch, "-l"])?;
    let mut vars: Vec<(String, String)> =
        listing.lines().filter_map(|line| line.split_once('=')).map(|(name, value)| (name.to_string(), value.to_string())).collect();
    if build.target.is_some() {
        vars.push(("DEB_BUILD_PROFILES".into(), "cross".into()));
        vars.push(("DEB_BUILD_OPTIONS".into(), "nocheck".into()));
    }
    Ok(vars)
}

/// `debian/rules binary` for the build's architecture.
fn debian_rules_binary(root: &Path, dpkg_env: &[(String, String)], stage: &Path, out: &Path) -> Result<(), String> {
    let status = Command::new(root.join("debian/rules"))
        .arg("binary")
        .envs(dpkg_env.iter().map(|(name, value)| (name, value)))
        .env("DEB_STAGE", stage)
        .env("DEB_OUT", out)
        // cargo's, for xtask itself; dpkg-shlibdeps would search it.
        .env_remove("LD_LIBRARY_PATH")
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run debian/rules (needs debhelper): {e}"))?;
    status.success().then_some(()).ok_or(format!("debian/rules binary failed ({status}); is debhelper installed?"))
}

/// Lays the release build in `release` out under `stage` as it is installed (`debian/*.install`
/// split it into the packages), the libraries in the multiarch directory `multiarch`; the
/// `vk-loader` tool too when `with_tool`.
fn stage_files(release: &Path, vulkan_version: &str, multiarch: &str, with_tool: bool, stage: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(stage);
    let lib_dir = stage.join("usr/lib").join(multiarch);
    let pkgconfig = lib_dir.join("pkgconfig");
    std::fs::create_dir_all(&pkgconfig).map_err(|e| format!("{}: {e}", pkgconfig.display()))?;
    let real_name = format!("libvulkan.so.{vulkan_version}");
    copy(&release.join("libvulkan.so"), &lib_dir.join(&real_name))?;
    crate::install::link(&real_name, &lib_dir.join("libvulkan.so.1"))?;
    crate::install::link("libvulkan.so.1", &lib_dir.join("libvulkan.so"))?;
    let pc = crate::install::pkg_config("/usr", &format!("/usr/lib/{multiarch}"), vulkan_version);
    std::fs::write(pkgconfig.join("vulkan.pc"), pc).map_err(|e| format!("vulkan.pc: {e}"))?;
    copy(&release.join(TRACE_LAYER), &lib_dir.join(TRACE_LAYER))?;
    // Named bare: the dynamic linker finds it in the multiarch directory, as Debian's layers are;
    // so the file is the same for every architecture, as Multi-Arch: same needs.
    crate::install::write_trace_layer_manifest(&stage.join("usr/share/vulkan/explicit_layer.d"), Path::new(TRACE_LAYER))?;
    if with_tool {
        let bin_dir = stage.join("usr/bin");
        std::fs::create_dir_all(&bin_dir).map_err(|e| format!("{}: {e}", bin_dir.display()))?;
        copy(&release.join("vk-loader"), &bin_dir.join("vk-loader"))?;
    }
    Ok(())
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
