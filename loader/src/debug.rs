//! `VK_EXT_debug_utils` and `VK_EXT_debug_report`, provided by the loader whatever the drivers
//! support. Messengers receive the loader's own messages (whatever `VK_LOADER_DEBUG` says); where a
//! driver supports the extension, a per-driver messenger with the same callback carries its messages.
//!
//! Messengers chained to `VkInstanceCreateInfo::pNext` hear `vkCreateInstance` and
//! `vkDestroyInstance`; messengers created later hear everything the loader says about their
//! instance. The loader's messages reach the messengers of the instance the current call is about,
//! through a per-thread scope ([`Scope`]): no lock is held while a callback runs.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CString};
use std::sync::Mutex;

use vk_generated::types::*;

use crate::host_alloc::AllocatorScope;
use crate::instance::{DriverInstance, Instance};
use crate::log::Level;

/// An application callback and the messages it asked for.
#[derive(Clone, Copy)]
pub enum Callback {
    Utils {
        severity: VkDebugUtilsMessageSeverityFlagsEXT,
        types: VkDebugUtilsMessageTypeFlagsEXT,
        callback: PFN_vkDebugUtilsMessengerCallbackEXT,
        user_data: *mut c_void,
    },
    Report {
        flags: VkDebugReportFlagsEXT,
        callback: PFN_vkDebugReportCallbackEXT,
        user_data: *mut c_void,
    },
}

// SAFETY: the user data pointer is the application's, handed back to its callback as Vulkan
// requires; the loader never dereferences it.
unsafe impl Send for Callback {}

impl Callback {
    fn from_utils(info: &VkDebugUtilsMessengerCreateInfoEXT) -> Self {
        Callback::Utils {
            severity: info.messageSeverity,
            types: info.messageType,
            callback: info.pfnUserCallback,
            user_data: info.pUserData,
        }
    }

    fn from_report(info: &VkDebugReportCallbackCreateInfoEXT) -> Self {
        Callback::Report { flags: info.flags, callback: info.pfnCallback, user_data: info.pUserData }
    }

    /// Delivers one loader message about `instance` (0 while none exists yet) if the callback
    /// asked for its severity and one of its `message_types`.
    fn deliver(&self, level: Level, message_types: VkDebugUtilsMessageTypeFlagsEXT, message: &CString, instance: u64) {
        match *self {
            Callback::Utils { severity, types, callback: Some(callback), user_data } => {
                let bit = utils_severity(level);
                if !severity.contains(bit) || !types.intersects(message_types) {
                    return;
                }
                // The object a loader message is about is its instance, as with the Khronos loader.
                let object = VkDebugUtilsObjectNameInfoEXT {
                    objectType: VkObjectType::INSTANCE,
                    objectHandle: instance,
                    ..Default::default()
                };
                let data = VkDebugUtilsMessengerCallbackDataEXT {
                    pMessageIdName: c"Loader Message".as_ptr(),
                    pMessage: message.as_ptr(),
                    objectCount: 1,
                    pObjects: &object,
                    ..Default::default()
                };
                // SAFETY: the application's callback, with the arguments debug_utils defines.
                unsafe { callback(bit, message_types, &data, user_data) };
            }
            Callback::Report { flags, callback: Some(callback), user_data } => {
                let bit = report_flag(level);
                if !flags.contains(bit) {
                    return;
                }
                // SAFETY: the application's callback, with the arguments debug_report defines.
                unsafe {
                    callback(
                        bit,
                        VkDebugReportObjectTypeEXT::INSTANCE_EXT,
                        instance,
                        0,
                        0,
                        c"Loader Message".as_ptr(),
                        message.as_ptr(),
                        user_data,
                    )
                };
            }
            _ => {}
        }
    }
}

fn utils_severity(level: Level) -> VkDebugUtilsMessageSeverityFlagsEXT {
    match level {
        Level::Error => VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
        Level::Warn => VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
        Level::Info => VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT,
        Level::Debug | Level::Layer | Level::Driver | Level::Perf => VkDebugUtilsMessageSeverityFlagsEXT::VERBOSE_BIT_EXT,
    }
}

fn report_flag(level: Level) -> VkDebugReportFlagsEXT {
    match level {
        Level::Error => VkDebugReportFlagsEXT::ERROR_BIT_EXT,
        Level::Warn => VkDebugReportFlagsEXT::WARNING_BIT_EXT,
        Level::Info => VkDebugReportFlagsEXT::INFORMATION_BIT_EXT,
        Level::Debug | Level::Layer | Level::Driver => VkDebugReportFlagsEXT::DEBUG_BIT_EXT,
        Level::Perf => VkDebugReportFlagsEXT::PERFORMANCE_WARNING_BIT_EXT,
    }
}

/// The callbacks chained to a create info's `pNext` (`VkInstanceCreateInfo`).
///
/// # Safety
/// `chain` must be a valid `pNext` chain.
pub unsafe fn callbacks_in_chain(chain: *const c_void) -> Vec<Callback> {
    vk_generated::chain_elements(chain)
        .filter_map(|(stype, element)| match stype {
            VkStructureType::DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT => {
                Some(Callback::from_utils(&*(element as *const VkDebugUtilsMessengerCreateInfoEXT)))
            }
            VkStructureType::DEBUG_REPORT_CALLBACK_CREATE_INFO_EXT => {
                Some(Callback::from_report(&*(element as *const VkDebugReportCallbackCreateInfoEXT)))
            }
            _ => None,
        })
        .collect()
}

/// A messenger (or report callback) the application created: its handle is this object's address.
struct Messenger {
    callback: Callback,
    /// The drivers' own messengers: (index into `Instance::drivers`, driver handle).
    per_driver: Vec<(usize, u64)>,
}

/// The messengers an application created on one instance.
#[derive(Default)]
pub struct Messengers(Mutex<Vec<Box<Messenger>>>);

impl Messengers {
    /// The callbacks of the live messengers (copied: no lock is held while they run).
    pub fn callbacks(&self) -> Vec<Callback> {
        self.0.lock().map(|list| list.iter().map(|m| m.callback).collect()).unwrap_or_default()
    }

    fn insert(&self, messenger: Box<Messenger>) -> u64 {
        let handle = &*messenger as *const Messenger as u64;
        if let Ok(mut list) = self.0.lock() {
            list.push(messenger);
        }
        handle
    }

    fn remove(&self, handle: u64) -> Option<Box<Messenger>> {
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

    /// The scope for a call about `instance`: its messengers (and, during creation and
    /// destruction, the ones chained to its create info).
    pub fn of_instance(instance: &Instance, with_creation_callbacks: bool) -> Scope {
        let mut callbacks = instance.messengers.callbacks();
        if with_creation_callbacks {
            callbacks.extend_from_slice(&instance.creation_callbacks);
        }
        Scope::about(Listeners { callbacks, instance: instance as *const Instance as u64 })
    }

    /// Names the instance the messages of this thread's scope are about, once it exists.
    pub fn set_instance(instance: &Instance) {
        LISTENERS.with(|l| l.borrow_mut().instance = instance as *const Instance as u64);
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = std::mem::take(&mut self.0);
        LISTENERS.with(|l| *l.borrow_mut() = previous);
    }
}

/// Runs `f` with the messengers of `instance` listening: for the loader's messages from calls that
/// enter no scope of their own (the physical-device terminators), so that the application's
/// messengers hear them too.
pub fn with_messengers_of<R>(instance: Option<&Instance>, f: impl FnOnce() -> R) -> R {
    let _scope = instance.map(|i| Scope::of_instance(i, false));
    f()
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

/// The drivers of `instance` that had `extension` enabled at creation.
fn drivers_with<'a>(instance: &'a Instance, extension: &'a [u8]) -> impl Iterator<Item = (usize, &'a DriverInstance)> {
    instance.drivers.iter().enumerate().filter(move |(_, d)| d.has_extension(extension))
}

/// Creates a loader messenger with a driver messenger in every driver that supports the extension.
unsafe fn create(
    instance: VkInstance,
    callback: Callback,
    mut create_in_driver: impl FnMut(&DriverInstance) -> Result<u64, VkResult>,
    mut destroy_in_driver: impl FnMut(&DriverInstance, u64),
    extension: &[u8],
    allocator: *const VkAllocationCallbacks,
    out: *mut u64,
) -> VkResult {
    let Some(instance) = Instance::from_handle(instance) else { return VkResult::ERROR_INITIALIZATION_FAILED };
    if out.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    let memory = AllocatorScope::enter(allocator, VkSystemAllocationScope::OBJECT);
    let mut per_driver = Vec::new();
    for (index, driver) in drivers_with(instance, extension) {
        match create_in_driver(driver) {
            Ok(handle) => per_driver.push((index, handle)),
            Err(result) => {
                for (index, handle) in per_driver {
                    destroy_in_driver(&instance.drivers[index], handle);
                }
                return result;
            }
        }
    }
    let messenger = Box::new(Messenger { callback, per_driver });
    if memory.failed() {
        for &(index, handle) in &messenger.per_driver {
            destroy_in_driver(&instance.drivers[index], handle);
        }
        return VkResult::ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = instance.messengers.insert(messenger);
    VkResult::SUCCESS
}

/// Destroys a loader messenger and its driver messengers.
unsafe fn destroy(instance: VkInstance, handle: u64, mut destroy_in_driver: impl FnMut(&DriverInstance, u64)) {
    let Some(instance) = Instance::from_handle(instance) else { return };
    if handle == 0 {
        return;
    }
    match instance.messengers.remove(handle) {
        Some(messenger) => {
            for (index, driver_handle) in messenger.per_driver {
                destroy_in_driver(&instance.drivers[index], driver_handle);
            }
        }
        None => log!(Level::Warn, "debug messenger {handle:#x} is not one of this instance's"),
    }
}

const DEBUG_UTILS: &[u8] = b"VK_EXT_debug_utils";
const DEBUG_REPORT: &[u8] = b"VK_EXT_debug_report";

pub unsafe extern "system" fn terminator_vkCreateDebugUtilsMessengerEXT(
    instance: VkInstance,
    pCreateInfo: *const VkDebugUtilsMessengerCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pMessenger: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    crate::ffi::guard("vkCreateDebugUtilsMessengerEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        create(
            instance,
            Callback::from_utils(info),
            |d| {
                let mut handle = VkDebugUtilsMessengerEXT::NULL;
                match d.table.vkCreateDebugUtilsMessengerEXT.map(|f| f(d.handle, info, pAllocator, &mut handle)) {
                    Some(VkResult::SUCCESS) => Ok(handle.0),
                    Some(error) => Err(error),
                    None => Ok(0),
                }
            },
            |d, handle| destroy_utils_in_driver(d, handle, pAllocator),
            DEBUG_UTILS,
            pAllocator,
            pMessenger as *mut u64,
        )
    })
}

unsafe fn destroy_utils_in_driver(d: &DriverInstance, handle: u64, allocator: *const VkAllocationCallbacks) {
    if let (Some(f), true) = (d.table.vkDestroyDebugUtilsMessengerEXT, handle != 0) {
        f(d.handle, VkDebugUtilsMessengerEXT(handle), allocator);
    }
}

pub unsafe extern "system" fn terminator_vkDestroyDebugUtilsMessengerEXT(
    instance: VkInstance,
    messenger: VkDebugUtilsMessengerEXT,
    pAllocator: *const VkAllocationCallbacks,
) {
    crate::ffi::guard("vkDestroyDebugUtilsMessengerEXT", (), || {
        destroy(instance, messenger.0, |d, handle| destroy_utils_in_driver(d, handle, pAllocator))
    })
}

/// Delivered to the loader's messengers only: the drivers' messengers carry the same callbacks, so
/// passing the message down as well would deliver it twice.
pub unsafe extern "system" fn terminator_vkSubmitDebugUtilsMessageEXT(
    instance: VkInstance,
    messageSeverity: VkDebugUtilsMessageSeverityFlagBitsEXT,
    messageTypes: VkDebugUtilsMessageTypeFlagsEXT,
    pCallbackData: *const VkDebugUtilsMessengerCallbackDataEXT,
) {
    crate::ffi::guard("vkSubmitDebugUtilsMessageEXT", (), || {
        let Some(instance) = Instance::from_handle(instance) else { return };
        for callback in instance.messengers.callbacks() {
            if let Callback::Utils { severity, types, callback: Some(f), user_data } = callback {
                if severity.intersects(messageSeverity) && types.intersects(messageTypes) {
                    f(messageSeverity, messageTypes, pCallbackData, user_data);
                }
            }
        }
    })
}

pub unsafe extern "system" fn terminator_vkCreateDebugReportCallbackEXT(
    instance: VkInstance,
    pCreateInfo: *const VkDebugReportCallbackCreateInfoEXT,
    pAllocator: *const VkAllocationCallbacks,
    pCallback: *mut VkDebugReportCallbackEXT,
) -> VkResult {
    crate::ffi::guard("vkCreateDebugReportCallbackEXT", VkResult::ERROR_INITIALIZATION_FAILED, || {
        let Some(info) = pCreateInfo.as_ref() else { return VkResult::ERROR_INITIALIZATION_FAILED };
        create(
            instance,
            Callback::from_report(info),
            |d| {
                let mut handle = VkDebugReportCallbackEXT::NULL;
                match d.table.vkCreateDebugReportCallbackEXT.map(|f| f(d.handle, info, pAllocator, &mut handle)) {
                    Some(VkResult::SUCCESS) => Ok(handle.0),
                    Some(error) => Err(error),
                    None => Ok(0),
                }
            },
            |d, handle| destroy_report_in_driver(d, handle, pAllocator),
            DEBUG_REPORT,
            pAllocator,
            pCallback as *mut u64,
        )
    })
}

unsafe fn destroy_report_in_driver(d: &DriverInstance, handle: u64, allocator: *const VkAllocationCallbacks) {
    if let (Some(f), true) = (d.table.vkDestroyDebugReportCallbackEXT, handle != 0) {
        f(d.handle, VkDebugReportCallbackEXT(handle), allocator);
    }
}

pub unsafe extern "system" fn terminator_vkDestroyDebugReportCallbackEXT(
    instance: VkInstance,
    callback: VkDebugReportCallbackEXT,
    pAllocator: *const VkAllocationCallbacks,
) {
    crate::ffi::guard("vkDestroyDebugReportCallbackEXT", (), || {
        destroy(instance, callback.0, |d, handle| destroy_report_in_driver(d, handle, pAllocator))
    })
}

/// Delivered to the loader's report callbacks only (see `vkSubmitDebugUtilsMessageEXT`).
pub unsafe extern "system" fn terminator_vkDebugReportMessageEXT(
    instance: VkInstance,
    flags: VkDebugReportFlagsEXT,
    objectType: VkDebugReportObjectTypeEXT,
    object: u64,
    location: usize,
    messageCode: i32,
    pLayerPrefix: *const c_char,
    pMessage: *const c_char,
) {
    crate::ffi::guard("vkDebugReportMessageEXT", (), || {
        let Some(instance) = Instance::from_handle(instance) else { return };
        for callback in instance.messengers.callbacks() {
            if let Callback::Report { flags: wanted, callback: Some(f), user_data } = callback {
                if wanted.intersects(flags) {
                    f(flags, objectType, object, location, messageCode, pLayerPrefix, pMessage, user_data);
                }
            }
        }
    })
}
