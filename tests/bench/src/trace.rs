//! Files a `vkCreateInstance` + `vkDestroyInstance` opens, counted from the kernel's side with
//! `strace`: every manifest read and library mapped shows up as an `openat`, whatever libc
//! function the loader used (an LD_PRELOAD shim would miss the dynamic linker's own opens).
//! The child opens marker paths around each creation; only the syscalls between them count.

use std::path::Path;
use std::process::Command;

use crate::child::MARKER_DIR;
use crate::sandbox::Sandbox;

/// What one creation did.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub manifests: usize,
    pub libraries: usize,
    pub directories: usize,
    pub syscalls: usize,
    /// Files opened outside the sandbox (other than the system's libraries): isolation leaks.
    pub outside: Vec<String>,
}

/// Whether strace can be run here.
pub fn available() -> bool {
    Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success())
}

/// Runs `command` (a `child trace` process) under strace; returns the counts of the first and the
/// second creation.
pub fn run(command: Command, sandbox_root: &Path) -> Result<[Counts; 2], String> {
    let log = sandbox_root.join(format!("strace-{}.log", std::process::id()));
    let strace_args = ["strace", "-f", "-qq", "-o"].map(std::ffi::OsStr::new);
    let mut strace = Sandbox::wrapped(&command, &[&strace_args[..], &[log.as_os_str()]].concat());
    let output = strace.output().map_err(|e| format!("cannot run strace: {e}"))?;
    if !output.status.success() {
        return Err(format!("strace child failed: {}", String::from_utf8_lossy(&output.stderr)));
    }
    let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let _ = std::fs::remove_file(&log);
    Ok([window(&text, 1, sandbox_root)?, window(&text, 2, sandbox_root)?])
}

/// The counts between the markers of creation `i`.
fn window(log: &str, i: usize, root: &Path) -> Result<Counts, String> {
    let begin = format!("\"{MARKER_DIR}/begin-{i}\"");
    let end = format!("\"{MARKER_DIR}/end-{i}\"");
    let lines: Vec<&str> = log.lines().collect();
    let start = lines.iter().position(|l| l.contains(&begin)).ok_or("begin marker not in strace log")?;
    let stop = lines.iter().position(|l| l.contains(&end)).ok_or("end marker not in strace log")?;
    let root = root.display().to_string();
    let mut counts = Counts::default();
    for line in &lines[start + 1..stop] {
        // "PID name(args) = result": skip signals, exits and resumptions of split calls.
        let call = line.split_once(' ').map_or(*line, |(_, rest)| rest.trim_start());
        if call.starts_with("---") || call.starts_with("+++") || call.starts_with("<...") {
            continue;
        }
        counts.syscalls += 1;
        let Some(path) = call.strip_prefix("openat(").and_then(quoted) else { continue };
        let succeeded = call.rsplit_once(" = ").is_some_and(|(_, r)| !r.starts_with('-'));
        if !succeeded {
            continue;
        }
        if call.contains("O_DIRECTORY") {
            counts.directories += 1;
        } else if path.ends_with(".json") {
            counts.manifests += 1;
        } else if path.ends_with(".so") || path.contains(".so.") {
            counts.libraries += 1;
        }
        // Directories outside (e.g. SYSCONFDIR's /etc/vulkan/*.d, searched by both loaders) are
        // fine: only files read from them would leak the machine's setup into the figures.
        let system_library = path.starts_with("/lib") || path.starts_with("/usr/lib") || path.starts_with("/etc/ld.so");
        let file = !call.contains("O_DIRECTORY");
        if file && !path.starts_with(&root) && !system_library && !path.starts_with("/proc/") && !path.starts_with("/sys/") {
            counts.outside.push(path.to_string());
        }
    }
    Ok(counts)
}

/// The first double-quoted string of `openat(AT_FDCWD, "path", ...)`.
fn quoted(args: &str) -> Option<&str> {
    let start = args.find('"')? + 1;
    let len = args[start..].find('"')?;
    Some(&args[start..start + len])
}
