//! The `VK_LOADER_DEBUG` categories, which the loader's messages carry.

/// The `VK_LOADER_DEBUG` categories (all of them, whether or not a message uses one yet).
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error = 1,
    Warn = 2,
    Info = 4,
    Debug = 8,
    Layer = 16,
    Driver = 32,
    Perf = 64,
}

impl Level {
    /// Every category, in the order the Khronos loader names them in a filter list.
    pub const ALL: [Level; 7] = [Level::Error, Level::Warn, Level::Info, Level::Debug, Level::Perf, Level::Driver, Level::Layer];

    /// The name `VK_LOADER_DEBUG` output gives the category.
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warn => "WARNING",
            Level::Info => "INFO",
            Level::Debug => "DEBUG",
            Level::Layer => "LAYER",
            Level::Driver => "DRIVER",
            Level::Perf => "PERF",
        }
    }
}
