//! `loader-bench workload <out-dir>`: the `loaders` benchmark's work on our library alone, each
//! child process run under valgrind's callgrind, whose profiles (`<out-dir>/*.callgrind`) name
//! every function of our library that ran. `cargo xtask hot-text` turns them into the list of
//! functions the linker places together (loader/hot-text.txt).

use std::ffi::OsStr;
use std::path::Path;

use crate::loaders::PASS_THROUGH_LAYER;
use crate::sandbox::{Sandbox, Scenario};

pub fn run(exe: &Path, out_dir: &Path) -> Result<(), String> {
    use Scenario::*;
    let artifacts = exe.parent().ok_or("no directory for the benchmark executable")?;
    let ours = artifacts.join("libvulkan.so");
    let test_driver = artifacts.join("libvk_test_driver.so");
    let layer = artifacts.join(PASS_THROUGH_LAYER);
    for needed in [&ours, &test_driver, &layer] {
        if !needed.exists() {
            return Err(format!("{} not built (run through `cargo xtask hot-text`)", needed.display()));
        }
    }
    std::fs::create_dir_all(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let root = std::env::temp_dir().join(format!("loader-bench-workload-{}", std::process::id()));
    let sandbox = Sandbox::create(&root, &test_driver, Some(&layer))?;
    let cases = [
        (OneDriver, "memory"),
        (OneDriver, "cold"),
        (OneDriver, "create"),
        (TenDrivers, "create"),
        (LayerManifests, "create"),
        (LayerManifests, "layer-count"),
        (LayersEnabled(1), "create"),
        (LayersEnabled(5), "create"),
        (OneDriver, "calls"),
        (OneDriver, "draw-pair"),
        (LayersEnabled(1), "draw-pair"),
    ];
    let mut result = Ok(());
    for (i, (scenario, group)) in cases.into_iter().enumerate() {
        let mut command = sandbox.command(scenario, exe);
        command.args(["child", group]).arg(&ours);
        if group == "draw-pair" {
            command.arg(crate::loaders::system_loader());
        }
        // `cargo xtask hot-text` lays out the first creation's functions first, by this name.
        let name = if group == "cold" { "first-creation".to_string() } else { format!("bench-{i}") };
        let out_file = format!("--callgrind-out-file={}", out_dir.join(format!("{name}.callgrind")).display());
        let valgrind = ["valgrind", "--tool=callgrind", "--demangle=no", &out_file].map(OsStr::new);
        eprintln!("loader-bench workload: child {group} ({}) under callgrind", scenario.name());
        let what = format!("child {group} ({}) under callgrind", scenario.name());
        if let Err(e) = crate::child::run(&mut Sandbox::wrapped(&command, &valgrind), &what) {
            result = Err(e);
            break;
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    result
}
