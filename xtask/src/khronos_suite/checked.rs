//! `khronos-suite --valgrind` and `--asan`: every test of the suite run under a dynamic checker,
//! one process per test as ctest runs them. ctest lists the tests with their command lines and
//! properties (`--show-only=json-v1`); each command is then run here under valgrind's memcheck, or
//! with GCC's ASan runtime preloaded against an ASan build of the library, the checker's log in a
//! file of its own, from which its errors are counted by kind. The test's own outcome is read as
//! ctest reads it (exit status, gtest's skip line, the timeout), so the pass table is the same one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Outcome, TestResult};

/// The dynamic checker the tests run under.
#[derive(Clone, Copy, PartialEq)]
pub enum Checker {
    /// valgrind's memcheck, definite leaks counted.
    Memcheck,
    /// AddressSanitizer: the library under test is instrumented, GCC's runtime preloaded.
    Asan,
}

impl Checker {
    pub fn name(self) -> &'static str {
        match self {
            Checker::Memcheck => "valgrind's memcheck",
            Checker::Asan => "AddressSanitizer",
        }
    }
}

/// A checker's findings in one test's processes (a death test forks: its child's count too).
#[derive(Default, Clone)]
pub struct Findings {
    /// Memcheck: the sum of the `ERROR SUMMARY` lines, definite leaks included; ASan: its reports.
    pub errors: u32,
    /// Errors by kind (`Invalid read of size 8`, `definite leak`, `heap-use-after-free`, ...), each
    /// report counted once.
    pub kinds: BTreeMap<String, u32>,
    /// Where the checker's log is (ASan: its prefix, one file per process).
    pub log: PathBuf,
}

/// How much slower a test runs under memcheck than natively, for its timeout.
const SLOWDOWN: u32 = 10;

/// One test as ctest would run it.
struct Listed {
    name: String,
    command: Vec<String>,
    directory: Option<PathBuf>,
    environment: Vec<(String, String)>,
    disabled: bool,
}

/// Runs each test ctest lists (`filter` and `excluded` as its `-R` and `-E`) under `checker`,
/// `jobs` at a time, against `library`; the checker's logs go to `logs`.
#[allow(clippy::too_many_arguments)]
pub fn run(
    checker: Checker,
    build: &Path,
    filter: Option<&str>,
    excluded: &str,
    library: &Path,
    jobs: usize,
    timeout_s: u32,
    logs: &Path,
) -> Result<Vec<(TestResult, Findings)>, String> {
    let launcher = Launcher::new(checker)?;
    let tests = list(build, filter, excluded)?;
    if tests.is_empty() {
        return Err("no test to run: check --filter and the build directory".into());
    }
    let _ = std::fs::remove_dir_all(logs);
    std::fs::create_dir_all(logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let timeout = Duration::from_secs(u64::from(timeout_s * SLOWDOWN));
    println!(
        "$ VK_LOADER_TEST_LOADER_PATH={} <test> under {} ({} tests, {jobs} at a time; logs in {})",
        library.display(),
        checker.name(),
        tests.len(),
        logs.display()
    );
    let next = Mutex::new(tests.iter());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let Some(test) = next.lock().expect("the test list").next() else { break };
                let log = logs.join(format!("{}.log", test.name.replace(['/', ' '], "_")));
                let result = run_one(&launcher, test, library, &log, timeout);
                println!("{:<70} {:<10} {} errors", test.name, result.0.status, result.1.errors);
                results.lock().expect("the results").push(result);
            });
        }
    });
    let mut results = results.into_inner().expect("the results");
    results.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(results)
}

/// The tests of `ctest --show-only=json-v1`.
fn list(build: &Path, filter: Option<&str>, excluded: &str) -> Result<Vec<Listed>, String> {
    let mut ctest = Command::new("ctest");
    ctest.arg("--test-dir").arg(build).args(["--show-only=json-v1", "-E", excluded]);
    if let Some(filter) = filter {
        ctest.args(["-R", filter]);
    }
    let out = ctest.output().map_err(|e| format!("cannot start ctest: {e}"))?;
    if !out.status.success() {
        return Err(format!("ctest --show-only failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("ctest's test list: {e}"))?;
    let tests = json["tests"].as_array().ok_or("ctest's test list has no tests array")?;
    tests.iter().map(listed).collect()
}

fn listed(test: &serde_json::Value) -> Result<Listed, String> {
    let name = test["name"].as_str().ok_or("a test without a name")?.to_string();
    let command: Vec<String> = test["command"].as_array().into_iter().flatten().filter_map(|w| w.as_str().map(String::from)).collect();
    if command.is_empty() {
        return Err(format!("{name}: no command"));
    }
    let mut listed = Listed { name, command, directory: None, environment: Vec::new(), disabled: false };
    for property in test["properties"].as_array().into_iter().flatten() {
        let value = &property["value"];
        match property["name"].as_str() {
            Some("WORKING_DIRECTORY") => listed.directory = value.as_str().map(PathBuf::from),
            Some("ENVIRONMENT") => {
                let entries = value.as_array().into_iter().flatten().filter_map(|e| e.as_str()?.split_once('='));
                listed.environment = entries.map(|(k, v)| (k.to_string(), v.to_string())).collect();
            }
            Some("DISABLED") => listed.disabled = value.as_bool().unwrap_or(false),
            _ => {}
        }
    }
    Ok(listed)
}

/// How a test is started under its checker.
enum Launcher {
    Memcheck { suppressions: PathBuf },
    Asan { runtime: PathBuf },
}

impl Launcher {
    fn new(checker: Checker) -> Result<Launcher, String> {
        Ok(match checker {
            Checker::Memcheck => {
                let found = Command::new("valgrind").arg("--version").output();
                if !found.is_ok_and(|o| o.status.success()) {
                    return Err("--valgrind needs valgrind (Debian package valgrind)".into());
                }
                Launcher::Memcheck { suppressions: crate::repo_root().join("loader/tests/system-libraries.supp") }
            }
            Checker::Asan => Launcher::Asan { runtime: crate::asan::gcc_runtime()? },
        })
    }

    /// The test's command line under the checker, logging to `log`.
    fn command(&self, test: &[String], log: &Path) -> Command {
        match self {
            Launcher::Memcheck { suppressions } => {
                let mut command = Command::new("valgrind");
                command
                    .args(["--leak-check=full", "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite", "--num-callers=30"])
                    // Leaks found at exit name their frames in libraries unloaded by then.
                    .arg("--keep-debuginfo=yes")
                    .arg(format!("--suppressions={}", suppressions.display()))
                    .arg(format!("--log-file={}", log.display()))
                    .args(test);
                command
            }
            Launcher::Asan { runtime } => {
                let mut command = Command::new(&test[0]);
                let options = format!("{}:log_path={}", crate::asan::ASAN_OPTIONS, log.display());
                command.args(&test[1..]).env("LD_PRELOAD", runtime).env("ASAN_OPTIONS", options);
                command
            }
        }
    }
}

/// Runs one test under its checker and reads its outcome and the checker's log.
fn run_one(launcher: &Launcher, test: &Listed, library: &Path, log: &Path, timeout: Duration) -> (TestResult, Findings) {
    let result = |outcome, status: &str| TestResult { name: test.name.clone(), outcome, status: status.to_string() };
    if test.disabled {
        return (result(Outcome::NotRun, "Disabled"), Findings::default());
    }
    let mut command = launcher.command(&test.command, log);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    if let Some(directory) = &test.directory {
        command.current_dir(directory);
    }
    // As for the plain run: the tests set the Vulkan variables they need.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("VK_") {
            command.env_remove(name);
        }
    }
    command.env("VK_LOADER_TEST_LOADER_PATH", library).envs(test.environment.iter().map(|(k, v)| (k, v)));
    let (outcome, status) = match wait_within(&mut command, timeout) {
        Err(e) => (Outcome::Crashed, e),
        Ok(None) => (Outcome::Crashed, "Timeout".to_string()),
        Ok(Some((status, stdout))) => outcome_of(status, &stdout),
    };
    let findings = match launcher {
        Launcher::Memcheck { .. } => read_memcheck_log(log),
        Launcher::Asan { .. } => read_asan_logs(log),
    };
    (result(outcome, &status), findings)
}

/// Starts `command`, reads its stdout, and kills it after `limit`: its status and output, or
/// `None` when it ran past the limit.
fn wait_within(command: &mut Command, limit: Duration) -> Result<Option<(std::process::ExitStatus, String)>, String> {
    use std::io::Read;
    let mut child = command.spawn().map_err(|e| format!("cannot start valgrind: {e}"))?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(Some((status, reader.join().unwrap_or_default())));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The outcome as ctest tells it: a signal is a crash, gtest's `[  SKIPPED ]` a skip (the suite's
/// `SKIP_REGULAR_EXPRESSION`), any other non-zero status a failure.
fn outcome_of(status: std::process::ExitStatus, stdout: &str) -> (Outcome, String) {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        return (Outcome::Crashed, format!("signal {signal}"));
    }
    match status.code() {
        Some(0) if stdout.contains("[  SKIPPED ]") => (Outcome::NotRun, "Skipped".into()),
        Some(0) => (Outcome::Passed, "Passed".into()),
        _ => (Outcome::Failed, "Failed".into()),
    }
}

fn read_memcheck_log(log: &Path) -> Findings {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    Findings { log: log.to_path_buf(), ..parse_memcheck_log(&text) }
}

/// ASan's reports: it writes `<log_path>.<pid>` for each process that found an error.
fn read_asan_logs(log: &Path) -> Findings {
    let (Some(dir), Some(prefix)) = (log.parent(), log.file_name().map(|n| format!("{}.", n.to_string_lossy()))) else {
        return Findings::default();
    };
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let texts: Vec<String> = entries
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    Findings { log: log.to_path_buf(), ..parse_asan_logs(&texts.concat()) }
}

/// Each `==PID==ERROR: AddressSanitizer: <kind> on address ...` line is one report.
fn parse_asan_logs(text: &str) -> Findings {
    let mut findings = Findings::default();
    for line in text.lines() {
        let Some(rest) = line.split_once("ERROR: AddressSanitizer: ").map(|(_, rest)| rest) else { continue };
        let kind = rest.split(" on ").next().unwrap_or(rest).trim();
        findings.errors += 1;
        *findings.kinds.entry(kind.to_string()).or_default() += 1;
    }
    findings
}

/// The errors of a memcheck log (`==PID== ERROR SUMMARY: N errors from M contexts`, summed over
/// the processes that wrote it) and each error's kind, from the first line of its report.
fn parse_memcheck_log(text: &str) -> Findings {
    let mut memcheck = Findings::default();
    for line in text.lines() {
        let Some(body) = line.strip_prefix("==").and_then(|l| l.split_once("== ")).map(|(_, body)| body) else { continue };
        if let Some(rest) = body.strip_prefix("ERROR SUMMARY: ") {
            memcheck.errors += rest.split_whitespace().next().and_then(|n| n.replace(',', "").parse::<u32>().ok()).unwrap_or(0);
        } else if let Some(kind) = error_kind(body) {
            *memcheck.kinds.entry(kind).or_default() += 1;
        }
    }
    memcheck
}

/// The kind of error a report line opens, if it opens one.
fn error_kind(line: &str) -> Option<String> {
    const OPENINGS: [&str; 10] = [
        "Invalid read of size",
        // A call through a NULL or wild function pointer (a death test's child makes one on purpose).
        "Jump to the invalid address",
        "Invalid write of size",
        "Conditional jump or move depends on uninitialised value",
        "Use of uninitialised value of size",
        "Syscall param",
        "Invalid free()",
        "Mismatched free()",
        "Source and destination overlap",
        "Argument 'size' of function",
    ];
    if line.contains("are definitely lost in loss record") {
        return Some("definite leak".into());
    }
    let opening = OPENINGS.iter().find(|o| line.starts_with(**o))?;
    // "Syscall param write(buf) points to uninitialised byte(s)": keep the call; sizes stay.
    Some(match *opening {
        "Conditional jump or move depends on uninitialised value" | "Invalid free()" | "Mismatched free()" | "Jump to the invalid address" => {
            (*opening).to_string()
        }
        _ => line.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_summed_over_processes_and_counted_by_kind() {
        let log = "\
==10== Memcheck, a memory error detector
==10== Invalid read of size 8
==10==    at 0x1: same_device (mod.rs:512)
==10== 
==10== Invalid read of size 8
==10==    at 0x1: same_device (mod.rs:512)
==11== Conditional jump or move depends on uninitialised value(s)
==11==    at 0x2: f (a.c:1)
==10== 24 bytes in 1 blocks are definitely lost in loss record 3 of 9
==12== Jump to the invalid address stated on the next line
==12==    at 0x0: ???
==12== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)
==11== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)
==10== ERROR SUMMARY: 1,039 errors from 3 contexts (suppressed: 2 from 2)
";
        let memcheck = parse_memcheck_log(log);
        assert_eq!(memcheck.errors, 1041);
        let kinds: Vec<(&str, u32)> = memcheck.kinds.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(
            kinds,
            [
                ("Conditional jump or move depends on uninitialised value", 1),
                ("Invalid read of size 8", 2),
                ("Jump to the invalid address", 1),
                ("definite leak", 1)
            ]
        );
    }

    #[test]
    fn asan_reports_are_counted_by_kind() {
        let text = "\
==9076==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000007250 at pc 0x7f5b8e066eae
    #0 0x7f5b8e066ead in same_device loader/src/lazy/mod.rs:523
==9080==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x1 bp 0x2 sp 0x3 T0)
";
        let findings = parse_asan_logs(text);
        assert_eq!(findings.errors, 2);
        assert_eq!(findings.kinds.keys().collect::<Vec<_>>(), ["SEGV", "heap-use-after-free"]);
    }

    #[test]
    fn skips_and_signals_are_told_as_ctest_tells_them() {
        use std::os::unix::process::ExitStatusExt;
        let status = |raw| std::process::ExitStatus::from_raw(raw);
        assert!(matches!(outcome_of(status(0), "[  PASSED  ] 1 test."), (Outcome::Passed, _)));
        assert!(matches!(outcome_of(status(0), "[  SKIPPED ] 1 test"), (Outcome::NotRun, _)));
        assert!(matches!(outcome_of(status(1 << 8), ""), (Outcome::Failed, _)));
        assert_eq!(outcome_of(status(11), "").1, "signal 11");
    }

    #[test]
    fn a_listed_test_keeps_its_directory_environment_and_disabled_flag() {
        let json = serde_json::json!({
            "name": "A.B",
            "command": ["/suite/test_regression", "--gtest_filter=A.B"],
            "properties": [
                {"name": "WORKING_DIRECTORY", "value": "/suite"},
                {"name": "ENVIRONMENT", "value": ["X=1", "Y=a=b"]},
                {"name": "DISABLED", "value": true}
            ]
        });
        let test = listed(&json).unwrap();
        assert_eq!(test.command, ["/suite/test_regression", "--gtest_filter=A.B"]);
        assert_eq!(test.directory.as_deref(), Some(Path::new("/suite")));
        assert_eq!(test.environment, [("X".to_string(), "1".to_string()), ("Y".to_string(), "a=b".to_string())]);
        assert!(test.disabled);
    }
}
