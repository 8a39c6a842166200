//! Whether the files and directories an API call looked at are as they were, told by `stat`-ing
//! them again: how `watch` decides "nothing changed" for a process's first few calls, before it
//! pays for inotify watches (a `stat` per path per call, where a watch costs a system call or two
//! per directory on the way, once).
//!
//! A path's stamp is what `stat` says of the file or directory it leads to now (through any
//! symbolic link on the way): device, inode, type and permissions, owner, size, and the
//! modification and change times. A file written, replaced, renamed over, made unreadable; a
//! directory gaining, losing or renaming an entry: each changes its stamp. A path where nothing
//! is has the stamp "absent", which anything appearing there changes.
//!
//! A file changed twice within one tick of the file system's clock may keep its times (and, at
//! the same size, its stamp), so only stamps whose times are two seconds in the past are trusted
//! (git's "racily clean" rule, as `FileIdentity::is_settled`): a file modified since is looked at
//! again by every call. And, as for watches, no path on a network or FUSE file system (its
//! attributes may be cached while another machine changes them), under `/proc`, `/sys` or `/dev`,
//! or relative (the working directory may change).

use std::collections::BTreeMap;
use std::ffi::CString;

use super::stat;

/// What `stat` said of a path, or `None`: nothing there.
pub type Stamp = Option<[i64; 10]>;

impl Witness {
    /// Whether this is the stamp of `path` itself as it is the file of `identity` (the file
    /// opened after the stamp was taken is the one stamped).
    #[allow(clippy::unnecessary_cast)]
    pub fn is_of(&self, path: &str, identity: &super::FileIdentity) -> bool {
        let Some(stamp) = self.stamp else { return false };
        // The stamp's device, inode, size and modification time (see `stamp_of`).
        let [device, inode, size, seconds, nanoseconds] = identity.words();
        self.path == path && [stamp[0], stamp[1], stamp[5], stamp[6], stamp[7]] == [device as i64, inode as i64, size as i64, seconds as i64, nanoseconds as i64]
    }
}

/// The stamp that stands for what a look at a path found: the path's own, or (for a path where
/// nothing is) that of the settled directory above it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub path: String,
    pub stamp: Stamp,
}

/// The paths looked at since the ledger was last found out of date, with their stamps.
#[derive(Default)]
pub struct Ledger {
    stamps: BTreeMap<String, Stamp>,
    /// Per device (`st_dev`): whether its file system tells changes by attributes promptly.
    local_devices: BTreeMap<u64, bool>,
    /// Directories above absent paths, with what `stat` said of them when they are there (asked
    /// once: the search paths that are missing share their parents).
    directories: BTreeMap<String, Option<libc::stat>>,
}

// `st_dev`'s type differs between architectures: the casts stay.
#[allow(clippy::unnecessary_cast)]
impl Ledger {
    /// Takes `path`'s stamp, before the caller looks at it: the stamp that stands for it (its
    /// own, or for a missing path the settled directory's above it), or `None` when no stamp can
    /// be trusted to tell a change (then nothing computed from it may be reused).
    pub fn record(&mut self, path: &str) -> Option<Witness> {
        if let Some(&stamp) = self.stamps.get(path) {
            return Some(Witness { path: path.to_string(), stamp });
        }
        if !path.starts_with('/') || path.split('/').any(|n| n == "..") || ["/proc/", "/sys/", "/dev/"].iter().any(|p| path.starts_with(p)) {
            return None;
        }
        let stamp = match stat(path) {
            Ok(st) if settled(&st) && self.local(st.st_dev as u64, path) => Some(stamp_of(&st)),
            Ok(_) => return None,
            // Nothing there: trusted when the nearest directory that is there is local (on a
            // network file system, a name another machine creates may stay unseen a while). That
            // directory's own stamp, when settled, stands for the path (and for every other
            // missing one below it): the path can only appear through a new name in it, which
            // changes its stamp. The many missing search directories then cost a `stat` per
            // existing parent, not one each.
            Err(libc::ENOENT | libc::ENOTDIR) => match self.nearest_existing_directory(path) {
                Some((dir, st)) if self.local(st.st_dev as u64, &dir) => {
                    if settled(&st) {
                        let witness = Witness { path: dir, stamp: Some(stamp_of(&st)) };
                        self.stamps.insert(witness.path.clone(), witness.stamp);
                        return Some(witness);
                    }
                    // That directory changed lately: the path's own stamp, "absent".
                    None
                }
                _ => return None,
            },
            Err(_) => return None,
        };
        self.stamps.insert(path.to_string(), stamp);
        Some(Witness { path: path.to_string(), stamp })
    }

    /// Whether `witness`, which an earlier process recorded for a path (see [`record`]), still
    /// holds: its path has that stamp now, settled and local. It is then this ledger's stamp for
    /// the path too, and costs one `stat` where recording it afresh may cost several (a missing
    /// path's walk up to the directory that is there). An "absent" witness is never confirmed:
    /// whether its path is on a local file system is not known without that walk.
    pub fn confirm(&mut self, witness: Witness) -> bool {
        let Some(stamp) = witness.stamp else { return false };
        if let Some(known) = self.stamps.get(&witness.path) {
            return *known == witness.stamp;
        }
        let holds = match stat(&witness.path) {
            Ok(st) => stamp_of(&st) == stamp && settled(&st) && self.local(st.st_dev as u64, &witness.path),
            Err(_) => false,
        };
        if holds {
            self.stamps.insert(witness.path, witness.stamp);
        }
        holds
    }

    /// Whether any path recorded has another stamp now. The ledger is emptied when one has: what
    /// the calls look at from then on is recorded afresh.
    pub fn changed(&mut self) -> bool {
        let changed = self.stamps.iter().any(|(path, stamp)| {
            let now = match stat(path) {
                Ok(st) => Some(stamp_of(&st)),
                Err(libc::ENOENT | libc::ENOTDIR) => None,
                Err(_) => return true,
            };
            now != *stamp
        });
        if changed {
            self.stamps.clear();
            self.directories.clear();
        }
        changed
    }

    /// The closest directory above `path` that exists (or, where a name on the way is a file,
    /// that file), with what `stat` says of it.
    fn nearest_existing_directory(&mut self, path: &str) -> Option<(String, libc::stat)> {
        let mut dir = path;
        loop {
            // Each directory once, whatever slashes the path had (`a//b/`, `a/b`).
            dir = match dir.trim_end_matches('/').rfind('/')? {
                0 => "/",
                i => dir[..i].trim_end_matches('/'),
            };
            if dir.is_empty() {
                dir = "/";
            }
            let found = match self.directories.get(dir) {
                Some(known) => *known,
                None => {
                    let found = stat(dir).ok();
                    self.directories.insert(dir.to_string(), found);
                    found
                }
            };
            match found {
                Some(st) => return Some((dir.to_string(), st)),
                None if dir == "/" => return None,
                None => {}
            }
        }
    }

    fn local(&mut self, device: u64, path: &str) -> bool {
        *self.local_devices.entry(device).or_insert_with(|| CString::new(path).is_ok_and(|p| super::watch::watchable_file_system(&p)))
    }
}

/// Whether `witness` holds now, asked of its path alone (no ledger keeps it): the path has that
/// stamp, settled, on a local file system. For a decision that nothing is remembered from.
pub fn holds_now(witness: &Witness) -> bool {
    let Some(stamp) = witness.stamp else { return false };
    match stat(&witness.path) {
        Ok(st) => stamp_of(&st) == stamp && settled(&st) && CString::new(witness.path.as_str()).is_ok_and(|p| super::watch::watchable_file_system(&p)),
        Err(_) => false,
    }
}

// `stat`'s field types differ between architectures (32-bit ones among them): the casts stay.
#[allow(clippy::unnecessary_cast)]
fn stamp_of(st: &libc::stat) -> [i64; 10] {
    [
        st.st_dev as i64,
        st.st_ino as i64,
        st.st_mode as i64,
        st.st_uid as i64,
        st.st_gid as i64,
        st.st_size as i64,
        st.st_mtime as i64,
        st.st_mtime_nsec as i64,
        st.st_ctime as i64,
        st.st_ctime_nsec as i64,
    ]
}

/// Whether the file's modification and change times are two seconds in the past (see the
/// module's comment).
#[allow(clippy::unnecessary_cast)]
fn settled(st: &libc::stat) -> bool {
    super::settled_since((st.st_mtime as i64).max(st.st_ctime as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty directory of the test's own.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("loader-stamps-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_path_just_written_is_not_trusted() {
        let dir = scratch("fresh");
        let file = dir.join("a.json");
        std::fs::write(&file, b"{}").unwrap();
        let mut ledger = Ledger::default();
        assert!(ledger.record(file.to_str().unwrap()).is_none(), "modified in the last two seconds");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn paths_that_cannot_be_stamped_are_refused() {
        let mut ledger = Ledger::default();
        assert!(ledger.record("relative/a.json").is_none());
        assert!(ledger.record("/proc/self/status").is_none());
        assert!(ledger.record("/usr/../etc/passwd").is_none());
    }

    #[test]
    fn a_missing_path_is_recorded_and_its_appearing_is_a_change() {
        let dir = scratch("missing");
        let file = dir.join("deeper/b.json");
        let mut ledger = Ledger::default();
        assert!(ledger.record(file.to_str().unwrap()).is_some(), "nothing there, in a local directory");
        assert!(!ledger.changed());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"{}").unwrap();
        assert!(ledger.changed(), "the file appearing is a change");
        assert!(!ledger.changed(), "the ledger starts afresh after a change");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn every_change_to_a_settled_path_changes_its_stamp() {
        let dir = scratch("changes");
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        for name in ["in-place.json", "renamed-over.json", "made-unreadable.json", "replacement.json"] {
            std::fs::write(path(name), b"{\"a\": 1}").unwrap();
        }
        std::fs::create_dir(path("listed")).unwrap();
        std::fs::create_dir(path("above")).unwrap();
        // Settled: the change times of what was just made must be two seconds in the past.
        std::thread::sleep(std::time::Duration::from_millis(3100));
        let recorded = |names: &[&str]| {
            let mut ledger = Ledger::default();
            for name in names {
                assert!(ledger.record(&path(name)).is_some(), "{name} is settled");
            }
            assert!(!ledger.changed(), "nothing changed yet");
            ledger
        };
        let mut ledger = recorded(&["in-place.json"]);
        std::fs::write(path("in-place.json"), b"{\"a\": 2}").unwrap();
        assert!(ledger.changed(), "written in place, the same size");
        let mut ledger = recorded(&["renamed-over.json"]);
        std::fs::rename(path("replacement.json"), path("renamed-over.json")).unwrap();
        assert!(ledger.changed(), "another file renamed over it");
        let mut ledger = recorded(&["made-unreadable.json"]);
        let mut permissions = std::fs::metadata(path("made-unreadable.json")).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o000);
        std::fs::set_permissions(path("made-unreadable.json"), permissions).unwrap();
        assert!(ledger.changed(), "its permissions changed");
        let mut ledger = recorded(&["above/missing/b.json"]);
        assert_eq!(ledger.stamps.keys().collect::<Vec<_>>(), [&path("above")], "the settled directory stands for what is missing below it");
        std::fs::create_dir(path("above/missing")).unwrap();
        assert!(ledger.changed(), "a directory on the way to a missing path appeared");
        let mut ledger = recorded(&["listed"]);
        std::fs::write(path("listed/new.json"), b"{}").unwrap();
        assert!(ledger.changed(), "a listed directory gained an entry");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn settled_looks_at_the_later_of_the_two_times() {
        // SAFETY: a zeroed stat is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
        st.st_mtime = (now - 3600) as _;
        st.st_ctime = (now - 3600) as _;
        assert!(settled(&st));
        st.st_ctime = now as _;
        assert!(!settled(&st), "changed (say, permissions or a write with its time set back) just now");
        st.st_ctime = (now - 3600) as _;
        st.st_mtime = now as _;
        assert!(!settled(&st));
    }
}
