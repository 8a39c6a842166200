//! Helpers for the `extern "system"` boundary: no panic crosses it, and array queries follow
//! Vulkan's two-call idiom with `VK_INCOMPLETE`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use vk_generated::types::VkResult;

use crate::log::{self, Level};

/// Runs an entry point's body; a panic becomes a logged `fallback` instead of unwinding into C.
pub fn guard<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            log::write(Level::Error, &format!("{name}: internal error (panic caught at the API boundary)"));
            fallback
        }
    }
}

/// Vulkan's two-call idiom: with `out` NULL, report the count; else copy up to `*count` items and
/// return `VK_INCOMPLETE` if that was not all of them.
///
/// # Safety
/// `count` must be valid; `out`, if non-null, must hold `*count` items.
pub unsafe fn fill<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> VkResult {
    if count.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if out.is_null() {
        *count = items.len() as u32;
        return VkResult::SUCCESS;
    }
    let n = (*count as usize).min(items.len());
    std::ptr::copy_nonoverlapping(items.as_ptr(), out, n);
    *count = n as u32;
    if n < items.len() { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
}

/// How often [`query`] asks again after `VK_INCOMPLETE` (the list grew between the calls) before
/// it gives up on a driver or layer that never completes.
const QUERY_ATTEMPTS: usize = 8;

/// Calls a driver's two-call query until it stops returning `VK_INCOMPLETE` (at most
/// [`QUERY_ATTEMPTS`] times; then `Err(VK_INCOMPLETE)`).
pub fn query<T: Copy + Default>(mut call: impl FnMut(*mut u32, *mut T) -> VkResult) -> Result<Vec<T>, VkResult> {
    for _ in 0..QUERY_ATTEMPTS {
        let mut count = 0u32;
        let result = call(&mut count, std::ptr::null_mut());
        if result != VkResult::SUCCESS {
            return Err(result);
        }
        let mut items = vec![T::default(); count as usize];
        match call(&mut count, items.as_mut_ptr()) {
            VkResult::SUCCESS => {
                items.truncate(count as usize);
                return Ok(items);
            }
            VkResult::INCOMPLETE => continue,
            error => return Err(error),
        }
    }
    Err(VkResult::INCOMPLETE)
}
