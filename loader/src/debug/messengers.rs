//! How the loader's messages reach the application's `VK_EXT_debug_utils` messengers and
//! `VK_EXT_debug_report` callbacks (whatever `VK_LOADER_DEBUG` says); creating and destroying them
//! is `dispatch::messengers`.
//!
//! Messengers chained to `VkInstanceCreateInfo::pNext` hear `vkCreateInstance` and
//! `vkDestroyInstance`; messengers created later hear everything the loader says about their
//! instance. The loader's messages reach the messengers of the instance the current call is about,
//! through a per-thread scope ([`Scope`]): no lock is held while a callback runs.

use std::cell::RefCell;
use std::ffi::CString;
use std::sync::Mutex;

use vk_generated::types::*;

use crate::app_callbacks::{ReportFunction, UtilsFunction};
use crate::debug::level::{self as category, Level};

/// An application callback and the messages it asked for.
#[derive(Clone, Copy)]
pub enum Callback {
    Utils { severity: VkDebugUtilsMessageSeverityFlagsEXT, types: VkDebugUtilsMessageTypeFlagsEXT, callback: UtilsFunction },
    Report { flags: VkDebugReportFlagsEXT, callback: ReportFunction },
}

impl Callback {
    /// Delivers one loader message about `instance` (0 while none exists yet) if the callback
    /// asked for its severity and one of its `message_types`.
    fn deliver(&self, level: Level, message_types: VkDebugUtilsMessageTypeFlagsEXT, message: &CString, instance: u64) {
        match *self {
            Callback::Utils { severity, types, callback } => {
                let bit = utils_severity(level);
                if severity.intersects(bit) && types.intersects(message_types) {
                    callback.loader_message(bit, message_types, message, instance);
                }
            }
            Callback::Report { flags, callback } => {
                let bit = report_flag(level, message_types);
                if flags.intersects(bit) {
                    callback.loader_message(bit, message, instance);
                }
            }
        }
    }
}

/// The debug-utils severity of a loader message, as the Khronos loader's `loader_log` maps it:
/// info, else warning, else error, else debug (verbose); a message with only a kind (layer or
/// driver) is information. A performance message with no severity has none: nobody hears it.
fn utils_severity(level: Level) -> VkDebugUtilsMessageSeverityFlagsEXT {
    let bits = level.bits();
    if bits & category::INFO != 0 {
        VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT
    } else if bits & category::WARN != 0 {
        VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT
    } else if bits & category::ERROR != 0 {
        VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT
    } else if bits & category::DEBUG != 0 {
        VkDebugUtilsMessageSeverityFlagsEXT::VERBOSE_BIT_EXT
    } else if bits & (category::LAYER | category::DRIVER) != 0 {
        VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT
    } else {
        VkDebugUtilsMessageSeverityFlagsEXT(0)
    }
}

/// The debug-report flag of a loader message: its debug-utils severity translated as the Khronos
/// loader translates it (`debug_utils_AnnotFlagsToReportFlags`): a performance warning is a
/// performance warning.
fn report_flag(level: Level, types: VkDebugUtilsMessageTypeFlagsEXT) -> VkDebugReportFlagsEXT {
    let severity = utils_severity(level);
    if severity.contains(VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT) {
        VkDebugReportFlagsEXT::ERROR_BIT_EXT
    } else if severity.contains(VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT) {
        if types.contains(VkDebugUtilsMessageTypeFlagsEXT::PERFORMANCE_BIT_EXT) {
            VkDebugReportFlagsEXT::PERFORMANCE_WARNING_BIT_EXT
        } else {
            VkDebugReportFlagsEXT::WARNING_BIT_EXT
        }
    } else if severity.contains(VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT) {
        VkDebugReportFlagsEXT::INFORMATION_BIT_EXT
    } else if severity.contains(VkDebugUtilsMessageSeverityFlagsEXT::VERBOSE_BIT_EXT) {
        VkDebugReportFlagsEXT::DEBUG_BIT_EXT
    } else {
        VkDebugReportFlagsEXT(0)
    }
}

/// A messenger (or report callback) the application created: its handle is this object's address.
pub(crate) struct Messenger {
    pub(crate) callback: Callback,
    /// The drivers' own messengers: (index into `Instance::drivers`, driver handle).
    pub(crate) per_driver: Vec<(usize, u64)>,
    /// The allocation callbacks it was created with: a driver loaded later (a lazy driver) gets
    /// its own messenger with them.
    pub(crate) allocator: Option<vk_generated::types::VkAllocationCallbacks>,
}

/// The messengers an application created on one instance.
#[derive(Default)]
pub struct Messengers(Mutex<Vec<Box<Messenger>>>);

impl Messengers {
    /// The callbacks of the live messengers (copied: no lock is held while they run).
    pub fn callbacks(&self) -> Vec<Callback> {
        self.0.lock().map(|list| list.iter().map(|m| m.callback).collect()).unwrap_or_default()
    }

    pub(crate) fn insert(&self, messenger: Box<Messenger>) -> u64 {
        let handle = &*messenger as *const Messenger as u64;
        if let Ok(mut list) = self.0.lock() {
            list.push(messenger);
        }
        handle
    }

    /// (handle, callback, allocation callbacks) of each messenger that has no messenger in driver
    /// `index` yet.
    pub(crate) fn missing_in_driver(&self, index: usize) -> Vec<(u64, Callback, Option<vk_generated::types::VkAllocationCallbacks>)> {
        let Ok(list) = self.0.lock() else { return Vec::new() };
        list.iter()
            .filter(|m| !m.per_driver.iter().any(|&(i, _)| i == index))
            .map(|m| (&**m as *const Messenger as u64, m.callback, m.allocator))
            .collect()
    }

    /// Records driver `index`'s messenger for the application's messenger `handle`; `false` if
    /// that one is gone (destroyed meanwhile).
    pub(crate) fn add_driver_messenger(&self, handle: u64, index: usize, driver_handle: u64) -> bool {
        let Ok(mut list) = self.0.lock() else { return false };
        match list.iter_mut().find(|m| &***m as *const Messenger as u64 == handle) {
            Some(m) => {
                m.per_driver.push((index, driver_handle));
                true
            }
            None => false,
        }
    }

    pub(crate) fn remove(&self, handle: u64) -> Option<Box<Messenger>> {
        let mut list = self.0.lock().ok()?;
        let at = list.iter().position(|m| &**m as *const Messenger as u64 == handle)?;
        Some(list.swap_remove(at))
    }
}

/// The callbacks that hear the loader's messages on a thread, and the instance they are about.
#[derive(Default)]
struct Listeners {
    callbacks: Vec<Callback>,
    /// The instance's handle (0 while it is being created).
    instance: u64,
}

thread_local! {
    static LISTENERS: RefCell<Listeners> = const { RefCell::new(Listeners { callbacks: Vec::new(), instance: 0 }) };
}

/// While alive, the loader's messages on this thread also go to `callbacks`.
pub struct Scope(Listeners);

impl Scope {
    pub fn enter(callbacks: Vec<Callback>) -> Scope {
        Scope::about(Listeners { callbacks, instance: 0 })
    }

    fn about(listeners: Listeners) -> Scope {
        Scope(LISTENERS.with(|l| std::mem::replace(&mut *l.borrow_mut(), listeners)))
    }

    /// The scope for a call about the instance whose handle is `instance`, heard by `callbacks`.
    pub fn about_instance(callbacks: Vec<Callback>, instance: u64) -> Scope {
        Scope::about(Listeners { callbacks, instance })
    }

    /// Names the instance (by its handle) the messages of this thread's scope are about, once it
    /// exists.
    pub fn set_instance(instance: u64) {
        LISTENERS.with(|l| l.borrow_mut().instance = instance);
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.0);
        LISTENERS.with(|l| *l.borrow_mut() = previous);
    }
}

/// Whether a messenger listens on this thread (`emit` would deliver).
pub fn listening() -> bool {
    LISTENERS.with(|l| !l.borrow().callbacks.is_empty())
}

/// Sends one of the loader's messages to the callbacks listening on this thread, as a message of
/// `types` (`GENERAL`, and `VALIDATION` for the application's misuse of the API).
pub fn emit(level: Level, types: VkDebugUtilsMessageTypeFlagsEXT, message: &str) {
    let (callbacks, instance) = LISTENERS.with(|l| {
        let l = l.borrow();
        (l.callbacks.clone(), l.instance)
    });
    if callbacks.is_empty() {
        return;
    }
    let Ok(message) = CString::new(message.replace('\0', " ")) else { return };
    for callback in &callbacks {
        callback.deliver(level, types, &message, instance);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Khronos loader's mapping: info, else warning, else error, else debug (verbose); a
    /// message with only a kind is information.
    #[test]
    fn messengers_hear_each_message_at_the_khronos_loaders_severity() {
        type S = VkDebugUtilsMessageSeverityFlagsEXT;
        let cases = [
            (Level::Error, S::ERROR_BIT_EXT),
            (Level::ErrorLayer, S::ERROR_BIT_EXT),
            (Level::ErrorDriver, S::ERROR_BIT_EXT),
            (Level::Warn, S::WARNING_BIT_EXT),
            (Level::WarnLayer, S::WARNING_BIT_EXT),
            (Level::WarnDriver, S::WARNING_BIT_EXT),
            (Level::Info, S::INFO_BIT_EXT),
            (Level::InfoLayer, S::INFO_BIT_EXT),
            (Level::InfoDriver, S::INFO_BIT_EXT),
            (Level::Debug, S::VERBOSE_BIT_EXT),
            (Level::DebugLayer, S::VERBOSE_BIT_EXT),
            (Level::DebugDriver, S::VERBOSE_BIT_EXT),
            (Level::Layer, S::INFO_BIT_EXT),
            (Level::Driver, S::INFO_BIT_EXT),
            (Level::LayerDriver, S::INFO_BIT_EXT),
            (Level::Perf, VkDebugUtilsMessageSeverityFlagsEXT(0)),
        ];
        for (level, severity) in cases {
            assert_eq!(utils_severity(level), severity, "{level:?}");
        }
    }

    /// Report callbacks get the debug-utils severity translated: information for a layer or
    /// driver line, debug for a debug one.
    #[test]
    fn report_callbacks_get_the_severity_translated() {
        type R = VkDebugReportFlagsEXT;
        let general = VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT;
        let performance = VkDebugUtilsMessageTypeFlagsEXT::PERFORMANCE_BIT_EXT;
        assert_eq!(report_flag(Level::ErrorDriver, general), R::ERROR_BIT_EXT);
        assert_eq!(report_flag(Level::WarnLayer, general), R::WARNING_BIT_EXT);
        assert_eq!(report_flag(Level::Warn, performance), R::PERFORMANCE_WARNING_BIT_EXT);
        assert_eq!(report_flag(Level::Layer, general), R::INFORMATION_BIT_EXT);
        assert_eq!(report_flag(Level::Driver, general), R::INFORMATION_BIT_EXT);
        assert_eq!(report_flag(Level::DebugDriver, general), R::DEBUG_BIT_EXT);
        assert_eq!(report_flag(Level::Perf, performance), VkDebugReportFlagsEXT(0));
    }
}
