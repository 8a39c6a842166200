//! `cargo xtask install --prefix P`: builds the loader and the trace layer in release and
//! installs `P/lib/libvulkan.so.1.<version>`, the `libvulkan.so.1` and `libvulkan.so` links,
//! `P/lib/pkgconfig/vulkan.pc`, and the trace layer: `P/lib/libVkLayer_rust_trace.so` with its
//! manifest `P/share/vulkan/explicit_layer.d/VkLayer_rust_trace.json`, and the explain tool
//! `P/bin/vk-loader`.

use std::path::{Path, PathBuf};
use std::process::Command;

// The crate is named as its library, `VkLayer_rust_trace`.
use VkLayer_rust_trace as trace_layer;

pub fn main(args: &[String]) -> Result<(), String> {
    let prefix = match args {
        [flag, dir] if flag == "--prefix" => PathBuf::from(dir),
        [arg] if arg.starts_with("--prefix=") => PathBuf::from(&arg["--prefix=".len()..]),
        _ => return Err("usage: cargo xtask install --prefix DIR".into()),
    };
    let prefix = std::path::absolute(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
    let root = crate::repo_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-p", "loader", "-p", "vk-trace-layer"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let version = crate::registry_version(&root)?;
    let lib_dir = prefix.join("lib");
    let pkgconfig = lib_dir.join("pkgconfig");
    std::fs::create_dir_all(&pkgconfig).map_err(|e| format!("{}: {e}", pkgconfig.display()))?;
    let real_name = format!("libvulkan.so.{version}");
    let target = lib_dir.join(&real_name);
    std::fs::copy(root.join("target/release/libvulkan.so"), &target).map_err(|e| format!("{}: {e}", target.display()))?;
    link(&real_name, &lib_dir.join("libvulkan.so.1"))?;
    link("libvulkan.so.1", &lib_dir.join("libvulkan.so"))?;
    let pc = pkg_config(&prefix.display().to_string(), "${prefix}/lib", &version);
    std::fs::write(pkgconfig.join("vulkan.pc"), pc).map_err(|e| format!("vulkan.pc: {e}"))?;
    println!("installed {} (+ libvulkan.so.1, libvulkan.so, pkgconfig/vulkan.pc)", target.display());
    let layer = lib_dir.join(trace_layer::LIBRARY_FILE);
    std::fs::copy(root.join("target/release").join(trace_layer::LIBRARY_FILE), &layer)
        .map_err(|e| format!("{}: {e}", layer.display()))?;
    // The manifest names the library by its full path: P/lib need not be searched by dlopen.
    let manifest = write_trace_layer_manifest(&prefix.join("share/vulkan/explicit_layer.d"), &layer)?;
    println!("installed {} (+ {})", layer.display(), manifest.display());
    let bin_dir = prefix.join("bin");
    std::fs::create_dir_all(&bin_dir).map_err(|e| format!("{}: {e}", bin_dir.display()))?;
    let tool = bin_dir.join("vk-loader");
    std::fs::copy(root.join("target/release/vk-loader"), &tool).map_err(|e| format!("{}: {e}", tool.display()))?;
    println!("installed {}", tool.display());
    Ok(())
}

/// Writes the trace layer's manifest into `dir`, naming its library as `library_path`.
pub(crate) fn write_trace_layer_manifest(dir: &Path, library_path: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(TRACE_LAYER_MANIFEST);
    trace_layer::manifest(library_path).write(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The trace layer's manifest file name.
pub(crate) const TRACE_LAYER_MANIFEST: &str = "VkLayer_rust_trace.json";

/// `vulkan.pc` for a library installed in `libdir` under `prefix`.
pub(crate) fn pkg_config(prefix: &str, libdir: &str, version: &str) -> String {
    format!(
        "prefix={prefix}\nlibdir={libdir}\nincludedir=${{prefix}}/include\n\nName: Vulkan-Loader\n\
         Description: Vulkan Loader (Rust)\nVersion: {version}\nLibs: -L${{libdir}} -lvulkan\nCflags: -I${{includedir}}\n"
    )
}

/// Replaces `link` with a symlink to `target`.
pub(crate) fn link(target: &str, link: &Path) -> Result<(), String> {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).map_err(|e| format!("{}: {e}", link.display()))
}
