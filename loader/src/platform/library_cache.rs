//! Driver and layer libraries, shared while in use and unloaded when the last user lets go, as
//! the Khronos loader unloads them: a library opened by one call or instance is handed (by handle)
//! to every other that needs it while it is loaded, and closed (`dlclose`) when the last holder
//! drops it: the `vkEnumerateInstance*` call that loaded it, the last `vkDestroyInstance` of an
//! instance that used it, or `vkCreateInstance` for a driver found to have no physical device. So
//! no driver or layer stays mapped after the last instance is gone, and a driver's GPU device
//! files (NVIDIA's keep the GPU awake on a hybrid laptop) are closed with it.
//!
//! Only the handle is shared. Discovery, manifests and interface negotiation run on every call, so
//! a changed environment or manifest is seen by the next instance exactly as before. `dlopen` of a
//! path already loaded returns the loaded library anyway; sharing the handle spares the second
//! `dlopen`'s search and the entry points' lookup.
//!
//! Drivers a `vkEnumerateInstance*` call loaded are kept until the next `vkDestroyInstance`
//! ([`preload`]), as the Khronos loader preloads them: an application asks for a count, then the
//! list, then creates its instance, and loads its drivers once, not three times. A driver found
//! to have no physical device is let go at `vkCreateInstance` ([`release_preloaded`]).
//!
//! A library that fails to load is not remembered: the next call tries again. The lists live as
//! long as the process, so they are allocated from the system, never from an application's
//! `VkAllocationCallbacks` (see host_alloc).

use std::sync::{Arc, Mutex, Weak};

use crate::platform::host_alloc::with_system_allocator;
use crate::platform::Library;

static LOADED: Mutex<Vec<(String, Weak<Library>)>> = Mutex::new(Vec::new());

/// The library loaded from exactly `path`, if something still holds it.
pub fn get(path: &str) -> Option<Arc<Library>> {
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.iter().find(|(p, _)| p == path).and_then(|(_, lib)| lib.upgrade())
}

/// Loads `path`, or shares the loaded library. `dlopen` runs the library's initialisers, so it
/// runs without our lock held; if another thread loaded the same path meanwhile, its handle wins
/// and ours only drops the reference count `dlopen` added. The library is unloaded when the last
/// `Arc` returned for it is dropped.
pub fn open(path: &str) -> Result<Arc<Library>, String> {
    if let Some(lib) = get(path) {
        return Ok(lib);
    }
    with_system_allocator(|| {
        let lib = Arc::new(Library::open(path)?);
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(earlier) = loaded.iter().find(|(p, _)| p == path).and_then(|(_, lib)| lib.upgrade()) {
            drop(loaded);
            return Ok(earlier);
        }
        // Entries of libraries unloaded since are dropped as new ones come.
        loaded.retain(|(_, lib)| lib.strong_count() > 0);
        loaded.push((path.to_string(), Arc::downgrade(&lib)));
        Ok(lib)
    })
}

/// Drivers kept loaded by a `vkEnumerateInstance*` call until the next `vkDestroyInstance`.
static PRELOADED: Mutex<Vec<Arc<Library>>> = Mutex::new(Vec::new());

/// Keeps `lib` loaded until [`release_all_preloaded`] (or [`release_preloaded`] of it).
pub fn preload(lib: &Arc<Library>) {
    let mut preloaded = PRELOADED.lock().unwrap_or_else(|e| e.into_inner());
    if !preloaded.iter().any(|kept| Arc::ptr_eq(kept, lib)) {
        with_system_allocator(|| preloaded.push(lib.clone()));
    }
}

/// Lets go of `lib` if a query kept it (a driver without a physical device, at `vkCreateInstance`).
pub fn release_preloaded(lib: &Arc<Library>) {
    let released: Vec<Arc<Library>> = {
        let mut preloaded = PRELOADED.lock().unwrap_or_else(|e| e.into_inner());
        let (gone, kept) = std::mem::take(&mut *preloaded).into_iter().partition(|kept| Arc::ptr_eq(kept, lib));
        *preloaded = kept;
        gone
    };
    // Unloaded (if nothing else holds it) without the lock held: dlclose runs its destructors.
    drop(released);
}

/// Lets go of every driver the queries kept (`vkDestroyInstance`).
pub fn release_all_preloaded() {
    let released = std::mem::take(&mut *PRELOADED.lock().unwrap_or_else(|e| e.into_inner()));
    drop(released);
}
