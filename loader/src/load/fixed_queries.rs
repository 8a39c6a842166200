//! The physical-device queries whose answers the driver cache records, as safe calls: each one
//! gives the driver zeroed storage of the loader's own, sized and chained for what the driver is
//! told, and hands back what it wrote with the padding bytes zeroed (drivers copy their
//! structures' padding too, which must neither reach the cache file nor make two records of the
//! same answers differ).

use std::marker::PhantomData;
use std::mem::size_of;

use vk_generated::padding::ZeroPadding;
use vk_generated::types::*;
use vk_generated::{InstanceDispatchTable, TaggedStruct};

use crate::ffi::{self, TaggedSize};

/// One physical device of a driver instance, with the instance's table, for the recorded queries.
#[derive(Clone, Copy)]
pub struct FixedQueries<'a> {
    table: &'a InstanceDispatchTable,
    handle: VkPhysicalDevice,
}

impl<'a> FixedQueries<'a> {
    /// # Safety
    /// `handle` must be a physical device live for `'a` that the driver instance `table` belongs
    /// to listed.
    pub unsafe fn new(table: &'a InstanceDispatchTable, handle: VkPhysicalDevice) -> FixedQueries<'a> {
        FixedQueries { table, handle }
    }

    pub fn handle(self) -> VkPhysicalDevice {
        self.handle
    }

    /// `vkGetPhysicalDeviceProperties`; `None` when the driver lacks it.
    pub fn properties(self) -> Option<Filled<VkPhysicalDeviceProperties>> {
        let get = self.table.vkGetPhysicalDeviceProperties?;
        let mut out = Filled::zeroed(1);
        // SAFETY: the driver's function with its own live handle and storage for one structure.
        unsafe { get(self.handle, out.as_mut_ptr()) };
        Some(out)
    }

    /// `vkGetPhysicalDeviceFeatures`; `None` when the driver lacks it.
    pub fn features(self) -> Option<Filled<VkPhysicalDeviceFeatures>> {
        let get = self.table.vkGetPhysicalDeviceFeatures?;
        let mut out = Filled::zeroed(1);
        // SAFETY: as in `properties`.
        unsafe { get(self.handle, out.as_mut_ptr()) };
        Some(out)
    }

    /// `vkGetPhysicalDeviceMemoryProperties`; `None` when the driver lacks it.
    pub fn memory_properties(self) -> Option<Filled<VkPhysicalDeviceMemoryProperties>> {
        let get = self.table.vkGetPhysicalDeviceMemoryProperties?;
        let mut out = Filled::zeroed(1);
        // SAFETY: as in `properties`.
        unsafe { get(self.handle, out.as_mut_ptr()) };
        Some(out)
    }

    /// `vkGetPhysicalDeviceFormatProperties` of `format`; `None` when the driver lacks it.
    pub fn format_properties(self, format: VkFormat) -> Option<Filled<VkFormatProperties>> {
        let get = self.table.vkGetPhysicalDeviceFormatProperties?;
        let mut out = Filled::zeroed(1);
        // SAFETY: as in `properties`; a format is a plain value.
        unsafe { get(self.handle, format, out.as_mut_ptr()) };
        Some(out)
    }

    /// `vkGetPhysicalDeviceQueueFamilyProperties`, both calls; `None` when the driver lacks it.
    pub fn queue_families(self) -> Option<Filled<VkQueueFamilyProperties>> {
        let get = self.table.vkGetPhysicalDeviceQueueFamilyProperties?;
        let mut count = 0;
        // SAFETY: the driver's function with its own live handle, a count and no array.
        unsafe { get(self.handle, &mut count, std::ptr::null_mut()) };
        let mut out = Filled::zeroed(count as usize);
        let mut written = count;
        // SAFETY: as above, with storage for the `count` structures the driver is told of.
        unsafe { get(self.handle, &mut written, out.as_mut_ptr()) };
        out.truncate(written.min(count) as usize);
        Some(out)
    }

    /// The device's extensions (`vkEnumerateDeviceExtensionProperties` without a layer name, both
    /// calls); none when the driver lacks the function or the query fails.
    pub fn extensions(self) -> Vec<VkExtensionProperties> {
        let Some(enumerate) = self.table.vkEnumerateDeviceExtensionProperties else { return Vec::new() };
        // SAFETY: the driver's function with its own live handle and no layer name; `query`
        // passes a count and, when it is not NULL, an array of that many structures.
        ffi::query(|count, out| unsafe { enumerate(self.handle, std::ptr::null(), count, out) }).unwrap_or_default()
    }

    /// `vkGetPhysicalDeviceProperties2` into `chain`; `false` (nothing asked) when the driver
    /// lacks it or the chain's head is not a `VkPhysicalDeviceProperties2`.
    pub fn properties2(self, chain: &mut OutputChain) -> bool {
        let (Some(get), Some(head)) = (self.table.vkGetPhysicalDeviceProperties2, chain.head::<VkPhysicalDeviceProperties2>()) else {
            return false;
        };
        // SAFETY: the driver's function with its own live handle and a chain of the loader's
        // own structures, each as large as its sType says.
        unsafe { get(self.handle, head) };
        true
    }

    /// `vkGetPhysicalDeviceFeatures2` into `chain` (as [`properties2`](Self::properties2)).
    pub fn features2(self, chain: &mut OutputChain) -> bool {
        let (Some(get), Some(head)) = (self.table.vkGetPhysicalDeviceFeatures2, chain.head::<VkPhysicalDeviceFeatures2>()) else {
            return false;
        };
        // SAFETY: as in `properties2`.
        unsafe { get(self.handle, head) };
        true
    }

    /// `vkGetPhysicalDeviceFormatProperties2` of `format` into `chain` (as
    /// [`properties2`](Self::properties2)).
    pub fn format_properties2(self, format: VkFormat, chain: &mut OutputChain) -> bool {
        let (Some(get), Some(head)) = (self.table.vkGetPhysicalDeviceFormatProperties2, chain.head::<VkFormatProperties2>()) else {
            return false;
        };
        // SAFETY: as in `properties2`; a format is a plain value.
        unsafe { get(self.handle, format, head) };
        true
    }

    /// Whether the driver has `vkGetPhysicalDeviceFormatProperties2`.
    pub fn has_format_properties2(self) -> bool {
        self.table.vkGetPhysicalDeviceFormatProperties2.is_some()
    }
}

/// Structures of type `T` a driver writes into: zeroed 8-byte words of the loader's own (so any
/// Vulkan structure fits its alignment), read back as values or as bytes with the padding zeroed.
pub struct Filled<T> {
    words: Vec<u64>,
    len: usize,
    _items: PhantomData<T>,
}

impl<T: ZeroPadding + Copy> Filled<T> {
    fn zeroed(len: usize) -> Filled<T> {
        Filled { words: vec![0; (size_of::<T>() * len).div_ceil(8)], len, _items: PhantomData }
    }

    fn as_mut_ptr(&mut self) -> *mut T {
        self.words.as_mut_ptr().cast()
    }

    fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Structure `index` as the driver wrote it.
    pub fn get(&self, index: usize) -> Option<T> {
        // SAFETY: within the storage of `len` structures, aligned for them; its bytes are the
        // zeroes written first or what the driver wrote, and any bytes are a valid value of a
        // generated Vulkan structure (integers, floats, raw pointers, arrays and structures of
        // them: the types `ZeroPadding` is generated for).
        (index < self.len).then(|| unsafe { self.words.as_ptr().cast::<T>().add(index).read() })
    }

    /// The structures' bytes, one after the other, their padding zeroed.
    pub fn bytes(&mut self) -> &[u8] {
        let size = size_of::<T>();
        let base = self.words.as_mut_ptr().cast::<u8>();
        for index in 0..self.len {
            // SAFETY: structure `index` of the storage, writable.
            unsafe { T::zero_padding(base.add(index * size)) };
        }
        // SAFETY: the first `len` structures of the storage, every byte initialised (zeroed first).
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len * size) }
    }
}

/// Zeroed output structures of the loader's own chained behind a head (a `2` query's output),
/// each with its `sType` set and its storage as large as the structure that `sType` names.
pub struct OutputChain {
    /// Each structure's type and storage (8-byte words, for alignment), head first; each one's
    /// `pNext` points at the next one's storage, which stays put when the list moves.
    blocks: Vec<(TaggedSize, Vec<u64>)>,
}

impl OutputChain {
    pub fn new(head: TaggedSize, links: impl IntoIterator<Item = TaggedSize>) -> OutputChain {
        let mut blocks: Vec<(TaggedSize, Vec<u64>)> =
            std::iter::once(head).chain(links).map(|kind| (kind, vec![0u64; kind.size().div_ceil(8)])).collect();
        let mut next: *mut VkBaseOutStructure = std::ptr::null_mut();
        for (kind, block) in blocks.iter_mut().rev() {
            let header = block.as_mut_ptr().cast::<VkBaseOutStructure>();
            // SAFETY: the block is at least a header long (a tagged structure's) and aligned for it.
            unsafe { header.write(VkBaseOutStructure { sType: kind.s_type(), pNext: next }) };
            next = header;
        }
        OutputChain { blocks }
    }

    /// The head as a `T`, for a query whose output is a `T`; `None` if the head is another type.
    fn head<T: TaggedStruct>(&mut self) -> Option<*mut T> {
        let (kind, block) = self.blocks.first_mut()?;
        (*kind == TaggedSize::of::<T>()).then(|| block.as_mut_ptr().cast())
    }

    /// Each structure as the driver left it, its padding zeroed: its type and its bytes, header
    /// included.
    pub fn structures(&mut self) -> impl Iterator<Item = (TaggedSize, &[u8])> {
        self.blocks.iter_mut().map(|(kind, block)| {
            // SAFETY: the block holds a whole structure of the type `kind` names, writable.
            unsafe { vk_generated::padding::zero_padding_by_type(kind.s_type(), block.as_mut_ptr().cast()) };
            // SAFETY: `kind.size()` initialised bytes of the block (zeroed first, then written).
            let bytes = unsafe { std::slice::from_raw_parts(block.as_ptr().cast::<u8>(), kind.size()) };
            (*kind, bytes)
        })
    }
}
