//! `cargo xtask asan`: AddressSanitizer over the tests that drive the loader's FFI paths.
//!
//! `cargo +nightly` builds the loader (the `libvulkan.so` cdylib), the test driver and layers and
//! the integration tests with `-Zsanitizer=address` for the host target, into a target directory
//! of their own (the shared `target/debug` is left alone). Without rust-src the standard library
//! is not rebuilt instrumented (no `-Zbuild-std`): ASan sees the loader's own code and the
//! allocations std makes on its behalf, which is where the loader's memory bugs are.
//!
//! The runtime is linked into executables only, statically; an instrumented `libvulkan.so` takes
//! its `__asan_*` symbols from the process. The test executables are therefore linked with
//! `--export-dynamic`, so that the libraries they `dlopen` (ours, the test driver, the test layers)
//! find the runtime in them. A program that is not instrumented (vulkaninfo, the Khronos suite)
//! takes GCC's `libasan.so` preloaded instead: see `khronos-suite --asan`.
//!
//! Leak detection is off (`detect_leaks=0`): the test driver's statics are lost when the loader
//! unloads it, and valgrind's memcheck, with its suppressions, is what checks leaks.

use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask asan [--target-dir DIR]";

/// The compiler flags of every instrumented crate.
const RUSTFLAGS: &str = "-Zsanitizer=address -Clink-arg=-Wl,--export-dynamic";

/// The runtime's options for every run.
pub const ASAN_OPTIONS: &str = "detect_leaks=0";

/// A group of test executables run under ASan in one `cargo test`.
struct Group {
    tests: &'static [&'static str],
    /// Only the tests whose names contain this.
    filter: Option<&'static str>,
    /// The tests left out: those that run their children under valgrind (which cannot run an ASan
    /// program), build the release libraries with the plain toolchain, or run an instrumented
    /// program with a cleared environment (the runtime's options lost).
    skipped: &'static [&'static str],
}

const GROUPS: &[Group] = &[
    Group {
        tests: &["unknown_commands", "layers", "stress", "drivers", "handles", "driver_cache", "differential", "memcheck"],
        filter: None,
        skipped: &["under_memcheck", "under_valgrind", "sdk_layer", "draw_statistics"],
    },
    // Lazy drivers: the cache's tests of them; the others run vulkaninfo and real launchers,
    // which are not instrumented.
    Group { tests: &["startup_cache"], filter: Some("lazy"), skipped: &["explain"] },
];

pub fn main(args: &[String]) -> Result<(), String> {
    let target_dir = match args {
        [] => crate::repo_root().join("target/asan"),
        [flag, dir] if flag == "--target-dir" => std::path::absolute(dir).map_err(|e| format!("{dir}: {e}"))?,
        _ => return Err(USAGE.into()),
    };
    let triple = host_triple()?;
    let mut failed = Vec::new();
    for group in GROUPS {
        let mut cargo = nightly_cargo(&target_dir, &triple)?;
        cargo.args(["test", "--no-fail-fast", "-p", "loader"]);
        for test in group.tests {
            cargo.args(["--test", test]);
        }
        cargo.arg("--").args(group.filter);
        for skip in group.skipped {
            cargo.args(["--skip", skip]);
        }
        println!("$ RUSTFLAGS=\"{RUSTFLAGS}\" ASAN_OPTIONS={ASAN_OPTIONS} cargo +nightly test --target {triple} ... --test {}", group.tests.join(" --test "));
        let status = cargo.status().map_err(|e| format!("cannot start cargo +nightly: {e}"))?;
        if !status.success() {
            failed.push(group.tests.join(", "));
        }
    }
    if failed.is_empty() {
        println!("AddressSanitizer: every test passed, no report");
        Ok(())
    } else {
        Err(format!("under AddressSanitizer, tests failed in: {}", failed.join("; ")))
    }
}

/// Builds our `libvulkan.so` with ASan into `target_dir`; returns its path.
pub fn build_library(target_dir: &Path) -> Result<PathBuf, String> {
    let triple = host_triple()?;
    let mut cargo = nightly_cargo(target_dir, &triple)?;
    cargo.args(["build", "-p", "loader"]);
    let status = cargo.status().map_err(|e| format!("cannot start cargo +nightly: {e}"))?;
    if !status.success() {
        return Err(format!("cargo +nightly build -p loader with {RUSTFLAGS} failed ({status})"));
    }
    Ok(target_dir.join(&triple).join("debug/libvulkan.so"))
}

/// `cargo +nightly` (through rustup) with the sanitizer's flags, for `triple`, into `target_dir`.
fn nightly_cargo(target_dir: &Path, triple: &str) -> Result<Command, String> {
    let found = Command::new("cargo").args(["+nightly", "--version"]).env_remove("RUSTUP_TOOLCHAIN").output();
    if !found.is_ok_and(|o| o.status.success()) {
        return Err("AddressSanitizer needs a nightly toolchain: rustup toolchain install nightly".into());
    }
    let mut cargo = Command::new("cargo");
    cargo.arg("+nightly").current_dir(crate::repo_root());
    // What the stable cargo running xtask set must not choose the compiler or the flags.
    for name in ["RUSTUP_TOOLCHAIN", "RUSTC", "RUSTDOC", "RUSTC_WRAPPER", "CARGO", "CARGO_ENCODED_RUSTFLAGS"] {
        cargo.env_remove(name);
    }
    cargo.env("RUSTFLAGS", RUSTFLAGS).env("ASAN_OPTIONS", ASAN_OPTIONS);
    // The target named: the flags then reach the target's crates only, never build scripts or
    // proc-macros, which run in the plain toolchain's process.
    cargo.args(["--config", &format!("build.target={triple:?}")]);
    cargo.args(["--config", &format!("build.target-dir={:?}", target_dir.display().to_string())]);
    Ok(cargo)
}

/// The host's target triple, from the nightly compiler.
fn host_triple() -> Result<String, String> {
    let out = Command::new("rustc")
        .args(["+nightly", "-vV"])
        .env_remove("RUSTUP_TOOLCHAIN")
        .output()
        .map_err(|e| format!("cannot run rustc +nightly: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .ok_or_else(|| "rustc +nightly -vV named no host".into())
}

/// GCC's ASan runtime, to preload into programs that are not instrumented.
pub fn gcc_runtime() -> Result<PathBuf, String> {
    let out = Command::new("gcc").arg("-print-file-name=libasan.so").output().map_err(|e| format!("cannot run gcc: {e}"))?;
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if path.is_absolute() && path.exists() {
        Ok(path)
    } else {
        Err("GCC's libasan.so not found (Debian package libasan8, with gcc)".into())
    }
}
