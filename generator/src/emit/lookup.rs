//! `lookup.rs`: name -> command and name -> extension tables, hashed at generation time.
//!
//! Each table is one string blob, the entries (sorted by name) and an open-addressing index of
//! `2^k >= 4 * entries` slots holding entry number + 1 (0 is empty), filled by linear probing.
//! A lookup hashes the name once and compares bytes only on a full 32-bit hash match.

use proc_macro2::TokenStream;
use quote::quote;

use super::{api_version, rust_file};
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

/// Blob, entry tuples (hash, offset, length) and the probe index for sorted, unique names.
fn hash_table(names: &[&str]) -> (String, Vec<(u32, u32, u16)>, Vec<u16>) {
    let mut blob = String::new();
    let mut entries = Vec::new();
    for n in names {
        entries.push((hash(n.as_bytes()), blob.len() as u32, n.len() as u16));
        blob.push_str(n);
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
    (blob, entries, index)
}

fn table_tokens(names: &[&str]) -> TokenStream {
    let (blob, entries, index) = hash_table(names);
    let mask = index.len() - 1;
    let entries = entries.iter().map(|(h, o, l)| quote!(NameEntry { hash: #h, offset: #o, len: #l }));
    quote!(NameTable { blob: #blob, mask: #mask, index: &[#(#index),*], entries: &[#(#entries),*] })
}

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let command_names: Vec<&str> = model.names.iter().map(|n| n.name).collect();
    let commands = table_tokens(&command_names);
    let ext_names: Vec<&str> = model.extensions.iter().map(|e| e.name.as_str()).collect();
    let extensions = table_tokens(&ext_names);
    let count = model.names.len();
    let infos = model.names.iter().map(|n| {
        let command = n.command;
        let alts = n.availability.iter().map(|a| {
            let version = api_version(a.version.0, a.version.1);
            let exts = &a.extensions;
            quote!(Requirement { version: #version, extensions: &[#(#exts),*] })
        });
        quote!(CommandName { command: #command, available_with: &[#(#alts),*] })
    });
    let tokens = quote! {
        use crate::lookup::{CommandName, NameEntry, NameTable, Requirement};
        /// Every command name, aliases included, sorted; the entry index is the name id.
        pub static COMMAND_NAME_TABLE: NameTable = #commands;
        /// What each name (by name id) refers to, and when it is available.
        pub static COMMAND_NAMES: [CommandName; #count] = [#(#infos),*];
        /// Every extension name; the entry index is the extension id.
        pub static EXTENSION_NAME_TABLE: NameTable = #extensions;
    };
    rust_file(reg, "name lookup tables", tokens)
}
