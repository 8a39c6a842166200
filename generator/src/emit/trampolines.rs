//! `trampolines.rs`: the loader's entry points for every command it does not implement by hand,
//! and the default terminators ending the instance chain for physical-device commands.
//!
//! A trampoline loads the dispatch table from the first word of its dispatchable first argument and
//! calls that table's slot (one load, one indirect call). Exported names get their C symbol; the
//! rest are reached through `TRAMPOLINES` (by command id) from `vkGetInstanceProcAddr`.
//!
//! Instance and physical-device trampolines first check the loader's magic word in the handle
//! (`check_instance` / `check_physical_device` from the loader's ABI module): a bad handle stops
//! with a message naming the command and the valid-usage ID. Device trampolines check nothing:
//! their handles belong to drivers, and that path stays one load and one jump.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{ident, rust_file, signature};
use crate::ir::{Command, Level, Registry};
use crate::model::{dispatchable_outputs, Model, HAND_WRITTEN};

pub fn emit(reg: &Registry, model: &Model, exported: &[String]) -> Result<String, String> {
    let exported: BTreeSet<&str> = exported.iter().map(String::as_str).collect();
    let mut functions = Vec::new();
    let mut trampolines = Vec::new();
    let mut terminators = Vec::new();
    for command in &model.commands {
        let name = format_ident!("{}", command.name);
        if HAND_WRITTEN.contains(&command.name.as_str()) {
            trampolines.push(quote!(None));
            terminators.push(quote!(None));
            continue;
        }
        if command.level == Level::Global {
            return Err(format!("global command {} must be in model::HAND_WRITTEN", command.name));
        }
        let export_names: Vec<&String> = std::iter::once(&command.name)
            .chain(&command.aliases)
            .filter(|n| exported.contains(n.as_str()))
            .collect();
        let export = match export_names.as_slice() {
            [] => quote!(),
            [one] => quote!(#[export_name = #one]),
            _ => return Err(format!("{} is exported under several names", command.name)),
        };
        let body = trampoline_body(reg, command)?;
        let sig = signature(&command.params, &command.return_type);
        functions.push(quote! {
            #export
            pub unsafe extern "system" fn #name #sig { #body }
        });
        trampolines.push(quote!(Some(unsafe { core::mem::transmute::<unsafe extern "system" fn #sig, VoidFunction>(#name) })));
        if command.level == Level::PhysicalDevice {
            let body = terminator_body(command);
            let term = format_ident!("terminator_{}", command.name);
            functions.push(quote! {
                pub unsafe extern "system" fn #term #sig { #body }
            });
            terminators.push(quote!(Some(unsafe { core::mem::transmute::<unsafe extern "system" fn #sig, VoidFunction>(#term) })));
        } else {
            terminators.push(quote!(None));
        }
    }
    let count = model.commands.len();
    let hand_written = HAND_WRITTEN.join(", ");
    let doc = format!("Commands implemented by hand in the runtime (no trampoline or terminator here): {hand_written}.");
    let tokens = quote! {
        #![doc = #doc]
        #[allow(unused_imports)]
        use core::ffi::{c_char, c_int, c_void};
        use crate::types::*;
        use crate::loader_abi::*;
        type VoidFunction = unsafe extern "system" fn();
        #(#functions)*
        /// Trampolines by command id; `None` for the hand-written commands.
        pub static TRAMPOLINES: [PFN_vkVoidFunction; #count] = [#(#trampolines),*];
        /// Default terminators by command id: physical-device commands call the owning driver.
        pub static TERMINATORS: [PFN_vkVoidFunction; #count] = [#(#terminators),*];
    };
    rust_file(reg, "loader trampolines and default terminators", tokens)
}

/// What a command returns when its slot is empty: an error for `VkResult`, else zero.
fn missing_value(command: &Command) -> TokenStream {
    if command.return_type.is_void() {
        quote!(())
    } else if command.return_type.base == "VkResult" && command.return_type.pointers.is_empty() {
        quote!(VkResult::ERROR_EXTENSION_NOT_PRESENT)
    } else {
        quote!(Default::default())
    }
}

fn args(command: &Command) -> Vec<TokenStream> {
    command.params.iter().map(|p| {
        let n = ident(&p.name);
        quote!(#n)
    }).collect()
}

fn trampoline_body(reg: &Registry, command: &Command) -> Result<TokenStream, String> {
    let first = ident(&command.params[0].name);
    let slot = format_ident!("{}", command.name);
    let args = args(command);
    // A device command the device lacks is the application's error and the end of the process;
    // the others return what a driver without the command would be taken to answer.
    let missing = if command.level == Level::Device {
        let name = &command.name;
        quote!(missing_device_function(#name))
    } else {
        missing_value(command)
    };
    let table_fn = if command.level == Level::Device { quote!(device_table) } else { quote!(instance_table) };
    let check = handle_check(command);
    let set_dispatch = new_dispatchable_objects(reg, command)?;
    // The application's instances and physical devices stand for the handles of the chain's top
    // level (a layer may wrap them).
    let unwrap = match command.level {
        Level::Instance => quote!(let #first = unwrap_instance(#first);),
        Level::PhysicalDevice => quote!(let #first = unwrap_physical_device(#first);),
        Level::Global | Level::Device => quote!(),
    };
    if set_dispatch.is_empty() {
        return Ok(quote! {
            #check
            let table = #table_fn(#first.0);
            #unwrap
            match (*table).#slot { Some(f) => f(#(#args),*), None => #missing }
        });
    }
    let succeeded = if command.return_type.is_void() { quote!(true) } else { quote!(result == VkResult::SUCCESS) };
    Ok(quote! {
        #check
        let table = #table_fn(#first.0);
        #unwrap
        let Some(f) = (*table).#slot else { #[allow(unreachable_code)] return #missing };
        let result = f(#(#args),*);
        if #succeeded {
            #(#set_dispatch)*
        }
        result
    })
}

/// The validity check of a loader-owned first parameter (`VkInstance`, `VkPhysicalDevice`), with
/// the command and parameter names that its fatal message and valid-usage ID use. An optional
/// handle may be NULL; the trampoline then has nothing to dispatch on and returns the missing value.
fn handle_check(command: &Command) -> TokenStream {
    let check = match command.level {
        Level::Instance => quote!(check_instance),
        Level::PhysicalDevice => quote!(check_physical_device),
        Level::Global | Level::Device => return quote!(),
    };
    let first = &command.params[0];
    let handle = ident(&first.name);
    let (name, param) = (&command.name, &first.name);
    let check = quote!(#check(#handle.0, #name, #param););
    if first.optional {
        let missing = missing_value(command);
        quote! {
            if #handle.0.is_null() { return #missing; }
            #check
        }
    } else {
        check
    }
}

/// Statements that give objects returned through non-const pointers to dispatchable handles
/// (`vkGetDeviceQueue`, `vkAllocateCommandBuffers`) the dispatch table of the call.
fn new_dispatchable_objects(reg: &Registry, command: &Command) -> Result<Vec<TokenStream>, String> {
    let mut out = Vec::new();
    for p in dispatchable_outputs(reg, command) {
        let name = ident(&p.name);
        let count = match p.len.as_deref() {
            None => quote!(1usize),
            Some(len) => match len.split_once("->") {
                Some((base, member)) => {
                    let (base, member) = (ident(base), ident(member));
                    quote!((*#base).#member as usize)
                }
                None => {
                    let param = command.params.iter().find(|q| q.name == len).ok_or_else(|| {
                        format!("{}: length `{len}` of {} is not a parameter", command.name, p.name)
                    })?;
                    let len = ident(len);
                    if param.ty.pointers.is_empty() { quote!(#len as usize) } else { quote!(*#len as usize) }
                }
            },
        };
        out.push(quote! {
            for i in 0..#count { set_dispatch((*#name.add(i)).0, table as *const c_void); }
        });
    }
    Ok(out)
}

fn terminator_body(command: &Command) -> TokenStream {
    let first = ident(&command.params[0].name);
    let slot = format_ident!("{}", command.name);
    let term = format_ident!("terminator_{}", command.name);
    let all_args = args(command);
    let mut args = all_args.clone();
    args[0] = quote!(handle);
    let missing = missing_value(command);
    let name = &command.name;
    // A driver the loader has not loaded yet (`lazy`) has only the recorded queries in its table:
    // any other command loads it, and the call is made again on the live driver.
    let failed = if command.return_type.base == "VkResult" && command.return_type.pointers.is_empty() {
        quote!(VkResult::ERROR_INITIALIZATION_FAILED)
    } else {
        missing.clone()
    };
    quote! {
        let (table, handle) = (*(#first.0 as *const TerminatorPhysicalDevice)).driver();
        match (*table).#slot {
            Some(f) => f(#(#args),*),
            None => match crate::lazy::driver_loaded_for(#first, #name) {
                crate::lazy::DriverLoad::Now => #term(#(#all_args),*),
                crate::lazy::DriverLoad::Already => #missing,
                crate::lazy::DriverLoad::Failed => #failed,
            },
        }
    }
}
