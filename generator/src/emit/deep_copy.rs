//! `deep_copy.rs`: deep copies of `VkInstanceCreateInfo` and its `pNext` chain, for the loader to
//! create a driver's instance after `vkCreateInstance` returned (`generated/src/deep_copy.rs` holds
//! the owner of the copies and the helpers the emitted code calls).
//!
//! Scope: `VkInstanceCreateInfo`, every structure whose `structextends` names a structure in scope
//! (the chain structures), and every structure a structure in scope points to or embeds, to a fixed
//! point. For each structure holding pointers the file has one `fix_<Name>` that re-points a bitwise
//! copy at copies of what it points to, sized from the members' `len`; `chain_node` copies one chain
//! structure by its sType. A member the rules below cannot size makes its structure uncopyable (its
//! `fix_` returns an error, documented with the reason) rather than copied wrongly.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::VariantNames;
use super::{base_type, ident, rust_file, safety, safety_doc};
use crate::ir::*;
use crate::parse::resolve_alias;

/// The structure a copy starts from.
const ROOT: &str = "VkInstanceCreateInfo";

/// The one member whose element type vk.xml does not give: `VkLayerSettingEXT::pValues` has
/// `len="valueCount"` and type `const void*`; the element type is chosen at run time by the `type`
/// member (VK_EXT_layer_settings). Each `VkLayerSettingTypeEXT` value and its element's C type,
/// by hand; `char*` elements are strings, copied too. A registry that adds a value fails generation
/// until it is added here. At run time an unknown `type` makes the structure uncopyable.
const LAYER_SETTING: (&str, &str) = ("VkLayerSettingEXT", "pValues");
const LAYER_SETTING_VALUE_TYPES: &[(&str, &str)] = &[
    ("VK_LAYER_SETTING_TYPE_BOOL32_EXT", "VkBool32"),
    ("VK_LAYER_SETTING_TYPE_INT32_EXT", "int32_t"),
    ("VK_LAYER_SETTING_TYPE_INT64_EXT", "int64_t"),
    ("VK_LAYER_SETTING_TYPE_UINT32_EXT", "uint32_t"),
    ("VK_LAYER_SETTING_TYPE_UINT64_EXT", "uint64_t"),
    ("VK_LAYER_SETTING_TYPE_FLOAT32_EXT", "float"),
    ("VK_LAYER_SETTING_TYPE_FLOAT64_EXT", "double"),
    ("VK_LAYER_SETTING_TYPE_STRING_EXT", "char*"),
];

/// How one member of a bitwise copy is made deep.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    /// Nothing to do: scalars, enums, handles, function pointers, `pUserData` and other pointers
    /// the registry gives no length for (`void*`, platform objects), copied as values.
    Value,
    /// `pNext`: the chain, copied with the same rules.
    Next,
    /// `len="null-terminated"` string.
    String,
    /// `len="<count>,null-terminated"`: an array of strings.
    Strings { count: String },
    /// Scalars, `count` of them (one where the registry gives no length).
    Array { count: Option<String> },
    /// `void*` data whose `len` names a byte size (`dataSize`, `codeSize`).
    Bytes { size: String },
    /// Structures, `count` of them (one where no length is given).
    Structs { ty: String, count: Option<String> },
    /// A structure held by value (one dimension of a fixed array at most) that holds pointers.
    Embedded { ty: String, array: bool },
    /// `VkLayerSettingEXT::pValues`: see [`LAYER_SETTING_VALUE_TYPES`].
    LayerSettingValues,
    /// A member the rules cannot copy, and why.
    Unsupported(String),
}

struct Scope<'a> {
    /// Every structure in scope, by name.
    structs: BTreeMap<&'a str, &'a Aggregate>,
    /// Those that may sit in a chain (they extend a structure in scope).
    chain: BTreeSet<&'a str>,
    /// Each structure's members, classified.
    members: BTreeMap<&'a str, Vec<(&'a Field, Member)>>,
    /// Structures that need a `fix_` function.
    needs_fix: BTreeSet<&'a str>,
}

pub fn emit(reg: &Registry) -> Result<String, String> {
    let scope = scope(reg)?;
    let names = VariantNames::new(reg);
    let stype_path = |name: &str| -> Result<TokenStream, String> {
        let agg = scope.structs[name];
        let value = agg
            .members
            .first()
            .filter(|m| m.name == "sType")
            .and_then(|m| m.values.as_deref())
            .ok_or_else(|| format!("{name} extends a structure but has no fixed sType"))?;
        names.path(value).ok_or_else(|| format!("{name}: sType value {value} is not a known VkStructureType"))
    };

    let mut fixes = Vec::new();
    for &name in &scope.needs_fix {
        fixes.push(fix_fn(reg, &scope, &names, name)?);
    }

    let mut arms = Vec::new();
    let mut stypes = Vec::new();
    let mut doc_list = Vec::new();
    for &name in &scope.chain {
        let stype = stype_path(name)?;
        let ty = format_ident!("{}", name);
        let fix = if scope.needs_fix.contains(name) {
            let fix = format_ident!("fix_{}", name);
            quote!(Some(#fix))
        } else {
            quote!(None)
        };
        arms.push(quote!(#stype => c.chain_struct::<#ty>(src, #fix),));
        stypes.push(stype);
        doc_list.push(format!("`{name}`"));
    }
    let chain_doc = format!(
        "Copies the chain structure at `src`, whose sType is `stype`; any sType but these is an error: {}.",
        doc_list.join(", ")
    );
    // generated/src/deep_copy.rs starts every copy with `fix_VkInstanceCreateInfo`.
    if !scope.needs_fix.contains(ROOT) {
        return Err(format!("{ROOT} holds no pointers: the deep copy emitter's assumptions no longer hold"));
    }

    let chain_why = safety(
        "`src` points to a valid structure of the type `stype` names (this function's contract), \
         which each arm copies as the structure its `sType` value belongs to.",
    );
    let tokens = quote! {
        use core::ffi::{c_char, c_void};
        use super::{DeepCopy, Fail};
        use crate::types::*;

        /// The sTypes of the structures a copied chain may hold, in name order: every structure of
        /// this API that extends `VkInstanceCreateInfo`, or a structure a copy of it reaches.
        pub const CHAIN_STRUCTURE_TYPES: &[VkStructureType] = &[#(#stypes),*];

        #[doc = #chain_doc]
        ///
        /// # Safety
        /// `src` points to a structure of the type `stype` names, valid as `vkCreateInstance`
        /// accepts it (every pointer valid for the count its structure gives, every chain
        /// NULL-terminated and free of cycles).
        pub(super) unsafe fn chain_node(c: &mut DeepCopy, src: *const c_void, stype: VkStructureType) -> Result<*mut c_void, Fail> {
            #chain_why
            unsafe {
                match stype {
                    #(#arms)*
                    _ => Err(Fail::At(stype)),
                }
            }
        }

        #(#fixes)*
    };
    rust_file(reg, "deep copies of VkInstanceCreateInfo and its pNext chain", tokens)
}

/// The structures in scope, to a fixed point, with their members classified.
fn scope(reg: &Registry) -> Result<Scope<'_>, String> {
    let aggregate = |name: &str| match reg.types.get(resolve_alias(reg, name)) {
        Some(TypeDef::Struct(agg)) => Some(agg),
        _ => None,
    };
    // The registry keeps the definitions of every API's types; a structure belongs to this API
    // when a feature or extension the parser kept (api-filtered) requires it. That leaves out the
    // chain structures of Vulkan SC (`VkApplicationParametersEXT`), whose sTypes this API lacks.
    let in_api: BTreeSet<&str> = reg
        .features
        .iter()
        .flat_map(|f| &f.requires)
        .chain(reg.extensions.values().flat_map(|e| &e.requires))
        .flat_map(|r| &r.types)
        .map(|t| resolve_alias(reg, t))
        .collect();
    let mut structs: BTreeMap<&str, &Aggregate> = BTreeMap::new();
    let mut chain = BTreeSet::new();
    let root = aggregate(ROOT).ok_or_else(|| format!("{ROOT} is not a structure of this registry"))?;
    structs.insert(ROOT, root);
    loop {
        let before = structs.len();
        for (name, def) in &reg.types {
            let TypeDef::Struct(agg) = def else { continue };
            if !structs.contains_key(name.as_str())
                && in_api.contains(name.as_str())
                && agg.struct_extends.iter().any(|e| structs.contains_key(resolve_alias(reg, e)))
            {
                structs.insert(name, agg);
                chain.insert(name.as_str());
            }
        }
        let reached: Vec<&str> = structs
            .values()
            .flat_map(|agg| &agg.members)
            .map(|m| resolve_alias(reg, &m.ty.base))
            .filter(|base| aggregate(base).is_some())
            .collect();
        for base in reached {
            if let Some(agg) = aggregate(base) {
                structs.entry(base).or_insert(agg);
            }
        }
        if structs.len() == before {
            break;
        }
    }

    // Structures only ever copied as chain nodes have their pNext linked by `copy_chain`.
    let reached: BTreeSet<&str> = structs
        .values()
        .flat_map(|agg| &agg.members)
        .map(|m| resolve_alias(reg, &m.ty.base))
        .collect();
    let mut members = BTreeMap::new();
    for (&name, agg) in &structs {
        let linked_by_chain = chain.contains(name) && !reached.contains(name);
        let classified: Vec<(&Field, Member)> = agg
            .members
            .iter()
            .map(|m| match classify(reg, name, agg, m) {
                Member::Next if linked_by_chain => (m, Member::Value),
                other => (m, other),
            })
            .collect();
        members.insert(name, classified);
    }
    if let Some(fields) = members.get(LAYER_SETTING.0) {
        if fields.iter().any(|(_, m)| *m == Member::LayerSettingValues) {
            check_layer_setting_rule(reg)?;
        }
    }
    // A structure needs a `fix_` when a member needs work: anything but a value, or a structure
    // embedded by value that itself needs one (to a fixed point; embedding cannot be circular).
    let mut needs_fix = BTreeSet::new();
    loop {
        let before = needs_fix.len();
        for (&name, fields) in &members {
            let needs = fields.iter().any(|(_, m)| match m {
                Member::Value => false,
                Member::Embedded { ty, .. } => needs_fix.contains(ty.as_str()),
                _ => true,
            });
            if needs {
                needs_fix.insert(name);
            }
        }
        if needs_fix.len() == before {
            break;
        }
    }
    Ok(Scope { structs, chain, members, needs_fix })
}

/// How member `m` of structure `owner` is copied.
fn classify(reg: &Registry, owner: &str, agg: &Aggregate, m: &Field) -> Member {
    let base = resolve_alias(reg, &m.ty.base);
    let def = reg.types.get(base);
    let count = |len: &str| -> Result<String, String> {
        match agg.members.iter().find(|c| c.name == len) {
            Some(c) if c.ty.pointers.is_empty() && c.array.is_empty() => Ok(len.to_string()),
            _ => Err(format!("len `{len}` is not a scalar member of {owner}")),
        }
    };
    let unsupported = |why: String| Member::Unsupported(format!("{}: {why}", m.c_decl));
    if (owner, m.name.as_str()) == LAYER_SETTING {
        return Member::LayerSettingValues;
    }
    match m.ty.pointers.len() {
        0 => match def {
            Some(TypeDef::Struct(_)) => match m.array.len() {
                0 | 1 => Member::Embedded { ty: base.to_string(), array: m.array.len() == 1 },
                _ => unsupported("a structure in a multi-dimensional array".into()),
            },
            Some(TypeDef::Union(u)) if u.members.iter().any(|f| !f.ty.pointers.is_empty()) => {
                unsupported("a union holding pointers".into())
            }
            _ => Member::Value,
        },
        _ if !m.array.is_empty() => unsupported("an array of pointers".into()),
        1 if m.name == "pNext" => Member::Next,
        1 => {
            let len = m.len.as_deref();
            match (base, def, len) {
                ("char", _, Some("null-terminated")) => Member::String,
                (_, _, Some("null-terminated")) => unsupported("null-terminated array of non-characters".into()),
                ("void", _, None) => Member::Value,
                ("void", _, Some(len)) if len.ends_with("Size") => match count(len) {
                    Ok(size) => Member::Bytes { size },
                    Err(e) => unsupported(e),
                },
                ("void", _, Some(len)) => unsupported(format!("untyped data counted by `{len}`, not a byte size")),
                (_, Some(TypeDef::Platform { .. } | TypeDef::Base { underlying: None }), _) => Member::Value,
                (_, Some(TypeDef::Union(_)), _) => unsupported("a pointer to a union".into()),
                (_, Some(TypeDef::FuncPointer(_)), _) => Member::Value,
                (_, Some(TypeDef::Struct(_)), len) => match len.map(count).transpose() {
                    Ok(count) => Member::Structs { ty: base.to_string(), count },
                    Err(e) => unsupported(e),
                },
                (_, _, len) => match len.map(count).transpose() {
                    Ok(count) => Member::Array { count },
                    Err(e) => unsupported(e),
                },
            }
        }
        2 => {
            let len = m.len.as_deref().unwrap_or("");
            match (base, len.strip_suffix(",null-terminated")) {
                ("char", Some(n)) if m.ty.pointers[0] => match count(n) {
                    Ok(count) => Member::Strings { count },
                    Err(e) => unsupported(e),
                },
                _ => unsupported(format!("pointer to pointers with len `{len}`")),
            }
        }
        _ => unsupported("three or more levels of pointers".into()),
    }
}

/// The hand-written rule for `VkLayerSettingEXT::pValues` still matches the registry.
fn check_layer_setting_rule(reg: &Registry) -> Result<(), String> {
    let Some(TypeDef::Struct(agg)) = reg.types.get(LAYER_SETTING.0) else { unreachable!("classified above") };
    let member = |name: &str| agg.members.iter().find(|m| m.name == name);
    let shape_ok = member("type").is_some_and(|m| m.ty.base == "VkLayerSettingTypeEXT" && m.ty.pointers.is_empty())
        && member("valueCount").is_some_and(|m| m.ty.pointers.is_empty())
        && member(LAYER_SETTING.1).is_some_and(|m| m.len.as_deref() == Some("valueCount") && m.ty.base == "void");
    if !shape_ok {
        return Err(format!(
            "{}::{} no longer has the shape LAYER_SETTING_VALUE_TYPES (generator/src/emit/deep_copy.rs) assumes",
            LAYER_SETTING.0, LAYER_SETTING.1
        ));
    }
    let group = reg
        .enums
        .get("VkLayerSettingTypeEXT")
        .ok_or("VkLayerSettingTypeEXT has no values in this registry")?;
    for (value, def) in &group.values {
        if matches!(def, EnumValue::Value(_)) && !LAYER_SETTING_VALUE_TYPES.iter().any(|(v, _)| v == value) {
            return Err(format!(
                "{value} is new: add its element type to LAYER_SETTING_VALUE_TYPES (generator/src/emit/deep_copy.rs)"
            ));
        }
    }
    Ok(())
}

/// `fix_<name>`: re-points a bitwise copy of the structure at copies of what it points to.
fn fix_fn(reg: &Registry, scope: &Scope, names: &VariantNames, name: &str) -> Result<TokenStream, String> {
    let fname = format_ident!("fix_{}", name);
    let ty = format_ident!("{}", name);
    let fields = &scope.members[name];
    let unsupported: Vec<&str> = fields
        .iter()
        .filter_map(|(_, m)| match m {
            Member::Unsupported(why) => Some(why.as_str()),
            _ => None,
        })
        .collect();
    let contract = safety_doc(&format!(
        "`dst` is a bitwise copy of a `{name}` valid as `vkCreateInstance` accepts it: every pointer \
         in it NULL or valid for the count its members give, every chain NULL-terminated and free of \
         cycles."
    ));
    if !unsupported.is_empty() {
        let doc = format!("`{name}` cannot be copied from the registry's description alone: {}.", unsupported.join("; "));
        return Ok(quote! {
            #[doc = #doc]
            #[doc = ""]
            #contract
            pub(super) unsafe fn #fname(_c: &mut DeepCopy, _dst: &mut #ty) -> Result<(), Fail> {
                Err(Fail::Here)
            }
        });
    }
    let count_of = |count: &Option<String>| match count {
        Some(n) => {
            let n = ident(n);
            quote!(dst.#n as usize)
        }
        None => quote!(1),
    };
    let structs_or_array = |ty: &str| {
        if scope.needs_fix.contains(ty) {
            let fix = format_ident!("fix_{}", ty);
            quote!(c.structs(src, n, #fix))
        } else {
            quote!(c.array(src, n))
        }
    };
    let mut steps = Vec::new();
    for (field, member) in fields {
        let m = ident(&field.name);
        let step = match member {
            Member::Value | Member::Unsupported(_) => continue,
            Member::Next => quote!(dst.#m = c.copy_chain(dst.#m as *const c_void)? as _;),
            Member::String => quote!(dst.#m = c.string(dst.#m as *const c_char)? as _;),
            Member::Strings { count } => {
                let n = count_of(&Some(count.clone()));
                quote!(dst.#m = c.strings(dst.#m as *const *const c_char, #n)? as _;)
            }
            Member::Array { count } => {
                let n = count_of(count);
                quote!(dst.#m = c.array(dst.#m as *const _, #n)? as _;)
            }
            Member::Bytes { size } => {
                let n = count_of(&Some(size.clone()));
                quote!(dst.#m = c.bytes(dst.#m as *const c_void, #n)? as _;)
            }
            Member::Structs { ty, count } => {
                let n = count_of(count);
                let call = structs_or_array(ty);
                quote!(dst.#m = { let (src, n) = (dst.#m as *const _, #n); #call? as _ };)
            }
            Member::Embedded { ty, array } => {
                if !scope.needs_fix.contains(ty.as_str()) {
                    continue;
                }
                let fix = format_ident!("fix_{}", ty);
                if *array {
                    quote!(for e in dst.#m.iter_mut() { #fix(c, e)?; })
                } else {
                    quote!(#fix(c, &mut dst.#m)?;)
                }
            }
            Member::LayerSettingValues => layer_setting_values(reg, names, field)?,
        };
        steps.push(step);
    }
    let doc = format!("Re-points a bitwise copy of `{name}` at copies of what it points to.");
    let steps = if steps.is_empty() {
        quote!()
    } else {
        let why = safety(
            "each pointer of `dst` is NULL or valid for the count its members give (this function's \
             contract), which is what each copy reads.",
        );
        quote!(#why unsafe { #(#steps)* })
    };
    Ok(quote! {
        #[doc = #doc]
        #[doc = ""]
        #contract
        pub(super) unsafe fn #fname(c: &mut DeepCopy, dst: &mut #ty) -> Result<(), Fail> {
            #steps
            Ok(())
        }
    })
}

/// `pValues = match type { ... }`, from [`LAYER_SETTING_VALUE_TYPES`].
fn layer_setting_values(reg: &Registry, names: &VariantNames, field: &Field) -> Result<TokenStream, String> {
    let m = ident(&field.name);
    let group = &reg.enums["VkLayerSettingTypeEXT"];
    let mut arms = Vec::new();
    for &(value, c_type) in LAYER_SETTING_VALUE_TYPES {
        if !group.values.contains_key(value) {
            continue;
        }
        let path = names.path(value).ok_or_else(|| format!("{value}: no Rust name"))?;
        let copy = if c_type == "char*" {
            quote!(c.strings(dst.#m as *const *const c_char, n)?)
        } else {
            let elem = base_type(c_type);
            quote!(c.array(dst.#m as *const #elem, n)?)
        };
        arms.push(quote!(#path => #copy as _,));
    }
    Ok(quote! {
        let n = dst.valueCount as usize;
        dst.#m = match dst.r#type {
            #(#arms)*
            _ => return Err(Fail::Here),
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(decl: &str, name: &str, base: &str, pointers: Vec<bool>, len: Option<&str>) -> Field {
        Field {
            name: name.into(),
            ty: CType { base: base.into(), pointers },
            array: vec![],
            is_const: true,
            bitfield: None,
            optional: false,
            no_auto_validity: false,
            len: len.map(str::to_string),
            values: None,
            c_decl: decl.into(),
        }
    }

    #[test]
    fn members_the_rules_cannot_size_are_unsupported() {
        let reg = Registry::default();
        let members = vec![
            field("uint32_t count", "count", "uint32_t", vec![], None),
            field("size_t dataSize", "dataSize", "size_t", vec![], None),
            field("const void* pData", "pData", "void", vec![true], Some("dataSize")),
            field("const void* pValues", "pValues", "void", vec![true], Some("count")),
            field("const uint32_t* pCode", "pCode", "uint32_t", vec![true], Some("latexmath:[codeSize / 4]")),
            field("const char* const* ppNames", "ppNames", "char", vec![true, true], Some("count,null-terminated")),
            field("void* pUserData", "pUserData", "void", vec![false], None),
        ];
        let agg = Aggregate { members: members.clone(), struct_extends: vec![], returned_only: false };
        let kinds: Vec<Member> = members.iter().map(|m| classify(&reg, "VkTest", &agg, m)).collect();
        assert_eq!(kinds[0], Member::Value);
        assert_eq!(kinds[2], Member::Bytes { size: "dataSize".into() });
        assert!(matches!(&kinds[3], Member::Unsupported(why) if why.contains("not a byte size")), "{:?}", kinds[3]);
        assert!(matches!(&kinds[4], Member::Unsupported(why) if why.contains("not a scalar member")), "{:?}", kinds[4]);
        assert_eq!(kinds[5], Member::Strings { count: "count".into() });
        assert_eq!(kinds[6], Member::Value);
    }

    /// The vendored registry's scope, printed for reports (`--nocapture`), and the structures the
    /// loader relies on.
    #[test]
    fn vendored_registry_scope() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry");
        let reg = crate::load_registry(&root).unwrap();
        let scope = scope(&reg).unwrap();
        let uncopyable: Vec<&str> = scope
            .members
            .iter()
            .filter(|(_, fields)| fields.iter().any(|(_, m)| matches!(m, Member::Unsupported(_))))
            .map(|(name, _)| *name)
            .collect();
        println!("in scope: {:?}", scope.structs.keys().collect::<Vec<_>>());
        println!("chain: {:?}", scope.chain);
        println!("with fix_: {:?}", scope.needs_fix);
        println!("uncopyable: {uncopyable:?}");
        for name in ["VkDebugUtilsMessengerCreateInfoEXT", "VkValidationFeaturesEXT", "VkLayerSettingsCreateInfoEXT"] {
            assert!(scope.chain.contains(name), "{name}");
        }
        assert!(scope.structs.contains_key("VkApplicationInfo"));
        assert!(scope.structs.contains_key("VkLayerSettingEXT"));
        assert!(uncopyable.is_empty(), "{uncopyable:?}");
    }
}
