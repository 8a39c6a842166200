//! The trace layer's settings, read at each `vkCreateInstance` by the SDK's Khronos-convention
//! settings (environment, `vk_layer_settings.txt`, `VkLayerSettingsCreateInfoEXT`):
//!
//! - `file`: where the lines go (appended to); empty: stderr. Environment `VK_RUST_TRACE_FILE`,
//!   `VK_TRACE_FILE`, and the older `VK_LAYER_RUST_TRACE_FILE`; file key `rust_trace.file`.
//! - `commands`: globs (`*`, `?`, `[...]`) over command names as the lines name them
//!   (`vkCmdDraw*`); only matching commands are traced, the layer's own lifecycle calls
//!   (`vkCreateInstance`, `vkDestroyDevice`, ...) included. Default `*`. A command not traced is
//!   not even intercepted: `vkGet*ProcAddr` hands out the next level's function.
//!
//! The settings of the latest `vkCreateInstance` apply to the whole process (a process traces
//! into one place); the earlier configurations are kept, not freed, as calls of other threads may
//! still be writing through them.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use vk_layer::vk::types::VkInstanceCreateInfo;
use vk_layer::{Setting, SettingType, Settings};

/// The layer's settings.
pub const SETTINGS: &[Setting] = &[
    Setting {
        key: "file",
        label: "Trace file",
        description: "The file the JSON lines are appended to; stderr when empty",
        default: SettingType::SaveFile(""),
        env_aliases: &[crate::line::TRACE_FILE_VARIABLE],
    },
    Setting {
        key: "commands",
        label: "Commands",
        description:
            "Globs of the commands traced (vkCmdDraw*, vkQueue*); every command by default",
        default: SettingType::List(&["*"]),
        env_aliases: &[],
    },
];

/// What the settings decided.
pub struct Config {
    sink: Sink,
    /// Per command id: traced.
    traced: Vec<bool>,
}

/// Where the lines go.
enum Sink {
    File(Mutex<File>),
    Stderr,
}

impl Config {
    /// The configuration of `settings`; what cannot be used (a file that cannot be opened, a
    /// glob that does not parse) is logged and left at its default.
    pub fn of(settings: &Settings) -> Config {
        Config {
            sink: Sink::open(settings.string("file")),
            traced: traced(settings.list("commands")),
        }
    }

    /// Whether the command with this id is traced.
    pub fn traces(&self, id: u16) -> bool {
        self.traced.get(usize::from(id)).copied().unwrap_or(false)
    }

    /// Writes one whole line; errors are dropped (the application goes on).
    pub fn write(&self, line: &[u8]) {
        let _ = match &self.sink {
            Sink::File(file) => file
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .write_all(line),
            Sink::Stderr => std::io::stderr().lock().write_all(line),
        };
    }
}

impl Sink {
    fn open(path: &str) -> Sink {
        if path.is_empty() {
            return Sink::Stderr;
        }
        match File::options().create(true).append(true).open(path) {
            Ok(file) => Sink::File(Mutex::new(file)),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "VK_LAYER_RUST_trace: cannot open {path}: {e}; tracing to stderr"
                );
                Sink::Stderr
            }
        }
    }
}

/// Per command id, whether one of `globs` matches its name. Globs that do not parse are logged
/// and left out; when none of a non-empty list parses, the default (every command) holds.
fn traced(globs: &[String]) -> Vec<bool> {
    let patterns: Vec<glob::Pattern> = globs
        .iter()
        .filter_map(|g| match glob::Pattern::new(g) {
            Ok(p) => Some(p),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "VK_LAYER_RUST_trace: setting commands: `{g}` is not a glob ({e}); ignored"
                );
                None
            }
        })
        .collect();
    let every = [glob::Pattern::new("*").expect("a glob")];
    let patterns = if patterns.is_empty() && !globs.is_empty() {
        &every[..]
    } else {
        &patterns[..]
    };
    vk_layer::vk::COMMANDS
        .iter()
        .map(|c| {
            let name = c.name().to_str().unwrap_or("");
            patterns.iter().any(|p| p.matches(name))
        })
        .collect()
}

/// The configuration in force: the latest instance's, else the environment's alone.
static CURRENT: AtomicPtr<Config> = AtomicPtr::new(std::ptr::null_mut());

/// The configuration in force.
pub fn current() -> &'static Config {
    let config = CURRENT.load(Ordering::Acquire);
    if config.is_null() {
        // Before any instance (or for a process whose instance another copy made): the
        // environment and settings file, no API settings.
        static FALLBACK: OnceLock<Config> = OnceLock::new();
        return FALLBACK.get_or_init(|| {
            Config::of(&Settings::of::<crate::Trace>(
                &VkInstanceCreateInfo::default(),
            ))
        });
    }
    // SAFETY: configurations are leaked, never freed (see the module's documentation).
    unsafe { &*config }
}

/// Reads the settings for a new instance and puts them in force.
pub fn configure(info: &VkInstanceCreateInfo) {
    let config = Box::into_raw(Box::new(Config::of(&Settings::of::<crate::Trace>(info))));
    CURRENT.store(config, Ordering::Release);
}

/// Whether the command named `name` (any of its names) is traced now.
pub fn traces_name(name: &[u8]) -> bool {
    vk_layer::vk::lookup::command(name).is_some_and(|c| current().traces(c.command))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_select_commands_by_their_names() {
        let t = traced(&["vkCmdDraw*".into(), "vkQueue?ubmit".into(), "[".into()]);
        // Only bad globs: the default, every command.
        assert!(traced(&["[".into()]).iter().all(|&x| x));
        let id = |name: &[u8]| usize::from(vk_layer::vk::lookup::command(name).unwrap().command);
        assert!(t[id(b"vkCmdDraw")] && t[id(b"vkCmdDrawIndexed")] && t[id(b"vkQueueSubmit")]);
        assert!(
            !t[id(b"vkCmdDispatch")] && !t[id(b"vkCreateInstance")] && !t[id(b"vkQueueSubmit2")]
        );
        assert!(traced(&["*".into()]).iter().all(|&x| x));
        assert!(traced(&[]).iter().all(|&x| !x));
    }
}
