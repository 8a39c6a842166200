//! `cargo xtask package-install-test [--debs DIR]`: installs the packages of `cargo xtask package`
//! (built first, or those in DIR) on this machine as a Steam user's has it, with the 32-bit
//! architecture enabled and its `libvulkan1` installed (i386 beside amd64, armhf beside arm64),
//! then takes them out again:
//!
//! 1. `dpkg --add-architecture <foreign>`, `apt-get update`, `apt-get install libvulkan1
//!    libvulkan1:<foreign> mesa-vulkan-drivers vulkan-tools`;
//! 2. `apt-get install ./<our packages>`: only `libvulkan1` and `libvulkan-dev` of this
//!    architecture may go, `libvulkan1:<foreign>` and every package depending on `libvulkan1`
//!    stay; `vulkaninfo` runs through our loader, and `vk-loader explain` runs;
//! 3. `apt-get install libvulkan1` swaps the system's loader back, even when step 2 failed; ours
//!    are purged, what went with them (`libvulkan-dev`) is reinstalled, and the installed
//!    packages are those of before step 2.
//!
//! It changes the system's packages, so it is no part of `cargo test`: CI's `.ci/run` calls it
//! after `cargo xtask test`. It runs dpkg and apt-get as root, or through `sudo -n` (GitHub's
//! runners), and refuses where it can do neither. The foreign architecture stays enabled.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use crate::package::PACKAGES;

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let debs = match args {
        [] => {
            crate::package::main(&[])?;
            root.join("target/debian")
        }
        [flag, dir] if flag == "--debs" => PathBuf::from(dir),
        _ => return Err(format!("usage: cargo xtask package-install-test [--debs DIR]; got {}", args.join(" "))),
    };
    if output("id", &["-u"])? != "0" && output("sudo", &["-n", "true"]).is_err() {
        return Err("package-install-test installs and removes system packages: run it as root (or with sudo without a password), on a machine made for it".into());
    }
    let arch = output("dpkg", &["--print-architecture"])?;
    let foreign = match arch.as_str() {
        "amd64" => "i386",
        "arm64" => "armhf",
        other => return Err(format!("no 32-bit architecture to try beside {other}")),
    };
    let version = format!("{}+{}", crate::registry_version(&root)?, env!("CARGO_PKG_VERSION"));
    let files = PACKAGES
        .iter()
        .map(|package| {
            let file = debs.join(format!("{package}_{version}_{arch}.deb"));
            if file.is_file() { Ok(file) } else { Err(format!("{} missing: run cargo xtask package", file.display())) }
        })
        .collect::<Result<Vec<_>, String>>()?;

    run(&["dpkg", "--add-architecture", foreign])?;
    // A mirror caught mid-sync fails one index; the others still serve.
    if let Err(e) = run(&["apt-get", "update"]) {
        println!("{e}: going on with the package lists there are");
    }
    let foreign_loader = format!("libvulkan1:{foreign}");
    run(&["apt-get", "install", "-y", "--no-install-recommends", "libvulkan1", &foreign_loader, "mesa-vulkan-drivers", "vulkan-tools"])?;
    let before = installed()?;
    println!("installing ours beside {foreign_loader}");
    let tried = install_ours(&files, &before, &arch, &foreign_loader, &version);
    println!("back to the system's libvulkan1");
    let restored = restore(&before, &arch);
    tried.and(restored)?;
    println!("package-install-test: ours replaced libvulkan1:{arch} only, served vulkaninfo, and gave the place back");
    Ok(())
}

/// Step 2: installs `files`; checks what went, what stayed, and that our loader serves.
fn install_ours(files: &[PathBuf], before: &BTreeSet<String>, arch: &str, foreign_loader: &str, version: &str) -> Result<(), String> {
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let args: Vec<&str> = ["apt-get", "install", "-y"].into_iter().chain(files.iter().map(String::as_str)).collect();
    run(&args)?;
    let after = installed()?;
    let may_go = [format!("libvulkan1:{arch}"), format!("libvulkan-dev:{arch}")];
    let gone: Vec<&String> = before.difference(&after).filter(|p| !may_go.contains(p)).collect();
    if !gone.is_empty() {
        return Err(format!("installing ours removed {gone:?}"));
    }
    if !after.contains(foreign_loader) {
        return Err(format!("{foreign_loader} is no longer installed"));
    }
    let summary = output("vulkaninfo", &["--summary"])?;
    let vulkan_version = version.split('+').next().unwrap_or(version);
    if !summary.contains(&format!("Vulkan Instance Version: {vulkan_version}")) || !summary.contains("deviceName") {
        return Err(format!("vulkaninfo --summary did not run on our loader with a device:\n{summary}"));
    }
    output("vk-loader", &["explain", "--no-devices"])?;
    Ok(())
}

/// Step 3: the system's loader back in place of ours, ours purged, and whatever else went with
/// ours reinstalled: the installed packages are those of `before`.
fn restore(before: &BTreeSet<String>, arch: &str) -> Result<(), String> {
    run(&["apt-get", "install", "-y", "--no-install-recommends", "libvulkan1"])?;
    let now = installed()?;
    let ours: Vec<&str> = PACKAGES.iter().copied().filter(|p| now.contains(&format!("{p}:{arch}"))).collect();
    if !ours.is_empty() {
        run(&[&["apt-get", "purge", "-y"][..], &ours].concat())?;
    }
    let now = installed()?;
    let missing: Vec<&str> = before.difference(&now).map(|p| p.trim_end_matches(":all")).collect();
    if !missing.is_empty() {
        run(&[&["apt-get", "install", "-y", "--no-install-recommends"][..], &missing].concat())?;
    }
    let after = installed()?;
    if after != *before {
        let gone: Vec<_> = before.difference(&after).collect();
        let new: Vec<_> = after.difference(before).collect();
        return Err(format!("the installed packages differ from before ours: missing {gone:?}, added {new:?}"));
    }
    Ok(())
}

/// The installed packages, as `name:arch`.
fn installed() -> Result<BTreeSet<String>, String> {
    let listing = output("dpkg-query", &["-W", "-f", "${Package}:${Architecture} ${db:Status-Abbrev}\n"])?;
    Ok(listing
        .lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(_, status)| status.trim() == "ii")
        .map(|(package, _)| package.to_string())
        .collect())
}

/// Runs a dpkg or apt-get command as root: directly when we are, else through `sudo -n`.
fn run(args: &[&str]) -> Result<(), String> {
    println!("+ {}", args.join(" "));
    let root = output("id", &["-u"])? == "0";
    let mut command = if root { Command::new(args[0]) } else { Command::new("sudo") };
    if !root {
        command.args(["-n", "DEBIAN_FRONTEND=noninteractive", args[0]]);
    }
    let status = command
        .args(&args[1..])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("cannot run {}: {e}", args[0]))?;
    status.success().then_some(()).ok_or(format!("`{}` failed ({status})", args.join(" ")))
}

fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(format!("{program} {} failed:\n{text}\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(text)
}
