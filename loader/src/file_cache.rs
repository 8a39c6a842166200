//! Manifest files and manifest directories as last read, reused while `stat` says they have not
//! changed (same device, inode, size and modification time): every `vkCreateInstance` and
//! `vkEnumerateInstance*` call still looks at the file system, so a new, changed or removed
//! manifest is seen by the next call, but an unchanged one costs one `stat` instead of an open,
//! reads and a close (a directory: one `stat` instead of opendir, getdents and closedir).
//!
//! The limit of this: a file rewritten in place to exactly the same size within one tick of the
//! file system's timestamp clock (a few milliseconds on ext4) keeps its identity and is not
//! noticed; replacing a file (a new inode, as package managers do) always is.
//!
//! The caches live as long as the process, so they are allocated from the system, never from an
//! application's `VkAllocationCallbacks` (see host_alloc). They are ordered maps: a hash map's
//! random keys would cost the first creation a `getrandom` call for a few dozen paths.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::host_alloc::with_system_allocator;
use crate::platform::{self, FileIdentity};

type Cache<T> = Mutex<Option<BTreeMap<String, (FileIdentity, Arc<T>)>>>;

static FILES: Cache<Vec<u8>> = Mutex::new(None);
static DIRS: Cache<Vec<String>> = Mutex::new(None);

/// The cached value for `path` if its identity is still `identity`, else `load`'s, remembered.
fn cached<T, E>(cache: &Cache<T>, path: &str, identity: Option<FileIdentity>, load: impl FnOnce() -> Result<T, E>) -> Result<Arc<T>, E> {
    if let (Some(id), Ok(guard)) = (identity, cache.lock()) {
        if let Some((cached_id, value)) = guard.as_ref().and_then(|m| m.get(path)) {
            if *cached_id == id {
                return Ok(value.clone());
            }
        }
    }
    let value = with_system_allocator(|| load().map(Arc::new))?;
    if let (Some(id), Ok(mut guard)) = (identity, cache.lock()) {
        with_system_allocator(|| guard.get_or_insert_with(BTreeMap::new).insert(path.to_string(), (id, value.clone())));
    }
    Ok(value)
}

/// A file's whole content (see `platform::read_file`); `known` is its identity if the caller has
/// just stat'ed it.
pub fn read_file(path: &str, known: Option<FileIdentity>) -> Result<Arc<Vec<u8>>, String> {
    let identity = known.or_else(|| platform::file_identity(path));
    cached(&FILES, path, identity, || platform::read_file(path, identity.map(|id| id.size)))
}

/// A directory's entry names, sorted (see `platform::list_dir`); `None` if it cannot be opened.
pub fn list_dir(path: &str) -> Option<Arc<Vec<String>>> {
    // A directory that cannot be stat'ed cannot be opened either: one failed `stat`, no `opendir`.
    let identity = platform::file_identity(path)?;
    cached(&DIRS, path, Some(identity), || platform::list_dir(path).ok_or(())).ok()
}
