//! A harness for layer authors: a few lines run a layer over a test driver (`vk-test-driver`)
//! through a Vulkan loader and hand back what happened, to assert on.
//!
//! ```ignore
//! vk_layer_harness::child_entry!(); // once per test file
//!
//! #[test]
//! fn counts_draws() {
//!     let library = vk_layer_harness::built_library("libVkLayer_sdk_draw_count.so");
//!     let run = vk_layer_harness::Harness::new(concat!(env!("CARGO_TARGET_TMPDIR"), "/draws"))
//!         .layer(&my_manifest, &library)
//!         .device(2)
//!         .run();
//!     assert!(run.stdout.contains("SDK_DRAW_COUNT 2"), "{}", run.stderr);
//! }
//! ```
//!
//! A run is a child process: this test binary again, running [`child_entry!`]'s test with the
//! script in its environment, because the loader reads the environment once per process and
//! keeps the libraries it opens. The child loads the loader [`Harness::loader`] names, else the
//! one [`loader_library`] names (the Rust loader's `libvulkan.so` where the test's package builds
//! it beside the test, else the system's `libvulkan.so.1`); [`Run::loader`] says which. The loader
//! finds the test driver and the layers through `VK_DRIVER_FILES` and `VK_LAYER_PATH` in the run's
//! directory; the host's `VK_*` variables are not passed on, and its implicit layers are kept out
//! (`VK_IMPLICIT_LAYER_PATH` and the XDG directories point into the run's directory, which older
//! loaders that ignore the variable also read; only `/etc/vulkan/implicit_layer.d` cannot be
//! moved). The child creates an instance
//! with the layers enabled (the application's `VkLayerSettingsCreateInfoEXT` and a messenger
//! chained at creation when asked), lists the physical devices, creates a device on the first and
//! records draws into a command buffer when asked, submits it ([`Harness::submits`]) and runs the
//! test's own calls ([`Harness::calls`]) when asked, and destroys everything. Its stdout has one
//! `HARNESS ...` line per step and every message the messenger heard ([`Run::messages`]), beside
//! what the layer printed.

#![warn(missing_docs)]

mod child;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use child::{call_name, child_main, child_main_with, App, Calls};

/// Defines the test that is the child of every run in this test file (it does nothing when the
/// test harness runs it in the ordinary way), with the functions of the application's own calls
/// that runs of this file may ask for ([`Harness::calls`]): `child_entry!(submit_twice, name_it)`.
#[macro_export]
macro_rules! child_entry {
    ($($calls:path),* $(,)?) => {
        #[test]
        fn vk_layer_harness_child() {
            $crate::child_main_with(&[$(($crate::call_name(&$calls), $calls as fn(&$crate::App<'_>))),*]);
        }
    };
}

/// The variable carrying the script to the child.
const SCRIPT: &str = "VK_LAYER_HARNESS_SCRIPT";

/// One run: the layers, the environment and what the application does.
pub struct Harness {
    dir: PathBuf,
    layer_paths: Vec<PathBuf>,
    enabled: Vec<String>,
    loader: Option<String>,
    env: Vec<(String, String)>,
    script: child::Script,
}

/// What a run did.
#[derive(Debug)]
pub struct Run {
    /// Whether the child exited successfully.
    pub success: bool,
    /// The child's standard output: the `HARNESS ...` lines and what the layers printed.
    pub stdout: String,
    /// The child's standard error: the loader's and the layers' logs, a panic's message.
    pub stderr: String,
    /// The Vulkan loader the child loaded: [`Harness::loader`]'s, else [`loader_library`]'s.
    pub loader: String,
}

impl Run {
    /// The messages the application's messenger heard, as `<severity> <id name>: <text>`
    /// (severity `error`, `warning`, `info` or `verbose`).
    pub fn messages(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix("HARNESS message "))
            .collect()
    }

    /// What the test driver was given through `vkQueueSubmit` by the time the device was
    /// destroyed: (submits, draws in the command buffers submitted), `None` with no submit.
    pub fn submitted(&self) -> Option<(u32, u32)> {
        self.stdout.lines().find_map(|l| {
            let rest = l.strip_prefix("vk_test_driver: device destroyed after ")?;
            let (submits, rest) = rest.split_once(" submits of ")?;
            let draws = rest.strip_suffix(" draws")?;
            Some((submits.parse().ok()?, draws.parse().ok()?))
        })
    }

    /// Whether the step `HARNESS <step>` was printed (`instance VK_SUCCESS`, `done`, ...).
    pub fn did(&self, step: &str) -> bool {
        self.stdout
            .lines()
            .any(|l| l.strip_prefix("HARNESS ") == Some(step))
    }
}

impl Harness {
    /// A run in `dir` (made afresh: what was there is removed), with the test driver.
    pub fn new(dir: impl Into<PathBuf>) -> Harness {
        let dir = dir.into();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("layers")).expect("the harness's directory");
        Harness {
            dir,
            layer_paths: Vec::new(),
            enabled: Vec::new(),
            loader: None,
            env: Vec::new(),
            script: child::Script::default(),
        }
    }

    /// The run's directory (trace files and the like go here).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Adds the layer `manifest` describes, its library copied from `library` beside the manifest
    /// written for it, and enables it (in the order added, the first nearest the application).
    pub fn layer(mut self, manifest: &vk_layer::Manifest<'_>, library: &Path) -> Harness {
        let file = library
            .file_name()
            .expect("a library file")
            .to_string_lossy()
            .into_owned();
        std::fs::copy(library, self.dir.join("layers").join(&file))
            .expect("copy of the layer library");
        let relative = format!("./{file}");
        let manifest = vk_layer::Manifest {
            library_path: Path::new(&relative),
            ..manifest.clone()
        };
        manifest
            .write(
                &self
                    .dir
                    .join("layers")
                    .join(format!("{}.json", manifest.name)),
            )
            .expect("the layer manifest");
        self.enabled.push(manifest.name.to_string());
        self
    }

    /// Adds a directory of layer manifests already written, and enables the layer `name` from it.
    pub fn installed(mut self, dir: &Path, name: &str) -> Harness {
        self.layer_paths.push(dir.to_path_buf());
        self.enabled.push(name.to_string());
        self
    }

    /// Runs through this Vulkan loader (a path to its library, or a name the dynamic linker
    /// finds: `libvulkan.so.1`, the system's) instead of [`loader_library`]'s choice.
    pub fn loader(mut self, library: impl Into<String>) -> Harness {
        self.loader = Some(library.into());
        self
    }

    /// Sets a variable in the child's environment.
    pub fn env(mut self, name: &str, value: impl Into<String>) -> Harness {
        self.env.push((name.to_string(), value.into()));
        self
    }

    /// The application's `VkLayerSettingsCreateInfoEXT` gets `layer`'s `setting` with these
    /// string values.
    pub fn setting(mut self, layer: &str, setting: &str, values: &[&str]) -> Harness {
        self.script.settings.push((
            layer.to_string(),
            setting.to_string(),
            values.iter().map(|v| v.to_string()).collect(),
        ));
        self
    }

    /// The application chains a debug-utils messenger (every severity and type) at
    /// `vkCreateInstance`.
    pub fn messenger(mut self) -> Harness {
        self.script.messenger = true;
        self
    }

    /// The application creates a device and records `draws` draws (`vkCmdDraw`) into a command
    /// buffer.
    pub fn device(mut self, draws: u32) -> Harness {
        self.script.device = Some(draws);
        self
    }

    /// Submits the device's command buffer `n` times to its queue (after its draws), each
    /// printed as `HARNESS submit <result>`. The test driver counts what reaches it
    /// ([`Run::submitted`]). Creates the device if [`Harness::device`] was not asked for.
    pub fn submits(mut self, n: u32) -> Harness {
        self.script.device.get_or_insert(0);
        self.script.submits = n;
        self
    }

    /// Runs `calls` in the child once the device's command buffer is recorded and submitted,
    /// with what the application made ([`App`]): any Vulkan call a test needs. `calls` is a
    /// function listed in this test file's [`child_entry!`] (the child is another process: it
    /// finds the function there by name). Creates the device if [`Harness::device`] was not
    /// asked for.
    pub fn calls<F: Fn(&App<'_>) + Copy>(mut self, calls: F) -> Harness {
        self.script.device.get_or_insert(0);
        self.script.calls = Some(call_name(&calls).to_string());
        self
    }

    /// Runs the application in a child process.
    pub fn run(&self) -> Run {
        let driver = self.dir.join("driver.json");
        let text = format!(
            r#"{{"file_format_version": "1.0.1", "ICD": {{"library_path": "{}", "api_version": "1.4.0"}}}}"#,
            built_library("libvk_test_driver.so").display()
        );
        std::fs::write(&driver, text).expect("the driver manifest");
        let mut layer_path = vec![self.dir.join("layers")];
        layer_path.extend(self.layer_paths.iter().cloned());
        let joined = std::env::join_paths(&layer_path).expect("layer directories");
        let mut script = self.script.clone();
        script.layers = self.enabled.clone();
        script.loader = self.loader.clone().unwrap_or_else(loader_library);

        let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
        cmd.args([
            "--exact",
            "vk_layer_harness_child",
            "--nocapture",
            "--test-threads=1",
        ]);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("VK_") {
                cmd.env_remove(name);
            }
        }
        cmd.env(SCRIPT, script.encode())
            .env("VK_DRIVER_FILES", &driver)
            .env("VK_LAYER_PATH", joined)
            // No implicit layer of the host's: newer loaders read only this variable's
            // directories for them; older ones (Debian 12's 1.3.239) ignore it and search the XDG
            // directories, which point into the run's directory too. Only the loader's own
            // configuration directory (`/etc/vulkan/implicit_layer.d`) cannot be moved.
            .env(
                "VK_IMPLICIT_LAYER_PATH",
                self.dir.join("no-implicit-layers"),
            )
            // No Vulkan Configurator settings file of the host's, no manifest from the host's
            // data and configuration directories.
            .env("XDG_DATA_HOME", self.dir.join("xdg"))
            .env("XDG_DATA_DIRS", self.dir.join("xdg"))
            .env("XDG_CONFIG_HOME", self.dir.join("xdg"))
            .env("XDG_CONFIG_DIRS", self.dir.join("xdg"))
            // Nor the host's caches (the Rust loader's driver cache).
            .env("XDG_CACHE_HOME", self.dir.join("xdg").join("cache"));
        for (name, value) in &self.env {
            cmd.env(name, value);
        }
        let out = cmd.output().expect("the harness's child process");
        Run {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            loader: script.loader,
        }
    }
}

/// The Vulkan loader a run loads: `$VK_LAYER_HARNESS_LOADER` when set; else the Rust loader's
/// `libvulkan.so` where cargo built it for this test run (a dev-dependency on the loader's
/// package); else the system's `libvulkan.so.1`, as the dynamic linker finds it.
pub fn loader_library() -> String {
    if let Some(path) = std::env::var_os("VK_LAYER_HARNESS_LOADER") {
        return path.to_string_lossy().into_owned();
    }
    let ours = built_library("libvulkan.so");
    if ours.exists() {
        ours.display().to_string()
    } else {
        "libvulkan.so.1".to_string()
    }
}

/// A library cargo built for this test run (`target/<profile>/deps/`, else beside it): the test
/// driver, a loader, the layer under test when the test's package depends on it.
pub fn built_library(file: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let deps = profile.join("deps").join(file);
    if deps.exists() {
        deps
    } else {
        profile.join(file)
    }
}

// The README's example compiles as a doctest (not run: it needs a layer library).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
