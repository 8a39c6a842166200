//! `VK_LOADER_DEBUG` logging in the Khronos loader's stderr format:
//! `[Vulkan Loader] LEVEL:` padded to 32 columns, then the message.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use vk_generated::types::VkDebugUtilsMessageTypeFlagsEXT;

use crate::platform;

pub use super::level::Level;

/// The categories `VK_LOADER_DEBUG` enables (a comma list; prefixes accepted; `all`).
fn enabled_mask() -> u32 {
    static MASK: OnceLock<u32> = OnceLock::new();
    *MASK.get_or_init(|| {
        let Some(value) = platform::plain_env("VK_LOADER_DEBUG") else { return 0 };
        let mut mask = 0;
        for word in value.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            for (name, bits) in [
                ("error", 1), ("warn", 2), ("info", 4), ("debug", 8), ("layer", 16), ("driver", 32), ("perf", 64), ("all", 127),
            ] {
                if name.starts_with(word) || word.starts_with(name) {
                    mask |= bits;
                }
            }
        }
        mask
    })
}

/// The categories a loader settings file's `stderr_log` enables, in place of `VK_LOADER_DEBUG`'s;
/// `NO_SETTINGS` while no settings file says. Set each time the settings are read.
static SETTINGS_MASK: AtomicU32 = AtomicU32::new(NO_SETTINGS);
const NO_SETTINGS: u32 = u32::MAX;

/// Records the `stderr_log` categories of the settings in force (`None`: no settings file, or
/// one without `stderr_log`).
pub fn set_settings_mask(mask: Option<u32>) {
    SETTINGS_MASK.store(mask.filter(|m| *m != 0).unwrap_or(NO_SETTINGS), Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    let mask = match SETTINGS_MASK.load(Ordering::Relaxed) {
        NO_SETTINGS => enabled_mask(),
        from_settings => from_settings,
    };
    mask & level as u32 != 0
}

/// Whether a message of `level` goes anywhere: `VK_LOADER_DEBUG` enables it, or a debug messenger
/// listens on this thread. Checked before a message is formatted (see `log!`).
pub fn wanted(level: Level) -> bool {
    enabled(level) || crate::debug::messengers::listening()
}

/// `log!(Level::Driver, "{path}: ...")`: formats and logs the message only when it is `wanted`
/// (formatting messages nobody reads was a measurable part of a first `vkCreateInstance`).
/// Defined first in lib.rs (`#[macro_use]`), so every module has it.
macro_rules! log {
    ($level:expr, $($format:tt)*) => {
        if $crate::debug::log::wanted($level) {
            $crate::debug::log::out_of_line(|| $crate::debug::log::log($level, &format!($($format)*)));
        }
    };
}

/// Runs `f` in a function of its own, out of the caller's code: `log!` keeps its formatting out
/// of the hot functions it sits in, which a first `vkCreateInstance` faults in page by page.
#[cold]
#[inline(never)]
pub fn out_of_line(f: impl FnOnce()) {
    f()
}

const GENERAL: VkDebugUtilsMessageTypeFlagsEXT = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;

/// Prints a message if its category is enabled; debug messengers listening on this thread hear it
/// whatever `VK_LOADER_DEBUG` says.
pub fn log(level: Level, message: &str) {
    if enabled(level) {
        print(level, message);
    }
    crate::debug::messengers::emit(level, GENERAL, message);
}

/// An error in the application's use of the API (a valid-usage rule broken): logged as errors
/// are; messengers hear it as a validation message as well as a general one.
pub fn validation_error(message: &str) {
    if enabled(Level::Error) {
        print(Level::Error, message);
    }
    crate::debug::messengers::emit(Level::Error, GENERAL | VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT, message);
}

/// Prints a message whatever `VK_LOADER_DEBUG` says (used when instance creation fails outright),
/// and sends it to the debug messengers listening on this thread.
pub fn write(level: Level, message: &str) {
    print(level, message);
    crate::debug::messengers::emit(level, GENERAL, message);
}

fn print(level: Level, message: &str) {
    platform::stderr_line(&line(level, message));
}

/// One stderr line, as the Khronos loader prints it (scripts and its tests match it): the header
/// padded to 32 columns, then the message.
fn line(level: Level, message: &str) -> String {
    let header = format!("[Vulkan Loader] {}: ", level.name());
    format!("{header:<32}{message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_look_like_the_khronos_loaders() {
        assert_eq!(line(Level::Debug, "x"), "[Vulkan Loader] DEBUG:          x");
        assert_eq!(line(Level::Warn, "y"), "[Vulkan Loader] WARNING:        y");
        assert_eq!(line(Level::Layer, "z"), "[Vulkan Loader] LAYER:          z");
    }
}
