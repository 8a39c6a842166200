//! `cargo xtask test-i686` and `cargo xtask test-aarch64`: the loader's tests that apply, built for
//! another target of this amd64 machine and run here, each installing what it needs first
//! (the Rust target by `rustup`, Debian packages by `apt-get` as root or through `sudo -n`):
//!
//! - **i686** (natively, as 32-bit processes): `gcc-N-multilib` (rustc links with `cc -m32`), the i386
//!   architecture with Mesa's lavapipe and Debian's loader for it (`mesa-vulkan-drivers:i386`,
//!   `libvulkan1:i386`) and a 32-bit `vulkaninfo` unpacked from `vulkan-tools:i386` under the
//!   target directory. Then the C layout probes built with `-m32`, and the loader's tests of what
//!   the word size changes: the unknown-command trampolines, handles, layer chains, driver loading
//!   (a 64-bit driver beside a 32-bit one skipped as the Khronos loader skips it), the driver cache
//!   with a 32-bit process's key, and 32-bit `vulkaninfo` on the i386 lavapipe giving the same
//!   answers through ours and through Debian's `libvulkan1:i386` (cache off, cold and warm).
//! - **aarch64** (under `qemu-aarch64`, user-mode emulation): `gcc-N-aarch64-linux-gnu` as the
//!   linker (N the default gcc's major version: see [`gcc_version`]), `libc6-dev-arm64-cross` and
//!   `qemu-user`; the unknown-command and handle tests (the library's unit tests, which hold
//!   little that is aarch64's own, are left out: their build would cost CI another compile of
//!   the loader; they pass there but one, see docs/i686.md).
//!
//! The Multi-Arch: same libraries must have one version on both architectures. Where the i386
//! package lists lag the amd64 ones (a mirror mid-sync, a security update not yet built for i386,
//! lists not refreshed), `mesa-vulkan-drivers:i386` has unmet dependencies; the install is then
//! tried again with each such library of its dependencies, and the installed packages built from
//! the same source (`libexpat1-dev`), pinned to the newest version both architectures' lists
//! offer. If it still cannot be installed, the command says so and fails: the 32-bit real-driver
//! tests would otherwise be missing without a word.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const I686: &str = "i686-unknown-linux-gnu";
const AARCH64: &str = "aarch64-unknown-linux-gnu";

/// The loader's test targets run as 32-bit: those whose subject changes with the word size or the
/// architecture's system files (the C helpers built with `-m32`, the i386 lavapipe and loader).
const I686_LOADER_TESTS: &[&str] = &[
    "unknown_commands", // the i386 trampolines
    "handles",          // handle headers and magic, 4-byte pointers
    "layers",           // layer chains, wrong-class layers
    "drivers",          // driver loading, the ELF check of 32-bit libraries
    "driver_cache",     // a 32-bit process's own records
    "startup_cache",    // vulkaninfo on lavapipe, cache off, cold and warm
    "lavapipe",         // vulkaninfo through ours and Debian's libvulkan1:i386, the 64-bit driver skipped
];

/// i386 packages: lavapipe and Debian's loader (the reference), and the libraries the unpacked
/// `vulkan-tools:i386`'s `vulkaninfo` links.
pub const I386_PACKAGES: &[&str] = &[
    "mesa-vulkan-drivers:i386",
    "libvulkan1:i386",
    "libstdc++6:i386",
    "libwayland-client0:i386",
    "libx11-6:i386",
    "libxcb1:i386",
];

pub fn i686(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err(format!("test-i686 takes no arguments, got {}", args.join(" ")));
    }
    install_i686_build(&[], I386_PACKAGES)?;
    let root = crate::repo_root();
    let target_dir = target_dir(&root);
    let vulkaninfo = vulkaninfo_i386(&target_dir.join("vulkan-tools-i386"))?;

    let mut loader_tests = vec!["test", "--target", I686, "-p", "loader", "--lib"];
    for test in I686_LOADER_TESTS {
        loader_tests.extend(["--test", test]);
    }
    // One build, then the runs: cargo test builds every selected target before running any.
    let mut generated = cargo(&root);
    generated.args(["test", "--target", I686, "-p", "vk-generated", "--test", "abi", "--test", "layer_abi"]);
    let mut loader = cargo(&root);
    loader.args(&loader_tests).env("VULKANINFO", &vulkaninfo);
    for mut command in [generated, loader] {
        run_cargo(&mut command)?;
    }
    println!("test-i686: the loader's 32-bit tests passed, i386 lavapipe answering the same through ours and Debian's libvulkan1:i386");
    Ok(())
}

/// Installs what building for i686 needs and is missing (`cargo xtask test-i686`, `cargo xtask
/// package --target i686-unknown-linux-gnu`): the Rust target, `gcc-N-multilib` (rustc links
/// with `cc -m32`) and the amd64 packages `host_packages`; then, the i386 architecture enabled,
/// the packages `i386_packages` (`name:i386`), pinned where the i386 lists lag.
pub fn install_i686_build(host_packages: &[&str], i386_packages: &[&str]) -> Result<(), String> {
    check_host()?;
    rustup_target(I686)?;
    let multilib = format!("gcc-{}-multilib", gcc_version()?);
    let wanted: Vec<&str> = [multilib.as_str()].into_iter().chain(host_packages.iter().copied()).collect();
    let missing = not_installed(&wanted)?;
    if !missing.is_empty() {
        update()?;
        apt(&[&["apt-get", "install", "-y", "--no-install-recommends"][..], &missing].concat())?;
    }
    install_i386_packages_after(i386_packages, !missing.is_empty())
}

/// Installs the i386 packages `packages` (`name:i386`) that are missing, enabling the i386
/// architecture first where it is not, and pinning the Multi-Arch: same libraries they need
/// where the i386 lists lag the amd64 ones.
pub fn install_i386_packages(packages: &[&str]) -> Result<(), String> {
    install_i386_packages_after(packages, false)
}

/// [`install_i386_packages`], the package lists already `updated` or not.
fn install_i386_packages_after(packages: &[&str], mut updated: bool) -> Result<(), String> {
    let foreign = output("dpkg", &["--print-foreign-architectures"])?;
    if !foreign.lines().any(|a| a == "i386") {
        apt(&["dpkg", "--add-architecture", "i386"])?;
        update()?;
        updated = true;
    }
    let missing = not_installed(packages)?;
    if missing.is_empty() {
        return Ok(());
    }
    if !updated {
        update()?;
    }
    install_i386(&missing)
}

pub fn aarch64(args: &[String]) -> Result<(), String> {
    if !args.is_empty() {
        return Err(format!("test-aarch64 takes no arguments, got {}", args.join(" ")));
    }
    check_host()?;
    rustup_target(AARCH64)?;
    let gcc = gcc_version()?;
    let cross_gcc = format!("gcc-{gcc}-aarch64-linux-gnu");
    let missing = not_installed(&[cross_gcc.as_str(), "libc6-dev-arm64-cross", "qemu-user"])?;
    if !missing.is_empty() {
        update()?;
        apt(&[&["apt-get", "install", "-y", "--no-install-recommends"][..], &missing].concat())?;
    }
    let root = crate::repo_root();
    let runner = "qemu-aarch64 -L /usr/aarch64-linux-gnu";
    let mut command = cargo(&root);
    command
        .args(["test", "--target", AARCH64, "-p", "loader", "--test", "unknown_commands", "--test", "handles"])
        .env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER", format!("aarch64-linux-gnu-gcc-{gcc}"))
        .env("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER", runner)
        .env("LOADER_TEST_RUNNER", runner);
    run_cargo(&mut command)?;
    println!("test-aarch64: the aarch64 trampolines passed the unknown-command and handle tests under qemu-aarch64");
    Ok(())
}

/// Both commands build for another target of an amd64 Debian machine.
fn check_host() -> Result<(), String> {
    let arch = output("dpkg", &["--print-architecture"])
        .map_err(|e| format!("{e}\nthis needs a Debian-based amd64 machine"))?;
    (arch == "amd64").then_some(()).ok_or(format!("this runs on amd64 machines; this one is {arch}"))
}

/// The major version of the default `gcc` (`12` in bookworm). The multilib support and the cross
/// compiler of that version are installed by their versioned packages (`gcc-12-multilib`,
/// `gcc-12-aarch64-linux-gnu`), which coexist: the unversioned `gcc-multilib` conflicts with
/// every cross compiler, so installing `gcc-aarch64-linux-gnu` would remove it.
fn gcc_version() -> Result<String, String> {
    let version = output("gcc", &["-dumpversion"]).map_err(|e| format!("{e}\nthis needs gcc (build-essential)"))?;
    Ok(version.split('.').next().unwrap_or(&version).to_string())
}

/// `rustup target add TARGET` unless its standard library is installed.
fn rustup_target(target: &str) -> Result<(), String> {
    let installed = output("rustup", &["target", "list", "--installed"])
        .map_err(|e| format!("{e}\ninstall the Rust target {target} (rustup target add {target}) and run again"))?;
    if installed.lines().any(|t| t.trim() == target) {
        return Ok(());
    }
    println!("+ rustup target add {target}");
    let status = Command::new("rustup").args(["target", "add", target]).status().map_err(|e| format!("cannot run rustup: {e}"))?;
    status.success().then_some(()).ok_or(format!("rustup target add {target} failed ({status}): the {target} tests cannot build"))
}

/// The packages (`name` or `name:arch`) dpkg does not list as installed.
fn not_installed<'a>(packages: &[&'a str]) -> Result<Vec<&'a str>, String> {
    let listing = Command::new("dpkg-query")
        .args(["-W", "-f", "${Package}:${Architecture} ${db:Status-Abbrev}\n"])
        .args(packages)
        .output()
        .map_err(|e| format!("cannot run dpkg-query: {e}"))?;
    let listing = String::from_utf8_lossy(&listing.stdout);
    let installed = |package: &str| {
        let (name, arch) = package.split_once(':').unwrap_or((package, ""));
        listing.lines().any(|line| {
            let Some((got, status)) = line.split_once(' ') else { return false };
            let (got_name, got_arch) = got.split_once(':').unwrap_or((got, ""));
            got_name == name && (arch.is_empty() || arch == got_arch) && status.trim() == "ii"
        })
    };
    Ok(packages.iter().copied().filter(|p| !installed(p)).collect())
}

/// `apt-get update`; a failed index (a mirror mid-sync) leaves the lists there are.
fn update() -> Result<(), String> {
    if let Err(e) = apt(&["apt-get", "update"]) {
        println!("{e}: going on with the package lists there are");
    }
    Ok(())
}

/// `apt-get install` of i386 packages; where the Multi-Arch: same libraries they need are offered
/// at different versions for the two architectures, again with those pinned to one version.
fn install_i386(packages: &[&str]) -> Result<(), String> {
    let install = |pins: &[String]| {
        let mut args = vec!["apt-get", "install", "-y", "--no-install-recommends"];
        if !pins.is_empty() {
            // The version both architectures offer may be older than the amd64 one installed.
            args.push("--allow-downgrades");
        }
        args.extend(pins.iter().map(String::as_str));
        args.extend(packages);
        apt(&args)
    };
    let Err(first) = install(&[]) else { return Ok(()) };
    println!("{first}: pinning the Multi-Arch: same libraries they need to a version both architectures offer");
    let pins = multiarch_pins(packages)?;
    if pins.is_empty() {
        return Err(format!(
            "the i386 packages {} cannot be installed, and no library they need differs in version between amd64 and i386 \
             (see apt-get's message above); the 32-bit real-driver tests need them",
            packages.join(" ")
        ));
    }
    println!("pins: {}", pins.join(" "));
    install(&pins).map_err(|e| {
        format!(
            "{e}\nthe i386 packages {} cannot be installed, even with {}; the 32-bit real-driver tests need them \
             (the i386 package lists may lag the amd64 ones: apt-get update, or a mirror with both)",
            packages.join(" "),
            pins.join(" ")
        )
    })
}

/// `name=version` for each Multi-Arch: same library in the dependencies of `packages` that is
/// installed for amd64 at a version the i386 lists do not offer as their candidate: the library,
/// its i386 twin and the installed packages of its source at its version (its `-dev`), all at the
/// newest version offered for both architectures (and for each of those packages).
fn multiarch_pins(packages: &[&str]) -> Result<Vec<String>, String> {
    let mut args = vec!["depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"];
    args.extend(packages);
    let depends = output("apt-cache", &args)?;
    let installed = output("dpkg-query", &["-W", "-f", "${Package}\t${Architecture}\t${source:Package}\t${Version}\t${Multi-Arch}\t${db:Status-Abbrev}\n"])?;
    // (name, architecture, source, version, multi-arch) of each installed package.
    let installed: Vec<[&str; 5]> = installed
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields.len() == 6 && fields[5].trim() == "ii").then(|| [fields[0], fields[1], fields[2], fields[3], fields[4]])
        })
        .collect();
    let mut pins = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in depends.lines().filter(|l| !l.starts_with(' ') && !l.starts_with('<')) {
        let Some(name) = line.trim().strip_suffix(":i386") else { continue };
        if !seen.insert(name.to_string()) {
            continue;
        }
        let Some(&[_, _, source, amd64_version, multi_arch]) = installed.iter().find(|p| p[0] == name && p[1] == "amd64") else { continue };
        if multi_arch != "same" {
            continue;
        }
        let i386_candidate = candidate(&format!("{name}:i386"))?;
        if i386_candidate.as_deref() == Some(amd64_version) {
            continue;
        }
        // The source's other installed packages at the library's version (libexpat1-dev) must move with it.
        let family: Vec<&str> = installed.iter().filter(|p| p[2] == source && p[3] == amd64_version && p[1] != "i386").map(|p| p[0]).collect();
        let mut common = offered(&format!("{name}:i386"))?;
        for member in &family {
            let theirs = offered(member)?;
            common.retain(|v| theirs.contains(v));
        }
        let Some(version) = newest(&common)? else {
            return Err(format!(
                "{name} is installed at {amd64_version} for amd64, and no version of it is offered for both amd64 and i386 \
                 (with {}): the i386 packages cannot be installed beside it",
                family.join(" ")
            ));
        };
        println!("{name}: amd64 {amd64_version}, i386 candidate {}; both at {version}", i386_candidate.as_deref().unwrap_or("none"));
        pins.push(format!("{name}:i386={version}"));
        pins.extend(family.iter().map(|member| format!("{member}={version}")));
    }
    Ok(pins)
}

/// The candidate version of `package` (`name:arch`), if any.
fn candidate(package: &str) -> Result<Option<String>, String> {
    let policy = output("apt-cache", &["policy", package])?;
    Ok(policy
        .lines()
        .find_map(|l| l.trim().strip_prefix("Candidate:"))
        .map(|v| v.trim().to_string())
        .filter(|v| v != "(none)"))
}

/// The versions the package lists offer for `package` (`name` is the machine's architecture).
fn offered(package: &str) -> Result<Vec<String>, String> {
    let madison = output("apt-cache", &["madison", package])?;
    let mut versions: Vec<String> = madison.lines().filter_map(|l| l.split('|').nth(1)).map(|v| v.trim().to_string()).collect();
    versions.dedup();
    Ok(versions)
}

/// The newest of `versions` by dpkg's ordering.
fn newest(versions: &[String]) -> Result<Option<String>, String> {
    let mut best: Option<&String> = None;
    for version in versions {
        let newer = match best {
            None => true,
            Some(b) => Command::new("dpkg").args(["--compare-versions", version, "gt", b]).status().is_ok_and(|s| s.success()),
        };
        if newer {
            best = Some(version);
        }
    }
    Ok(best.cloned())
}

/// A 32-bit `vulkaninfo`: `vulkan-tools` installs for one architecture only, so the i386 package
/// is downloaded and unpacked into `dir` (no root needed); its path.
pub fn vulkaninfo_i386(dir: &Path) -> Result<PathBuf, String> {
    let vulkaninfo = dir.join("usr/bin/vulkaninfo");
    if vulkaninfo.is_file() {
        return Ok(vulkaninfo);
    }
    let download = dir.join("download");
    std::fs::create_dir_all(&download).map_err(|e| format!("{}: {e}", download.display()))?;
    println!("+ apt-get download vulkan-tools:i386 (unpacked into {})", dir.display());
    let status = Command::new("apt-get")
        .args(["download", "vulkan-tools:i386"])
        .current_dir(&download)
        .status()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if !status.success() {
        return Err(format!("apt-get download vulkan-tools:i386 failed ({status}): the 32-bit vulkaninfo tests need it"));
    }
    let deb = std::fs::read_dir(&download)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .ok_or("apt-get download left no .deb")?;
    let status = Command::new("dpkg-deb").arg("-x").arg(&deb).arg(dir).status().map_err(|e| format!("cannot run dpkg-deb: {e}"))?;
    if !status.success() || !vulkaninfo.is_file() {
        return Err(format!("dpkg-deb -x {} gave no {}", deb.display(), vulkaninfo.display()));
    }
    Ok(vulkaninfo)
}

/// `CARGO_TARGET_DIR`, else the workspace's `target/`.
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"))
}

fn cargo(root: &Path) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root);
    command
}

fn run_cargo(command: &mut Command) -> Result<(), String> {
    let args: Vec<String> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
    println!("+ cargo {}", args.join(" "));
    let status = command.status().map_err(|e| format!("cannot start cargo: {e}"))?;
    status.success().then_some(()).ok_or(format!("cargo {} failed ({status})", args.join(" ")))
}

/// A dpkg or apt-get command run as root: directly when we are, else through `sudo -n`.
fn apt(args: &[&str]) -> Result<(), String> {
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
        .map_err(|e| format!("cannot run {} (as root, or through sudo -n): {e}", args[0]))?;
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
