//! `extensions.rs`: the extension table, indexed by extension id (extensions sorted by name).
//!
//! Entries hold only integers (the name through the lookup's extension name table, other strings
//! as spans of one string blob, commands as a span of one pool of command ids), so the table needs
//! no relocation and stays in read-only, shared memory.

use proc_macro2::Literal;
use quote::{format_ident, quote};

use super::{optional_span_tokens, rust_file, span_tokens, spec_link, Pool, Strings};
use crate::depends;
use crate::ir::{ExtensionKind, Registry};
use crate::model::Model;

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let count = model.extensions.len();
    let mut strings = Strings::default();
    let mut commands = Pool::default();
    let mut rows = Vec::with_capacity(count);
    for (id, e) in model.extensions.iter().enumerate() {
        let id = id as u16;
        let kind = match e.kind {
            ExtensionKind::Instance => quote!(ExtensionKind::Instance),
            ExtensionKind::Device => quote!(ExtensionKind::Device),
        };
        let number = e.number;
        let spec = e.spec_version;
        let mut string = |s: Option<&str>| strings.add(s).map(optional_span_tokens);
        let promoted = string(e.promoted_to.as_deref())?;
        let deprecated = string(e.deprecated_by.as_deref())?;
        let obsoleted = string(e.obsoleted_by.as_deref())?;
        let deps = e.depends.as_ref().map(depends::to_string);
        let deps = string(deps.as_deref())?;
        let platform = string(e.platform.as_deref())?;
        let provisional = e.provisional;
        let ids: Vec<u16> = e
            .commands()
            .iter()
            .filter_map(|c| model.name_id(c).map(|n| model.names[n as usize].command))
            .collect();
        let command_span = span_tokens(commands.add(&ids)?);
        rows.push(quote!(ExtensionInfo {
            id: #id, kind: #kind, number: #number, spec_version: #spec, promoted_to: #promoted,
            deprecated_by: #deprecated, obsoleted_by: #obsoleted, depends: #deps, platform: #platform,
            provisional: #provisional, commands: #command_span,
        }));
    }
    let blob = Literal::string(&strings.blob);
    let ids = model.extensions.iter().enumerate().map(|(id, e)| {
        let doc = format!("{}: its index in [`EXTENSIONS`](crate::EXTENSIONS).", spec_link(&e.name));
        let name = format_ident!("{}", e.name);
        let id = id as u16;
        quote!(#[doc = #doc] pub const #name: u16 = #id;)
    });
    let command_items = &commands.items;
    let command_count = command_items.len();
    let tokens = quote! {
        use crate::{ExtensionInfo, ExtensionKind, Span};
        /// Number of extensions the registry supports.
        pub const EXTENSION_COUNT: usize = #count;
        /// Every supported extension, sorted by name; the index is the extension id.
        pub static EXTENSIONS: [ExtensionInfo; #count] = [#(#rows),*];
        /// The extensions' strings (promotion, deprecation, dependencies, platform), which the
        /// `ExtensionInfo` spans point into.
        pub(crate) const EXTENSION_STRINGS: &str = #blob;
        /// Ids of the commands each extension adds, which `ExtensionInfo::commands` spans.
        pub(crate) static EXTENSION_COMMANDS: [u16; #command_count] = [#(#command_items),*];
        /// Extension ids by name.
        #[allow(non_upper_case_globals)]
        pub mod id { #(#ids)* }
    };
    rust_file(reg, "extension table", tokens)
}
