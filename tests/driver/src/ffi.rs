//! What the loader passes, made into Rust views once: arrays from a pointer and a count, names,
//! output arrays filled with the two-call idiom, output structures that carry the caller's
//! `sType` and `pNext`. The entry points call these under their own contracts.

use std::ffi::{c_char, CStr};
use std::mem::MaybeUninit;

use vk_generated::types::{VkBaseOutStructure, VkResult};
use vk_generated::TaggedStruct;

/// The `count` elements at `items`; empty when `count` is 0 or `items` is NULL.
///
/// # Safety
/// Unless `count` is 0 or `items` NULL, `items` is valid for reads of `count` elements that stay
/// unchanged for `'a`.
pub(crate) unsafe fn slice<'a, T>(items: *const T, count: u32) -> &'a [T] {
    if count == 0 || items.is_null() {
        return &[];
    }
    // SAFETY: `count` readable elements at a non-NULL `items` (this function's contract).
    unsafe { std::slice::from_raw_parts(items, count as usize) }
}

/// The NUL-terminated string at `name`, or `None` for NULL.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string that stays unchanged for `'a`.
pub(crate) unsafe fn c_str<'a>(name: *const c_char) -> Option<&'a CStr> {
    // SAFETY: a non-NULL `name` is NUL-terminated (this function's contract).
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}

/// The names in a `const char* const*` array of `count`; a NULL array or entry ends it early.
///
/// # Safety
/// As [`slice`] for the array; each entry before the first NULL one as [`c_str`].
pub(crate) unsafe fn c_string_list<'a>(names: *const *const c_char, count: u32) -> Vec<&'a CStr> {
    // SAFETY: this function's contract, for the array.
    let names = unsafe { slice(names, count) };
    names
        .iter()
        .map_while(|&name| {
            // SAFETY: this function's contract, for an entry.
            unsafe { c_str(name) }
        })
        .collect()
}

/// Fills a Vulkan "two-call" array of `len` items: with `out` NULL, writes the count; otherwise
/// writes up to `*count` items `item(i)` and returns `VK_INCOMPLETE` when that was not all of
/// them. A NULL `count` is `VK_ERROR_INITIALIZATION_FAILED`.
///
/// # Safety
/// `count` is NULL or valid for a read and a write; a non-NULL `out` is valid for writes of
/// `*count` elements (valid usage of every enumeration command).
pub(crate) unsafe fn enumerate<T>(
    len: usize,
    count: *mut u32,
    out: *mut T,
    mut item: impl FnMut(usize) -> T,
) -> VkResult {
    // SAFETY: this function's contract.
    unsafe {
        fill(len, count, out, |i, slot| {
            slot.write(item(i));
        })
    }
}

/// [`enumerate`] for output structures whose `sType` and `pNext` the caller set: each element is
/// written whole, `item(i, pNext)` with its header kept as the caller had it.
///
/// # Safety
/// As [`enumerate`], and each of the `*count` elements at a non-NULL `out` has its `sType` and
/// `pNext` initialized (valid usage of output structures).
pub(crate) unsafe fn enumerate_chained<T: TaggedStruct>(
    len: usize,
    count: *mut u32,
    out: *mut T,
    mut item: impl FnMut(usize, *mut VkBaseOutStructure) -> T,
) -> VkResult {
    let write = |i, slot: &mut MaybeUninit<T>| {
        // SAFETY: `fill` hands out the caller's elements, whose headers are initialized (this
        // function's contract).
        unsafe { write_keeping_header(slot.as_mut_ptr(), |next| item(i, next)) }
    };
    // SAFETY: this function's contract.
    unsafe { fill(len, count, out, write) }
}

/// Writes `value(pNext)` to `dst`, then the `sType` and `pNext` that were there back over it, so
/// the caller's chain stays as it was while every other member is the driver's.
///
/// # Safety
/// `dst` is valid for reads and writes of a `T` whose `sType` and `pNext` are initialized.
pub(crate) unsafe fn write_keeping_header<T: TaggedStruct>(
    dst: *mut T,
    value: impl FnOnce(*mut VkBaseOutStructure) -> T,
) {
    let header = dst.cast::<VkBaseOutStructure>();
    // SAFETY: a `TaggedStruct` starts with `sType` and `pNext`, laid out as `VkBaseOutStructure`,
    // and both are initialized and `dst` is writable (this function's contract).
    unsafe {
        let kept = header.read();
        dst.write(value(kept.pNext));
        header.write(kept);
    }
}

/// The two-call idiom of [`enumerate`], handing `write` each slot to fill once.
///
/// # Safety
/// As [`enumerate`].
unsafe fn fill<T>(
    len: usize,
    count: *mut u32,
    out: *mut T,
    mut write: impl FnMut(usize, &mut MaybeUninit<T>),
) -> VkResult {
    if count.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if out.is_null() {
        // SAFETY: a non-NULL `count` is writable (this function's contract).
        unsafe { count.write(len as u32) };
        return VkResult::SUCCESS;
    }
    // SAFETY: a non-NULL `count` is readable, and a non-NULL `out` writable for `*count`
    // elements (this function's contract); `MaybeUninit` asks nothing of what is there.
    let slots = unsafe {
        let room = (count.read() as usize).min(len);
        std::slice::from_raw_parts_mut(out.cast::<MaybeUninit<T>>(), room)
    };
    for (i, slot) in slots.iter_mut().enumerate() {
        write(i, slot);
    }
    let written = slots.len();
    // SAFETY: as above.
    unsafe { count.write(written as u32) };
    if written < len {
        VkResult::INCOMPLETE
    } else {
        VkResult::SUCCESS
    }
}
