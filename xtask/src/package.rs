//! `cargo xtask package [--library PATH] [--trace-layer PATH] [--tool PATH] [--out DIR]`: a Debian
//! package of our loader,
//! `DIR/libvulkan1-rs_<version>_<arch>.deb` (default DIR: `target/debian`), built with `dpkg-deb`.
//! It installs `libvulkan.so.<vulkan version>`, the `libvulkan.so.1` and `libvulkan.so` links and
//! `pkgconfig/vulkan.pc` in the multiarch library directory, the trace layer
//! (`libVkLayer_rust_trace.so` beside them, its manifest in `/usr/share/vulkan/explicit_layer.d`),
//! the explain tool `/usr/bin/vk-loader`, and Provides / Replaces / Conflicts
//! `libvulkan1`, so `apt install ./<file>.deb` swaps the system loader for ours and
//! `apt install libvulkan1` swaps it back. It Replaces `libvulkan-dev` too, whose `libvulkan.so`
//! link and `vulkan.pc` it overwrites.
//!
//! `--library PATH`, `--trace-layer PATH` and `--tool PATH` package those files instead of building
//! the release ones (the tests package the debug builds they already have).

use std::path::{Path, PathBuf};
use std::process::Command;

const PACKAGE: &str = "libvulkan1-rs";

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let (mut library, mut trace_layer, mut tool, mut out) = (None, None, None, root.join("target/debian"));
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().map(PathBuf::from).ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--library" => library = Some(value()?),
            "--trace-layer" => trace_layer = Some(value()?),
            "--tool" => tool = Some(value()?),
            "--out" => out = value()?,
            other => {
                return Err(format!("usage: cargo xtask package [--library PATH] [--trace-layer PATH] [--tool PATH] [--out DIR]; got {other}"))
            }
        }
    }
    if library.is_none() || trace_layer.is_none() || tool.is_none() {
        build_release(&root)?;
    }
    let built = Libraries {
        loader: library.unwrap_or_else(|| root.join("target/release/libvulkan.so")),
        trace_layer: trace_layer.unwrap_or_else(|| root.join("target/release").join(TRACE_LAYER)),
        tool: tool.unwrap_or_else(|| root.join("target/release/vk-loader")),
    };
    let deb = build_package(&built, &crate::registry_version(&root)?, &out)?;
    println!("{}", deb.display());
    Ok(())
}

/// The trace layer's library file.
const TRACE_LAYER: &str = VkLayer_rust_trace::LIBRARY_FILE;

/// The built files the package installs.
struct Libraries {
    loader: PathBuf,
    trace_layer: PathBuf,
    /// `vk-loader`, the explain tool.
    tool: PathBuf,
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

/// `library` (or program) stripped into `installed`, as Debian ships them (the symbol table is
/// for debuggers, not for loading).
fn strip(library: &Path, installed: &Path) -> Result<(), String> {
    let strip = Command::new("strip").args(["--strip-unneeded", "-o"]).arg(installed).arg(library).status();
    if !strip.is_ok_and(|s| s.success()) {
        return Err(format!("cannot strip {} into {} (binutils' strip)", library.display(), installed.display()));
    }
    Ok(())
}

/// Stages the package's files under `out/stage` and builds the `.deb` from them.
fn build_package(built: &Libraries, vulkan_version: &str, out: &Path) -> Result<PathBuf, String> {
    let arch = command_output("dpkg", &["--print-architecture"])?;
    let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
    let version = format!("{vulkan_version}+{}", env!("CARGO_PKG_VERSION"));
    let stage = out.join("stage");
    let _ = std::fs::remove_dir_all(&stage);
    let lib_dir = stage.join("usr/lib").join(&multiarch);
    let doc_dir = stage.join(format!("usr/share/doc/{PACKAGE}"));
    for dir in [lib_dir.join("pkgconfig"), doc_dir.clone(), stage.join("DEBIAN")] {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }

    let real_name = format!("libvulkan.so.{vulkan_version}");
    let installed = lib_dir.join(&real_name);
    strip(&built.loader, &installed)?;
    strip(&built.trace_layer, &lib_dir.join(TRACE_LAYER))?;
    // Named bare: the dynamic linker finds it in the multiarch directory, as Debian's layers are.
    crate::install::write_trace_layer_manifest(&stage.join("usr/share/vulkan/explicit_layer.d"), Path::new(TRACE_LAYER))?;
    crate::install::link(&real_name, &lib_dir.join("libvulkan.so.1"))?;
    crate::install::link("libvulkan.so.1", &lib_dir.join("libvulkan.so"))?;
    let bin_dir = stage.join("usr/bin");
    std::fs::create_dir_all(&bin_dir).map_err(|e| format!("{}: {e}", bin_dir.display()))?;
    strip(&built.tool, &bin_dir.join("vk-loader"))?;
    write(&lib_dir.join("pkgconfig/vulkan.pc"), &crate::install::pkg_config("/usr", &format!("/usr/lib/{multiarch}"), vulkan_version))?;
    write(&doc_dir.join("copyright"), COPYRIGHT)?;
    let control = format!(
        "Package: {PACKAGE}\nVersion: {version}\nArchitecture: {arch}\nSection: libs\nPriority: optional\n\
         Maintainer: The Rust Vulkan loader developers <vulkan-loader-rs@invalid>\n\
         Depends: libc6 (>= {glibc})\nProvides: libvulkan1 (= {version})\nConflicts: libvulkan1\n\
         Replaces: libvulkan1, libvulkan-dev\n\
         Description: Vulkan loader written in Rust (drop-in libvulkan.so.1)\n \
         Finds Vulkan drivers and layers through their JSON manifests, builds the instance\n \
         and device call chains and dispatches every Vulkan call, as the Khronos loader does.\n \
         With the layer VK_LAYER_RUST_trace, which writes every call as a JSON line.\n",
        glibc = required_glibc(&installed)?,
    );
    write(&stage.join("DEBIAN/control"), &control)?;

    let deb = out.join(format!("{PACKAGE}_{version}_{arch}.deb"));
    let status = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&stage)
        .arg(&deb)
        .status()
        .map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
    status.success().then_some(deb).ok_or(format!("dpkg-deb failed ({status})"))
}

const COPYRIGHT: &str = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
Upstream-Name: vulkan-loader-rs\n\nFiles: *\nLicense: Apache-2.0 OR MIT\n";

/// The newest glibc symbol version the library needs (`GLIBC_2.34` -> `2.34`), from its dynamic
/// symbol table: the package's `libc6` dependency.
fn required_glibc(library: &Path) -> Result<String, String> {
    let symbols = command_output("objdump", &["-T", &library.display().to_string()])?;
    let newest = symbols
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|word| word.strip_prefix("GLIBC_"))
        .filter_map(|v| Some((v.split('.').map(|n| n.parse::<u32>().ok()).collect::<Option<Vec<u32>>>()?, v)))
        .max();
    newest.map(|(_, v)| v.to_string()).ok_or(format!("no GLIBC_ symbol version in {}", library.display()))
}

fn command_output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{program} {} failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}
