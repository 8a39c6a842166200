//! `types.rs`: every constant, handle, enum, bitmask, struct, union and function pointer of the
//! registry, ABI-exact, plus one `PFN_vk*` type per command name.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToShoutySnakeCase;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::{c_type, field_type, ident, rust_file, signature, spec_link};
use crate::ir::*;
use crate::parse::resolve_alias;

/// Platform types that are scalars or pointers in their C headers; the others are opaque structs
/// that the registry only ever uses behind a pointer (checked below).
pub(crate) const PLATFORM_SCALARS: &[(&str, &str)] = &[
    ("Window", "c_ulong"),
    ("VisualID", "c_ulong"),
    ("RROutput", "c_ulong"),
    ("xcb_window_t", "u32"),
    ("xcb_visualid_t", "u32"),
    ("zx_handle_t", "u32"),
    ("DWORD", "u32"),
    ("HANDLE", "*mut c_void"),
    ("HINSTANCE", "*mut c_void"),
    ("HWND", "*mut c_void"),
    ("HMONITOR", "*mut c_void"),
    ("LPCWSTR", "*const u16"),
    ("GgpStreamDescriptor", "u32"),
    ("GgpFrameToken", "u64"),
    ("NvSciSyncAttrList", "*mut c_void"),
    ("NvSciSyncObj", "*mut c_void"),
    ("NvSciBufAttrList", "*mut c_void"),
    ("NvSciBufObj", "*mut c_void"),
];

pub fn emit(reg: &Registry) -> Result<String, String> {
    check_opaque_use(reg)?;
    let names = VariantNames::new(reg);
    let mut items = Vec::new();
    items.push(constants(reg));
    let bits_owner: BTreeMap<&str, (&str, u32)> = reg
        .types
        .iter()
        .filter_map(|(name, def)| match def {
            TypeDef::Bitmask { width, bits: Some(bits) } => Some((bits.as_str(), (name.as_str(), *width))),
            _ => None,
        })
        .collect();
    for (name, def) in &reg.types {
        let id = format_ident!("{}", name);
        let doc = type_doc(name, def, bits_owner.get(name.as_str()).map(|(flags, _)| *flags));
        let item = match def {
            TypeDef::Builtin => continue,
            TypeDef::Platform { .. } => platform(name, &doc),
            TypeDef::Base { underlying: Some(ty) } => {
                let ty = c_type(ty);
                quote!(#[doc = #doc] pub type #id = #ty;)
            }
            TypeDef::Base { underlying: None } => opaque(name, &doc),
            // The doc goes into the macro: rustdoc ignores one on a macro call.
            TypeDef::Handle { dispatchable: true, .. } => quote!(dispatchable_handle!(#id, #doc);),
            TypeDef::Handle { dispatchable: false, .. } => quote!(non_dispatchable_handle!(#id, #doc);),
            TypeDef::Enum => match bits_owner.get(name.as_str()) {
                Some((flags, _)) => {
                    let flags = format_ident!("{}", flags);
                    quote!(#[doc = #doc] pub type #id = #flags;)
                }
                None => value_type(&names, name, &doc, reg.enums.get(name), None),
            },
            TypeDef::Bitmask { width, bits } => {
                let group = bits.as_ref().and_then(|b| reg.enums.get(b));
                value_type(&names, name, &doc, group, Some(*width))
            }
            TypeDef::Struct(agg) => aggregate(reg, &names, name, &doc, agg, false)?,
            TypeDef::Union(agg) => aggregate(reg, &names, name, &doc, agg, true)?,
            TypeDef::FuncPointer(fp) => {
                let sig = signature(&fp.params, &fp.return_type);
                quote!(#[doc = #doc] pub type #id = Option<unsafe extern "system" fn #sig>;)
            }
            TypeDef::Alias(target) => {
                let target = format_ident!("{}", target);
                quote!(#[doc = #doc] pub type #id = #target;)
            }
        };
        items.push(item);
    }
    items.push(command_pointers(reg));
    let tokens = quote! {
        use core::ffi::{c_char, c_int, c_ulong, c_void};
        #(#items)*
    };
    rust_file(reg, "Vulkan types, constants and function pointer types", tokens)
}

/// The documentation of a type: its name, linked to the specification's page where there is
/// one, and what else the Rust side makes of it. `flags` is the bitmask type that holds the values
/// of a `*FlagBits` enum.
fn type_doc(name: &str, def: &TypeDef, flags: Option<&str>) -> String {
    let link = spec_link(name);
    let video = if name.starts_with("StdVideo") { ", from the video codec headers (`video.xml`)" } else { "" };
    match (def, flags) {
        (TypeDef::Platform { header }, _) => format!("{link}, a platform type (`{header}`)."),
        (TypeDef::Base { underlying: None }, _) => format!("{link}, an opaque platform type, only used behind pointers."),
        (TypeDef::Base { .. }, _) if !name.starts_with("Vk") => format!("{link}, a platform type."),
        (TypeDef::Enum, Some(flags)) => format!("{link}: the bits of [`{flags}`], which holds them as associated constants."),
        (TypeDef::Enum | TypeDef::Bitmask { .. }, _) => format!("{link}{video}; its values are associated constants."),
        (TypeDef::Alias(target), _) => format!("{link}: another name of [`{target}`]."),
        _ => format!("{link}{video}."),
    }
}

/// Rust names for enum values: `VK_STRUCTURE_TYPE_APPLICATION_INFO` is
/// `VkStructureType::APPLICATION_INFO`, ash-style (the type's prefix and nothing else stripped).
pub struct VariantNames {
    /// C value name -> (Rust type holding it, associated constant name).
    pub by_value_name: BTreeMap<String, (String, String)>,
}

impl VariantNames {
    pub fn new(reg: &Registry) -> Self {
        let mut by_value_name = BTreeMap::new();
        for (name, def) in &reg.types {
            let (owner, group) = match def {
                TypeDef::Enum if !is_bits_of_a_bitmask(reg, name) => (name, reg.enums.get(name)),
                TypeDef::Bitmask { bits, .. } => (name, bits.as_ref().and_then(|b| reg.enums.get(b))),
                _ => continue,
            };
            let Some(group) = group else { continue };
            let prefix = variant_prefix(&group.name, &reg.tags);
            let mut taken = BTreeSet::new();
            for value in group.values.keys() {
                let mut short = strip_prefix(value, &prefix);
                if !taken.insert(short.clone()) {
                    short = value.clone();
                    taken.insert(short.clone());
                }
                by_value_name.insert(value.clone(), (owner.clone(), short));
            }
        }
        VariantNames { by_value_name }
    }

    /// `VkStructureType::APPLICATION_INFO` for `VK_STRUCTURE_TYPE_APPLICATION_INFO`.
    pub fn path(&self, value_name: &str) -> Option<TokenStream> {
        let (owner, short) = self.by_value_name.get(value_name)?;
        let owner = format_ident!("{}", owner);
        let short = format_ident!("{}", short);
        Some(quote!(#owner::#short))
    }
}

fn is_bits_of_a_bitmask(reg: &Registry, name: &str) -> bool {
    reg.types
        .values()
        .any(|d| matches!(d, TypeDef::Bitmask { bits: Some(b), .. } if b == name))
}

/// `VkSampleCountFlagBits` -> `VK_SAMPLE_COUNT_`; `VkFormatFeatureFlagBits2` -> `VK_FORMAT_FEATURE_2_`;
/// vendor tags are dropped (`VkSurfaceTransformFlagBitsKHR` -> `VK_SURFACE_TRANSFORM_`).
fn variant_prefix(type_name: &str, tags: &[String]) -> String {
    let mut base = type_name;
    for tag in tags {
        if let Some(stripped) = base.strip_suffix(tag.as_str()) {
            base = stripped;
            break;
        }
    }
    let mut suffix = String::new();
    if let Some(pos) = base.find("FlagBits") {
        suffix = base[pos + "FlagBits".len()..].to_string();
        base = &base[..pos];
    }
    let mut prefix = base.to_shouty_snake_case();
    if !suffix.is_empty() {
        prefix.push('_');
        prefix.push_str(&suffix);
    }
    prefix.push('_');
    prefix
}

/// Strips the prefix where that leaves a valid identifier; else keeps the prefix's last word
/// (`VK_IMAGE_TYPE_2D` -> `TYPE_2D`); values outside the prefix keep their name minus `VK_`.
fn strip_prefix(value: &str, prefix: &str) -> String {
    let starts_alpha = |s: &str| s.starts_with(|c: char| c.is_ascii_alphabetic());
    let Some(rest) = value.strip_prefix(prefix) else {
        let rest = value.strip_prefix("VK_").unwrap_or(value);
        return if starts_alpha(rest) { rest.to_string() } else { value.to_string() };
    };
    // Give back prefix words until the name starts with a letter.
    let words: Vec<&str> = prefix.trim_end_matches('_').split('_').collect();
    let mut name = rest.to_string();
    for word in words.iter().rev() {
        if starts_alpha(&name) {
            break;
        }
        name = format!("{word}_{name}");
    }
    name
}

fn constants(reg: &Registry) -> TokenStream {
    let (major, minor, patch) = (reg.header_api.0, reg.header_api.1, reg.header_version);
    let complete = super::api_version(major, minor) | patch;
    let version_items = quote! {
        /// `VK_HEADER_VERSION`: the registry's patch version.
        pub const VK_HEADER_VERSION: u32 = #patch;
        /// `VK_HEADER_VERSION_COMPLETE`: the registry's full API version.
        pub const VK_HEADER_VERSION_COMPLETE: u32 = #complete;
    };
    let items = reg.constants.values().map(|c| {
        let name = format_ident!("{}", c.name);
        let (ty, value) = constant_value(reg, &c.value);
        let doc = match c.name.starts_with("STD_VIDEO_") {
            true => format!("`{}`, from the video codec headers (`video.xml`).", c.name),
            false => spec_link(&c.name),
        };
        quote!(#[doc = #doc] pub const #name: #ty = #value;)
    });
    quote!(#version_items #(#items)*)
}

fn constant_value(reg: &Registry, value: &ConstantValue) -> (TokenStream, TokenStream) {
    match value {
        ConstantValue::U32(v) => {
            let lit = Literal::u32_unsuffixed(*v);
            (quote!(u32), quote!(#lit))
        }
        ConstantValue::U64(v) => {
            let lit = Literal::u64_unsuffixed(*v);
            (quote!(u64), quote!(#lit))
        }
        ConstantValue::F32(v) => {
            let lit = Literal::f32_unsuffixed(*v);
            (quote!(f32), quote!(#lit))
        }
        ConstantValue::Alias(target) => {
            let ty = match reg.constants.get(target) {
                Some(c) => constant_value(reg, &c.value).0,
                None => quote!(u32),
            };
            let target = format_ident!("{}", target);
            (ty, quote!(#target))
        }
    }
}

fn platform(name: &str, doc: &str) -> TokenStream {
    let id = format_ident!("{}", name);
    match PLATFORM_SCALARS.iter().find(|(n, _)| *n == name) {
        Some((_, ty)) => {
            let ty: TokenStream = ty.parse().expect("valid type in PLATFORM_SCALARS");
            quote!(#[doc = #doc] pub type #id = #ty;)
        }
        None => opaque(name, doc),
    }
}

fn opaque(name: &str, doc: &str) -> TokenStream {
    let id = format_ident!("{}", name);
    quote! {
        #[doc = #doc]
        #[repr(C)]
        pub struct #id { _opaque: [u8; 0] }
    }
}

/// Whether a type has no Rust definition with a size (an opaque struct).
fn is_opaque(reg: &Registry, name: &str) -> bool {
    match reg.types.get(resolve_alias(reg, name)) {
        Some(TypeDef::Platform { .. }) => !PLATFORM_SCALARS.iter().any(|(n, _)| *n == name),
        Some(TypeDef::Base { underlying: None }) => true,
        _ => false,
    }
}

/// An opaque type used by value would silently get size zero: stop instead.
fn check_opaque_use(reg: &Registry) -> Result<(), String> {
    let aggregates = reg.types.iter().filter_map(|(n, d)| match d {
        TypeDef::Struct(a) | TypeDef::Union(a) => Some((n, &a.members)),
        _ => None,
    });
    let commands = reg.commands.values().map(|c| (&c.name, &c.params));
    for (owner, fields) in aggregates.chain(commands) {
        for f in fields {
            if f.ty.pointers.is_empty() && is_opaque(reg, &f.ty.base) {
                return Err(format!(
                    "{owner}.{} uses the platform type {} by value; add it to PLATFORM_SCALARS with its C type",
                    f.name, f.ty.base
                ));
            }
        }
    }
    Ok(())
}

/// An enum or bitmask: a transparent newtype with one associated constant per value.
fn value_type(
    names: &VariantNames,
    name: &str,
    doc: &str,
    group: Option<&EnumGroup>,
    bitmask_width: Option<u32>,
) -> TokenStream {
    let id = format_ident!("{}", name);
    let width = bitmask_width.or(group.map(|g| g.width)).unwrap_or(32);
    let is_bitmask = bitmask_width.is_some() || group.is_some_and(|g| g.is_bitmask);
    let repr = match (is_bitmask, width) {
        (true, 64) => quote!(u64),
        (true, _) => quote!(u32),
        (false, _) => quote!(i32),
    };
    let mut values: Vec<(&String, &EnumValue)> = group.map(|g| g.values.iter().collect()).unwrap_or_default();
    values.sort_by_key(|(n, v)| match v {
        EnumValue::Value(x) => (0, *x, (*n).clone()),
        EnumValue::Alias(_) => (1, 0, (*n).clone()),
    });
    let mut consts = Vec::new();
    let mut arms = Vec::new();
    let mut seen_values = BTreeSet::new();
    for (value_name, value) in values {
        let Some((_, short)) = names.by_value_name.get(value_name.as_str()) else { continue };
        let short = format_ident!("{}", short);
        let doc = format!("`{value_name}`");
        match value {
            EnumValue::Value(v) => {
                let lit = match (is_bitmask, width) {
                    (true, 64) => Literal::u64_unsuffixed(*v as u64),
                    (true, _) => Literal::u32_unsuffixed(*v as u32),
                    (false, _) => Literal::i32_unsuffixed(*v as i32),
                };
                consts.push(quote!(#[doc = #doc] pub const #short: Self = Self(#lit);));
                if !is_bitmask && seen_values.insert(*v) {
                    arms.push(quote!(Self::#short => Some(#value_name),));
                }
            }
            EnumValue::Alias(target) => {
                if let Some((_, target)) = names.by_value_name.get(target) {
                    let target = format_ident!("{}", target);
                    consts.push(quote!(#[doc = #doc] pub const #short: Self = Self::#target;));
                }
            }
        }
    }
    if is_bitmask {
        quote! {
            #[doc = #doc]
            #[repr(transparent)]
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Debug)]
            pub struct #id(pub #repr);
            impl #id { #(#consts)* }
            bitmask_ops!(#id, #repr);
        }
    } else {
        quote! {
            #[doc = #doc]
            #[repr(transparent)]
            #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
            pub struct #id(pub #repr);
            impl #id {
                #(#consts)*
                /// The C name of this value, if the registry defines it.
                pub const fn name(self) -> Option<&'static str> {
                    match self { #(#arms)* _ => None }
                }
            }
            enum_debug!(#id);
        }
    }
}

/// Bits of the scalar a bitfield member is declared with.
fn scalar_bits(reg: &Registry, base: &str) -> Option<u32> {
    match base {
        "uint8_t" | "int8_t" => Some(8),
        "uint16_t" | "int16_t" => Some(16),
        "uint32_t" | "int32_t" | "int" => Some(32),
        "uint64_t" | "int64_t" => Some(64),
        _ => match reg.types.get(resolve_alias(reg, base))? {
            TypeDef::Bitmask { width, .. } => Some(*width),
            TypeDef::Enum => Some(32),
            TypeDef::Base { underlying: Some(t) } if t.pointers.is_empty() => scalar_bits(reg, &t.base),
            _ => None,
        },
    }
}

/// One field of a generated aggregate: a member as declared, or one storage unit holding a run of
/// bitfield members.
pub(crate) enum Slot<'a> {
    Member(&'a Field),
    Bits(BitUnit<'a>),
}

/// A storage unit of consecutive bitfields: one Rust integer of `unit` bits, named after its members
/// joined with `_and_`; each member with its shift and width, packed from the least significant bit.
pub(crate) struct BitUnit<'a> {
    pub field: String,
    pub unit: u32,
    pub members: Vec<(&'a Field, u32, u32)>,
}

impl BitUnit<'_> {
    /// Bits of the unit that hold a member.
    pub fn used(&self) -> u32 {
        self.members.iter().map(|(_, _, width)| width).sum()
    }
}

/// The fields of an aggregate as `types.rs` lays them out. C packs consecutive bitfields into
/// storage units of the declared type's size, from the least significant bit (the System V ABI);
/// one Rust integer stands for each unit.
pub(crate) fn slots<'a>(reg: &Registry, name: &str, agg: &'a Aggregate) -> Result<Vec<Slot<'a>>, String> {
    let mut slots = Vec::new();
    let mut i = 0;
    while i < agg.members.len() {
        let m = &agg.members[i];
        if m.bitfield.is_none() {
            slots.push(Slot::Member(m));
            i += 1;
            continue;
        }
        let Some(unit) = scalar_bits(reg, &m.ty.base) else {
            return Err(format!("{name}.{}: bitfield of unknown width type {}", m.name, m.ty.base));
        };
        let mut used = 0;
        let mut members = Vec::new();
        while let Some(b) = agg.members.get(i).and_then(|m| m.bitfield.map(|b| (m, b))) {
            if used + b.1 > unit {
                break;
            }
            members.push((b.0, used, b.1));
            used += b.1;
            i += 1;
        }
        let field = members.iter().map(|(m, _, _)| m.name.as_str()).collect::<Vec<_>>().join("_and_");
        slots.push(Slot::Bits(BitUnit { field, unit, members }));
    }
    Ok(slots)
}

fn aggregate(
    reg: &Registry,
    names: &VariantNames,
    name: &str,
    doc: &str,
    agg: &Aggregate,
    is_union: bool,
) -> Result<TokenStream, String> {
    let id = format_ident!("{}", name);
    let mut fields = Vec::new();
    let mut accessors = Vec::new();
    for slot in slots(reg, name, agg)? {
        let bits = match slot {
            Slot::Member(m) => {
                let doc = format!("`{}`", m.c_decl);
                let fname = ident(&m.name);
                let ty = field_type(&m.ty, &m.array);
                fields.push(quote!(#[doc = #doc] pub #fname: #ty));
                continue;
            }
            Slot::Bits(bits) => bits,
        };
        let storage = format_ident!("u{}", bits.unit);
        let fname = format_ident!("{}", bits.field);
        let doc = bits.members.iter().map(|(m, _, _)| m.c_decl.as_str()).collect::<Vec<_>>().join("; ");
        let doc = format!("Bitfields `{doc}`, packed from the least significant bit.");
        fields.push(quote!(#[doc = #doc] pub #fname: #storage));
        for (m, shift, width) in bits.members {
            let getter = ident(&m.name);
            let setter = format_ident!("set_{}", m.name);
            let mask = Literal::u64_unsuffixed(if width == 64 { u64::MAX } else { (1u64 << width) - 1 });
            let shift = Literal::u32_unsuffixed(shift);
            let (get_doc, set_doc) = (format!("`{}`: reads the bitfield.", m.c_decl), format!("`{}`: writes the bitfield.", m.c_decl));
            accessors.push(quote! {
                #[doc = #get_doc]
                pub fn #getter(&self) -> #storage { (self.#fname >> #shift) & (#mask as #storage) }
                #[doc = #set_doc]
                pub fn #setter(&mut self, value: #storage) {
                    let mask = (#mask as #storage) << #shift;
                    self.#fname = (self.#fname & !mask) | ((value << #shift) & mask);
                }
            });
        }
    }
    let keyword = if is_union { quote!(union) } else { quote!(struct) };
    let stype = agg
        .members
        .first()
        .filter(|m| m.name == "sType")
        .and_then(|m| m.values.as_deref())
        .and_then(|v| names.path(v));
    let default = match stype {
        Some(stype) if !is_union => quote!(tagged_struct!(#id, #stype);),
        _ => quote!(zeroed_default!(#id);),
    };
    let accessors = (!accessors.is_empty()).then(|| quote!(impl #id { #(#accessors)* }));
    Ok(quote! {
        #[doc = #doc]
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub #keyword #id { #(#fields),* }
        #default
        #accessors
    })
}

/// `PFN_vkCreateInstance` and friends, one per command name (aliases name the same signature).
fn command_pointers(reg: &Registry) -> TokenStream {
    let mut items = Vec::new();
    for command in reg.commands.values() {
        let pfn = format_ident!("PFN_{}", command.name);
        let sig = signature(&command.params, &command.return_type);
        let doc = format!("A pointer to {}.", spec_link(&command.name));
        items.push(quote!(#[doc = #doc] pub type #pfn = Option<unsafe extern "system" fn #sig>;));
        for alias in &command.aliases {
            let doc = format!("A pointer to {}, another name of [`{pfn}`].", spec_link(alias));
            let alias = format_ident!("PFN_{}", alias);
            items.push(quote!(#[doc = #doc] pub type #alias = #pfn;));
        }
    }
    quote!(#(#items)*)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        let tags = vec!["KHR".to_string(), "EXT".to_string()];
        assert_eq!(variant_prefix("VkStructureType", &tags), "VK_STRUCTURE_TYPE_");
        assert_eq!(variant_prefix("VkSurfaceTransformFlagBitsKHR", &tags), "VK_SURFACE_TRANSFORM_");
        assert_eq!(variant_prefix("VkFormatFeatureFlagBits2", &tags), "VK_FORMAT_FEATURE_2_");
        assert_eq!(strip_prefix("VK_IMAGE_TYPE_2D", "VK_IMAGE_TYPE_"), "TYPE_2D");
        assert_eq!(strip_prefix("VK_SUCCESS", "VK_RESULT_"), "SUCCESS");
        assert_eq!(strip_prefix("VK_QUEUE_GRAPHICS_BIT", "VK_QUEUE_"), "GRAPHICS_BIT");
        assert_eq!(
            strip_prefix("VK_PIPELINE_CREATE_2_64_BIT_INDEXING_BIT_EXT", "VK_PIPELINE_CREATE_2_"),
            "CREATE_2_64_BIT_INDEXING_BIT_EXT"
        );
    }
}
