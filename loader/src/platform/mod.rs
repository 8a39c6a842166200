//! The only module that touches the OS, through libc's POSIX calls (not std's wrappers) so that
//! tools interposing libc see every file and library the loader touches.

pub mod call_files;
pub mod digest;
pub mod elf;
pub mod file_cache;
pub mod host_alloc;
mod lfs;
pub mod library_cache;
pub mod write;

use std::ffi::{c_char, c_void, CStr, CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

extern "C" {
    // glibc's getenv that returns NULL in AT_SECURE processes (not in the libc crate for all targets).
    fn secure_getenv(name: *const c_char) -> *mut c_char;
    // glibc's copy of argv[0], set before any constructor runs, and its last component; written
    // only by `explain_as`.
    static mut program_invocation_name: *const c_char;
    static mut program_invocation_short_name: *const c_char;
}

impl crate::reference::Variable {
    /// The variable's value as its declaration says to read it: through `secure_getenv` (unset in
    /// elevated processes) or `getenv`. Empty counts as unset, except for
    /// [`Read::SecureEvenEmpty`](crate::reference::Read::SecureEvenEmpty) variables.
    pub fn get(&self) -> Option<String> {
        use crate::reference::Read;
        match self.read {
            Read::Secure => read_env(self.name, secure_getenv).filter(|v| !v.is_empty()),
            Read::SecureEvenEmpty => read_env(self.name, secure_getenv),
            Read::Plain => read_env(self.name, libc::getenv).filter(|v| !v.is_empty()),
        }
    }

    /// Whether [`get`](Self::get) finds it set.
    pub fn is_set(&self) -> bool {
        self.get().is_some()
    }
}

/// A variable a layer manifest names (`enable_environment`, `disable_environment`), read with
/// `getenv` as the Khronos loader reads it: it only chooses among the layers the secure search
/// found. Empty counts as unset. Every other variable is read through its declaration in
/// `crate::reference`.
pub fn manifest_variable(name: &str) -> Option<String> {
    read_env(name, libc::getenv).filter(|v| !v.is_empty())
}

fn read_env(name: &str, getter: unsafe extern "C" fn(*const c_char) -> *mut c_char) -> Option<String> {
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
    let value = unsafe { getter(c_name) };
    if value.is_null() {
        return None;
    }
    // SAFETY: a non-NULL result of getenv is a NUL-terminated string in the environment, copied
    // here before any other environment call could change it.
    Some(unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned())
}

/// The loader's cache directory: `$XDG_CACHE_HOME/vulkan-loader-rs`, else under `$HOME/.cache`
/// (the driver cache); `None` where it is there but another user's (root run with a user's
/// `HOME`): such a process neither reads another user's records nor writes into them.
pub fn cache_directory() -> Option<String> {
    use crate::reference::variables::{HOME, XDG_CACHE_HOME};
    let base = XDG_CACHE_HOME.get().filter(|p| p.starts_with('/')).or_else(|| HOME.get().map(|h| format!("{h}/.cache")))?;
    let dir = format!("{base}/vulkan-loader-rs");
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    match stat(&dir) {
        Ok(st) if st.st_uid != me => None,
        _ => Some(dir),
    }
}

/// Whether the process is elevated (setuid, setgid, file capabilities: `AT_SECURE`), where
/// nothing the user controls may decide what the loader loads or believes.
pub fn elevated() -> bool {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// `cpuid`'s leaves 1 and 7 (subleaf 0) as glibc read them at start-up, when it says
/// (`__x86_get_cpuid_feature_leaf`, glibc 2.33 and later).
#[cfg(target_arch = "x86_64")]
pub fn glibc_cpuid() -> Option<[[u32; 4]; 2]> {
    /// glibc's `struct cpuid_feature` (`<sys/platform/x86.h>`): the registers as `cpuid` gave them
    /// (EAX, EBX, ECX, EDX), then the bits usable.
    #[repr(C)]
    struct CpuidFeature {
        cpuid: [u32; 4],
        _active: [u32; 4],
    }
    type Leaf = unsafe extern "C" fn(u32) -> *const CpuidFeature;
    // SAFETY: dlsym of a NUL-terminated name in the process's scope.
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__x86_get_cpuid_feature_leaf".as_ptr()) };
    if symbol.is_null() {
        return None;
    }
    // SAFETY: glibc's function of this name has this type: it takes the index of a leaf (0: leaf 1,
    // 1: leaf 7) and returns NULL or a pointer to glibc's static copy of it.
    let [one, seven] = unsafe {
        let leaf = std::mem::transmute::<*mut c_void, Leaf>(symbol);
        [leaf(0), leaf(1)]
    };
    // SAFETY: both are non-NULL pointers to glibc's static copies, which live as long as the process.
    (!one.is_null() && !seven.is_null()).then(|| unsafe { [(*one).cpuid, (*seven).cpuid] })
}

/// The kernel's release (`uname`).
pub fn kernel_release() -> String {
    // SAFETY: `utsname` is arrays of bytes, for which all zeros is a value.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname fills the structure it is given.
    if unsafe { libc::uname(&mut name) } != 0 {
        return String::new();
    }
    // Read up to the NUL, never past the array.
    let release: Vec<u8> = name.release.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&release).into_owned()
}

/// The environment's `NAME=VALUE` entries, as `environ` holds them now, handed to `f` one by
/// one without copying.
pub fn for_each_environment_entry(mut f: impl FnMut(&[u8])) {
    extern "C" {
        static environ: *const *const c_char;
    }
    // SAFETY: `environ` is a NULL-terminated array of NUL-terminated strings, read right away.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            f(CStr::from_ptr(*entry).to_bytes());
            entry = entry.add(1);
        }
    }
}

/// The file of the loaded object (library or executable) that holds `address`, as the dynamic
/// linker resolved it (`dladdr`).
pub fn object_path_of(address: *const c_void) -> Option<String> {
    // SAFETY: dladdr fills the structure for an address; the name is copied out right away.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(address, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        Some(CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned())
    }
}

/// Whether the library `path` (as it would be handed to `dlopen`) is loaded in the process
/// already, from the names of the loaded objects (`dl_iterate_phdr`; no file opened, where
/// `RTLD_NOLOAD` opens and reads the file to compare it with each): a path when an object was
/// loaded by it, or by another path to the same file with the same file name (`/lib` for
/// `/usr/lib`, compared by `stat`); a bare name when an object's file name is that name (the
/// dynamic linker's search finds it so). An object reached only through a link of another name
/// is not seen: the caller then treats the library as not loaded, which only costs it the
/// shortcut of asking the loaded one.
pub fn is_loaded(path: &str) -> bool {
    fn file_name(path: &[u8]) -> &[u8] {
        path.rsplit(|&b| b == b'/').next().unwrap_or(path)
    }
    let name = file_name(path.as_bytes());
    // Copied out with the system's allocator: the walk holds the dynamic linker's lock, under
    // which no application allocation callback may run. Names are compared as bytes (some 30
    // objects per call, a few calls per instance): only those of the same file name are copied.
    let same_name: Vec<String> = host_alloc::with_system_allocator(|| {
        let mut same_name = Vec::new();
        for_each_loaded_object(|object| {
            if file_name(object) == name {
                if let Ok(object) = std::str::from_utf8(object) {
                    same_name.push(object.to_string());
                }
            }
        });
        same_name
    });
    if same_name.is_empty() || !path.contains('/') || same_name.iter().any(|object| object == path) {
        return !same_name.is_empty();
    }
    let identity = |p: &str| stat(p).ok().map(|st| (st.st_dev, st.st_ino));
    let Some(file) = identity(path) else { return false };
    same_name.iter().any(|object| identity(object) == Some(file))
}

/// Calls `each` with the path of every object the dynamic linker has loaded (the executable's
/// empty name left out), as bytes.
fn for_each_loaded_object(mut each: impl FnMut(&[u8])) {
    /// The `dl_iterate_phdr` callback: hands each object's name to the closure `data` points to.
    ///
    /// # Safety
    /// `info` is the dynamic linker's valid structure for one object and `data` the
    /// `&mut dyn FnMut(&[u8])` given to `dl_iterate_phdr` below, alive for the walk.
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> libc::c_int {
        // SAFETY: glibc passes its structure; `data` is the closure below, alive for the walk.
        let (info, each) = unsafe { (&*info, &mut *(data as *mut &mut dyn FnMut(&[u8]))) };
        if !info.dlpi_name.is_null() {
            // SAFETY: a NUL-terminated name owned by the dynamic linker during the walk.
            let name = unsafe { CStr::from_ptr(info.dlpi_name) }.to_bytes();
            if !name.is_empty() {
                each(name);
            }
        }
        0
    }
    let mut each: &mut dyn FnMut(&[u8]) = &mut each;
    // SAFETY: the callback reads the structure it is given and calls the closure, which outlives
    // the walk; it does not unwind (the closure only compares and copies strings).
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut each as *mut &mut dyn FnMut(&[u8]) as *mut c_void) };
}

/// The identity of the file at `path` (`stat`: it tells whether a file changed, never that one
/// is absent), or `None` when it cannot be had. Asked once per API call (see `call_files`).
pub fn file_identity(path: &str) -> Option<FileIdentity> {
    stat_once(path.as_bytes()).ok().map(|st| FileIdentity::of(&st))
}

/// Whether `path` is a directory (`stat`); `false` when that cannot be told.
pub fn is_directory(path: &str) -> bool {
    stat(path).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// What `stat` says of `path`, or its `errno`.
pub(crate) fn stat(path: &str) -> Result<lfs::Stat, i32> {
    stat_bytes(path.as_bytes())
}

/// [`stat`] of a path given as bytes, asked once per API call (see `call_files`).
pub(crate) fn stat_once(path: &[u8]) -> Result<lfs::Stat, i32> {
    call_files::stat(path, stat_bytes)
}

/// [`stat`] of a path given as bytes (a file name need not be UTF-8).
fn stat_bytes(path: &[u8]) -> Result<lfs::Stat, i32> {
    // SAFETY: stat with a NUL-terminated path into a zeroed buffer.
    with_c_bytes(path, |c_path| unsafe {
        let mut st: lfs::Stat = std::mem::zeroed();
        if lfs::stat(c_path.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO));
        }
        Ok(st)
    })
    .unwrap_or(Err(libc::EINVAL))
}

/// `f` given `path` as a C string, copied onto the stack where it fits (a warm start `stat`s some
/// thirty paths: a heap allocation each otherwise); `None` for a path holding a NUL byte. For the
/// one-path system calls (`stat`, `access`).
fn with_c_path<R>(path: &str, f: impl FnOnce(&CStr) -> R) -> Option<R> {
    with_c_bytes(path.as_bytes(), f)
}

/// [`with_c_path`] of a path given as bytes.
fn with_c_bytes<R>(path: &[u8], f: impl FnOnce(&CStr) -> R) -> Option<R> {
    const ON_STACK: usize = 256;
    if path.len() < ON_STACK {
        let mut buffer = [0u8; ON_STACK];
        buffer[..path.len()].copy_from_slice(path);
        return CStr::from_bytes_with_nul(&buffer[..=path.len()]).ok().map(f);
    }
    CString::new(path).ok().map(|c_path| f(&c_path))
}

/// Whether a file whose latest modification or change is at `seconds` (since the epoch) may be
/// taken as unchanged while those times are: a file changed again within the same tick of the
/// file system's clock keeps them, so only times two seconds in the past count (git's "racily
/// clean" rule; two seconds cover FAT's granularity).
pub(crate) fn settled_since(seconds: i64) -> bool {
    let mut now: libc::timespec = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) } != 0 {
        return false;
    }
    // `time_t`'s width differs between architectures.
    #[allow(clippy::unnecessary_cast)]
    let now = now.tv_sec as i64;
    now.saturating_sub(seconds) > 2
}

/// Up to `limit` bytes of the file at `path`, `None` when it cannot be read.
pub fn read_file(path: &str, limit: usize) -> Option<Vec<u8>> {
    OpenFile::open(path).ok()?.read(limit, None).ok()
}

/// Whether `path` is there to be read, asked with `access` (which interposers of the file system
/// see, as they see `fopen`): for probing candidate paths, where a failed `fopen` is not the
/// cheap, side-effect-free answer every interposer gives.
pub fn readable(path: &str) -> bool {
    // SAFETY: access with a NUL-terminated path.
    with_c_path(path, |c_path| unsafe { libc::access(c_path.as_ptr(), libc::R_OK) == 0 }).unwrap_or(false)
}

/// Names of the entries of a directory (`.` and `..` left out), sorted: the order `readdir` gives
/// is not deterministic. `None` if it cannot be opened. Through `opendir`/`readdir`/`closedir`,
/// never a `stat` first: a path that `stat` cannot see may still be one an interposer serves.
/// A name that is not UTF-8 is given lossily (see [`list_dir_names`] for the names themselves).
pub fn list_dir(path: &str) -> Option<Vec<String>> {
    let names = list_dir_names(path)?;
    Some(names.into_iter().map(|name| name.to_string_lossy().into_owned()).collect())
}

/// [`list_dir`], each name as the directory holds it: bytes, UTF-8 or not (a manifest's file
/// name need not be, and the Khronos loader opens it all the same), sorted by bytes. Read once
/// per API call (see `call_files`).
pub fn list_dir_names(path: &str) -> Option<Vec<OsString>> {
    call_files::list(path, || read_dir_names(path))
}

/// [`list_dir_names`], read now.
fn read_dir_names(path: &str) -> Option<Vec<OsString>> {
    let c_path = CString::new(path).ok()?;
    // SAFETY: opendir/readdir/closedir on one stream, with a NUL-terminated path; each entry's
    // name (NUL-terminated within `d_name`) is copied out before the next readdir call reuses its
    // storage.
    unsafe {
        let dir = libc::opendir(c_path.as_ptr());
        if dir.is_null() {
            return None;
        }
        let mut names = Vec::new();
        loop {
            let entry = lfs::readdir(dir);
            if entry.is_null() {
                break;
            }
            let name = CStr::from_ptr((*entry).d_name.as_ptr());
            if name != c"." && name != c".." {
                names.push(OsString::from_vec(name.to_bytes().to_vec()));
            }
        }
        libc::closedir(dir);
        // A directory's names are distinct: the unstable sort gives the stable one's order.
        crate::sort::sort(&mut names);
        Some(names)
    }
}

/// A path for logs and messages: the path itself where it is UTF-8; else each byte that is not
/// part of a UTF-8 character written `\xNN` (readable, and two different names stay different).
pub fn display_path(path: &OsStr) -> String {
    let mut out = String::with_capacity(path.len());
    for chunk in path.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// What identifies a file's current content without reading it: device, inode, size,
/// modification time and inode change time, as `fstat` on the open file gives them. The change
/// time catches a file rewritten in place with its old size and modification time put back
/// (`cp -p`, `rsync -t`, `touch -r`): no program can set it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    pub size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl FileIdentity {
    // `stat`'s field types differ between architectures (32-bit ones among them): the casts stay.
    #[allow(clippy::unnecessary_cast)]
    fn of(st: &lfs::Stat) -> FileIdentity {
        FileIdentity {
            device: st.st_dev as u64,
            inode: st.st_ino as u64,
            size: st.st_size as u64,
            modified: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            changed: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// The identity as numbers, to be digested.
    pub fn words(&self) -> [u64; 7] {
        let (m, c) = (self.modified, self.changed);
        [self.device, self.inode, self.size, m.0 as u64, m.1 as u64, c.0 as u64, c.1 as u64]
    }

    /// Whether content read now may be remembered under this identity: a file modified in the
    /// last two seconds is never taken as unchanged later (see [`settled_since`]). The change time,
    /// which cannot be set back, is not asked: a file whose old modification time was put back
    /// has a new change time, and so another identity, already.
    pub fn is_settled(&self) -> bool {
        settled_since(self.modified.0)
    }
}

/// A regular file opened for reading with `fopen`, closed when dropped. Opening first and asking
/// the open file for its identity (`fstat`) sees the file an interposer redirected the path to.
pub struct OpenFile {
    stream: *mut libc::FILE,
    /// What `fstat` said of the open file.
    st: lfs::Stat,
}

impl OpenFile {
    /// The regular file at `path`, or why not (an `io::Error`: formatted only by a caller that
    /// says it, as most of the files looked for are not there). Never waits: a FIFO, device node,
    /// socket or directory in the file's place is refused, told by `stat` before the open (opening
    /// a FIFO for reading waits for a writer; a device node may do anything) and by `fstat` after.
    /// What `fstat` says is what the rest of the API call knows of the path (see `call_files`).
    pub fn open(path: impl AsRef<OsStr>) -> Result<OpenFile, std::io::Error> {
        let path = path.as_ref().as_bytes();
        if let Ok(st) = stat_once(path) {
            not_regular(&st)?;
        }
        let c_path = CString::new(path).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "path contains NUL"))?;
        // SAFETY: fopen with NUL-terminated path and mode ('e': close on exec).
        let stream = unsafe { lfs::fopen(c_path.as_ptr(), c"rbe".as_ptr()) };
        if stream.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // Unbuffered: `read` reads straight into its vector, so the stream's own buffer (which
        // glibc sizes with an `fstat` and allocates at the first read) would only be in the way.
        // SAFETY: setvbuf on a stream just opened, before any other operation on it.
        unsafe { libc::setvbuf(stream, std::ptr::null_mut(), libc::_IONBF, 0) };
        // SAFETY: a zeroed `stat` is a valid value of the plain C structure.
        let mut file = OpenFile { stream, st: unsafe { std::mem::zeroed() } };
        // The path may have changed between the `stat` and the open, or `stat` may not see what an
        // interposer serves.
        file.st = file.fstat()?;
        not_regular(&file.st)?;
        call_files::learn(path, &file.st);
        Ok(file)
    }

    fn fstat(&self) -> Result<lfs::Stat, std::io::Error> {
        // SAFETY: fstat on the stream's descriptor into a zeroed buffer.
        unsafe {
            let mut st: lfs::Stat = std::mem::zeroed();
            if lfs::fstat(libc::fileno(self.stream), &mut st) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(st)
        }
    }

    /// The open file's identity, as `fstat` gave it when it was opened.
    pub fn identity(&self) -> Result<FileIdentity, String> {
        Ok(FileIdentity::of(&self.st))
    }

    /// Up to `limit` bytes from the current position (fewer at the end of the file), read
    /// straight into the returned vector; `size_hint` (the size `identity` gave) sizes it.
    pub fn read(&mut self, limit: usize, size_hint: Option<u64>) -> Result<Vec<u8>, String> {
        let first = size_hint.map_or(4096, |n| n as usize + 1).clamp(1, limit.max(1));
        let mut out: Vec<u8> = Vec::with_capacity(first);
        // SAFETY: fread writes at most the spare capacity it is given, and the length grows by
        // exactly what it wrote.
        unsafe {
            while out.len() < limit {
                if out.capacity() == out.len() {
                    out.reserve(out.capacity().min(limit - out.len()));
                }
                let room = limit - out.len();
                let spare = out.spare_capacity_mut();
                let wanted = spare.len().min(room);
                let n = libc::fread(spare.as_mut_ptr() as *mut c_void, 1, wanted, self.stream);
                out.set_len(out.len() + n);
                if n < wanted {
                    if libc::ferror(self.stream) != 0 {
                        return Err("read error".to_string());
                    }
                    break;
                }
            }
        }
        Ok(out)
    }
}

impl Drop for OpenFile {
    fn drop(&mut self) {
        // SAFETY: the stream came from fopen and is closed once.
        unsafe { libc::fclose(self.stream) };
    }
}

/// `Ok` for a regular file; for anything else, an error naming what is there instead.
fn not_regular(st: &lfs::Stat) -> Result<(), std::io::Error> {
    let what = match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => return Ok(()),
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        libc::S_IFDIR => "a directory",
        _ => "not a file",
    };
    Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("not a regular file ({what})")))
}

/// A library opened with `dlopen`; closed when dropped.
pub struct Library {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle may be used from any thread.
unsafe impl Send for Library {}
// SAFETY: dlsym and dlclose are thread-safe, and `Library` has no other state.
unsafe impl Sync for Library {}

impl Library {
    /// Opens `path` as the Khronos loader opens it, each symbol of the library and of its
    /// dependencies bound at its first call (`RTLD_LAZY`): binding all of a driver's symbols up
    /// front (`RTLD_NOW`) was the whole of the gap to the Khronos loader's start-up on a miss
    /// (issue 49: with `LD_BIND_NOW=1` for both, 0.99). A symbol nothing defines then ends the
    /// process at its first call, as it does under the Khronos loader (docs/compatibility.md).
    pub fn open(path: &str) -> Result<Library, String> {
        let c_path = CString::new(path).map_err(|_| "path contains NUL".to_string())?;
        // SAFETY: dlopen with a NUL-terminated path; dlerror read right after.
        let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(dlerror());
        }
        Ok(Library { handle })
    }

    /// The address of the function `name` exports, as a function of no arguments: the caller
    /// casts it to the type the symbol's contract names before calling it.
    pub fn symbol(&self, name: &CStr) -> Option<unsafe extern "system" fn()> {
        // SAFETY: dlsym on a live handle; a non-null result is a function address in the library.
        let ptr = unsafe { libc::dlsym(self.handle, name.as_ptr()) };
        // SAFETY: a non-NULL function address fits a function pointer (same size on the platforms
        // dlsym serves); calling it is `unsafe` and its caller names the real signature.
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
        // SAFETY: a non-NULL result of dlerror is a NUL-terminated message, valid until the next
        // dl* call on this thread; it is copied at once.
        unsafe { CStr::from_ptr(msg) }.to_string_lossy().into_owned()
    }
}

/// Appends `text` to the file at `path` (created if missing) with `fopen`/`fwrite`.
pub fn append_to_file(path: &str, text: &str) -> Result<(), String> {
    let c_path = CString::new(path).map_err(|_| format!("{path}: the path holds a NUL byte"))?;
    // SAFETY: fopen with NUL-terminated arguments; the stream is closed below.
    let file = unsafe { lfs::fopen(c_path.as_ptr(), c"a".as_ptr()) };
    if file.is_null() {
        return Err(format!("{path}: cannot open for appending: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: a buffer of the given length, an open stream.
    let written = unsafe { libc::fwrite(text.as_ptr() as *const c_void, 1, text.len(), file) };
    // SAFETY: closed once.
    let closed = unsafe { libc::fclose(file) } == 0;
    if written != text.len() || !closed {
        return Err(format!("{path}: could not write: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The running executable's path, for the override layer's `app_keys` (read once: a process's
/// executable does not change).
pub fn executable_path() -> Option<String> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(path) = EXPLAINED_AS.get() {
        return Some(path.clone());
    }
    host_alloc::with_system_allocator(|| PATH.get_or_init(read_executable_path).clone())
}

/// The executable `vk-loader explain --as` decides for, in place of the process's own.
static EXPLAINED_AS: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Makes the process decide as the executable at `path` would where the executable decides: the
/// settings file's `app_keys`, the override layer's `app_keys` and the driver cache's application
/// read `path` ([`executable_path`], [`started_as`]); the names drivers match their application
/// profiles by are set to it (glibc's `program_invocation_name`, which Mesa's driconf reads, and
/// the kernel's `comm`, which NVIDIA's profiles match). For `vk-loader explain --as` alone.
///
/// # Safety
/// Called on the main thread before any other thread exists (nothing may read glibc's pointers
/// while they are written) and before the loader is first used.
pub unsafe fn explain_as(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err(format!("{path}: not an absolute path (an executable is named by its path, as the settings file's app_keys name it)"));
    }
    let name = CString::new(path).map_err(|_| format!("{path:?}: a path with a NUL byte"))?;
    let short = path.rsplit('/').next().unwrap_or(path);
    let comm = CString::new(short.as_bytes()[..short.len().min(15)].to_vec()).map_err(|_| format!("{path:?}: a path with a NUL byte"))?;
    EXPLAINED_AS.set(path.to_string()).map_err(|_| "the executable to explain as is set already".to_string())?;
    // The process's names live as long as it does.
    let name: &'static CStr = Box::leak(name.into_boxed_c_str());
    let short_offset = path.len() - short.len();
    // SAFETY: the caller's promise: no other thread exists, so nothing reads glibc's two pointers
    // while they are written; they are pointed at a NUL-terminated string leaked for the life of
    // the process (the short name at its last component, as glibc sets it); PR_SET_NAME reads a
    // NUL-terminated string of at most 16 bytes.
    unsafe {
        program_invocation_name = name.as_ptr();
        program_invocation_short_name = name.as_ptr().add(short_offset);
        libc::prctl(libc::PR_SET_NAME, comm.as_ptr());
    }
    Ok(())
}

fn read_executable_path() -> Option<String> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: readlink into a buffer of the size given.
    let n = unsafe { libc::readlink(c"/proc/self/exe".as_ptr(), buf.as_mut_ptr() as *mut c_char, buf.len()) };
    (n > 0).then(|| String::from_utf8_lossy(&buf[..n as usize]).into_owned())
}

/// The path the process was started by (`AT_EXECFN`, what `execve` was given, made absolute with
/// the working directory of the moment), read once: a name for the application that costs no
/// system call, where [`executable_path`]'s `readlink` of `/proc/self/exe` costs a fresh process
/// some 30 us. Not resolved through symbolic links (a link and its target are two names). Where
/// the process was started by a descriptor (`fexecve`: `/dev/fd/N`), [`executable_path`].
pub fn started_as() -> Option<String> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if let Some(path) = EXPLAINED_AS.get() {
        return Some(path.clone());
    }
    host_alloc::with_system_allocator(|| PATH.get_or_init(read_started_as).clone())
}

/// The name the process was invoked by (`argv[0]`, which `exec -a` and Wine choose freely): Mesa's
/// driconf matches applications by it.
pub fn invocation_name() -> String {
    // SAFETY: glibc sets the pointer before constructors run; it is NULL or a NUL-terminated
    // string that lives as long as the process.
    unsafe {
        let p = program_invocation_name;
        if p.is_null() { String::new() } else { CStr::from_ptr(p).to_string_lossy().into_owned() }
    }
}

/// The process's name as the kernel keeps it (`comm` of its main thread, which
/// `prctl(PR_SET_NAME)` changes): NVIDIA's application profiles match it. On the main thread
/// through `prctl`, no file opened; on another thread (whose own name `prctl` would give) from
/// `/proc/self/comm`.
pub fn process_name() -> String {
    // SAFETY: getpid and gettid have no preconditions.
    if unsafe { libc::getpid() != libc::gettid() } {
        let comm = read_file("/proc/self/comm", 64).unwrap_or_default();
        return String::from_utf8_lossy(&comm).trim_end_matches('\n').to_string();
    }
    let mut name = [0u8; 16];
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated, into the buffer.
    if unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) } != 0 {
        return String::new();
    }
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    String::from_utf8_lossy(&name[..len]).into_owned()
}

/// The machine's memory in bytes (`sysinfo`): a driver may size its heaps from it (lavapipe does).
pub fn total_memory() -> u64 {
    // SAFETY: sysinfo fills the zeroed struct it is given.
    unsafe {
        let mut info: libc::sysinfo = std::mem::zeroed();
        if libc::sysinfo(&mut info) != 0 {
            return 0;
        }
        (info.totalram as u64).saturating_mul(info.mem_unit.max(1) as u64)
    }
}

/// Whether the process may open `path` for reading and writing (`access`, no open).
pub fn read_writable(path: &str) -> bool {
    // SAFETY: access with a NUL-terminated path.
    with_c_path(path, |c_path| unsafe { libc::access(c_path.as_ptr(), libc::R_OK | libc::W_OK) == 0 }).unwrap_or(false)
}

fn read_started_as() -> Option<String> {
    // SAFETY: getauxval has no preconditions; AT_EXECFN, when given, points to a NUL-terminated
    // string on the initial stack, which lives as long as the process.
    let name = unsafe {
        let p = libc::getauxval(libc::AT_EXECFN) as *const c_char;
        (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
    };
    match name {
        Some(name) if name.starts_with("/dev/fd/") || name.starts_with("/proc/") => read_executable_path(),
        Some(name) if name.starts_with('/') => Some(name),
        Some(name) => Some(std::env::current_dir().ok()?.join(name).to_string_lossy().into_owned()),
        None => read_executable_path(),
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

/// Whether `text` matches the POSIX extended regular expression `pattern`, as Mesa's driconf
/// matches its `executable_regexp`, `application_name_match` and `engine_name_match` (libc's
/// `regcomp` with `REG_EXTENDED | REG_NOSUB`, then `regexec`): `None` where the pattern does not
/// compile (or either holds a NUL byte).
pub fn regex_matches(pattern: &str, text: &str) -> Option<bool> {
    let (pattern, text) = (CString::new(pattern).ok()?, CString::new(text).ok()?);
    let mut compiled = std::mem::MaybeUninit::<libc::regex_t>::uninit();
    // SAFETY: regcomp initializes the regex_t it is given from a NUL-terminated pattern; on
    // failure it leaves nothing to free.
    if unsafe { libc::regcomp(compiled.as_mut_ptr(), pattern.as_ptr(), libc::REG_EXTENDED | libc::REG_NOSUB) } != 0 {
        return None;
    }
    // SAFETY: regcomp succeeded, so the regex_t is initialized; regexec with no match array
    // (REG_NOSUB) reads a NUL-terminated text; regfree releases what regcomp allocated, once.
    unsafe {
        let matched = libc::regexec(compiled.as_ptr(), text.as_ptr(), 0, std::ptr::null_mut(), 0) == 0;
        libc::regfree(compiled.as_mut_ptr());
        Some(matched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_reach_c_whole_on_the_stack_or_not_and_a_nul_is_refused() {
        for len in [0, 1, 254, 255, 256, 257, 4000] {
            let path = "a".repeat(len);
            assert_eq!(with_c_path(&path, |c| c.to_bytes().to_vec()), Some(path.clone().into_bytes()), "{len} bytes");
        }
        assert_eq!(with_c_path("/a\0b", |_| ()), None);
        assert_eq!(with_c_path(&format!("{}\0", "a".repeat(300)), |_| ()), None);
        assert_eq!(stat("/a\0b").err(), Some(libc::EINVAL));
        let deep = format!("/{}", ["x"; 200].join("/"));
        assert_eq!(stat(&deep).err(), Some(libc::ENOENT), "a path too long for the stack is still asked");
        assert!(stat("/").is_ok());
    }

    #[test]
    fn the_path_the_process_was_started_by_names_its_executable() {
        let started = started_as().expect("AT_EXECFN");
        assert!(started.starts_with('/'), "{started}");
        assert_eq!(std::fs::canonicalize(&started).unwrap(), std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap());
    }

    #[test]
    fn loaded_libraries_are_found_by_name_path_and_other_path_to_the_same_file() {
        let libc_path = object_path_of(libc::getpid as *const c_void).expect("the C library's path");
        assert!(is_loaded(&libc_path), "{libc_path}");
        assert!(is_loaded("libc.so.6"));
        // The same file by another path (a directory's link, as /lib for /usr/lib on merged-/usr systems).
        let dir = std::env::temp_dir().join(format!("is-loaded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("lib");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(std::path::Path::new(&libc_path).parent().unwrap(), &link).unwrap();
        let other_path = format!("{}/{}", link.display(), libc_path.rsplit('/').next().unwrap());
        assert!(is_loaded(&other_path), "{other_path}");
        // A file of the same name that is another file; names nothing loaded.
        std::fs::write(dir.join(libc_path.rsplit('/').next().unwrap()), b"not a library").unwrap();
        assert!(!is_loaded(&format!("{}/{}", dir.display(), libc_path.rsplit('/').next().unwrap())));
        assert!(!is_loaded("/nonexistent/libvulkan_none.so") && !is_loaded("libvulkan_none.so.1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn env_reads_short_and_long_names() {
        let long = format!("LOADER_TEST_{}", "L".repeat(200));
        // SAFETY: this test's own variables; nothing else here reads them.
        unsafe {
            std::env::set_var("LOADER_TEST_SHORT", "short");
            std::env::set_var(&long, "long");
        }
        let secure = |name| read_env(name, secure_getenv);
        assert_eq!(secure("LOADER_TEST_SHORT").as_deref(), Some("short"));
        assert_eq!(secure(&long).as_deref(), Some("long"));
        assert_eq!(secure("LOADER_TEST_UNSET"), None);
        assert_eq!(secure("LOADER\0TEST"), None);
        assert_eq!(manifest_variable("LOADER_TEST_SHORT").as_deref(), Some("short"));
        assert_eq!(manifest_variable("LOADER_TEST_UNSET"), None);
    }

    #[test]
    fn the_process_name_is_the_main_thread_s_on_every_thread() {
        let main = std::thread::spawn(process_name);
        let here = process_name();
        // The test harness runs tests on threads of their own: both read /proc/self/comm, or
        // prctl on the main thread; the process's name either way.
        let comm = String::from_utf8_lossy(&read_file("/proc/self/comm", 64).unwrap()).trim_end().to_string();
        assert_eq!(main.join().unwrap(), comm);
        assert_eq!(here, comm);
        assert!(!comm.is_empty());
    }

    #[test]
    fn declared_variables_are_read_as_declared() {
        use crate::reference::{Group, Origin, Read, Variable};
        let declared = |read| Variable { name: "LOADER_TEST_DECLARED", group: Group::Testing, origin: Origin::Test, read, values: "-", default: "-", what: "-" };
        // SAFETY: this test's own variable.
        unsafe { std::env::set_var("LOADER_TEST_DECLARED", "") };
        assert_eq!(declared(Read::Secure).get(), None, "empty is unset");
        assert_eq!(declared(Read::Plain).get(), None, "empty is unset");
        assert_eq!(declared(Read::SecureEvenEmpty).get().as_deref(), Some(""), "set and empty");
        // SAFETY: this test's own variable.
        unsafe { std::env::set_var("LOADER_TEST_DECLARED", "x") };
        assert!(declared(Read::Secure).is_set() && declared(Read::Plain).is_set());
    }

    #[test]
    fn read_file_returns_every_byte_whatever_the_size() {
        let dir = std::env::temp_dir().join(format!("loader-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Empty, below, at and across the first buffer size, with the right size hinted, a
        // wrong one (the file changed since its fstat) and none.
        for len in [0usize, 152, 4096, 4097, 8192, 100_000] {
            let path = dir.join(format!("f{len}"));
            let content: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(&path, &content).unwrap();
            let path = path.to_str().unwrap();
            for hint in [Some(len as u64), Some(len as u64 / 2), Some(len as u64 + 10), None] {
                let mut file = OpenFile::open(path).unwrap();
                assert_eq!(file.identity().unwrap().size, len as u64);
                assert_eq!(file.read(usize::MAX, hint).unwrap(), content, "{len} bytes, {hint:?} hinted");
            }
            let mut file = OpenFile::open(path).unwrap();
            assert_eq!(file.read(64, None).unwrap(), content[..len.min(64)], "the first 64 of {len} bytes");
        }
        assert!(OpenFile::open(dir.join("missing").to_str().unwrap()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_just_written_is_not_settled() {
        let path = std::env::temp_dir().join(format!("loader-settled-{}", std::process::id()));
        std::fs::write(&path, b"{}").unwrap();
        let file = OpenFile::open(path.to_str().unwrap()).unwrap();
        assert!(!file.identity().unwrap().is_settled());
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let file = OpenFile::open(path.to_str().unwrap()).unwrap();
        assert!(file.identity().unwrap().is_settled());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn list_dir_returns_every_name_sorted_across_several_reads() {
        let dir = std::env::temp_dir().join(format!("loader-list-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.to_str().unwrap().to_string();
        assert_eq!(list_dir(&path), Some(Vec::new()));
        // Some 40 KiB of records: more than one getdents buffer of readdir's.
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

    #[test]
    fn names_that_are_not_utf8_are_listed_and_opened_as_bytes() {
        let dir = std::env::temp_dir().join(format!("loader-list-dir-bytes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let latin1 = OsStr::from_bytes(b"caf\xe9.json");
        std::fs::write(dir.join(latin1), b"{}").unwrap();
        std::fs::write(dir.join("plain.json"), b"[]").unwrap();
        let path = dir.to_str().unwrap();
        assert_eq!(list_dir_names(path), Some(vec![OsString::from_vec(b"caf\xe9.json".to_vec()), OsString::from("plain.json")]));
        // The names themselves open the files; the lossy names of `list_dir` cannot.
        let mut full = dir.clone().into_os_string();
        full.push("/");
        full.push(latin1);
        assert_eq!(OpenFile::open(&full).unwrap().read(16, None).unwrap(), b"{}");
        assert_eq!(list_dir(path).unwrap()[0], "caf\u{fffd}.json");
        assert!(OpenFile::open(format!("{path}/caf\u{fffd}.json")).is_err());
        // Shown readably, and two names stay two.
        assert_eq!(display_path(&full), format!("{path}/caf\\xE9.json"));
        assert_ne!(display_path(OsStr::from_bytes(b"\xe9")), display_path(OsStr::from_bytes(b"\xe8")));
        assert_eq!(display_path(OsStr::new("/ok/caf\u{e9}.json")), "/ok/caf\u{e9}.json");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

