//! Messages from a layer to the application: its debug-utils messengers and debug-report
//! callbacks, those chained at `vkCreateInstance` (which hear what happens while the instance is
//! created and destroyed, as the specification has it) and, for a layer with
//! [`Layer::MESSAGES`](crate::Layer::MESSAGES), those created later (and then the objects'
//! debug names, which the chassis records from `vkSetDebugUtilsObjectNameEXT`). A layer sends
//! with [`report`](crate::report()).
//!
//! The application's callbacks are copied out under the lock and called without it.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{c_void, CStr, CString};
use std::sync::Mutex;

use vk_generated::types::*;

/// A message of a layer.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// One severity bit (`VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT`, ...).
    pub severity: VkDebugUtilsMessageSeverityFlagsEXT,
    /// The message's types (general, validation, performance).
    pub types: VkDebugUtilsMessageTypeFlagsEXT,
    /// `pMessageIdName`: a name for the kind of message.
    pub id_name: &'a CStr,
    /// `messageIdNumber` (and debug report's `messageCode`).
    pub id_number: i32,
    /// `pMessage`: the message itself.
    pub text: &'a CStr,
    /// The objects the message is about, the first also being debug report's object.
    pub objects: &'a [Object<'a>],
}

/// An object a message names, with its debug name when it has one.
#[derive(Clone, Copy, Debug)]
pub struct Object<'a> {
    /// The handle's type (`VkObjectType::IMAGE`, ...).
    pub object_type: VkObjectType,
    /// The handle, as `u64`.
    pub handle: u64,
    /// The debug name the application gave it (`vkSetDebugUtilsObjectNameEXT`).
    pub name: Option<&'a CStr>,
}

/// A messenger or report callback: who created it (the next level's handle, 0 for one chained
/// at `vkCreateInstance`) and what it asked for.
#[derive(Clone, Copy)]
enum Listener {
    Utils {
        id: u64,
        info: VkDebugUtilsMessengerCreateInfoEXT,
    },
    Report {
        id: u64,
        info: VkDebugReportCallbackCreateInfoEXT,
    },
}

// SAFETY: the user-data pointers are the application's, handed back to its own callbacks, which
// the API says may be called from any thread; `pNext` is cleared when the info is kept.
unsafe impl Send for Listener {}
// SAFETY: as for `Send`: shared, a listener is only read, and the callbacks it hands the pointers
// to may run on any thread.
unsafe impl Sync for Listener {}

impl Listener {
    fn utils(id: u64, info: &VkDebugUtilsMessengerCreateInfoEXT) -> Listener {
        Listener::Utils {
            id,
            info: VkDebugUtilsMessengerCreateInfoEXT {
                pNext: std::ptr::null(),
                ..*info
            },
        }
    }

    fn report(id: u64, info: &VkDebugReportCallbackCreateInfoEXT) -> Listener {
        Listener::Report {
            id,
            info: VkDebugReportCallbackCreateInfoEXT {
                pNext: std::ptr::null(),
                ..*info
            },
        }
    }
}

/// An instance's messengers and report callbacks.
#[derive(Default)]
pub struct Messengers {
    /// Those chained at `vkCreateInstance`: heard during its creation and destruction only.
    chained: Vec<Listener>,
    /// Those created with `vkCreate{DebugUtilsMessenger,DebugReportCallback}EXT`.
    created: Mutex<Vec<Listener>>,
    /// The debug names the application gave objects (`vkSetDebugUtilsObjectNameEXT`), by
    /// (object type, handle).
    names: Mutex<BTreeMap<(i32, u64), CString>>,
}

impl Messengers {
    /// The messengers and callbacks chained on a `vkCreateInstance` `pNext`.
    ///
    /// # Safety
    /// `p_next` is a valid `pNext` chain.
    pub unsafe fn chained(mut p_next: *const c_void) -> Messengers {
        let mut chained = Vec::new();
        while !p_next.is_null() {
            // SAFETY: every structure of a chain starts with sType and pNext; the two read
            // whole are the types their sType says.
            unsafe {
                let header = &*(p_next as *const VkBaseInStructure);
                match header.sType {
                    VkStructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT => chained.push(
                        Listener::utils(0, &*(p_next as *const VkDebugUtilsMessengerCreateInfoEXT)),
                    ),
                    VkStructureType::DEBUG_REPORT_CALLBACK_CREATE_INFO_EXT => {
                        chained.push(Listener::report(
                            0,
                            &*(p_next as *const VkDebugReportCallbackCreateInfoEXT),
                        ))
                    }
                    _ => {}
                }
                p_next = header.pNext as *const c_void;
            }
        }
        Messengers {
            chained,
            created: Mutex::new(Vec::new()),
            names: Mutex::new(BTreeMap::new()),
        }
    }

    /// A messenger the next level created as `id`.
    pub(crate) fn add_utils(&self, id: u64, info: &VkDebugUtilsMessengerCreateInfoEXT) {
        self.lock().push(Listener::utils(id, info));
    }

    /// A report callback the next level created as `id`.
    pub(crate) fn add_report(&self, id: u64, info: &VkDebugReportCallbackCreateInfoEXT) {
        self.lock().push(Listener::report(id, info));
    }

    /// Forgets the messenger (`utils`) or report callback `id`.
    pub(crate) fn remove(&self, id: u64, utils: bool) {
        self.lock().retain(|l| !matches!((l, utils), (Listener::Utils { id: i, .. }, true) | (Listener::Report { id: i, .. }, false) if *i == id));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        self.created.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records (or, with an empty name, forgets) an object's debug name.
    pub(crate) fn set_name(&self, object_type: VkObjectType, handle: u64, name: Option<&CStr>) {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        match name.filter(|n| !n.is_empty()) {
            Some(name) => {
                names.insert((object_type.0, handle), name.to_owned());
            }
            None => {
                names.remove(&(object_type.0, handle));
            }
        }
    }

    /// Sends `message` from `layer` to the messengers created since, and (`with_chained`) to
    /// those chained at creation; objects without a name get the one the application gave them.
    pub(crate) fn send(&self, layer: &CStr, message: &Message<'_>, with_chained: bool) {
        let created = self.lock().clone();
        let chained = if with_chained { &self.chained[..] } else { &[] };
        if chained.is_empty() && created.is_empty() {
            return;
        }
        let known: Vec<Option<CString>> = {
            let names = self.names.lock().unwrap_or_else(|e| e.into_inner());
            message
                .objects
                .iter()
                .map(|o| match o.name {
                    Some(_) => None,
                    None => names.get(&(o.object_type.0, o.handle)).cloned(),
                })
                .collect()
        };
        let objects: Vec<Object<'_>> = message
            .objects
            .iter()
            .zip(&known)
            .map(|(o, k)| Object {
                name: o.name.or(k.as_deref()),
                ..*o
            })
            .collect();
        let message = Message {
            objects: &objects,
            ..*message
        };
        for listener in chained.iter().chain(&created) {
            deliver(listener, layer, &message);
        }
    }
}

fn deliver(listener: &Listener, layer: &CStr, message: &Message<'_>) {
    match listener {
        Listener::Utils { info, .. } => {
            let Some(callback) = info.pfnUserCallback else {
                return;
            };
            if info.messageSeverity.0 & message.severity.0 == 0
                || info.messageType.0 & message.types.0 == 0
            {
                return;
            }
            let names: Vec<VkDebugUtilsObjectNameInfoEXT> = message
                .objects
                .iter()
                .map(|o| VkDebugUtilsObjectNameInfoEXT {
                    objectType: o.object_type,
                    objectHandle: o.handle,
                    pObjectName: o.name.map_or(std::ptr::null(), CStr::as_ptr),
                    ..Default::default()
                })
                .collect();
            let data = VkDebugUtilsMessengerCallbackDataEXT {
                pMessageIdName: message.id_name.as_ptr(),
                messageIdNumber: message.id_number,
                pMessage: message.text.as_ptr(),
                objectCount: names.len() as u32,
                pObjects: names.as_ptr(),
                ..Default::default()
            };
            // SAFETY: the application's callback, called as VK_EXT_debug_utils says.
            unsafe { callback(message.severity, message.types, &data, info.pUserData) };
        }
        Listener::Report { info, .. } => {
            let Some(callback) = info.pfnCallback else {
                return;
            };
            let flags = report_flags(message);
            if info.flags.0 & flags.0 == 0 {
                return;
            }
            let (object_type, object) =
                message
                    .objects
                    .first()
                    .map_or((VkDebugReportObjectTypeEXT::UNKNOWN_EXT, 0), |o| {
                        // The two enumerations agree for the core objects up to VK_OBJECT_TYPE_COMMAND_POOL.
                        let ty = if (0..=25).contains(&o.object_type.0) {
                            VkDebugReportObjectTypeEXT(o.object_type.0)
                        } else {
                            VkDebugReportObjectTypeEXT::UNKNOWN_EXT
                        };
                        (ty, o.handle)
                    });
            // SAFETY: the application's callback, called as VK_EXT_debug_report says.
            unsafe {
                callback(
                    flags,
                    object_type,
                    object,
                    0,
                    message.id_number,
                    layer.as_ptr(),
                    message.text.as_ptr(),
                    info.pUserData,
                )
            };
        }
    }
}

/// A debug-utils severity and types as debug-report flags.
fn report_flags(message: &Message<'_>) -> VkDebugReportFlagsEXT {
    type S = VkDebugUtilsMessageSeverityFlagsEXT;
    let performance = message.types.0 & VkDebugUtilsMessageTypeFlagsEXT::PERFORMANCE_BIT_EXT.0 != 0;
    match message.severity {
        S::ERROR_BIT_EXT => VkDebugReportFlagsEXT::ERROR_BIT_EXT,
        S::WARNING_BIT_EXT if performance => VkDebugReportFlagsEXT::PERFORMANCE_WARNING_BIT_EXT,
        S::WARNING_BIT_EXT => VkDebugReportFlagsEXT::WARNING_BIT_EXT,
        S::INFO_BIT_EXT => VkDebugReportFlagsEXT::INFORMATION_BIT_EXT,
        _ => VkDebugReportFlagsEXT::DEBUG_BIT_EXT,
    }
}

thread_local! {
    /// The messengers of the instance this thread is creating or destroying (through this
    /// layer), while its `vkCreateInstance` / `vkDestroyInstance` runs.
    static IN_LIFECYCLE: Cell<*const Messengers> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `messengers` as those of the instance being created or destroyed on this thread.
pub(crate) fn during_lifecycle<R>(messengers: &Messengers, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Messengers);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = IN_LIFECYCLE.try_with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(
        IN_LIFECYCLE
            .try_with(|c| c.replace(messengers))
            .unwrap_or(std::ptr::null()),
    );
    f()
}

/// The messengers of the instance being created or destroyed on this thread, if any.
pub(crate) fn in_lifecycle<R>(f: impl FnOnce(&Messengers) -> R) -> Option<R> {
    let current = IN_LIFECYCLE.try_with(Cell::get).ok()?;
    // SAFETY: set only by `during_lifecycle`, which outlives every use on this thread.
    unsafe { current.as_ref() }.map(f)
}

/// `name` as a C string for the report callbacks' layer prefix.
pub(crate) fn prefix(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}
