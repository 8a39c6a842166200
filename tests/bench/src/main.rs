//! `loader-bench <benchmark> [--khronos PATH] [--json FILE]`: our loader against the system
//! Khronos loader (and, with `--khronos`, against another build of it).
//! Run it through `cargo xtask bench [benchmark]`, which builds it and our libraries in release mode.
//! `loader-bench child ...` is how `loaders` runs each measurement in a fresh process.

mod child;
mod layer_sdk;
mod loaders;
mod lookup;
mod real_driver;
mod sandbox;
mod startup;
mod trace;
mod vk;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: loader-bench [loaders|lookup|real-driver|layer-sdk|startup] [--khronos PATH] [--path miss|warm|both] (loaders) [--json FILE] [--baseline FILE] [--probe NAME[,NAME...]] (startup)";

/// Each measurement repeats its input until a round takes this long...
const MIN_ROUND: Duration = Duration::from_millis(50);
/// ...and keeps the best of this many rounds. Many short rounds, not a few long ones: their best
/// filters out other work on a shared machine (5 rounds of 200 ms varied by 40% run to run).
const ROUNDS: usize = 20;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("child") {
        return match child::main(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        };
    }
    let json_file = match args.iter().position(|a| a == "--json") {
        Some(i) => match args.get(i + 1) {
            Some(file) => Some(file.clone()),
            None => return fail("--json needs a FILE"),
        },
        None => None,
    };
    let json = match args.first().map(String::as_str) {
        None | Some("loaders") | Some("--json") | Some("--khronos") | Some("--path") => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return fail(&format!("cannot find this executable: {e}")),
            };
            let khronos = match args.iter().position(|a| a == "--khronos") {
                Some(i) => match args.get(i + 1) {
                    Some(path) => Some(std::path::PathBuf::from(path)),
                    None => return fail("--khronos needs the path of a libvulkan.so.1"),
                },
                None => None,
            };
            let paths = match args.iter().position(|a| a == "--path") {
                Some(i) => match args.get(i + 1).map(|w| loaders::CachePath::parse(w)) {
                    Some(Ok(paths)) => paths,
                    Some(Err(e)) => return fail(&e),
                    None => return fail("--path needs miss, warm or both"),
                },
                None => loaders::CachePath::parse("both").expect("a known word"),
            };
            match loaders::run(&exe, khronos.as_deref(), &paths) {
                Ok(json) => json,
                Err(e) => return fail(&e),
            }
        }
        Some("lookup") => lookup::run(),
        Some("layer-sdk") => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return fail(&format!("cannot find this executable: {e}")),
            };
            let baseline = args.iter().position(|a| a == "--baseline").and_then(|i| args.get(i + 1)).map(std::path::PathBuf::from);
            match layer_sdk::run(&exe, baseline.as_deref()) {
                Ok(json) => json,
                Err(e) => return fail(&e),
            }
        }
        Some("startup") => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return fail(&format!("cannot find this executable: {e}")),
            };
            let khronos = args.iter().position(|a| a == "--khronos").and_then(|i| args.get(i + 1)).map(std::path::PathBuf::from);
            // `--probe NAME[,NAME...]`: only these probes (`launches` among them).
            let only = match args.iter().position(|a| a == "--probe") {
                Some(i) => match args.get(i + 1) {
                    Some(list) => Some(list.as_str()),
                    None => return fail("--probe needs a probe name (or a comma list)"),
                },
                None => None,
            };
            let ours = exe.with_file_name("libvulkan.so");
            match startup::run(&exe, &ours, &loaders::system_loader(), khronos.as_deref(), only) {
                Ok(json) => json,
                Err(e) => return fail(&e),
            }
        }
        Some("real-driver") => {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return fail(&format!("cannot find this executable: {e}")),
            };
            let ours = exe.with_file_name("libvulkan.so");
            match real_driver::run(&exe, &ours, &loaders::system_loader()) {
                Ok(json) => json,
                Err(e) => return fail(&e),
            }
        }
        _ => return fail(USAGE),
    };
    match json_file {
        Some(file) => match std::fs::write(&file, json + "\n") {
            Ok(()) => println!("\nJSON written to {file}"),
            Err(e) => return fail(&format!("cannot write {file}: {e}")),
        },
        None => println!("\n{json}"),
    }
    ExitCode::SUCCESS
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

/// Nanoseconds per item of `f` over `items`: the best of [`ROUNDS`] rounds, each repeating the
/// whole list until it has run for [`MIN_ROUND`].
pub fn ns_per_item<T: Copy, R>(items: &[T], mut f: impl FnMut(T) -> R) -> f64 {
    // Warm up caches and branch predictors.
    for &item in items {
        black_box(f(black_box(item)));
    }
    let mut best = f64::INFINITY;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed() < MIN_ROUND {
            for &item in items {
                black_box(f(black_box(item)));
            }
            calls += items.len() as u64;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    best
}

/// `LD_LIBRARY_PATH` as the caller had it, `None` if empty: without the directories `cargo run`
/// and rustup put in front (the build's target directory, the toolchain's libraries), in which
/// every library loaded by a bare name (a layer's or a driver's dependencies) would be looked for
/// first. They cost every loader alike, but ours most in proportion: 0.13 ms of 1.9 for the probe
/// with device-select (ten dependencies, four such directories).
fn callers_library_path(exe: &Path) -> Option<String> {
    let value = std::env::var("LD_LIBRARY_PATH").ok()?;
    // `exe` is <target>/<profile>/loader-bench.
    let target = exe.parent().and_then(Path::parent);
    let toolchains = std::env::var_os("RUSTUP_HOME").map(|home| PathBuf::from(home).join("toolchains"));
    let added = |dir: &str| {
        let dir = Path::new(dir);
        target.is_some_and(|t| dir.starts_with(t)) || toolchains.as_ref().is_some_and(|t| dir.starts_with(t))
    };
    let kept: Vec<&str> = value.split(':').filter(|dir| !dir.is_empty() && !added(dir)).collect();
    (!kept.is_empty()).then(|| kept.join(":"))
}

/// `command` (a child of `exe`) with the caller's `LD_LIBRARY_PATH` (see [`callers_library_path`]).
pub fn in_callers_environment(command: &mut std::process::Command, exe: &Path) {
    match callers_library_path(exe) {
        Some(path) => command.env("LD_LIBRARY_PATH", path),
        None => command.env_remove("LD_LIBRARY_PATH"),
    };
}

/// The machine and the date, as `(cpu model, logical CPUs, date)`.
pub fn machine() -> (String, usize, String) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim())
        })
        .unwrap_or("unknown CPU")
        .to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown date".to_string(), |d| d.trim().to_string());
    (cpu, cpus, date)
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A JSON number, or `null` for none.
pub fn json_num(x: Option<f64>) -> String {
    x.map_or_else(|| "null".to_string(), |x| format!("{x:.3}"))
}
