//! `exports.rs`: the symbols `libvulkan.so.1` exports on Linux: core 1.0-1.4 and the WSI commands.

use std::collections::BTreeSet;

use quote::quote;

use super::rust_file;
use crate::ir::Registry;
use crate::model::EXPORTED_EXTENSIONS;

/// Exported names, sorted: every command a `VK_*VERSION_*` feature requires, and every command of
/// the extensions in `EXPORTED_EXTENSIONS`.
pub fn exported_names(reg: &Registry) -> Vec<String> {
    let from_features = reg.features.iter().flat_map(|f| &f.requires);
    let from_wsi = EXPORTED_EXTENSIONS
        .iter()
        .filter_map(|e| reg.extensions.get(*e))
        .flat_map(|e| &e.requires);
    let names: BTreeSet<String> =
        from_features.chain(from_wsi).flat_map(|r| r.commands.iter().cloned()).collect();
    names.into_iter().collect()
}

pub fn emit(reg: &Registry) -> Result<String, String> {
    let names = exported_names(reg);
    let count = names.len();
    let tokens = quote! {
        /// The `vk*` symbols `libvulkan.so.1` exports, sorted.
        pub static EXPORTED_COMMANDS: [&str; #count] = [#(#names),*];
    };
    rust_file(reg, "exported symbols of libvulkan.so.1", tokens)
}
