//! What the generated printers (`src/gen/print.rs`) stand on: the [`Print`] trait, its
//! implementations for C scalars, raw pointers and fixed arrays, and the helpers that follow
//! pointers: to one value, to an array, to a string, along a `pNext` chain.

use std::ffi::{c_char, c_void, CStr};

use vk_layer::vk::types::{VkBaseInStructure, VkStructureType};

use crate::json::Json;

/// A value the trace can write as JSON.
pub trait Print {
    /// Writes the value, following the pointers inside it.
    ///
    /// # Safety
    /// Every pointer inside the value is null or valid as the Vulkan API says (the caller's
    /// arguments, after the call).
    unsafe fn print(&self, w: &mut Json);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Print for $t {
            unsafe fn print(&self, w: &mut Json) {
                w.unsigned(*self as u64)
            }
        }
    )*};
}
macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Print for $t {
            unsafe fn print(&self, w: &mut Json) {
                w.signed(*self as i64)
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, usize);
signed!(i8, i16, i32, i64, isize);

impl Print for f32 {
    unsafe fn print(&self, w: &mut Json) {
        w.float32(*self)
    }
}

impl Print for f64 {
    unsafe fn print(&self, w: &mut Json) {
        w.float64(*self)
    }
}

/// A pointer the printers do not follow (`void*`, platform objects): its address.
impl<T> Print for *const T {
    unsafe fn print(&self, w: &mut Json) {
        w.hex(*self as usize as u64)
    }
}

impl<T> Print for *mut T {
    unsafe fn print(&self, w: &mut Json) {
        w.hex(*self as usize as u64)
    }
}

impl<T: Print, const N: usize> Print for [T; N] {
    unsafe fn print(&self, w: &mut Json) {
        w.open_array();
        for element in self {
            w.element();
            // SAFETY: per the caller's contract.
            unsafe { element.print(w) };
        }
        w.close_array();
    }
}

/// Enums: the value's name (`VkFormat::name`), or its number.
macro_rules! enums {
    ($($t:ident),* $(,)?) => {$(
        impl $crate::print::Print for $t {
            unsafe fn print(&self, w: &mut $crate::json::Json) {
                w.enum_value(self.name(), i64::from(self.0))
            }
        }
    )*};
}
pub(crate) use enums;

/// Handles, dispatchable (a pointer) or not (a 64-bit value), in hex.
macro_rules! handles {
    ($($t:ident),* $(,)?) => {$(
        impl $crate::print::Print for $t {
            unsafe fn print(&self, w: &mut $crate::json::Json) {
                w.hex(self.0 as u64)
            }
        }
    )*};
}
pub(crate) use handles;

/// `"key":` and the value.
///
/// # Safety
/// As [`Print::print`].
pub unsafe fn value<T: Print>(w: &mut Json, key: &str, value: &T) {
    w.key(key);
    // SAFETY: per the caller's contract.
    unsafe { value.print(w) };
}

/// `"key":` and an address not followed (a function, `void*` data), `null` for none.
pub fn address(w: &mut Json, key: &str, address: usize) {
    w.key(key);
    w.hex(address as u64);
}

/// `"key":` and the value `p` points to, `null` for a null pointer.
///
/// # Safety
/// `p` is null or points to a valid `T`.
pub unsafe fn one<T: Print>(w: &mut Json, key: &str, p: *const T) {
    w.key(key);
    if !w.may_follow() {
        return;
    }
    // SAFETY: per the caller's contract, null or a valid `T`.
    match unsafe { p.as_ref() } {
        // SAFETY: the caller's `T`, whose pointers are valid as the API says.
        Some(value) => unsafe { value.print(w) },
        None => w.null(),
    }
}

/// `"key":` and the `count` values `p` points to as an array, `null` for a null pointer.
///
/// # Safety
/// `p` is null or points to `count` valid values.
pub unsafe fn array<T: Print>(w: &mut Json, key: &str, p: *const T, count: usize) {
    w.key(key);
    if p.is_null() {
        return w.null();
    }
    if !w.may_follow() {
        return;
    }
    w.open_array();
    for i in 0..count {
        w.element();
        // SAFETY: per the caller's contract, element `i` is valid.
        unsafe { (*p.add(i)).print(w) };
    }
    w.close_array();
}

/// `"key":` and a NUL-terminated string, `null` for a null pointer.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
pub unsafe fn string(w: &mut Json, key: &str, p: *const c_char) {
    w.key(key);
    // SAFETY: per the caller's contract.
    unsafe { c_string(w, p) };
}

/// # Safety
/// As [`string`].
unsafe fn c_string(w: &mut Json, p: *const c_char) {
    if p.is_null() {
        return w.null();
    }
    // SAFETY: per the caller's contract.
    w.string(unsafe { CStr::from_ptr(p) }.to_bytes());
}

/// `"key":` and `count` strings (`ppEnabledExtensionNames`), `null` for a null pointer.
///
/// # Safety
/// `p` is null or points to `count` strings as [`string`] takes them.
pub unsafe fn strings(w: &mut Json, key: &str, p: *const *const c_char, count: usize) {
    w.key(key);
    if p.is_null() {
        return w.null();
    }
    w.open_array();
    for i in 0..count {
        w.element();
        // SAFETY: per the caller's contract.
        unsafe { c_string(w, *p.add(i)) };
    }
    w.close_array();
}

/// `"key":` and a fixed-size `char` array (`deviceName`): the string up to its first NUL.
pub fn chars(w: &mut Json, key: &str, array: &[c_char]) {
    let len = array.iter().position(|&c| c == 0).unwrap_or(array.len());
    // SAFETY: `c_char` and `u8` have the same size and alignment.
    let bytes = unsafe { std::slice::from_raw_parts(array.as_ptr().cast::<u8>(), len) };
    w.key(key);
    w.string(bytes);
}

/// `"pNext":` and the chain.
///
/// # Safety
/// As [`chain`].
pub unsafe fn next(w: &mut Json, p: *const c_void) {
    w.key("pNext");
    // SAFETY: per the caller's contract.
    unsafe { chain(w, p) };
}

/// A `pNext` chain: the next structure, printed by its `sType` (and it prints its own `pNext`);
/// a structure the registry does not know as its `sType` and the rest of the chain.
///
/// # Safety
/// `p` is null or a valid structure chain, as the Vulkan API says of `pNext`.
pub unsafe fn chain(w: &mut Json, p: *const c_void) {
    if p.is_null() {
        return w.null();
    }
    if !w.may_follow() {
        return;
    }
    // SAFETY: every structure in a chain starts with `sType` and `pNext`.
    let base = unsafe { &*p.cast::<VkBaseInStructure>() };
    // SAFETY: per the caller's contract.
    if unsafe { crate::gen::print::chained(w, base.sType, p) } {
        return;
    }
    unknown_structure(w, base.sType, base.pNext.cast());
}

/// `{"sType": ..., "pNext": ...}` for a structure the registry does not describe (the loader's
/// own `VkLayerDeviceCreateInfo`, say).
fn unknown_structure(w: &mut Json, s_type: VkStructureType, next: *const c_void) {
    w.open_object();
    // SAFETY: an enum value; then the chain the caller vouched for goes on.
    unsafe {
        value(w, "sType", &s_type);
        self::next(w, next);
    }
    w.close_object();
}

/// Bitmasks: their set bits by name (`[(bit, name), ...]`, in bit order).
macro_rules! flags {
    ($t:ident, [$(($bit:literal, $name:literal)),* $(,)?]) => {
        impl $crate::print::Print for $t {
            unsafe fn print(&self, w: &mut $crate::json::Json) {
                w.flags(self.0 as u64, &[$(($bit, $name)),*])
            }
        }
    };
}
pub(crate) use flags;

/// `vkGetInstanceProcAddr`'s result: the function's address.
impl Print for vk_layer::vk::types::PFN_vkVoidFunction {
    unsafe fn print(&self, w: &mut Json) {
        w.hex(self.map_or(0, |f| f as usize as u64))
    }
}
