//! Manifest files as last parsed, reused while the open file says it has not changed (same
//! device, inode, size and modification time, from `fstat` on the file `fopen` opened): an
//! unchanged one costs an open, an `fstat` and a close instead of a read and a parse. Within an
//! API call that may reuse what earlier calls found (`watch`), a file whose watch saw no change
//! is not even opened: its identity is the one found before.
//!
//! A file changed twice within one tick of the file system's clock keeps its identity, so content
//! is remembered only once its modification time is two seconds in the past
//! (`FileIdentity::is_settled`); until then the file is read and parsed on every call.
//!
//! The caches live as long as the process, so they are allocated from the system, never from an
//! application's `VkAllocationCallbacks` (see host_alloc). They are ordered maps: a hash map's
//! random keys would cost the first creation a `getrandom` call for a few dozen paths.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::platform::host_alloc::with_system_allocator;
use crate::platform::looks::{self, FileLook, Parsed, Persist};
use crate::platform::stamps::Witness;
use crate::platform::{watch, FileIdentity, OpenFile, IDENTITIES};

/// What `parse` made of each file, by key (the path, and whatever else changes the parse), with
/// the identity of the file it was made from.
pub struct ParseCache<K, T> {
    entries: Mutex<Option<BTreeMap<K, Entry<T>>>>,
}

/// What keeps a parse for later processes: the witness of the file's stamp, its identity, the parse.
type Remember<'a, T> = &'a dyn Fn(Witness, FileIdentity, &T);

/// A parse and the identity of the file it was made from.
type Entry<T> = (FileIdentity, Arc<T>);

/// How a file changes, which decides when its identity tells a change.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Written in place or replaced, as people and packages do: its identity is trusted once
    /// settled (`FileIdentity::is_settled`), and an earlier process's look is used (`looks`).
    Manifest,
    /// Only ever replaced whole by a rename (see `get_replaced_whole`), and read afresh by each
    /// process (the driver cache: not copied into the looks file).
    ReplacedWhole,
}

impl<K: Ord + Clone, T> ParseCache<K, T> {
    pub const fn new() -> Self {
        ParseCache { entries: Mutex::new(None) }
    }

    /// `parse` of the file at `path`, from the cache when the file is unchanged, reading no more
    /// than `limit` bytes of the file (`parse` sees `limit` bytes of a larger one and can refuse
    /// it). `key` must be built from the system allocator's memory if it is to outlive an
    /// application's scope, so the cache clones it there.
    pub fn get_at_most(&self, key: &K, path: &str, limit: usize, parse: impl FnOnce(&[u8]) -> T) -> Result<Arc<T>, String> {
        self.read(key, path, limit, Kind::Manifest, |text| parse(&text), None)
    }

    /// `get_at_most` for a file that is only ever replaced whole by a rename, never written in
    /// place (the driver cache): each version is a new file, with its own inode and modification
    /// time, so it is remembered at once. A version mistaken for an earlier one could only give
    /// that earlier, whole content. `parse` is given the bytes read, to keep rather than copy.
    pub fn get_replaced_whole(&self, key: &K, path: &str, limit: usize, parse: impl FnOnce(Vec<u8>) -> T) -> Result<Arc<T>, String> {
        self.read(key, path, limit, Kind::ReplacedWhole, parse, None)
    }

    /// `get_at_most` (the whole file) of a manifest whose parse the looks file keeps (by `look`,
    /// with the file's identity and this build's digest) rather than its bytes: a process whose
    /// earlier ones parsed the file as it is now parses nothing (the manifests' JSON was some
    /// 70 us of a fresh process's first call with Debian's implicit layers and Mesa's drivers).
    pub fn get_remembered(&self, key: &K, path: &str, look: looks::Kind, parse: impl FnOnce(&[u8]) -> T) -> Result<Arc<T>, String>
    where
        T: Persist,
    {
        if let Some(Some(id)) = IDENTITIES.get(path) {
            if let Some(value) = self.cached(key, id) {
                return Ok(value);
            }
        }
        if let Some(Parsed { identity, value }) = watch::found_earlier::<Parsed<T>>(look, path) {
            IDENTITIES.put(path, &Some(identity));
            if let Some(cached) = self.cached(key, identity) {
                return Ok(cached);
            }
            return Ok(self.keep(key, identity, Kind::Manifest, || value));
        }
        let remember = |witness: Witness, identity: FileIdentity, value: &T| looks::found_parsed(look, path, witness, identity, value);
        self.read(key, path, usize::MAX, Kind::Manifest, |text| parse(&text), Some(&remember))
    }

    /// The parse of the file at `path`. A manifest read whole from the very file stamped is kept
    /// for later processes: by `remember` (its parse), or else its bytes.
    fn read(
        &self,
        key: &K,
        path: &str,
        limit: usize,
        kind: Kind,
        parse: impl FnOnce(Vec<u8>) -> T,
        remember: Option<Remember<T>>,
    ) -> Result<Arc<T>, String> {
        // A file the API call under way found unchanged since an earlier call is not opened again.
        if let Some(Some(id)) = IDENTITIES.get(path) {
            if let Some(value) = self.cached(key, id) {
                return Ok(value);
            }
        }
        // Nor one an earlier process read, unchanged since (see `looks`).
        if kind == Kind::Manifest && remember.is_none() {
            if let Some(look) = watch::found_earlier::<FileLook>(looks::Kind::File, path).filter(|look| look.bytes.len() <= limit) {
                IDENTITIES.put(path, &Some(look.identity));
                if let Some(value) = self.cached(key, look.identity) {
                    return Ok(value);
                }
                return Ok(self.keep(key, look.identity, kind, || parse(look.bytes)));
            }
        }
        let (watched, witness) = match watch::current() {
            Some(_) => watch::depend(path, watch::Dependency::Entry),
            None => (false, None),
        };
        let mut file = OpenFile::open(path).map_err(|e| e.to_string())?;
        let identity = file.identity().ok();
        if watched {
            IDENTITIES.put(path, &identity);
        }
        if let Some(value) = identity.and_then(|id| self.cached(key, id)) {
            return Ok(value);
        }
        let text = file.read(limit, identity.map(|id| id.size))?;
        drop(file);
        let Some(id) = identity else {
            return Ok(Arc::new(parse(text)));
        };
        let whole = text.len() as u64 == id.size && text.len() <= looks::MAX_FILE_BYTES;
        let witness = witness.filter(|w| kind == Kind::Manifest && whole && w.is_of(path, &id));
        if let (Some(witness), None) = (&witness, remember) {
            looks::found(looks::Kind::File, path, witness.clone(), &FileLook { identity: id, bytes: text.clone() });
        }
        let value = self.keep(key, id, kind, || parse(text));
        if let (Some(witness), Some(remember)) = (witness, remember) {
            remember(witness, id, &value);
        }
        Ok(value)
    }

    /// `make()` (a parse), remembered under `id` when that identity can be trusted to tell a
    /// change.
    fn keep(&self, key: &K, id: FileIdentity, kind: Kind, make: impl FnOnce() -> T) -> Arc<T> {
        if kind == Kind::Manifest && !id.is_settled() {
            return Arc::new(make());
        }
        let value = with_system_allocator(|| Arc::new(make()));
        if let Ok(mut guard) = self.entries.lock() {
            with_system_allocator(|| guard.get_or_insert_with(BTreeMap::new).insert(key.clone(), (id, value.clone())));
        }
        value
    }

    /// The parse of `key` if it was made from the file of identity `id`.
    fn cached(&self, key: &K, id: FileIdentity) -> Option<Arc<T>> {
        let guard = self.entries.lock().ok()?;
        let (cached_id, value) = guard.as_ref()?.get(key)?;
        (*cached_id == id).then(|| value.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::{Duration, SystemTime};

    #[test]
    fn only_settled_files_are_remembered() {
        let path = std::env::temp_dir().join(format!("loader-parse-cache-{}", std::process::id()));
        let set_modified = |when: SystemTime| std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
        let cache = ParseCache::<String, Vec<u8>>::new();
        let parses = Cell::new(0);
        let get = || {
            let key = "k".to_string();
            cache.get_at_most(&key, path.to_str().unwrap(), usize::MAX, |text| {
                parses.set(parses.get() + 1);
                text.to_vec()
            })
        };

        // Rewritten in place at the same size with its modification time put back: the same
        // identity, as a second write within one clock tick would leave it. Just written, so
        // not remembered: the new content is seen.
        std::fs::write(&path, b"aaaa").unwrap();
        let written = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(*get().unwrap(), b"aaaa");
        std::fs::write(&path, b"bbbb").unwrap();
        set_modified(written);
        assert_eq!(*get().unwrap(), b"bbbb");
        assert_eq!(parses.get(), 2);

        // Settled (modified a minute ago): parsed once, then remembered while unchanged.
        set_modified(SystemTime::now() - Duration::from_secs(60));
        assert_eq!(*get().unwrap(), b"bbbb");
        assert_eq!(*get().unwrap(), b"bbbb");
        assert_eq!(parses.get(), 3);
        std::fs::write(&path, b"cccc").unwrap();
        assert_eq!(*get().unwrap(), b"cccc", "a change gives the file a new modification time");

        std::fs::remove_file(&path).unwrap();
        assert!(get().is_err());
    }
}
