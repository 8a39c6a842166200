//! Wrapping on the way up, for the layer SDK: which handles each command hands back (created,
//! allocated, enumerated, queried) and which it destroys or frees, from `vk.xml`; the statements
//! the entry points of `layer/src/gen/entries.rs` run after the next level's call ([`up`]) and
//! after `post_call_record_*` ([`forget`]); and `layer/src/gen/wrap.rs` ([`emit`]): the walkers of
//! the structures that bring handles back, the table of exceptions and what is not wrapped. The
//! helpers they call are `layer/src/wrap.rs`'s.
//!
//! The rules read from the registry:
//! - a parameter `T*` (not `const`) of a handle type, or of a structure holding handles, is an
//!   output; its length is `1`, a parameter, a member of a `const` structure parameter
//!   (`pAllocateInfo->commandBufferCount`) or the count a `uint32_t*` parameter holds after the call;
//! - `vkGet*` and `vkEnumerate*` return objects that already exist (a queue, a physical device, a
//!   display): the same wrapper every time, found again by the next level's handle under its
//!   owner (the parameter of the handle type's `parent`, else the first parameter); every other
//!   command creates them;
//! - a created handle whose `parent` is neither an instance, a physical device nor a device, and
//!   has a `vkDestroy*` command (a command buffer's pool, a descriptor set's), is recorded under
//!   that parent: destroying the parent forgets it;
//! - `vkDestroy*` and `vkFree*` forget their last handle parameter (an array for `vkFree*`);
//! - a command taking a `VkDeferredOperationKHR` writes its outputs when the operation completes,
//!   not on `VK_OPERATION_DEFERRED_KHR`.
//!
//! What they cannot tell is [`EXCEPTIONS`], each with its reason.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{ident, rust_file, safety, safety_doc};
use crate::ir::*;
use crate::parse::resolve_alias;

/// What the registry cannot tell about handles going up and being freed: (command, what the
/// generated code does, why). Emitted as `vk_layer::WRAP_EXCEPTIONS`.
pub const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "vkGetSwapchainImagesKHR",
        "the images are recorded under the swapchain: the same wrappers at every call, forgotten at vkDestroySwapchainKHR",
        "the registry's parent of VkImage is the device, but a swapchain's images are the swapchain's, which frees them",
    ),
    (
        "vkResetDescriptorPool",
        "forgets every descriptor set of the pool",
        "a reset frees the pool's sets; the registry only says that the pool is their parent",
    ),
    (
        "vkReleasePerformanceConfigurationINTEL",
        "forgets its configuration",
        "it destroys the configuration without being named vkDestroy*",
    ),
    (
        "vkCreateGraphicsPipelines, vkCreateComputePipelines, vkCreateRayTracingPipelines*, vkCreateExecutionGraphPipelinesAMDX, vkCreateDataGraphPipelinesARM, vkCreateShadersEXT",
        "wraps the handles written whatever the result",
        "a failed call keeps the objects it did create (VK_NULL_HANDLE for the others), which the application destroys",
    ),
];

/// The commands of [`EXCEPTIONS`] whose created arrays are kept on failure: an output counted by
/// `createInfoCount`.
fn kept_on_failure(c: &Command) -> bool {
    c.params
        .iter()
        .any(|p| p.len.as_deref() == Some("createInfoCount") && p.ty.pointers == [false])
}

/// The owner of `vkGetSwapchainImagesKHR`'s images, by hand ([`EXCEPTIONS`]).
const OWNER_PARAMS: &[(&str, &str)] = &[("vkGetSwapchainImagesKHR", "swapchain")];
/// Commands that destroy what their last handle parameter names without the name saying so.
const DESTROYERS: &[&str] = &["vkReleasePerformanceConfigurationINTEL"];
/// Commands that free every child of the pool they are given.
const RESETS: &[&str] = &["vkResetDescriptorPool"];

fn handle_def(reg: &Registry, base: &str) -> Option<(bool, Vec<String>)> {
    match reg.types.get(resolve_alias(reg, base)) {
        Some(TypeDef::Handle {
            dispatchable,
            parents,
            ..
        }) => Some((*dispatchable, parents.clone())),
        _ => None,
    }
}

fn is_handle(reg: &Registry, base: &str) -> bool {
    handle_def(reg, base).is_some()
}

const ROOTS: &[&str] = &["VkInstance", "VkPhysicalDevice", "VkDevice"];

/// The structures that bring handles back (returned members by value, fixed arrays with their
/// count, embedded ones, a `T*` member with its count), with what each member is.
#[derive(Debug, Clone)]
enum Member {
    /// A handle by value.
    Handle(String),
    /// A fixed array of handles (of the type given last), its count a member.
    Fixed(String, String, String),
    /// A structure held by value that brings handles back.
    Embedded(String, String),
    /// `H*` with its count a member.
    Pointer(String, String),
}

fn returning_structs(reg: &Registry) -> BTreeMap<String, Vec<Member>> {
    let mut out: BTreeMap<String, Vec<Member>> = BTreeMap::new();
    loop {
        let before = out.len();
        for (name, def) in &reg.types {
            let TypeDef::Struct(a) = def else { continue };
            if out.contains_key(name) || resolve_alias(reg, name) != name {
                continue;
            }
            let mut members = Vec::new();
            for m in &a.members {
                let base = resolve_alias(reg, &m.ty.base);
                let count = |len: &str| {
                    a.members
                        .iter()
                        .find(|c| c.name == len && c.ty.pointers.is_empty())
                        .map(|c| c.name.clone())
                };
                match m.ty.pointers.as_slice() {
                    [] if is_handle(reg, base) && m.array.is_empty() => {
                        members.push(Member::Handle(m.name.clone()))
                    }
                    [] if is_handle(reg, base) && m.array.len() == 1 => {
                        if let Some(c) = m.len.as_deref().and_then(count) {
                            members.push(Member::Fixed(m.name.clone(), c, base.to_string()));
                        }
                    }
                    [] if out.contains_key(base) && m.array.is_empty() => {
                        members.push(Member::Embedded(m.name.clone(), base.to_string()))
                    }
                    [false] if is_handle(reg, base) => {
                        if let Some(c) = m.len.as_deref().and_then(count) {
                            members.push(Member::Pointer(m.name.clone(), c));
                        }
                    }
                    _ => {}
                }
            }
            // Only structures that can come back: returned-only ones, and those a command takes
            // as a non-const pointer (checked where they are used).
            if !members.is_empty()
                && (a.returned_only || members.iter().any(|m| matches!(m, Member::Pointer(..))))
            {
                out.insert(name.clone(), members);
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The wrap walker of a structure.
fn walker(ty: &str) -> proc_macro2::Ident {
    format_ident!("wrap_{}", ty)
}

/// The structures that bring handles back, for [`up`].
pub(crate) struct Returning(BTreeMap<String, Vec<Member>>);

impl Returning {
    pub(crate) fn new(reg: &Registry) -> Self {
        Returning(returning_structs(reg))
    }
}

/// The number of items an output parameter `p` of `c` holds after the call, as a `usize`
/// expression over the caller's arguments; `None` for a length the generator cannot follow.
fn out_count(c: &Command, p: &Field) -> Option<TokenStream> {
    let Some(len) = p.len.as_deref() else {
        return Some(quote!(1));
    };
    if let Some((param, member)) = len.split_once("->") {
        let q = c.params.iter().find(|q| q.name == param)?;
        let (q, m) = (ident(&q.name), ident(member));
        return Some(quote!(#q.as_ref().map_or(0, |i| i.#m as usize)));
    }
    let q = c.params.iter().find(|q| q.name == len)?;
    let qi = ident(&q.name);
    match q.ty.pointers.as_slice() {
        [] => Some(quote!(#qi as usize)),
        [false] => Some(quote!(#qi.as_ref().map_or(0, |n| *n as usize))),
        _ => None,
    }
}

/// `crate::wrap::key(<the handle>)` for the parameter of type `ty` of `c`, by value or as a member
/// of a `const` structure parameter (an `Option<Key>` then).
fn owner_of(reg: &Registry, c: &Command, ty: &str) -> Option<(TokenStream, bool)> {
    if let Some(q) = c
        .params
        .iter()
        .rev()
        .find(|q| q.ty.pointers.is_empty() && resolve_alias(reg, &q.ty.base) == ty)
    {
        let q = ident(&q.name);
        return Some((quote!(crate::wrap::key(#q)), false));
    }
    for q in &c.params {
        if q.ty.pointers != [true] || q.len.is_some() {
            continue;
        }
        let Some(TypeDef::Struct(a)) = reg.types.get(resolve_alias(reg, &q.ty.base)) else {
            continue;
        };
        if let Some(m) = a.members.iter().find(|m| {
            m.ty.pointers.is_empty() && m.array.is_empty() && resolve_alias(reg, &m.ty.base) == ty
        }) {
            let (q, m) = (ident(&q.name), ident(&m.name));
            return Some((quote!(#q.as_ref().map(|i| crate::wrap::key(i.#m))), true));
        }
    }
    None
}

/// The registry's parent of handle type `ty` that owns it (freed with it): one that is no
/// instance, physical device or device and that a `vkDestroy*` command destroys.
fn owning_parent(reg: &Registry, ty: &str) -> Option<String> {
    let (_, parents) = handle_def(reg, ty)?;
    parents
        .into_iter()
        .map(|p| resolve_alias(reg, &p).to_string())
        .find(|p| {
            !ROOTS.contains(&p.as_str())
                && reg
                    .commands
                    .contains_key(&format!("vkDestroy{}", p.trim_start_matches("Vk")))
        })
}

/// Whether `c` returns objects that already exist (`vkGet*`, `vkEnumerate*`).
fn returns_existing(c: &Command) -> bool {
    c.name.starts_with("vkGet") || c.name.starts_with("vkEnumerate")
}

/// The handle types a command's outputs bring back, with the members that hold them.
fn types_of(reg: &Registry, returning: &Returning, base: &str, out: &mut BTreeSet<String>) {
    if is_handle(reg, base) {
        out.insert(resolve_alias(reg, base).to_string());
        return;
    }
    if let Some(members) = returning.0.get(base) {
        for m in members {
            match m {
                Member::Embedded(_, ty) => types_of(reg, returning, ty, out),
                Member::Handle(n) | Member::Fixed(n, ..) | Member::Pointer(n, _) => {
                    if let Some(TypeDef::Struct(a)) = reg.types.get(base) {
                        if let Some(f) = a.members.iter().find(|f| &f.name == n) {
                            out.insert(resolve_alias(reg, &f.ty.base).to_string());
                        }
                    }
                }
            }
        }
    }
}

/// The statements that wrap what `c` brings back, run after the next level's call when it
/// succeeded (through `wrap_w`, a `crate::wrap::Wrapper`), and the result condition (`&& ...`,
/// empty for a command without a `VkResult`), or `None`
/// when `c` brings no handle back. Outputs the generator cannot follow are added to `skipped`.
pub(crate) fn up(
    reg: &Registry,
    returning: &Returning,
    c: &Command,
    skipped: &mut Vec<String>,
) -> Option<(TokenStream, TokenStream)> {
    let mut stmts = Vec::new();
    for p in c.params.iter().skip(1) {
        if p.ty.pointers != [false] || !p.array.is_empty() {
            continue;
        }
        let base = resolve_alias(reg, &p.ty.base);
        let handle = is_handle(reg, base);
        if !handle && !returning.0.contains_key(base) {
            continue;
        }
        let Some(count) = out_count(c, p) else {
            skipped.push(format!(
                "{}::{}: its length `{}` is not one the generator follows",
                c.name,
                p.name,
                p.len.as_deref().unwrap_or("")
            ));
            continue;
        };
        let mut types = BTreeSet::new();
        types_of(reg, returning, base, &mut types);
        // How: an existing object under its owner, or a created one (under its owning parent).
        let how = if returns_existing(c) {
            let owner = OWNER_PARAMS
                .iter()
                .find(|(cmd, _)| *cmd == c.name)
                .map(|(_, param)| {
                    let q = format_ident!("{}", param);
                    quote!(crate::wrap::key(#q))
                })
                .or_else(|| {
                    let ty = types.iter().next()?;
                    let (_, parents) = handle_def(reg, ty)?;
                    parents.iter().find_map(|parent| {
                        match owner_of(reg, c, resolve_alias(reg, parent)) {
                            Some((k, false)) => Some(k),
                            _ => None,
                        }
                    })
                })
                .unwrap_or_else(|| {
                    let first = ident(&c.params[0].name);
                    quote!(crate::wrap::key(#first))
                });
            quote!(crate::wrap::How::Existing(#owner))
        } else {
            let owner = types.iter().find_map(|ty| {
                let parent = owning_parent(reg, ty)?;
                owner_of(reg, c, &parent)
            });
            match owner {
                Some((k, false)) => quote!(crate::wrap::How::Created(Some(#k))),
                Some((k, true)) => quote!(crate::wrap::How::Created(#k)),
                None => quote!(crate::wrap::How::Created(None)),
            }
        };
        let name = ident(&p.name);
        if handle {
            stmts.push(quote!(crate::wrap::handles(wrap_w, #name, #count, &#how);));
        } else {
            let w = walker(base);
            stmts
                .push(quote!(crate::wrap::structs(wrap_w, #name, #count, &#how, crate::wrap::#w);));
        }
    }
    if stmts.is_empty() {
        return None;
    }
    let deferrable = c
        .params
        .iter()
        .any(|p| resolve_alias(reg, &p.ty.base) == "VkDeferredOperationKHR");
    let kept = kept_on_failure(c);
    let condition = if c.return_type.base == "VkResult" && c.return_type.pointers.is_empty() {
        quote!(&& crate::wrap::returned(result, #deferrable, #kept))
    } else {
        quote!()
    };
    Some((quote!(#(#stmts)*), condition))
}

/// The statement that forgets what `c` destroys or frees (through `wrap_w`), run after
/// `post_call_record_*`; `None` for any other command.
pub(crate) fn forget(reg: &Registry, c: &Command) -> Option<TokenStream> {
    if RESETS.contains(&c.name.as_str()) {
        let pool = c.params.iter().find(|p| {
            p.ty.pointers.is_empty() && is_handle(reg, &p.ty.base) && p.name != c.params[0].name
        })?;
        let pool = ident(&pool.name);
        return Some(quote!(crate::wrap::reset(wrap_w, crate::wrap::key(#pool));));
    }
    let destroys = c.name.starts_with("vkDestroy") || DESTROYERS.contains(&c.name.as_str());
    let frees = c.name.starts_with("vkFree");
    if !destroys && !frees {
        return None;
    }
    let p = c.params.iter().skip(1).rev().find(|p| {
        is_handle(reg, &p.ty.base) && (p.ty.pointers.is_empty() || p.ty.pointers == [true])
    })?;
    let name = ident(&p.name);
    if p.ty.pointers.is_empty() {
        return Some(quote!(crate::wrap::destroyed(wrap_w, #name);));
    }
    let count = out_count(c, p)?;
    let ty = resolve_alias(reg, &p.ty.base);
    let owner = match owning_parent(reg, ty).and_then(|parent| owner_of(reg, c, &parent)) {
        Some((k, false)) => quote!(Some(#k)),
        Some((k, true)) => k,
        None => quote!(None),
    };
    Some(quote!(crate::wrap::freed(wrap_w, #owner, #name, #count);))
}

/// `layer/src/gen/wrap.rs`.
pub fn emit(reg: &Registry) -> Result<String, String> {
    let returning = Returning::new(reg);
    let (instance, device) = super::layer_hooks::hookable(reg)?;
    let mut skipped = Vec::new();
    let mut used = BTreeSet::new();
    for c in instance.iter().chain(&device) {
        if up(reg, &returning, c, &mut skipped).is_some() {
            for p in &c.params {
                let base = resolve_alias(reg, &p.ty.base);
                if p.ty.pointers == [false] && returning.0.contains_key(base) {
                    mark(&returning, base, &mut used);
                }
            }
        }
    }
    let mut fns = Vec::new();
    for name in &used {
        fns.push(walker_fn(name, &returning.0[name]));
    }
    let exceptions = EXCEPTIONS.iter().map(|(c, what, why)| {
        let text = format!("{what}: {why}");
        quote!((#c, #text))
    });
    // Dispatchable types without a layer object of their own are handed up as they are.
    let mut not_wrapped = skipped;
    for (name, def) in &reg.types {
        if let TypeDef::Handle {
            dispatchable: true, ..
        } = def
        {
            if ![
                "VkInstance",
                "VkPhysicalDevice",
                "VkDevice",
                "VkQueue",
                "VkCommandBuffer",
            ]
            .contains(&name.as_str())
            {
                not_wrapped.push(format!("{name}: a dispatchable handle with no wrap hook of its own, handed up as it is"));
            }
        }
    }
    not_wrapped.push("the outputs of a command given a deferred operation that returns VK_OPERATION_DEFERRED_KHR: written when the operation completes, the layer's to wrap".to_string());
    let tokens = quote! {
        use vk_generated::types::*;
        use crate::wrap::{handles, How, Wrapper};

        /// What the registry cannot tell about the handles coming back and going away, written by
        /// hand in the generator (`generator/src/emit/layer_wrap.rs`): the commands, and what the
        /// generated entry points do and why.
        pub const WRAP_EXCEPTIONS: &[(&str, &str)] = &[#(#exceptions),*];

        /// The handles coming back that the generated entry points do not wrap, and why.
        pub const NOT_WRAPPED: &[&str] = &[#(#not_wrapped),*];

        #(#fns)*
    };
    rust_file(reg, "the layer SDK's wrapping on the way up", tokens)
}

fn mark(returning: &Returning, name: &str, used: &mut BTreeSet<String>) {
    if !used.insert(name.to_string()) {
        return;
    }
    for m in &returning.0[name] {
        if let Member::Embedded(_, ty) = m {
            mark(returning, ty, used);
        }
    }
}

/// `wrap_<name>`: wraps the handles of the structure at `s` in place, as `how` says.
fn walker_fn(name: &str, members: &[Member]) -> TokenStream {
    let f = walker(name);
    let ty = format_ident!("{}", name);
    let body = members.iter().map(|m| match m {
        Member::Handle(n) => {
            let n = ident(n);
            quote!(handles(w, core::ptr::addr_of_mut!((*s).#n), 1, how);)
        }
        Member::Fixed(n, c, elem) => {
            let (n, c, elem) = (ident(n), ident(c), format_ident!("{}", elem));
            quote! {
                let room = (*s).#n.len();
                handles(w, core::ptr::addr_of_mut!((*s).#n).cast::<#elem>(), ((*s).#c as usize).min(room), how);
            }
        }
        Member::Embedded(n, e) => {
            let (n, e) = (ident(n), walker(e));
            quote!(#e(w, core::ptr::addr_of_mut!((*s).#n), how);)
        }
        Member::Pointer(n, c) => {
            let (n, c) = (ident(n), ident(c));
            quote!(handles(w, (*s).#n, (*s).#c as usize, how);)
        }
    });
    let doc = format!("Wraps the handles a `{name}` brings back, in place.");
    let contract = safety_doc(&format!(
        "`s` points to a `{name}` the next level has just filled, writable, its arrays valid for \
         the counts it holds."
    ));
    let why = safety(
        "`s` and the arrays it points to are the next level's output for this call (the contract).",
    );
    quote! {
        #[doc = #doc]
        #[doc = ""]
        #contract
        pub(crate) unsafe fn #f<W: Wrapper>(w: &W, s: *mut #ty, how: &How) {
            #why
            unsafe { #(#body)* }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_comes_back_and_what_goes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry");
        let reg = crate::load_registry(&root).unwrap();
        let returning = super::Returning::new(&reg);
        let mut skipped = Vec::new();
        let up = |name: &str, skipped: &mut Vec<String>| {
            super::up(&reg, &returning, &reg.commands[name], skipped)
                .map(|(s, c)| (s.to_string(), c.to_string()))
        };
        let (pools, _) = up("vkAllocateCommandBuffers", &mut skipped).unwrap();
        assert!(
            pools.contains("commandPool") && pools.contains("Created"),
            "{pools}"
        );
        let (images, _) = up("vkGetSwapchainImagesKHR", &mut skipped).unwrap();
        assert!(
            images.contains("Existing") && images.contains("swapchain"),
            "{images}"
        );
        let (groups, _) = up("vkEnumeratePhysicalDeviceGroups", &mut skipped).unwrap();
        assert!(
            groups.contains("wrap_VkPhysicalDeviceGroupProperties"),
            "{groups}"
        );
        let (_, kept) = up("vkCreateGraphicsPipelines", &mut skipped).unwrap();
        assert!(kept.contains("true"), "{kept}");
        assert!(up("vkCmdDraw", &mut skipped).is_none());
        let forget = |name: &str| super::forget(&reg, &reg.commands[name]).map(|s| s.to_string());
        assert!(forget("vkDestroyCommandPool")
            .unwrap()
            .contains("destroyed"));
        assert!(forget("vkFreeCommandBuffers")
            .unwrap()
            .contains("commandPool"));
        assert!(forget("vkResetDescriptorPool").unwrap().contains("reset"));
        assert!(forget("vkResetCommandPool").is_none());
        println!("{skipped:?}");
    }
}
