//! Helpers for the `extern "system"` boundary: no panic crosses it, array queries follow Vulkan's
//! two-call idiom with `VK_INCOMPLETE`, and what an application passes becomes a Rust view once, at
//! the entry point: slices and names with NULL handled ([`slice`], [`c_str`], [`names`]), output
//! arrays ([`OutArray`], [`ChainedOutArray`]) and output chains ([`OutChain`]) written only where
//! Vulkan's valid usage says the caller's memory is. The views' constructors are `unsafe`: their
//! contract is that valid usage, stated once; what is done through them afterwards is safe.

use std::ffi::{c_char, c_void, CStr};
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use vk_generated::types::{
    VkBaseInStructure, VkBaseOutStructure, VkExtensionProperties, VkPhysicalDeviceGroupProperties, VkResult, VkStructureType,
    VK_MAX_EXTENSION_NAME_SIZE,
};
use vk_generated::TaggedStruct;

use crate::debug::log::{self, Level};

/// Runs an entry point's body; a panic becomes a logged `fallback` instead of unwinding into C.
pub fn guard<T>(name: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            caught(name, payload);
            fallback
        }
    }
}

/// The panic branch of every [`guard`], compiled once rather than in each entry point: the line
/// that says so, and the payload dropped here.
#[cold]
#[inline(never)]
fn caught(name: &str, payload: Box<dyn std::any::Any + Send>) {
    drop(payload);
    log::write(Level::Error, &format!("{name}: internal error (panic caught at the API boundary)"));
}

/// Vulkan's two-call idiom: with `out` NULL, report the count; else copy up to `*count` items and
/// return `VK_INCOMPLETE` if that was not all of them. A NULL `count` is
/// `VK_ERROR_INITIALIZATION_FAILED`.
///
/// # Safety
/// As [`OutArray::new`]: `count` NULL or valid for a read and a write; `out`, if non-null, valid
/// for writes of `*count` items.
pub unsafe fn fill<T: Copy>(items: &[T], count: *mut u32, out: *mut T) -> VkResult {
    // SAFETY: this function's contract is the view's.
    match unsafe { OutArray::new(count, out) } {
        Some(out) => out.fill(items),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}

/// How often [`query`] asks again after `VK_INCOMPLETE` (the list grew between the calls) before
/// it gives up on a driver or layer that never completes.
const QUERY_ATTEMPTS: usize = 8;

/// Calls a driver's two-call query until it stops returning `VK_INCOMPLETE` (at most
/// [`QUERY_ATTEMPTS`] times; then `Err(VK_INCOMPLETE)`). `call` gets a valid count and NULL, then
/// the count and an array of that many default items.
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

/// `$f` as the `PFN_vkVoidFunction` of command `$name` (usable in constants): it compiles only if
/// `$f` is a function of the command's `PFN_*` type (`vk_generated::erase`), so no signature is
/// erased unchecked.
macro_rules! erased {
    ($name:ident => $f:path) => {
        vk_generated::erase::$name(Some($f))
    };
}

pub(crate) use erased;

/// A loader terminator as `(command id, erased function)`: the name is checked against the
/// registry and the function against the command's `PFN_*` type when this compiles, and the table
/// is filled without a name lookup.
macro_rules! terminator {
    ($name:ident => $f:path) => {
        (vk_generated::command_id::$name, $crate::ffi::erased!($name => $f))
    };
}

pub(crate) use terminator;

/// A string a driver or layer wrote into a fixed-size array (`deviceName`, `extensionName`): its
/// bytes up to the first NUL, or the first `N - 1` where the array holds none (what a
/// NUL-terminated copy in such an array keeps). Nothing past the array is read.
pub fn fixed_str<const N: usize>(array: &[c_char; N]) -> &[u8] {
    // SAFETY: `c_char` and `u8` have the same size and alignment; the view covers the array only.
    let bytes = unsafe { &*(array as *const [c_char; N] as *const [u8; N]) };
    match CStr::from_bytes_until_nul(bytes) {
        Ok(name) => name.to_bytes(),
        Err(_) => &bytes[..N.saturating_sub(1)],
    }
}

/// An extension's name, bounded by its array (see [`fixed_str`]).
pub fn name_of(props: &VkExtensionProperties) -> &[u8] {
    fixed_str(&props.extensionName)
}

pub fn extension_properties(name: &CStr, spec_version: u32) -> VkExtensionProperties {
    extension_properties_of(name.to_bytes(), spec_version)
}

/// [`extension_properties`] from the name's bytes (no NUL among them), cut where the array must
/// keep its terminating NUL.
pub fn extension_properties_of(name: &[u8], spec_version: u32) -> VkExtensionProperties {
    let mut props = VkExtensionProperties { specVersion: spec_version, ..Default::default() };
    let room = props.extensionName.len() - 1;
    for (dst, &src) in props.extensionName[..room].iter_mut().zip(name) {
        *dst = src as c_char;
    }
    props
}

/// Writes an extension's name (cut where the array must keep its NUL, the rest zeroed) and spec
/// version into an output slot in place: a driver lists some 250, and layers ask repeatedly, so no
/// whole structure is built and copied per entry.
pub fn write_extension(slot: &mut MaybeUninit<VkExtensionProperties>, name: &[u8], spec_version: u32) {
    const ROOM: usize = VK_MAX_EXTENSION_NAME_SIZE as usize;
    let length = name.len().min(ROOM - 1);
    let slot = slot.as_mut_ptr();
    // SAFETY: the members of one writable slot, each written within its bounds (`length` bytes of
    // the name then zeroes to the end of its array; the spec version once); nothing is read.
    unsafe {
        let name_field = std::ptr::addr_of_mut!((*slot).extensionName).cast::<u8>();
        std::ptr::copy_nonoverlapping(name.as_ptr(), name_field, length);
        std::ptr::write_bytes(name_field.add(length), 0, ROOM - length);
        std::ptr::addr_of_mut!((*slot).specVersion).write(spec_version);
    }
}

/// The NUL-terminated string `bytes` starts with, found with the C library's `memchr` (a record
/// holds some 250 names, read at every enumeration, and `CStr::from_bytes_until_nul`'s portable
/// search costs some four times as many instructions on names this short); `None` without a NUL.
pub fn c_str_at(bytes: &[u8]) -> Option<&CStr> {
    // SAFETY: memchr reads at most `bytes.len()` bytes of `bytes`.
    let nul = unsafe { libc::memchr(bytes.as_ptr().cast(), 0, bytes.len()) };
    if nul.is_null() {
        return None;
    }
    let length = nul as usize - bytes.as_ptr() as usize;
    // SAFETY: `bytes[length]` is the first NUL of `bytes`.
    Some(unsafe { CStr::from_bytes_with_nul_unchecked(&bytes[..=length]) })
}

/// The `count` elements at `items`; empty when `count` is 0 or `items` is NULL.
///
/// # Safety
/// Unless `count` is 0 or `items` NULL, `items` is valid for reads of `count` elements that stay
/// unchanged for `'a` (an application's input array, by Vulkan's valid usage).
pub unsafe fn slice<'a, T>(items: *const T, count: u32) -> &'a [T] {
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
pub unsafe fn c_str<'a>(name: *const c_char) -> Option<&'a CStr> {
    // SAFETY: a non-NULL `name` is NUL-terminated (this function's contract).
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}

/// The names in an array of C strings (`ppEnabledExtensionNames`), NULL entries left out; empty
/// for a NULL array.
///
/// # Safety
/// As [`slice`] for the array, and each non-NULL entry as [`c_str`].
pub unsafe fn names<'a>(list: *const *const c_char, count: u32) -> Vec<&'a CStr> {
    // SAFETY: this function's contract, for the array.
    let list = unsafe { slice(list, count) };
    list.iter()
        .filter_map(|&name| {
            // SAFETY: this function's contract, for an entry.
            unsafe { c_str(name) }
        })
        .collect()
}

/// A create-info `pNext` without the loader's own chain structures at its head (drivers do not
/// need them).
///
/// # Safety
/// `next` must be NULL or a valid `pNext` chain (each element starting with `sType` and `pNext`).
pub unsafe fn skip_loader_structs(mut next: *const c_void, loader_type: VkStructureType) -> *const c_void {
    // SAFETY: an element of a valid chain (this function's contract), read as its header.
    while let Some(header) = unsafe { (next as *const VkBaseInStructure).as_ref() } {
        if header.sType != loader_type {
            break;
        }
        next = header.pNext as *const c_void;
    }
    next
}

/// Writes physical-device groups into the application's structures, keeping their sType and
/// pNext; `VK_INCOMPLETE` when they are fewer than the groups, `VK_ERROR_INITIALIZATION_FAILED`
/// for a NULL count.
///
/// # Safety
/// As [`ChainedOutArray::new`]: `count` NULL or valid; `out` NULL or an array of `*count`
/// structures whose sType and pNext the application set.
pub unsafe fn fill_groups(all: &[VkPhysicalDeviceGroupProperties], count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties) -> VkResult {
    // SAFETY: this function's contract is the view's.
    match unsafe { ChainedOutArray::new(count, out) } {
        Some(out) => out.fill_keeping_headers(all.len(), all.iter(), |group, next| VkPhysicalDeviceGroupProperties { pNext: next, ..*group }),
        None => VkResult::ERROR_INITIALIZATION_FAILED,
    }
}

/// An application's output array of the two-call idiom: its count and, when it passed an array,
/// room for `*count` items, which may be uninitialised.
pub struct OutArray<'a, T> {
    count: &'a mut u32,
    room: Option<&'a mut [MaybeUninit<T>]>,
}

impl<'a, T> OutArray<'a, T> {
    /// The view of `count` and `out`; `None` for a NULL count.
    ///
    /// # Safety
    /// `count` is NULL or valid for a read and a write; a non-NULL `out` is valid for writes of
    /// `*count` items (valid usage of every two-call query); neither is used otherwise for `'a`.
    pub unsafe fn new(count: *mut u32, out: *mut T) -> Option<OutArray<'a, T>> {
        // SAFETY: a non-NULL count is valid and not used otherwise for `'a` (this function's contract).
        let count = unsafe { count.as_mut() }?;
        let room = NonNull::new(out).map(|out| {
            // SAFETY: a non-NULL `out` holds `*count` writable items (this function's contract);
            // `MaybeUninit` asks nothing of what is there.
            unsafe { std::slice::from_raw_parts_mut(out.as_ptr().cast::<MaybeUninit<T>>(), *count as usize) }
        });
        Some(OutArray { count, room })
    }

    /// Answers with `total` items: the count alone without an array; else the first of `items`
    /// written by `write` into as many slots as there are, the count set to the number written,
    /// and `VK_INCOMPLETE` when that is fewer than `total`.
    pub fn fill_with<I>(self, total: usize, items: impl Iterator<Item = I>, mut write: impl FnMut(&mut MaybeUninit<T>, I)) -> VkResult {
        let Some(room) = self.room else {
            *self.count = total as u32;
            return VkResult::SUCCESS;
        };
        let mut written = 0;
        for (slot, item) in room.iter_mut().zip(items) {
            write(slot, item);
            written += 1;
        }
        *self.count = written as u32;
        if written < total { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
    }

    /// [`fill_with`](Self::fill_with) with copies of `items`.
    pub fn fill(self, items: &[T]) -> VkResult
    where
        T: Copy,
    {
        self.fill_with(items.len(), items.iter(), |slot, item| {
            slot.write(*item);
        })
    }

    /// Hands the count and array on as they are to `call` (a query of the same two-call idiom:
    /// the level below), then gives what it returned and the items it wrote there: the first
    /// `*count`, at most the room, when it was given an array and returned `VK_SUCCESS` or
    /// `VK_INCOMPLETE` (none otherwise).
    ///
    /// # Safety
    /// `call` keeps the two-call idiom: given an array, it sets the count to the number of items
    /// it wrote whole at its start.
    pub unsafe fn pass_down(self, call: impl FnOnce(*mut u32, *mut T) -> VkResult) -> (VkResult, &'a mut [T]) {
        let count: *mut u32 = self.count;
        let room = self.room.map(|room| (room.as_mut_ptr().cast::<T>(), room.len()));
        let result = call(count, room.map_or(std::ptr::null_mut(), |(out, _)| out));
        let written = match (room, result) {
            (Some((out, len)), VkResult::SUCCESS | VkResult::INCOMPLETE) => {
                // SAFETY: the count is the view's (valid, `new`'s contract); the first `*count`
                // items, within the room, are written whole (this function's contract).
                unsafe { std::slice::from_raw_parts_mut(out, (*count as usize).min(len)) }
            }
            _ => &mut [],
        };
        (result, written)
    }
}

/// An [`OutArray`] of structures whose `sType` and `pNext` the caller set, as Vulkan requires of
/// output structures: the header of each is read as it stands and kept when the item is written
/// (the rest of an item may be uninitialised: it is written whole, never read).
pub struct ChainedOutArray<'a, T> {
    count: &'a mut u32,
    room: Option<(NonNull<T>, usize)>,
    _items: PhantomData<&'a mut [T]>,
}

impl<'a, T: TaggedStruct> ChainedOutArray<'a, T> {
    /// The view of `count` and `out`; `None` for a NULL count.
    ///
    /// # Safety
    /// As [`OutArray::new`], and each of the `*count` items at a non-NULL `out` has its `sType`
    /// and `pNext` set (valid usage of output structures).
    pub unsafe fn new(count: *mut u32, out: *mut T) -> Option<ChainedOutArray<'a, T>> {
        // SAFETY: a non-NULL count is valid and not used otherwise for `'a` (this function's contract).
        let count = unsafe { count.as_mut() }?;
        let room = NonNull::new(out).map(|out| (out, *count as usize));
        Some(ChainedOutArray { count, room, _items: PhantomData })
    }

    /// How many items the array holds; `None` when the caller asked for the count alone.
    pub fn room(&self) -> Option<usize> {
        self.room.map(|(_, len)| len)
    }

    /// The count, as a pointer for a driver's two-call query (it reads the room and writes how
    /// many it wrote).
    pub fn count_ptr(&mut self) -> *mut u32 {
        &mut *self.count
    }

    /// The count as it stands (what a driver wrote through [`count_ptr`](Self::count_ptr)).
    pub fn count(&self) -> u32 {
        *self.count
    }

    /// Item `index`'s address, within the array.
    fn item(&self, index: usize) -> Option<*mut T> {
        let (first, len) = self.room?;
        // SAFETY: `index` is within the array of `len` items (the constructor's contract).
        (index < len).then(|| unsafe { first.as_ptr().add(index) })
    }

    /// Item `index`'s `sType` and `pNext`.
    fn header(&self, index: usize) -> Option<VkBaseOutStructure> {
        let item = self.item(index)?;
        // SAFETY: an item of the array, whose header is set (the constructor's contract); a
        // `TaggedStruct` starts with `sType` and `pNext`, laid out as `VkBaseOutStructure`.
        Some(unsafe { item.cast::<VkBaseOutStructure>().read() })
    }

    /// Whether an item chains structures of its own (for the driver to fill).
    pub fn any_chained(&self) -> bool {
        (0..self.room().unwrap_or(0)).any(|i| self.header(i).is_some_and(|h| !h.pNext.is_null()))
    }

    /// Writes item `index` whole, `make(pNext)`, with the `sType` and `pNext` it had kept; nothing
    /// past the array.
    pub fn set(&mut self, index: usize, make: impl FnOnce(*mut c_void) -> T) {
        let (Some(item), Some(kept)) = (self.item(index), self.header(index)) else { return };
        let value = make(kept.pNext.cast());
        // SAFETY: an item of the array, writable (the constructor's contract); its header is
        // written back as it was.
        unsafe {
            item.write(value);
            item.cast::<VkBaseOutStructure>().write(kept);
        }
    }

    /// [`OutArray::pass_down`] for these items: the caller's structures, their headers as it set
    /// them, handed on as they are; the items the level below filled, after.
    ///
    /// # Safety
    /// As [`OutArray::pass_down`]: `call` sets the count to the number of items it filled (all
    /// but their `sType` and `pNext`, which it keeps) at the array's start.
    pub unsafe fn pass_down(self, call: impl FnOnce(*mut u32, *mut T) -> VkResult) -> (VkResult, &'a mut [T]) {
        let count: *mut u32 = self.count;
        let result = call(count, self.room.map_or(std::ptr::null_mut(), |(out, _)| out.as_ptr()));
        let filled = match (self.room, result) {
            (Some((out, len)), VkResult::SUCCESS | VkResult::INCOMPLETE) => {
                // SAFETY: the count is the view's (valid, `new`'s contract); the first `*count`
                // items, within the array, have the caller's headers and the rest filled (this
                // function's contract).
                unsafe { std::slice::from_raw_parts_mut(out.as_ptr(), (*count as usize).min(len)) }
            }
            _ => &mut [],
        };
        (result, filled)
    }

    /// [`OutArray::fill_with`] for these items: each written by [`set`](Self::set).
    pub fn fill_keeping_headers<I>(mut self, total: usize, items: impl Iterator<Item = I>, mut make: impl FnMut(I, *mut c_void) -> T) -> VkResult {
        let Some(room) = self.room() else {
            *self.count = total as u32;
            return VkResult::SUCCESS;
        };
        let mut written = 0;
        for (index, item) in items.take(room).enumerate() {
            self.set(index, |next| make(item, next));
            written += 1;
        }
        *self.count = written as u32;
        if written < total { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
    }
}

/// A structure type and the size of its structure, paired only by [`TaggedSize::of`] from the
/// structure's Rust type: what the chain views trust to write within a structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaggedSize {
    s_type: VkStructureType,
    size: usize,
}

impl TaggedSize {
    pub const fn of<T: TaggedStruct>() -> TaggedSize {
        TaggedSize { s_type: T::STRUCTURE_TYPE, size: size_of::<T>() }
    }

    pub fn s_type(&self) -> VkStructureType {
        self.s_type
    }

    /// The structure's size, its header included.
    pub fn size(&self) -> usize {
        self.size
    }
}

/// An application's output structure and the structures chained to it (a query's), read element
/// by element, the `sType` of each before anything else, and written only where a [`TaggedSize`]
/// says the element is large enough.
pub struct OutChain<'a> {
    head: NonNull<VkBaseOutStructure>,
    /// The head's size: its type is the query's parameter's, whatever its `sType` says.
    head_size: usize,
    _chain: PhantomData<&'a mut VkBaseOutStructure>,
}

/// An element of an [`OutChain`], as its walk found it.
#[derive(Clone, Copy)]
pub struct ChainElement<'a> {
    at: NonNull<VkBaseOutStructure>,
    s_type: VkStructureType,
    /// The head's size, for the head (its type is known whatever its `sType` says).
    head_size: Option<usize>,
    _chain: PhantomData<&'a mut VkBaseOutStructure>,
}

impl ChainElement<'_> {
    pub fn s_type(&self) -> VkStructureType {
        self.s_type
    }

    /// Whether a body of `len` bytes fits after the header of this element, taken as `kind`.
    fn fits(&self, kind: TaggedSize, len: usize) -> bool {
        let size = match self.head_size {
            Some(size) => size,
            None if self.s_type == kind.s_type => kind.size,
            None => return false,
        };
        size_of::<VkBaseOutStructure>() + len <= size
    }
}

impl<'a> OutChain<'a> {
    /// The view of the chain that starts at `head`; `None` for NULL.
    ///
    /// # Safety
    /// `head` is NULL or a writable `T` whose `pNext` chain is valid for `'a` (Vulkan's valid
    /// usage of output structures): each element a writable structure of the type its `sType`
    /// names, with its `sType` and `pNext` set, none reached twice, and the chain used otherwise
    /// by no one for `'a`.
    pub unsafe fn new<T: TaggedStruct>(head: *mut T) -> Option<OutChain<'a>> {
        let head = NonNull::new(head.cast::<VkBaseOutStructure>())?;
        Some(OutChain { head, head_size: size_of::<T>(), _chain: PhantomData })
    }

    /// The elements, head first.
    pub fn elements(&self) -> impl Iterator<Item = ChainElement<'a>> + '_ {
        let mut next = Some(self.head);
        let mut head_size = Some(self.head_size);
        std::iter::from_fn(move || {
            let at = next?;
            // SAFETY: an element of the valid chain (the constructor's contract), whose header is
            // read by value: no reference to it outlives the read.
            let header = unsafe { at.as_ptr().read() };
            next = NonNull::new(header.pNext);
            Some(ChainElement { at, s_type: header.sType, head_size: head_size.take(), _chain: PhantomData })
        })
    }

    /// Writes each body after the header of its element (found by [`elements`](Self::elements)),
    /// keeping every `sType` and `pNext`. All or nothing: `false`, with nothing written, when an
    /// element is not of its body's [`TaggedSize`] (the head need only be large enough) or a body
    /// is longer than its structure allows.
    pub fn write_bodies(&mut self, bodies: &[(ChainElement<'a>, TaggedSize, &[u8])]) -> bool {
        if !bodies.iter().all(|(element, kind, body)| element.fits(*kind, body.len())) {
            return false;
        }
        for (element, _, body) in bodies {
            // SAFETY: an element of a valid chain, writable for the size its type has (the
            // constructor's contract), which `fits` found at least the header and the body.
            unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), element.at.as_ptr().cast::<u8>().add(size_of::<VkBaseOutStructure>()), body.len()) };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::guard;

    /// A panic in the body becomes the fallback (the unwinder linked in from libgcc_eh.a, see
    /// build.rs, unwinds it); a body that returns is its own value.
    #[test]
    fn guard_turns_a_panic_into_the_fallback() {
        // (The default hook prints the panic; replacing it would hide other tests' panics.)
        assert_eq!(guard("test", 7, || -> i32 { panic!("boom") }), 7);
        assert_eq!(guard("test", 7, || 3), 3);
    }

    /// A name that fills its array to the last byte is cut where a terminated copy must end.
    #[test]
    fn fixed_str_stops_at_the_nul_or_the_end_of_the_array() {
        let mut array = [b'x' as std::ffi::c_char; 8];
        assert_eq!(super::fixed_str(&array), b"xxxxxxx");
        array[3] = 0;
        assert_eq!(super::fixed_str(&array), b"xxx");
        assert_eq!(super::fixed_str(&[0; 4]), b"");
    }

    use super::{fill_groups, ChainedOutArray, OutArray};
    use vk_generated::types::{VkPhysicalDeviceGroupProperties, VkResult, VkStructureType};

    /// The two-call idiom through the views: the count alone, room for fewer (`VK_INCOMPLETE`),
    /// a NULL count refused.
    #[test]
    fn out_arrays_answer_the_two_call_idiom() {
        let mut count = 7;
        // SAFETY: a count of the test's own, no array.
        let view = unsafe { OutArray::<u32>::new(&mut count, std::ptr::null_mut()) }.expect("a count");
        assert_eq!(view.fill(&[1, 2, 3]), VkResult::SUCCESS);
        assert_eq!(count, 3);
        let (mut out, mut count) = ([0u32; 2], 2);
        // SAFETY: a count of the test's own and an array of as many items.
        let view = unsafe { OutArray::new(&mut count, out.as_mut_ptr()) }.expect("a count");
        assert_eq!(view.fill(&[1, 2, 3]), VkResult::INCOMPLETE);
        assert_eq!((count, out), (2, [1, 2]));
        // SAFETY: NULL is refused before anything is read.
        assert!(unsafe { OutArray::<u32>::new(std::ptr::null_mut(), out.as_mut_ptr()) }.is_none());
    }

    /// Output structures are written whole with the sType and pNext the caller set; a NULL count
    /// is an error, where it was written through.
    #[test]
    fn chained_out_arrays_keep_the_callers_headers() {
        let mut marker = 0u64;
        let next = (&mut marker as *mut u64).cast();
        let mut out = [VkPhysicalDeviceGroupProperties { pNext: next, ..Default::default() }; 2];
        out[1].sType = VkStructureType(12345);
        let mut count = 2;
        let group = VkPhysicalDeviceGroupProperties { physicalDeviceCount: 1, subsetAllocation: 1, ..Default::default() };
        // SAFETY: a count of the test's own and as many structures of its own, headers set.
        assert_eq!(unsafe { fill_groups(&[group; 3], &mut count, out.as_mut_ptr()) }, VkResult::INCOMPLETE);
        assert_eq!(count, 2);
        assert!(out.iter().all(|g| g.pNext == next && g.physicalDeviceCount == 1 && g.subsetAllocation == 1));
        assert_eq!(out[1].sType, VkStructureType(12345), "the caller's sType is kept");
        // SAFETY: a count of the test's own and as many structures of its own, headers set.
        let view = unsafe { ChainedOutArray::new(&mut count, out.as_mut_ptr()) }.expect("a count");
        assert!(view.any_chained());
        // SAFETY: NULL is refused before anything is read or written.
        assert_eq!(unsafe { fill_groups(&[group], std::ptr::null_mut(), std::ptr::null_mut()) }, VkResult::ERROR_INITIALIZATION_FAILED);
    }

    /// Passed down, the caller's count and array reach the level below as they are, and the items
    /// given back are those it says it wrote, never more than the room, none after an error.
    #[test]
    fn passed_down_arrays_give_back_what_was_written_within_the_room() {
        let (mut out, mut count) = ([0u32; 3], 3);
        let room = out.as_ptr() as usize;
        // SAFETY: a count of the test's own and an array of as many items.
        let view = unsafe { OutArray::new(&mut count, out.as_mut_ptr()) }.expect("a count");
        // SAFETY: the call writes two items and says so.
        let (result, written) = unsafe {
            view.pass_down(|count, items| {
                assert_eq!((*count, items as usize), (3, room), "the caller's count and array");
                items.write(7);
                items.add(1).write(8);
                *count = 2;
                VkResult::INCOMPLETE
            })
        };
        assert_eq!((result, &*written), (VkResult::INCOMPLETE, &[7, 8][..]));
        let mut count = 3;
        // SAFETY: as above.
        let view = unsafe { OutArray::new(&mut count, out.as_mut_ptr()) }.expect("a count");
        // SAFETY: a count larger than the room (a faulty level below) is cut to it; the items are
        // those written before.
        let (_, written) = unsafe {
            view.pass_down(|count, _| {
                *count = 9;
                VkResult::SUCCESS
            })
        };
        assert_eq!(written.len(), 3);
        let mut count = 3;
        // SAFETY: as above.
        let view = unsafe { OutArray::new(&mut count, out.as_mut_ptr()) }.expect("a count");
        // SAFETY: nothing is written, and the error says so.
        let (result, written) = unsafe { view.pass_down(|_, _| VkResult::ERROR_OUT_OF_HOST_MEMORY) };
        assert_eq!((result, written.len()), (VkResult::ERROR_OUT_OF_HOST_MEMORY, 0));
        let mut groups = [VkPhysicalDeviceGroupProperties::default(); 2];
        let mut count = 2;
        // SAFETY: a count of the test's own and as many structures, headers set.
        let view = unsafe { ChainedOutArray::new(&mut count, groups.as_mut_ptr()) }.expect("a count");
        // SAFETY: the call fills one structure and says so.
        let (result, filled) = unsafe {
            view.pass_down(|count, groups| {
                (*groups).physicalDeviceCount = 1;
                *count = 1;
                VkResult::SUCCESS
            })
        };
        assert_eq!((result, filled.len(), filled[0].physicalDeviceCount), (VkResult::SUCCESS, 1, 1));
    }
}
