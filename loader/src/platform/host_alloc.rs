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
    /// `callbacks` must be NULL or valid for the scope's lifetime, as Vulkan requires.
    pub unsafe fn enter(callbacks: *const VkAllocationCallbacks, scope: VkSystemAllocationScope) -> AllocatorScope {
        match callbacks.as_ref().filter(|c| c.pfnAllocation.is_some() && c.pfnFree.is_some()) {
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

unsafe impl GlobalAlloc for LoaderAllocator {
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
                let allocate = callbacks.pfnAllocation.unwrap_unchecked();
                let base = allocate(callbacks.pUserData, size, align, active.scope) as *mut u8;
                if base.is_null() {
                    let _ = ACTIVE.try_with(|a| a.set(Some(Active { failed: true, ..active })));
                    (System.alloc(Layout::from_size_align_unchecked(size, align)), Header { free: None, user_data: std::ptr::null_mut() })
                } else {
                    (base, Header { free: callbacks.pfnFree, user_data: callbacks.pUserData })
                }
            }
            None => (System.alloc(Layout::from_size_align_unchecked(size, align)), Header { free: None, user_data: std::ptr::null_mut() }),
        };
        if base.is_null() {
            return base;
        }
        let block = base.add(prefix);
        (block.sub(HEADER) as *mut Header).write_unaligned(header);
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let prefix = prefix(layout);
        let header = (block.sub(HEADER) as *const Header).read_unaligned();
        let base = block.sub(prefix);
        match header.free {
            Some(free) => free(header.user_data, base as *mut c_void),
            None => System.dealloc(base, Layout::from_size_align_unchecked(layout.size() + prefix, layout.align().max(HEADER))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

    static LIVE: AtomicIsize = AtomicIsize::new(0);
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static FAIL_AT: AtomicUsize = AtomicUsize::new(usize::MAX);

    unsafe extern "system" fn allocate(_: *mut c_void, size: usize, align: usize, _: VkSystemAllocationScope) -> *mut c_void {
        if CALLS.fetch_add(1, Ordering::SeqCst) + 1 == FAIL_AT.load(Ordering::SeqCst) {
            return std::ptr::null_mut();
        }
        LIVE.fetch_add(1, Ordering::SeqCst);
        System.alloc(Layout::from_size_align(size, align).unwrap()) as *mut c_void
    }

    unsafe extern "system" fn free(_: *mut c_void, memory: *mut c_void) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
        // The test's blocks are small: the system allocator frees by pointer alone.
        libc::free(memory);
    }

    fn callbacks() -> VkAllocationCallbacks {
        VkAllocationCallbacks { pfnAllocation: Some(allocate), pfnFree: Some(free), ..Default::default() }
    }

    // One test: the counters are process-wide.
    #[test]
    fn blocks_go_back_to_their_allocator_and_failures_are_recorded() {
        let callbacks = callbacks();
        let kept = {
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
