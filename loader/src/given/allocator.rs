//! An application's `VkAllocationCallbacks`, passed on to the level below as they are.

use std::marker::PhantomData;

use vk_generated::types::VkAllocationCallbacks;

/// NULL or valid allocation callbacks, for `'a`.
#[derive(Clone, Copy)]
pub struct Allocator<'a> {
    callbacks: *const VkAllocationCallbacks,
    lives: PhantomData<&'a VkAllocationCallbacks>,
}

impl<'a> Allocator<'a> {
    /// # Safety
    /// `callbacks` must be NULL or valid allocation callbacks for `'a` (Vulkan's valid usage of a
    /// `pAllocator` parameter), compatible with those of the object the call is about.
    pub unsafe fn new(callbacks: *const VkAllocationCallbacks) -> Allocator<'a> {
        Allocator { callbacks, lives: PhantomData }
    }

    /// The callbacks, for the level below (NULL: none).
    pub fn as_ptr(self) -> *const VkAllocationCallbacks {
        self.callbacks
    }
}

/// A copy of the callbacks an instance was created with, kept for a driver instance created later
/// (a lazy driver's): Vulkan requires them callable for as long as the instance lives.
#[derive(Clone, Copy)]
pub struct KeptAllocator(Option<VkAllocationCallbacks>);

// SAFETY: the callbacks' functions are callable from any thread (Vulkan requires it); the user data
// is the application's, handed back to them, never dereferenced by the loader.
unsafe impl Send for KeptAllocator {}
// SAFETY: as for `Send`; the copy is never written.
unsafe impl Sync for KeptAllocator {}

impl Allocator<'_> {
    /// A copy of the callbacks, for later calls about the same object.
    pub fn keep(self) -> KeptAllocator {
        // SAFETY: NULL or valid callbacks (`new`'s contract), copied.
        KeptAllocator(unsafe { self.callbacks.as_ref() }.copied())
    }
}

impl KeptAllocator {
    /// The kept callbacks, as valid as when they were kept.
    pub fn get(&self) -> Allocator<'_> {
        Allocator { callbacks: self.0.as_ref().map_or(std::ptr::null(), |a| a as *const _), lives: PhantomData }
    }
}
