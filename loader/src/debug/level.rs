//! What a loader message is: a severity (error, warning, info, debug) and a kind (layer, driver,
//! performance), as the Khronos loader's messages carry them: each is a set of `VK_LOADER_DEBUG`
//! categories, `VULKAN_LOADER_WARN_BIT | VULKAN_LOADER_LAYER_BIT` there, `Level::WarnLayer` here.

pub const ERROR: u32 = 1;
pub const WARN: u32 = 2;
pub const INFO: u32 = 4;
pub const DEBUG: u32 = 8;
pub const LAYER: u32 = 16;
pub const DRIVER: u32 = 32;
pub const PERF: u32 = 64;

/// The `VK_LOADER_DEBUG` categories of a message: one of them alone, or a severity with a kind.
/// A message is shown where any of its categories is enabled (`WarnLayer` with `warn` and with
/// `layer`).
#[allow(dead_code)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u32)]
pub enum Level {
    Error = ERROR,
    Warn = WARN,
    Info = INFO,
    Debug = DEBUG,
    Layer = LAYER,
    Driver = DRIVER,
    Perf = PERF,
    ErrorLayer = ERROR | LAYER,
    WarnLayer = WARN | LAYER,
    InfoLayer = INFO | LAYER,
    DebugLayer = DEBUG | LAYER,
    ErrorDriver = ERROR | DRIVER,
    WarnDriver = WARN | DRIVER,
    InfoDriver = INFO | DRIVER,
    DebugDriver = DEBUG | DRIVER,
    /// About a layer and a driver at once (the Khronos loader's "Using ... with driver" line).
    LayerDriver = LAYER | DRIVER,
}

impl Level {
    /// Every category, in the order the Khronos loader names them in a filter list.
    pub const ALL: [Level; 7] = [Level::Error, Level::Warn, Level::Info, Level::Debug, Level::Perf, Level::Driver, Level::Layer];

    /// The categories, as `VK_LOADER_DEBUG` bits.
    pub fn bits(self) -> u32 {
        self as u32
    }

    /// The category's name in a filter list (`ERROR`, ..., `LAYER`); for a severity with a kind,
    /// the severity's.
    pub fn name(self) -> &'static str {
        severity_name(self.bits()).or_else(|| kind_name(self.bits())).unwrap_or("")
    }
}

/// The severity a stderr line names: the first of error, warning, info, debug the message has.
fn severity_name(bits: u32) -> Option<&'static str> {
    [(ERROR, "ERROR"), (WARN, "WARNING"), (INFO, "INFO"), (DEBUG, "DEBUG")].into_iter().find(|(bit, _)| bits & bit != 0).map(|(_, n)| n)
}

/// The kind a stderr line names: performance, else driver, else layer.
fn kind_name(bits: u32) -> Option<&'static str> {
    [(PERF, "PERF"), (DRIVER, "DRIVER"), (LAYER, "LAYER")].into_iter().find(|(bit, _)| bits & bit != 0).map(|(_, n)| n)
}

/// The header of a stderr line as the Khronos loader's `loader_log` writes it, before the
/// padding: `[Vulkan Loader] WARNING | LAYER: `, `[Vulkan Loader] LAYER: `.
pub fn header(bits: u32) -> String {
    let label = match (severity_name(bits), kind_name(bits)) {
        (Some(severity), Some(kind)) => format!("{severity} | {kind}"),
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => String::new(),
    };
    format!("[Vulkan Loader] {label}: ")
}
