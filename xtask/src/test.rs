//! `cargo xtask test [ARGS...]`: the README's test command. Checks that the system packages the
//! tests use are installed (Debian / Ubuntu names), installs the missing ones with `apt-get`
//! (through `sudo` when not root), then runs `cargo test --workspace ARGS...`. Where it cannot
//! install them, it names them and fails: the tests would fail later, less clearly.

use std::process::Command;

/// The packages the tests use, and what for.
const PACKAGES: &[(&str, &str)] = &[
    ("build-essential", "cc for the C programs and the libc interposer the tests build"),
    ("libvulkan-dev", "the C headers (ABI layout test) and Debian's older vk.xml (generator test)"),
    ("libvulkan1", "the system loader the tests compare with"),
    ("libseccomp-dev", "the sandboxed client's seccomp filter"),
    ("tmux", "a launcher: the driver cache warm across launches"),
    ("screen", "a launcher: the driver cache warm across launches"),
    ("libglib2.0-bin", "gio launch of a .desktop file: the driver cache warm across launches"),
    ("openssh-server", "a private sshd: the driver cache warm across ssh sessions"),
    ("openssh-client", "ssh and ssh-keygen: the driver cache warm across ssh sessions"),
    ("mesa-vulkan-drivers", "Mesa's lavapipe driver and device-select and overlay layers"),
    ("vulkan-tools", "vulkaninfo and vkcube"),
    ("vulkan-validationlayers", "the Khronos validation layer"),
    ("xvfb", "an X server for vkcube"),
    ("valgrind", "memcheck over the concurrency stress scenario"),
    ("mangohud", "a layer whose manifest names /usr/$LIB/... (and the mangoapp layer below)"),
    ("mangoapp", "a second $LIB layer"),
    ("vkbasalt", "a third $LIB layer"),
    ("gfxreconstruct", "a layer named by its bare file name, which wraps every handle"),
    ("libprimus-vk1", "a second bare-name layer"),
    ("librenderdoc", "RenderDoc's capture layer, which wraps the VkInstance"),
    ("debhelper", "builds the Debian packages of cargo xtask package (its test)"),
];

pub fn main(args: &[String]) -> Result<(), String> {
    let missing = missing_packages()?;
    if !missing.is_empty() {
        install(&missing)?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["test", "--workspace"])
        .args(args)
        .current_dir(crate::repo_root())
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo test --workspace failed ({status})"));
    }
    Ok(())
}

/// The packages of `PACKAGES` that dpkg does not list as installed.
fn missing_packages() -> Result<Vec<&'static str>, String> {
    let names: Vec<&str> = PACKAGES.iter().map(|(name, _)| *name).collect();
    // One line per package dpkg knows; an unknown one is reported on stderr and simply absent.
    let output = Command::new("dpkg-query")
        .args(["-W", "-f", "${Package} ${db:Status-Abbrev}\n"])
        .args(&names)
        .output()
        .map_err(|e| format!("cannot run dpkg-query ({e}): this needs a Debian-based system with {}", names.join(" ")))?;
    let listing = String::from_utf8_lossy(&output.stdout);
    let installed = |name: &str| {
        listing.lines().any(|line| {
            let mut words = line.split_whitespace();
            // "ii": desired install, currently installed.
            words.next().is_some_and(|p| p.split(':').next() == Some(name)) && words.next() == Some("ii")
        })
    };
    Ok(names.into_iter().filter(|name| !installed(name)).collect())
}

/// `apt-get update` and `apt-get install` of `packages`, as root or through `sudo -n`.
fn install(packages: &[&str]) -> Result<(), String> {
    println!("installing the system packages the tests need: {}", packages.join(" "));
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let prefix: &[&str] = if root { &[] } else { &["sudo", "-n"] };
    if !root && !Command::new("sudo").args(["-n", "true"]).status().is_ok_and(|s| s.success()) {
        return Err(cannot_install(packages, "not root, and sudo cannot run without a password"));
    }
    let run = |args: &[&str]| -> Result<(), String> {
        let mut words = prefix.iter().chain(args).copied();
        let program = words.next().expect("a program");
        let status = Command::new(program)
            .args(words)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| cannot_install(packages, &format!("cannot run {program}: {e}")))?;
        status.success().then_some(()).ok_or_else(|| cannot_install(packages, &format!("`{}` failed ({status})", args.join(" "))))
    };
    // A mirror caught mid-sync fails one index ("File has unexpected size"); the install may
    // still find every package in the others or in the lists already there, and says so if not.
    if run(&["apt-get", "update"]).is_err() {
        println!("`apt-get update` failed: going on with the package lists there are");
    }
    run(&[&["apt-get", "install", "-y", "--no-install-recommends"][..], packages].concat())
}

fn cannot_install(packages: &[&str], why: &str) -> String {
    let mut message = format!("{why}; install these packages and run again:\n");
    for (name, what) in PACKAGES.iter().filter(|(name, _)| packages.contains(name)) {
        message.push_str(&format!("  {name:<24} {what}\n"));
    }
    message
}
