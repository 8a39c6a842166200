//! Writing the loader's own files (the driver cache): private directories, whole files replaced
//! atomically, removal. Through libc's `mkdir`, `open`, `write`, `rename` and `unlink`, as the rest
//! of the platform stage goes through libc.

use std::ffi::CString;

fn c_path(path: &str) -> Result<CString, String> {
    CString::new(path).map_err(|_| format!("{path}: the path holds a NUL byte"))
}

/// Creates `path` and any missing parents, each with `mode` (before the umask), only where the
/// effective user owns what it creates in: a missing directory is made only inside one the
/// effective user owns, and `path` itself must be the effective user's. Root run with another
/// user's `HOME` (`sudo -E`, a service given a user's environment) so creates nothing in that
/// home: a root-owned `~/.cache` would lock its owner, and every program caching there, out.
pub fn create_own_dir_all(path: &str, mode: libc::mode_t) -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let owner = |dir: &str| super::stat(dir).ok().filter(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR).map(|st| st.st_uid);
    // Made before (every write but the first): the walk below would find each part there and
    // end with the same answer, at a `stat` per part.
    if owner(path) == Some(me) {
        return Ok(());
    }
    let mut prefix = String::new();
    let mut parent_owner = owner("/");
    for part in path.split('/').filter(|p| !p.is_empty()) {
        let parent = if prefix.is_empty() { "/".to_string() } else { prefix.clone() };
        prefix.push('/');
        prefix.push_str(part);
        if let Some(uid) = owner(&prefix) {
            parent_owner = Some(uid);
            continue;
        }
        if super::stat(&prefix).is_ok() {
            return Err(format!("{prefix}: not a directory"));
        }
        if parent_owner != Some(me) {
            return Err(format!("{prefix}: not created: {parent} is not the effective user's"));
        }
        let c = c_path(&prefix)?;
        // SAFETY: mkdir with a NUL-terminated path.
        if unsafe { libc::mkdir(c.as_ptr(), mode) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EEXIST) {
                return Err(format!("{prefix}: cannot create the directory: {error}"));
            }
        }
        parent_owner = owner(&prefix);
    }
    match parent_owner == Some(me) {
        true => Ok(()),
        false => Err(format!("{path}: not the effective user's directory")),
    }
}

/// Replaces the file at `path` with `bytes` so that a reader sees the old file or the new one,
/// never a part: written to a temporary file of this process beside it (mode 0600, whatever the
/// umask), then renamed over `path`. Several processes doing this at once leave one whole file.
pub fn replace_file(path: &str, bytes: &[u8]) -> Result<(), String> {
    // SAFETY: getpid and gettid have no preconditions.
    let temporary = format!("{path}.{}.{}.tmp", unsafe { libc::getpid() }, unsafe { libc::gettid() });
    let c_temporary = c_path(&temporary)?;
    // SAFETY: `c_temporary` is a NUL-terminated path that lives across the call.
    let fd = unsafe {
        libc::open(c_temporary.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC | libc::O_NOFOLLOW, 0o600)
    };
    if fd < 0 {
        return Err(format!("{temporary}: cannot create: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is the descriptor opened above, not yet closed.
    unsafe { libc::fchmod(fd, 0o600) };
    let mut written = 0;
    while written < bytes.len() {
        let rest = &bytes[written..];
        // SAFETY: `rest` is a live buffer of `rest.len()` bytes; `fd` is open.
        let n = unsafe { libc::write(fd, rest.as_ptr() as *const libc::c_void, rest.len()) };
        if n <= 0 {
            let error = std::io::Error::last_os_error();
            // SAFETY: `fd` is open and closed once here; `c_temporary` is NUL-terminated.
            unsafe {
                libc::close(fd);
                libc::unlink(c_temporary.as_ptr());
            }
            return Err(format!("{temporary}: cannot write: {error}"));
        }
        written += n as usize;
    }
    // SAFETY: `fd` is open and closed once here.
    let closed = unsafe { libc::close(fd) } == 0;
    // SAFETY: both paths are NUL-terminated and live across the call.
    if !closed || unsafe { libc::rename(c_temporary.as_ptr(), c_path(path)?.as_ptr()) } != 0 {
        let error = std::io::Error::last_os_error();
        // SAFETY: `c_temporary` is NUL-terminated.
        unsafe { libc::unlink(c_temporary.as_ptr()) };
        return Err(format!("{path}: cannot replace: {error}"));
    }
    // A later read in this API call reads the new file.
    super::call_files::forget(path.as_bytes());
    Ok(())
}

/// Removes the file at `path`: whether there was one (a missing file is not an error).
pub fn remove_file(path: &str) -> Result<bool, String> {
    let c = c_path(path)?;
    super::call_files::forget(path.as_bytes());
    // SAFETY: unlink with a NUL-terminated path.
    if unsafe { libc::unlink(c.as_ptr()) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ENOENT) {
            return Err(format!("{path}: cannot remove: {error}"));
        }
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaced_files_are_whole_private_and_removable() {
        let dir = std::env::temp_dir().join(format!("loader-write-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let nested = dir.join("a/b");
        create_own_dir_all(nested.to_str().unwrap(), 0o700).unwrap();
        create_own_dir_all(nested.to_str().unwrap(), 0o700).unwrap();
        let file = nested.join("f");
        let path = file.to_str().unwrap();
        replace_file(path, b"first").unwrap();
        replace_file(path, b"second").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"second");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(&nested).unwrap().count(), 1, "no temporary file left");
        assert_eq!(remove_file(path), Ok(true));
        assert_eq!(remove_file(path), Ok(false), "nothing left to remove");
        assert!(!file.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file where a directory of the path should be (`XDG_CACHE_HOME` naming a file) is named
    /// as such, not taken for another user's directory.
    #[test]
    fn a_file_in_the_way_is_not_a_directory() {
        let dir = std::env::temp_dir().join(format!("loader-write-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cache");
        std::fs::write(&file, "").unwrap();
        let refused = create_own_dir_all(&format!("{}/vulkan-loader-rs", file.display()), 0o700).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(refused, format!("{}: not a directory", file.display()));
    }

    #[test]
    fn nothing_is_created_in_or_written_to_another_users_directory() {
        let dir = std::env::temp_dir().join(format!("loader-write-owner-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 {
            // Only root can give a directory away; as another user the rule is seen in the
            // integration test with a second account.
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        std::os::unix::fs::chown(&home, Some(4242), Some(4242)).unwrap();
        let cache = home.join(".cache/vulkan-loader-rs");
        let refused = create_own_dir_all(cache.to_str().unwrap(), 0o700).unwrap_err();
        assert!(refused.contains("is not the effective user's"), "{refused}");
        assert!(!home.join(".cache").exists(), "nothing created in the other user's home");
        // Theirs already: not used either.
        std::fs::create_dir_all(&cache).unwrap();
        std::os::unix::fs::chown(&cache, Some(4242), Some(4242)).unwrap();
        assert!(create_own_dir_all(cache.to_str().unwrap(), 0o700).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
