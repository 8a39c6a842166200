//! `chain_sizes.rs`: the size of each structure that may sit in a `VkDeviceCreateInfo` chain, by
//! its sType. The loader hands drivers a copy of the application's chain where it must change an
//! element (a device group's physical devices): the elements before it are copied bitwise, so the
//! copies can be relinked, and a bitwise copy of a structure known only by its sType needs its size.
//!
//! Scope: every structure of this API whose `structextends` names `VkDeviceCreateInfo`, or a
//! structure already in scope, to a fixed point. Sizes come from rustc (`size_of`).

use std::collections::BTreeSet;

use quote::{format_ident, quote};

use super::rust_file;
use super::types::VariantNames;
use crate::ir::*;
use crate::parse::resolve_alias;

/// The structure whose chain the table covers.
const ROOT: &str = "VkDeviceCreateInfo";

pub fn emit(reg: &Registry) -> Result<String, String> {
    let names = VariantNames::new(reg);
    let mut arms = Vec::new();
    let mut seen_stypes = BTreeSet::new();
    for name in chain_structures(reg) {
        let Some(TypeDef::Struct(agg)) = reg.types.get(name) else { continue };
        let value = agg
            .members
            .first()
            .filter(|m| m.name == "sType")
            .and_then(|m| m.values.as_deref())
            .ok_or_else(|| format!("{name} extends {ROOT}'s chain but has no fixed sType"))?;
        if !seen_stypes.insert(value) {
            return Err(format!("{name}: sType {value} is another chain structure's too"));
        }
        let stype = names.path(value).ok_or_else(|| format!("{name}: sType value {value} is not a known VkStructureType"))?;
        let ty = format_ident!("{}", name);
        arms.push(quote!(#stype => size_of::<#ty>(),));
    }
    if arms.is_empty() {
        return Err(format!("no structure extends {ROOT}: the chain size emitter's assumptions no longer hold"));
    }
    let tokens = quote! {
        use core::mem::size_of;
        use crate::types::*;

        /// The size in bytes of a structure that may sit in the `pNext` chain of `VkDeviceCreateInfo`
        /// (one this API's registry lists as extending it, or as extending such a structure), by its
        /// sType; `None` for any other sType.
        pub fn device_create_info(s_type: VkStructureType) -> Option<usize> {
            Some(match s_type {
                #(#arms)*
                _ => return None,
            })
        }
    };
    rust_file(reg, "the sizes of the structures of a VkDeviceCreateInfo chain", tokens)
}

/// The structures of this API that extend `ROOT`'s chain, directly or through another, in name
/// order (canonical names: an alias shares its structure's sType).
fn chain_structures(reg: &Registry) -> BTreeSet<&str> {
    // A structure belongs to this API when a feature or extension the parser kept requires it (as
    // in deep_copy: Vulkan SC's structures are left out).
    let in_api: BTreeSet<&str> = reg
        .features
        .iter()
        .flat_map(|f| &f.requires)
        .chain(reg.extensions.values().flat_map(|e| &e.requires))
        .flat_map(|r| &r.types)
        .map(|t| resolve_alias(reg, t))
        .collect();
    let mut extended: BTreeSet<&str> = BTreeSet::from([ROOT]);
    let mut chain = BTreeSet::new();
    loop {
        let before = chain.len();
        for (name, def) in &reg.types {
            let TypeDef::Struct(agg) = def else { continue };
            let name = name.as_str();
            if name == resolve_alias(reg, name)
                && in_api.contains(name)
                && !chain.contains(name)
                && agg.struct_extends.iter().any(|e| extended.contains(resolve_alias(reg, e)))
            {
                chain.insert(name);
                extended.insert(name);
            }
        }
        if chain.len() == before {
            return chain;
        }
    }
}
