//! `extensions.rs`: the extension table, indexed by extension id (extensions sorted by name).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::rust_file;
use crate::depends;
use crate::ir::{ExtensionKind, Registry};
use crate::model::Model;

fn opt(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let count = model.extensions.len();
    let rows = model.extensions.iter().map(|e| {
        let name = Literal::c_string(&std::ffi::CString::new(e.name.as_str()).expect("no NUL"));
        let kind = match e.kind {
            ExtensionKind::Instance => quote!(ExtensionKind::Instance),
            ExtensionKind::Device => quote!(ExtensionKind::Device),
        };
        let number = e.number;
        let spec = e.spec_version;
        let promoted = opt(e.promoted_to.as_deref());
        let deprecated = opt(e.deprecated_by.as_deref());
        let obsoleted = opt(e.obsoleted_by.as_deref());
        let deps = e.depends.as_ref().map(depends::to_string);
        let deps = opt(deps.as_deref());
        let platform = opt(e.platform.as_deref());
        let provisional = e.provisional;
        let commands: Vec<u16> = e
            .commands()
            .iter()
            .filter_map(|c| model.names.iter().find(|n| n.name == *c).map(|n| n.command))
            .collect();
        quote!(ExtensionInfo {
            name: #name, kind: #kind, number: #number, spec_version: #spec, promoted_to: #promoted,
            deprecated_by: #deprecated, obsoleted_by: #obsoleted, depends: #deps, platform: #platform,
            provisional: #provisional, commands: &[#(#commands),*],
        })
    });
    let tokens = quote! {
        use crate::{ExtensionInfo, ExtensionKind};
        /// Number of extensions the registry supports.
        pub const EXTENSION_COUNT: usize = #count;
        /// Every supported extension, sorted by name; the index is the extension id.
        pub static EXTENSIONS: [ExtensionInfo; #count] = [#(#rows),*];
    };
    rust_file(reg, "extension table", tokens)
}
