//! What earlier processes found when they looked at the file system (a directory's names, a
//! file's bytes and identity, whether a path is readable), each with the stamp that stood for it
//! (`stamps::Witness`), so that a fresh process's first calls need not look again: a look whose
//! witness still holds (one `stat`, see `Ledger::confirm`) is answered from here, and its witness
//! becomes the process's own stamp for the path. Without it, a fresh process's first call lists
//! every search directory and opens and reads every manifest (with Debian's Mesa drivers and
//! layers, some 100 of the 175 system calls of a warm start-up probe).
//!
//! A witness holds only while its path has the very stamp it had (device, inode, type and
//! permissions, owner, size, modification and change times, settled two seconds before it was
//! taken): a look answered from here is one the file system would answer alike now. Only looks
//! made under a trusted stamp are kept (never `/proc`, `/sys`, `/dev`, network or FUSE file
//! systems, relative paths, or anything changed in the last two seconds), and never in a process
//! that reuses nothing (`watch::disabled`). Whether a path is readable also depends on who asks:
//! the file is for one set of credentials (a process of other ones ignores it).
//!
//! The file is `looks` beside the driver cache's (`$XDG_CACHE_HOME/vulkan-loader-rs/`), written
//! with it (replaced whole, mode 0600) when this process looked at something the file did not
//! answer; `VK_LOADER_DRIVER_CACHE=off` (or `verify`) neither reads nor writes it. It is a cache:
//! a file that is missing, damaged or of another format is ignored and replaced.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::Mutex;

use super::host_alloc::with_system_allocator;
use super::stamps::Witness;
use super::FileIdentity;

/// What was looked at.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Kind {
    /// A directory's names (`list_dir`).
    Listing = 1,
    /// Whether a path is readable (`readable`).
    Readable = 2,
    /// A file's identity (`file_identity`).
    Identity = 3,
    /// A manifest's identity and bytes (`ParseCache`).
    File = 4,
    /// The file a library path (or bare name) opened, where all its symbols and its dependencies'
    /// were bound when it was (`Library::open`).
    Bound = 5,
    /// An implicit layer manifest's identity and what this build of the loader made of it
    /// (`ParseCache::get_remembered`).
    ImplicitLayerManifest = 6,
    /// The same of an explicit layer manifest (read otherwise: implicit layers must have a
    /// `disable_environment`).
    ExplicitLayerManifest = 7,
    /// The same of a driver manifest.
    DriverManifest = 8,
}

impl Kind {
    fn from_u8(n: u8) -> Option<Kind> {
        [Kind::Listing, Kind::Readable, Kind::Identity, Kind::File, Kind::Bound, Kind::ImplicitLayerManifest, Kind::ExplicitLayerManifest, Kind::DriverManifest]
            .into_iter().find(|k| *k as u8 == n)
    }
}

/// A value a look found, as this file keeps it.
pub trait Persist: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(r: &mut Reader) -> Option<Self>;
}

/// `Persist` for a struct, field by field in the order listed: every field must be listed (the
/// destructuring and the struct literal fail to compile otherwise), so a field added to the
/// struct is never left to a default in what later processes read.
macro_rules! persist_fields {
    ($ty:ident { $($field:ident),+ $(,)? }) => {
        impl $crate::platform::looks::Persist for $ty {
            fn put(&self, out: &mut Vec<u8>) {
                let Self { $($field),+ } = self;
                $( $crate::platform::looks::Persist::put($field, out); )+
            }
            fn take(r: &mut $crate::platform::looks::Reader) -> Option<Self> {
                Some(Self { $($field: $crate::platform::looks::Persist::take(r)?),+ })
            }
        }
    };
}
pub(crate) use persist_fields;

impl Persist for bool {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn take(r: &mut Reader) -> Option<bool> {
        match r.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Persist for String {
    fn put(&self, out: &mut Vec<u8>) {
        put_bytes(out, self.as_bytes());
    }
    fn take(r: &mut Reader) -> Option<String> {
        String::from_utf8(r.bytes()?.to_vec()).ok()
    }
}

impl Persist for FileIdentity {
    fn put(&self, out: &mut Vec<u8>) {
        for word in self.words() {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    fn take(r: &mut Reader) -> Option<FileIdentity> {
        let [device, inode, size, seconds, nanoseconds] = [r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?];
        Some(FileIdentity { device, inode, size, modified: (seconds as i64, nanoseconds as i64) })
    }
}

/// A file's identity and what was made of it, by this very build of the loader (another build
/// may make something else of the same bytes, or encode it otherwise).
pub struct Parsed<T> {
    pub identity: FileIdentity,
    pub value: T,
}

fn put_parsed_header(out: &mut Vec<u8>, identity: &FileIdentity) {
    put_bytes(out, env!("VK_LOADER_SOURCE_DIGEST").as_bytes());
    identity.put(out);
}

impl<T: Persist> Persist for Parsed<T> {
    fn put(&self, out: &mut Vec<u8>) {
        put_parsed_header(out, &self.identity);
        self.value.put(out);
    }
    fn take(r: &mut Reader) -> Option<Parsed<T>> {
        if r.bytes()? != env!("VK_LOADER_SOURCE_DIGEST").as_bytes() {
            return None;
        }
        Some(Parsed { identity: FileIdentity::take(r)?, value: T::take(r)? })
    }
}

impl Persist for u32 {
    fn put(&self, out: &mut Vec<u8>) {
        put_u32(out, *self);
    }
    fn take(r: &mut Reader) -> Option<u32> {
        r.u32()
    }
}

/// A count, then each item.
impl<T: Persist> Persist for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        put_u32(out, self.len() as u32);
        for item in self {
            item.put(out);
        }
    }
    fn take(r: &mut Reader) -> Option<Vec<T>> {
        let count = r.u32()? as usize;
        let mut list = Vec::with_capacity(count.min(r.0.len()));
        for _ in 0..count {
            list.push(T::take(r)?);
        }
        Some(list)
    }
}

/// Whether there is one, then it.
impl<T: Persist> Persist for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.is_some() as u8);
        if let Some(value) = self {
            value.put(out);
        }
    }
    fn take(r: &mut Reader) -> Option<Option<T>> {
        match r.u8()? {
            0 => Some(None),
            1 => Some(Some(T::take(r)?)),
            _ => None,
        }
    }
}

/// A parse, or why there is none.
impl<T: Persist> Persist for Result<T, String> {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Ok(value) => {
                out.push(0);
                value.put(out);
            }
            Err(why) => {
                out.push(1);
                put_bytes(out, why.as_bytes());
            }
        }
    }
    fn take(r: &mut Reader) -> Option<Result<T, String>> {
        match r.u8()? {
            0 => Some(Ok(T::take(r)?)),
            1 => Some(Err(String::take(r)?)),
            _ => None,
        }
    }
}

/// A manifest as read: its identity (`fstat` of the file opened) and its bytes.
pub struct FileLook {
    pub identity: FileIdentity,
    pub bytes: Vec<u8>,
}

impl Persist for FileLook {
    fn put(&self, out: &mut Vec<u8>) {
        self.identity.put(out);
        put_bytes(out, &self.bytes);
    }
    fn take(r: &mut Reader) -> Option<FileLook> {
        Some(FileLook { identity: FileIdentity::take(r)?, bytes: r.bytes()?.to_vec() })
    }
}

/// Files larger than this are not kept (manifests are a few KiB; the validation layer's, with
/// its settings, some 200 KiB, and read only when that layer is asked for).
pub const MAX_FILE_BYTES: usize = 256 * 1024;
/// Bounds of the file (read whole by every process that uses it): past them, the looks this
/// process made or used are kept first.
const MAX_LOOKS: usize = 1024;
const MAX_TOTAL_BYTES: usize = 1 << 20;
const MAGIC: &[u8; 8] = b"VKLDLOOK";
const FORMAT_VERSION: u32 = 1;

/// One look: its witness and the value found, encoded.
#[derive(Clone, Debug, PartialEq)]
struct Look {
    witness: Witness,
    value: Vec<u8>,
}

type Looks = BTreeMap<(Kind, String), Look>;

/// The file as read, its looks indexed by kind and path: a look is decoded when it is asked for
/// (decoding them all, a string or two each, was some 50 us of a fresh process's first call).
#[derive(Default)]
struct Earlier {
    bytes: Vec<u8>,
    /// Sorted by kind and path.
    index: Vec<Entry>,
}

impl Earlier {
    fn of(bytes: Vec<u8>) -> Earlier {
        let mut index = entries(&bytes).unwrap_or_default();
        // Stable: of two looks at one path (which `encode` never writes), the later one is found.
        index.sort_by(|a, b| (a.kind, &bytes[a.path.clone()]).cmp(&(b.kind, &bytes[b.path.clone()])));
        Earlier { bytes, index }
    }

    /// The look by `kind` at `path`: its witness and its value, decoded from the file's bytes.
    fn get<T: Persist>(&self, kind: Kind, path: &str) -> Option<(Witness, T)> {
        let key = (kind, path.as_bytes());
        let end = self.index.partition_point(|e| (e.kind, &self.bytes[e.path.clone()]) <= key);
        let entry = self.index[..end].last().filter(|e| (e.kind, &self.bytes[e.path.clone()]) == key)?;
        let value = T::take(&mut Reader(&self.bytes[entry.value.clone()]))?;
        Some((entry.witness(&self.bytes), value))
    }

    /// Every look, decoded.
    fn all(&self) -> Looks {
        self.index.iter().map(|e| ((e.kind, String::from_utf8_lossy(&self.bytes[e.path.clone()]).into_owned()), e.look(&self.bytes))).collect()
    }
}

#[derive(Default)]
struct State {
    /// The file's looks, read at the first need (`None` until then).
    earlier: Option<Earlier>,
    /// Looks this process made that the file did not answer, to be written.
    found: Looks,
    /// The file's looks that answered this process (kept first when the file is written).
    used: BTreeSet<(Kind, String)>,
}

static STATE: Mutex<State> = Mutex::new(State { earlier: None, found: BTreeMap::new(), used: BTreeSet::new() });

/// The look by `kind` at `path` that [`earlier`] gave answered this process (its witness held).
pub(super) fn answered(kind: Kind, path: &str) {
    with_system_allocator(|| {
        if let Ok(mut state) = STATE.lock() {
            state.used.insert((kind, path.to_string()));
        }
    });
}

/// Whether this process reads and writes the file (decided once).
fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| {
        let cache = super::plain_env("VK_LOADER_DRIVER_CACHE").map(|v| v.to_ascii_lowercase());
        !super::elevated() && !matches!(cache.as_deref(), Some("off" | "0" | "false" | "no" | "verify")) && super::watch::disabled().is_none()
    })
}

/// The file: `looks` in the loader's cache directory.
pub fn file_path() -> Option<String> {
    super::cache_directory().map(|dir| format!("{dir}/looks"))
}

/// What an earlier process found by `kind` at `path`, with the witness that stood for it.
pub(super) fn earlier<T: Persist>(kind: Kind, path: &str) -> Option<(Witness, T)> {
    if !enabled() {
        return None;
    }
    with_system_allocator(|| {
        let mut state = STATE.lock().ok()?;
        state.earlier.get_or_insert_with(read).get(kind, path)
    })
}

/// Keeps what this process found by `kind` at `path` under `witness`, for the next processes.
pub(super) fn found<T: Persist>(kind: Kind, path: &str, witness: Witness, value: &T) {
    found_encoded(kind, path, witness, |out| value.put(out))
}

/// [`found`] for a parse of the file at `path` of identity `identity` (read back as [`Parsed`]).
pub(super) fn found_parsed<T: Persist>(kind: Kind, path: &str, witness: Witness, identity: FileIdentity, value: &T) {
    found_encoded(kind, path, witness, |out| {
        put_parsed_header(out, &identity);
        value.put(out)
    })
}

fn found_encoded(kind: Kind, path: &str, witness: Witness, put: impl FnOnce(&mut Vec<u8>)) {
    if !enabled() || witness.stamp.is_none() {
        return;
    }
    with_system_allocator(|| {
        let mut encoded = Vec::new();
        put(&mut encoded);
        if let Ok(mut state) = STATE.lock() {
            state.found.insert((kind, path.to_string()), Look { witness, value: encoded });
        }
    });
}

/// Writes the file when this process found anything it did not answer: its looks and the
/// earlier ones. Called where the driver cache is written, in the mode that decides whether it is.
/// Says how many of the file's looks answered this process so far, and how many new ones were
/// written.
pub fn save() -> Result<(usize, usize), String> {
    if !enabled() {
        return Ok((0, 0));
    }
    with_system_allocator(|| {
        let Some(path) = file_path() else { return Ok((0, 0)) };
        let (bytes, answered, new) = {
            let Ok(mut state) = STATE.lock() else { return Ok((0, 0)) };
            let answered = state.used.len();
            if state.found.is_empty() {
                return Ok((answered, 0));
            }
            let found = std::mem::take(&mut state.found);
            let new = found.len();
            let mut first: BTreeSet<(Kind, String)> = found.keys().cloned().collect();
            first.extend(state.used.iter().cloned());
            let mut all = state.earlier.get_or_insert_with(read).all();
            all.extend(found);
            let bytes = encode(&all, &first);
            // What is written is what a later call of this process finds.
            state.earlier = Some(Earlier::of(bytes.clone()));
            (bytes, answered, new)
        };
        let Some(dir) = path.rsplit_once('/').map(|(d, _)| d) else { return Ok((answered, 0)) };
        super::write::create_dir_all(dir, 0o700).and_then(|()| super::write::replace_file(&path, &bytes)).map(|()| (answered, new))
    })
}

/// The file's looks; none when it is missing, damaged, of another format or of other credentials.
fn read() -> Earlier {
    let Some(path) = file_path() else { return Earlier::default() };
    let Ok(mut file) = super::OpenFile::open(&path) else { return Earlier::default() };
    let size = file.identity().ok().map(|id| id.size);
    file.read(MAX_TOTAL_BYTES + 1, size).map(Earlier::of).unwrap_or_default()
}

/// The process's credentials, which decide what `access` and `open` answer.
fn credentials() -> u64 {
    // SAFETY: the get*id calls have no preconditions; getgroups writes at most the count given
    // (asked first with a count of 0).
    unsafe {
        let ids = [libc::getuid(), libc::geteuid(), libc::getgid(), libc::getegid()];
        let mut groups = vec![0 as libc::gid_t; libc::getgroups(0, std::ptr::null_mut()).max(0) as usize];
        let n = libc::getgroups(groups.len() as i32, groups.as_mut_ptr());
        groups.truncate(n.max(0) as usize);
        let d = super::digest::Digest::default().numbers(&ids.map(u64::from));
        d.numbers(&groups.iter().map(|&g| u64::from(g)).collect::<Vec<_>>()).value()
    }
}

/// The file: magic, format, credentials, body length, checksum, then the body: the count of
/// looks and each one's kind, path, witness (path, stamp) and value. Within the bounds, the looks
/// of `first`, then the others.
fn encode(looks: &Looks, first: &BTreeSet<(Kind, String)>) -> Vec<u8> {
    let mut body = Vec::new();
    let mut kept = 0u32;
    let count_at = body.len();
    put_u32(&mut body, 0);
    let in_order = looks.iter().filter(|(key, _)| first.contains(key)).chain(looks.iter().filter(|(key, _)| !first.contains(key)));
    for ((kind, path), look) in in_order {
        if kept as usize >= MAX_LOOKS || body.len() + look.value.len() + path.len() + look.witness.path.len() + 128 > MAX_TOTAL_BYTES {
            break;
        }
        let Some(stamp) = look.witness.stamp else { continue };
        body.push(*kind as u8);
        put_bytes(&mut body, path.as_bytes());
        put_bytes(&mut body, look.witness.path.as_bytes());
        for word in stamp {
            body.extend_from_slice(&word.to_le_bytes());
        }
        put_bytes(&mut body, &look.value);
        kept += 1;
    }
    body[count_at..count_at + 4].copy_from_slice(&kept.to_le_bytes());
    let mut file = Vec::with_capacity(body.len() + 32);
    file.extend_from_slice(MAGIC);
    put_u32(&mut file, FORMAT_VERSION);
    file.extend_from_slice(&credentials().to_le_bytes());
    put_u32(&mut file, body.len() as u32);
    file.extend_from_slice(&super::digest::checksum(&body).to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// Reads what [`encode`] wrote; `None` for anything else.
fn decode(bytes: &[u8]) -> Option<Looks> {
    entries(bytes)?;
    Some(Earlier::of(bytes.to_vec()).all())
}

/// One look as the file has it: where its path, its witness's path and its value lie.
struct Entry {
    kind: Kind,
    path: Range<usize>,
    witness_path: Range<usize>,
    stamp: [i64; 10],
    value: Range<usize>,
}

impl Entry {
    fn witness(&self, bytes: &[u8]) -> Witness {
        // Checked to be UTF-8 when the file was read.
        let witness_path = String::from_utf8_lossy(&bytes[self.witness_path.clone()]).into_owned();
        Witness { path: witness_path, stamp: Some(self.stamp) }
    }

    fn look(&self, bytes: &[u8]) -> Look {
        Look { witness: self.witness(bytes), value: bytes[self.value.clone()].to_vec() }
    }
}

/// The looks of a file [`encode`] wrote, every part checked, located rather than copied; `None`
/// for anything else.
fn entries(bytes: &[u8]) -> Option<Vec<Entry>> {
    let mut r = Reader(bytes);
    if r.take(8)? != MAGIC || r.u32()? != FORMAT_VERSION || r.u64()? != credentials() {
        return None;
    }
    let length = r.u32()? as usize;
    let checksum = r.u64()?;
    if r.0.len() != length || super::digest::checksum(r.0) != checksum {
        return None;
    }
    let count = r.u32()? as usize;
    if count > MAX_LOOKS {
        return None;
    }
    // Where a part just read lies in `bytes`.
    let range = |part: &[u8]| {
        let start = part.as_ptr() as usize - bytes.as_ptr() as usize;
        start..start + part.len()
    };
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        let kind = Kind::from_u8(r.u8()?)?;
        let path = std::str::from_utf8(r.bytes()?).ok()?.as_bytes();
        let witness_path = std::str::from_utf8(r.bytes()?).ok()?.as_bytes();
        let mut stamp = [0i64; 10];
        for word in &mut stamp {
            *word = r.u64()? as i64;
        }
        let value = r.bytes()?;
        entries.push(Entry { kind, path: range(path), witness_path: range(witness_path), stamp, value: range(value) });
    }
    r.0.is_empty().then_some(entries)
}

/// The fuzz target's entry (`fuzzing::looks_file`): `data` as a looks file of this process's
/// credentials (its bytes 12..20 set to them), decoded; each look's value read as each kind's;
/// what decodes encodes back to the same looks.
/// `also` is given each look's value, for the decoders of other modules' values.
pub fn fuzz(data: &[u8], also: &dyn Fn(&[u8])) {
    let mut data = data.to_vec();
    if data.len() >= 20 {
        data[12..20].copy_from_slice(&credentials().to_le_bytes());
    }
    let Some(looks) = decode(&data) else { return };
    for look in looks.values() {
        let _ = <Option<Vec<String>> as Persist>::take(&mut Reader(&look.value));
        let _ = bool::take(&mut Reader(&look.value));
        let _ = String::take(&mut Reader(&look.value));
        let _ = <Option<FileIdentity> as Persist>::take(&mut Reader(&look.value));
        let _ = FileLook::take(&mut Reader(&look.value));
        also(&look.value);
    }
    assert_eq!(decode(&encode(&looks, &BTreeSet::new())).as_ref(), Some(&looks), "a decoded looks file does not survive a round trip");
}

/// A looks file of one look of each kind, its credentials zero (the fuzz target's seed); `more`
/// adds looks whose values other modules encode.
pub fn fuzz_seed(more: &[(Kind, &str, Vec<u8>)]) -> Vec<u8> {
    let witness = |path: &str| Witness { path: path.to_string(), stamp: Some([7; 10]) };
    let value = |put: &dyn Fn(&mut Vec<u8>)| {
        let mut out = Vec::new();
        put(&mut out);
        out
    };
    let identity = FileIdentity { device: 1, inode: 2, size: 2, modified: (3, 4) };
    let looks: Looks = [
        (Kind::Listing, "/usr/share/vulkan/icd.d", value(&|o| Some(vec!["lvp_icd.x86_64.json".to_string()]).put(o))),
        (Kind::Readable, "/etc/vulkan/loader_settings.d/vk_loader_settings.json", value(&|o| false.put(o))),
        (Kind::Identity, "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so", value(&|o| Some(identity).put(o))),
        (Kind::File, "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", value(&|o| FileLook { identity, bytes: b"{}".to_vec() }.put(o))),
        (Kind::Bound, "libVkLayer_MESA_device_select.so", value(&|o| "/lib/x86_64-linux-gnu/libVkLayer_MESA_device_select.so".to_string().put(o))),
    ]
    .into_iter()
    .chain(more.iter().map(|(kind, path, value)| (*kind, *path, value.clone())))
    .map(|(kind, path, value)| ((kind, path.to_string()), Look { witness: witness(path), value }))
    .collect();
    let mut file = encode(&looks, &BTreeSet::new());
    file[12..20].fill(0);
    file
}

fn put_u32(out: &mut Vec<u8>, n: u32) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// A cursor over untrusted bytes: every read is checked against what is left.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader(bytes)
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn witness(path: &str, n: i64) -> Witness {
        Witness { path: path.to_string(), stamp: Some([n; 10]) }
    }

    #[test]
    fn looks_are_read_back_as_written_and_damage_is_refused() {
        let mut looks = Looks::new();
        let mut listing = Vec::new();
        Some(vec!["a.json".to_string(), "b.json".to_string()]).put(&mut listing);
        looks.insert((Kind::Listing, "/usr/share/vulkan/icd.d".into()), Look { witness: witness("/usr/share/vulkan/icd.d", 7), value: listing });
        let mut readable = Vec::new();
        false.put(&mut readable);
        looks.insert((Kind::Readable, "/etc/vulkan/x/y.json".into()), Look { witness: witness("/etc/vulkan", -3), value: readable });
        let identity = FileIdentity { device: 1, inode: 2, size: 3, modified: (4, 5) };
        let mut file = Vec::new();
        FileLook { identity, bytes: b"{}\n".to_vec() }.put(&mut file);
        looks.insert((Kind::File, "/a.json".into()), Look { witness: witness("/a.json", 9), value: file });

        let bytes = encode(&looks, &BTreeSet::new());
        assert_eq!(decode(&bytes), Some(looks.clone()));
        let look = &looks[&(Kind::File, "/a.json".to_string())];
        let read = FileLook::take(&mut Reader(&look.value)).unwrap();
        assert_eq!((read.identity, read.bytes), (identity, b"{}\n".to_vec()));
        let look = &looks[&(Kind::Listing, "/usr/share/vulkan/icd.d".to_string())];
        assert_eq!(<Option<Vec<String>> as Persist>::take(&mut Reader(&look.value)), Some(Some(vec!["a.json".to_string(), "b.json".to_string()])));

        for at in [0, 9, 13, 30, bytes.len() - 1] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x40;
            assert_eq!(decode(&damaged), None, "a byte changed at {at}");
        }
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None, "cut short");
    }

    #[test]
    fn past_the_bounds_the_looks_this_process_made_or_used_are_kept_first() {
        let look = |n: usize| ((Kind::Readable, format!("/dir/{n:05}.json")), Look { witness: witness("/dir", 1), value: vec![1] });
        let looks: Looks = (0..MAX_LOOKS + 10).map(look).collect();
        let last = look(MAX_LOOKS + 9).0;
        let kept = decode(&encode(&looks, &BTreeSet::from([last.clone()]))).unwrap();
        assert_eq!(kept.len(), MAX_LOOKS);
        assert!(kept.contains_key(&last), "the last by path, used by this process");
        assert!(kept.contains_key(&look(0).0) && !kept.contains_key(&look(MAX_LOOKS).0));
    }

    #[test]
    fn the_fuzz_seed_decodes_as_this_processs_file() {
        let mut seed = fuzz_seed(&[]);
        seed[12..20].copy_from_slice(&credentials().to_le_bytes());
        assert_eq!(decode(&seed).map(|looks| looks.len()), Some(5));
    }

    #[test]
    fn a_file_of_other_credentials_is_not_used() {
        let bytes = encode(&Looks::new(), &BTreeSet::new());
        let mut other_credentials = bytes.clone();
        other_credentials[12] ^= 1;
        assert_eq!(decode(&other_credentials), None, "written by a process of other credentials");
    }
}
