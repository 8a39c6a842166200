//! What a generated entry point does with a handle the layer does not know: its dispatch pointer
//! is no instance's or device's of this layer ([`unknown`]), or the layer's `Layer::unwrap_*`
//! refused it ([`refused`]). The call is not passed down (there is no next level to pass it to,
//! or the layer said no) and returns the command's [`Fallback`] value; once per command and
//! process, the layer says so on stderr (`[vk-layer] LAYER: ...`) and, where it knows the
//! instance, to the application's debug-utils messengers and report callbacks
//! ([`report`](crate::report())'s reach). Both are cold paths, out of line: the hot path of a
//! known handle is unchanged. And [`parameter_array`], the view of an array parameter whose
//! handles an entry point unwraps.

use std::ffi::CString;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use vk_generated::types::*;
use vk_generated::{COMMANDS, COMMAND_COUNT};

use crate::guard::Fallback;
use crate::report::{in_lifecycle, prefix, Message, Messengers, Object};
use crate::state::Registered;

/// One bit per command: reported already.
pub(crate) struct Reported([AtomicU64; COMMAND_COUNT.div_ceil(64)]);

impl Reported {
    pub(crate) const fn new() -> Self {
        Reported([const { AtomicU64::new(0) }; COMMAND_COUNT.div_ceil(64)])
    }

    /// Whether this is the first report of `command` (and marks it reported).
    fn first(&self, command: u16) -> bool {
        let (word, bit) = (command as usize / 64, 1u64 << (command % 64));
        self.0
            .get(word)
            .is_none_or(|w| w.fetch_or(bit, Ordering::Relaxed) & bit == 0)
    }
}

/// The message id of the reports.
const ID_NAME: &std::ffi::CStr = c"vk-layer-unknown-handle";

/// `handle` (of `object_type`, the first parameter of `command`) has a dispatch pointer that no
/// instance or device of this layer has: reported on stderr (and to the messengers of an instance
/// being created or destroyed on this thread), once per command; the fallback value returned.
#[cold]
#[inline(never)]
pub(crate) fn unknown<L: Registered, R: Fallback>(
    command: u16,
    object_type: VkObjectType,
    handle: u64,
) -> R {
    if L::chassis().reported.first(command) {
        let text = format!(
            "{}: {} {:#x} belongs to no instance or device of this layer (a handle of another \
             level, or already destroyed); the call is not passed down and returns {}. \
             Reported once per command.",
            command_name(command),
            type_name(object_type),
            handle,
            R::describe(),
        );
        send::<L>(None, VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT, object_type, handle, &text);
    }
    R::fallback()
}

/// The layer's `Layer::unwrap_*` refused `handle` (of `object_type`, a parameter of `command`): reported on stderr and to the instance's messengers, once per command; the
/// fallback value returned.
#[cold]
#[inline(never)]
pub(crate) fn refused<L: Registered, R: Fallback>(
    messengers: &Messengers,
    command: u16,
    object_type: VkObjectType,
    handle: u64,
) -> R {
    if L::chassis().reported.first(command) {
        let text = format!(
            "{}: {} {:#x} is not a handle this layer knows (its unwrap refused it); the call is \
             not passed down and returns {}. Reported once per command.",
            command_name(command),
            type_name(object_type),
            handle,
            R::describe(),
        );
        send::<L>(Some(messengers), VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT, object_type, handle, &text);
    }
    R::fallback()
}

/// The layer's unwrap refused `handle` (of `object_type`) in a member `command` may ignore (the
/// registry's `noautovalidity`: a descriptor's sampler where its type takes none, a push
/// descriptor's `dstSet`), so it went down as it was rather than refusing a valid call: reported
/// as a warning on stderr and to the instance's messengers, once per command, since the level below
/// gets a handle it does not know if the command does read it.
#[cold]
#[inline(never)]
pub(crate) fn passed_unknown<L: Registered>(messengers: &Messengers, command: u16, object_type: VkObjectType, handle: u64) {
    if L::chassis().passed_unknown_reported.first(command) {
        let text = format!(
            "{}: {} {:#x} is not a handle this layer knows (its unwrap refused it), in a member the \
             command may ignore: passed down as it is, which the next level does not know either if \
             the command reads it. Reported once per command.",
            command_name(command),
            type_name(object_type),
            handle,
        );
        send::<L>(Some(messengers), VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT, object_type, handle, &text);
    }
}

fn send<L: Registered>(
    messengers: Option<&Messengers>,
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    object_type: VkObjectType,
    handle: u64,
    text: &str,
) {
    let name = L::PROPERTIES.map_or("vk-layer", |p| p.name);
    let _ = writeln!(std::io::stderr(), "[vk-layer] {name}: {text}");
    let text = CString::new(text).unwrap_or_default();
    let objects = [Object {
        object_type,
        handle,
        name: None,
    }];
    let message = Message {
        severity,
        types: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT,
        id_name: ID_NAME,
        id_number: 0,
        text: &text,
        objects: &objects,
    };
    let layer = prefix(name);
    if in_lifecycle(|m| m.send(&layer, &message, true)).is_some() {
        return;
    }
    if let Some(messengers) = messengers {
        messengers.send(&layer, &message, false);
    }
}

/// The `count` elements at `array`, a command's array parameter (`pImages`); none when `array` is
/// null.
///
/// # Safety
/// `array` is null or points to `count` initialized elements that outlive the returned slice.
pub(crate) unsafe fn parameter_array<'a, T>(array: *const T, count: usize) -> &'a [T] {
    if array.is_null() || count == 0 {
        &[]
    } else {
        // SAFETY: per the caller's contract.
        unsafe { std::slice::from_raw_parts(array, count) }
    }
}

fn command_name(command: u16) -> String {
    COMMANDS
        .get(command as usize)
        .map_or_else(|| format!("command {command}"), |c| c.name().to_string_lossy().into_owned())
}

fn type_name(object_type: VkObjectType) -> &'static str {
    match object_type {
        VkObjectType::INSTANCE => "VkInstance",
        VkObjectType::PHYSICAL_DEVICE => "VkPhysicalDevice",
        VkObjectType::DEVICE => "VkDevice",
        VkObjectType::QUEUE => "VkQueue",
        VkObjectType::COMMAND_BUFFER => "VkCommandBuffer",
        VkObjectType::IMAGE => "VkImage",
        VkObjectType::IMAGE_VIEW => "VkImageView",
        other => other.name().unwrap_or("handle"),
    }
}
