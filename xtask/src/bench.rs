//! `cargo xtask bench <benchmark>`: benchmarks.
//!
//! Runtime benchmarks live in the `loader-bench` crate (tests/bench), so xtask stays light: we
//! build it, our `libvulkan.so` and the test driver in release mode and pass its output through.
//! `build-time` is measured here, `size` in `size.rs`. With no benchmark named, `loaders` runs (ours against the
//! system loader, the whole list).

use std::process::Command;
use std::time::Instant;

/// Benchmarks that the `loader-bench` program runs.
const PROGRAM_BENCHMARKS: &[&str] = &["loaders", "lookup", "real-driver", "layer-sdk", "startup"];

pub fn main(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        Some("build-time") => build_time(&args[1..]),
        Some("size") => crate::size::main(&args[1..]),
        Some(name) if PROGRAM_BENCHMARKS.contains(&name) => program(args),
        None | Some("--json" | "--khronos" | "--path") => program(&[["loaders".to_string()].as_slice(), args].concat()),
        Some(other) => Err(format!(
            "unknown benchmark `{other}`; see `cargo xtask help`"
        )),
    }
}

/// `cargo run --release -p loader-bench -- <args>`, with `--json FILE`, `--khronos PATH` and `--baseline FILE` made
/// absolute (cargo runs the program in the repository root, not where we were called).
fn program(args: &[String]) -> Result<(), String> {
    let mut forwarded = args.to_vec();
    for flag in ["--json", "--khronos", "--baseline"] {
        if let Some(i) = forwarded.iter().position(|a| a == flag) {
            let file = forwarded.get_mut(i + 1).ok_or(format!("{flag} needs a path"))?;
            let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
            *file = cwd.join(&*file).to_string_lossy().into_owned();
        }
    }
    // The libraries the benchmarks load are not dependencies of the program: build them too.
    let build = [
        "build", "--quiet", "--release", "--package", "loader", "--package", "vk-test-driver", "--package", "test-layer",
        // `layer-sdk`: the SDK layer, its hand-written twin and the SDK layer that wraps handles.
        "--package", "sdk-draw-count-layer", "--package", "handwritten-layer", "--package", "wrap-all-layer",
    ];
    cargo_status(&mut cargo(&build), "build libvulkan.so, the test driver and the test layers")?;
    let mut command = cargo(&[
        "run",
        "--quiet",
        "--release",
        "--package",
        "loader-bench",
        "--",
    ]);
    cargo_status(command.args(&forwarded), "run loader-bench")
}

/// Release build times from clean: the generated crate alone, and the loader (which compiles the
/// generated trampolines and links `libvulkan.so` with fat LTO) with the generated crate.
fn build_time(args: &[String]) -> Result<(), String> {
    if let Some(arg) = args.first() {
        return Err(format!(
            "`bench build-time` takes no arguments, got `{arg}`"
        ));
    }
    let mut results = Vec::new();
    for (label, package) in [("vk-generated", "vk-generated"), ("libvulkan.so (loader + vk-generated)", "loader")] {
        for clean in ["vk-generated", "loader"] {
            cargo_status(&mut cargo(&["clean", "--quiet", "--release", "--package", clean]), "clean")?;
        }
        let start = Instant::now();
        cargo_status(&mut cargo(&["build", "--release", "--package", package]), &format!("build {package}"))?;
        results.push((label, start.elapsed().as_secs_f64()));
    }
    println!("\nrelease build from clean (dependencies already built):");
    for (label, seconds) in results {
        println!("  {label:<40} {seconds:>6.1} s");
    }
    Ok(())
}

/// A cargo command in the repository root; under `cargo xtask`, CARGO names the running cargo.
fn cargo(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.args(args).current_dir(crate::repo_root());
    command
}

fn cargo_status(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo could not {what} ({status})"))
    }
}
