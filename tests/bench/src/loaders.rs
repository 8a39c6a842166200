//! `loaders`: our `libvulkan.so` against the system Khronos loader, back to back in one run, on the
//! project's test driver in an isolated environment (see `sandbox`). Every measurement runs in a
//! fresh child process with one loader in it (`child`); this module decides what runs, collects
//! the figures and prints the table (ours, system, ratio ours/system, target) and the JSON.
//!
//! With another Khronos build (`--khronos`, e.g. the newest release built from source), every
//! case is measured a second time, ours beside it, and the table gains its column and the ratio
//! of that pass: each ratio compares figures taken back to back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::sandbox::{Sandbox, Scenario, LAYER_MANIFESTS};
use crate::{json_num, json_str, machine, trace};

pub const SYSTEM_LOADER: &str = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1";

/// The system loader, or the one `LOADER_BENCH_SYSTEM_LOADER` names (e.g. a copy carried to a
/// machine that lacks libvulkan1).
pub fn system_loader() -> PathBuf {
    std::env::var_os("LOADER_BENCH_SYSTEM_LOADER").map_or_else(|| PathBuf::from(SYSTEM_LOADER), PathBuf::from)
}
/// The pass-through test layer the enabled-layer cases need, looked for beside our library.
pub const PASS_THROUGH_LAYER: &str = "libvk_test_layer.so";
/// Per-call differences smaller than this (a fifth of a cycle at 4 GHz) are not resolved.
const OVERHEAD_RESOLUTION_NS: f64 = 0.05;
/// ...and through layers, where the chain costs tens of nanoseconds, neither are 2% of it.
const OVERHEAD_RELATIVE_RESOLUTION: f64 = 0.02;
/// Fresh processes per loader for the first (cold) creation, alternating loaders; the median is
/// reported. Each is a few hundred microseconds that vary by a tenth from one process to the next
/// on a shared machine: with 31, the ratio moved by 0.1 between runs; with 201, by some 0.02.
const COLD_PROCESSES: usize = 201;
/// Fresh processes whose first creation writes the record (the cache emptied before each).
const RECORD_PROCESSES: usize = 51;
/// Fresh processes per loader for resident memory, which varies by some 100 KiB from one to the
/// next (where address randomisation puts the libraries against the kernel's fault-around
/// windows); the median is reported.
const MEMORY_PROCESSES: usize = 9;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Side {
    Ours,
    System,
}

/// Figures by (side, scenario, key).
type Results = BTreeMap<(Side, String, String), Vec<f64>>;

struct Bench {
    exe: PathBuf,
    ours: PathBuf,
    system: PathBuf,
    sandbox: Sandbox,
    results: Results,
}

impl Bench {
    fn loader(&self, side: Side) -> &Path {
        match side {
            Side::Ours => &self.ours,
            Side::System => &self.system,
        }
    }

    /// Runs `child <group>` for one side in one scenario and records its results.
    fn child(&mut self, side: Side, scenario: Scenario, group: &str) -> Result<(), String> {
        self.run_child(Some(side), scenario, group)
    }

    /// Runs `child draw-pair <ours> <system>`: both loaders in one process; its keys say the side.
    /// Twice, each loader first once (see `child::draw_pair`); each figure keeps its best.
    fn pair(&mut self, scenario: Scenario) -> Result<(), String> {
        self.run_child(None, scenario, "draw-pair")?;
        self.run_child(None, scenario, "draw-pair-system-first")
    }

    fn run_child(&mut self, side: Option<Side>, scenario: Scenario, group: &str) -> Result<(), String> {
        let mut command = self.sandbox.command(scenario, &self.exe);
        command.args(["child", group]);
        match side {
            Some(side) => command.arg(self.loader(side)),
            None => command.arg(&self.ours).arg(&self.system),
        };
        let what = format!("child {group} ({side:?}, {})", scenario.name());
        for (key, value) in crate::child::run(&mut command, &what)? {
            let (side, key) = match side {
                Some(side) => (side, key.as_str()),
                None => match key.split_once('_') {
                    Some(("ours", key)) => (Side::Ours, key),
                    Some(("system", key)) => (Side::System, key),
                    _ => return Err(format!("child {group}: key {key} names no side")),
                },
            };
            self.results.entry((side, scenario.name(), key.to_string())).or_default().push(value);
        }
        Ok(())
    }

    /// Both loaders, ours first.
    fn both(&mut self, scenario: Scenario, group: &str) -> Result<(), String> {
        self.child(Side::Ours, scenario, group)?;
        self.child(Side::System, scenario, group)
    }

    fn values(&self, side: Side, scenario: Scenario, key: &str) -> Option<&Vec<f64>> {
        self.results.get(&(side, scenario.name(), key.to_string()))
    }

    /// The lowest of a figure's samples (best of the runs), or the median where `median`.
    fn get(&self, side: Side, scenario: Scenario, key: &str, median: bool) -> Option<f64> {
        let mut v = self.values(side, scenario, key)?.clone();
        v.sort_by(f64::total_cmp);
        if median { v.get(v.len() / 2).copied() } else { v.first().copied() }
    }
}

/// How a row's ratio is judged.
#[derive(Clone, Copy)]
enum Target {
    /// ours/system at most this.
    Ratio(f64),
    /// ours at most this many of the row's unit more than system.
    MoreBy(f64),
    /// No target: information.
    None,
}

struct Row {
    label: String,
    unit: &'static str,
    ours: Option<f64>,
    system: Option<f64>,
    target: Target,
    /// A verdict decided otherwise than by the ratio (e.g. "is the driver's own pointer").
    verdict: Option<bool>,
    /// The `--khronos` pass: (ours, that loader) measured beside each other.
    khronos: Option<(Option<f64>, Option<f64>)>,
}

impl Row {
    /// Ours against the `--khronos` loader, from that pass.
    fn khronos_ratio(&self) -> Option<f64> {
        match self.khronos? {
            (Some(o), Some(k)) if k != 0.0 => Some(o / k),
            _ => None,
        }
    }

    fn ratio(&self) -> Option<f64> {
        match (self.ours, self.system) {
            (Some(o), Some(s)) if s != 0.0 => Some(o / s),
            _ => None,
        }
    }

    fn met(&self) -> Option<bool> {
        self.verdict.or_else(|| match self.target {
            Target::Ratio(t) => self.ratio().map(|r| r <= t),
            Target::MoreBy(t) => self.ours.zip(self.system).map(|(o, s)| o - s <= t),
            Target::None => None,
        })
    }
}

/// Which path of our driver cache a pass measures (`--path`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CachePath {
    /// The driver and layer files younger than the cache trusts (dated an hour ahead): every
    /// driver loaded, every manifest read once per call, nothing recorded.
    Miss,
    /// The files dated an hour back and the record made before measuring: no driver loaded
    /// where its record answers.
    Warm,
}

impl CachePath {
    pub fn parse(word: &str) -> Result<Vec<CachePath>, String> {
        match word {
            "miss" => Ok(vec![CachePath::Miss]),
            "warm" => Ok(vec![CachePath::Warm]),
            "both" => Ok(vec![CachePath::Miss, CachePath::Warm]),
            other => Err(format!("--path {other}: miss, warm or both")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            CachePath::Miss => "miss",
            CachePath::Warm => "warm",
        }
    }

    /// When the driver and layer files are dated.
    fn file_time(self) -> std::time::SystemTime {
        let hour = std::time::Duration::from_secs(3600);
        match self {
            CachePath::Miss => std::time::SystemTime::now() + hour,
            CachePath::Warm => std::time::SystemTime::now() - hour,
        }
    }
}

/// A case the harness knows but cannot measure yet, and why.
struct Pending {
    label: String,
    why: String,
}

pub fn run(exe: &Path, khronos: Option<&Path>, paths: &[CachePath]) -> Result<String, String> {
    let artifacts = exe.parent().ok_or("no directory for the benchmark executable")?;
    let ours = artifacts.join("libvulkan.so");
    let test_driver = artifacts.join("libvk_test_driver.so");
    for needed in [&ours, &test_driver] {
        if !needed.exists() {
            return Err(format!("{} not built (run through `cargo xtask bench`)", needed.display()));
        }
    }
    let system = system_loader();
    if !system.exists() {
        return Err(format!("no system loader at {} (install libvulkan1)", system.display()));
    }
    let layer_lib = artifacts.join(PASS_THROUGH_LAYER);
    let layer_lib = layer_lib.exists().then_some(layer_lib);
    if let Some(k) = khronos.filter(|k| !k.exists()) {
        return Err(format!("--khronos {}: no such library", k.display()));
    }
    let root = std::env::temp_dir().join(format!("loader-bench-{}", std::process::id()));
    let sandbox = Sandbox::create(&root, &test_driver, layer_lib.as_deref())?;
    let mut bench = Bench { exe: exe.to_path_buf(), ours, system, sandbox, results: Results::new() };
    let mut all = Measured { rows: Vec::new(), pending: Vec::new(), notes: Vec::new() };
    let mut outcome = Ok(());
    for &path in paths {
        match measure_path(&mut bench, path, khronos, layer_lib.is_some()) {
            Ok(measured) => {
                let tag = |label: &str| match paths.len() {
                    1 => label.to_string(),
                    _ => format!("[{}] {label}", path.name()),
                };
                all.rows.extend(measured.rows.into_iter().map(|r| Row { label: tag(&r.label), ..r }));
                all.pending.extend(measured.pending.into_iter().map(|p| Pending { label: tag(&p.label), ..p }));
                all.notes.extend(measured.notes.into_iter().map(|n| tag(&n)));
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    outcome?;
    all.notes.push(format!("driver cache path: {}", paths.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")));
    Ok(report(&system_loader(), khronos, &all))
}

/// One path's table: the files dated for it (and, warm, the record made), measured against the
/// system loader and, with `khronos`, again beside that loader.
fn measure_path(bench: &mut Bench, path: CachePath, khronos: Option<&Path>, have_layer_lib: bool) -> Result<Measured, String> {
    bench.sandbox.date_files(path.file_time())?;
    bench.system = system_loader();
    if path == CachePath::Warm {
        // The record each scenario's creation looks up, made before anything is measured.
        for s in [Scenario::OneDriver, Scenario::TenDrivers, Scenario::LayerManifests, Scenario::LayersEnabled(1), Scenario::LayersEnabled(5)] {
            if !matches!(s, Scenario::LayersEnabled(_)) || have_layer_lib {
                bench.child(Side::Ours, s, "create")?;
            }
        }
        bench.results = Results::new();
    }
    eprintln!("loader-bench: the driver cache's {} path", path.name());
    let mut measured = measure(bench, have_layer_lib, path)?;
    if let Some(khronos) = khronos {
        eprintln!("loader-bench: the same beside {}...", khronos.display());
        bench.system = khronos.to_path_buf();
        bench.results = Results::new();
        let beside = measure(bench, have_layer_lib, path)?;
        for row in &mut measured.rows {
            let twin = beside.rows.iter().find(|r| r.label == row.label);
            row.khronos = Some(twin.map_or((None, None), |r| (r.ours, r.system)));
        }
    }
    bench.results = Results::new();
    Ok(measured)
}

/// One pass's table.
struct Measured {
    rows: Vec<Row>,
    pending: Vec<Pending>,
    notes: Vec<String>,
}

fn measure(bench: &mut Bench, have_layer_lib: bool, path: CachePath) -> Result<Measured, String> {
    use Scenario::*;
    eprintln!("loader-bench: measuring (about a minute)...");
    // Layer support: does each loader list the 100 manifests?
    bench.both(LayerManifests, "layer-count")?;
    let listed = |side| bench.get(side, LayerManifests, "layers_listed", false).unwrap_or(0.0);
    let (ours_listed, system_listed) = (listed(Side::Ours), listed(Side::System));
    let layers_ready = if ours_listed == 0.0 {
        Err(format!(
            "not yet: loader has no layer support (vkEnumerateInstanceLayerProperties lists 0 of {LAYER_MANIFESTS} manifests)"
        ))
    } else if !have_layer_lib {
        Err(format!("not yet: no pass-through test layer built ({PASS_THROUGH_LAYER} beside libvulkan.so)"))
    } else {
        Ok(())
    };
    let mut scenarios = vec![OneDriver, TenDrivers, LayerManifests];
    if layers_ready.is_ok() {
        scenarios.extend([LayersEnabled(1), LayersEnabled(5)]);
    }
    for &s in &scenarios {
        bench.both(s, "create")?;
    }
    for _ in 0..COLD_PROCESSES {
        bench.both(OneDriver, "cold")?;
    }
    // On settled files only: on the miss path nothing is recorded.
    if path == CachePath::Warm {
        for _ in 0..RECORD_PROCESSES {
            bench.both(OneDriver, "record")?;
        }
    }
    let call_scenarios: Vec<Scenario> = scenarios.iter().copied().filter(|s| matches!(s, OneDriver | LayersEnabled(_))).collect();
    for &s in &call_scenarios {
        if s == OneDriver {
            bench.both(s, "calls")?;
        }
        bench.pair(s)?;
    }
    // A library file written moments ago (a fresh build, the sandbox's driver copies) has dirty
    // page-cache pages, which smaps counts as private dirty in whoever maps them: write them back.
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    for _ in 0..MEMORY_PROCESSES {
        bench.both(OneDriver, "memory")?;
    }
    let traced = if trace::available() {
        let mut traced = Vec::new();
        for s in [OneDriver, TenDrivers, LayerManifests] {
            for side in [Side::Ours, Side::System] {
                let mut command = bench.sandbox.command(s, &bench.exe);
                command.args(["child", "trace"]).arg(bench.loader(side));
                traced.push((s, side, trace::run(command, bench.sandbox.root())?));
            }
        }
        Ok(traced)
    } else {
        Err("strace not installed: files and libraries per vkCreateInstance not counted".to_string())
    };
    let sizes = [Side::Ours, Side::System].map(|side| stripped_size(bench.loader(side), bench.sandbox.root()));

    // The table.
    let mut rows = Vec::new();
    let mut pending = Vec::new();
    let us = |v: Option<f64>| v.map(|v| v / 1000.0);
    for (s, target) in [(OneDriver, 0.2), (TenDrivers, 0.35), (LayerManifests, 0.3), (LayersEnabled(1), 0.15), (LayersEnabled(5), 0.25)] {
        let label = format!("vkCreateInstance+vkDestroyInstance, {}", s.name());
        if !scenarios.contains(&s) {
            pending.push(Pending { label, why: layers_ready.clone().err().unwrap_or_default() });
            continue;
        }
        let [ours, system] = [Side::Ours, Side::System].map(|side| us(bench.get(side, s, "warm_ns", false)));
        rows.push(Row { label, unit: "us", ours, system, target: Target::Ratio(target), verdict: None, khronos: None });
    }
    let cold = [Side::Ours, Side::System].map(|side| us(bench.get(side, OneDriver, "cold_ns", true)));
    rows.push(Row {
        label: format!("first (cold) creation in a fresh process, 1 driver (median of {COLD_PROCESSES})"),
        unit: "us",
        ours: cold[0],
        system: cold[1],
        target: Target::Ratio(0.5),
        verdict: None,
        khronos: None,
    });
    if path == CachePath::Warm {
        let record = [Side::Ours, Side::System].map(|side| us(bench.get(side, OneDriver, "record_ns", true)));
        rows.push(Row {
            label: format!("first creation that writes the record (cache emptied), 1 driver (median of {RECORD_PROCESSES})"),
            unit: "us",
            ours: record[0],
            system: record[1],
            target: Target::MoreBy(300.0),
            verdict: None,
            khronos: None,
        });
    }
    let faults = [Side::Ours, Side::System].map(|side| bench.get(side, OneDriver, "cold_faults", true));
    rows.push(Row {
        label: "  page faults during it (median)".into(),
        unit: "",
        ours: faults[0],
        system: faults[1],
        target: Target::None,
        verdict: None,
        khronos: None,
    });
    let dlopen = [Side::Ours, Side::System].map(|side| us(bench.get(side, OneDriver, "dlopen_ns", true)));
    rows.push(Row { label: "dlopen of the loader itself (median)".into(), unit: "us", ours: dlopen[0], system: dlopen[1], target: Target::None, verdict: None, khronos: None });
    let per_call = |bench: &Bench, s: Scenario, key: &str| [Side::Ours, Side::System].map(|side| bench.get(side, s, key, false));
    let enumerate = per_call(bench, OneDriver, "enumerate_ns").map(us);
    rows.push(Row {
        label: "vkEnumerateInstanceExtensionProperties (count + fill)".into(),
        unit: "us",
        ours: enumerate[0],
        system: enumerate[1],
        target: Target::Ratio(0.5),
        verdict: None,
        khronos: None,
    });
    // Each lookup row is net of the measuring loop: what the loader adds to a call of a function
    // that does nothing (a 'x'-prefixed miss costs us about one such call, so the gross ratio would
    // mostly compare the loop with itself).
    let harness = per_call(bench, OneDriver, "harness_ns");
    rows.push(Row {
        label: "the measuring loop's own cost per name (an empty function in the loader's place)".into(),
        unit: "ns",
        ours: harness[0],
        system: harness[1],
        target: Target::None,
        verdict: None,
        khronos: None,
    });
    for (gpa, what) in [("gipa", "vkGetInstanceProcAddr(instance, name)"), ("gdpa", "vkGetDeviceProcAddr(device, name)")] {
        for (set, set_label) in [("hits", "every command name"), ("misses", "misses, last char changed"), ("prefix_misses", "misses, 'x' prefix")] {
            let gross = per_call(bench, OneDriver, &format!("{gpa}_{set}_ns"));
            let [ours, system] = [0, 1].map(|i| Some(gross[i]? - harness[i]?));
            let label = format!("{what}, per name, net of the loop: {set_label}");
            rows.push(Row { label, unit: "ns", ours, system, target: Target::Ratio(0.05), verdict: None, khronos: None });
        }
    }
    let through = |s: Scenario| match s {
        LayersEnabled(n) => format!(" through {n} layer{}", if n == 1 { "" } else { "s" }),
        _ => String::new(),
    };
    for s in [OneDriver, LayersEnabled(1), LayersEnabled(5)] {
        if !call_scenarios.contains(&s) {
            pending.push(Pending {
                label: format!("vkCmdDraw per call{}", through(s)),
                why: layers_ready.clone().err().unwrap_or_default(),
            });
            continue;
        }
        let floor = per_call(bench, s, "draw_floor_ns");
        let gdpa = per_call(bench, s, "draw_gdpa_ns");
        let trampoline = per_call(bench, s, "draw_trampoline_ns");
        let t = through(s);
        rows.push(Row { label: format!("vkCmdDraw{t}: the driver's own function (floor)"), unit: "ns", ours: floor[0], system: floor[1], target: Target::None, verdict: None, khronos: None });
        rows.push(Row { label: format!("vkCmdDraw{t}: pointer from vkGetDeviceProcAddr"), unit: "ns", ours: gdpa[0], system: gdpa[1], target: Target::None, verdict: None, khronos: None });
        rows.push(Row { label: format!("vkCmdDraw{t}: exported trampoline"), unit: "ns", ours: trampoline[0], system: trampoline[1], target: Target::None, verdict: None, khronos: None });
        let over = |i: usize| Some(trampoline[i]? - floor[i]?);
        let (ours_over, system_over) = (over(0), over(1));
        rows.push(Row {
            label: format!("vkCmdDraw{t}: trampoline overhead over the floor (target: <= system's + {OVERHEAD_RESOLUTION_NS} ns + 2%)"),
            unit: "ns",
            ours: ours_over,
            system: system_over,
            target: Target::None,
            // Less than a fifth of a clock cycle is below what this measures.
            verdict: ours_over.zip(system_over).map(|(o, s)| o <= s + OVERHEAD_RESOLUTION_NS + OVERHEAD_RELATIVE_RESOLUTION * s.abs()),
            khronos: None,
        });
        if s == OneDriver {
            let own = per_call(bench, s, "gdpa_is_driver_own");
            rows.push(Row {
                label: "vkGetDeviceProcAddr(vkCmdDraw) is the driver's own function (1 = yes)".into(),
                unit: "",
                ours: own[0],
                system: own[1],
                target: Target::None,
                verdict: own[0].map(|o| o == 1.0),
                khronos: None,
            });
        }
    }
    for (key, what) in [("instance", "an instance"), ("device", "an instance, a device and a command buffer")] {
        let added = [Side::Ours, Side::System].map(|side| bench.get(side, OneDriver, &format!("rss_{key}_added_kib"), true));
        rows.push(Row {
            label: format!("resident memory added: loader loaded + {what} (median of {MEMORY_PROCESSES})"),
            unit: "KiB",
            ours: added[0],
            system: added[1],
            target: Target::Ratio(0.8),
            verdict: None,
            khronos: None,
        });
    }
    let private = [Side::Ours, Side::System].map(|side| bench.get(side, OneDriver, "private_instance_added_kib", true));
    rows.push(Row {
        label: format!("  of which private dirty (heap, relocated data; not shareable), instance (median of {MEMORY_PROCESSES})"),
        unit: "KiB",
        ours: private[0],
        system: private[1],
        target: Target::None,
        verdict: None,
        khronos: None,
    });
    rows.push(Row {
        label: "stripped library size".into(),
        unit: "KiB",
        ours: sizes[0].as_ref().ok().map(|b| *b as f64 / 1024.0),
        system: sizes[1].as_ref().ok().map(|b| *b as f64 / 1024.0),
        target: Target::None,
        verdict: None,
        khronos: None,
    });
    let mut notes = Vec::new();
    if let Err(e) = &sizes[0] {
        notes.push(format!("stripped size: {e}"));
    }
    match &traced {
        Ok(traced) => {
            for (s, side_counts) in group_traced(traced) {
                for (i, when) in [(0, "first"), (1, "later")] {
                    let pick = |f: fn(&trace::Counts) -> usize| side_counts.each_ref().map(|c| c.as_ref().map(|c| f(&c[i]) as f64));
                    for (what, f) in [
                        ("manifest files opened", (|c: &trace::Counts| c.manifests) as fn(&trace::Counts) -> usize),
                        ("library files opened", |c| c.libraries),
                        ("directories listed", |c| c.directories),
                        ("syscalls", |c| c.syscalls),
                    ] {
                        let [ours, system] = pick(f);
                        rows.push(Row {
                            label: format!("{what} per vkCreateInstance+Destroy ({when}), {}", s.name()),
                            unit: "",
                            ours,
                            system,
                            target: Target::None,
                            verdict: None,
                            khronos: None,
                        });
                    }
                }
            }
            for (s, side, counts) in traced {
                for c in counts {
                    if !c.outside.is_empty() {
                        notes.push(format!("ISOLATION: {side:?} ({}) opened files outside the sandbox: {:?}", s.name(), c.outside));
                    }
                }
            }
        }
        Err(e) => notes.push(e.clone()),
    }
    if ours_listed == 0.0 {
        notes.push(format!(
            "our loader does not read layer manifests yet: the 100-manifest case costs it nothing (the system loader lists {system_listed})"
        ));
    }
    Ok(Measured { rows, pending, notes })
}

/// Traced counts by scenario: [ours, system].
fn group_traced(traced: &[(Scenario, Side, [trace::Counts; 2])]) -> Vec<(Scenario, [Option<[trace::Counts; 2]>; 2])> {
    let mut out: Vec<(Scenario, [Option<[trace::Counts; 2]>; 2])> = Vec::new();
    for (s, side, counts) in traced {
        let i = if out.last().is_some_and(|(last, _)| last == s) { out.len() - 1 } else {
            out.push((*s, [None, None]));
            out.len() - 1
        };
        out[i].1[*side as usize] = Some(counts.clone());
    }
    out
}

/// The size of a stripped copy of `library` (`strip --strip-all`; binutils).
fn stripped_size(library: &Path, scratch: &Path) -> Result<u64, String> {
    let copy = scratch.join(format!("stripped-{}", library.file_name().and_then(|n| n.to_str()).unwrap_or("lib")));
    let status = std::process::Command::new("strip")
        .arg("--strip-all")
        .arg("-o")
        .arg(&copy)
        .arg(library)
        .status()
        .map_err(|e| format!("cannot run strip (binutils): {e}"))?;
    if !status.success() {
        return Err(format!("strip {} failed", library.display()));
    }
    std::fs::metadata(&copy).map(|m| m.len()).map_err(|e| e.to_string())
}

fn report(system: &Path, khronos: Option<&Path>, measured: &Measured) -> String {
    let Measured { rows, pending, notes } = measured;
    let (cpu, cpus, date) = machine();
    println!("loaders: our libvulkan.so against the system loader ({}), one loader per process", system.display());
    if let Some(k) = khronos {
        println!("khronos: every case measured again, ours beside {}; ours/khr is that pass's ratio", k.display());
    }
    println!("machine: {cpu}, {cpus} logical CPUs; date: {date}");
    println!("driver: the project's test driver; isolated HOME/XDG dirs; times are the best of 20 rounds of >= 50 ms unless said");
    println!();
    let fmt = |v: Option<f64>, unit: &str| match v {
        None => "n/a".to_string(),
        Some(v) if unit.is_empty() => format!("{v:.0}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0} {unit}"),
        Some(v) => format!("{v:.2} {unit}"),
    };
    let ratio = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.3}"));
    let khronos_columns = |row: Option<&Row>| match (khronos, row) {
        (None, _) => String::new(),
        (Some(_), None) => format!(" {:>12} {:>8}", "khronos", "ours/khr"),
        (Some(_), Some(r)) => format!(" {:>12} {:>8}", fmt(r.khronos.and_then(|k| k.1), r.unit), ratio(r.khronos_ratio())),
    };
    println!("{:<92} {:>12} {:>12} {:>8} {:>8} {:>7}{}", "case", "ours", "system", "ratio", "target", "", khronos_columns(None));
    let mut json_rows = Vec::new();
    for r in rows {
        let target = match r.target {
            Target::Ratio(t) => format!("{t}"),
            Target::MoreBy(t) => format!("+{t}"),
            Target::None => String::new(),
        };
        let verdict = match r.met() {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "",
        };
        println!(
            "{:<92} {:>12} {:>12} {:>8} {:>8} {:>7}{}",
            r.label,
            fmt(r.ours, r.unit),
            fmt(r.system, r.unit),
            ratio(r.ratio()),
            target,
            verdict,
            khronos_columns(Some(r)),
        );
        let khronos_json = match r.khronos {
            Some((ours, k)) => format!(
                ",\"khronos\":{{\"ours\":{},\"khronos\":{},\"ratio\":{}}}",
                json_num(ours),
                json_num(k),
                json_num(r.khronos_ratio())
            ),
            None => String::new(),
        };
        json_rows.push(format!(
            "{{\"case\":{},\"unit\":{},\"ours\":{},\"system\":{},\"ratio\":{},\"target_ratio\":{},\"met\":{}{khronos_json}}}",
            json_str(&r.label),
            json_str(r.unit),
            json_num(r.ours),
            json_num(r.system),
            json_num(r.ratio()),
            match r.target {
                Target::Ratio(t) => t.to_string(),
                Target::MoreBy(_) | Target::None => "null".into(),
            },
            r.met().map_or("null".to_string(), |m| m.to_string()),
        ));
    }
    for p in pending {
        println!("{:<92} {}", p.label, p.why);
    }
    if !notes.is_empty() {
        println!();
    }
    for n in notes {
        println!("note: {n}");
    }
    let pending_json: Vec<String> =
        pending.iter().map(|p| format!("{{\"case\":{},\"why\":{}}}", json_str(&p.label), json_str(&p.why))).collect();
    let notes_json: Vec<String> = notes.iter().map(|n| json_str(n)).collect();
    format!(
        "{{\"benchmark\":\"loaders\",\"date\":{},\"cpu\":{},\"logical_cpus\":{cpus},\"system_loader\":{},\"khronos_loader\":{},\"rows\":[{}],\"pending\":[{}],\"notes\":[{}]}}",
        json_str(&date),
        json_str(&cpu),
        json_str(&system.display().to_string()),
        khronos.map_or("null".to_string(), |k| json_str(&k.display().to_string())),
        json_rows.join(","),
        pending_json.join(","),
        notes_json.join(","),
    )
}
