//! Plain Vulkan structures read back from bytes (a driver cache record's): the one place that
//! turns bytes into structures. Sound for the generated types `ZeroPadding` is implemented for
//! (its contract: integers, floats, raw pointers, arrays and structures of them, for which any
//! bytes are a valid value).

use std::mem::size_of;

use vk_generated::padding::ZeroPadding;
use vk_generated::types::VkBaseOutStructure;
use vk_generated::TaggedStruct;

/// A list of plain structures from its record (their bytes, one after the other); `None` if the
/// length does not fit.
pub fn decode_list<T: ZeroPadding + Copy + Default>(bytes: &[u8]) -> Option<Vec<T>> {
    let size = size_of::<T>();
    if size == 0 || !bytes.len().is_multiple_of(size) {
        return None;
    }
    let mut out = vec![T::default(); bytes.len() / size];
    // SAFETY: `bytes.len()` bytes fill the vector exactly; any bytes are a valid value of a
    // generated Vulkan structure (integers, floats, raw pointers, arrays and structures of them:
    // the types `ZeroPadding` is generated for).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len()) };
    Some(out)
}

/// A recorded `2` query extension structure, whole: `T`'s header (its sType) and the recorded
/// body; `None` if the body's length is not `T`'s.
pub fn decode_body<T: TaggedStruct + ZeroPadding + Default + Copy>(bytes: &[u8]) -> Option<T> {
    let header = size_of::<VkBaseOutStructure>();
    if bytes.len() != size_of::<T>() - header {
        return None;
    }
    let mut value = T::default();
    // SAFETY: the bytes after the header of one `T`, exactly as many as there are; any bytes are
    // a valid value of its members (as in [`decode_list`]).
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&mut value as *mut T).cast::<u8>().add(header), bytes.len()) };
    Some(value)
}

