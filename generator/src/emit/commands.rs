//! `commands.rs`: the command metadata table, indexed by command id.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::rust_file;
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
    let rows = model.commands.iter().enumerate().map(|(id, c)| {
        let name = Literal::c_string(&std::ffi::CString::new(c.name.as_str()).expect("no NUL in names"));
        let aliases = c.aliases.iter().map(|a| Literal::c_string(&std::ffi::CString::new(a.as_str()).expect("no NUL")));
        let level = level_tokens(c.level);
        let slot = model.slot[id];
        let returns_result = c.return_type.base == "VkResult" && c.return_type.pointers.is_empty();
        let returns_dispatchable = !crate::model::dispatchable_outputs(reg, c).is_empty();
        quote!(CommandInfo {
            name: #name, level: #level, slot: #slot, aliases: &[#(#aliases),*],
            returns_result: #returns_result, returns_dispatchable: #returns_dispatchable,
        })
    });
    let ids = model.commands.iter().enumerate().map(|(id, c)| {
        let name = format_ident!("{}", c.name);
        let id = id as u16;
        quote!(pub const #name: u16 = #id;)
    });
    let tokens = quote! {
        use crate::{CommandInfo, CommandLevel};
        /// Number of canonical commands.
        pub const COMMAND_COUNT: usize = #count;
        /// Every canonical command, sorted by name; the index is the command id.
        pub static COMMANDS: [CommandInfo; #count] = [#(#rows),*];
        /// Command ids by canonical name.
        #[allow(non_upper_case_globals)]
        pub mod id { #(#ids)* }
    };
    rust_file(reg, "command metadata", tokens)
}
