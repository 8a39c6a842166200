//! `commands.rs`: the command metadata table, indexed by command id.
//!
//! Entries hold only integers (names are name ids into the lookup's name table, aliases a span of
//! the alias pool), so the table needs no relocation and stays in read-only, shared memory.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{rust_file, span_tokens, spec_link, Pool};
use crate::ir::{Level, Registry};
use crate::model::Model;

pub fn level_tokens(level: Level) -> TokenStream {
    match level {
        Level::Global => quote!(CommandLevel::Global),
        Level::Instance => quote!(CommandLevel::Instance),
        Level::PhysicalDevice => quote!(CommandLevel::PhysicalDevice),
        Level::Device => quote!(CommandLevel::Device),
    }
}

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let count = model.commands.len();
    let name_id = |name: &str| model.name_id(name).ok_or_else(|| format!("{name} is not in the name table"));
    let mut aliases = Pool::default();
    let mut rows = Vec::with_capacity(count);
    for (id, c) in model.commands.iter().enumerate() {
        let name = name_id(&c.name)?;
        let alias_ids = c.aliases.iter().map(|a| name_id(a)).collect::<Result<Vec<u16>, String>>()?;
        let alias_span = span_tokens(aliases.add(&alias_ids)?);
        let level = level_tokens(c.level);
        let slot = model.slot[id];
        let returns_result = c.return_type.base == "VkResult" && c.return_type.pointers.is_empty();
        let returns_dispatchable = !crate::model::dispatchable_outputs(reg, c).is_empty();
        rows.push(quote!(CommandInfo {
            name: #name, level: #level, slot: #slot, aliases: #alias_span,
            returns_result: #returns_result, returns_dispatchable: #returns_dispatchable,
        }));
    }
    let alias_items = &aliases.items;
    let alias_count = alias_items.len();
    let ids = model.commands.iter().enumerate().map(|(id, c)| {
        let doc = format!("{}: its index in [`COMMANDS`](crate::COMMANDS).", spec_link(&c.name));
        let name = format_ident!("{}", c.name);
        let id = id as u16;
        quote!(#[doc = #doc] pub const #name: u16 = #id;)
    });
    let tokens = quote! {
        use crate::{CommandInfo, CommandLevel, Span};
        /// Number of canonical commands.
        pub const COMMAND_COUNT: usize = #count;
        /// Every canonical command, sorted by name; the index is the command id.
        pub static COMMANDS: [CommandInfo; #count] = [#(#rows),*];
        /// Name ids of the commands' aliases, which `CommandInfo::aliases` spans.
        pub(crate) static COMMAND_ALIASES: [u16; #alias_count] = [#(#alias_items),*];
        /// Command ids by canonical name.
        #[allow(non_upper_case_globals)]
        pub mod id { #(#ids)* }
    };
    rust_file(reg, "command metadata", tokens)
}
