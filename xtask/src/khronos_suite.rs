//! `cargo xtask khronos-suite --src DIR`: runs the Khronos Vulkan-Loader's own tests against a
//! `libvulkan.so` (ours in release by default) and prints the pass table by test group.
//!
//! The suite is an instrument kept outside the repository: DIR is a snapshot of
//! KhronosGroup/Vulkan-Loader, built with cmake and ninja in a directory of its own (configured on
//! the first run, brought up to date on each run), and its tests load the library under test
//! through their `VK_LOADER_TEST_LOADER_PATH` switch. ctest runs one test per process; its JUnit
//! file lists every test, its summary tells crashes from failures. Failing tests are the
//! measurement, not an error: the exit status is non-zero only when the suite could not be built
//! or run.
//!
//! With `--valgrind` every test runs under valgrind's memcheck instead, with `--asan` against an
//! AddressSanitizer build ([`checked`]), and the report adds each test's errors. With `--m32` the
//! suite is built as 32-bit programs (its own build directory) and run against our i686 library.

mod checked;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Tests left out of every run. The `test_fuzzing` executable's groups (`BadJsonInput`,
/// `JsonStringPrint`, `StringValidation`) call the Khronos loader's internal JSON and string
/// functions, linked in, whatever library is under test; the `integration` tests install the
/// Khronos build and look it up with `find_package`.
const EXCLUDED: &str = r"^(BadJsonInput|JsonStringPrint|StringValidation|integration)\.";

/// Seconds before ctest kills a test (then reported as a crash).
const TIMEOUT_S: u32 = 60;

const USAGE: &str =
    "usage: cargo xtask khronos-suite --src DIR [--headers DIR] [--googletest DIR] \
                     [--build DIR] [--filter REGEX] [--loader PATH] [--jobs N] [--json FILE] [--compare FILE] [--valgrind | --asan] [--m32]";

struct Options {
    /// The Vulkan-Loader checkout.
    src: PathBuf,
    /// The Vulkan-Headers install prefix (holding share/cmake/VulkanHeaders).
    headers: Option<PathBuf>,
    /// The googletest checkout.
    googletest: Option<PathBuf>,
    build: PathBuf,
    /// ctest `-R`: only the tests whose names match.
    filter: Option<String>,
    /// The library to test; ours, built in release, when absent.
    loader: Option<PathBuf>,
    jobs: usize,
    json: Option<PathBuf>,
    /// An earlier run's `--json` file: the tests whose outcome changed are listed.
    compare: Option<PathBuf>,
    /// Each test under a dynamic checker, its errors counted.
    checker: Option<checked::Checker>,
    /// The suite built as 32-bit programs (`-m32`), run against an i686 library.
    m32: bool,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let options = parse_args(args)?;
    build_suite(&options)?;
    let library = match (&options.loader, options.checker) {
        (Some(path), _) => absolute(path)?,
        (None, Some(checked::Checker::Asan)) => crate::asan::build_library(&crate::repo_root().join("target/asan"))?,
        (None, _) => build_our_library(options.m32)?,
    };
    if !library.is_file() {
        return Err(format!("{}: no such library", library.display()));
    }
    let started = Instant::now();
    let report = match options.checker {
        Some(checker) => {
            let logs = options.build.join(match checker {
                checked::Checker::Memcheck => "rust-loader-suite-valgrind",
                checked::Checker::Asan => "rust-loader-suite-asan",
            });
            let filter = options.filter.as_deref();
            let runs = checked::run(checker, &options.build, filter, EXCLUDED, &library, options.jobs, TIMEOUT_S, &logs)?;
            let findings = runs.iter().map(|(result, found)| (result.name.clone(), found.clone())).collect();
            Report::new(runs.into_iter().map(|(result, _)| result).collect()).with_findings(checker, findings)
        }
        None => Report::new(run_suite(&options, &library)?),
    };
    let seconds = started.elapsed().as_secs_f64();
    let under = options.checker.map(|c| format!(", each under {}", c.name())).unwrap_or_default();
    println!("\nKhronos loader tests against {}{under} ({seconds:.0} s)\n", library.display());
    print!("{}", report.table());
    if let Some(earlier) = &options.compare {
        print!("{}", report.changes_since(&read_earlier_run(earlier)?));
    }
    if let Some(file) = &options.json {
        let json = report.json(&library, &options.src, seconds);
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        std::fs::write(file, text + "\n").map_err(|e| format!("{}: {e}", file.display()))?;
    }
    Ok(())
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut values: BTreeMap<&str, &str> = BTreeMap::new();
    let mut args = args.iter();
    let mut checker = None;
    let mut m32 = false;
    while let Some(flag) = args.next() {
        if flag == "--m32" {
            m32 = true;
            continue;
        }
        let named = match flag.as_str() {
            "--valgrind" => Some(checked::Checker::Memcheck),
            "--asan" => Some(checked::Checker::Asan),
            _ => None,
        };
        if let Some(named) = named {
            if checker.replace(named).is_some_and(|earlier| earlier != named) {
                return Err(format!("--valgrind and --asan exclude each other\n{USAGE}"));
            }
            continue;
        }
        let known = [
            "--src",
            "--headers",
            "--googletest",
            "--build",
            "--filter",
            "--loader",
            "--jobs",
            "--json",
            "--compare",
        ];
        if !known.contains(&flag.as_str()) {
            return Err(format!("unknown argument `{flag}`\n{USAGE}"));
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        values.insert(flag, value);
    }
    let path = |flag: &str| values.get(flag).map(|v| absolute(Path::new(v))).transpose();
    let src = path("--src")?.ok_or_else(|| format!("--src is required\n{USAGE}"))?;
    let default_build = if m32 { "build-rust-loader-suite-m32" } else { "build-rust-loader-suite" };
    let build = path("--build")?.unwrap_or_else(|| src.join(default_build));
    let jobs = match values.get("--jobs") {
        Some(n) => n
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("--jobs wants a positive number, got `{n}`"))?,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    // Nothing of the suite may land in the repository, its build output included.
    let root = crate::repo_root();
    for (what, dir) in [("--src", &src), ("--build", &build)] {
        if dir.starts_with(&root) || dir.canonicalize().is_ok_and(|d| d.starts_with(&root)) {
            return Err(format!(
                "{what} {}: the suite stays outside the repository",
                dir.display()
            ));
        }
    }
    Ok(Options {
        src,
        headers: path("--headers")?,
        googletest: path("--googletest")?,
        build,
        filter: values.get("--filter").map(|s| s.to_string()),
        loader: path("--loader")?,
        jobs,
        json: path("--json")?,
        compare: path("--compare")?,
        checker,
        m32,
    })
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Configures the build directory unless cmake has generated it already (`build.ninja`), then
/// builds (a no-op for ninja when everything is up to date).
fn build_suite(options: &Options) -> Result<(), String> {
    if !options.src.join("CMakeLists.txt").is_file() {
        return Err(format!(
            "{}: not a Vulkan-Loader checkout (no CMakeLists.txt)",
            options.src.display()
        ));
    }
    if !options.build.join("build.ninja").is_file() {
        let headers = options
            .headers
            .as_ref()
            .ok_or("configuring the suite needs --headers (a Vulkan-Headers install prefix)")?;
        let googletest = options
            .googletest
            .as_ref()
            .ok_or("configuring the suite needs --googletest (a googletest v1.14.0 checkout)")?;
        check_headers_version(&options.src, headers)?;
        let mut configure = Command::new("cmake");
        configure
            .arg("-S")
            .arg(&options.src)
            .arg("-B")
            .arg(&options.build)
            .args([
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DBUILD_TESTS=ON",
                "-DUPDATE_DEPS=OFF",
                "-DBUILD_WERROR=OFF",
            ])
            // A distribution's prefix: the suite's fake system directories are then /etc/vulkan/...
            .arg("-DCMAKE_INSTALL_PREFIX=/usr")
            .arg(format!("-DCMAKE_PREFIX_PATH={}", headers.display()))
            .arg(format!("-DGOOGLETEST_INSTALL_DIR={}", googletest.display()));
        if options.m32 {
            configure.args(m32_cmake_flags(&options.build)?);
        }
        run_status(&mut configure, "configure the suite")?;
    }
    let mut build = Command::new("cmake");
    build
        .arg("--build")
        .arg(&options.build)
        .arg("--parallel")
        .arg(options.jobs.to_string());
    run_status(&mut build, "build the suite")
}

/// cmake definitions that build the suite as 32-bit x86 programs with the host's multilib gcc
/// (`g++-N-multilib`). The x86 kernel headers (`asm/`) serve both word sizes, but Debian installs
/// them for amd64 only under its multiarch directory, which `-m32` does not search (the
/// unversioned `gcc-multilib` would link `/usr/include/asm`, and conflicts with the cross
/// compilers): a directory in the build tree links to them, searched last.
fn m32_cmake_flags(build: &Path) -> Result<Vec<String>, String> {
    let include = build.join("m32-include");
    std::fs::create_dir_all(&include).map_err(|e| format!("{}: {e}", include.display()))?;
    let asm = include.join("asm");
    if !asm.exists() {
        std::os::unix::fs::symlink("/usr/include/x86_64-linux-gnu/asm", &asm)
            .map_err(|e| format!("{}: {e}", asm.display()))?;
    }
    let compile = format!("-m32 -idirafter {}", include.display());
    let mut flags = vec![
        format!("-DCMAKE_C_FLAGS={compile}"),
        format!("-DCMAKE_CXX_FLAGS={compile}"),
        "-DCMAKE_SYSTEM_PROCESSOR=i686".to_string(),
        "-DCMAKE_LIBRARY_ARCHITECTURE=i386-linux-gnu".to_string(),
    ];
    for kind in ["ASM", "EXE_LINKER", "SHARED_LINKER", "MODULE_LINKER"] {
        flags.push(format!("-DCMAKE_{kind}_FLAGS=-m32"));
    }
    Ok(flags)
}

/// The suite asks for `find_package(VulkanHeaders ${PROJECT_VERSION} ...)`, which quietly refuses
/// older headers and then fails far from the cause: say so up front. The snapshot is the user's;
/// we never edit it.
fn check_headers_version(src: &Path, headers: &Path) -> Result<(), String> {
    let config = headers.join("share/cmake/VulkanHeaders/VulkanHeadersConfigVersion.cmake");
    let config_text = std::fs::read_to_string(&config)
        .map_err(|e| format!("--headers: {}: {e}", config.display()))?;
    let headers_version = quoted_after(&config_text, "set(PACKAGE_VERSION \"")
        .ok_or_else(|| format!("{}: no PACKAGE_VERSION", config.display()))?;
    let lists = src.join("CMakeLists.txt");
    let lists_text =
        std::fs::read_to_string(&lists).map_err(|e| format!("{}: {e}", lists.display()))?;
    let Some(suite_version) = lists_text
        .split("project(VULKAN_LOADER VERSION ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
    else {
        return Ok(());
    };
    let requirement = "find_package(VulkanHeaders ${PROJECT_VERSION}";
    if lists_text.contains(requirement) && version_key(headers_version) < version_key(suite_version)
    {
        return Err(format!(
            "Vulkan-Headers {headers_version} ({}) is older than the suite's {suite_version}, and {} asks for \
             `{requirement} ...)`, which refuses it.\nUse Vulkan-Headers {suite_version} or newer, or relax that line \
             in your scratch copy of the suite to `find_package(VulkanHeaders CONFIG QUIET)`; this tool does not \
             edit the snapshot.",
            headers.display(),
            lists.display()
        ));
    }
    Ok(())
}

/// The text between `prefix` and the next `"`.
fn quoted_after<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.split(prefix).nth(1)?.split('"').next()
}

/// `1.4.360` as `[1, 4, 360]`, to compare versions numerically.
fn version_key(version: &str) -> Vec<u32> {
    version
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// `cargo build --release -p loader` (for i686 with `m32`); returns the library it links.
fn build_our_library(m32: bool) -> Result<PathBuf, String> {
    let root = crate::repo_root();
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .args(["build", "--release", "-p", "loader"])
        .current_dir(&root);
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let release = if m32 {
        cargo.args(["--target", I686]);
        target_dir.join(I686).join("release")
    } else {
        target_dir.join("release")
    };
    run_status(&mut cargo, "build libvulkan.so")?;
    Ok(release.join("libvulkan.so"))
}

const I686: &str = "i686-unknown-linux-gnu";

fn run_status(command: &mut Command, what: &str) -> Result<(), String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("could not {what}: {program} failed ({status})"))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    Passed,
    Failed,
    /// Killed by a signal, aborted or timed out.
    Crashed,
    /// Skipped by the test itself or disabled.
    NotRun,
}

struct TestResult {
    name: String,
    outcome: Outcome,
    /// ctest's word for it: `Passed`, `Failed`, `SEGFAULT`, `Subprocess aborted`, `Timeout`, ...
    status: String,
}

fn run_suite(options: &Options, library: &Path) -> Result<Vec<TestResult>, String> {
    let junit = options.build.join("rust-loader-suite-junit.xml");
    let _ = std::fs::remove_file(&junit);
    let mut ctest = Command::new("ctest");
    ctest
        .arg("--test-dir")
        .arg(&options.build)
        .args([
            "-j",
            &options.jobs.to_string(),
            "--timeout",
            &TIMEOUT_S.to_string(),
            "-E",
            EXCLUDED,
        ])
        .arg("--output-junit")
        .arg(&junit);
    if let Some(filter) = &options.filter {
        ctest.args(["-R", filter]);
    }
    // The tests set the Vulkan variables they need; one left over from our environment would
    // change what the loader under test sees.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("VK_") {
            ctest.env_remove(name);
        }
    }
    ctest
        .env("VK_LOADER_TEST_LOADER_PATH", library)
        .stdout(Stdio::piped());
    println!(
        "$ VK_LOADER_TEST_LOADER_PATH={} ctest --test-dir {} -j {} ...",
        library.display(),
        options.build.display(),
        options.jobs
    );
    let mut child = ctest
        .spawn()
        .map_err(|e| format!("cannot start ctest: {e}"))?;
    // Pass ctest's progress through and keep it: its summary holds the crash statuses.
    let mut output = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("stdout is piped")).lines() {
        let line = line.map_err(|e| format!("reading ctest's output: {e}"))?;
        println!("{line}");
        output.push(line);
    }
    // ctest's exit status says whether tests failed: the report says that.
    child.wait().map_err(|e| format!("ctest: {e}"))?;
    let xml = std::fs::read_to_string(&junit)
        .map_err(|e| format!("ctest wrote no results ({}: {e})", junit.display()))?;
    let results = parse_results(&xml, &failure_statuses(&output))?;
    if results.is_empty() {
        return Err("no test ran: check --filter and the build directory".into());
    }
    Ok(results)
}

/// The statuses in ctest's closing list, `The following tests FAILED:` then lines like
/// `\t549 - SettingsFile.CyclicMetaLayerComponentDoesNotRecurse (SEGFAULT)`. ctest 3.25's JUnit
/// file says only `fail` for all of them.
fn failure_statuses(output: &[String]) -> BTreeMap<String, String> {
    let start = output
        .iter()
        .position(|line| line.starts_with("The following tests FAILED:"));
    let listed = start.map_or(&[][..], |i| &output[i + 1..]);
    listed
        .iter()
        .map_while(|line| {
            let (_number, rest) = line.trim_start().split_once(" - ")?;
            let (name, status) = rest.rsplit_once(" (")?;
            Some((name.to_string(), status.strip_suffix(')')?.to_string()))
        })
        .collect()
}

/// Every `<testcase>` of ctest's JUnit file, with its outcome.
fn parse_results(
    xml: &str,
    failure_statuses: &BTreeMap<String, String>,
) -> Result<Vec<TestResult>, String> {
    let document =
        roxmltree::Document::parse(xml).map_err(|e| format!("ctest's JUnit file: {e}"))?;
    let mut results = Vec::new();
    for case in document
        .descendants()
        .filter(|node| node.has_tag_name("testcase"))
    {
        let name = case
            .attribute("name")
            .ok_or("ctest's JUnit file: a testcase without a name")?
            .to_string();
        let (outcome, status) = match case.attribute("status") {
            Some("run") => (Outcome::Passed, "Passed".to_string()),
            Some("fail") => {
                let status = failure_statuses
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| "Failed".into());
                (
                    if status == "Failed" {
                        Outcome::Failed
                    } else {
                        Outcome::Crashed
                    },
                    status,
                )
            }
            _ if case.children().any(|child| child.has_tag_name("disabled")) => {
                (Outcome::NotRun, "Disabled".into())
            }
            _ => (Outcome::NotRun, "Skipped".into()),
        };
        results.push(TestResult {
            name,
            outcome,
            status,
        });
    }
    results.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(results)
}

/// The tests an earlier `--json` file lists as not passed, with their status.
fn read_earlier_run(file: &Path) -> Result<BTreeMap<String, String>, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("--compare {}: {e}", file.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("--compare {}: {e}", file.display()))?;
    let listed = json["not_passed"].as_array().ok_or_else(|| format!("--compare {}: no not_passed list", file.display()))?;
    Ok(listed
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?.to_string(), t["status"].as_str().unwrap_or("?").to_string())))
        .collect())
}

#[derive(Default, Clone, Copy)]
struct Counts {
    passed: usize,
    failed: usize,
    crashed: usize,
    not_run: usize,
}

impl Counts {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Crashed => self.crashed += 1,
            Outcome::NotRun => self.not_run += 1,
        }
    }

    fn total(&self) -> usize {
        self.passed + self.failed + self.crashed + self.not_run
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "passed": self.passed,
            "failed": self.failed,
            "crashed": self.crashed,
            "not_run": self.not_run,
            "total": self.total(),
        })
    }
}

struct Report {
    /// By googletest suite, the part of the test name before the first `.`.
    groups: BTreeMap<String, Counts>,
    totals: Counts,
    results: Vec<TestResult>,
    /// With `--valgrind` or `--asan`: the checker and its findings by test name.
    findings: Option<(checked::Checker, BTreeMap<String, checked::Findings>)>,
}

impl Report {
    fn new(results: Vec<TestResult>) -> Report {
        let mut groups: BTreeMap<String, Counts> = BTreeMap::new();
        let mut totals = Counts::default();
        for result in &results {
            let group = result.name.split('.').next().unwrap_or(&result.name);
            groups
                .entry(group.to_string())
                .or_default()
                .add(result.outcome);
            totals.add(result.outcome);
        }
        Report {
            groups,
            totals,
            results,
            findings: None,
        }
    }

    fn with_findings(self, checker: checked::Checker, findings: BTreeMap<String, checked::Findings>) -> Report {
        Report { findings: Some((checker, findings)), ..self }
    }

    /// The tests the checker found errors in, by name.
    fn with_errors(&self) -> impl Iterator<Item = (&String, &checked::Findings)> {
        self.findings.iter().flat_map(|(_, f)| f).filter(|(_, found)| found.errors > 0)
    }

    /// The checker's part of the table: the totals and each test with errors, by kind.
    fn findings_table(&self) -> String {
        let Some((checker, findings)) = &self.findings else { return String::new() };
        let errors: u32 = findings.values().map(|f| f.errors).sum();
        let with_errors: Vec<_> = self.with_errors().collect();
        let mut text = format!(
            "\n{}: {} of {} tests with errors, {errors} errors in all\n",
            checker.name(),
            with_errors.len(),
            findings.len()
        );
        for (name, found) in with_errors {
            let kinds: Vec<String> = found.kinds.iter().map(|(kind, n)| format!("{n} x {kind}")).collect();
            text += &format!("  {name}: {} errors ({}); {}\n", found.errors, kinds.join(", "), found.log.display());
        }
        text
    }

    fn pass_percent(&self) -> f64 {
        100.0 * self.totals.passed as f64 / self.totals.total() as f64
    }

    fn not_passed(&self) -> impl Iterator<Item = &TestResult> {
        self.results
            .iter()
            .filter(|result| result.outcome != Outcome::Passed)
    }

    fn table(&self) -> String {
        let width = self
            .groups
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max("group".len());
        let row = |name: &str, c: &Counts| {
            format!(
                "{name:<width$} {:>6} {:>6} {:>7} {:>7} {:>6}\n",
                c.passed,
                c.failed,
                c.crashed,
                c.not_run,
                c.total()
            )
        };
        let mut text = format!(
            "{:<width$} {:>6} {:>6} {:>7} {:>7} {:>6}\n",
            "group", "passed", "failed", "crashed", "not run", "total"
        );
        for (group, counts) in &self.groups {
            text += &row(group, counts);
        }
        text += &row("total", &self.totals);
        text += &format!(
            "\npassed {}/{} ({:.1}%)\n",
            self.totals.passed,
            self.totals.total(),
            self.pass_percent()
        );
        if self.not_passed().next().is_some() {
            text += "\nnot passed:\n";
            for result in self.not_passed() {
                text += &format!("  {} ({})\n", result.name, result.status);
            }
        }
        text + &self.findings_table()
    }

    /// The tests that pass now and did not in the earlier run, and the reverse (tests the earlier
    /// run did not have count as passing then).
    fn changes_since(&self, earlier_not_passed: &BTreeMap<String, String>) -> String {
        let now_not_passed: BTreeMap<&str, &str> = self.not_passed().map(|r| (r.name.as_str(), r.status.as_str())).collect();
        let fixed: Vec<String> = self
            .results
            .iter()
            .filter(|r| r.outcome == Outcome::Passed)
            .filter_map(|r| earlier_not_passed.get(&r.name).map(|was| format!("  {} (was {was})\n", r.name)))
            .collect();
        let broken: Vec<String> = now_not_passed
            .iter()
            .filter(|(name, _)| !earlier_not_passed.contains_key(**name))
            .map(|(name, status)| format!("  {name} ({status})\n"))
            .collect();
        format!(
            "\nsince the earlier run: {} newly passing, {} newly not passing\n{}{}",
            fixed.len(),
            broken.len(),
            if fixed.is_empty() { String::new() } else { format!("newly passing:\n{}", fixed.concat()) },
            if broken.is_empty() { String::new() } else { format!("newly not passing:\n{}", broken.concat()) },
        )
    }

    fn json(&self, library: &Path, src: &Path, seconds: f64) -> serde_json::Value {
        let groups: serde_json::Map<String, serde_json::Value> = self
            .groups
            .iter()
            .map(|(group, counts)| (group.clone(), counts.json()))
            .collect();
        let not_passed: Vec<serde_json::Value> = self
            .not_passed()
            .map(|result| serde_json::json!({ "name": result.name, "status": result.status }))
            .collect();
        let mut json = serde_json::json!({
            "loader": library.display().to_string(),
            "suite": src.display().to_string(),
            "excluded": EXCLUDED,
            "seconds": seconds,
            "groups": groups,
            "totals": self.totals.json(),
            "pass_percent": self.pass_percent(),
            "not_passed": not_passed,
        });
        if let Some((checker, findings)) = &self.findings {
            let per_test: serde_json::Map<String, serde_json::Value> = findings
                .iter()
                .map(|(name, found)| (name.clone(), serde_json::json!({ "errors": found.errors, "kinds": found.kinds })))
                .collect();
            json["checker"] = serde_json::json!({
                "name": checker.name(),
                "tests_with_errors": self.with_errors().count(),
                "errors": findings.values().map(|f| f.errors).sum::<u32>(),
                "per_test": per_test,
            });
        }
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crashes_are_told_from_failures_by_ctest_summary() {
        let output: Vec<String> = [
            "90% tests passed, 3 tests failed out of 30",
            "The following tests FAILED:",
            "\t520 - SettingsFile.FileExist (Failed)",
            "\t549 - SettingsFile.Cyclic (SEGFAULT)",
            "\t 12 - Wsi.Surface/1 (Subprocess aborted)",
            "Errors while running CTest",
        ]
        .map(String::from)
        .to_vec();
        let xml = r#"<?xml version="1.0"?><testsuite>
            <testcase name="SettingsFile.FileExist" status="fail"><failure message=""/></testcase>
            <testcase name="SettingsFile.Cyclic" status="fail"><failure message=""/></testcase>
            <testcase name="Wsi.Surface/1" status="fail"><failure message=""/></testcase>
            <testcase name="Allocation.Instance" status="run"/>
            <testcase name="Allocation.Skip" status="notrun"><skipped message=""/></testcase>
            </testsuite>"#;
        let report = Report::new(parse_results(xml, &failure_statuses(&output)).unwrap());
        let outcomes: Vec<(&str, &str)> = report
            .results
            .iter()
            .map(|r| (r.name.as_str(), r.status.as_str()))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("Allocation.Instance", "Passed"),
                ("Allocation.Skip", "Skipped"),
                ("SettingsFile.Cyclic", "SEGFAULT"),
                ("SettingsFile.FileExist", "Failed"),
                ("Wsi.Surface/1", "Subprocess aborted"),
            ]
        );
        let settings = report.groups["SettingsFile"];
        assert_eq!(
            (
                settings.passed,
                settings.failed,
                settings.crashed,
                settings.total()
            ),
            (0, 1, 1, 2)
        );
        assert_eq!(
            (
                report.totals.passed,
                report.totals.crashed,
                report.totals.not_run,
                report.totals.total()
            ),
            (1, 2, 1, 5)
        );
    }

    #[test]
    fn changes_are_listed_both_ways() {
        let xml = r#"<testsuite>
            <testcase name="A.Fixed" status="run"/>
            <testcase name="A.Broken" status="fail"/>
            <testcase name="A.StillFailing" status="fail"/>
            </testsuite>"#;
        let report = Report::new(parse_results(xml, &BTreeMap::new()).unwrap());
        let earlier: BTreeMap<String, String> =
            [("A.Fixed", "SEGFAULT"), ("A.StillFailing", "Failed")].map(|(n, s)| (n.to_string(), s.to_string())).into();
        let text = report.changes_since(&earlier);
        assert!(text.contains("1 newly passing, 1 newly not passing"), "{text}");
        assert!(text.contains("A.Fixed (was SEGFAULT)") && text.contains("A.Broken (Failed)"), "{text}");
        assert!(!text.contains("StillFailing"), "{text}");
    }

    #[test]
    fn versions_compare_numerically() {
        assert!(version_key("1.4.359") < version_key("1.4.360"));
        assert!(version_key("1.10.0") > version_key("1.9.300"));
        assert_eq!(
            quoted_after("set(PACKAGE_VERSION \"1.4.359\")", "set(PACKAGE_VERSION \""),
            Some("1.4.359")
        );
    }
}
