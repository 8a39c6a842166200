//! `cargo xtask fuzz [--seconds N] [TARGET...]`: coverage-guided fuzzing of the loader's parsers
//! with libFuzzer, on stable Rust.
//!
//! The targets live in `fuzz/` (a crate outside the workspace, on `libfuzzer-sys`); their entry
//! points are `vulkan::fuzzing`. They are built with the coverage instrumentation cargo-fuzz
//! would ask for (`-Cpasses=sancov-module` and its options, all stable codegen flags) for an
//! explicit `--target`, so that build scripts stay uninstrumented. Each target runs for the given
//! time from its checked-in seeds (`fuzz/corpus/<target>`, read only) and a working corpus under
//! `target/fuzz-corpus/`; what libFuzzer finds (a crash, a panic, a timeout, memory blow-up) is
//! written under `target/fuzz-artifacts/<target>/` and fails the command. Copy such a file into
//! `fuzz/regressions/<target>/`: `loader/tests/fuzz_corpus.rs` replays every seed and regression
//! in `cargo test`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGETS: [&str; 5] = ["driver_manifest", "layer_activation", "elf_header", "settings_file", "driver_cache"];

const USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [TARGET...]";

/// What cargo-fuzz passes for libFuzzer's coverage feedback: 8-bit edge counters, the PC table
/// for its coverage report, and comparison tracing (it learns the manifests' keywords).
const COVERAGE_FLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing";

/// One target's run, from libFuzzer's closing statistics.
struct Outcome {
    target: &'static str,
    executions: u64,
    coverage: Option<u64>,
    features: Option<u64>,
    corpus: usize,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let mut seconds = 60u32;
    let mut targets: Vec<&'static str> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = args.next().ok_or(USAGE)?;
                seconds = value.parse().ok().filter(|&s| s > 0).ok_or_else(|| format!("--seconds wants a positive number, got `{value}`"))?;
            }
            name => match TARGETS.iter().find(|t| **t == name) {
                Some(t) => targets.push(t),
                None => return Err(format!("unknown target or argument `{name}` (targets: {})\n{USAGE}", TARGETS.join(", "))),
            },
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    let root = crate::repo_root();
    let binaries = build(&root)?;
    let mut outcomes = Vec::new();
    for target in targets {
        outcomes.push(run(&root, &binaries, target, seconds)?);
    }
    println!("\n{:<18} {:>12} {:>8} {:>9} {:>7}", "target", "executions", "edges", "features", "corpus");
    for o in &outcomes {
        let show = |v: Option<u64>| v.map_or("?".to_string(), |v| v.to_string());
        println!("{:<18} {:>12} {:>8} {:>9} {:>7}", o.target, o.executions, show(o.coverage), show(o.features), o.corpus);
    }
    println!("\n{seconds} s per target, nothing found.");
    Ok(())
}

/// The host triple, so that RUSTFLAGS reach the targets and not the build scripts.
fn host_triple() -> Result<String, String> {
    let out = Command::new("rustc").arg("-vV").output().map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV names no host".into())
}

/// Builds the fuzz targets; returns the directory holding them.
fn build(root: &Path) -> Result<PathBuf, String> {
    let triple = host_triple()?;
    let target_dir = root.join("target/fuzz");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--locked", "--target", &triple, "--target-dir"])
        .arg(&target_dir)
        .current_dir(root.join("fuzz"))
        .env("RUSTFLAGS", COVERAGE_FLAGS)
        .status()
        .map_err(|e| format!("cargo build of fuzz/: {e}"))?;
    if !status.success() {
        return Err(format!("could not build the fuzz targets ({status})"));
    }
    Ok(target_dir.join(triple).join("release"))
}

fn run(root: &Path, binaries: &Path, target: &'static str, seconds: u32) -> Result<Outcome, String> {
    let seeds = root.join("fuzz/corpus").join(target);
    let corpus = root.join("target/fuzz-corpus").join(target);
    let artifacts = root.join("target/fuzz-artifacts").join(target);
    for dir in [&corpus, &artifacts] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    println!("\n== {target}: {seconds} s from {}", seeds.display());
    let out = Command::new(binaries.join(target))
        .arg(&corpus)
        .arg(&seeds)
        .arg(format!("-dict={}", root.join("fuzz/manifest.dict").display()))
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        // Anything slower than this on one input, or growing past this, is a finding.
        .args(["-timeout=10", "-rss_limit_mb=2048", "-max_len=65536", "-print_final_stats=1"])
        .output()
        .map_err(|e| format!("{target}: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        return Err(format!(
            "{target} found a failing input ({}); it is in {}:\n{}",
            out.status,
            artifacts.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ));
    }
    let stat = |name: &str| log.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse::<u64>().ok());
    let (coverage, features) = last_coverage(&log);
    let corpus_size = std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0);
    let outcome = Outcome { target, executions: stat("stat::number_of_executed_units:").unwrap_or(0), coverage, features, corpus: corpus_size };
    println!("{target}: {} executions, {} edges covered", outcome.executions, coverage.map_or("?".into(), |c| c.to_string()));
    Ok(outcome)
}

/// The `cov:` and `ft:` figures of libFuzzer's last status line (`#123 DONE cov: 456 ft: 789 ...`).
fn last_coverage(log: &str) -> (Option<u64>, Option<u64>) {
    let line = log.lines().rev().find(|l| l.starts_with('#') && l.contains(" cov: "));
    let after = |key: &str| line.and_then(|l| l.split(key).nth(1)).and_then(|r| r.split_whitespace().next()).and_then(|v| v.parse().ok());
    (after(" cov: "), after(" ft: "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_is_read_from_the_last_status_line() {
        let log = "#2 INITED cov: 10 ft: 12 corp: 1/1b\n#900 REDUCE cov: 120 ft: 300 corp: 40/2Kb\n#1000 DONE cov: 130 ft: 310 corp: 41/2Kb\n";
        assert_eq!(last_coverage(log), (Some(130), Some(310)));
        assert_eq!(last_coverage("no status"), (None, None));
    }
}
