//! Real-driver tests on Mesa's lavapipe (package mesa-vulkan-drivers) through our library: a C program
//! linked with `-lvulkan`, the compute program that opens `libvulkan.so.1` by name as ash does, and
//! `vulkaninfo`, whose output must match the system loader's apart from the loader's own version.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LAVAPIPE: &str = common::LAVAPIPE;

fn require_lavapipe() {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
}

/// A fresh directory holding our library under both names programs open: `libvulkan.so.1` (linked
/// programs, ash) and `libvulkan.so` (the link-time name; vulkaninfo dlopens it first). Point
/// `LD_LIBRARY_PATH` at it.
fn our_library_dir(name: &str) -> PathBuf {
    let dir = common::scratch(name);
    for link in ["libvulkan.so", "libvulkan.so.1"] {
        std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join(link)).unwrap();
    }
    dir
}

/// The child side of `compute_program_runs_on_lavapipe_through_our_library`.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!(); // the harness's "test scenario_entry ... " stays on a line of its own
    match scenario.as_str() {
        "compute" => {
            let options = vk_compute::Options { count: 4096, iterations: 3 };
            if let Err(e) = vk_compute::run(&options) {
                panic!("FAIL: {e}");
            }
        }
        other => panic!("unknown scenario {other}"),
    }
}

#[test]
fn c_program_linked_against_us_runs_on_lavapipe() {
    require_lavapipe();
    let dir = our_library_dir("c-hello");
    // The program links `-lvulkan` from this directory and finds `libvulkan.so.1` there at run time.
    let exe = dir.join("hello");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c/hello.c");
    let cc = common::c_compiler().arg("-o").arg(&exe).arg(source).arg("-L").arg(&dir).arg("-lvulkan").output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let run = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &dir)
        .env("VK_DRIVER_FILES", LAVAPIPE)
        .env_remove("VK_ICD_FILENAMES")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", String::from_utf8_lossy(&run.stderr));
    assert!(out.contains("0: llvmpipe"), "{out}");
    let ldd = Command::new("ldd").arg(&exe).env("LD_LIBRARY_PATH", &dir).output().unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.contains(&format!("libvulkan.so.1 => {}", dir.join("libvulkan.so.1").display())), "{ldd}");
}

/// vk-compute's code (`vk_compute::run`) in a child process that finds our library by name through
/// `LD_LIBRARY_PATH`: instance, device, storage buffer, compute pipeline, three dispatches, every
/// value checked. The program prints the file `libvulkan.so.1` resolved to: it must be ours.
#[test]
fn compute_program_runs_on_lavapipe_through_our_library() {
    require_lavapipe();
    let dir = our_library_dir("compute");
    let (ok, out, err) = common::child("compute", &[("LD_LIBRARY_PATH", dir.display().to_string()), ("VK_DRIVER_FILES", LAVAPIPE.into())]);
    assert!(ok, "{out}{err}");
    let ours = std::fs::canonicalize(common::shipped_libvulkan()).unwrap();
    assert!(out.contains(&format!("\nloader: {}\n", ours.display())), "not our library:\n{out}");
    assert!(out.contains("\nrunning on: llvmpipe"), "{out}");
    assert!(out.contains("\nPASS: 4096 values x 3 iteration(s) checked\n"), "{out}");
}

/// vulkaninfo (`args`) in `work`, through the loader `LD_LIBRARY_PATH` finds in `library_dir`, or
/// through the system's with `None`. The environment is cleared (cargo's own `LD_LIBRARY_PATH`
/// reaches `target/*/deps/libvulkan.so`, which is ours) and both loaders see lavapipe as the only
/// driver, no display (vulkaninfo then skips surfaces) and the same, empty, home and XDG directories.
fn vulkaninfo(args: &[&str], library_dir: Option<&Path>, work: &Path) -> Output {
    vulkaninfo_with(args, library_dir, work, &[])
}

/// [`vulkaninfo`] with more variables set (`VK_DRIVER_FILES` among them, in place of lavapipe's).
fn vulkaninfo_with(args: &[&str], library_dir: Option<&Path>, work: &Path, env: &[(&str, &str)]) -> Output {
    std::fs::create_dir_all(work).unwrap();
    let empty = work.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let mut cmd = Command::new(common::vulkaninfo());
    cmd.args(args).current_dir(work).env_clear();
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default()).env("VK_DRIVER_FILES", LAVAPIPE);
    // Our loader has no layers yet: hide the host's from both loaders. Delete this line when it has.
    hide_host_layers(&mut cmd, &empty);
    if let Some(dir) = library_dir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    cmd.envs(env.iter().copied());
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    assert!(out.status.success(), "vulkaninfo {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Layer manifests are searched in the XDG and home directories (`/etc/vulkan` holds none here).
fn hide_host_layers(cmd: &mut Command, empty: &Path) {
    for var in ["XDG_DATA_DIRS", "XDG_CONFIG_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME"] {
        cmd.env(var, empty);
    }
}

/// The instance extensions the loader implements itself. A loader older than ours may lack some
/// (Debian's 1.3.239 predates VK_LUNARG_direct_driver_loading): that is the loader's version too.
const LOADER_EXTENSIONS: [&str; 4] =
    ["VK_EXT_debug_report", "VK_EXT_debug_utils", "VK_KHR_portability_enumeration", "VK_LUNARG_direct_driver_loading"];

/// vulkaninfo's text output without what says which loader produced it: the `Vulkan Instance
/// Version` line, and the lines of loader-implemented instance extensions that `other` (the other
/// loader's output) does not list, with the instance extension count reduced to match. Nothing
/// else is touched.
fn without_loader_version(text: &str, other: &str) -> String {
    let extension_line = |line: &str, name: &str| line.strip_prefix('\t').and_then(|l| l.strip_prefix(name)).is_some_and(|rest| rest.starts_with(' '));
    let missing: Vec<&str> = LOADER_EXTENSIONS.into_iter().filter(|name| !other.lines().any(|line| extension_line(line, name))).collect();
    let removed = text.lines().filter(|line| missing.iter().any(|name| extension_line(line, name))).count();
    let mut out = String::new();
    for line in text.lines().filter(|line| !missing.iter().any(|name| extension_line(line, name))) {
        if line.starts_with("Vulkan Instance Version: ") {
            out.push_str("Vulkan Instance Version: (the loader's)");
        } else if let Some(count) = line.strip_prefix("Instance Extensions: count = ") {
            let count: usize = count.parse().unwrap();
            out.push_str(&format!("Instance Extensions: count = {}", count - removed));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// A unified diff from the system loader's output to ours, for the failure message.
fn differences(ours: &str, system: &str) -> String {
    similar::TextDiff::from_lines(system, ours).unified_diff().context_radius(2).header("system loader", "ours").to_string()
}

fn our_instance_version() -> String {
    let v = vk_generated::HEADER_VERSION_COMPLETE;
    let (major, minor) = vk_generated::api_version_major_minor(v);
    format!("Vulkan Instance Version: {major}.{minor}.{}\n", v & 0xfff)
}

#[test]
fn vulkaninfo_through_our_library_prints_what_the_system_loader_prints() {
    require_lavapipe();
    let dir = our_library_dir("vulkaninfo");
    let ours = vulkaninfo(&[], Some(&dir), &dir.join("ours"));
    let system = vulkaninfo(&[], None, &dir.join("system"));
    let (ours, system) = (String::from_utf8(ours.stdout).unwrap(), String::from_utf8(system.stdout).unwrap());
    // Which loader ran: ours reports the registry's version, and both saw lavapipe.
    assert!(ours.contains(&format!("\n{}", our_instance_version())), "not our library:\n{ours}");
    assert!(!system.contains(&format!("\n{}", our_instance_version())), "the system loader has our version?\n{system}");
    assert!(ours.contains("llvmpipe") && system.contains("llvmpipe"), "lavapipe missing:\n{ours}");
    let (ours_cmp, system_cmp) = (without_loader_version(&ours, &system), without_loader_version(&system, &ours));
    assert!(ours_cmp == system_cmp, "vulkaninfo differs between the loaders:\n{}", differences(&ours_cmp, &system_cmp));
}

/// `vulkaninfo --json` writes one profile file, named after the device and driver version, into
/// its working directory; it holds no loader version, so it must match byte for byte.
#[test]
fn vulkaninfo_json_through_our_library_is_the_system_loaders() {
    require_lavapipe();
    let dir = our_library_dir("vulkaninfo-json");
    let runs = [(Some(dir.as_path()), dir.join("ours")), (None, dir.join("system"))];
    let [ours, system] = runs.map(|(library, work)| {
        let out = vulkaninfo(&["--json"], library, &work);
        let files: Vec<PathBuf> = std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "json")).collect();
        assert_eq!(files.len(), 1, "expected one profile in {}: {files:?}", work.display());
        let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
        (out.stdout, name, std::fs::read_to_string(&files[0]).unwrap())
    });
    assert!(ours.1.starts_with("VP_VULKANINFO_llvmpipe"), "{}", ours.1);
    assert_eq!(ours.1, system.1, "profile file names differ");
    assert_eq!(String::from_utf8_lossy(&ours.0), String::from_utf8_lossy(&system.0), "stdout differs");
    assert!(ours.2 == system.2, "the profiles differ:\n{}", differences(&ours.2, &system.2));
}

/// Debian installs both halves of a multilib Mesa in one directory (`lvp_icd.x86_64.json` beside
/// `lvp_icd.i686.json`): a 32-bit process is offered the 64-bit library too. Both loaders skip it
/// before loading it, each with an `INFO` line naming it and the dynamic linker's words ("wrong ELF
/// class: ELFCLASS64", which the Khronos loader logs from `dlerror`), and list the same devices.
#[test]
#[cfg_attr(not(target_arch = "x86"), ignore = "a 32-bit process's check: cargo xtask test-i686 runs it")]
fn the_64_bit_lavapipe_beside_the_32_bit_one_is_skipped_as_the_system_loader_skips_it() {
    require_lavapipe();
    let (other_manifest, other_library) = ("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so");
    assert!(Path::new(other_manifest).exists(), "{other_manifest} missing: install mesa-vulkan-drivers (amd64)");
    let dir = our_library_dir("other-class");
    let files = format!("{other_manifest}:{LAVAPIPE}");
    let env = [("VK_DRIVER_FILES", files.as_str()), ("VK_LOADER_DEBUG", "info")];
    let ours = vulkaninfo_with(&["--summary"], Some(&dir), &dir.join("ours"), &env);
    let system = vulkaninfo_with(&["--summary"], None, &dir.join("system"), &env);
    let [ours_out, system_out] = [&ours, &system].map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    assert!(ours_out.contains(&format!("\n{}", our_instance_version())), "not our library:\n{ours_out}");
    // The devices, from the summary's "Devices:" heading on (its instance part lists the loaders' own extensions).
    let devices = |out: &str| out.split_once("\nDevices:").map(|(_, devices)| devices.to_string()).unwrap_or_default();
    let (ours_devices, system_devices) = (devices(&ours_out), devices(&system_out));
    assert!(ours_devices.contains("llvmpipe"), "lavapipe missing:\n{ours_out}");
    assert!(ours_devices == system_devices, "the devices differ between the loaders:\n{}", differences(&ours_devices, &system_devices));
    for (loader, out) in [("ours", &ours), ("the system loader", &system)] {
        let err = String::from_utf8_lossy(&out.stderr);
        let skipped = err.lines().any(|l| l.contains("INFO") && l.contains(other_library) && l.contains("wrong ELF class: ELFCLASS64"));
        assert!(skipped, "{loader} did not say it skipped {other_library} as ELFCLASS64:\n{err}");
    }
}

#[test]
fn loader_version_and_own_extensions_are_all_that_is_left_out() {
    let system = "Vulkan Instance Version: 1.3.239\nInstance Extensions: count = 2\n\tVK_EXT_debug_utils : extension revision 2\n\tVK_KHR_surface     : extension revision 25\n\t\tVK_LUNARG_direct_driver_loading\n";
    let ours = "Vulkan Instance Version: 1.4.366\nInstance Extensions: count = 3\n\tVK_EXT_debug_utils : extension revision 2\n\tVK_KHR_surface     : extension revision 25\n\tVK_LUNARG_direct_driver_loading : extension revision 1\n\t\tVK_LUNARG_direct_driver_loading\n";
    assert_eq!(without_loader_version(ours, system), without_loader_version(system, ours));
    assert_eq!(without_loader_version(system, ours), system.replace("1.3.239", "(the loader's)"));
    // A driver's extension the other lacks is a difference, not the loader's version.
    let other = ours.replace("\tVK_KHR_surface     : extension revision 25\n", "");
    assert_ne!(without_loader_version(ours, &other), without_loader_version(&other, ours));
}
