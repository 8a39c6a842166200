//! `cargo xtask run [--system-drivers]`: the main job. Builds `libvulkan.so.1` and the project's
//! test driver, then runs `vk-hello` (instance, physical devices, device, command recording)
//! through our library. By default only the test driver is visible (`VK_DRIVER_FILES`), so the
//! run needs no GPU; `--system-drivers` uses whatever drivers the machine has installed.

use std::path::Path;
use std::process::Command;

pub fn main(args: &[String]) -> Result<(), String> {
    let system_drivers = match args {
        [] => false,
        [flag] if flag == "--system-drivers" => true,
        other => return Err(format!("`run` takes only --system-drivers, got {other:?}")),
    };
    let root = crate::repo_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "loader", "-p", "test-driver", "-p", "vk-hello"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build failed ({status})"));
    }
    let out = root.join("target/release");
    let library = out.join("libvulkan.so");
    let mut hello = Command::new(out.join("vk-hello"));
    hello.arg(&library);
    if !system_drivers {
        let manifest = write_test_driver_manifest(&out)?;
        println!("driver: the project's test driver ({})", manifest.display());
        hello.env("VK_DRIVER_FILES", &manifest).env_remove("VK_ICD_FILENAMES").env_remove("VK_ADD_DRIVER_FILES");
    }
    let status = hello.status().map_err(|e| format!("cannot start vk-hello: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("vk-hello failed ({status})")) }
}

/// A driver manifest pointing at the freshly built test driver.
fn write_test_driver_manifest(out: &Path) -> Result<std::path::PathBuf, String> {
    let library = out.join("libvk_test_driver.so");
    let manifest = out.join("vk_test_driver.json");
    let text = format!(
        "{{\n  \"file_format_version\": \"1.0.1\",\n  \"ICD\": {{\n    \"library_path\": \"{}\",\n    \"api_version\": \"1.4.342\"\n  }}\n}}\n",
        library.display()
    );
    std::fs::write(&manifest, text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    Ok(manifest)
}
