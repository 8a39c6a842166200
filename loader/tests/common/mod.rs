//! Paths of the artifacts the integration tests use: our libvulkan and the test driver, built by
//! cargo next to the test executable.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod xvfb;

/// `target/<profile>/`, the directory holding the built libraries.
pub fn artifact_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>").to_path_buf()
}

/// Our `libvulkan.so`. `cargo test` leaves the cdylib in `deps/`; only `cargo build` copies it up.
pub fn libvulkan() -> PathBuf {
    // A copy of a test binary run from elsewhere (the elevated-process test) is told where it is.
    match std::env::var_os("TEST_LIBVULKAN") {
        Some(path) => PathBuf::from(path),
        None => built("libvulkan.so"),
    }
}

/// The packages whose release builds are what we ship (`cargo xtask install`, `cargo xtask
/// package`) or what layer authors build on the SDK: the tests that run real clients use these.
pub const SHIPPED_PACKAGES: &[&str] = &["loader", "vk-trace-layer", "sdk-draw-count-layer", "draw-stats-layer", "wrap-all-layer"];

/// The target directory these tests were built in and, for a `--target` build (`cargo test
/// --target i686-unknown-linux-gnu`), the triple: the artifacts are in `<target-dir>/<profile>/`
/// or `<target-dir>/<triple>/<profile>/`. A child `cargo` given both builds what these tests
/// read, for their architecture, without touching the host's builds.
pub fn cargo_target() -> (PathBuf, Option<String>) {
    let profiles = artifact_dir().parent().expect("<target-dir>[/<triple>]").to_path_buf();
    match profiles.file_name().and_then(|n| n.to_str()).filter(|n| n.ends_with("-linux-gnu")) {
        Some(triple) => (profiles.parent().expect("<target-dir>/<triple>").to_path_buf(), Some(triple.to_string())),
        None => (profiles, None),
    }
}

/// `target/release/`, where the shipped libraries are, built first: `cargo build --release` of
/// [`SHIPPED_PACKAGES`] once per test process (a no-op when `cargo xtask test` built them
/// already). The test profile's libraries are not what users run: a defect of the optimized
/// build only (a release trace layer once broke vkcube) would pass unseen.
pub fn release_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = std::process::Command::new(cargo);
            build.args(["build", "--release", "--quiet"]).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
            let (target_dir, triple) = cargo_target();
            build.arg("--target-dir").arg(target_dir).args(triple.iter().flat_map(|t| ["--target", t]));
            for package in SHIPPED_PACKAGES {
                build.args(["-p", package]);
            }
            let status = build.status().expect("cannot start cargo build --release");
            assert!(status.success(), "cargo build --release of the shipped libraries failed ({status})");
            artifact_dir().with_file_name("release")
        })
        .clone()
}

/// Our `libvulkan.so` as shipped: the release build.
pub fn shipped_libvulkan() -> PathBuf {
    release_dir().join("libvulkan.so")
}

/// A shipped library (the trace layer, an SDK layer) by file name: the release build.
pub fn shipped_library(file: &str) -> PathBuf {
    release_dir().join(file)
}

/// Debian's multiarch directory of this process's architecture: a 32-bit test process loads
/// `/usr/lib/i386-linux-gnu`'s libraries, not the 64-bit ones.
pub const SYSTEM_LIB_DIR: &str = if cfg!(target_arch = "x86") {
    "/usr/lib/i386-linux-gnu"
} else if cfg!(target_arch = "aarch64") {
    "/usr/lib/aarch64-linux-gnu"
} else {
    "/usr/lib/x86_64-linux-gnu"
};

/// A system library of this process's architecture (`libm.so.6`, `libvulkan.so.1`).
pub fn system_library(file: &str) -> PathBuf {
    Path::new(SYSTEM_LIB_DIR).join(file)
}

/// Mesa's lavapipe manifest for this process's architecture (`mesa-vulkan-drivers`, or its
/// `:i386` package for a 32-bit process).
pub const LAVAPIPE: &str = if cfg!(target_arch = "x86") {
    "/usr/share/vulkan/icd.d/lvp_icd.i686.json"
} else if cfg!(target_arch = "aarch64") {
    "/usr/share/vulkan/icd.d/lvp_icd.aarch64.json"
} else {
    "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
};

/// A library cargo built for this test run: the fresh copy in `deps/`, else the one beside it.
fn built(file: &str) -> PathBuf {
    let deps = artifact_dir().join("deps").join(file);
    if deps.exists() { deps } else { artifact_dir().join(file) }
}

/// The test driver library cargo built for these tests.
pub fn test_driver() -> PathBuf {
    built("libvk_test_driver.so")
}

/// A fresh directory for one test, under cargo's per-target scratch directory (`target/tmp`): the
/// next run of the same test replaces it, so runs do not pile copies of the drivers up in /tmp.
/// (Every test of one binary runs in one process, so a name must be unique within its file.)
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vk-loader-test-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a driver manifest for `library` into `dir/name`.
pub fn driver_manifest(dir: &std::path::Path, name: &str, library: &std::path::Path) -> PathBuf {
    let path = dir.join(name);
    let text = format!(
        r#"{{"file_format_version": "1.0.1", "ICD": {{"library_path": "{}", "api_version": "1.4.342"}}}}"#,
        library.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// A copy of the test driver named `libvk_test_driver_<tag>.so`, which reads
/// `VK_TEST_DRIVER_<VAR>_<TAG>` first: several differently configured drivers in one process.
pub fn tagged_driver(dir: &std::path::Path, tag: &str) -> PathBuf {
    let path = dir.join(format!("libvk_test_driver_{tag}.so"));
    std::fs::copy(test_driver(), &path).unwrap();
    path
}

/// A library of this workspace cargo built for these tests, by file name.
pub fn built_library(file: &str) -> PathBuf {
    built(file)
}

/// The test layer library cargo built for these tests.
pub fn test_layer() -> PathBuf {
    built("libvk_test_layer.so")
}

/// A copy of the test layer named `libvk_test_layer_<tag>.so`: a separate library (own state)
/// that reads `VK_TEST_LAYER_<VAR>_<TAG>` first.
pub fn tagged_layer(dir: &std::path::Path, tag: &str) -> PathBuf {
    let path = dir.join(format!("libvk_test_layer_{tag}.so"));
    std::fs::copy(test_layer(), &path).unwrap();
    path
}

/// Writes a layer manifest `dir/file` for one layer; `extra` is more JSON members for the
/// `layer` object (starting with a comma), e.g. `, "enable_environment": {"X": "1"}`.
pub fn layer_manifest(dir: &std::path::Path, file: &str, name: &str, library: &std::path::Path, extra: &str) -> PathBuf {
    let path = dir.join(file);
    let text = format!(
        r#"{{"file_format_version": "1.2.0", "layer": {{"name": "{name}", "type": "GLOBAL", "library_path": "{}",
            "api_version": "1.4.0", "implementation_version": "1", "description": "test layer {name}"{extra}}}}}"#,
        library.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs this test binary's `scenario_entry` test in a child process with `SCENARIO` and `env` set
/// (the loader reads the environment once and keeps what it dlopens, so each scenario needs its own
/// process); returns (success, stdout, stderr).
pub fn child(scenario: &str, env: &[(&str, String)]) -> (bool, String, String) {
    let run = run_scenario("scenario_entry", scenario, env);
    (run.status.success(), run.stdout, run.stderr)
}

/// The output of a scenario run in a child process.
pub struct ChildRun {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Re-runs this test binary's test `entry` with `SCENARIO=scenario` and `env`, the host's `VK_*`
/// variables removed; for checks that need the exit status (death tests).
///
/// `LOADER_TEST_RUNNER` (say `qemu-aarch64 -L /usr/aarch64-linux-gnu`, with cargo's
/// `CARGO_TARGET_<TRIPLE>_RUNNER` set the same) runs the child through that program: cross-built
/// tests under user-mode emulation, where the kernel cannot run the binary itself.
pub fn run_scenario(entry: &str, scenario: &str, env: &[(&str, String)]) -> ChildRun {
    let runner = std::env::var("LOADER_TEST_RUNNER").unwrap_or_default();
    run_scenario_under(&runner, entry, scenario, env)
}

/// [`run_scenario`] through `runner` (a command line, e.g. `valgrind --error-exitcode=99`, or
/// empty for none).
pub fn run_scenario_under(runner: &str, entry: &str, scenario: &str, env: &[(&str, String)]) -> ChildRun {
    let mut cmd = command_under(runner, std::env::current_exe().unwrap());
    cmd.args(["--exact", entry, "--nocapture", "--test-threads=1"]).env("SCENARIO", scenario);
    for (var, _) in std::env::vars() {
        if var.starts_with("VK_") {
            cmd.env_remove(var);
        }
    }
    // No host layer unless a test names one (the tests bring their own). Made once per process:
    // `scratch` removes and recreates its directory, which scenarios run from several threads at
    // once (the driver cache's race test) must not do under each other's feet.
    static NO_LAYERS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let no_layers = NO_LAYERS.get_or_init(|| scratch("no-layers"));
    cmd.env("VK_IMPLICIT_LAYER_PATH", no_layers).env("VK_LAYER_PATH", no_layers);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = output_within(&mut cmd, CHILD_WATCHDOG);
    ChildRun {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

/// A command that runs `program` through `runner` (a command line split at white space, e.g.
/// `valgrind --error-exitcode=99`; empty for none).
pub fn command_under(runner: &str, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut words = runner.split_whitespace();
    match words.next() {
        Some(first) => {
            let mut cmd = std::process::Command::new(first);
            cmd.args(words).arg(program);
            cmd
        }
        None => std::process::Command::new(program),
    }
}

/// How long a child process or real client may run before it is taken as hung: a generous
/// watchdog against a hang (a layer spinning in the loader), never a measure of speed.
pub const CHILD_WATCHDOG: std::time::Duration = std::time::Duration::from_secs(300);

/// `cmd.output()`, with the process killed and the test failed when it runs past `limit`: a hung
/// client fails its test instead of stopping the whole run.
pub fn output_within(cmd: &mut std::process::Command, limit: std::time::Duration) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the child process");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let (out, err) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
            panic!(
                "{cmd:?} still ran after {limit:?}: killed as hung\n{}\n{}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

/// A death test's verdict: the child printed `READY` just before its bad call, never got past it
/// (`SURVIVED`), died of `abort`, and the loader's stderr has `[Vulkan Loader] ERROR:` (padded to 32
/// columns, as the Khronos loader prints it) then `<message>`.
pub fn assert_aborted_with(run: &ChildRun, message: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert!(run.stdout.contains("READY"), "the child failed before the bad call:\n{}{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("SURVIVED"), "the bad call returned:\n{}", run.stdout);
    assert_eq!(run.status.signal(), Some(libc::SIGABRT), "{:?}\n{}", run.status, run.stderr);
    let line = format!("{:<32}{message}", "[Vulkan Loader] ERROR: ");
    assert!(run.stderr.lines().any(|l| l == line), "no line {line:?} in:\n{}", run.stderr);
}

/// The instance's physical devices, through `get` (a `vkGetInstanceProcAddr` wrapper).
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks, and `get` answers as that loader's
/// `vkGetInstanceProcAddr` does (a command of the type its name says, or `None`).
pub unsafe fn physical_devices(
    get: &dyn Fn(vk_generated::types::VkInstance, &std::ffi::CStr) -> vk_generated::types::PFN_vkVoidFunction,
    instance: vk_generated::types::VkInstance,
) -> Vec<vk_generated::types::VkPhysicalDevice> {
    use vk_generated::types::*;
    // SAFETY: `get` answered for vkEnumeratePhysicalDevices, so the pointer has its type;
    // `instance` is live (the contract) and `count` and `devices` are locals, the array `count`
    // long.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut count = 0;
        enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
        devices.truncate(count as usize);
        devices
    }
}

/// [`physical_devices`], each printed as `DEVICE <name>` in the loader's order.
///
/// # Safety
/// As for [`physical_devices`].
pub unsafe fn list_devices(
    get: &dyn Fn(vk_generated::types::VkInstance, &std::ffi::CStr) -> vk_generated::types::PFN_vkVoidFunction,
    instance: vk_generated::types::VkInstance,
) -> Vec<vk_generated::types::VkPhysicalDevice> {
    use vk_generated::types::*;
    // SAFETY: the same contract as ours.
    let devices = unsafe { physical_devices(get, instance) };
    // SAFETY: `get` answered for vkGetPhysicalDeviceProperties, so the pointer has its type; each
    // device is one the live instance just enumerated, and `p` a local.
    unsafe {
        let props: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        for d in &devices {
            let mut p = VkPhysicalDeviceProperties::default();
            props.unwrap()(*d, &mut p);
            println!("DEVICE {}", fixed_str(&p.deviceName));
        }
    }
    devices
}

/// The text of a fixed-size name array a driver filled (`deviceName`, `extensionName`): the bytes
/// before the first NUL, or all of them where there is none; never a byte past the array.
pub fn fixed_str(array: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = array.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `tests/c/<name>.c` compiled into `dir` as a shared library to preload (`lib<name>.so`).
pub fn preload_library(dir: &Path, name: &str) -> PathBuf {
    let library = dir.join(format!("lib{name}.so"));
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/c/{name}.c"));
    let cc = c_compiler().args(["-shared", "-fPIC", "-o"]).arg(&library).arg(&source).arg("-ldl").output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    library
}

/// `cc` building for this process's word size: `-m32` in a 32-bit x86 test process (Debian's
/// `gcc-multilib`), so what it builds can be loaded beside our 32-bit library.
pub fn c_compiler() -> std::process::Command {
    let mut cc = std::process::Command::new("cc");
    if cfg!(target_arch = "x86") {
        cc.arg("-m32");
    }
    cc
}

/// The `vulkaninfo` to run: `$VULKANINFO`, else the one on `PATH`. A 32-bit test process needs a
/// 32-bit one, which `vulkan-tools` (installed for one architecture only) cannot give beside the
/// 64-bit one: `dpkg-deb -x` of `vulkan-tools:i386` unpacks its `usr/bin/vulkaninfo`.
pub fn vulkaninfo() -> std::ffi::OsString {
    match std::env::var_os("VULKANINFO") {
        Some(path) => path,
        None if cfg!(target_arch = "x86") => panic!("a 32-bit test needs a 32-bit vulkaninfo: set VULKANINFO"),
        None => "vulkaninfo".into(),
    }
}
