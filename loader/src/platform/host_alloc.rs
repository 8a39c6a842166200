//! The application's `VkAllocationCallbacks` for the loader's own memory.
//!
//! While a command that received an allocator runs (`vkCreateInstance`, `vkCreateDevice`, ...),
//! every allocation the loader's Rust code makes on that thread goes through the application's
//! `pfnAllocation`: a [`AllocatorScope`] names the callbacks, and this crate's global allocator
//! reads it. Each block carries a small header naming the `pfnFree` it must go back to, so
//! instance-lifetime memory is returned to the application's allocator whenever it is freed.
//!
//! A global allocator must not fail unwinding-style, and Rust's collections abort on a NULL
//! allocation. So when the application's allocator returns NULL, the block comes from the system
//! instead and the scope records the failure; the command then undoes its work and returns
//! `VK_ERROR_OUT_OF_HOST_MEMORY` (see `failed`). The application's allocator is not asked again
//! in that scope. Nothing is leaked either way: every block is freed to where it came from.
//!
//! Process-lifetime data (caches that outlive an instance) must be allocated with
//! [`with_system_allocator`], never from an application's allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use vk_generated::types::{PFN_vkFreeFunction, VkAllocationCallbacks, VkSystemAllocationScope};

/// Where a block goes back to: the application's `pfnFree` (with its user data) or the system.
#[derive(Clone, Copy)]
#[repr(C)]
struct Header {
    free: PFN_vkFreeFunction,
    user_data: *mut c_void,
}

const HEADER: usize = std::mem::size_of::<Header>();

/// The allocator in force on this thread.
#[derive(Clone, Copy)]
struct Active {
    callbacks: VkAllocationCallbacks,
    scope: VkSystemAllocationScope,
    /// The application's allocator returned NULL in this scope.
    failed: bool,
}

thread_local! {
    static ACTIVE: Cell<Option<Active>> = const { Cell::new(None) };
}

/// Scopes entered and not yet left, on all threads. While there are none, no thread's slot
/// names callbacks, and the allocator and [`with_system_allocator`] need not read it: from a
/// shared library, each read of a thread-local slot is a call into the dynamic linker (some 800
/// allocations in a warm start-up with device-select; `__tls_get_addr` 12,562 -> 1,595
/// instructions in all).
/// Relaxed suffices: a thread's own scope is counted before its slot is set and after it is
/// cleared, in its own program order; another thread's count only sends it the long way.
static ENTERED: AtomicUsize = AtomicUsize::new(0);

/// While alive, the loader's allocations on this thread use the application's callbacks.
pub struct AllocatorScope {
    previous: Option<Active>,
    entered: bool,
}

impl AllocatorScope {
    /// Enters a scope for `callbacks` (NULL, or callbacks without `pfnAllocation`/`pfnFree`:
    /// nothing changes).
    ///
    /// # Safety
    /// `callbacks` must be NULL or point to a valid `VkAllocationCallbacks`, and its functions
    /// must stay callable for as long as any block allocated in the scope lives (Vulkan requires
    /// the callbacks to outlive the objects created with them).
    pub unsafe fn enter(callbacks: *const VkAllocationCallbacks, scope: VkSystemAllocationScope) -> AllocatorScope {
        // SAFETY: the caller passes NULL or a valid `VkAllocationCallbacks`; it is copied at once.
        let callbacks = unsafe { callbacks.as_ref() };
        match callbacks.filter(|c| c.pfnAllocation.is_some() && c.pfnFree.is_some()) {
            Some(callbacks) => {
                let active = Active { callbacks: *callbacks, scope, failed: false };
                ENTERED.fetch_add(1, Ordering::Relaxed);
                AllocatorScope { previous: ACTIVE.with(|a| a.replace(Some(active))), entered: true }
            }
            None => AllocatorScope { previous: None, entered: false },
        }
    }

    /// Whether the application's allocator failed in this scope: the command must undo its work
    /// and return `VK_ERROR_OUT_OF_HOST_MEMORY`.
    pub fn failed(&self) -> bool {
        self.entered && ACTIVE.with(|a| a.get().is_some_and(|active| active.failed))
    }
}

impl Drop for AllocatorScope {
    fn drop(&mut self) {
        if self.entered {
            ACTIVE.with(|a| a.set(self.previous));
            ENTERED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Runs `f` with the system allocator, whatever scope is active: for process-lifetime data.
pub fn with_system_allocator<R>(f: impl FnOnce() -> R) -> R {
    if ENTERED.load(Ordering::Relaxed) == 0 {
        return f();
    }
    struct Restore(Option<Active>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(self.0));
        }
    }
    let _restore = Restore(ACTIVE.with(|a| a.take()));
    f()
}

/// The space in front of a block: the header, rounded up to the block's alignment.
fn prefix(layout: Layout) -> usize {
    layout.align().max(HEADER)
}

/// The loader's global allocator (see the module documentation).
pub struct LoaderAllocator;

// SAFETY: `alloc` returns NULL or a block of `layout.size()` bytes aligned to `layout.align()`
// (the prefix is a multiple of the alignment, and both allocators honour `align`), which nothing
// else uses until `dealloc`; `dealloc` gives the whole allocation back to the allocator its
// header names, with the size and alignment it was asked for.
unsafe impl GlobalAlloc for LoaderAllocator {
    /// # Safety
    /// `GlobalAlloc::alloc`'s contract: `layout` has a non-zero size.
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let prefix = prefix(layout);
        let Some(size) = layout.size().checked_add(prefix) else { return std::ptr::null_mut() };
        let align = layout.align().max(HEADER);
        // `try_with`: during thread teardown the slot may be gone; the system serves then.
        let active = match ENTERED.load(Ordering::Relaxed) {
            0 => None,
            _ => ACTIVE.try_with(|a| a.get()).ok().flatten().filter(|a| !a.failed),
        };
        let (base, header) = match active {
            Some(active) => {
                let callbacks = &active.callbacks;
                // SAFETY: `enter` only activates callbacks whose `pfnAllocation` is set, and its
                // caller keeps them callable for the scope (a valid `VkAllocationCallbacks`).
                let base = unsafe {
                    let allocate = callbacks.pfnAllocation.unwrap_unchecked();
                    allocate(callbacks.pUserData, size, align, active.scope) as *mut u8
                };
                if base.is_null() {
                    let _ = ACTIVE.try_with(|a| a.set(Some(Active { failed: true, ..active })));
                    (system_alloc(size, align), Header { free: None, user_data: std::ptr::null_mut() })
                } else {
                    (base, Header { free: callbacks.pfnFree, user_data: callbacks.pUserData })
                }
            }
            None => (system_alloc(size, align), Header { free: None, user_data: std::ptr::null_mut() }),
        };
        if base.is_null() {
            return base;
        }
        // SAFETY: `base` is a live allocation of `size = layout.size() + prefix` bytes, so
        // `base + prefix` is in it (or one past its end for a zero-sized layout), and the header
        // fits in the `prefix >= HEADER` bytes in front of the block.
        unsafe {
            let block = base.add(prefix);
            (block.sub(HEADER) as *mut Header).write_unaligned(header);
            block
        }
    }

    /// # Safety
    /// `GlobalAlloc::dealloc`'s contract: `block` came from this allocator's `alloc` with `layout`
    /// and is freed once.
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let prefix = prefix(layout);
        // SAFETY: `GlobalAlloc`'s contract: `block` came from `alloc` with this `layout`, which
        // wrote the header just in front of it and returned `base + prefix`.
        let (header, base) = unsafe { ((block.sub(HEADER) as *const Header).read_unaligned(), block.sub(prefix)) };
        match header.free {
            // SAFETY: the header names the application's `pfnFree` that allocated `base`; Vulkan
            // keeps it callable while blocks from it live.
            Some(free) => unsafe { free(header.user_data, base as *mut c_void) },
            // SAFETY: `base` came from `system_alloc` with this size and alignment, a layout
            // `Layout::from_size_align` accepted there.
            None => unsafe {
                System.dealloc(base, Layout::from_size_align_unchecked(layout.size() + prefix, layout.align().max(HEADER)))
            },
        }
    }
}

/// A block of `size` bytes aligned to `align` from the system, or NULL (also where the two make
/// no valid `Layout`: a size near `isize::MAX` once the header is added).
fn system_alloc(size: usize, align: usize) -> *mut u8 {
    match Layout::from_size_align(size, align) {
        // SAFETY: the layout's size is non-zero (it includes the header).
        Ok(layout) => unsafe { System.alloc(layout) },
        Err(_) => std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

    static LIVE: AtomicIsize = AtomicIsize::new(0);
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static FAIL_AT: AtomicUsize = AtomicUsize::new(usize::MAX);

    /// A `PFN_vkAllocationFunction` that counts its blocks and fails at the call `FAIL_AT` names.
    ///
    /// # Safety
    /// Called as Vulkan calls an allocation function: `align` a power of two.
    unsafe extern "system" fn allocate(_: *mut c_void, size: usize, align: usize, _: VkSystemAllocationScope) -> *mut c_void {
        if CALLS.fetch_add(1, Ordering::SeqCst) + 1 == FAIL_AT.load(Ordering::SeqCst) {
            return std::ptr::null_mut();
        }
        LIVE.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the loader's blocks are never zero-sized (they carry a header).
        unsafe { System.alloc(Layout::from_size_align(size, align).unwrap()) as *mut c_void }
    }

    /// The `PFN_vkFreeFunction` of [`allocate`].
    ///
    /// # Safety
    /// `memory` came from [`allocate`] and is freed once.
    unsafe extern "system" fn free(_: *mut c_void, memory: *mut c_void) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        // SAFETY: `memory` came from the system allocator through `allocate`; the test's blocks are
        // small and little-aligned, so the system allocator frees them by pointer alone.
        unsafe { libc::free(memory) };
    }

    fn callbacks() -> VkAllocationCallbacks {
        VkAllocationCallbacks { pfnAllocation: Some(allocate), pfnFree: Some(free), ..Default::default() }
    }

    // One test: the counters are process-wide.
    #[test]
    fn blocks_go_back_to_their_allocator_and_failures_are_recorded() {
        let callbacks = callbacks();
        let kept = {
            // SAFETY: `callbacks` outlives every block allocated through it (all freed below).
            let scope = unsafe { AllocatorScope::enter(&callbacks, VkSystemAllocationScope::INSTANCE) };
            let v: Vec<u64> = (0..100).collect();
            let kept = Box::new(7u128); // outlives the scope, still freed to the application
            let cache = with_system_allocator(|| Box::new([0u8; 64]));
            drop(cache);
            assert!(!scope.failed());
            assert!(LIVE.load(Ordering::SeqCst) >= 2);
            drop(v);
            kept
        };
        drop(kept);
        assert_eq!(LIVE.load(Ordering::SeqCst), 0);

        FAIL_AT.store(CALLS.load(Ordering::SeqCst) + 2, Ordering::SeqCst);
        // SAFETY: as above.
        let scope = unsafe { AllocatorScope::enter(&callbacks, VkSystemAllocationScope::COMMAND) };
        let a = Box::new(1u32);
        let b = Box::new(2u32); // the application's allocator fails here: the system serves it
        let c = Box::new(3u32); // and is not asked again
        assert!(scope.failed());
        assert_eq!(*a + *b + *c, 6);
        drop((a, b, c));
        drop(scope);
        assert_eq!(LIVE.load(Ordering::SeqCst), 0);
    }
}
