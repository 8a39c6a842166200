//! The isolated environment both loaders run in: a scratch directory with its own HOME and XDG
//! directories (so neither loader sees the machine's drivers or layers), driver manifests for the
//! project's test driver (1 driver; 10 drivers, each its own library file), and 100 layer
//! manifests for the scenario that has them present but enabled none; every manifest is dated an
//! hour back, as an installed one is.
//!
//! Children start with an empty environment plus these variables; `trace` checks with strace that
//! both loaders read only manifests from here.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::{DRIVER_LIB_VAR, LAYERS_VAR};

/// The environment of one measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    OneDriver,
    TenDrivers,
    /// One driver; 100 layer manifests in the searched layer directories, none enabled.
    LayerManifests,
    /// One driver and this many pass-through layers enabled.
    LayersEnabled(usize),
}

impl Scenario {
    pub fn name(self) -> String {
        match self {
            Scenario::OneDriver => "1 driver".into(),
            Scenario::TenDrivers => "10 drivers".into(),
            Scenario::LayerManifests => "1 driver, 100 layer manifests, none enabled".into(),
            Scenario::LayersEnabled(n) => format!("1 driver, {n} layer{} enabled", if n == 1 { "" } else { "s" }),
        }
    }
}

pub const LAYER_MANIFESTS: usize = 100;
/// Of the 100, this many are implicit layers that need an environment variable nobody sets.
const IMPLICIT_LAYER_MANIFESTS: usize = 20;
pub const DRIVERS: usize = 10;

pub struct Sandbox {
    root: PathBuf,
    /// The single driver's library and manifest.
    pub driver_lib: PathBuf,
    driver_manifest: PathBuf,
    ten_manifests: Vec<PathBuf>,
    /// Pass-through layers for the enabled-layer scenarios: (layer name, manifest directory).
    pass_through: Option<Vec<String>>,
}

impl Sandbox {
    /// Builds the scratch tree under `root` (emptied first) from the built test driver.
    pub fn create(root: &Path, test_driver: &Path, pass_through_layer: Option<&Path>) -> Result<Sandbox, String> {
        let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
        let _ = std::fs::remove_dir_all(root);
        for dir in ["home", "config", "config-dirs", "data", "data-dirs", "data-layers", "drivers"] {
            std::fs::create_dir_all(root.join(dir)).map_err(|e| io(dir, e))?;
        }
        let drivers = root.join("drivers");
        let driver_lib = drivers.join("libvk_test_driver.so");
        std::fs::copy(test_driver, &driver_lib).map_err(|e| io("copy test driver", e))?;
        let driver_manifest = write_driver_manifest(&drivers.join("vk_test_driver.json"), &driver_lib)?;
        // Tagged copies: separate files, so each is its own library in the process.
        let mut ten_manifests = Vec::new();
        for i in 0..DRIVERS {
            let lib = drivers.join(format!("libvk_test_driver_bench{i}.so"));
            std::fs::copy(test_driver, &lib).map_err(|e| io("copy test driver", e))?;
            ten_manifests.push(write_driver_manifest(&drivers.join(format!("vk_test_driver_bench{i}.json")), &lib)?);
        }
        let layers = root.join("data-layers/vulkan");
        for kind in ["explicit_layer.d", "implicit_layer.d"] {
            std::fs::create_dir_all(layers.join(kind)).map_err(|e| io(kind, e))?;
        }
        for i in 0..LAYER_MANIFESTS {
            let implicit = i < IMPLICIT_LAYER_MANIFESTS;
            let dir = layers.join(if implicit { "implicit_layer.d" } else { "explicit_layer.d" });
            write_unused_layer_manifest(&dir.join(format!("bench_layer_{i:03}.json")), i, implicit)?;
        }
        let pass_through = match pass_through_layer {
            Some(lib) => Some(write_pass_through_layers(&root.join("pass-through"), lib)?),
            None => None,
        };
        Ok(Sandbox { root: root.to_path_buf(), driver_lib, driver_manifest, ten_manifests, pass_through })
    }

    /// A command for `exe` with an empty environment plus the scenario's.
    pub fn command(&self, scenario: Scenario, exe: &Path) -> Command {
        let mut command = Command::new(exe);
        command.env_clear();
        // Kept so a reader can debug a failing run.
        if let Some(v) = std::env::var_os("VK_LOADER_DEBUG") {
            command.env("VK_LOADER_DEBUG", v);
        }
        // And so a reader can see where the memory goes (see `child::keep_smaps`).
        if let Some(v) = std::env::var_os("LOADER_BENCH_SMAPS_DIR") {
            command.env("LOADER_BENCH_SMAPS_DIR", v);
        }
        let r = &self.root;
        let data_home = if scenario == Scenario::LayerManifests { "data-layers" } else { "data" };
        command
            .env("HOME", r.join("home"))
            .env("XDG_CONFIG_HOME", r.join("config"))
            .env("XDG_CONFIG_DIRS", r.join("config-dirs"))
            .env("XDG_DATA_HOME", r.join(data_home))
            .env("XDG_DATA_DIRS", r.join("data-dirs"))
            .env(DRIVER_LIB_VAR, &self.driver_lib);
        let drivers = match scenario {
            Scenario::TenDrivers => join_paths(&self.ten_manifests),
            _ => self.driver_manifest.display().to_string(),
        };
        command.env("VK_DRIVER_FILES", drivers);
        if let (Scenario::LayersEnabled(n), Some(layers)) = (scenario, &self.pass_through) {
            command.env("VK_LAYER_PATH", self.root.join("pass-through"));
            command.env(LAYERS_VAR, layers[..n].join(","));
        }
        command
    }

    /// `command` (from [`Sandbox::command`]) run through `wrapper` (a tool such as strace or
    /// valgrind, with its arguments), with the same environment.
    pub fn wrapped(command: &Command, wrapper: &[&std::ffi::OsStr]) -> Command {
        let mut wrapped = Command::new(wrapper[0]);
        wrapped.args(&wrapper[1..]).arg(command.get_program()).args(command.get_args());
        wrapped.env_clear();
        for (k, v) in command.get_envs() {
            if let Some(v) = v {
                wrapped.env(k, v);
            }
        }
        wrapped
    }

    /// Dates every driver and layer file (libraries and manifests) at `when`: an hour back for
    /// the driver cache's warm path (files settled long ago, as installed ones are), an hour ahead
    /// for its miss path (files younger than the cache trusts, however long the run takes).
    pub fn date_files(&self, when: std::time::SystemTime) -> Result<(), String> {
        fn date_tree(dir: &Path, when: std::time::SystemTime) -> Result<(), String> {
            let error = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
            let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
            for entry in entries {
                let path = entry.map_err(|e| error(dir, e))?.path();
                if path.is_dir() {
                    date_tree(&path, when)?;
                } else {
                    std::fs::File::options().write(true).open(&path).and_then(|f| f.set_modified(when)).map_err(|e| error(&path, e))?;
                }
            }
            Ok(())
        }
        for dir in ["drivers", "data-layers", "pass-through"] {
            date_tree(&self.root.join(dir), when)?;
        }
        Ok(())
    }

    /// The directory every file the loaders should read lives under.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn join_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":")
}

/// Writes a manifest, dated an hour back as an installed one is: our loader re-reads and re-parses
/// a file modified in the last two seconds on every call (its parse cache trusts only settled
/// files), which a fixture written just before the measurement would otherwise always be.
fn write(path: &Path, text: &str) -> Result<(), String> {
    let error = |e: std::io::Error| format!("{}: {e}", path.display());
    std::fs::write(path, text).map_err(error)?;
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(path).and_then(|f| f.set_modified(an_hour_ago)).map_err(error)
}

fn write_driver_manifest(path: &Path, library: &Path) -> Result<PathBuf, String> {
    let text = format!(
        "{{\"file_format_version\": \"1.0.1\", \"ICD\": {{\"library_path\": \"{}\", \"api_version\": \"1.3.239\"}}}}\n",
        library.display()
    );
    write(path, &text)?;
    Ok(path.to_path_buf())
}

/// A layer manifest of the shape real ones have; its library does not exist, which no loader
/// notices unless it opens libraries of layers nobody enabled.
fn write_unused_layer_manifest(path: &Path, i: usize, implicit: bool) -> Result<(), String> {
    let environment = if implicit {
        format!(
            ",\n    \"enable_environment\": {{\"ENABLE_BENCH_LAYER_{i:03}\": \"1\"}},\n    \"disable_environment\": {{\"DISABLE_BENCH_LAYER_{i:03}\": \"1\"}}"
        )
    } else {
        String::new()
    };
    let text = format!(
        r#"{{
  "file_format_version": "1.2.0",
  "layer": {{
    "name": "VK_LAYER_BENCH_unused_{i:03}",
    "type": "GLOBAL",
    "library_path": "./libVkLayer_bench_unused_{i:03}.so",
    "api_version": "1.3.239",
    "implementation_version": "1",
    "description": "loader-bench: a layer that is present and never enabled",
    "instance_extensions": [{{"name": "VK_EXT_debug_report", "spec_version": "9"}}],
    "device_extensions": [{{"name": "VK_EXT_debug_marker", "spec_version": "4", "entrypoints": ["vkDebugMarkerSetObjectTagEXT"]}}]{environment}
  }}
}}
"#
    );
    write(path, &text)
}

/// Five copies of the pass-through test layer (separate files, as for drivers), each with its
/// manifest; returns the layer names, in enabling order.
fn write_pass_through_layers(dir: &Path, library: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for i in 0..5 {
        // The test layer's own naming for copies (`libvk_test_layer_<tag>.so`).
        let lib = dir.join(format!("libvk_test_layer_bench{i}.so"));
        std::fs::copy(library, &lib).map_err(|e| format!("copy {}: {e}", library.display()))?;
        let name = format!("VK_LAYER_BENCH_pass_through_{i}");
        let text = format!(
            "{{\"file_format_version\": \"1.2.0\", \"layer\": {{\"name\": \"{name}\", \"type\": \"GLOBAL\", \"library_path\": \"{}\", \"api_version\": \"1.3.239\", \"implementation_version\": \"1\", \"description\": \"loader-bench pass-through {i}\"}}}}\n",
            lib.display()
        );
        write(&dir.join(format!("pass_through_{i}.json")), &text)?;
        names.push(name);
    }
    Ok(names)
}
