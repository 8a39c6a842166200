//! `lookup.rs`: name -> command and name -> extension tables, hashed at generation time.
//!
//! Each table is one string blob (every name followed by a NUL), the entries (sorted by name) and
//! an open-addressing index of `2^k >= 4 * entries` slots holding entry number + 1 (0 is empty),
//! filled by linear probing. A lookup hashes the name once and compares bytes only on a full
//! 32-bit hash match. What each command name refers to (`COMMAND_NAMES`) holds only integers:
//! spans of one pool of requirement rows, whose extension lists are spans of one pool of ids.

use proc_macro2::TokenStream;
use quote::quote;

use super::{api_version, rust_file, span_tokens, Pool};
use crate::ir::Registry;
use crate::model::Model;

/// The table hash: eight bytes at a time, multiply-rotate, the length mixed in first.
/// `generated/src/lookup.rs` computes the same function at run time; the lookup test of every
/// name proves they agree.
pub fn hash(bytes: &[u8]) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = bytes.len() as u64;
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    (h ^ (h >> 32)) as u32
}

/// A name table's blob, entry tuples (hash, offset, length) and probe index.
type Hashed = (String, Vec<(u32, u32, u16)>, Vec<u16>);

/// The table of sorted, unique names. Each name is followed by a NUL in the blob, so the run-time
/// side can hand names out as C strings.
fn hash_table(names: &[&str]) -> Result<Hashed, String> {
    let mut blob = String::new();
    let mut entries = Vec::new();
    for n in names {
        if n.contains('\0') {
            return Err(format!("{n:?}: a name with a NUL cannot be a C string"));
        }
        entries.push((hash(n.as_bytes()), blob.len() as u32, n.len() as u16));
        blob.push_str(n);
        blob.push('\0');
    }
    let size = (names.len() * 4).next_power_of_two().max(16);
    let mut index = vec![0u16; size];
    for (i, (h, _, _)) in entries.iter().enumerate() {
        let mut slot = *h as usize & (size - 1);
        while index[slot] != 0 {
            slot = (slot + 1) & (size - 1);
        }
        index[slot] = i as u16 + 1;
    }
    Ok((blob, entries, index))
}

fn table_tokens(names: &[&str]) -> Result<TokenStream, String> {
    let (blob, entries, index) = hash_table(names)?;
    let mask = index.len() - 1;
    let entries = entries.iter().map(|(h, o, l)| quote!(NameEntry { hash: #h, offset: #o, len: #l }));
    Ok(quote!(NameTable { blob: #blob, mask: #mask, index: &[#(#index),*], entries: &[#(#entries),*] }))
}

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let command_names: Vec<&str> = model.names.iter().map(|n| n.name).collect();
    let commands = table_tokens(&command_names)?;
    let ext_names: Vec<&str> = model.extensions.iter().map(|e| e.name.as_str()).collect();
    let extensions = table_tokens(&ext_names)?;
    let count = model.names.len();
    // Requirement rows (version, span of extension ids) and, per name, a span of those rows.
    let mut extension_ids = Pool::default();
    let mut requirements = Pool::default();
    let mut infos = Vec::with_capacity(count);
    for n in &model.names {
        let rows = n
            .availability
            .iter()
            .map(|a| Ok((api_version(a.version.0, a.version.1), extension_ids.add(&a.extensions)?)))
            .collect::<Result<Vec<(u32, (u16, u16))>, String>>()?;
        let command = n.command;
        let available_with = span_tokens(requirements.add(&rows)?);
        infos.push(quote!(CommandName { command: #command, available_with: #available_with }));
    }
    let requirement_rows = requirements.items.iter().map(|&(version, extensions)| {
        let extensions = span_tokens(extensions);
        quote!(Requirement { version: #version, extensions: #extensions })
    });
    let requirement_count = requirements.items.len();
    let extension_items = &extension_ids.items;
    let extension_count = extension_items.len();
    let tokens = quote! {
        use crate::lookup::{CommandName, NameEntry, NameTable, Requirement};
        use crate::Span;
        /// Every command name, aliases included, sorted; the entry index is the name id.
        pub static COMMAND_NAME_TABLE: NameTable = #commands;
        /// What each name (by name id) refers to, and when it is available.
        pub static COMMAND_NAMES: [CommandName; #count] = [#(#infos),*];
        /// The ways a name is available, which `CommandName::available_with` spans.
        pub(crate) static REQUIREMENTS: [Requirement; #requirement_count] = [#(#requirement_rows),*];
        /// Extension ids of the requirements, which `Requirement::extensions` spans.
        pub(crate) static REQUIREMENT_EXTENSIONS: [u16; #extension_count] = [#(#extension_items),*];
        /// Every extension name; the entry index is the extension id.
        pub static EXTENSION_NAME_TABLE: NameTable = #extensions;
    };
    rust_file(reg, "name lookup tables", tokens)
}
