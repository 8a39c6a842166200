//! Libraries stay loaded: the first `dlopen` of a driver or layer library is kept for the life of
//! the process, and later instances (and `vkEnumerateInstance*` calls) reuse the handle instead of
//! mapping, relocating and initialising the library again and unmapping it at `vkDestroyInstance`
//! (most of what a creation cost before: 102 us of 1 driver's creation was 26 us without it).
//!
//! Only the handle is cached. Discovery, manifests and interface negotiation still run on every
//! call, so a changed environment or manifest is seen by the next instance exactly as before; a
//! driver no longer named anywhere is simply not used. Nothing is ever unloaded, so nothing still
//! in use can be. `dlopen` of a path already loaded returns the loaded library anyway, so a
//! library replaced on disk while the process runs is no more (or less) visible than without the
//! cache.
//!
//! This differs from the Khronos loader, which unloads drivers and layers at `vkDestroyInstance`
//! (its "preloaded" drivers only bridge the `vkEnumerateInstance*` calls made before an instance)
//! and so reloads them for every instance. The price here: a library stays mapped after the last
//! instance is gone, until the process ends, and a layer's process-wide state (what it read from
//! the environment at its first use, say) carries over to later instances.
//!
//! A library that fails to load is not remembered: the next call tries again. The cache lives as
//! long as the process, so it is allocated from the system, never from an application's
//! `VkAllocationCallbacks` (see host_alloc).

use std::sync::{Arc, Mutex};

use crate::platform::Library;
use crate::platform::host_alloc::with_system_allocator;

static LOADED: Mutex<Vec<(String, Arc<Library>)>> = Mutex::new(Vec::new());

/// The library loaded earlier from exactly `path`, if any.
pub fn get(path: &str) -> Option<Arc<Library>> {
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded.iter().find(|(p, _)| p == path).map(|(_, lib)| lib.clone())
}

/// Loads `path` and keeps it. `dlopen` runs the library's initialisers, so it runs without our
/// lock held; if another thread loaded the same path meanwhile, its handle wins and ours only
/// drops the reference count `dlopen` added.
pub fn open(path: &str) -> Result<Arc<Library>, String> {
    if let Some(lib) = get(path) {
        return Ok(lib);
    }
    with_system_allocator(|| {
        let lib = Arc::new(Library::open(path)?);
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, earlier)) = loaded.iter().find(|(p, _)| p == path) {
            return Ok(earlier.clone());
        }
        loaded.push((path.to_string(), lib.clone()));
        Ok(lib)
    })
}
