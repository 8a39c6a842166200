//! Files as last parsed, reused while a `stat` says the file has not changed (same device, inode,
//! size, modification and change times): an unchanged manifest costs one `stat` instead of an
//! open, a read and a parse, and within one API call not even that (see `call_files`: each path
//! is asked once per call). No descriptor is kept between calls, so an edit is seen by the very
//! next call. Where `stat` cannot tell (it fails, or an interposer serves the path to `fopen`
//! only), the file is opened and asked with `fstat`, as before.
//!
//! A file changed twice within one tick of the file system's clock keeps its identity, so content
//! is remembered across calls only once its modification time is two seconds in the past
//! (`FileIdentity::is_settled`); until then the file is read and parsed once per call, its parse
//! reused only by the call that made it.
//!
//! The caches live as long as the process, so they are allocated from the system, never from an
//! application's `VkAllocationCallbacks` (see host_alloc). They are ordered maps: a hash map's
//! random keys would cost the first creation a `getrandom` call for a few dozen paths.

use std::any::Any;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::marker::PhantomData;
use std::os::unix::ffi::OsStrExt;
use std::sync::{Arc, Mutex};

use crate::platform::call_files;
use crate::platform::host_alloc::with_system_allocator;
use crate::platform::{FileIdentity, OpenFile};

/// The largest manifest read: the Khronos validation layer's, the largest there is, is some
/// 200 KiB. A larger file is refused rather than read into the host's memory.
pub const MAX_MANIFEST_BYTES: usize = 16 << 20;

/// What `parse` made of each file, by key (the path, and whatever else changes the parse), with
/// the identity of the file it was made from. Typed outside, untyped inside: the map, the reads
/// and the checks are compiled once for every cache ([`Untyped`]), not once per parse's type.
pub struct ParseCache<T> {
    untyped: Untyped,
    parses: PhantomData<fn() -> T>,
}

/// A parse of any type, as [`Untyped`] keeps it.
type AnyParse = Arc<dyn Any + Send + Sync>;

/// What a [`ParseCache`] does, for parses of any type.
struct Untyped {
    entries: Mutex<Option<BTreeMap<String, Entry>>>,
}

/// A parse, the identity of the file it was made from, and the API call it may serve: 0 for
/// every call (a settled file), else only the call that read the file (see `call_files`).
type Entry = (FileIdentity, AnyParse, u64);

/// How much of a file is read.
#[derive(Clone, Copy)]
enum Limit {
    /// A larger file is refused whole.
    Refuse(usize),
    /// The first bytes of a larger file are read.
    Cut(usize),
}

/// How a file changes, which decides when its identity tells a change.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Written in place or replaced, as people and packages do: its identity is trusted once
    /// settled (`FileIdentity::is_settled`).
    Manifest,
    /// Only ever replaced whole by a rename (see `get_replaced_whole`).
    ReplacedWhole,
}

impl<T: Send + Sync + 'static> ParseCache<T> {
    pub const fn new() -> Self {
        ParseCache { untyped: Untyped { entries: Mutex::new(None) }, parses: PhantomData }
    }

    /// `parse` of the manifest at `path`, from the cache when the file is unchanged; a file
    /// larger than [`MAX_MANIFEST_BYTES`] is refused, saying so.
    pub fn get_manifest(&self, key: &str, path: impl AsRef<OsStr>, parse: impl FnOnce(&[u8]) -> T) -> Result<Arc<T>, String> {
        self.read(key, path.as_ref(), Limit::Refuse(MAX_MANIFEST_BYTES), Kind::Manifest, |text| parse(&text))
    }

    /// `parse` of the file at `path`, from the cache when the file is unchanged, reading no more
    /// than `limit` bytes of the file (`parse` sees `limit` bytes of a larger one and can refuse
    /// it). The cache keeps its own copy of `key`, made from the system allocator's memory.
    pub fn get_at_most(&self, key: &str, path: impl AsRef<OsStr>, limit: usize, parse: impl FnOnce(&[u8]) -> T) -> Result<Arc<T>, String> {
        self.read(key, path.as_ref(), Limit::Cut(limit), Kind::Manifest, |text| parse(&text))
    }

    /// `get_at_most` for a file that is only ever replaced whole by a rename, never written in
    /// place (the driver cache): each version is a new file, with its own inode and modification
    /// time, so it is remembered at once. A version mistaken for an earlier one could only give
    /// that earlier, whole content. `parse` is given the bytes read, to keep rather than copy.
    pub fn get_replaced_whole(&self, key: &str, path: impl AsRef<OsStr>, limit: usize, parse: impl FnOnce(Vec<u8>) -> T) -> Result<Arc<T>, String> {
        self.read(key, path.as_ref(), Limit::Cut(limit), Kind::ReplacedWhole, parse)
    }

    /// The untyped read, its parse given back as a `T` (which every parse of this cache is).
    fn read(&self, key: &str, path: &OsStr, limit: Limit, kind: Kind, parse: impl FnOnce(Vec<u8>) -> T) -> Result<Arc<T>, String> {
        // Called once at most; an `FnMut` (not a boxed `FnOnce`) so that a hit allocates nothing.
        let mut parse = Some(parse);
        let mut parse = |text: Vec<u8>| parse.take().map(|parse| Arc::new(parse(text)) as AnyParse);
        let any = self.untyped.read(key, path, limit, kind, &mut parse)?;
        any.downcast::<T>().map_err(|_| "a parse of another type in this cache".to_string())
    }
}

impl Untyped {
    /// The parse of the file at `path` (bytes: a file name need not be UTF-8).
    fn read(&self, key: &str, path: &OsStr, limit: Limit, kind: Kind, parse: &mut dyn FnMut(Vec<u8>) -> Option<AnyParse>) -> Result<AnyParse, String> {
        let call = call_files::current();
        // The file unchanged since its parse: not opened.
        if let Ok(st) = crate::platform::stat_once(path.as_bytes()) {
            if let Some(value) = self.cached(key, FileIdentity::of(&st), call) {
                return Ok(value);
            }
        }
        let mut file = OpenFile::open(path).map_err(|e| e.to_string())?;
        #[cfg(test)]
        tests::OPENS.with(|opens| opens.set(opens.get() + 1));
        let identity = file.identity().ok();
        if let Some(value) = identity.and_then(|id| self.cached(key, id, call)) {
            return Ok(value);
        }
        let limit = match limit {
            Limit::Refuse(most) if identity.is_some_and(|id| id.size > most as u64) => return Err(format!("larger than {most} bytes: not read")),
            Limit::Refuse(most) | Limit::Cut(most) => most,
        };
        let text = file.read(limit, identity.map(|id| id.size))?;
        drop(file);
        #[cfg(test)]
        tests::READS.with(|reads| reads.set(reads.get() + 1));
        let parsed = match identity {
            Some(id) => self.keep(key, id, kind, call, || parse(text)),
            None => parse(text),
        };
        parsed.ok_or_else(|| "parsed twice".to_string())
    }

    /// `make()` (a parse), remembered under `id` for every call when that identity can be trusted
    /// to tell a change, else for the API call `call` only (none outside a call).
    fn keep(&self, key: &str, id: FileIdentity, kind: Kind, call: u64, make: impl FnOnce() -> Option<AnyParse>) -> Option<AnyParse> {
        let only_in = match kind == Kind::ReplacedWhole || id.is_settled() {
            true => 0,
            false if call == 0 => return make(),
            false => call,
        };
        let value = with_system_allocator(make)?;
        if let Ok(mut guard) = self.entries.lock() {
            with_system_allocator(|| guard.get_or_insert_with(BTreeMap::new).insert(key.to_string(), (id, value.clone(), only_in)));
        }
        Some(value)
    }

    /// The parse of `key` if it was made from the file of identity `id` and may serve the API
    /// call `call`.
    fn cached(&self, key: &str, id: FileIdentity, call: u64) -> Option<AnyParse> {
        let guard = self.entries.lock().ok()?;
        let (cached_id, value, only_in) = guard.as_ref()?.get(key)?;
        (*cached_id == id && (*only_in == 0 || *only_in == call)).then(|| value.clone())
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::{Duration, SystemTime};

    thread_local! {
        /// Files this thread's caches opened, and read.
        pub(super) static OPENS: Cell<usize> = const { Cell::new(0) };
        pub(super) static READS: Cell<usize> = const { Cell::new(0) };
    }

    /// (opens, reads) that `f` made on this thread.
    fn counted(f: impl FnOnce()) -> (usize, usize) {
        let before = (OPENS.with(Cell::get), READS.with(Cell::get));
        f();
        (OPENS.with(Cell::get) - before.0, READS.with(Cell::get) - before.1)
    }

    #[test]
    fn a_settled_file_unchanged_is_not_opened_again_and_a_new_one_is_read_once_per_call() {
        let path = std::env::temp_dir().join(format!("loader-parse-cache-calls-{}", std::process::id()));
        let path = path.to_str().unwrap().to_string();
        let cache = ParseCache::<Vec<u8>>::new();
        let get = || cache.get_manifest("k", &path, |text| text.to_vec()).unwrap();

        // Just written: read again by each call, but once within one.
        std::fs::write(&path, b"new").unwrap();
        for _ in 0..2 {
            let _call = call_files::OneCall::enter();
            assert_eq!(counted(|| assert_eq!(*get(), b"new")), (1, 1));
            assert_eq!(counted(|| assert_eq!(*get(), b"new")), (0, 0), "once per call");
        }
        assert_eq!(counted(|| drop((get(), get()))), (2, 2), "outside a call, each read reads");

        // Settled: read once, then neither read nor opened while `stat` says it is unchanged.
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(an_hour_ago).unwrap();
        assert_eq!(counted(|| drop(get())), (1, 1));
        for _ in 0..2 {
            let _call = call_files::OneCall::enter();
            assert_eq!(counted(|| drop((get(), get()))), (0, 0));
        }
        assert_eq!(counted(|| drop(get())), (0, 0));

        // Changed: the next call reads it.
        std::fs::write(&path, b"changed").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(an_hour_ago).unwrap();
        let _call = call_files::OneCall::enter();
        assert_eq!(counted(|| assert_eq!(*get(), b"changed")), (1, 1));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn only_settled_files_are_remembered() {
        let path = std::env::temp_dir().join(format!("loader-parse-cache-{}", std::process::id()));
        let set_modified = |when: SystemTime| std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
        let cache = ParseCache::<Vec<u8>>::new();
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

    #[test]
    fn a_manifest_too_large_is_refused_and_what_is_no_file_is_never_opened() {
        let dir = std::env::temp_dir().join(format!("loader-parse-cache-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let cache = ParseCache::<usize>::new();
        let key = "k".to_string();
        let large = dir.join("large.json");
        std::fs::File::create(&large).unwrap().set_len(MAX_MANIFEST_BYTES as u64 + 1).unwrap();
        let refused = cache.get_manifest(&key, large.to_str().unwrap(), |text| text.len()).unwrap_err();
        assert!(refused.contains("larger than"), "{refused}");
        // A FIFO would keep an open for reading waiting for a writer: refused before any open.
        let fifo = dir.join("fifo.json");
        let c_fifo = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
        let refused = cache.get_manifest(&key, fifo.to_str().unwrap(), |text| text.len()).unwrap_err();
        assert!(refused.contains("FIFO"), "{refused}");
        let refused = cache.get_manifest(&key, dir.to_str().unwrap(), |text| text.len()).unwrap_err();
        assert!(refused.contains("directory"), "{refused}");
        let refused = cache.get_manifest(&key, "/dev/zero", |text| text.len()).unwrap_err();
        assert!(refused.contains("character device"), "{refused}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
