//! The guard on every entry point: a panic in the layer's code never unwinds into the caller
//! through `extern "system"` (that would abort the application); the call returns a
//! [`Fallback`] value instead.

use std::panic::{catch_unwind, AssertUnwindSafe};

use vk_generated::types::{PFN_vkVoidFunction, VkResult};

/// The value an entry point returns when it cannot call down: a panic in the layer's code, a
/// handle whose dispatch pointer no instance or device of the layer has, a handle the layer's
/// `Layer::unwrap_*` refused (both reported once per command), a command the next level does not
/// have (the default `call_down_*`). What the application gets, by the command's return type:
///
/// | returns | the application gets |
/// | --- | --- |
/// | `VkResult` | `VK_ERROR_UNKNOWN` (outputs not written) |
/// | nothing (`void`) | nothing: the call is dropped (a `vkCmd*` is not recorded) |
/// | `VkBool32`, `u32` | `0` (`VK_FALSE`) |
/// | `VkDeviceAddress`, `VkDeviceSize`, `u64` | `0` |
/// | `PFN_vkVoidFunction` | `NULL` |
/// | `void*` | `NULL` |
pub trait Fallback {
    /// The value.
    fn fallback() -> Self;
    /// The value as a report names it (`VK_ERROR_UNKNOWN`).
    fn describe() -> &'static str {
        "the command's fallback value"
    }
}

impl Fallback for () {
    fn fallback() {}
    fn describe() -> &'static str {
        "nothing (the call is dropped)"
    }
}

impl Fallback for VkResult {
    fn fallback() -> Self {
        VkResult::ERROR_UNKNOWN
    }
    fn describe() -> &'static str {
        "VK_ERROR_UNKNOWN"
    }
}

impl Fallback for PFN_vkVoidFunction {
    fn fallback() -> Self {
        None
    }
    fn describe() -> &'static str {
        "NULL"
    }
}

/// `VkBool32` (`VK_FALSE`) and counts.
impl Fallback for u32 {
    fn fallback() -> Self {
        0
    }
    fn describe() -> &'static str {
        "0"
    }
}

/// `VkDeviceAddress`, `VkDeviceSize` and other 64-bit values: zero, "none".
impl Fallback for u64 {
    fn fallback() -> Self {
        0
    }
    fn describe() -> &'static str {
        "0"
    }
}

impl Fallback for *mut std::ffi::c_void {
    fn fallback() -> Self {
        std::ptr::null_mut()
    }
    fn describe() -> &'static str {
        "NULL"
    }
}

/// Runs `f`; a panic in it (the layer's code) becomes the fallback value instead of unwinding
/// into the application through `extern "system"`.
pub fn guard<R: Fallback>(f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| R::fallback())
}
