//! `VK_LOADER_DEBUG` logging in the Khronos loader's stderr format:
//! `[Vulkan Loader] SEVERITY | KIND: ` (or just one of them) padded to 32 columns, then the
//! message; the same lines go to the files a loader settings file's `log_locations` names, each
//! with its own filter. A message is shown where any of its categories is enabled.

use std::sync::{Mutex, OnceLock, PoisonError};
use std::sync::atomic::{AtomicU32, Ordering};

use vk_generated::types::VkDebugUtilsMessageTypeFlagsEXT;

use crate::platform;

pub use super::level::Level;

/// The categories `VK_LOADER_DEBUG` enables.
fn enabled_mask() -> u32 {
    static MASK: OnceLock<u32> = OnceLock::new();
    *MASK.get_or_init(|| crate::reference::variables::VK_LOADER_DEBUG.get().map_or(0, |value| parse_debug(&value)))
}

/// `VK_LOADER_DEBUG`'s categories as the Khronos loader's `loader_debug_init` reads them: a comma
/// list whose words are not trimmed; a word is a prefix of a category's name, and the first name
/// it starts (in the order below) wins: `d` is `debug`, `i` is `info`; `icd` and `implem` name
/// the drivers too; `all` is every category; a word that names none is ignored.
fn parse_debug(value: &str) -> u32 {
    const NAMES: [(&str, u32); 10] = [
        ("all", 127),
        ("warn", super::level::WARN),
        ("info", super::level::INFO),
        ("perf", super::level::PERF),
        ("error", super::level::ERROR),
        ("debug", super::level::DEBUG),
        ("layer", super::level::LAYER),
        ("driver", super::level::DRIVER),
        ("implem", super::level::DRIVER),
        ("icd", super::level::DRIVER),
    ];
    value
        .split(',')
        .filter(|word| !word.is_empty())
        .filter_map(|word| NAMES.iter().find(|(name, _)| name.starts_with(word)).map(|&(_, bits)| bits))
        .fold(0, |mask, bits| mask | bits)
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

/// Whether a filter (`VK_LOADER_DEBUG`'s categories, a settings file's) takes messages of
/// `level`: any of its categories enabled, as the Khronos loader's `msg_type & g_loader_debug`
/// (`WarnLayer` with `warn`, and with `layer`).
fn takes(mask: u32, level: Level) -> bool {
    mask & level.bits() != 0
}

/// Whether messages of `level` reach stderr (`stderr_log`, else `VK_LOADER_DEBUG`).
fn to_stderr(level: Level) -> bool {
    let mask = match SETTINGS_MASK.load(Ordering::Relaxed) {
        NO_SETTINGS => enabled_mask(),
        from_settings => from_settings,
    };
    takes(mask, level)
}

/// One destination of a loader settings file's `log_locations`: a file (absolute path) and the
/// categories (log::Level bits) it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub path: String,
    pub mask: u32,
}

/// The destinations of the settings in force, and the union of their categories (read without
/// the lock, before anything is formatted).
static DESTINATIONS: Mutex<Vec<Destination>> = Mutex::new(Vec::new());
static DESTINATIONS_MASK: AtomicU32 = AtomicU32::new(0);

/// Records the `log_locations` of the settings in force (empty: none). Set each time the settings
/// are read, which `vkCreateInstance` does inside its application's allocator scope: the list
/// outlives that call (and that allocator), so it is the system's memory.
pub fn set_destinations(list: &[Destination]) {
    let mut current = DESTINATIONS.lock().unwrap_or_else(PoisonError::into_inner);
    if *current != list {
        *current = platform::host_alloc::with_system_allocator(|| list.to_vec());
    }
    DESTINATIONS_MASK.store(list.iter().fold(0, |mask, d| mask | d.mask), Ordering::Relaxed);
}

fn to_files(level: Level) -> bool {
    takes(DESTINATIONS_MASK.load(Ordering::Relaxed), level)
}

/// Whether messages of `level` are written anywhere: stderr or a `log_locations` file.
pub fn enabled(level: Level) -> bool {
    to_stderr(level) || to_files(level)
}

/// Whether a message of `level` goes anywhere: it is `enabled`, or a debug messenger listens on
/// this thread. Checked before a message is formatted (see `log!`).
pub fn wanted(level: Level) -> bool {
    enabled(level) || crate::debug::messengers::listening()
}

/// `log!(Level::WarnDriver, "{path}: ...")`: formats and logs the message only when it is `wanted`
/// (formatting messages nobody reads was a measurable part of a first `vkCreateInstance`).
/// Defined first in lib.rs (`#[macro_use]`), so every module has it.
macro_rules! log {
    ($level:expr, $($format:tt)*) => {
        if $crate::debug::log::wanted($level) {
            $crate::debug::log::log_formatted($level, format_args!($($format)*));
        }
    };
}

/// What `log!` calls: the formatting and the logging, out of the caller's code and compiled once
/// for every call site (a closure per site compiled them a hundred times).
#[cold]
#[inline(never)]
pub fn log_formatted(level: Level, message: std::fmt::Arguments<'_>) {
    log(level, &std::fmt::format(message));
}

/// Runs `f` in a function of its own, out of the caller's code: `log!` keeps its formatting out
/// of the hot functions it sits in, which a first `vkCreateInstance` faults in page by page.
#[cold]
#[inline(never)]
pub fn out_of_line(f: impl FnOnce()) {
    f()
}

/// A duration as milliseconds to a tenth (`12.3`), for log lines. Formatted with integers: an
/// `f64`'s `{:.1}` links core's float printing (some 17 KB of code) for these lines alone.
pub struct Milliseconds(pub std::time::Duration);

impl std::fmt::Display for Milliseconds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Rounded to the nearest tenth of a millisecond (100 us); at most 10,000 from the fraction.
        let tenths = self.0.as_secs() * 10_000 + u64::from(self.0.subsec_micros() + 50) / 100;
        write!(f, "{}.{}", tenths / 10, tenths % 10)
    }
}

const GENERAL: VkDebugUtilsMessageTypeFlagsEXT = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;

/// The debug-utils message type of a loader message, as the Khronos loader gives it: a
/// performance message is that alone, any other general.
fn message_types(level: Level) -> VkDebugUtilsMessageTypeFlagsEXT {
    if level.bits() & super::level::PERF != 0 {
        VkDebugUtilsMessageTypeFlagsEXT::PERFORMANCE_BIT_EXT
    } else {
        GENERAL
    }
}

/// Prints a message if one of its categories is enabled; debug messengers listening on this
/// thread hear it whatever `VK_LOADER_DEBUG` says.
pub fn log(level: Level, message: &str) {
    if enabled(level) {
        print(level, message);
    }
    crate::debug::messengers::emit(level, message_types(level), message);
}

/// An error in the application's use of the API (a valid-usage rule broken): logged as errors
/// are; messengers hear it as a validation message as well as a general one.
pub fn validation_error(message: &str) {
    if enabled(Level::Error) {
        print(Level::Error, message);
    }
    crate::debug::messengers::emit(Level::Error, GENERAL | VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT, message);
}

/// A message formatted whether or not anything takes it (an error the application's call fails
/// with): it goes where `log` sends it. Nothing reaches stderr unless `VK_LOADER_DEBUG` or the
/// settings file's `stderr_log` enables its categories, as with the Khronos loader (`log.c`): a
/// drop-in adds no output to a program that did not ask for it; its messengers hear it.
pub fn write(level: Level, message: &str) {
    log(level, message);
}

/// A message the process stops after (a corrupted handle, a call that cannot go on): printed on
/// stderr whatever `VK_LOADER_DEBUG` says, the one line that tells why the program ended, and sent
/// where `log` sends it.
pub fn fatal(level: Level, message: &str) {
    if !to_stderr(level) {
        platform::stderr_line(&line(level, message));
    }
    log(level, message);
}

/// Writes the line to stderr and to the `log_locations` files whose filters take `level`.
fn print(level: Level, message: &str) {
    if to_stderr(level) {
        platform::stderr_line(&line(level, message));
    }
    write_files(level, message);
}

fn write_files(level: Level, message: &str) {
    if !to_files(level) {
        return;
    }
    let text = format!("{}\n", line(level, message));
    let destinations = DESTINATIONS.lock().unwrap_or_else(PoisonError::into_inner);
    for destination in destinations.iter().filter(|d| takes(d.mask, level)) {
        // A file that cannot be written loses the line: there is nowhere to say so but stderr,
        // and a message per line would bury what the user asked for there.
        let _ = platform::append_to_file(&destination.path, &text);
    }
}

/// One stderr line, as the Khronos loader prints it (scripts and its tests match it): the header
/// (`[Vulkan Loader] WARNING | LAYER: `) padded to 32 columns, then the message.
fn line(level: Level, message: &str) -> String {
    let header = super::level::header(level.bits());
    format!("{header:<32}{message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_are_rounded_to_a_tenth() {
        use std::time::Duration;
        let ms = |d: Duration| Milliseconds(d).to_string();
        assert_eq!(ms(Duration::ZERO), "0.0");
        assert_eq!(ms(Duration::from_micros(1_249)), "1.2");
        assert_eq!(ms(Duration::from_micros(1_250)), "1.3");
        assert_eq!(ms(Duration::from_micros(999_960)), "1000.0");
        assert_eq!(ms(Duration::new(2, 345_678_901)), "2345.7");
    }

    #[test]
    fn lines_look_like_the_khronos_loaders() {
        assert_eq!(line(Level::Debug, "x"), "[Vulkan Loader] DEBUG:          x");
        assert_eq!(line(Level::Warn, "y"), "[Vulkan Loader] WARNING:        y");
        assert_eq!(line(Level::Layer, "z"), "[Vulkan Loader] LAYER:          z");
        assert_eq!(line(Level::Driver, "z"), "[Vulkan Loader] DRIVER:         z");
    }

    /// The severity, ` | `, the kind, as the Khronos loader's `loader_log` writes them: padded to
    /// 32 columns while shorter, written whole when not.
    #[test]
    fn a_severity_with_a_kind_names_both() {
        assert_eq!(line(Level::WarnLayer, "m"), "[Vulkan Loader] WARNING | LAYER: m");
        assert_eq!(line(Level::ErrorLayer, "m"), "[Vulkan Loader] ERROR | LAYER:  m");
        assert_eq!(line(Level::InfoLayer, "m"), "[Vulkan Loader] INFO | LAYER:   m");
        assert_eq!(line(Level::DebugLayer, "m"), "[Vulkan Loader] DEBUG | LAYER:  m");
        assert_eq!(line(Level::ErrorDriver, "m"), "[Vulkan Loader] ERROR | DRIVER: m");
        assert_eq!(line(Level::WarnDriver, "m"), "[Vulkan Loader] WARNING | DRIVER: m");
        assert_eq!(line(Level::InfoDriver, "m"), "[Vulkan Loader] INFO | DRIVER:  m");
        assert_eq!(line(Level::DebugDriver, "m"), "[Vulkan Loader] DEBUG | DRIVER: m");
        // Driver before layer, as in the Khronos loader's "Using ... with driver" line.
        assert_eq!(line(Level::LayerDriver, "m"), "[Vulkan Loader] DRIVER:         m");
    }

    /// The header for any set of categories: the first severity (error, warning, info, debug),
    /// the first kind (performance, driver, layer).
    #[test]
    fn the_header_takes_the_first_severity_and_the_first_kind() {
        use crate::debug::level::{header, DEBUG, DRIVER, ERROR, INFO, LAYER, PERF, WARN};
        assert_eq!(header(ERROR | WARN | INFO | DEBUG), "[Vulkan Loader] ERROR: ");
        assert_eq!(header(INFO | DEBUG | LAYER), "[Vulkan Loader] INFO | LAYER: ");
        assert_eq!(header(WARN | PERF | DRIVER | LAYER), "[Vulkan Loader] WARNING | PERF: ");
        assert_eq!(header(DEBUG | DRIVER | LAYER), "[Vulkan Loader] DEBUG | DRIVER: ");
        assert_eq!(header(PERF), "[Vulkan Loader] PERF: ");
        assert_eq!(header(0), "[Vulkan Loader] : ");
    }

    /// A message is shown where any of its categories is: a layer warning with `warn` and with
    /// `layer`, not with `error` or `driver`.
    #[test]
    fn a_filter_takes_a_message_for_any_of_its_categories() {
        let mask = |levels: &[Level]| levels.iter().fold(0, |m, l| m | l.bits());
        assert!(takes(mask(&[Level::Warn]), Level::WarnLayer));
        assert!(takes(mask(&[Level::Layer]), Level::WarnLayer));
        assert!(!takes(mask(&[Level::Error, Level::Driver, Level::Info]), Level::WarnLayer));
        assert!(takes(mask(&[Level::Driver]), Level::InfoDriver) && takes(mask(&[Level::Info]), Level::InfoDriver));
        assert!(takes(mask(&[Level::Layer]), Level::LayerDriver) && takes(mask(&[Level::Driver]), Level::LayerDriver));
        assert!(!takes(mask(&[Level::Warn]), Level::Layer), "a layer message without a severity needs layer");
        assert!(!takes(0, Level::ErrorDriver));
        assert!(takes(127, Level::DebugLayer));
    }

    /// As `log.c` reads the variable: the first name a word starts, untrimmed words, no suffixes.
    #[test]
    fn vk_loader_debug_is_read_as_the_khronos_loader_reads_it() {
        use crate::debug::level::{DEBUG, DRIVER, ERROR, INFO, LAYER, WARN};
        assert_eq!(parse_debug("d"), DEBUG, "d is debug alone, the first name it starts");
        assert_eq!(parse_debug("i"), INFO);
        assert_eq!(parse_debug("icd"), DRIVER);
        assert_eq!(parse_debug("implem"), DRIVER);
        assert_eq!(parse_debug("imp,lay"), DRIVER | LAYER);
        assert_eq!(parse_debug("error,warn"), ERROR | WARN);
        assert_eq!(parse_debug("error, warn"), ERROR, "a word is not trimmed");
        assert_eq!(parse_debug("warning"), 0, "a word longer than the name is no name");
        assert_eq!(parse_debug("a"), 127);
        assert_eq!(parse_debug(",,nonsense,"), 0);
        assert_eq!(parse_debug(""), 0);
    }

    #[test]
    fn destinations_take_the_lines_their_filters_allow() {
        let dir = std::env::temp_dir().join(format!("vk-loader-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (errors, all) = (dir.join("errors.log"), dir.join("all.log"));
        let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
        set_destinations(&[Destination { path: path(&errors), mask: Level::Error as u32 }, Destination { path: path(&all), mask: 127 }]);
        assert!(enabled(Level::Error) && enabled(Level::Driver));
        log(Level::Error, "destination test: an error");
        log(Level::Driver, "destination test: a driver line");
        set_destinations(&[]);
        log(Level::Error, "destination test: after");
        let read = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
        let (errors, all) = (read(&errors), read(&all));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(errors.contains(&format!("{}\n", line(Level::Error, "destination test: an error"))), "{errors}");
        assert!(!errors.contains("a driver line") && !errors.contains("after"), "{errors}");
        assert!(all.contains(&line(Level::Driver, "destination test: a driver line")) && !all.contains("after"), "{all}");
    }
}
