//! Whether anything the loader looked at may have changed since an earlier API call: what lets a
//! call reuse what an earlier one found (a directory's entries, a file's identity, a parsed
//! manifest, the settings, the layer catalog) instead of asking the file system again.
//!
//! Every `vkEnumerateInstance*` and `vkCreateInstance` call must see the manifests, settings and
//! environment of the moment, as the Khronos loader does by reading them all again each time
//! (some thirty system calls per call, most of what such a call costs). Here, the files and
//! directories a call depends on are watched with inotify, and the next call reuses what was
//! found while nothing has changed. "Nothing has changed" is decided at the start of each API call
//! ([`Scope::enter`]) and holds for the whole call:
//!
//! - **files**: no inotify event on a watched directory or file that concerns a name the loader
//!   looked at. For each path looked at, every directory from `/` down to it is watched for that
//!   one name (created, removed, renamed, its attributes changed), so a file or directory
//!   appearing where the loader found none is seen as well as one changing; a directory whose
//!   entries were listed is watched for any change; a file read, for writes and attribute changes
//!   of its own (which also covers the file a symbolic link points to). Events are queued by the
//!   kernel as each change is made, so a change made before a call starts is always seen by it.
//!   A lost event (the queue overflowed) counts as a change.
//! - **environment**: every `NAME=VALUE` entry as it was, in the same order (a byte comparison).
//! - **libraries**: no library loaded into or unloaded from the process (`dl_iterate_phdr`'s
//!   counters): whether a driver's library is loaded decides whether it is asked live.
//! - **process**: the same process (a forked child gets its own watches: the inotify descriptor
//!   it inherited is shared with its parent, who may read the events first).
//!
//! Anything that cannot be watched makes what was computed from it unrememberable, and the next
//! call looks again: relative paths (the working directory may change), `/proc`, `/sys` and
//! `/dev` (no inotify events), network and FUSE file systems (changes made elsewhere send no
//! event), a watch the kernel refuses (the per-user limit). And when a library in the process
//! interposes the file functions the loader calls (`fopen`, `opendir`, `access`, `stat`...), as
//! the Khronos loader's test framework does to redirect paths, the watches would be on other files
//! than those the interposer serves: then nothing is reused, and every call asks the file system
//! as before. So does every call with `VK_LOADER_WATCH=off`; with `VK_LOADER_WATCH=stamps`, no
//! watch is ever set (the stamps below tell changes for the process's whole life).
//!
//! The watches live as long as the process (one inotify descriptor, close-on-exec, and one watch
//! per directory or file looked at). They are set once a process has made
//! [`CALLS_BEFORE_WATCHING`] API calls: setting them costs what several calls save, and most
//! processes make few. Until then (and for good where the kernel refuses an inotify descriptor),
//! each call `stat`s again every path the calls before it looked at (`platform::stamps`): a
//! system call per path instead of none, still a fraction of looking again, and nothing to set up.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use crate::platform::host_alloc::with_system_allocator;
use crate::platform::looks::{self, Kind, Persist};
use crate::platform::stamps::{Ledger, Witness};

/// What a directory on the way to a path, or a listed one, reports: names appearing, going or
/// changing their attributes (permissions), and the directory itself going. Not writes to the
/// files in it (a file read is watched itself), which a busy directory sends without pause.
const DIRECTORY_EVENTS: u32 =
    libc::IN_CREATE | libc::IN_DELETE | libc::IN_MOVED_FROM | libc::IN_MOVED_TO | libc::IN_ATTRIB | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF;
/// What a watched file reports about itself (through a symbolic link: the file it points to).
const FILE_EVENTS: u32 = libc::IN_MODIFY | libc::IN_ATTRIB | libc::IN_CLOSE_WRITE | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF;

/// File systems whose changes may send no inotify event: network and FUSE file systems (a change
/// made on another machine or by the FUSE server), and the kernel's own (`statfs` magic numbers).
const UNWATCHABLE_FILE_SYSTEMS: &[i64] = &[
    0x6969,               // NFS
    0x517b,               // SMB
    0xff53_4d42_u32 as i64, // CIFS
    0xfe53_4d42_u32 as i64, // SMB2
    0x6573_5546,          // FUSE
    0x00c3_6400,          // Ceph
    0x5346_414f,          // AFS
    0x6b41_4653,          // kAFS
    0x0102_1997,          // 9P
    0x7363_6673,          // SecurityFS
    0x9fa0,               // proc
    0x6265_6572,          // sysfs
    0x0bd0_0bd0,          // Lustre
    0x0116_1970,          // GFS2
    0x7461_636f,          // OCFS2
];

/// What a call depends on at a path.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dependency {
    /// Whether the file or directory is there, and its content and attributes.
    Entry,
    /// The names in the directory (and whether it is there).
    Listing,
}

/// What a watch descriptor is watched for.
enum Interest {
    /// Any event: a listed directory, or a file read.
    Everything,
    /// Events naming one of these entries of the directory.
    Names(BTreeSet<Vec<u8>>),
}

/// The process's watches and the state the last check found.
struct Watcher {
    /// The inotify descriptor; -1 while changes are told by stamps.
    fd: c_int,
    /// The stamps of the paths looked at, while the process has made few calls (see
    /// [`CALLS_BEFORE_WATCHING`]); `None` once they are watched.
    stamps: Option<Ledger>,
    /// The kernel gave no inotify descriptor (the user's limit reached): stamps for good.
    inotify_refused: bool,
    pid: libc::pid_t,
    /// `environ`'s entries, each followed by a NUL, as the last check found them.
    environment: Vec<u8>,
    /// `dl_iterate_phdr`'s (adds, subs) at the last check.
    libraries: (u64, u64),
    /// Advanced whenever a check finds a change: what was found under an older one is stale.
    generation: u64,
    interest: BTreeMap<c_int, Interest>,
    /// Each path watched: its watch descriptor, the events asked, and whether its file system
    /// sends them (see [`UNWATCHABLE_FILE_SYSTEMS`]).
    watched: BTreeMap<String, (c_int, u32, bool)>,
}

static WATCHER: Mutex<Option<Watcher>> = Mutex::new(None);

/// Closes the inotify descriptor when the library is unloaded (`dlclose`, or the process's end):
/// a library loaded again would open its own, and each open descriptor counts against the
/// user's inotify instances (128 by default, shared by every process of the user).
#[used]
#[link_section = ".fini_array"]
static CLOSE_WHEN_UNLOADED: extern "C" fn() = close_when_unloaded;

extern "C" fn close_when_unloaded() {
    // try_lock: another thread may be inside a call while the process ends.
    if let Ok(mut guard) = WATCHER.try_lock() {
        // Dropped: its descriptor closed. What it holds is freed as the library goes anyway.
        drop(guard.take());
    }
}

/// API calls checked by stamps so far (see [`check`]).
static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The calls a process makes before its watches are set. Setting them costs a system call or two
/// per directory and file looked at (some 2 ms with Debian's Mesa drivers and layers), where
/// checking the stamps costs a `stat` per path per call (some 50 us there). Renting before buying:
/// a process that makes few calls (most make four or five) never pays for the watches.
const CALLS_BEFORE_WATCHING: u32 = 8;

thread_local! {
    /// The generation this thread's API call runs under, when it may reuse what earlier ones found.
    static CURRENT: Cell<Option<u64>> = const { Cell::new(None) };
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Looks at the file system that could not be watched, on this thread (see [`computed`]).
    static UNWATCHED: Cell<u64> = const { Cell::new(0) };
}

/// Why nothing is reused in this process, if so (decided once).
pub fn disabled() -> Option<&'static str> {
    static WHY: OnceLock<Option<&'static str>> = OnceLock::new();
    *WHY.get_or_init(|| {
        if matches!(crate::platform::plain_env("VK_LOADER_WATCH").as_deref(), Some("off" | "0" | "false" | "no")) {
            return Some("VK_LOADER_WATCH is off");
        }
        if file_functions_interposed() {
            return Some("a library interposes the file functions: each call reads the file system");
        }
        None
    })
}

/// Whether changes are told by stamps for the whole process (`VK_LOADER_WATCH=stamps`), never
/// by watches: where inotify is not wanted, and for the tests of the stamps.
fn stamps_only() -> bool {
    static STAMPS: OnceLock<bool> = OnceLock::new();
    *STAMPS.get_or_init(|| crate::platform::plain_env("VK_LOADER_WATCH").as_deref() == Some("stamps"))
}

/// While alive, the thread's API call runs under one generation: it may reuse what calls of the
/// same generation found. Only the outermost scope on a thread checks.
pub struct Scope {
    outermost: bool,
}

impl Scope {
    pub fn enter() -> Scope {
        let outermost = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get() == 1
        });
        if outermost {
            CURRENT.with(|c| c.set(check()));
        }
        Scope { outermost }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
        if self.outermost {
            CURRENT.with(|c| c.set(None));
        }
    }
}

/// The generation of the API call under way on this thread, if it may reuse earlier findings.
pub fn current() -> Option<u64> {
    CURRENT.with(Cell::get)
}

/// The rest of the API call under way looks at the file system again (it is changing it), and
/// nothing being computed now is remembered.
pub fn looked_again() {
    CURRENT.with(|c| c.set(None));
    UNWATCHED.with(|u| u.set(u.get() + 1));
}

/// `f()`, and whether everything it looked at was watched (what it made may then be reused while
/// the generation lasts).
pub fn computed<T>(f: impl FnOnce() -> T) -> (T, bool) {
    let before = UNWATCHED.with(Cell::get);
    let value = f();
    (value, UNWATCHED.with(Cell::get) == before)
}

/// Watches `path` for what the call depends on, before the call looks at it; `false` (and the
/// call's findings are not to be reused) when it cannot be watched or no API call is under way.
/// While changes are told by stamps, also the stamp that stands for `path`: what the call finds
/// there may be kept for later processes under it (`looks`).
pub fn depend(path: &str, dependency: Dependency) -> (bool, Option<Witness>) {
    let (watched, witness) = match current() {
        Some(_) => with_system_allocator(|| register(path, dependency)),
        None => (false, None),
    };
    if !watched {
        UNWATCHED.with(|u| u.set(u.get() + 1));
    }
    (watched, witness)
}

/// What an earlier process found by `kind` at `path` (see `looks`), when the stamp that stood
/// for it then is the path's stamp now: it then stands for it in this call too (as [`depend`]'s
/// would), and nothing need be looked at. Only while changes are told by stamps.
pub fn found_earlier<T: Persist>(kind: Kind, path: &str) -> Option<T> {
    current()?;
    let (witness, value) = looks::earlier::<T>(kind, path)?;
    let mut guard = WATCHER.lock().ok()?;
    let ledger = guard.as_mut()?.stamps.as_mut()?;
    let holds = with_system_allocator(|| ledger.confirm(witness));
    if holds {
        looks::answered(kind, path);
    }
    holds.then_some(value)
}

/// [`found_earlier`] for a decision made once and kept by nothing the generation guards (how a
/// library is bound: see `Library::open`): the earlier process's stamp confirmed by a `stat` of
/// the path now, whether or not an API call is under way and whether changes are told by stamps
/// or by inotify (after some calls, a process watches: a driver loaded lazily, at its first real
/// use, was bound whole before).
pub fn found_earlier_for_now<T: Persist>(kind: Kind, path: &str) -> Option<T> {
    // Within a call told by stamps, the ledger confirms it (its `stat`, and its file system's, may
    // have been made already).
    let ledger = current().is_some() && WATCHER.lock().is_ok_and(|w| w.as_ref().is_some_and(|w| w.stamps.is_some()));
    if ledger {
        return found_earlier(kind, path);
    }
    if disabled().is_some() {
        return None;
    }
    let (witness, value) = looks::earlier::<T>(kind, path)?;
    let holds = with_system_allocator(|| crate::platform::stamps::holds_now(&witness));
    if holds {
        looks::answered(kind, path);
    }
    holds.then_some(value)
}

/// A value per path, reused while the generation it was found under lasts. Process-lifetime:
/// allocated from the system.
pub struct Memo<T> {
    entries: Mutex<(u64, BTreeMap<String, T>)>,
}

impl<T: Clone> Memo<T> {
    pub const fn new() -> Self {
        Memo { entries: Mutex::new((0, BTreeMap::new())) }
    }

    /// What was found at `path` under the current generation, if anything.
    pub fn get(&self, path: &str) -> Option<T> {
        let generation = current()?;
        let entries = self.entries.lock().ok()?;
        (entries.0 == generation).then(|| entries.1.get(path).cloned()).flatten()
    }

    /// `look()` at `path` (after watching it for `dependency`), from what the current generation
    /// found there already if it did, else from what an earlier process found by `kind` where
    /// that still holds; what is found is kept for later processes (see `looks`).
    pub fn get_or_remembered(&self, path: &str, dependency: Dependency, kind: Kind, look: impl FnOnce() -> T) -> T
    where
        T: Persist,
    {
        if current().is_none() {
            return look();
        }
        if let Some(found) = self.get(path) {
            return found;
        }
        if let Some(found) = found_earlier::<T>(kind, path) {
            self.put(path, &found);
            return found;
        }
        let (found, witness) = self.look_and_put(path, dependency, look);
        if let Some(witness) = witness {
            looks::found(kind, path, witness, &found);
        }
        found
    }

    /// `look()` at `path` after watching it, remembered when watched; with the stamp that stood
    /// for it, if any.
    fn look_and_put(&self, path: &str, dependency: Dependency, look: impl FnOnce() -> T) -> (T, Option<Witness>) {
        let (watched, witness) = depend(path, dependency);
        let found = look();
        if watched {
            self.put(path, &found);
        }
        (found, witness)
    }

    /// Remembers what was found at `path`, watched already (see [`depend`]): a copy made from
    /// the system's memory (the caller's may be an application's allocator's).
    pub fn put(&self, path: &str, found: &T) {
        let Some(generation) = current() else { return };
        with_system_allocator(|| {
            if let Ok(mut entries) = self.entries.lock() {
                if entries.0 != generation {
                    *entries = (generation, BTreeMap::new());
                }
                entries.1.insert(path.to_string(), found.clone());
            }
        });
    }
}

/// A value computed from the file system and the environment as a whole (the settings, the layer
/// catalog), one per key, reused while the generation it was computed under lasts.
pub struct Remembered<K, T> {
    values: Mutex<Vec<(u64, K, T)>>,
}

impl<K: PartialEq, T: Clone> Remembered<K, T> {
    pub const fn new() -> Self {
        Remembered { values: Mutex::new(Vec::new()) }
    }

    /// `compute()` for `key`, or what the current generation computed for it already.
    pub fn get_or(&self, key: K, compute: impl FnOnce() -> T) -> T {
        let Some(generation) = current() else { return compute() };
        if let Ok(values) = self.values.lock() {
            if let Some((_, _, v)) = values.iter().find(|(g, k, _)| *g == generation && *k == key) {
                return v.clone();
            }
        }
        let (value, watched) = computed(compute);
        if watched {
            with_system_allocator(|| {
                if let Ok(mut values) = self.values.lock() {
                    values.retain(|(g, k, _)| *g == generation && *k != key);
                    values.push((generation, key, value.clone()));
                }
            });
        }
        value
    }
}

/// The generation after looking for changes since the last check; `None` when nothing may be
/// reused in this process.
fn check() -> Option<u64> {
    if disabled().is_some() {
        return None;
    }
    let mut guard = WATCHER.lock().ok()?;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let mut first_generation = 1;
    if guard.as_ref().is_some_and(|w| w.pid != pid) {
        // A forked child: its own descriptor (dropping the inherited one closes it here only),
        // and a generation the parent's findings, inherited in memory, do not have.
        if let Some(old) = guard.take() {
            first_generation = old.generation + 1;
        }
    }
    let watcher = match guard.as_mut() {
        Some(w) => w,
        None => guard.insert(with_system_allocator(|| Watcher::new(pid, first_generation))),
    };
    // Watching costs what some CALLS_BEFORE_WATCHING calls save (see there): a process pays for it
    // once it has made that many calls.
    let stamping = watcher.stamps.is_some() && !watcher.inotify_refused && !stamps_only();
    if stamping && CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= CALLS_BEFORE_WATCHING {
        watcher.start_watching();
    }
    let mut changed = match watcher.stamps.as_mut() {
        Some(ledger) => with_system_allocator(|| ledger.changed()),
        None => watcher.drain_events(),
    };
    changed |= with_system_allocator(|| watcher.environment_changed());
    let libraries = library_counters();
    changed |= libraries != watcher.libraries;
    watcher.libraries = libraries;
    if changed {
        watcher.generation += 1;
    }
    Some(watcher.generation)
}

impl Drop for Watcher {
    fn drop(&mut self) {
        if self.fd >= 0 {
            // SAFETY: the descriptor this watcher opened (or inherited, in a forked child), closed once.
            unsafe { libc::close(self.fd) };
        }
    }
}

impl Watcher {
    /// A watcher that tells changes by stamps.
    fn new(pid: libc::pid_t, generation: u64) -> Watcher {
        let mut watcher = Watcher {
            fd: -1,
            stamps: Some(Ledger::default()),
            inotify_refused: false,
            pid,
            environment: Vec::new(),
            libraries: library_counters(),
            // At least 1, above every Memo's initial 0: nothing is taken as found before the
            // first check.
            generation,
            interest: BTreeMap::new(),
            watched: BTreeMap::new(),
        };
        watcher.environment_changed();
        watcher
    }

    /// From stamps to watches: what was found under the stamps is not watched, so it is found
    /// again (a new generation) and watched as it is. Where the kernel gives no inotify
    /// descriptor (the user's limit reached), the stamps stay, and it is not asked again.
    fn start_watching(&mut self) {
        // SAFETY: inotify_init1 has no preconditions.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            self.inotify_refused = true;
            return;
        }
        self.fd = fd;
        self.stamps = None;
        self.generation += 1;
    }

    /// Reads every queued event; whether one concerns something looked at.
    fn drain_events(&mut self) -> bool {
        // Aligned for inotify_event; room for many events per read.
        let mut buf = [0u64; 512];
        let mut changed = false;
        // Bounded: a file written without pause in a watched directory (a log beside a manifest)
        // queues events as fast as they are read. Events left unread count as a change.
        for _ in 0..8 {
            // SAFETY: read into a buffer of the size given.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr() as *mut c_void, std::mem::size_of_val(&buf)) };
            if n <= 0 {
                // EAGAIN: nothing more. Any other error: the watches cannot be trusted.
                if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EAGAIN) {
                    changed = true;
                }
                return changed;
            }
            let bytes = &buf_bytes(&buf)[..n as usize];
            let mut offset = 0;
            while offset + std::mem::size_of::<libc::inotify_event>() <= bytes.len() {
                // SAFETY: the kernel writes whole events, each a header then `len` bytes of name.
                let event: libc::inotify_event = unsafe { std::ptr::read_unaligned(bytes[offset..].as_ptr() as *const libc::inotify_event) };
                let name_start = offset + std::mem::size_of::<libc::inotify_event>();
                let name_end = (name_start + event.len as usize).min(bytes.len());
                let name = &bytes[name_start..name_end];
                let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                changed |= self.concerns(event.wd, event.mask, name);
                offset = name_end;
            }
        }
        true
    }

    /// Whether an event concerns something looked at; forgets watches the kernel removed.
    fn concerns(&mut self, wd: c_int, mask: u32, name: &[u8]) -> bool {
        if mask & libc::IN_Q_OVERFLOW != 0 {
            return true;
        }
        if mask & libc::IN_IGNORED != 0 {
            // The watched file or directory is gone (or its file system unmounted).
            self.interest.remove(&wd);
            self.watched.retain(|_, (w, _, _)| *w != wd);
            return true;
        }
        match self.interest.get(&wd) {
            None => false,
            Some(Interest::Everything) => true,
            Some(Interest::Names(names)) => name.is_empty() || names.contains(name),
        }
    }

    /// Whether `environ` differs from the last snapshot (which is then taken again).
    fn environment_changed(&mut self) -> bool {
        let mut at = 0;
        let mut same = true;
        let old = &self.environment;
        crate::platform::for_each_environment_entry(|entry| {
            if same {
                let end = at + entry.len();
                same = end < old.len() && &old[at..end] == entry && old[end] == 0;
                at = end + 1;
            }
        });
        if same && at == old.len() {
            return false;
        }
        let mut snapshot = Vec::with_capacity(old.len().max(1024));
        crate::platform::for_each_environment_entry(|entry| {
            snapshot.extend_from_slice(entry);
            snapshot.push(0);
        });
        self.environment = snapshot;
        true
    }

    /// Watches `path` (`name`: for events about that entry of the directory only). A path
    /// watched already for these events costs no system call.
    fn add(&mut self, path: &str, name: Option<&str>, mask: u32) -> Result<(), c_int> {
        let (wd, local) = match self.watched.get(path) {
            Some(&(wd, asked, local)) if asked & mask == mask => (wd, local),
            known => {
                let known = known.copied();
                let c_path = CString::new(path).map_err(|_| libc::EINVAL)?;
                // SAFETY: a NUL-terminated path; IN_MASK_ADD keeps what earlier registrations
                // asked of the same inode.
                let wd = unsafe { libc::inotify_add_watch(self.fd, c_path.as_ptr(), mask | libc::IN_MASK_ADD) };
                if wd < 0 {
                    return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
                }
                let local = known.map_or_else(|| watchable_file_system(&c_path), |(_, _, local)| local);
                let asked = known.map_or(0, |(_, asked, _)| asked) | mask;
                self.watched.insert(path.to_string(), (wd, asked, local));
                (wd, local)
            }
        };
        if !local {
            return Err(libc::EREMOTE);
        }
        let interest = self.interest.entry(wd).or_insert_with(|| Interest::Names(BTreeSet::new()));
        match (name, interest) {
            (None, interest) => *interest = Interest::Everything,
            (Some(_), Interest::Everything) => {}
            (Some(name), Interest::Names(names)) => {
                if !names.contains(name.as_bytes()) {
                    names.insert(name.as_bytes().to_vec());
                }
            }
        }
        Ok(())
    }
}

/// [`Watcher::register`] on the process's watcher, with the stamp that stands for `path` while
/// changes are told by stamps.
fn register(path: &str, dependency: Dependency) -> (bool, Option<Witness>) {
    let Ok(mut guard) = WATCHER.lock() else { return (false, None) };
    match guard.as_mut() {
        None => (false, None),
        // A stamp tells both what a file and what a directory's listing depends on.
        Some(Watcher { stamps: Some(ledger), .. }) => {
            let witness = ledger.record(path);
            (witness.is_some(), witness)
        }
        Some(watcher) => (watcher.register(path, dependency), None),
    }
}

impl Watcher {
    /// Watches every directory from `/` down to `path` for the next name on the way, then `path`
    /// itself; `false` when it cannot be watched.
    fn register(&mut self, path: &str, dependency: Dependency) -> bool {
        if !path.starts_with('/') || ["/proc/", "/sys/", "/dev/"].iter().any(|p| path.starts_with(p)) {
            return false;
        }
        let watcher = self;
        let mut dir = String::from("/");
        for name in path.split('/').filter(|n| !n.is_empty() && *n != ".") {
            if name == ".." {
                // The name's directory is not the lexical parent when a symbolic link is on the way.
                return false;
            }
            match watcher.add(&dir, Some(name), DIRECTORY_EVENTS) {
                Ok(()) => {}
                // Not there: its parent, watched for its name, tells when it appears.
                Err(libc::ENOENT | libc::ENOTDIR) => return true,
                Err(_) => return false,
            }
            if !dir.ends_with('/') {
                dir.push('/');
            }
            dir.push_str(name);
        }
        let mask = match dependency {
            Dependency::Entry => FILE_EVENTS,
            Dependency::Listing => DIRECTORY_EVENTS,
        };
        match watcher.add(&dir, None, mask) {
            Ok(()) | Err(libc::ENOENT | libc::ENOTDIR) => true,
            Err(_) => false,
        }
    }
}

pub(super) fn watchable_file_system(path: &CStr) -> bool {
    // SAFETY: statfs fills a zeroed structure for a NUL-terminated path.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(path.as_ptr(), &mut fs) } != 0 {
        return false;
    }
    // `f_type`'s width differs between architectures.
    #[allow(clippy::unnecessary_cast)]
    let kind = fs.f_type as i64 & 0xffff_ffff;
    !UNWATCHABLE_FILE_SYSTEMS.contains(&kind)
}

fn buf_bytes(buf: &[u64; 512]) -> &[u8] {
    // SAFETY: a u64 array is readable as bytes.
    unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, std::mem::size_of_val(buf)) }
}

/// glibc's `struct dl_phdr_info` up to the load and unload counters (the libc crate stops before
/// them).
#[repr(C)]
struct PhdrInfo {
    addr: usize,
    name: *const c_char,
    phdr: *const c_void,
    phnum: u16,
    adds: u64,
    subs: u64,
}

/// How many libraries the process has loaded and unloaded so far (`dl_iterate_phdr`'s counters,
/// read from its first object without walking the others).
fn library_counters() -> (u64, u64) {
    unsafe extern "C" fn first(info: *mut libc::dl_phdr_info, size: usize, data: *mut c_void) -> c_int {
        if size >= std::mem::size_of::<PhdrInfo>() {
            // SAFETY: glibc passes a structure at least `size` bytes long; `data` is our tuple.
            let info = &*(info as *const PhdrInfo);
            *(data as *mut (u64, u64)) = (info.adds, info.subs);
        }
        1
    }
    let mut counters = (0u64, 0u64);
    // SAFETY: the callback only reads the structure it is given and writes our tuple.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut counters as *mut (u64, u64) as *mut c_void) };
    counters
}

/// Whether the file functions the loader calls resolve, from this library, to another definition
/// than the C library's own (a library interposes them).
fn file_functions_interposed() -> bool {
    // SAFETY: dlopen with RTLD_NOLOAD returns the C library already loaded (or NULL); dlsym reads
    // its symbols.
    unsafe {
        let libc_handle = libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if libc_handle.is_null() {
            return true;
        }
        let ours: [(&CStr, usize); 8] = [
            (c"fopen", libc::fopen as *const () as usize),
            (c"opendir", libc::opendir as *const () as usize),
            (c"readdir", libc::readdir as *const () as usize),
            (c"access", libc::access as *const () as usize),
            (c"stat", libc::stat as *const () as usize),
            (c"fstat", libc::fstat as *const () as usize),
            (c"dlopen", libc::dlopen as *const () as usize),
            (c"readlink", libc::readlink as *const () as usize),
        ];
        let interposed = ours.iter().any(|(name, address)| {
            let real = libc::dlsym(libc_handle, name.as_ptr());
            real.is_null() || real as usize != *address
        });
        libc::dlclose(libc_handle);
        interposed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_library_functions_are_not_interposed_in_the_tests() {
        assert!(!file_functions_interposed());
    }

    #[test]
    fn a_library_loaded_moves_the_counters() {
        let before = library_counters();
        assert!(before.0 > 0, "the process has loaded libraries");
        // SAFETY: loading and unloading a library without initialisers of note.
        unsafe {
            let handle = libc::dlopen(c"libm.so.6".as_ptr(), libc::RTLD_NOW);
            assert!(!handle.is_null());
            // libm may be loaded already (then the count is unchanged); a fresh one moves it.
            let after = library_counters();
            assert!(after.0 >= before.0);
            libc::dlclose(handle);
        }
    }

    #[test]
    fn a_change_in_a_watched_directory_concerns_the_names_looked_at_only() {
        let dir = std::env::temp_dir().join(format!("loader-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("listed")).unwrap();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        // A watcher of its own: the process's generation also follows other tests' environment
        // and libraries.
        let mut watcher = Watcher::new(1, 1);
        watcher.start_watching();
        assert!(watcher.stamps.is_none(), "inotify works here");
        assert!(watcher.register(&path("a.json"), Dependency::Entry), "a missing file in a local directory is watched");
        assert!(watcher.register(&path("missing/deeper/b.json"), Dependency::Entry), "so is one in a missing directory");
        assert!(watcher.register(&path("listed"), Dependency::Listing));
        assert!(!watcher.drain_events(), "nothing changed");
        std::fs::write(path("unrelated.txt"), b"x").unwrap();
        assert!(!watcher.drain_events(), "another name in the directory is not looked at");
        std::fs::write(path("a.json"), b"{}").unwrap();
        assert!(watcher.drain_events(), "the file appearing is a change");
        assert!(!watcher.drain_events(), "seen once");
        assert!(watcher.register(&path("a.json"), Dependency::Entry));
        std::fs::write(path("a.json"), b"{\"changed\": 1}").unwrap();
        assert!(watcher.drain_events(), "the file written in place is a change");
        std::fs::create_dir(path("missing")).unwrap();
        assert!(watcher.drain_events(), "a missing directory on the way appearing is a change");
        std::fs::write(path("listed/new.json"), b"{}").unwrap();
        assert!(watcher.drain_events(), "any new name in a listed directory is a change");
        drop(watcher);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_environment_is_compared_entry_by_entry() {
        let mut watcher = Watcher::new(1, 1);
        watcher.environment.pop();
        watcher.environment.push(b'x');
        assert!(watcher.environment_changed(), "a changed last byte is a change");
    }

    #[test]
    fn paths_that_cannot_be_watched_are_not_reused() {
        let _scope = Scope::enter();
        let (_, watched) = computed(|| depend("relative/path.json", Dependency::Entry));
        assert!(!watched);
        let (_, watched) = computed(|| depend("/proc/self/status", Dependency::Entry));
        assert!(!watched);
    }
}
