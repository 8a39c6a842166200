//! `layer/src/gen/unwrap.rs`: the handle walk of the layer SDK. For every structure of this API
//! that reaches a handle (a member of a handle type, an array of handles it points to, a structure
//! it embeds or points to that reaches one, a `pNext` chain whose extending structures reach one,
//! a `u64` object handle beside its `VkObjectType`), one `unwrap_<Name>` that gives a copy with the
//! handles unwrapped, made only when one changes; the chain walk's sizes and nodes by sType; the
//! handle types' traits. The entry points of `layer/src/gen/entries.rs` call them for their
//! parameters (see [`param_step`]); the helpers they call are `layer/src/unwrap.rs`'s.
//!
//! Members the walk cannot reach are listed in [`NOT_WALKED`]'s output (`NOT_UNWRAPPED`), with
//! the reason: a layer author reads there what stays the layer's to unwrap.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::types::VariantNames;
use super::{ident, rust_file, safety, safety_doc};
use crate::ir::*;
use crate::parse::resolve_alias;

/// Pointer members the registry marks `noautovalidity` (the pointer may dangle) whose use another
/// member selects, by hand: (structure, member, the Rust condition on `s` under which the member
/// is read). `VkWriteDescriptorSet`'s arrays by `descriptorType`, as the specification's
/// `VkWriteDescriptorSet` valid usage says; immutable samplers by the binding's type.
const SELECTED: &[(&str, &str, &str)] = &[
    (
        "VkWriteDescriptorSet",
        "pImageInfo",
        "matches!(s.descriptorType, VkDescriptorType::SAMPLER | VkDescriptorType::COMBINED_IMAGE_SAMPLER | VkDescriptorType::SAMPLED_IMAGE | VkDescriptorType::STORAGE_IMAGE | VkDescriptorType::INPUT_ATTACHMENT | VkDescriptorType::SAMPLE_WEIGHT_IMAGE_QCOM | VkDescriptorType::BLOCK_MATCH_IMAGE_QCOM)",
    ),
    (
        "VkWriteDescriptorSet",
        "pBufferInfo",
        "matches!(s.descriptorType, VkDescriptorType::UNIFORM_BUFFER | VkDescriptorType::STORAGE_BUFFER | VkDescriptorType::UNIFORM_BUFFER_DYNAMIC | VkDescriptorType::STORAGE_BUFFER_DYNAMIC)",
    ),
    (
        "VkWriteDescriptorSet",
        "pTexelBufferView",
        "matches!(s.descriptorType, VkDescriptorType::UNIFORM_TEXEL_BUFFER | VkDescriptorType::STORAGE_TEXEL_BUFFER)",
    ),
    (
        "VkDescriptorSetLayoutBinding",
        "pImmutableSamplers",
        "matches!(s.descriptorType, VkDescriptorType::SAMPLER | VkDescriptorType::COMBINED_IMAGE_SAMPLER)",
    ),
    // Ignored for an imageless framebuffer.
    ("VkFramebufferCreateInfo", "pAttachments", "s.flags.0 & VkFramebufferCreateFlags::IMAGELESS_BIT.0 == 0"),
    // Ignored (and zero counted) where a pipeline library leaves the shader state out.
    ("VkGraphicsPipelineCreateInfo", "pStages", "s.stageCount != 0"),
    ("VkShaderCreateInfoEXT", "pSetLayouts", "s.setLayoutCount != 0"),
];

/// How the walk treats one member of a structure that reaches a handle.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// A handle by value (`lenient`: `noautovalidity`, so a value the layer does not know goes
    /// down as it is: it may be ignored), or a fixed array of them.
    Handle { lenient: bool, fixed: bool },
    /// `const H*` with a count member (one without).
    Handles { count: Option<String> },
    /// `const T*` structures reaching handles, with a count member (one without).
    Structs { ty: String, count: Option<String> },
    /// A structure held by value (a fixed array of them with `array`).
    Embedded { ty: String, array: bool },
    /// `const void* pNext` of a structure whose extending structures reach handles.
    Next,
    /// `uint64_t objectHandle` beside `VkObjectType objectType`.
    Object,
    /// `const void* pData` laid out by the structure's `descriptorUpdateTemplate`.
    TemplateData,
    /// `uint64_t object` beside `VkDebugReportObjectTypeEXT objectType` (the debug marker
    /// structures).
    ReportObject,
}

/// One member's step, with the condition under which it is read ([`SELECTED`]).
type MemberStep<'a> = (&'a Field, Step, Option<&'static str>);

/// The structures that reach handles, each with its steps, and the members that reach one the
/// walk cannot follow.
struct Walk<'a> {
    steps: BTreeMap<&'a str, Vec<MemberStep<'a>>>,
    not_walked: Vec<String>,
    /// Every structure of this API with a fixed sType: (name, sType value).
    stypes: Vec<(&'a str, &'a str)>,
}

fn in_api(reg: &Registry) -> BTreeSet<&str> {
    reg.features
        .iter()
        .flat_map(|f| &f.requires)
        .chain(reg.extensions.values().flat_map(|e| &e.requires))
        .flat_map(|r| &r.types)
        .map(|t| resolve_alias(reg, t))
        .collect()
}

fn is_handle(reg: &Registry, base: &str) -> bool {
    matches!(
        reg.types.get(resolve_alias(reg, base)),
        Some(TypeDef::Handle { .. })
    )
}

fn walk(reg: &Registry) -> Walk<'_> {
    let api = in_api(reg);
    let structs: BTreeMap<&str, &Aggregate> = reg
        .types
        .iter()
        .filter_map(|(n, d)| match d {
            TypeDef::Struct(a) if api.contains(n.as_str()) && resolve_alias(reg, n) == n => {
                Some((n.as_str(), a))
            }
            _ => None,
        })
        .collect();
    let stypes = structs
        .iter()
        .filter_map(|(n, a)| {
            let v = a
                .members
                .first()
                .filter(|m| m.name == "sType")?
                .values
                .as_deref()?;
            Some((*n, v))
        })
        .collect();
    // Which structures extend which (by canonical name).
    let mut extenders: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (&n, a) in &structs {
        for e in &a.struct_extends {
            extenders.entry(resolve_alias(reg, e)).or_default().push(n);
        }
    }
    let struct_of = |base: &str| -> Option<&str> {
        structs
            .get_key_value(resolve_alias(reg, base))
            .map(|(k, _)| *k)
    };
    let mut reaches: BTreeSet<&str> = BTreeSet::new();
    loop {
        let before = reaches.len();
        for (&n, a) in &structs {
            if a.returned_only || reaches.contains(n) {
                continue;
            }
            let hit = a.members.iter().any(|m| {
                let base = m.ty.base.as_str();
                match m.ty.pointers.as_slice() {
                    [] => {
                        is_handle(reg, base)
                            || struct_of(base).is_some_and(|s| reaches.contains(s))
                            || (m.name == "objectHandle" && base == "uint64_t")
                            || is_report_object(a, m)
                    }
                    [true] if m.name == "pNext" => extenders
                        .get(n)
                        .is_some_and(|ex| ex.iter().any(|e| reaches.contains(e))),
                    [true] => {
                        is_handle(reg, base) || struct_of(base).is_some_and(|s| reaches.contains(s))
                    }
                    _ => false,
                }
            });
            if hit {
                reaches.insert(n);
            }
        }
        if reaches.len() == before {
            break;
        }
    }
    let mut steps = BTreeMap::new();
    let mut not_walked = Vec::new();
    for &n in &reaches {
        let a = structs[n];
        let count = |len: &str| -> Option<String> {
            a.members
                .iter()
                .find(|c| c.name == len && c.ty.pointers.is_empty() && c.array.is_empty())
                .map(|c| c.name.clone())
        };
        let mut list = Vec::new();
        for m in &a.members {
            let base = m.ty.base.as_str();
            let reaching_struct = struct_of(base).filter(|s| reaches.contains(s));
            let handle = is_handle(reg, base);
            let selected = SELECTED
                .iter()
                .find(|(s, f, _)| *s == n && *f == m.name)
                .map(|t| t.2);
            let step = match m.ty.pointers.as_slice() {
                [] if handle && m.array.len() <= 1 => Step::Handle {
                    lenient: m.no_auto_validity,
                    fixed: m.array.len() == 1,
                },
                [] if is_report_object(a, m) => Step::ReportObject,
                [] if m.name == "objectHandle" && base == "uint64_t" => {
                    if a.members
                        .iter()
                        .any(|o| o.name == "objectType" && o.ty.base == "VkObjectType")
                    {
                        Step::Object
                    } else {
                        not_walked.push(format!(
                            "{n}::{}: a u64 handle without a VkObjectType beside it",
                            m.name
                        ));
                        continue;
                    }
                }
                [] => match reaching_struct {
                    Some(ty) if m.array.len() <= 1 => Step::Embedded {
                        ty: ty.to_string(),
                        array: m.array.len() == 1,
                    },
                    Some(_) => {
                        not_walked.push(format!("{n}::{}: a multi-dimensional array", m.name));
                        continue;
                    }
                    None => {
                        if let Some(TypeDef::Union(u)) = reg.types.get(resolve_alias(reg, base)) {
                            if u.members.iter().any(|f| {
                                is_handle(reg, &f.ty.base)
                                    || struct_of(&f.ty.base).is_some_and(|s| reaches.contains(s))
                            }) {
                                not_walked.push(format!("{n}::{}: a union ({base}) whose member holding a handle another member selects", m.name));
                            }
                        }
                        continue;
                    }
                },
                [true] if m.name == "pNext" => {
                    if extenders
                        .get(n)
                        .is_some_and(|ex| ex.iter().any(|e| reaches.contains(e)))
                    {
                        Step::Next
                    } else {
                        continue;
                    }
                }
                [true]
                    if m.name == "pData"
                        && base == "void"
                        && a.members.iter().any(|o| o.name == "descriptorUpdateTemplate") =>
                {
                    Step::TemplateData
                }
                [true] if handle || reaching_struct.is_some() => {
                    let counted = match m.len.as_deref() {
                        None => Some(None),
                        Some(len) => count(len).map(Some),
                    };
                    let Some(count) = counted else {
                        not_walked.push(format!(
                            "{n}::{}: its length `{}` is not a member",
                            m.name,
                            m.len.as_deref().unwrap_or("")
                        ));
                        continue;
                    };
                    if m.no_auto_validity && selected.is_none() {
                        not_walked.push(format!("{n}::{}: may dangle (noautovalidity) under conditions not written down here", m.name));
                        continue;
                    }
                    match reaching_struct {
                        Some(ty) => Step::Structs {
                            ty: ty.to_string(),
                            count,
                        },
                        None => Step::Handles { count },
                    }
                }
                _ if handle || reaching_struct.is_some() => {
                    if !m.ty.pointers.iter().all(|c| *c) {
                        continue; // an output
                    }
                    not_walked.push(format!("{n}::{}: an array of pointers", m.name));
                    continue;
                }
                _ => continue,
            };
            list.push((m, step, selected));
        }
        steps.insert(n, list);
    }
    // Unions reached from parameters are reported where a command takes one (none today).
    Walk {
        steps,
        not_walked,
        stypes,
    }
}

/// `uint64_t object` beside `VkDebugReportObjectTypeEXT objectType`, in a structure or (as the
/// parameters of a command) a list of fields.
fn is_report_object_among(fields: &[Field], m: &Field) -> bool {
    m.name == "object"
        && m.ty.base == "uint64_t"
        && m.ty.pointers.is_empty()
        && fields
            .iter()
            .any(|o| o.name == "objectType" && o.ty.base == "VkDebugReportObjectTypeEXT")
}

fn is_report_object(a: &Aggregate, m: &Field) -> bool {
    is_report_object_among(&a.members, m)
}

/// The `VkObjectType` of each `VkDebugReportObjectTypeEXT` value, by name
/// (`VK_DEBUG_REPORT_OBJECT_TYPE_IMAGE_EXT` is `VK_OBJECT_TYPE_IMAGE`): the match arms of
/// `object_type_of_report`.
fn report_object_arms(reg: &Registry, names: &VariantNames) -> Vec<TokenStream> {
    let (Some(report), Some(object)) = (
        reg.enums.get("VkDebugReportObjectTypeEXT"),
        reg.enums.get("VkObjectType"),
    ) else {
        return Vec::new();
    };
    let mut arms = Vec::new();
    for (name, value) in &report.values {
        if !matches!(value, EnumValue::Value(_)) {
            continue;
        }
        let Some(kind) = name
            .strip_prefix("VK_DEBUG_REPORT_OBJECT_TYPE_")
            .and_then(|n| n.strip_suffix("_EXT"))
        else {
            continue;
        };
        let target = format!("VK_OBJECT_TYPE_{kind}");
        if !matches!(object.values.get(&target), Some(EnumValue::Value(_))) {
            continue;
        }
        if let (Some(from), Some(to)) = (names.path(name), names.path(&target)) {
            arms.push(quote!(#from => #to,));
        }
    }
    arms
}

/// The name of a structure's walker.
fn walker(ty: &str) -> proc_macro2::Ident {
    format_ident!("unwrap_{}", ty)
}

/// Whether a parameter's structure type has a walker.
pub(crate) struct Walkers(BTreeSet<String>);

impl Walkers {
    pub(crate) fn new(reg: &Registry) -> Self {
        Walkers(walk(reg).steps.keys().map(|s| s.to_string()).collect())
    }
}

/// The statement computing what goes down for parameter `p` of `c` (`down_<name>`), through the
/// unwrapper `u` and scratch `scratch`; `None` when the parameter holds no handle. The expression
/// is a `Result` (`?` inside a closure).
pub(crate) fn param_step(
    reg: &Registry,
    walkers: &Walkers,
    c: &Command,
    p: &Field,
) -> Option<TokenStream> {
    let name = ident(&p.name);
    let base = resolve_alias(reg, &p.ty.base);
    let handle = is_handle(reg, base);
    match p.ty.pointers.as_slice() {
        [] if handle && p.array.is_empty() => Some(quote!(crate::unwrap::value(walk_u, #name)?)),
        [] if is_report_object_among(&c.params, p) => Some(
            quote!(crate::unwrap::object(walk_u, crate::unwrap::object_type_of_report(objectType), #name)?),
        ),
        [] if p.name == "objectHandle" && base == "uint64_t" => {
            let ot = c
                .params
                .iter()
                .find(|q| q.name == "objectType" && q.ty.base == "VkObjectType")?;
            let ot = ident(&ot.name);
            Some(quote!(crate::unwrap::object(walk_u, #ot, #name)?))
        }
        [true] if p.name == "pData" && base == "void" => {
            let template = c
                .params
                .iter()
                .find(|q| q.name == "descriptorUpdateTemplate")?;
            let template = ident(&template.name);
            Some(quote!(crate::templates::data(walk_u, #template, #name, walk_scratch)?))
        }
        [true] if handle || walkers.0.contains(base) => {
            let count = match p.len.as_deref() {
                None => quote!(1),
                Some(len) => {
                    let q = c.params.iter().find(|q| q.name == len)?;
                    let q = ident(&q.name);
                    match q_is_pointer(c, len) {
                        true => return None,
                        false => quote!(#q as usize),
                    }
                }
            };
            if handle {
                Some(quote!(crate::unwrap::handles(walk_u, #name, #count, walk_scratch)?))
            } else {
                let w = walker(base);
                Some(
                    quote!(crate::unwrap::structs(walk_u, #name, #count, walk_scratch, crate::unwrap::#w)?),
                )
            }
        }
        _ => None,
    }
}

fn q_is_pointer(c: &Command, len: &str) -> bool {
    c.params
        .iter()
        .any(|q| q.name == len && !q.ty.pointers.is_empty())
}

pub fn emit(reg: &Registry) -> Result<String, String> {
    let w = walk(reg);
    let names = VariantNames::new(reg);
    let mut fns = Vec::new();
    for (&name, list) in &w.steps {
        fns.push(walker_fn(name, list));
    }
    // The chain's nodes: the structures with an sType that reach handles; sizes: every one.
    let mut node_arms = Vec::new();
    let mut size_arms = Vec::new();
    let mut seen = BTreeSet::new();
    for &(name, value) in &w.stypes {
        let Some(stype) = names.path(value) else {
            continue;
        };
        if !seen.insert(value) {
            continue;
        }
        let ty = format_ident!("{}", name);
        size_arms.push(quote!(#stype => size_of::<#ty>(),));
        if w.steps.contains_key(name) {
            let f = walker(name);
            node_arms.push(quote!(#stype => node::<U, #ty>(u, src, scratch, #f::<U>),));
        }
    }
    // The handle types.
    let mut handle_impls = Vec::new();
    let mut object_arms = Vec::new();
    for (name, def) in &reg.types {
        let TypeDef::Handle {
            dispatchable,
            object_type,
            ..
        } = def
        else {
            continue;
        };
        let Some(object_type) = object_type else {
            continue;
        };
        let Some(ot) = names.path(object_type) else {
            continue;
        };
        let ty = format_ident!("{}", name);
        let doc = format!("`{name}`, `{object_type}`.");
        if *dispatchable {
            let (device, instance) = match name.as_str() {
                "VkDevice" => (quote!(L::unwrap_device(o, self)), quote!(Some(self))),
                "VkQueue" => (quote!(L::unwrap_queue(o, self)), quote!(Some(self))),
                "VkCommandBuffer" => (
                    quote!(L::unwrap_command_buffer(o, self)),
                    quote!(Some(self)),
                ),
                "VkInstance" => (quote!(Some(self)), quote!(L::unwrap_instance(o, self))),
                "VkPhysicalDevice" => (
                    quote!(Some(self)),
                    quote!(L::unwrap_physical_device(o, self)),
                ),
                // No layer object of its own (`VkExternalComputeQueueNV`): as it is.
                _ => (quote!(Some(self)), quote!(Some(self))),
            };
            // On the way up: queues and command buffers by the device object, physical devices
            // by the instance object; instances and devices are the chassis's
            // (`returned_instance`, `returned_device`).
            let (wrap_device, wrap_instance, forget_device) = match name.as_str() {
                "VkQueue" => (quote!(L::wrap_queue(o, self)), quote!(self), quote!()),
                "VkCommandBuffer" => (
                    quote!(L::wrap_command_buffer(o, self)),
                    quote!(self),
                    quote!(L::forget_command_buffer(o, self)),
                ),
                "VkPhysicalDevice" => (quote!(self), quote!(L::wrap_physical_device(o, self)), quote!()),
                _ => (quote!(self), quote!(self), quote!()),
            };
            handle_impls.push(quote! {
                #[doc = #doc]
                impl Handle for #ty {
                    const OBJECT_TYPE: VkObjectType = #ot;
                    const DISPATCHABLE: bool = true;
                    #[inline(always)]
                    fn raw(self) -> u64 { self.0 as usize as u64 }
                    #[inline(always)]
                    fn from_raw(raw: u64) -> Self { #ty(raw as usize as *mut c_void) }
                    #[inline(always)]
                    fn at_device<L: Layer>(self, o: &L::Device) -> Option<Self> { let _ = o; #device }
                    #[inline(always)]
                    fn at_instance<L: Layer>(self, o: &L::Instance) -> Option<Self> { let _ = o; #instance }
                    #[inline(always)]
                    fn wrap_at_device<L: Layer>(self, o: &L::Device) -> Self { let _ = o; #wrap_device }
                    #[inline(always)]
                    fn wrap_at_instance<L: Layer>(self, o: &L::Instance) -> Self { let _ = o; #wrap_instance }
                    #[inline(always)]
                    fn forget_at_device<L: Layer>(self, o: &L::Device) { let _ = o; #forget_device }
                    #[inline(always)]
                    fn forget_at_instance<L: Layer>(self, o: &L::Instance) { let _ = o; }
                }
                impl crate::unwrap::Sealed for #ty {}
                impl DispatchableHandle for #ty {
                    const OBJECT_TYPE: VkObjectType = #ot;
                    #[inline(always)]
                    fn as_ptr(self) -> *mut c_void { self.0 }
                    #[inline(always)]
                    fn from_ptr(p: *mut c_void) -> Self { #ty(p) }
                }
            });
            object_arms.push(
                quote!(#ot => #ty(h as usize as *mut c_void).at_device::<L>(o).map(|h| h.raw()),),
            );
        } else {
            handle_impls.push(quote! {
                #[doc = #doc]
                impl Handle for #ty {
                    const OBJECT_TYPE: VkObjectType = #ot;
                    const DISPATCHABLE: bool = false;
                    #[inline(always)]
                    fn raw(self) -> u64 { self.0 }
                    #[inline(always)]
                    fn from_raw(raw: u64) -> Self { #ty(raw) }
                    #[inline(always)]
                    fn at_device<L: Layer>(self, o: &L::Device) -> Option<Self> { L::unwrap_handle(o, self) }
                    #[inline(always)]
                    fn at_instance<L: Layer>(self, o: &L::Instance) -> Option<Self> { L::unwrap_instance_handle(o, self) }
                    #[inline(always)]
                    fn wrap_at_device<L: Layer>(self, o: &L::Device) -> Self { L::wrap_handle(o, self) }
                    #[inline(always)]
                    fn wrap_at_instance<L: Layer>(self, o: &L::Instance) -> Self { L::wrap_instance_handle(o, self) }
                    #[inline(always)]
                    fn forget_at_device<L: Layer>(self, o: &L::Device) { L::forget_handle(o, self) }
                    #[inline(always)]
                    fn forget_at_instance<L: Layer>(self, o: &L::Instance) { L::forget_instance_handle(o, self) }
                }
                impl crate::unwrap::Sealed for #ty {}
                impl NonDispatchableHandle for #ty {
                    const OBJECT_TYPE: VkObjectType = #ot;
                    #[inline(always)]
                    fn raw(self) -> u64 { self.0 }
                    #[inline(always)]
                    fn from_raw(raw: u64) -> Self { #ty(raw) }
                }
            });
            object_arms.push(quote!(#ot => #ty(h).at_device::<L>(o).map(|h| h.0),));
        }
    }
    let report_arms = report_object_arms(reg, &names);
    let not_walked = w.not_walked.iter();
    let node_why =
        safety("`src` is a structure of the type its sType (`stype`) names (the contract).");
    let tokens = quote! {
        use core::ffi::c_void;
        use core::mem::size_of;
        use vk_generated::types::*;
        use crate::state::Layer;
        use crate::unwrap::{chain, handles, lenient, node, object, structs, value, DispatchableHandle, Handle, NonDispatchableHandle, Refused, Scratch, Unwrapper};

        /// The members that reach a handle which the generated walk does not follow, and why:
        /// the layer's to unwrap, in its `call_down_*` hook, where it wraps those handles.
        pub const NOT_UNWRAPPED: &[&str] = &[#(#not_walked),*];

        /// The size of the structure whose sType is `stype`, for copying a chain node known only by
        /// it; `None` for an sType this registry does not have.
        pub(crate) fn structure_size(stype: VkStructureType) -> Option<usize> {
            Some(match stype {
                #(#size_arms)*
                _ => return None,
            })
        }

        /// A copy of the chain node at `src` (sType `stype`) with its handles unwrapped and its
        /// `pNext` null, made only when a handle changes.
        ///
        /// # Safety
        /// `src` points to a valid structure of the type `stype` names.
        pub(crate) unsafe fn chain_node<U: Unwrapper>(u: &U, src: *const c_void, stype: VkStructureType, scratch: &mut Scratch) -> Result<Option<*mut c_void>, Refused> {
            #node_why
            unsafe {
                match stype {
                    #(#node_arms)*
                    _ => Ok(None),
                }
            }
        }

        /// The next level's `u64` handle of `object_type` by the layer's unwrap of that type (its
        /// `unwrap_handle`, or the dispatchable handles' `unwrap_*`); other types as they are.
        pub(crate) fn unwrap_object_of<L: Layer>(o: &L::Device, object_type: VkObjectType, h: u64) -> Option<u64> {
            match object_type {
                #(#object_arms)*
                _ => Some(h),
            }
        }

        /// The `VkObjectType` of a `VkDebugReportObjectTypeEXT` (the debug marker structures'
        /// `u64` objects), by name; `UNKNOWN` for one without.
        pub(crate) fn object_type_of_report(t: VkDebugReportObjectTypeEXT) -> VkObjectType {
            match t {
                #(#report_arms)*
                _ => VkObjectType::UNKNOWN,
            }
        }

        #(#handle_impls)*

        #(#fns)*
    };
    rust_file(reg, "the layer SDK's handle walk", tokens)
}

/// `unwrap_<name>`: a copy of `*s` with its handles unwrapped, `None` when none changes.
fn walker_fn(name: &str, list: &[MemberStep]) -> TokenStream {
    let f = walker(name);
    let ty = format_ident!("{}", name);
    let mut body = Vec::new();
    for (m, step, selected) in list {
        let mi = ident(&m.name);
        let count = |c: &Option<String>| match c {
            Some(c) => {
                let c = ident(c);
                quote!(s.#c as usize)
            }
            None => quote!(1),
        };
        let stmt = match step {
            Step::Handle {
                lenient: false,
                fixed: false,
            } => quote! {
                let h = value(u, s.#mi)?;
                if h != s.#mi { copy.get_or_insert(*s).#mi = h; }
            },
            Step::Handle {
                lenient: true,
                fixed: false,
            } => quote! {
                let h = lenient(u, s.#mi, scratch);
                if h != s.#mi { copy.get_or_insert(*s).#mi = h; }
            },
            Step::Handle { fixed: true, .. } => quote! {
                for (i, &g) in s.#mi.iter().enumerate() {
                    let h = value(u, g)?;
                    if h != g { copy.get_or_insert(*s).#mi[i] = h; }
                }
            },
            Step::Handles { count: c } => {
                let n = count(c);
                quote! {
                    let p = handles(u, s.#mi, #n, scratch)?;
                    if p != s.#mi { copy.get_or_insert(*s).#mi = p; }
                }
            }
            Step::Structs { ty, count: c } => {
                let n = count(c);
                let w = walker(ty);
                quote! {
                    let p = structs(u, s.#mi, #n, scratch, #w::<U>)?;
                    if p != s.#mi { copy.get_or_insert(*s).#mi = p; }
                }
            }
            Step::Embedded { ty, array: false } => {
                let w = walker(ty);
                quote! {
                    if let Some(e) = #w(u, &s.#mi, scratch)? { copy.get_or_insert(*s).#mi = e; }
                }
            }
            Step::Embedded { ty, array: true } => {
                let w = walker(ty);
                quote! {
                    for (i, g) in s.#mi.iter().enumerate() {
                        if let Some(e) = #w(u, g, scratch)? { copy.get_or_insert(*s).#mi[i] = e; }
                    }
                }
            }
            Step::Next => quote! {
                let p = chain(u, s.#mi, scratch)?;
                if p != s.#mi { copy.get_or_insert(*s).#mi = p; }
            },
            Step::TemplateData => quote! {
                let p = crate::templates::data(u, s.descriptorUpdateTemplate, s.#mi, scratch)?;
                if p != s.#mi { copy.get_or_insert(*s).#mi = p; }
            },
            Step::ReportObject => quote! {
                let h = object(u, object_type_of_report(s.objectType), s.#mi)?;
                if h != s.#mi { copy.get_or_insert(*s).#mi = h; }
            },
            Step::Object => quote! {
                let h = object(u, s.objectType, s.#mi)?;
                if h != s.#mi { copy.get_or_insert(*s).#mi = h; }
            },
        };
        let stmt = match selected {
            Some(cond) => {
                let cond: TokenStream = cond.parse().expect("SELECTED conditions are Rust");
                quote!(if #cond { #stmt })
            }
            None => stmt,
        };
        body.push(stmt);
    }
    let doc = format!(
        "A copy of a `{name}` with the handles it reaches unwrapped, `None` when none changes."
    );
    let contract = safety_doc(&format!(
        "`s` is valid as the commands that take a `{name}` accept it: every pointer it holds null \
         or valid for the count its members give, every chain null-terminated."
    ));
    let why = safety("each pointer of `s` is null or valid for its count (the contract), which is what the helpers read.");
    quote! {
        #[doc = #doc]
        #[doc = ""]
        #contract
        #[allow(unused_unsafe, unused_mut)]
        pub(crate) unsafe fn #f<U: Unwrapper>(u: &U, s: &#ty, scratch: &mut Scratch) -> Result<Option<#ty>, Refused> {
            let mut copy: Option<#ty> = None;
            #why
            unsafe { #(#body)* }
            Ok(copy)
        }
    }
}

/// The reasons the walk leaves members to the layer (for the docs: `cargo test -p vk-generator
/// -- not_walked --nocapture`).
#[cfg(test)]
mod tests {
    #[test]
    fn not_walked() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry");
        let reg = crate::load_registry(&root).unwrap();
        let w = super::walk(&reg);
        println!("walkers: {}", w.steps.len());
        for line in &w.not_walked {
            println!("{line}");
        }
        for s in [
            "VkWriteDescriptorSet",
            "VkRenderingAttachmentInfo",
            "VkImageMemoryBarrier",
            "VkMemoryDedicatedAllocateInfo",
            "VkSubmitInfo",
        ] {
            assert!(w.steps.contains_key(s), "{s}");
        }
    }
}
