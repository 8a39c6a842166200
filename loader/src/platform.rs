//! The only module that touches the OS, through libc's POSIX calls (not std's wrappers) so that
//! tools interposing libc see every file and library the loader touches.

use std::ffi::{c_char, c_void, CStr, CString};

extern "C" {
    // glibc's getenv that returns NULL in AT_SECURE processes (not in the libc crate for all targets).
    fn secure_getenv(name: *const c_char) -> *mut c_char;
}

/// An environment variable, as `secure_getenv` sees it: unset in elevated (setuid) processes.
/// Empty values count as unset.
pub fn env(name: &str) -> Option<String> {
    if name.as_bytes().contains(&0) {
        return None;
    }
    // The name NUL-terminated on the stack when it fits (a creation reads some thirty variables).
    let mut buf = [0u8; 128];
    let long;
    let c_name = if name.len() < buf.len() {
        buf[..name.len()].copy_from_slice(name.as_bytes());
        buf.as_ptr() as *const c_char
    } else {
        long = CString::new(name).ok()?;
        long.as_ptr()
    };
    // SAFETY: `c_name` is NUL-terminated; the returned pointer is read before any other env call.
    let value = unsafe { secure_getenv(c_name) };
    if value.is_null() {
        return None;
    }
    let value = unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned();
    (!value.is_empty()).then_some(value)
}

/// Whether this process runs elevated (AT_SECURE), where path-changing variables are ignored.
pub fn is_elevated() -> bool {
    // SAFETY: plain libc query.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Names of the entries of a directory, sorted (the kernel's order is not deterministic); `None`
/// if it cannot be opened or read. Read with `getdents64` into a stack buffer: `opendir` would add
/// an `fstat` and a 32 KiB heap buffer for each directory a first `vkCreateInstance` searches.
pub fn list_dir(path: &str) -> Option<Vec<String>> {
    let c_path = CString::new(path).ok()?;
    // `struct linux_dirent64`: d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name.
    const RECLEN_AT: usize = 16;
    const NAME_AT: usize = 19;
    // SAFETY: open/getdents64/close; getdents64 writes at most the buffer's length, and the
    // records are read only within the bytes it returned, each within its own length.
    unsafe {
        let fd = libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        // 4 KiB, 8-byte aligned like the records.
        let mut buffer = [0u64; 512];
        let mut names = Vec::new();
        let listed = loop {
            let n = libc::syscall(libc::SYS_getdents64, fd, buffer.as_mut_ptr(), std::mem::size_of_val(&buffer));
            if n <= 0 {
                break n == 0;
            }
            let bytes = std::slice::from_raw_parts(buffer.as_ptr() as *const u8, n as usize);
            let mut at = 0;
            while let Some(record) = bytes.get(at..) {
                let Some(&[low, high]) = record.get(RECLEN_AT..RECLEN_AT + 2) else { break };
                let length = u16::from_ne_bytes([low, high]) as usize;
                let Some(name) = record.get(NAME_AT..length).and_then(|n| CStr::from_bytes_until_nul(n).ok()) else { break };
                if name != c"." && name != c".." {
                    names.push(name.to_string_lossy().into_owned());
                }
                at += length;
            }
        };
        libc::close(fd);
        names.sort();
        listed.then_some(names)
    }
}

/// What identifies a file's current content without reading it (`stat`): device, inode, size
/// and modification time; and whether it is a directory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    pub size: u64,
    modified: (i64, i64),
    pub is_dir: bool,
}

/// The file's identity; `None` if it cannot be stat'ed.
pub fn file_identity(path: &str) -> Option<FileIdentity> {
    let c_path = CString::new(path).ok()?;
    // SAFETY: stat into a zeroed buffer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::stat(c_path.as_ptr(), &mut st) != 0 {
            return None;
        }
        Some(FileIdentity {
            device: st.st_dev as u64,
            inode: st.st_ino as u64,
            size: st.st_size as u64,
            modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            is_dir: (st.st_mode & libc::S_IFMT) == libc::S_IFDIR,
        })
    }
}

/// The whole content of a file, through `open`/`read`, read straight into the returned vector
/// (no stdio buffer, no zeroed bounce buffer: manifests are small, and this runs on every first
/// creation). `expected_len`, the size a `stat` just gave, spares the read that would only see
/// the end of the file; a file that is not that size is read to its end.
pub fn read_file(path: &str, expected_len: Option<u64>) -> Result<Vec<u8>, String> {
    let c_path = CString::new(path).map_err(|_| "path contains NUL".to_string())?;
    // SAFETY: open/read/close; read writes at most the spare capacity it is given, and the
    // length grows by exactly what it wrote.
    unsafe {
        let fd = libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        // One byte more than expected: a read that stops short of the buffer's end at the
        // expected size has reached the end of the file.
        let capacity = expected_len.map_or(4096, |n| n as usize + 1).max(64);
        let mut out: Vec<u8> = Vec::with_capacity(capacity);
        let result = loop {
            if out.capacity() == out.len() {
                out.reserve(out.capacity());
            }
            let spare = out.spare_capacity_mut();
            let wanted = spare.len();
            match libc::read(fd, spare.as_mut_ptr() as *mut c_void, wanted) {
                0 => break Ok(out),
                n if n > 0 => {
                    out.set_len(out.len() + n as usize);
                    if (n as usize) < wanted && Some(out.len() as u64) == expected_len {
                        break Ok(out);
                    }
                }
                _ => {
                    let error = std::io::Error::last_os_error();
                    if error.kind() != std::io::ErrorKind::Interrupted {
                        break Err(format!("read error: {error}"));
                    }
                }
            }
        };
        libc::close(fd);
        result
    }
}

/// The first `len` bytes of a file (fewer if it is shorter) and its size: open, read, fstat, close.
pub fn read_head(path: &str, len: usize) -> Result<(Vec<u8>, u64), String> {
    let c_path = CString::new(path).map_err(|_| "path contains NUL".to_string())?;
    // SAFETY: open/read/fstat/close; read writes at most `len` bytes into a buffer of that capacity.
    unsafe {
        let fd = libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let mut head: Vec<u8> = Vec::with_capacity(len);
        let n = libc::read(fd, head.as_mut_ptr() as *mut c_void, len);
        let mut st: libc::stat = std::mem::zeroed();
        let result = if n < 0 || libc::fstat(fd, &mut st) != 0 {
            Err(std::io::Error::last_os_error().to_string())
        } else {
            head.set_len(n as usize);
            Ok((head, st.st_size as u64))
        };
        libc::close(fd);
        result
    }
}

/// A library opened with `dlopen`; closed when dropped.
pub struct Library {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used from any thread.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    pub fn open(path: &str) -> Result<Library, String> {
        let c_path = CString::new(path).map_err(|_| "path contains NUL".to_string())?;
        // SAFETY: dlopen with a NUL-terminated path; dlerror read right after.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(dlerror());
        }
        Ok(Library { handle })
    }

    pub fn symbol(&self, name: &CStr) -> Option<unsafe extern "system" fn()> {
        // SAFETY: dlsym on a live handle; a non-null result is a function address in the library.
        let ptr = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        (!ptr.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, unsafe extern "system" fn()>(ptr) })
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once.
        unsafe { libc::dlclose(self.handle) };
    }
}

fn dlerror() -> String {
    // SAFETY: dlerror returns a thread-local message or NULL.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    }
}

/// Writes a line to stderr with `fputs`.
pub fn stderr_line(line: &str) {
    let Ok(text) = CString::new(format!("{line}\n")) else { return };
    extern "C" {
        static mut stderr: *mut libc::FILE;
    }
    // SAFETY: glibc's `stderr` stream, written with fputs.
    unsafe { libc::fputs(text.as_ptr(), stderr) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_reads_short_and_long_names() {
        let long = format!("LOADER_TEST_{}", "L".repeat(200));
        // SAFETY (both): this test's own variables; nothing else here reads them.
        unsafe { std::env::set_var("LOADER_TEST_SHORT", "short") };
        unsafe { std::env::set_var(&long, "long") };
        assert_eq!(env("LOADER_TEST_SHORT").as_deref(), Some("short"));
        assert_eq!(env(&long).as_deref(), Some("long"));
        assert_eq!(env("LOADER_TEST_UNSET"), None);
        assert_eq!(env("LOADER\0TEST"), None);
    }

    #[test]
    fn read_file_returns_every_byte_whatever_the_size() {
        let dir = std::env::temp_dir().join(format!("loader-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Empty, below, at and across the first and second buffer sizes; with the right size
        // expected, a wrong one (the file changed since its stat) and none.
        for len in [0usize, 152, 4096, 4097, 8192, 100_000] {
            let path = dir.join(format!("f{len}"));
            let content: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &content).unwrap();
            let path = path.to_str().unwrap();
            for expected in [Some(len as u64), Some(len as u64 / 2), Some(len as u64 + 10), None] {
                assert_eq!(read_file(path, expected).unwrap(), content, "{len} bytes, {expected:?} expected");
            }
        }
        assert!(read_file(dir.join("missing").to_str().unwrap(), None).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn list_dir_returns_every_name_sorted_across_several_reads() {
        let dir = std::env::temp_dir().join(format!("loader-list-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.to_str().unwrap().to_string();
        assert_eq!(list_dir(&path), Some(Vec::new()));
        // Some 40 KiB of records: ten times the buffer, so the listing takes several reads.
        let mut expected: Vec<String> = (0..400).map(|i| format!("{i:03}-{}.json", "n".repeat(i % 90))).collect();
        expected.push("sub".into());
        for name in &expected[..400] {
            std::fs::write(dir.join(name), b"{}").unwrap();
        }
        std::fs::create_dir(dir.join("sub")).unwrap();
        expected.sort();
        assert_eq!(list_dir(&path), Some(expected));
        assert_eq!(list_dir(dir.join("000-.json").to_str().unwrap()), None, "a file is not a directory");
        assert_eq!(list_dir(dir.join("missing").to_str().unwrap()), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
