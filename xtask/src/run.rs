//! `cargo xtask run [--test-driver | --system-drivers]`: the main job. Builds `libvulkan.so.1`, the
//! project's test driver and the demo programs, then runs them through our library:
//! - default: on Mesa's lavapipe when it is installed (`/usr/share/vulkan/icd.d/lvp_icd.*.json`),
//!   `vk-hello` (instance, physical devices, device, command recording) and `vk-compute` (a compute
//!   dispatch, every value checked); otherwise as `--test-driver`;
//! - `--test-driver`: only the project's test driver is visible, `vk-hello` only (the test driver
//!   runs no shaders); no GPU or system driver needed;
//! - `--system-drivers`: every driver the machine has installed, both programs.

use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) const ICD_DIR: &str = "/usr/share/vulkan/icd.d";

/// Which drivers the programs see.
enum Drivers {
    /// `VK_DRIVER_FILES` = these manifests (lavapipe's, one per architecture Mesa installed).
    Lavapipe(Vec<PathBuf>),
    TestDriver,
    System,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let drivers = match args {
        [] => match lavapipe_manifests(Path::new(ICD_DIR)) {
            manifests if manifests.is_empty() => {
                println!("lavapipe is not installed (no {ICD_DIR}/lvp_icd.*.json): using the project's test driver");
                Drivers::TestDriver
            }
            manifests => Drivers::Lavapipe(manifests),
        },
        [flag] if flag == "--test-driver" => Drivers::TestDriver,
        [flag] if flag == "--system-drivers" => Drivers::System,
        other => return Err(format!("`run` takes --test-driver or --system-drivers, got {other:?}")),
    };
    let root = crate::repo_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "loader", "-p", "vk-test-driver", "-p", "vk-hello", "-p", "vk-compute"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let out = root.join("target/release");
    let library = out.join("libvulkan.so");

    let driver_files = match &drivers {
        Drivers::Lavapipe(manifests) => {
            println!("driver: Mesa's lavapipe ({})", join(manifests));
            Some(std::env::join_paths(manifests).map_err(|e| e.to_string())?)
        }
        Drivers::TestDriver => {
            let manifest = write_test_driver_manifest(&out)?;
            println!("driver: the project's test driver ({})", manifest.display());
            Some(manifest.into_os_string())
        }
        Drivers::System => {
            println!("drivers: the machine's own");
            None
        }
    };
    let with_drivers = |command: &mut Command| {
        if let Some(files) = &driver_files {
            command.env("VK_DRIVER_FILES", files).env_remove("VK_ICD_FILENAMES").env_remove("VK_ADD_DRIVER_FILES");
        }
    };

    println!("\n$ vk-hello {}", library.display());
    let mut hello = Command::new(out.join("vk-hello"));
    hello.arg(&library);
    with_drivers(&mut hello);
    let status = hello.status().map_err(|e| format!("cannot start vk-hello: {e}"))?;
    if !status.success() {
        return Err(format!("vk-hello failed ({status})"));
    }
    if matches!(drivers, Drivers::TestDriver) {
        return Ok(());
    }

    // vk-compute opens `libvulkan.so.1` by name, as ash does: the dynamic linker finds ours first.
    let by_name = soname_dir(&out, &library)?;
    println!("\n$ LD_LIBRARY_PATH={} vk-compute", by_name.display());
    let mut compute = Command::new(out.join("vk-compute"));
    compute.env("LD_LIBRARY_PATH", prepend(&by_name, std::env::var_os("LD_LIBRARY_PATH"))?);
    with_drivers(&mut compute);
    let status = compute.status().map_err(|e| format!("cannot start vk-compute: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("vk-compute failed ({status})")) }
}

/// Lavapipe's driver manifests in `icd_dir`, sorted; empty when Mesa's lavapipe is not installed.
pub(crate) fn lavapipe_manifests(icd_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(icd_dir) else { return Vec::new() };
    let mut manifests: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("lvp_icd.") && n.ends_with(".json")))
        .collect();
    manifests.sort();
    manifests
}

fn join(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// `out/soname/libvulkan.so.1`, a link to the built library, for `LD_LIBRARY_PATH`.
pub(crate) fn soname_dir(out: &Path, library: &Path) -> Result<PathBuf, String> {
    let dir = out.join("soname");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let link = dir.join("libvulkan.so.1");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(library, &link).map_err(|e| format!("{}: {e}", link.display()))?;
    Ok(dir)
}

pub(crate) fn prepend(dir: &Path, rest: Option<std::ffi::OsString>) -> Result<std::ffi::OsString, String> {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(rest.iter().flat_map(std::env::split_paths));
    std::env::join_paths(paths).map_err(|e| e.to_string())
}

/// A driver manifest pointing at the freshly built test driver.
pub(crate) fn write_test_driver_manifest(out: &Path) -> Result<PathBuf, String> {
    let library = out.join("libvk_test_driver.so");
    let manifest = out.join("vk_test_driver.json");
    let text = format!(
        "{{\n  \"file_format_version\": \"1.0.1\",\n  \"ICD\": {{\n    \"library_path\": \"{}\",\n    \"api_version\": \"1.4.342\"\n  }}\n}}\n",
        library.display()
    );
    std::fs::write(&manifest, text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lavapipe_is_found_by_its_manifest_names_only() {
        let dir = std::env::temp_dir().join(format!("xtask-run-icd-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(lavapipe_manifests(&dir).is_empty());
        assert!(lavapipe_manifests(&dir.join("missing")).is_empty());
        for name in ["radeon_icd.x86_64.json", "lvp_icd.x86_64.json", "lvp_icd.i686.json", "lvp_icd.x86_64.json.bak"] {
            std::fs::write(dir.join(name), "{}").unwrap();
        }
        assert_eq!(lavapipe_manifests(&dir), [dir.join("lvp_icd.i686.json"), dir.join("lvp_icd.x86_64.json")]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
