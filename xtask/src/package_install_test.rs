//! `cargo xtask package-install-test [--debs DIR]`: installs the packages of `cargo xtask package`
//! (built first, or those in DIR) on this machine as a Steam user's has it, with the 32-bit
//! architecture enabled and its `libvulkan1` installed (i386 beside amd64, armhf beside arm64),
//! then takes them out again. On amd64 ours are built for i386 too (`cargo xtask package
//! --target i686-unknown-linux-gnu`) and both architectures' are installed together:
//!
//! 1. `dpkg --add-architecture <foreign>`, `apt-get update`, `apt-get install libvulkan1
//!    libvulkan1:<foreign> mesa-vulkan-drivers vulkan-tools`; on amd64 also the i386 lavapipe and
//!    what a 32-bit `vulkaninfo` links (as `cargo xtask test-i686` installs them), that
//!    `vulkaninfo` unpacked from `vulkan-tools:i386` under the target directory. Each client's
//!    `vulkaninfo --summary` on the system's loader reports an instance version other than ours,
//!    so the version tells the two loaders apart;
//! 2. the files the amd64 and i386 packages of one name share are byte for byte the same
//!    (`Multi-Arch: same`); `apt-get install ./<our packages>` of both architectures: only
//!    `libvulkan1` and `libvulkan-dev` of those architectures may go (of this architecture only
//!    where no 32-bit packages of ours are built: `libvulkan1:<foreign>` must then stay), every
//!    package depending on `libvulkan1` stays; each architecture's `libvulkan.so.1` is our
//!    package's file, and that architecture's `vulkaninfo` (64-bit, and 32-bit on amd64) reports
//!    our instance version with a device, and runs with our trace layer enabled by its shared
//!    manifest; `vk-loader explain` runs;
//! 3. `apt-get install libvulkan1 libvulkan1:<foreign>` swaps the system's loaders back, even when
//!    step 2 failed; ours are purged, what went with them (`libvulkan-dev`) is reinstalled, and
//!    the installed packages are those of before step 2.
//!
//! It changes the system's packages, so it is no part of `cargo test`: CI's `.ci/run` calls it
//! after `cargo xtask test`. It runs dpkg and apt-get as root, or through `sudo -n` (GitHub's
//! runners), and refuses where it can do neither. The foreign architecture stays enabled.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::package::{CROSS_PACKAGES, PACKAGES, deb_name};

/// One architecture's client of the installed loader.
struct Client {
    arch: String,
    vulkaninfo: PathBuf,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let arch = output("dpkg", &["--print-architecture"])?;
    let foreign = match arch.as_str() {
        "amd64" => "i386",
        "arm64" => "armhf",
        other => return Err(format!("no 32-bit architecture to try beside {other}")),
    };
    // Ours are built for i386 beside amd64 (a Rust target of the machine); armhf stays Debian's.
    let ours_foreign = arch == "amd64";
    let debs = match args {
        [] => {
            crate::package::main(&[])?;
            if ours_foreign {
                crate::package::main(&["--target".into(), crate::cross::I686.into()])?;
            }
            root.join("target/debian")
        }
        [flag, dir] if flag == "--debs" => PathBuf::from(dir),
        _ => return Err(format!("usage: cargo xtask package-install-test [--debs DIR]; got {}", args.join(" "))),
    };
    if output("id", &["-u"])? != "0" && output("sudo", &["-n", "true"]).is_err() {
        return Err("package-install-test installs and removes system packages: run it as root (or with sudo without a password), on a machine made for it".into());
    }
    let vulkan_version = crate::registry_version(&root)?;
    let version = format!("{vulkan_version}+{}", env!("CARGO_PKG_VERSION"));
    let mut wanted: Vec<(&str, &str)> = PACKAGES.iter().map(|p| (*p, arch.as_str())).collect();
    if ours_foreign {
        wanted.extend(CROSS_PACKAGES.iter().map(|p| (*p, foreign)));
    }
    let files = wanted
        .iter()
        .map(|(package, arch)| {
            let file = debs.join(deb_name(package, &version, arch));
            if file.is_file() { Ok(file) } else { Err(format!("{} missing: run cargo xtask package{}", file.display(), if *arch == foreign { " --target i686-unknown-linux-gnu" } else { "" })) }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let target_dir = crate::cross::target_dir(&root);
    if ours_foreign {
        check_shared_files(&debs, &version, &arch, foreign, &target_dir.join("multi-arch-check"))?;
    }

    run(&["dpkg", "--add-architecture", foreign])?;
    // A mirror caught mid-sync fails one index; the others still serve.
    if let Err(e) = run(&["apt-get", "update"]) {
        println!("{e}: going on with the package lists there are");
    }
    let native_loader = format!("libvulkan1:{arch}");
    let foreign_loader = format!("libvulkan1:{foreign}");
    run(&["apt-get", "install", "-y", "--no-install-recommends", &native_loader, &foreign_loader, "mesa-vulkan-drivers", "vulkan-tools"])?;
    let mut clients = vec![Client { arch: arch.clone(), vulkaninfo: "vulkaninfo".into() }];
    if ours_foreign {
        crate::cross::install_i386_packages(crate::cross::I386_PACKAGES)?;
        let vulkaninfo = crate::cross::vulkaninfo_i386(&target_dir.join("vulkan-tools-i386"))?;
        clients.push(Client { arch: foreign.to_string(), vulkaninfo });
    }
    for client in &clients {
        let summary = summary(client)?;
        let system = instance_version(&summary).unwrap_or_default();
        if system.is_empty() || system == vulkan_version {
            return Err(format!(
                "the system's libvulkan1:{} reports the instance version {system:?}: ours ({vulkan_version}) cannot be told apart from it",
                client.arch
            ));
        }
        println!("{} vulkaninfo on the system's loader: instance version {system}", client.arch);
    }
    let before = installed()?;
    let replaced: Vec<String> = if ours_foreign { vec![native_loader.clone(), foreign_loader.clone()] } else { vec![native_loader.clone()] };
    println!("installing ours in place of {}", replaced.join(" and "));
    let tried = install_ours(&files, &before, &replaced, &foreign_loader, &clients, &vulkan_version, &target_dir);
    println!("back to the system's {native_loader} and {foreign_loader}");
    let restored = restore(&before, &[native_loader, foreign_loader]);
    tried.and(restored)?;
    let arches: Vec<&str> = clients.iter().map(|c| c.arch.as_str()).collect();
    println!(
        "package-install-test: ours replaced {} only, served vulkaninfo ({}), and gave the place back",
        replaced.join(" and "),
        arches.join(" and ")
    );
    Ok(())
}

/// The files that the two architectures' packages of each `Multi-Arch: same` name both hold
/// (documentation, the trace layer's manifest) must be the same, byte for byte: dpkg refuses to
/// install the second otherwise. Checked on the unpacked packages (in `scratch`) before anything
/// is installed.
fn check_shared_files(debs: &Path, version: &str, arch: &str, foreign: &str, scratch: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(scratch);
    let mut shared = 0;
    let mut differ = Vec::new();
    for package in CROSS_PACKAGES {
        let unpacked: Vec<PathBuf> = [arch, foreign].iter().map(|a| scratch.join(a).join(package)).collect();
        for (a, dir) in [arch, foreign].iter().zip(&unpacked) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let deb = debs.join(deb_name(package, version, a));
            let status = Command::new("dpkg-deb").arg("-x").arg(&deb).arg(dir).status().map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
            if !status.success() {
                return Err(format!("dpkg-deb -x {} failed ({status})", deb.display()));
            }
        }
        let theirs = files_under(&unpacked[1])?;
        for path in files_under(&unpacked[0])?.intersection(&theirs) {
            shared += 1;
            let [ours, theirs] = [&unpacked[0], &unpacked[1]].map(|dir| dir.join(path));
            let same = match std::fs::read_link(&ours) {
                Ok(target) => std::fs::read_link(&theirs).is_ok_and(|t| t == target),
                Err(_) => std::fs::read(&ours).ok().is_some_and(|bytes| std::fs::read(&theirs).is_ok_and(|t| t == bytes)),
            };
            if !same {
                differ.push(format!("{package}: /{}", path.display()));
            }
        }
    }
    let _ = std::fs::remove_dir_all(scratch);
    if !differ.is_empty() {
        return Err(format!("the {arch} and {foreign} packages hold different files at one path (Multi-Arch: same forbids it):\n{}", differ.join("\n")));
    }
    if shared == 0 {
        return Err(format!("the {arch} and {foreign} packages share no file: not even their copyright files were compared"));
    }
    println!("the {arch} and {foreign} packages share {shared} files, all identical");
    Ok(())
}

/// The files and links under `dir`, relative to it (directories left out).
fn files_under(dir: &Path) -> Result<BTreeSet<PathBuf>, String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).map_err(|e| format!("{}: {e}", current.display()))? {
            let path = entry.map_err(|e| e.to_string())?.path();
            let kind = std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.file_type();
            if kind.is_dir() {
                pending.push(path);
            } else {
                found.insert(path.strip_prefix(dir).expect("under dir").to_path_buf());
            }
        }
    }
    Ok(found)
}

/// Step 2: installs `files`; checks what went, what stayed, and that our loader serves each
/// client.
fn install_ours(
    files: &[PathBuf],
    before: &BTreeSet<String>,
    replaced: &[String],
    foreign_loader: &str,
    clients: &[Client],
    vulkan_version: &str,
    scratch: &Path,
) -> Result<(), String> {
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let args: Vec<&str> = ["apt-get", "install", "-y"].into_iter().chain(files.iter().map(String::as_str)).collect();
    run(&args)?;
    let after = installed()?;
    let may_go: Vec<String> = replaced.iter().flat_map(|loader| [loader.clone(), loader.replacen("libvulkan1:", "libvulkan-dev:", 1)]).collect();
    let gone: Vec<&String> = before.difference(&after).filter(|p| !may_go.contains(p)).collect();
    if !gone.is_empty() {
        return Err(format!("installing ours removed {gone:?}"));
    }
    if !replaced.iter().any(|r| r == foreign_loader) && !after.contains(foreign_loader) {
        return Err(format!("{foreign_loader} is no longer installed"));
    }
    for client in clients {
        serves(client, vulkan_version, scratch)?;
    }
    output("vk-loader", &["explain", "--no-devices"])?;
    Ok(())
}

/// The client's architecture's `libvulkan.so.1` is our package's file, and its `vulkaninfo`
/// runs on it: our instance version (the system's loader reported another), a device, and our
/// trace layer found through its manifest (shared by the architectures) and loaded from the
/// client's multiarch directory.
fn serves(client: &Client, vulkan_version: &str, scratch: &Path) -> Result<(), String> {
    let multiarch = output("dpkg-architecture", &["-a", &client.arch, "-qDEB_HOST_MULTIARCH"])?;
    let link = PathBuf::from("/usr/lib").join(&multiarch).join("libvulkan.so.1");
    let file = std::fs::canonicalize(&link).map_err(|e| format!("{}: {e}", link.display()))?;
    let owner = output("dpkg", &["-S", &file.display().to_string()])?;
    if !owner.starts_with(&format!("libvulkan1-rs:{}: ", client.arch)) {
        return Err(format!("{} is {}, owned by {owner}, not by libvulkan1-rs:{}", link.display(), file.display(), client.arch));
    }
    let summary = summary(client)?;
    if instance_version(&summary) != Some(vulkan_version) || !summary.contains("deviceName") {
        return Err(format!("{} vulkaninfo --summary did not run on our loader ({vulkan_version}) with a device:\n{summary}", client.arch));
    }
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let trace = scratch.join(format!("trace-{}.jsonl", client.arch));
    let _ = std::fs::remove_file(&trace);
    let traced = Command::new(&client.vulkaninfo)
        .env_remove("LD_LIBRARY_PATH")
        .arg("--summary")
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_RUST_trace")
        .env("VK_LAYER_RUST_TRACE_FILE", &trace)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", client.vulkaninfo.display()))?;
    let lines = std::fs::read_to_string(&trace).unwrap_or_default();
    let _ = std::fs::remove_file(&trace);
    if !traced.status.success() || !lines.contains(r#""command":"vkEnumeratePhysicalDevices""#) {
        return Err(format!(
            "{} vulkaninfo with VK_LAYER_RUST_trace ({}) traced no vkEnumeratePhysicalDevices:\n{}",
            client.arch,
            traced.status,
            String::from_utf8_lossy(&traced.stderr)
        ));
    }
    println!("{} vulkaninfo ran on {} (libvulkan1-rs:{}), instance version {vulkan_version}, traced by our layer", client.arch, file.display(), client.arch);
    Ok(())
}

/// `vulkaninfo --summary` of the client.
fn summary(client: &Client) -> Result<String, String> {
    output(&client.vulkaninfo.display().to_string(), &["--summary"])
}

/// `1.4.366` of `Vulkan Instance Version: 1.4.366`: what the loader itself answers to
/// vkEnumerateInstanceVersion.
fn instance_version(summary: &str) -> Option<&str> {
    summary.lines().find_map(|l| l.trim().strip_prefix("Vulkan Instance Version:")).map(str::trim)
}

/// Step 3: the system's loaders (`loaders`, `name:arch`) back in place of ours, ours purged, and
/// whatever else went with ours reinstalled: the installed packages are those of `before`.
fn restore(before: &BTreeSet<String>, loaders: &[String]) -> Result<(), String> {
    let loaders: Vec<&str> = loaders.iter().map(String::as_str).collect();
    run(&[&["apt-get", "install", "-y", "--no-install-recommends"][..], &loaders].concat())?;
    let now = installed()?;
    let ours: Vec<&String> = now.iter().filter(|p| PACKAGES.iter().any(|ours| p.split(':').next() == Some(ours))).collect();
    if !ours.is_empty() {
        let ours: Vec<&str> = ours.iter().map(|p| p.as_str()).collect();
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

/// Run without the `LD_LIBRARY_PATH` that `cargo run` gives this process (its target's `deps`,
/// where our `libvulkan.so` is, which `vulkaninfo` would load): the clients resolve their loader as
/// the system does.
fn output(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).env_remove("LD_LIBRARY_PATH").args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() {
        return Err(format!("{program} {} failed:\n{text}\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(text)
}
