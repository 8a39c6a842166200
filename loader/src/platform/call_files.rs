//! One API call's look at the file system: while a call runs ([`OneCall`]), each path is asked
//! with `stat` at most once, and what was learned of a file opened in the call (its `fstat`)
//! answers the later questions about it. Instance creation asks about a driver's manifest when it
//! reads it, again for the driver cache's key, and once more when it records; the cache file and
//! each layer manifest are asked about by several stages. The Khronos loader reads each file
//! once per call; so do we, and between calls a `stat` tells whether the file's last parse can
//! be reused (see `file_cache`). Nothing is kept when the call returns, and no descriptor is
//! held: the next call looks again, so an edit is seen by the very next call.
//!
//! Directories are listed once per call the same way ([`list`]): the layer search lists the same
//! ones for the implicit layers and again with the explicit ones.
//!
//! A file the loader replaces during a call (the driver cache) is forgotten here when it is
//! written ([`forget`]), with the listing of its directory, so a later read in the same call sees
//! the new file.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::atomic::{AtomicU64, Ordering};

use super::host_alloc::with_system_allocator;
use super::lfs::Stat;

/// The call under way on this thread: its number, what `stat` said of each path, and what each
/// directory listed held.
struct Call {
    id: u64,
    seen: BTreeMap<Vec<u8>, Result<Stat, i32>>,
    listed: BTreeMap<String, Option<Vec<OsString>>>,
}

thread_local! {
    static CALL: RefCell<Option<Call>> = const { RefCell::new(None) };
}

/// Numbers calls, so that something remembered for one call (see `file_cache`) is not taken for
/// another's, on any thread. 0 is "no call".
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

/// While alive, this thread is inside one API call: paths are asked about once.
pub struct OneCall(bool);

impl OneCall {
    pub fn enter() -> OneCall {
        // Only the outermost scope on the thread starts (and later ends) a call.
        OneCall(CALL.with(|call| {
            let mut call = call.borrow_mut();
            let outermost = call.is_none();
            if outermost {
                *call = Some(Call { id: NEXT_CALL.fetch_add(1, Ordering::Relaxed), seen: BTreeMap::new(), listed: BTreeMap::new() });
            }
            outermost
        }))
    }
}

impl Drop for OneCall {
    fn drop(&mut self) {
        if self.0 {
            let ended = CALL.with(|call| call.borrow_mut().take());
            with_system_allocator(|| drop(ended));
        }
    }
}

/// The number of the API call under way on this thread, 0 outside one.
pub fn current() -> u64 {
    CALL.with(|call| call.borrow().as_ref().map_or(0, |c| c.id))
}

/// What `stat` (`ask`) says of `path`, asked once per call (outside a call, every time); its
/// `errno` where it fails. A failure is the call's answer too, but it never decides that a path
/// is absent: whoever needs the file opens it all the same.
pub fn stat(path: &[u8], ask: impl FnOnce(&[u8]) -> Result<Stat, i32>) -> Result<Stat, i32> {
    let known = CALL.with(|call| call.borrow().as_ref().and_then(|c| c.seen.get(path).copied()));
    if let Some(answer) = known {
        return answer;
    }
    let answer = ask(path);
    CALL.with(|call| {
        if let Some(call) = call.borrow_mut().as_mut() {
            with_system_allocator(|| call.seen.insert(path.to_vec(), answer));
        }
    });
    answer
}

/// Remembers for the rest of the call what `fstat` said of the file opened at `path`: the file
/// read is the one the call's later questions are about.
pub fn learn(path: &[u8], st: &Stat) {
    CALL.with(|call| {
        if let Some(call) = call.borrow_mut().as_mut() {
            with_system_allocator(|| call.seen.insert(path.to_vec(), Ok(*st)));
        }
    });
}

/// The names in the directory at `path` as `read` gives them, read once per call (outside a call,
/// every time).
pub fn list(path: &str, read: impl FnOnce() -> Option<Vec<OsString>>) -> Option<Vec<OsString>> {
    let known = CALL.with(|call| call.borrow().as_ref().and_then(|c| c.listed.get(path).cloned()));
    if let Some(names) = known {
        return names;
    }
    let names = read();
    CALL.with(|call| {
        if let Some(call) = call.borrow_mut().as_mut() {
            with_system_allocator(|| call.listed.insert(path.to_string(), names.clone()));
        }
    });
    names
}

/// Forgets what the call knows of `path`, which the loader has just replaced or removed, and of
/// the directory that holds it.
pub fn forget(path: &[u8]) {
    CALL.with(|call| {
        if let Some(call) = call.borrow_mut().as_mut() {
            let directory = path.iter().rposition(|&b| b == b'/').map(|at| String::from_utf8_lossy(&path[..at]).into_owned());
            with_system_allocator(|| {
                call.seen.remove(path);
                if let Some(directory) = directory {
                    call.listed.remove(&directory);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stat(2)` of `path`.
    fn ask(path: &[u8]) -> Result<Stat, i32> {
        let c_path = std::ffi::CString::new(path).unwrap();
        // SAFETY: stat with a NUL-terminated path into a zeroed buffer.
        unsafe {
            let mut st: Stat = std::mem::zeroed();
            match super::super::lfs::stat(c_path.as_ptr(), &mut st) {
                0 => Ok(st),
                _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)),
            }
        }
    }

    #[test]
    fn a_path_is_asked_once_per_call_and_again_in_the_next() {
        let path = std::env::temp_dir().join(format!("loader-call-files-{}", std::process::id()));
        let bytes = path.to_str().unwrap().as_bytes().to_vec();
        std::fs::write(&path, b"a").unwrap();
        let size = |st: Stat| st.st_size;
        {
            let _call = OneCall::enter();
            let first = current();
            assert_ne!(first, 0);
            assert_eq!(size(stat(&bytes, ask).unwrap()), 1);
            std::fs::write(&path, b"bb").unwrap();
            assert_eq!(size(stat(&bytes, ask).unwrap()), 1, "the call's first look answers");
            {
                let _inner = OneCall::enter();
                assert_eq!(current(), first, "an inner scope is the same call");
            }
            assert_eq!(current(), first);
            forget(&bytes);
            assert_eq!(size(stat(&bytes, ask).unwrap()), 2, "a file written by the loader is looked at again");
        }
        assert_eq!(current(), 0);
        std::fs::write(&path, b"ccc").unwrap();
        assert_eq!(size(stat(&bytes, ask).unwrap()), 3, "outside a call, every look is fresh");
        let _call = OneCall::enter();
        assert_eq!(size(stat(&bytes, ask).unwrap()), 3, "the next call looks again");
        std::fs::remove_file(&path).unwrap();
        assert!(stat(&bytes, ask).is_ok(), "what the call saw stays for the call");
        forget(&bytes);
        assert_eq!(stat(&bytes, ask).err(), Some(libc::ENOENT));
        std::fs::write(&path, b"d").unwrap();
        assert_eq!(stat(&bytes, ask).err(), Some(libc::ENOENT), "a failure is the call's answer too");
        forget(&bytes);
        assert_eq!(size(stat(&bytes, ask).unwrap()), 1);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_directory_is_listed_once_per_call_and_again_once_written_in() {
        let reads = std::cell::Cell::new(0);
        let read = || {
            reads.set(reads.get() + 1);
            Some(vec![OsString::from(format!("n{}", reads.get()))])
        };
        assert_eq!(list("/d", read), Some(vec!["n1".into()]));
        assert_eq!(list("/d", read), Some(vec!["n2".into()]), "outside a call, every listing reads");
        let _call = OneCall::enter();
        assert_eq!(list("/d", read), Some(vec!["n3".into()]));
        assert_eq!(list("/d", read), Some(vec!["n3".into()]));
        forget(b"/d/written");
        assert_eq!(list("/d", read), Some(vec!["n4".into()]));
        assert_eq!(reads.get(), 4);
    }
}
