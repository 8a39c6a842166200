//! Zeroing the padding bytes of the structures a driver fills, so the loader can compare them
//! byte for byte and store them in a file.
//!
//! A driver that copies a structure copies its padding too, so the gaps between members, after the
//! last member and after `sType` (before `pNext`, on 64-bit targets) hold whatever the driver's
//! memory held. [`ZeroPadding::zero_padding`] zeroes them in place, in nested structures and in
//! every element of arrays of structures too, and leaves every byte of every member as it was.
//!
//! The implementations are generated from vk.xml (`gen/padding.rs`) for the physical-device query
//! outputs (`VkPhysicalDeviceProperties2`, `VkPhysicalDeviceFeatures2`,
//! `VkPhysicalDeviceMemoryProperties2`, `VkFormatProperties2`, `VkQueueFamilyProperties2`), every
//! structure that extends one of them, `VkExtensionProperties`, `VkLayerProperties`, and every
//! structure they hold by value. Offsets and sizes come from rustc (`offset_of!`, `size_of`).
//!
//! - Bitfields: a storage unit of bitfields is a member as a whole; only bits of a unit that no
//!   bitfield uses are cleared (on little-endian targets; elsewhere the unit is kept whole).
//! - Unions: which member is live, and so which bytes are padding, is not known; a union is kept
//!   whole, and a union's own `zero_padding` does nothing.
//! - Pointers (`pNext` included) are values like any other: nothing they point to is touched.
//!   To clean a whole chain, walk it and call [`zero_padding_by_type`] on each structure.

use core::ptr;

use crate::types::VkStructureType;

#[rustfmt::skip]
#[path = "gen/padding.rs"]
mod data;

pub use data::STRUCTURE_TYPES;

/// Zeroes the padding bytes (between members, after the last member, inside nested structures
/// and arrays of structures) of a `T` in place.
///
/// # Safety
/// Implementations write only padding bytes of a `T` and only within `size_of::<T>()` bytes.
pub unsafe trait ZeroPadding {
    /// # Safety
    /// `value` points to `size_of::<Self>()` writable bytes (no alignment needed).
    unsafe fn zero_padding(value: *mut u8);
}

/// [`ZeroPadding::zero_padding`] of a value.
pub fn zero_padding_of<T: ZeroPadding>(value: &mut T) {
    // SAFETY: `value` is a whole, writable `T`; only its padding bytes are written.
    unsafe { T::zero_padding(ptr::from_mut(value).cast()) }
}

/// The same by structure type, for structures whose first member is sType: `false` (nothing done)
/// for an sType not covered (see [`STRUCTURE_TYPES`]). Only this structure is cleaned, not its
/// `pNext` chain.
///
/// # Safety
/// `value` points to a writable structure of the type `s_type` names (no alignment needed).
pub unsafe fn zero_padding_by_type(s_type: VkStructureType, value: *mut u8) -> bool {
    // SAFETY: this function's contract is `by_type`'s.
    unsafe { data::by_type(s_type, value) }
}

/// Walks one structure's members in order, zeroing what lies between them.
pub(crate) struct Walk {
    base: *mut u8,
    /// End of the last member walked.
    end: usize,
}

impl Walk {
    #[inline(always)]
    pub(crate) fn new(base: *mut u8) -> Walk {
        Walk { base, end: 0 }
    }

    /// Zeroes the bytes from the end of the last member to `offset`.
    ///
    /// # Safety
    /// The structure's bytes up to `offset` are writable; those from the last member's end on are
    /// padding.
    #[inline(always)]
    unsafe fn zero_to(&mut self, offset: usize) {
        if offset > self.end {
            // SAFETY: within the structure's writable bytes, and padding (the contract).
            unsafe { ptr::write_bytes(self.base.add(self.end), 0, offset - self.end) };
        }
    }

    /// A member at `offset` of `size` bytes, kept as it is.
    ///
    /// # Safety
    /// `offset` and `size` are those of the structure's next member in declaration order (rustc's
    /// `offset_of!` and `size_of`), and the structure is writable.
    #[inline(always)]
    pub(crate) unsafe fn member(&mut self, offset: usize, size: usize) {
        debug_assert!(offset >= self.end, "members walked out of order");
        // SAFETY: the bytes before the next member, from the end of the last, are padding.
        unsafe { self.zero_to(offset) };
        self.end = offset + size;
    }

    /// A member at `offset` of `size` bytes holding `E`s (one, or an array of any dimensions):
    /// each cleaned in turn.
    ///
    /// # Safety
    /// As [`Walk::member`], for a member of `E`s.
    #[inline(always)]
    pub(crate) unsafe fn structs<E: ZeroPadding>(&mut self, offset: usize, size: usize) {
        // SAFETY: per this function's contract.
        unsafe { self.member(offset, size) };
        let each = size_of::<E>();
        if each != 0 {
            for i in 0..size / each {
                // SAFETY: the `i`th `E` of the member, within the structure's writable bytes.
                unsafe { E::zero_padding(self.base.add(offset + i * each)) };
            }
        }
    }

    /// A storage unit of bitfields at `offset` whose bits outside `used` hold no bitfield: those
    /// are cleared where the types' packing (from the least significant bit) is known to hold.
    ///
    /// # Safety
    /// As [`Walk::member`], for a member that is a `U` of bitfields using the bits of `used`.
    #[allow(dead_code)] // no structure in the vendored registry's scope has a partly used unit
    #[inline(always)]
    pub(crate) unsafe fn bits<U: Unit>(&mut self, offset: usize, used: u64) {
        // SAFETY: per this function's contract.
        unsafe { self.member(offset, size_of::<U>()) };
        if cfg!(target_endian = "little") {
            // SAFETY: the unit lies within the structure's writable bytes (unaligned access).
            unsafe {
                let unit = self.base.add(offset).cast::<U>();
                unit.write_unaligned(unit.read_unaligned().and(used));
            }
        }
    }

    /// Zeroes the tail, from the last member to the structure's `size`.
    ///
    /// # Safety
    /// Every member was walked, and `size` is the structure's size.
    #[inline(always)]
    pub(crate) unsafe fn finish(mut self, size: usize) {
        // SAFETY: the bytes after the last member, up to the size, are padding.
        unsafe { self.zero_to(size) };
    }
}

/// An integer a bitfield unit is stored in.
pub(crate) trait Unit: Copy {
    fn and(self, mask: u64) -> Self;
}

macro_rules! unit {
    ($($t:ty),*) => {$(
        impl Unit for $t {
            #[inline(always)]
            fn and(self, mask: u64) -> Self {
                self & mask as $t
            }
        }
    )*};
}
unit!(u8, u16, u32, u64);
