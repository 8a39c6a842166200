//! `cargo xtask install --prefix P`: builds the loader in release and installs
//! `P/lib/libvulkan.so.1.<version>`, the `libvulkan.so.1` and `libvulkan.so` links, and
//! `P/lib/pkgconfig/vulkan.pc`.

use std::path::{Path, PathBuf};
use std::process::Command;

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
        .args(["build", "--release", "-p", "loader"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let version = registry_version(&root)?;
    let lib_dir = prefix.join("lib");
    let pkgconfig = lib_dir.join("pkgconfig");
    std::fs::create_dir_all(&pkgconfig).map_err(|e| format!("{}: {e}", pkgconfig.display()))?;
    let real_name = format!("libvulkan.so.{version}");
    let target = lib_dir.join(&real_name);
    std::fs::copy(root.join("target/release/libvulkan.so"), &target).map_err(|e| format!("{}: {e}", target.display()))?;
    link(&real_name, &lib_dir.join("libvulkan.so.1"))?;
    link("libvulkan.so.1", &lib_dir.join("libvulkan.so"))?;
    let pc = format!(
        "prefix={}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\nName: Vulkan-Loader\n\
         Description: Vulkan Loader (Rust)\nVersion: {version}\nLibs: -L${{libdir}} -lvulkan\nCflags: -I${{includedir}}\n",
        prefix.display()
    );
    std::fs::write(pkgconfig.join("vulkan.pc"), pc).map_err(|e| format!("vulkan.pc: {e}"))?;
    println!("installed {} (+ libvulkan.so.1, libvulkan.so, pkgconfig/vulkan.pc)", target.display());
    Ok(())
}

/// `1.4.342`: the Vulkan version of the vendored registry, from the generated constants.
fn registry_version(root: &Path) -> Result<String, String> {
    let reg = generator::load_registry(&root.join("registry"))?;
    Ok(format!("{}.{}.{}", reg.header_api.0, reg.header_api.1, reg.header_version))
}

/// Replaces `link` with a symlink to `target`.
fn link(target: &str, link: &Path) -> Result<(), String> {
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(target, link).map_err(|e| format!("{}: {e}", link.display()))
}
