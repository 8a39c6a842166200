//! Deep copies of `VkInstanceCreateInfo` and its `pNext` chain, so the loader can create a driver's
//! instance after `vkCreateInstance` has returned and the application's pointers are dead.
//!
//! What each structure points to, and how many of it, is generated from vk.xml (`gen/deep_copy.rs`:
//! one `fix_*` function per structure that holds pointers, which re-points a bitwise copy at copies
//! of its strings, arrays and structures, and one `chain_node` dispatch over every structure that
//! may sit in the chain). This file holds what the generated code calls: the owner of the copies and
//! its allocation helpers.
//!
//! A chain may hold only structures the registry knows as extending `VkInstanceCreateInfo` (directly
//! or through a structure that does). The loader's own layer-link structures
//! (`VkLayerInstanceCreateInfo`, sType `VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO`) are not among
//! them: they point into the loader's per-call state, so the loader strips them from the chain before
//! copying and adds fresh ones when it uses the copy.

use alloc::vec::Vec;
use core::alloc::Layout;
use core::ffi::{c_char, c_void, CStr};
use core::ptr::{self, NonNull};

use crate::types::{VkBaseInStructure, VkBaseOutStructure, VkInstanceCreateInfo, VkStructureType};

#[rustfmt::skip]
#[path = "gen/deep_copy.rs"]
mod data;

pub use data::CHAIN_STRUCTURE_TYPES;

/// Owns the copies (aligned heap blocks); everything a copy points to lives as long as it.
pub struct DeepCopy {
    blocks: Vec<(NonNull<u8>, Layout)>,
}

// SAFETY: the blocks are plain memory this value owns alone (nothing else frees them), and the
// copies in them are never written after they are handed out.
unsafe impl Send for DeepCopy {}
// SAFETY: as for `Send`: a shared `DeepCopy` gives no way to write its blocks.
unsafe impl Sync for DeepCopy {}

/// Why a structure could not be copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fail {
    /// The structure with this sType cannot be copied.
    At(VkStructureType),
    /// The structure being copied cannot be: the nearest enclosing structure with an sType is named.
    Here,
}

impl Fail {
    /// The sType to report, `owner` being the structure the failure happened in.
    fn at(self, owner: VkStructureType) -> VkStructureType {
        match self {
            Fail::At(stype) => stype,
            Fail::Here => owner,
        }
    }
}

/// The function that re-points one bitwise copy of a `T` at copies of what it points to.
pub(crate) type Fix<T> = unsafe fn(&mut DeepCopy, &mut T) -> Result<(), Fail>;

impl Default for DeepCopy {
    fn default() -> Self {
        Self::new()
    }
}

impl DeepCopy {
    /// A deep copy holding nothing yet.
    pub fn new() -> DeepCopy {
        DeepCopy { blocks: Vec::new() }
    }

    /// Copies `info` with everything it points to (application info and its strings, layer and
    /// extension name arrays, the whole pNext chain). Err(sType) names the first struct in the
    /// chain that cannot be copied: an sType this registry does not know as extending
    /// VkInstanceCreateInfo (directly or through a struct that does).
    ///
    /// A NULL `info` gives NULL. A structure whose contents cannot be copied (a value the registry
    /// cannot size, such as an unknown `VkLayerSettingTypeEXT`, or arrays too large to allocate) is
    /// named by its own sType, or by the nearest enclosing structure's where it has none. On error,
    /// nothing this call allocated is kept.
    ///
    /// # Safety
    /// `info` is NULL or a valid `VkInstanceCreateInfo` as `vkCreateInstance` accepts it: every
    /// pointer valid for the element count its structure gives, every chain NULL-terminated and
    /// free of cycles.
    pub unsafe fn instance_create_info(
        &mut self,
        info: *const VkInstanceCreateInfo,
    ) -> Result<*const VkInstanceCreateInfo, VkStructureType> {
        let mark = self.blocks.len();
        // SAFETY: `info` is NULL or a valid create info (this function's contract).
        let copy = unsafe { self.structs(info, 1, data::fix_VkInstanceCreateInfo) };
        self.finish(mark, copy.map(<*mut _>::cast_const), VkStructureType::INSTANCE_CREATE_INFO)
    }

    /// The same for a bare pNext chain (NULL gives NULL).
    ///
    /// # Safety
    /// As for [`DeepCopy::instance_create_info`], for the chain alone.
    pub unsafe fn chain(&mut self, next: *const c_void) -> Result<*const c_void, VkStructureType> {
        let mark = self.blocks.len();
        // SAFETY: `next` is NULL or a valid chain (this function's contract).
        let copy = unsafe { self.copy_chain(next) };
        // A chain's failures always name a structure of the chain, never `Here`.
        self.finish(mark, copy, VkStructureType::LOADER_INSTANCE_CREATE_INFO)
    }

    /// Frees what was allocated since `mark` when the copy failed.
    fn finish<T>(&mut self, mark: usize, copy: Result<T, Fail>, owner: VkStructureType) -> Result<T, VkStructureType> {
        copy.map_err(|fail| {
            for (block, layout) in self.blocks.drain(mark..) {
                // SAFETY: allocated by `block` with this layout, and no copy handed out points to it.
                unsafe { alloc::alloc::dealloc(block.as_ptr(), layout) };
            }
            fail.at(owner)
        })
    }

    /// A new block of `layout.size()` bytes holding a copy of `src`.
    ///
    /// # Safety
    /// `layout` is not zero-sized; `src` is readable for `layout.size()` bytes.
    unsafe fn block(&mut self, src: *const u8, layout: Layout) -> Result<*mut u8, Fail> {
        self.blocks.try_reserve(1).map_err(|_| Fail::Here)?;
        // SAFETY: the layout is not zero-sized (this function's contract).
        let block = NonNull::new(unsafe { alloc::alloc::alloc(layout) }).ok_or(Fail::Here)?;
        // SAFETY: `src` is readable for the size (the contract); the block was just allocated with
        // it, so the two do not overlap.
        unsafe { ptr::copy_nonoverlapping(src, block.as_ptr(), layout.size()) };
        self.blocks.push((block, layout));
        Ok(block.as_ptr())
    }

    /// A copy of `count` values at `src`; NULL where `src` is NULL or `count` is zero.
    ///
    /// # Safety
    /// `src` is NULL or valid for reading `count` values.
    pub(crate) unsafe fn array<T: Copy>(&mut self, src: *const T, count: usize) -> Result<*mut T, Fail> {
        if src.is_null() || count == 0 || size_of::<T>() == 0 {
            return Ok(ptr::null_mut());
        }
        let layout = Layout::array::<T>(count).map_err(|_| Fail::Here)?;
        // SAFETY: a non-empty layout of the `count` values `src` is valid for (the contract).
        Ok(unsafe { self.block(src.cast(), layout) }?.cast())
    }

    /// A copy of `count` structures at `src`, each re-pointed by `fix`.
    ///
    /// # Safety
    /// `src` is NULL or valid for reading `count` structures, each valid as `fix` needs it.
    pub(crate) unsafe fn structs<T: Copy>(&mut self, src: *const T, count: usize, fix: Fix<T>) -> Result<*mut T, Fail> {
        // SAFETY: per this function's contract.
        let copy = unsafe { self.array(src, count) }?;
        for i in 0..if copy.is_null() { 0 } else { count } {
            // SAFETY: `copy` holds `count` structures this value owns, bitwise copies of valid ones.
            unsafe { fix(self, &mut *copy.add(i)) }?;
        }
        Ok(copy)
    }

    /// A copy of `size` bytes of untyped data, aligned for any scalar (for `void*` members sized by
    /// a byte count such as `dataSize`; the vendored registry's scope has none today).
    ///
    /// # Safety
    /// `src` is NULL or valid for reading `size` bytes.
    #[allow(dead_code)]
    pub(crate) unsafe fn bytes(&mut self, src: *const c_void, size: usize) -> Result<*mut c_void, Fail> {
        if src.is_null() || size == 0 {
            return Ok(ptr::null_mut());
        }
        let layout = Layout::from_size_align(size, align_of::<u128>()).map_err(|_| Fail::Here)?;
        // SAFETY: a non-empty layout of the `size` bytes `src` is valid for (the contract).
        Ok(unsafe { self.block(src.cast(), layout) }?.cast())
    }

    /// A copy of a NUL-terminated string.
    ///
    /// # Safety
    /// `src` is NULL or a NUL-terminated string.
    pub(crate) unsafe fn string(&mut self, src: *const c_char) -> Result<*mut c_char, Fail> {
        if src.is_null() {
            return Ok(ptr::null_mut());
        }
        // SAFETY: a NUL-terminated string (the contract), read up to and with its NUL.
        unsafe { self.array(src, CStr::from_ptr(src).to_bytes_with_nul().len()) }
    }

    /// A copy of an array of `count` strings, the strings copied too.
    ///
    /// # Safety
    /// `src` is NULL or valid for reading `count` pointers, each NULL or a NUL-terminated string.
    pub(crate) unsafe fn strings(&mut self, src: *const *const c_char, count: usize) -> Result<*mut *const c_char, Fail> {
        // SAFETY: per this function's contract.
        let copy = unsafe { self.array(src, count) }?;
        for i in 0..if copy.is_null() { 0 } else { count } {
            // SAFETY: `copy` holds `count` pointers this value owns, copies of the caller's strings'.
            unsafe {
                let s = copy.add(i);
                *s = self.string(*s)?;
            }
        }
        Ok(copy)
    }

    /// A copy of a pNext chain, one structure at a time (no recursion along the chain).
    ///
    /// # Safety
    /// `next` is NULL or a valid chain, as [`DeepCopy::chain`] says.
    pub(crate) unsafe fn copy_chain(&mut self, mut next: *const c_void) -> Result<*const c_void, Fail> {
        let mut head: *const c_void = ptr::null();
        let mut tail: *mut VkBaseOutStructure = ptr::null_mut();
        while !next.is_null() {
            let src = next.cast::<VkBaseInStructure>();
            // SAFETY: every structure of a valid chain starts with `sType` and `pNext`.
            let stype = unsafe { (*src).sType };
            // SAFETY: `next` is a valid structure of the type its `sType` names.
            let node = unsafe { data::chain_node(self, next, stype) }.map_err(|fail| Fail::At(fail.at(stype)))?;
            let node = node.cast::<VkBaseOutStructure>();
            if tail.is_null() {
                head = node.cast_const().cast();
            } else {
                // SAFETY: `tail` is the previous copy, a chain structure this value owns.
                unsafe { (*tail).pNext = node };
            }
            tail = node;
            // SAFETY: as for `sType` above.
            next = unsafe { (*src).pNext }.cast();
        }
        Ok(head)
    }

    /// A copy of one chain structure at `src`: its own pNext is left NULL for [`Self::copy_chain`]
    /// to link, so `fix` finds no chain to follow.
    ///
    /// # Safety
    /// `src` points to a valid chain structure of type `T`, valid as `fix` needs it.
    pub(crate) unsafe fn chain_struct<T: Copy>(&mut self, src: *const c_void, fix: Option<Fix<T>>) -> Result<*mut c_void, Fail> {
        // SAFETY: one `T` at `src` (the contract).
        let copy = unsafe { self.array(src.cast::<T>(), 1) }?;
        // SAFETY: `copy` is this value's copy of a chain structure, which starts with `sType` and
        // `pNext`.
        unsafe { (*copy.cast::<VkBaseOutStructure>()).pNext = ptr::null_mut() };
        if let Some(fix) = fix {
            // SAFETY: `copy` is a bitwise copy of the caller's valid `T`, which this value owns.
            unsafe { fix(self, &mut *copy) }?;
        }
        Ok(copy.cast())
    }
}

impl Drop for DeepCopy {
    fn drop(&mut self) {
        for (block, layout) in self.blocks.drain(..) {
            // SAFETY: allocated by `block` with this layout; the copies die with `self`.
            unsafe { alloc::alloc::dealloc(block.as_ptr(), layout) };
        }
    }
}
