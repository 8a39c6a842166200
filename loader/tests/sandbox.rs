//! A browser's GPU process: Chromium initializes Vulkan, engages its seccomp-bpf sandbox, and keeps
//! calling Vulkan. The C program `tests/c/sandboxed_gpu_process.c` does the same under a filter
//! like Chromium's baseline policy (SIGSYS on inotify and fanotify, EPERM on file system writes),
//! on lavapipe, through the system's Khronos loader and through ours with its driver cache cold,
//! warm and off. Every run must survive and print what the Khronos loader's run printed.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// The program, linked against the system's libvulkan.so (libvulkan-dev) and libseccomp.
fn compile(dir: &Path) -> PathBuf {
    let exe = dir.join("sandboxed_gpu_process");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c/sandboxed_gpu_process.c");
    let cc = Command::new("cc").arg("-o").arg(&exe).arg(source).args(["-lvulkan", "-lseccomp"]).output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    exe
}

/// One run of the program with lavapipe as the only driver, `home` and `cache` as its home and
/// XDG cache directories, and `library_dir` (holding our libvulkan.so.1) first on the library
/// path, or the system's loader with `None`. The environment is cleared: cargo's
/// `LD_LIBRARY_PATH` reaches our debug build, and the host's `VK_*` variables (`VK_ICD_FILENAMES`)
/// would change the drivers.
fn run(exe: &Path, library_dir: Option<&Path>, home: &Path, cache: &Path, env: &[(&str, &str)]) -> Output {
    std::fs::create_dir_all(home).unwrap();
    std::fs::create_dir_all(cache).unwrap();
    let mut cmd = Command::new(exe);
    cmd.env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default());
    cmd.env("VK_DRIVER_FILES", LAVAPIPE).env("HOME", home).env("XDG_CACHE_HOME", cache).envs(env.iter().copied());
    if let Some(dir) = library_dir {
        cmd.env("LD_LIBRARY_PATH", dir);
    }
    common::output_within(&mut cmd, common::CHILD_WATCHDOG)
}

/// What is wrong with one run, if anything: it must exit 0, print the `rounds:` line, and have been
/// answered by `ours` (the library the program reports on stderr) exactly when `through_ours`.
fn problems(name: &str, out: &Output, ours: &Path, through_ours: bool) -> Option<String> {
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let rounds = stdout.lines().filter(|l| l.starts_with("round ")).count();
    let status = match out.status.signal() {
        Some(libc::SIGSYS) => "killed by the sandbox's seccomp filter (SIGSYS)".to_string(),
        Some(signal) => format!("killed by signal {signal}"),
        None if out.status.success() => String::new(),
        None => format!("exited with {}", out.status),
    };
    let which = stderr.lines().find_map(|l| l.strip_prefix("loader: "));
    let wrong_loader = which.is_none() || (which == ours.to_str()) != through_ours;
    let mut wrong = Vec::new();
    if !status.is_empty() {
        wrong.push(status);
    }
    if wrong_loader {
        wrong.push(format!("answered by {}", which.unwrap_or("an unreported library")));
    }
    if !stdout.lines().any(|l| l.starts_with("rounds: ")) {
        wrong.push("no `rounds:` line".into());
    }
    (!wrong.is_empty()).then(|| format!("{name}: {} after {rounds} round(s)\n{stdout}{stderr}", wrong.join(", ")))
}

/// `out`'s stdout lines, the instance extension count left out. The count includes the extensions
/// the loader implements itself, and ours has VK_LUNARG_direct_driver_loading, which Debian's
/// 1.3.239 predates (15 against 14 over lavapipe): the loader's version, not an answer the
/// sandbox changed. lavapipe.rs compares the extensions themselves, through vulkaninfo.
fn comparable(out: &Output) -> Vec<String> {
    const FIELD: &str = "instance extensions ";
    let without_count = |line: &str| match line.split_once(FIELD) {
        Some((before, after)) => format!("{before}{FIELD}(the loader's){}", after.trim_start_matches(|c: char| c.is_ascii_digit())),
        None => line.to_string(),
    };
    String::from_utf8_lossy(&out.stdout).lines().map(without_count).collect()
}

/// The first line where `ours` departs from the reference's output, if any.
fn first_difference(name: &str, ours: &Output, reference: &Output) -> Option<String> {
    let (ours, reference) = (comparable(ours), comparable(reference));
    let line = |lines: &[String], i: usize| lines.get(i).map_or("(none)".to_string(), |l| format!("{l:?}"));
    let i = (0..ours.len().max(reference.len())).find(|&i| ours.get(i) != reference.get(i))?;
    Some(format!(
        "{name}: line {} differs from the Khronos loader's:\n  ours:   {}\n  theirs: {}",
        i + 1,
        line(&ours, i),
        line(&reference, i)
    ))
}

#[test]
fn gpu_process_keeps_calling_vulkan_inside_a_seccomp_sandbox() {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let dir = common::scratch("sandbox");
    let exe = compile(&dir);
    let ours = std::fs::canonicalize(common::shipped_libvulkan()).unwrap();
    let library_dir = dir.join("lib");
    std::fs::create_dir(&library_dir).unwrap();
    std::os::unix::fs::symlink(&ours, library_dir.join("libvulkan.so.1")).unwrap();
    let shared_cache = dir.join("cache-ours");

    let reference = run(&exe, None, &dir.join("home-system"), &dir.join("cache-system"), &[]);
    let cold = run(&exe, Some(&library_dir), &dir.join("home-cold"), &shared_cache, &[]);
    let filled = shared_cache.join("vulkan-loader-rs/drivers").exists();
    let warm = run(&exe, Some(&library_dir), &dir.join("home-warm"), &shared_cache, &[]);
    let off = run(&exe, Some(&library_dir), &dir.join("home-off"), &dir.join("cache-off"), &[("VK_LOADER_DRIVER_CACHE", "off")]);

    let mut failures: Vec<String> = problems("Khronos loader", &reference, &ours, false).into_iter().collect();
    if !filled {
        failures.push("the cold run left no driver cache: the warm run is not warm".into());
    }
    for (name, out) in [("ours, cache cold", &cold), ("ours, cache warm", &warm), ("ours, cache off", &off)] {
        failures.extend(problems(name, out, &ours, true).or_else(|| first_difference(name, out, &reference)));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
