//! The ABI probe: the same facts (sizes, alignments, member offsets, enum and constant values)
//! printed by a Rust table over the generated types and by a C program over the system headers.
//!
//! `rust_probe` is committed as `generated/abi/probe.rs`; `c_probe` is generated at test time from
//! the IR of the registry the C headers were made from (Debian's), so it names only what those
//! headers define. The ABI test compiles it with `cc` and compares the two outputs line by line.

use std::collections::BTreeSet;

use quote::{format_ident, quote};

use super::types::VariantNames;
use super::{ident, rust_file};
use crate::ir::*;

/// Whether a type's C definition is always visible through `<vulkan/vulkan.h>`: required by a
/// core version or an extension that is neither provisional nor platform-specific (those sit behind
/// `#ifdef`s), or a video codec type (before 1.3.250 the encode codec headers were included only by
/// vulkan_beta.h, so those are left out).
fn always_visible(reg: &Registry) -> impl Fn(&str) -> bool + '_ {
    let mut guarded = BTreeSet::new();
    let mut core = BTreeSet::new();
    for f in &reg.features {
        core.extend(f.requires.iter().flat_map(|r| &r.types));
    }
    for e in reg.extensions.values() {
        let set = if e.platform.is_some() || e.provisional { &mut guarded } else { &mut core };
        set.extend(e.requires.iter().flat_map(|r| &r.types));
    }
    move |name: &str| {
        let video = name.starts_with("StdVideo") && !name.contains("Encode");
        core.contains(&name.to_string()) || (video && !guarded.contains(&name.to_string()))
    }
}

/// Every struct and union name the Rust side knows, aliases included: older headers may have an
/// aggregate under a name that is an alias now.
fn rust_aggregates(reg: &Registry) -> Vec<(&String, &Aggregate)> {
    reg.types
        .keys()
        .filter_map(|n| match reg.types.get(crate::parse::resolve_alias(reg, n)) {
            Some(TypeDef::Struct(a) | TypeDef::Union(a)) => Some((n, a)),
            _ => None,
        })
        .collect()
}

/// Struct and union names whose layout can be compared.
fn comparable_aggregates(reg: &Registry) -> Vec<(&String, &Aggregate)> {
    let visible = always_visible(reg);
    reg.types
        .iter()
        .filter_map(|(n, d)| match d {
            TypeDef::Struct(a) | TypeDef::Union(a) => Some((n, a)),
            _ => None,
        })
        .filter(|(n, _)| visible(n))
        .collect()
}

/// Enum values comparable the same way: in a visible group, not added by a provisional or
/// platform extension.
fn comparable_values(reg: &Registry) -> Vec<(&String, &EnumGroup)> {
    let visible = always_visible(reg);
    let guarded = |value: &str| {
        reg.value_origins
            .get(value)
            .and_then(|o| reg.extensions.get(o))
            .is_some_and(|e| e.provisional || e.platform.is_some())
    };
    let mut out = Vec::new();
    for group in reg.enums.values().filter(|g| visible(&g.name)) {
        for (name, value) in &group.values {
            if matches!(value, EnumValue::Value(_)) && !guarded(name) {
                out.push((name, group));
            }
        }
    }
    out
}

fn constants(reg: &Registry) -> Vec<&Constant> {
    reg.constants
        .values()
        .filter(|c| !matches!(c.value, ConstantValue::Alias(_)) && !c.name.starts_with("STD_VIDEO_ENCODE"))
        .collect()
}

/// `generated/abi/probe.rs`: the Rust side, a table over the generated types.
pub fn rust_probe(reg: &Registry) -> Result<String, String> {
    let names = VariantNames::new(reg);
    let layouts = rust_aggregates(reg).into_iter().map(|(name, agg)| {
        let ty = format_ident!("{}", name);
        let members = agg.members.iter().filter(|m| m.bitfield.is_none()).map(|m| {
            let field = ident(&m.name);
            let member = &m.name;
            quote!((#member, core::mem::offset_of!(#ty, #field)))
        });
        quote!((#name, core::mem::size_of::<#ty>(), core::mem::align_of::<#ty>(), &[#(#members),*]))
    });
    let all_values = reg.enums.values().flat_map(|g| g.values.keys());
    let values = all_values.filter_map(|name| {
        let path = names.path(name)?;
        Some(quote!((#name, #path.0 as i128)))
    });
    let consts = reg.constants.values().map(|c| {
        let name = &c.name;
        let id = format_ident!("{}", c.name);
        let is_float = matches!(c.value, ConstantValue::F32(_))
            || matches!(&c.value, ConstantValue::Alias(t) if matches!(reg.constants.get(t).map(|t| &t.value), Some(ConstantValue::F32(_))));
        match is_float {
            true => quote!((#name, (#id * 1000.0) as i128)),
            false => quote!((#name, #id as i128)),
        }
    });
    let tokens = quote! {
        /// A type's name, size, alignment and (member, offset) list.
        pub type Layout = (&'static str, usize, usize, &'static [(&'static str, usize)]);
        /// The layout of every struct and union name.
        pub static LAYOUTS: &[Layout] = &[#(#layouts),*];
        /// (C name, value) for every enum and bitmask value name, aliases included.
        pub static VALUES: &[(&str, i128)] = &[#(#values),*];
        /// (C name, value) for API constants; floats scaled by 1000.
        pub static CONSTANTS: &[(&str, i128)] = &[#(#consts),*];
    };
    rust_file(reg, "ABI probe tables (used by generated/tests/abi.rs)", tokens)
}

/// A C program printing, for the registry's comparable items, lines the ABI test parses:
/// `T name size align`, `M type.member offset`, `V name value`, `C name value`.
pub fn c_probe(reg: &Registry) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include <vulkan/vulkan.h>\nint main(void) {\n",
    );
    for (name, agg) in comparable_aggregates(reg) {
        c += &format!("  printf(\"T {name} %zu %zu\\n\", sizeof({name}), _Alignof({name}));\n");
        for m in agg.members.iter().filter(|m| m.bitfield.is_none()) {
            c += &format!("  printf(\"M {name}.{0} %zu\\n\", offsetof({name}, {0}));\n", m.name);
        }
    }
    for (name, group) in comparable_values(reg) {
        let cast = if group.width == 64 { "(long long)(unsigned long long)" } else { "(long long)" };
        c += &format!("  printf(\"V {name} %lld\\n\", {cast}{name});\n");
    }
    for constant in constants(reg) {
        let name = &constant.name;
        match constant.value {
            ConstantValue::F32(_) => c += &format!("  printf(\"C {name} %lld\\n\", (long long)({name} * 1000.0));\n"),
            ConstantValue::U64(_) => c += &format!("  printf(\"C {name} %llu\\n\", (unsigned long long){name});\n"),
            _ => c += &format!("  printf(\"C {name} %lld\\n\", (long long){name});\n"),
        }
    }
    c += "  return 0;\n}\n";
    c
}
