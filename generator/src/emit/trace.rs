//! The trace layer's printers (`trace-layer/src/gen/`), for every type and command of the
//! registry:
//!
//! - `print.rs`: one `Print` implementation per structure, union, enum, bitmask and handle type
//!   (structures print their members by name, following pointers as the registry's `len`
//!   attributes say), and `chained`, which prints a `pNext` structure by its `sType`;
//! - `calls.rs`: one function per command that writes the call's line (arguments by name, then
//!   the result), the trace layer's hook list (every hookable command) and its post-call hooks,
//!   which call those functions.
//!
//! What is never followed, only printed as an address: `void*` data, pointers whose length the
//! registry gives as a formula, pointers marked `noautovalidity` (they may dangle: a pipeline's
//! `pViewportState` without rasterization), and every pointer inside a union (which member is
//! live is not known). Outputs of a call that failed are not followed either.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::layer_hooks::{ffi_imports, hookable, snake};
use super::types::{VariantNames, PLATFORM_SCALARS};
use super::{c_type, ident, param, rust_file, safety, safety_doc};
use crate::ir::{Aggregate, Command, EnumValue, Field, Registry, TypeDef};
use crate::parse::resolve_alias;

const C_SCALARS: &[&str] = &[
    "char", "float", "double", "int", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t",
    "int32_t", "uint32_t", "int64_t", "uint64_t",
];
const C_INTEGERS: &[&str] = &[
    "int", "size_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t",
    "uint64_t",
];

/// `trace-layer/src/gen/print.rs`.
pub fn emit_print(reg: &Registry) -> Result<String, String> {
    let bits_of_a_bitmask: Vec<&str> = reg
        .types
        .values()
        .filter_map(|d| match d {
            TypeDef::Bitmask { bits: Some(b), .. } => Some(b.as_str()),
            _ => None,
        })
        .collect();
    let (mut enums, mut handles, mut items) = (Vec::new(), Vec::new(), Vec::new());
    for (name, def) in &reg.types {
        let id = format_ident!("{}", name);
        match def {
            TypeDef::Handle { .. } => handles.push(id),
            TypeDef::Enum if bits_of_a_bitmask.contains(&name.as_str()) => {}
            TypeDef::Enum => match reg.enums.get(name) {
                Some(group) if group.is_bitmask => items.push(flags(reg, name, Some(name))),
                _ => enums.push(id),
            },
            TypeDef::Bitmask { bits, .. } => items.push(flags(reg, name, bits.as_deref())),
            TypeDef::Struct(agg) => items.push(structure(reg, name, agg)?),
            TypeDef::Union(agg) => items.push(union(reg, name, agg)?),
            _ => {}
        }
    }
    let chained = chained(reg);
    let tokens = quote! {
        use core::ffi::{c_char, c_void};
        use vk_layer::vk::types::*;
        use crate::json::Json;
        use crate::print::{self as p, enums, flags, handles, Print};

        enums!(#(#enums),*);
        handles!(#(#handles),*);
        #(#items)*
        #chained
    };
    rust_file(reg, "the trace layer's printers of every type", tokens)
}

/// `trace-layer/src/gen/calls.rs`.
pub fn emit_calls(reg: &Registry) -> Result<String, String> {
    let all: Vec<&Command> = reg.commands.values().collect();
    let ffi = ffi_imports(&all);
    let calls = all.iter().map(|c| call(reg, c)).collect::<Result<Vec<_>, _>>()?;
    let (instance, device) = hookable(reg)?;
    let instance_hooks = instance.iter().map(|c| hook(c, quote!(InstanceDispatchTable)));
    let device_hooks = device.iter().map(|c| hook(c, quote!(DeviceDispatchTable)));
    let tokens = quote! {
        #ffi
        use vk_layer::vk::types::*;
        use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
        use vk_layer::{DeviceHooks, InstanceHooks};
        use crate::line;
        use crate::print as p;

        // Every hookable command: the trace layer hooks them all (`#[vk_layer::hooks]` lists
        // the commands from these methods); its `commands` setting narrows what goes through it.
        #[vk_layer::hooks]
        impl InstanceHooks for crate::Instance {
            #(#instance_hooks)*
        }

        #[vk_layer::hooks]
        impl DeviceHooks for crate::Device {
            #(#device_hooks)*
        }

        #(#calls)*
    };
    rust_file(reg, "the trace layer's line of every command", tokens)
}

/// How a member or parameter is printed.
enum Shape {
    /// By its type's `Print`.
    Value,
    /// A fixed `char` array: the string in it.
    Chars,
    /// A function pointer: its address.
    FnPointer,
    /// A `pNext` chain.
    Next,
    /// A NUL-terminated string.
    String,
    /// An array of strings, this long.
    Strings(TokenStream),
    /// A pointer to one value.
    One,
    /// A pointer to this many values.
    Array(TokenStream),
    /// A pointer not followed: its address.
    Address,
    /// Not printed (a union member that would follow pointers).
    Skip,
}

impl Shape {
    /// Whether printing this shape reads memory through a pointer.
    fn follows(&self) -> bool {
        matches!(self, Shape::Next | Shape::String | Shape::Strings(_) | Shape::One | Shape::Array(_))
    }

    /// Whether printing this shape calls an `unsafe` helper (one that may follow pointers).
    fn is_unsafe(&self) -> bool {
        self.follows() || matches!(self, Shape::Value)
    }
}

/// Where a field sits: its siblings (for `len`) and how to spell one of them.
struct Place<'a> {
    siblings: &'a [Field],
    /// `self.x` in a structure, `x` in a command.
    access: fn(&str) -> TokenStream,
    in_union: bool,
    is_param: bool,
}

fn member_access(name: &str) -> TokenStream {
    let name = ident(name);
    quote!(self.#name)
}

fn param_access(name: &str) -> TokenStream {
    let name = ident(name);
    quote!(#name)
}

fn shape(reg: &Registry, f: &Field, place: &Place) -> Result<Shape, String> {
    let base = f.ty.base.as_str();
    let depth = f.ty.pointers.len();
    if !f.array.is_empty() {
        let element_prints = depth > 0 || has_print(reg, base);
        return Ok(match (place.is_param, base == "char" && depth == 0 && f.array.len() == 1) {
            // An array parameter is a pointer to the array.
            (true, _) if element_prints && !place.in_union => Shape::One,
            (true, _) => Shape::Address,
            (false, true) => Shape::Chars,
            (false, false) if place.in_union && follows(reg, base) => Shape::Skip,
            (false, false) if element_prints => Shape::Value,
            (false, false) => return Err(format!("{}: an array of {base} cannot be printed", f.name)),
        });
    }
    if depth == 0 {
        return Ok(if is_func_pointer(reg, base) {
            Shape::FnPointer
        } else if !has_print(reg, base) {
            return Err(format!("{}: a {base} cannot be printed", f.name));
        } else if place.in_union && follows(reg, base) {
            Shape::Skip
        } else {
            Shape::Value
        });
    }
    if place.in_union {
        return Ok(Shape::Address);
    }
    // A chain is always valid (`noautovalidity` on `pNext` only relaxes which structures it holds).
    if f.name == "pNext" && base == "void" {
        return Ok(Shape::Next);
    }
    if f.no_auto_validity {
        return Ok(Shape::Address);
    }
    let len = f.len.as_deref().map(|l| l.split(',').next().unwrap_or(l));
    let count = len.and_then(|l| count(reg, l, place));
    Ok(match (base, depth, len, count) {
        ("char", 1, None | Some("null-terminated"), _) => Shape::String,
        ("char", 2, Some(_), Some(count)) => Shape::Strings(count),
        ("char" | "void", _, _, _) => Shape::Address,
        (_, 1, None, _) if has_print(reg, base) => Shape::One,
        (_, 1, Some(_), Some(count)) if has_print(reg, base) => Shape::Array(count),
        // An array of pointers: their addresses.
        (_, 2, Some(_), Some(count)) => Shape::Array(count),
        _ => Shape::Address,
    })
}

/// The element count a `len` attribute names: a sibling integer, a sibling pointer to one, or
/// a member of the structure a sibling points to (`pAllocateInfo->commandBufferCount`); `None`
/// for a formula.
fn count(reg: &Registry, len: &str, place: &Place) -> Option<TokenStream> {
    let sibling = |name: &str| place.siblings.iter().find(|s| s.name == name && s.array.is_empty() && s.bitfield.is_none());
    if let Some((pointer, member)) = len.split_once("->") {
        let s = sibling(pointer).filter(|s| s.ty.pointers.len() == 1)?;
        let Some(TypeDef::Struct(agg)) = reg.types.get(resolve_alias(reg, &s.ty.base)) else { return None };
        agg.members.iter().find(|m| m.name == member && is_plain_integer(reg, m))?;
        let (p, member) = ((place.access)(pointer), ident(member));
        return Some(quote!(#p.as_ref().map_or(0, |s| s.#member as usize)));
    }
    let s = sibling(len).filter(|s| is_integer(reg, &s.ty.base))?;
    let e = (place.access)(len);
    match s.ty.pointers.len() {
        0 => Some(quote!(#e as usize)),
        1 => Some(quote!(#e.as_ref().map_or(0, |n| *n as usize))),
        _ => None,
    }
}

fn is_plain_integer(reg: &Registry, f: &Field) -> bool {
    f.ty.pointers.is_empty() && f.array.is_empty() && f.bitfield.is_none() && is_integer(reg, &f.ty.base)
}

fn is_integer(reg: &Registry, base: &str) -> bool {
    C_INTEGERS.contains(&base)
        || matches!(reg.types.get(resolve_alias(reg, base)),
            Some(TypeDef::Base { underlying: Some(t) }) if t.pointers.is_empty() && is_integer(reg, &t.base))
}

fn is_func_pointer(reg: &Registry, base: &str) -> bool {
    matches!(reg.types.get(resolve_alias(reg, base)), Some(TypeDef::FuncPointer(_)))
}

/// Whether the type, by value, has a `Print` implementation (here or in `print.rs`).
fn has_print(reg: &Registry, base: &str) -> bool {
    if C_SCALARS.contains(&base) {
        return true;
    }
    match reg.types.get(resolve_alias(reg, base)) {
        Some(TypeDef::Platform { .. }) => PLATFORM_SCALARS.iter().any(|(n, _)| *n == base),
        Some(TypeDef::Base { underlying: Some(t) }) => !t.pointers.is_empty() || has_print(reg, &t.base),
        Some(TypeDef::Handle { .. } | TypeDef::Enum | TypeDef::Bitmask { .. } | TypeDef::Struct(_) | TypeDef::Union(_)) => true,
        _ => false,
    }
}

/// Whether printing a value of the type reads through a pointer (unions never do).
fn follows(reg: &Registry, base: &str) -> bool {
    match reg.types.get(resolve_alias(reg, base)) {
        Some(TypeDef::Struct(agg)) => agg
            .members
            .iter()
            .any(|m| (!m.ty.pointers.is_empty() && m.array.is_empty()) || follows(reg, &m.ty.base)),
        _ => false,
    }
}

/// The statement printing `f` as `"key": value`, its value spelled `e`, in `shape`.
fn print_statement(f: &Field, e: &TokenStream, shape: &Shape) -> TokenStream {
    let key = &f.name;
    // The helpers take `*const T`; outputs are `*mut T`.
    let outer_const = if f.array.is_empty() { f.ty.pointers.last().copied().unwrap_or(true) } else { f.is_const };
    let pointer = if outer_const { quote!(#e) } else { quote!(#e.cast_const()) };
    match shape {
        Shape::Value => quote!(p::value(w, #key, &#e);),
        Shape::Chars => quote!(p::chars(w, #key, &#e);),
        Shape::FnPointer => quote!(p::address(w, #key, #e.map_or(0, |f| f as usize));),
        Shape::Next => quote!(p::next(w, #e as *const c_void);),
        Shape::String => quote!(p::string(w, #key, #e as *const c_char);),
        Shape::Strings(count) => quote!(p::strings(w, #key, #e as *const *const c_char, #count);),
        Shape::One => quote!(p::one(w, #key, #pointer);),
        Shape::Array(count) => quote!(p::array(w, #key, #pointer, #count);),
        Shape::Address => quote!(p::address(w, #key, #e as usize);),
        Shape::Skip => quote!(),
    }
}

/// One member as `"key": value` (a bitfield member through its accessor), and whether the
/// statement is an `unsafe` operation (every read of a union's member is).
fn member(reg: &Registry, m: &Field, place: &Place) -> Result<(TokenStream, bool), String> {
    if m.bitfield.is_some() {
        let (key, getter) = (&m.name, ident(&m.name));
        return Ok((quote!(p::value(w, #key, &self.#getter());), true));
    }
    let shape = shape(reg, m, place)?;
    let is_unsafe = shape.is_unsafe() || (place.in_union && !matches!(shape, Shape::Skip));
    Ok((print_statement(m, &member_access(&m.name), &shape), is_unsafe))
}

/// `impl Print`: the members in one `unsafe` block (`why` says what makes them sound), or in
/// none where no statement needs one.
fn aggregate_impl(name: &str, members: Vec<(TokenStream, bool)>, why: &str) -> TokenStream {
    let id = format_ident!("{}", name);
    let contract = safety_doc("As [`Print::print`].");
    let needs_unsafe = members.iter().any(|(_, is_unsafe)| *is_unsafe);
    let members = members.into_iter().map(|(statement, _)| statement);
    let members = if needs_unsafe {
        let why = safety(why);
        quote!(#why unsafe { #(#members)* })
    } else {
        quote!(#(#members)*)
    };
    quote! {
        impl Print for #id {
            #contract
            unsafe fn print(&self, w: &mut Json) {
                w.open_object();
                #members
                w.close_object();
            }
        }
    }
}

fn structure(reg: &Registry, name: &str, agg: &Aggregate) -> Result<TokenStream, String> {
    let place = Place { siblings: &agg.members, access: member_access, in_union: false, is_param: false };
    let members = agg.members.iter().map(|m| member(reg, m, &place)).collect::<Result<Vec<_>, _>>();
    let why = "`self` is valid as the Vulkan API says (the `Print` contract): each pointer member \
               followed here is NULL or valid for the count its `len` names, `pNext` a valid chain.";
    Ok(aggregate_impl(name, members.map_err(|e| format!("{name}.{e}"))?, why))
}

/// A union: every member, each read as if it were the live one; pointers in it are not followed.
fn union(reg: &Registry, name: &str, agg: &Aggregate) -> Result<TokenStream, String> {
    let place = Place { siblings: &agg.members, access: member_access, in_union: true, is_param: false };
    let members = agg.members.iter().map(|m| member(reg, m, &place)).collect::<Result<Vec<_>, _>>();
    let why = "every member is read as plain bytes of the union, which any bit pattern of them \
               fills (numbers, bitmasks, handles, structures of those); no pointer in it is followed.";
    Ok(aggregate_impl(name, members.map_err(|e| format!("{name}.{e}"))?, why))
}

/// A bitmask type: its single-bit values by name, in bit order.
fn flags(reg: &Registry, name: &str, bits: Option<&str>) -> TokenStream {
    let mut named: Vec<(u64, &str)> = Vec::new();
    for (value_name, value) in bits.and_then(|b| reg.enums.get(b)).map(|g| g.values.iter()).into_iter().flatten() {
        if let EnumValue::Value(v) = value {
            let bit = *v as u64;
            if bit.count_ones() == 1 && !named.iter().any(|(b, _)| *b == bit) {
                named.push((bit, value_name));
            }
        }
    }
    named.sort();
    let (bits, names): (Vec<u64>, Vec<&str>) = named.into_iter().unzip();
    let id = format_ident!("{}", name);
    quote!(flags!(#id, [#((#bits, #names)),*]);)
}

/// `chained`: the structure at `p` printed by its `sType`.
fn chained(reg: &Registry) -> TokenStream {
    let names = VariantNames::new(reg);
    let group = reg.enums.get("VkStructureType");
    let mut seen = Vec::new();
    let mut arms = Vec::new();
    for (name, def) in &reg.types {
        let TypeDef::Struct(agg) = def else { continue };
        let Some(value_name) = agg.members.first().filter(|m| m.name == "sType").and_then(|m| m.values.as_deref()) else {
            continue;
        };
        // One arm per value: aliases resolved, each structure type once.
        let mut value_name = value_name;
        while let Some(EnumValue::Alias(target)) = group.and_then(|g| g.values.get(value_name)) {
            value_name = target;
        }
        let Some(value) = group.and_then(|g| g.values.get(value_name)) else { continue };
        let Some(path) = names.path(value_name) else { continue };
        if seen.contains(value) {
            continue;
        }
        seen.push(value.clone());
        let id = format_ident!("{}", name);
        arms.push(quote!(#path => (*p.cast::<#id>()).print(w),));
    }
    let why = safety(
        "`p` points to a structure of the type `s_type` names, valid as the Vulkan API says (this \
         function's contract); each arm reads it as the structure its `sType` value belongs to.",
    );
    quote! {
        /// Prints the structure at `p` by its `sType`; `false` for a type the registry does not know.
        ///
        /// # Safety
        /// `p` points to a structure of type `s_type`, valid as the Vulkan API says.
        pub(crate) unsafe fn chained(w: &mut Json, s_type: VkStructureType, p: *const c_void) -> bool {
            #why
            unsafe {
                match s_type {
                    #(#arms)*
                    _ => return false,
                }
            }
            true
        }
    }
}

/// The function writing `c`'s line.
fn call(reg: &Registry, c: &Command) -> Result<TokenStream, String> {
    let id = format_ident!("{}", c.name);
    let name = &c.name;
    let params: Vec<TokenStream> = c.params.iter().map(param).collect();
    let returns_result = c.return_type.base == "VkResult" && c.return_type.pointers.is_empty();
    let place = Place { siblings: &c.params, access: param_access, in_union: false, is_param: true };
    let mut statements = Vec::new();
    let mut uses_ok = false;
    let mut needs_unsafe = false;
    for p in &c.params {
        let shape = shape(reg, p, &place).map_err(|e| format!("{name}({e})"))?;
        needs_unsafe |= shape.is_unsafe();
        let e = param_access(&p.name);
        let print = print_statement(p, &e, &shape);
        let is_output = if p.array.is_empty() { p.ty.pointers.last() == Some(&false) } else { !p.is_const };
        let key = &p.name;
        // What a failed call left in its outputs may be anything: not followed.
        let print = if returns_result && is_output && shape.follows() {
            uses_ok = true;
            quote!(if ok { #print } else { p::address(w, #key, #e as usize); })
        } else {
            print
        };
        statements.push(print);
    }
    let (result_param, ok, end) = if c.return_type.is_void() {
        (None, None, quote!(line::end(out);))
    } else {
        let r = c_type(&c.return_type);
        let ok = uses_ok.then(|| quote!(let ok = result.0 >= 0;));
        (Some(quote!(result: #r)), ok, quote!(line::end_with(out, &result);))
    };
    let statements = if needs_unsafe {
        let why = safety(
            "the arguments are valid as the Vulkan API says, after the call (this function's \
             contract): each pointer followed here is NULL or valid for the count its `len` names; \
             the outputs of a failed call are not followed.",
        );
        quote!(#why unsafe { #(#statements)* })
    } else {
        quote!(#(#statements)*)
    };
    let doc = format!("Writes the line of a `{name}` call: its arguments, after the call, and its result.");
    Ok(quote! {
        #[doc = #doc]
        ///
        /// # Safety
        /// The arguments are valid as the Vulkan API says, after the call.
        pub unsafe fn #id(#(#params,)* #result_param) {
            #ok
            let mut out = line::begin(#name);
            let w = &mut out;
            #statements
            #end
        }
    })
}

/// The post-call hook of a hookable command: its line.
fn hook(c: &Command, table: TokenStream) -> TokenStream {
    let id = format_ident!("{}", c.name);
    let post = format_ident!("post_call_record_{}", snake(c));
    let params: Vec<TokenStream> = c.params.iter().map(param).collect();
    let args: Vec<_> = c.params.iter().map(|p| ident(&p.name)).collect();
    let (result_param, result) = if c.return_type.is_void() {
        (None, None)
    } else {
        let r = c_type(&c.return_type);
        (Some(quote!(result: #r)), Some(quote!(result)))
    };
    let why = safety("the caller's arguments, valid as the Vulkan API says, after the call.");
    quote! {
        fn #post(&self, _: &#table, #(#params,)* #result_param) {
            #why
            unsafe { #id(#(#args,)* #result) }
        }
    }
}
