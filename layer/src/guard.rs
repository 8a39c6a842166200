//! The guard on every entry point: a panic in the layer's code never unwinds into the caller
//! through `extern "system"` (that would abort the application); the call returns a
//! [`Fallback`] value instead.

use std::panic::{catch_unwind, AssertUnwindSafe};

use vk_generated::types::{PFN_vkVoidFunction, VkResult};

/// The value an entry point returns when it cannot call down (a panic, an unknown handle).
pub trait Fallback {
    /// The value.
    fn fallback() -> Self;
}

impl Fallback for () {
    fn fallback() {}
}

impl Fallback for VkResult {
    fn fallback() -> Self {
        VkResult::ERROR_UNKNOWN
    }
}

impl Fallback for PFN_vkVoidFunction {
    fn fallback() -> Self {
        None
    }
}

/// `VkBool32` (`VK_FALSE`) and counts.
impl Fallback for u32 {
    fn fallback() -> Self {
        0
    }
}

/// `VkDeviceAddress`, `VkDeviceSize` and other 64-bit values: zero, "none".
impl Fallback for u64 {
    fn fallback() -> Self {
        0
    }
}

impl Fallback for *mut std::ffi::c_void {
    fn fallback() -> Self {
        std::ptr::null_mut()
    }
}

/// Runs `f`; a panic in it (the layer's code) becomes the fallback value instead of unwinding
/// into the application through `extern "system"`.
pub fn guard<R: Fallback>(f: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| R::fallback())
}
