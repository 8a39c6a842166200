//! Name lookup over tables hashed at generation time: no runtime map, no string-compare chain.
//!
//! A table is one string blob (each name followed by a NUL, so names are also C strings), entries
//! sorted by name, and an open-addressing index (entry + 1, 0 = empty) probed linearly from
//! `hash(name) & mask`. A lookup hashes the name eight bytes at a time and compares bytes only
//! when the full 32-bit hash matches.
//!
//! What a command name refers to ([`CommandName`]) holds only integers, spans of flat pools, so
//! these tables need no relocation and stay in read-only memory shared between processes.

use core::ffi::{c_char, CStr};
use core::fmt;

use crate::{CommandInfo, ExtensionInfo, Span, COMMANDS, EXTENSIONS, EXTENSION_COUNT};

#[rustfmt::skip]
#[path = "gen/lookup.rs"]
mod data;

pub use data::{COMMAND_NAMES, COMMAND_NAME_TABLE, EXTENSION_NAME_TABLE};

/// One name in a [`NameTable`]: its hash and where it sits in the blob.
#[derive(Debug)]
pub struct NameEntry {
    /// [`hash`] of the name.
    pub hash: u32,
    /// Where the name starts in the table's blob.
    pub offset: u32,
    /// The name's length in bytes, without the NUL that follows it in the blob.
    pub len: u16,
}

/// A set of names hashed at generation time, looked up without allocating.
#[derive(Debug)]
pub struct NameTable {
    /// Every name, each followed by a NUL.
    pub blob: &'static str,
    /// The index's length less one (a power of two less one): a hash's first probe is `hash & mask`.
    pub mask: usize,
    /// Open addressing: entry number + 1, 0 for an empty place.
    pub index: &'static [u16],
    /// The names sorted; a name's position is its id.
    pub entries: &'static [NameEntry],
}

/// One way for a name to be available: at least this API version, and all these extensions.
pub struct Requirement {
    /// `VK_MAKE_API_VERSION(0, major, minor, 0)`.
    pub version: u32,
    /// Extension ids, in `REQUIREMENT_EXTENSIONS`.
    pub(crate) extensions: Span,
}

impl Requirement {
    /// Extension ids (indices into `EXTENSIONS`) that must all be enabled.
    #[inline]
    pub fn extensions(&self) -> &'static [u16] {
        self.extensions.of(&data::REQUIREMENT_EXTENSIONS)
    }
}

/// A command name (canonical or alias): which command it names and when it is available.
pub struct CommandName {
    /// Command id (index into `COMMANDS`).
    pub command: u16,
    /// Rows of `REQUIREMENTS`, any one of which makes the name available.
    pub(crate) available_with: Span,
}

impl CommandName {
    /// The command this name names.
    pub fn info(&self) -> &'static CommandInfo {
        &COMMANDS[self.command as usize]
    }

    /// The name is available when any one of these holds.
    #[inline]
    pub fn available_with(&self) -> &'static [Requirement] {
        self.available_with.of(&data::REQUIREMENTS)
    }

    /// Whether this name is a core command of some Vulkan version (needing no extension).
    pub fn is_core(&self) -> bool {
        self.available_with().iter().any(|r| r.extensions.len == 0)
    }

    /// Whether this name is enabled for an instance or device of `api_version` with `enabled`
    /// extensions (the spec's rule for when `vkGet*ProcAddr` may return it).
    pub fn is_available(&self, api_version: u32, enabled: &ExtensionSet) -> bool {
        // Patch and variant bits do not matter: compare major.minor only.
        let api_version = api_version & !0xfff & !(0x7 << 29);
        self.available_with()
            .iter()
            .any(|r| api_version >= r.version && r.extensions().iter().all(|&e| enabled.contains(e)))
    }
}

impl fmt::Debug for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Requirement").field("version", &self.version).field("extensions", &self.extensions()).finish()
    }
}

impl fmt::Debug for CommandName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandName")
            .field("command", &self.command)
            .field("available_with", &self.available_with())
            .finish()
    }
}

/// The table hash: eight bytes at a time, multiply-rotate (FxHash's step), the length mixed in
/// first. The generator (`generator/src/emit/lookup.rs`) computes the same function; the lookup
/// test of every name proves they agree.
#[inline]
pub fn hash(name: &[u8]) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = name.len() as u64;
    let mut chunks = name.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = (h.rotate_left(5) ^ word).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    }
    (h ^ (h >> 32)) as u32
}

impl NameTable {
    /// The entry index (name id) of `name`, if present.
    pub fn find(&self, name: &[u8]) -> Option<usize> {
        self.probe(hash(name), name)
    }

    /// Like [`NameTable::find`] for a C string, hashing and measuring it in one pass.
    ///
    /// # Safety
    /// `name` must be non-null and point to a NUL-terminated string.
    #[inline]
    pub unsafe fn find_c(&self, name: *const c_char) -> Option<usize> {
        // SAFETY: a non-null, NUL-terminated string (this function's contract).
        let name = unsafe { CStr::from_ptr(name) }.to_bytes();
        self.probe(hash(name), name)
    }

    #[inline]
    fn probe(&self, hash: u32, name: &[u8]) -> Option<usize> {
        let mut slot = hash as usize & self.mask;
        loop {
            let entry_plus_one = self.index[slot] as usize;
            if entry_plus_one == 0 {
                return None;
            }
            let entry = &self.entries[entry_plus_one - 1];
            if entry.hash == hash && self.name(entry).as_bytes() == name {
                return Some(entry_plus_one - 1);
            }
            slot = (slot + 1) & self.mask;
        }
    }

    fn name(&self, entry: &NameEntry) -> &'static str {
        let start = entry.offset as usize;
        &self.blob[start..start + entry.len as usize]
    }

    /// The name with this id.
    pub fn name_of(&self, id: usize) -> &'static str {
        self.name(&self.entries[id])
    }

    /// The name with this id, as a C string.
    #[inline]
    pub fn c_name_of(&self, id: usize) -> &'static CStr {
        let entry = &self.entries[id];
        let start = entry.offset as usize;
        let with_nul = &self.blob.as_bytes()[start..start + entry.len as usize + 1];
        // SAFETY: the generator writes a NUL after every name in the blob and rejects names that
        // contain one (generator/src/emit/lookup.rs, `hash_table`), so `with_nul` is exactly
        // one C string.
        unsafe { CStr::from_bytes_with_nul_unchecked(with_nul) }
    }

    /// How many names the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table holds no name.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Looks up a command name (aliases included).
pub fn command(name: &[u8]) -> Option<&'static CommandName> {
    COMMAND_NAME_TABLE.find(name).map(|i| &COMMAND_NAMES[i])
}

/// Looks up a command name given as a C string, as `vkGet*ProcAddr` receives it.
///
/// # Safety
/// `name` must be non-null and point to a NUL-terminated string.
#[inline]
pub unsafe fn command_c(name: *const c_char) -> Option<&'static CommandName> {
    // SAFETY: this function's contract is `find_c`'s.
    unsafe { COMMAND_NAME_TABLE.find_c(name) }.map(|i| &COMMAND_NAMES[i])
}

/// The id of an extension (index into `EXTENSIONS`), by name.
pub fn extension(name: &[u8]) -> Option<u16> {
    EXTENSION_NAME_TABLE.find(name).map(|i| i as u16)
}

/// The extension with this name, if the registry supports it.
pub fn extension_info(name: &CStr) -> Option<&'static ExtensionInfo> {
    extension(name.to_bytes()).map(|i| &EXTENSIONS[i as usize])
}

/// A set of extensions by id: one bit each.
#[derive(Clone, Default, PartialEq, Eq, Debug)]
pub struct ExtensionSet([u64; EXTENSION_COUNT.div_ceil(64)]);

impl ExtensionSet {
    /// No extension.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the extension with this id.
    pub fn insert(&mut self, id: u16) {
        self.0[id as usize / 64] |= 1 << (id % 64);
    }

    /// Whether the extension with this id is in the set.
    pub fn contains(&self, id: u16) -> bool {
        self.0[id as usize / 64] & (1 << (id % 64)) != 0
    }

    /// Adds every extension of `other`.
    pub fn union_with(&mut self, other: &ExtensionSet) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    /// Adds the extension with this name; returns false for a name the registry does not know.
    pub fn insert_name(&mut self, name: &[u8]) -> bool {
        match extension(name) {
            Some(id) => {
                self.insert(id);
                true
            }
            None => false,
        }
    }
}
