//! `padding.rs`: zeroing the padding bytes of the structures a driver fills for the loader to record
//! (`generated/src/padding.rs` holds the `ZeroPadding` trait and the walker the emitted code calls).
//!
//! Drivers copy whole structures, padding included, so the padding bytes of what they write hold
//! garbage; the loader zeroes them before it compares or stores the bytes.
//!
//! Scope: the output structures of the physical-device queries ([`ROOTS`]), every structure whose
//! `structextends` names a structure in scope, the structures of [`EXTRA`], and every structure
//! (or union) a structure in scope holds by value, to a fixed point. For each, one
//! `impl ZeroPadding` walks the members in declaration order: it zeroes the gap before each member,
//! recurses into members that are structures (each element of an array of structures), and zeroes
//! the tail up to the structure's size. No offset or size is computed here: the emitted code asks
//! rustc (`offset_of!`, `size_of`), so the same source is right on every target.
//!
//! - Bitfields: a storage unit of bitfields (see `types::slots`) is one member covering the whole
//!   unit. Bits of a unit no bitfield uses are cleared with a mask, on little-endian targets only
//!   (where the System V packing from the least significant bit is the one the types model); a byte
//!   holding bitfield data is never zeroed.
//! - Unions: their padding depends on which member is live, which the union does not tell; a union
//!   member is kept whole, and a union's own `zero_padding` does nothing.
//! - Pointers are members like any other; what they point to is not touched.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::types::{slots, Slot, VariantNames};
use super::{field_type, ident, rust_file, safety, safety_doc};
use crate::ir::*;
use crate::parse::resolve_alias;

/// The structures the physical-device queries fill, which the loader records.
pub const ROOTS: &[&str] = &[
    "VkPhysicalDeviceProperties2",
    "VkPhysicalDeviceFeatures2",
    "VkPhysicalDeviceMemoryProperties2",
    "VkFormatProperties2",
    "VkQueueFamilyProperties2",
];

/// Other recorded outputs, without extending structures of their own.
pub const EXTRA: &[&str] = &["VkExtensionProperties", "VkLayerProperties"];

struct Scope<'a> {
    /// Every structure and union in scope, by name, with whether it is a union.
    aggregates: BTreeMap<&'a str, (&'a Aggregate, bool)>,
}

pub fn emit(reg: &Registry) -> Result<String, String> {
    let scope = scope(reg)?;
    let names = VariantNames::new(reg);
    let mut impls = Vec::new();
    let mut arms = Vec::new();
    let mut stypes = Vec::new();
    for (&name, &(agg, is_union)) in &scope.aggregates {
        impls.push(impl_for(reg, name, agg, is_union)?);
        if is_union {
            continue;
        }
        let stype = agg
            .members
            .first()
            .filter(|m| m.name == "sType")
            .and_then(|m| m.values.as_deref());
        if let Some(path) = stype.and_then(|v| names.path(v)) {
            let ty = format_ident!("{}", name);
            arms.push(quote!(#path => <#ty as ZeroPadding>::zero_padding(value),));
            stypes.push(path);
        }
    }
    let by_type_why = safety(
        "`value` points to a writable structure of the type `s_type` names (this function's \
         contract): each arm cleans it as the structure its `sType` value belongs to.",
    );
    let tokens = quote! {
        #[allow(unused_imports)]
        use core::ffi::{c_char, c_int, c_ulong, c_void};
        use core::mem::{offset_of, size_of};
        use super::{Walk, ZeroPadding};
        use crate::types::*;

        /// The sTypes `zero_padding_by_type` knows, in structure name order.
        pub const STRUCTURE_TYPES: &[VkStructureType] = &[#(#stypes),*];

        /// `ZeroPadding::zero_padding` of the structure with this sType; `false` for any other.
        ///
        /// # Safety
        /// `value` points to a writable structure of the type `s_type` names (no alignment needed).
        pub(super) unsafe fn by_type(s_type: VkStructureType, value: *mut u8) -> bool {
            #by_type_why
            unsafe {
                match s_type {
                    #(#arms)*
                    _ => return false,
                }
            }
            true
        }

        #(#impls)*
    };
    rust_file(
        reg,
        "zeroing the padding bytes of the structures the loader records",
        tokens,
    )
}

/// The structures in scope, to a fixed point.
fn scope(reg: &Registry) -> Result<Scope<'_>, String> {
    let lookup = |name: &str| match reg.types.get_key_value(resolve_alias(reg, name)) {
        Some((name, TypeDef::Struct(agg))) => Some((name.as_str(), (agg, false))),
        Some((name, TypeDef::Union(agg))) => Some((name.as_str(), (agg, true))),
        _ => None,
    };
    // As in deep_copy: a structure belongs to this API when a kept feature or extension requires
    // it, which leaves out Vulkan SC's.
    let in_api: BTreeSet<&str> = reg
        .features
        .iter()
        .flat_map(|f| &f.requires)
        .chain(reg.extensions.values().flat_map(|e| &e.requires))
        .flat_map(|r| &r.types)
        .map(|t| resolve_alias(reg, t))
        .collect();
    let mut aggregates = BTreeMap::new();
    for &root in ROOTS.iter().chain(EXTRA) {
        let (name, found) =
            lookup(root).ok_or_else(|| format!("{root} is not a structure of this registry"))?;
        aggregates.insert(name, found);
    }
    loop {
        let before = aggregates.len();
        for (name, def) in &reg.types {
            let TypeDef::Struct(agg) = def else { continue };
            if !aggregates.contains_key(name.as_str())
                && in_api.contains(name.as_str())
                && agg
                    .struct_extends
                    .iter()
                    .any(|e| aggregates.contains_key(resolve_alias(reg, e)))
            {
                aggregates.insert(name.as_str(), (agg, false));
            }
        }
        let held: Vec<(&str, (&Aggregate, bool))> = aggregates
            .values()
            .flat_map(|(agg, _)| &agg.members)
            .filter(|m| m.ty.pointers.is_empty())
            .filter_map(|m| lookup(&m.ty.base))
            .collect();
        aggregates.extend(held);
        if aggregates.len() == before {
            break;
        }
    }
    Ok(Scope { aggregates })
}

/// `unsafe impl ZeroPadding for <name>`.
fn impl_for(
    reg: &Registry,
    name: &str,
    agg: &Aggregate,
    is_union: bool,
) -> Result<TokenStream, String> {
    let ty = format_ident!("{}", name);
    let contract = safety_doc("As [`ZeroPadding::zero_padding`].");
    if is_union {
        let doc = format!("`{name}` is a union: which member is live, and so which bytes are padding, is not known here; nothing is zeroed.");
        let why = safety("nothing is written.");
        return Ok(quote! {
            #[doc = #doc]
            #why
            unsafe impl ZeroPadding for #ty {
                #contract
                unsafe fn zero_padding(_value: *mut u8) {}
            }
        });
    }
    let mut steps = Vec::new();
    for slot in slots(reg, name, agg)? {
        match slot {
            Slot::Member(m) => {
                let field = ident(&m.name);
                let offset = quote!(offset_of!(Self, #field));
                let mty = field_type(&m.ty, &m.array);
                let size = quote!(size_of::<#mty>());
                let held = match reg.types.get(resolve_alias(reg, &m.ty.base)) {
                    Some(TypeDef::Struct(_) | TypeDef::Union(_)) if m.ty.pointers.is_empty() => {
                        Some(format_ident!("{}", resolve_alias(reg, &m.ty.base)))
                    }
                    _ => None,
                };
                steps.push(match held {
                    Some(held) => quote!(w.structs::<#held>(#offset, #size);),
                    None => quote!(w.member(#offset, #size);),
                });
            }
            Slot::Bits(bits) => {
                let field = format_ident!("{}", bits.field);
                let offset = quote!(offset_of!(Self, #field));
                let storage = format_ident!("u{}", bits.unit);
                let used = bits.used();
                steps.push(if used == bits.unit {
                    quote!(w.member(#offset, size_of::<#storage>());)
                } else {
                    let mask = Literal::u64_unsuffixed((1u64 << used) - 1);
                    quote!(w.bits::<#storage>(#offset, #mask);)
                });
            }
        }
    }
    let impl_why = safety(&format!(
        "the walk writes only the bytes between `{name}`'s members, at the offsets and sizes rustc \
         gives, and after the last one up to its size; members that are structures are cleaned by \
         their own `ZeroPadding`, and bitfield storage only in bits no bitfield uses."
    ));
    let walk_why = safety(
        "`value` points to `size_of::<Self>()` writable bytes (the trait's contract), and the \
         members are walked in declaration order, each within them.",
    );
    Ok(quote! {
        #impl_why
        unsafe impl ZeroPadding for #ty {
            #contract
            unsafe fn zero_padding(value: *mut u8) {
                let mut w = Walk::new(value);
                #walk_why
                unsafe {
                    #(#steps)*
                    w.finish(size_of::<Self>());
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, base: &str, bitfield: Option<u32>) -> Field {
        Field {
            name: name.into(),
            ty: CType::plain(base),
            array: vec![],
            is_const: false,
            bitfield,
            optional: false,
            no_auto_validity: false,
            len: None,
            values: None,
            c_decl: name.into(),
        }
    }

    /// Bitfield units are members as a whole; a partly used unit has its unused bits masked.
    #[test]
    fn bitfields() {
        let mut reg = Registry::default();
        reg.types.insert("uint32_t".into(), TypeDef::Builtin);
        let agg = Aggregate {
            members: vec![
                field("a", "uint32_t", Some(24)),
                field("b", "uint32_t", Some(8)),
                field("c", "uint32_t", Some(3)),
                field("d", "uint32_t", Some(2)),
                field("e", "uint64_t", None),
            ],
            struct_extends: vec![],
            returned_only: true,
        };
        let text = impl_for(&reg, "S", &agg, false)
            .unwrap()
            .to_string()
            .replace(' ', "");
        assert!(
            text.contains("w.member(offset_of!(Self,a_and_b),size_of::<u32>());"),
            "{text}"
        );
        assert!(
            text.contains("w.bits::<u32>(offset_of!(Self,c_and_d),31);"),
            "{text}"
        );
        assert!(
            text.contains("w.member(offset_of!(Self,e),size_of::<u64>());"),
            "{text}"
        );
        let union = impl_for(&reg, "U", &agg, true)
            .unwrap()
            .to_string()
            .replace(' ', "");
        assert!(
            union.contains("fnzero_padding(_value:*mut u8){}".replace(' ', "").as_str()),
            "{union}"
        );
    }

    /// The vendored registry's scope holds the structures the loader records.
    #[test]
    fn vendored_registry_scope() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry");
        let reg = crate::load_registry(&root).unwrap();
        let scope = scope(&reg).unwrap();
        println!(
            "{} in scope: {:?}",
            scope.aggregates.len(),
            scope.aggregates.keys().collect::<Vec<_>>()
        );
        for name in [
            "VkPhysicalDeviceProperties",
            "VkPhysicalDeviceLimits",
            "VkPhysicalDeviceSparseProperties",
            "VkPhysicalDeviceMemoryProperties",
            "VkMemoryHeap",
            "VkMemoryType",
            "VkQueueFamilyProperties",
            "VkExtent3D",
            "VkFormatProperties",
            "VkFormatProperties3",
            "VkExtensionProperties",
            "VkPhysicalDeviceVulkan12Properties",
            "VkPhysicalDeviceTexelBufferAlignmentProperties",
            "VkConformanceVersion",
        ] {
            assert!(scope.aggregates.contains_key(name), "{name}");
        }
    }
}
