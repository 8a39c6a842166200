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
//!
//! Every function states its contract (the command's valid usage) in a `# Safety` section, and
//! every `unsafe` block the loader-ABI invariant it relies on; the blocks change no code.
//! `TRAMPOLINES` and `TERMINATORS` hold the functions through `vk_generated::erase`, so each is
//! checked against its command's `PFN_*` type.

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{ident, rust_file, safety, safety_doc, signature, spec_link};
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
        let doc = trampoline_doc(command);
        functions.push(quote! {
            #doc
            #export
            pub unsafe extern "system" fn #name #sig { #body }
        });
        trampolines.push(quote!(vk_generated::erase::#name(Some(#name))));
        if command.level == Level::PhysicalDevice {
            let body = terminator_body(command);
            let doc = terminator_doc(command);
            let term = format_ident!("terminator_{}", command.name);
            functions.push(quote! {
                #doc
                pub unsafe extern "system" fn #term #sig { #body }
            });
            terminators.push(quote!(vk_generated::erase::#name(Some(#term))));
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

/// The contract of a trampoline: the command's valid usage, and what is checked anyway.
fn trampoline_doc(command: &Command) -> TokenStream {
    let name = &command.name;
    let first = &command.params[0];
    let (param, ty) = (&first.name, &first.ty.base);
    let (chain, contract) = match command.level {
        Level::Device => (
            "the device's chain",
            format!(
                "`{param}` is a valid `{ty}` the loader handed out (a dispatchable object of a device \
                 created through it), and the other arguments are valid as `{name}`'s valid usage \
                 says. Nothing is checked: the call is one load and one jump."
            ),
        ),
        _ => (
            "the instance's chain",
            format!(
                "`{param}` is a `{ty}` of this loader{}, and the other arguments are valid as \
                 `{name}`'s valid usage says. `{param}` is checked: one without the loader's mark \
                 stops the process with the valid-usage ID.",
                if first.optional { " or NULL" } else { "" }
            ),
        ),
    };
    let doc = format!("{} from the application, down {chain}.", spec_link(name));
    let safety = safety_doc(&contract);
    quote!(#[doc = #doc] #[doc = ""] #safety)
}

fn trampoline_body(reg: &Registry, command: &Command) -> Result<TokenStream, String> {
    let first = ident(&command.params[0].name);
    let first_type = &command.params[0].ty.base;
    let name = &command.name;
    let slot = format_ident!("{}", command.name);
    let args = args(command);
    // A device command the device lacks is the application's error and the end of the process;
    // the others return what a driver without the command would be taken to answer.
    let missing = if command.level == Level::Device {
        quote!(missing_device_function(#name))
    } else {
        let value = missing_value(command);
        quote!(return #value)
    };
    let check = handle_check(command);
    let load_table = match command.level {
        Level::Device => {
            let why = safety(&format!(
                "the first word of a valid `{first_type}` (valid usage) is its device's dispatch \
                 table (loader ABI: the loader set it when it handed the object out), which lives \
                 until `vkDestroyDevice`, ordered after this call."
            ));
            quote!(#why let table = unsafe { device_table(#first.0) };)
        }
        // The application's instances and physical devices stand for the handles of the chain's
        // top level (a layer may wrap them).
        _ => {
            let unwrap = if command.level == Level::Instance {
                quote!(unwrap_instance)
            } else {
                quote!(unwrap_physical_device)
            };
            let why = safety(&format!(
                "a `{first_type}` of this loader (checked above): its first word is its instance's \
                 dispatch table, which lives as long as the instance, and it holds the handle the \
                 chain's top level knows it by (loader ABI)."
            ));
            quote!(#why let (table, #first) = unsafe { (instance_table(#first.0), #unwrap(#first)) };)
        }
    };
    let read_slot = safety(&format!(
        "the table is live (above); its slot for `{name}` was filled when the chain was built, with \
         the next level's function of this command's type or nothing, and is not written again."
    ));
    let call = safety(&format!(
        "the next level's `{name}`, called with the caller's arguments, valid per its valid usage."
    ));
    let set_dispatch = new_dispatchable_objects(reg, command)?;
    if set_dispatch.is_empty() {
        return Ok(quote! {
            #check
            #load_table
            #read_slot
            let Some(f) = (unsafe { (*table).#slot }) else { #missing };
            #call
            unsafe { f(#(#args),*) }
        });
    }
    let succeeded = if command.return_type.is_void() { quote!(true) } else { quote!(result == VkResult::SUCCESS) };
    let give_table = safety(
        "on success the next level wrote this many new dispatchable objects (the count as the \
         command's valid usage sizes the array), each created by a driver with `ICD_LOADER_MAGIC` \
         in its first word, which the loader ABI leaves to the loader to set.",
    );
    Ok(quote! {
        #check
        #load_table
        #read_slot
        let Some(f) = (unsafe { (*table).#slot }) else { #missing };
        #call
        let result = unsafe { f(#(#args),*) };
        if #succeeded {
            #give_table
            unsafe { #(#set_dispatch)* }
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
    let (name, param, ty) = (&command.name, &first.name, &first.ty.base);
    let why = safety(&format!(
        "`{param}` is a dispatchable handle (valid usage), so its first two words can be read; one \
         without the mark of a `{ty}` of this loader stops the process here."
    ));
    let check = quote!(#why unsafe { #check(#handle.0, #name, #param) };);
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

/// The contract of a default terminator.
fn terminator_doc(command: &Command) -> TokenStream {
    let name = &command.name;
    let param = &command.params[0].name;
    let doc = format!("{} at the end of the instance chain: the owning driver's, with its handle.", spec_link(name));
    let safety = safety_doc(&format!(
        "`{param}` is a physical device of this loader at the end of the instance chain (what the \
         chain's last level passes down), and the other arguments are valid as `{name}`'s valid \
         usage says."
    ));
    quote!(#[doc = #doc] #[doc = ""] #safety)
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
    let device = safety(
        "at the end of the instance chain a `VkPhysicalDevice` is the loader's \
         `TerminatorPhysicalDevice` (loader ABI), which lives as long as its instance.",
    );
    let read_slot = safety(
        "a driver's table lives as long as the driver, which outlives the instances made with it; \
         its slots are filled before the table is published and not written again.",
    );
    let call = safety(&format!(
        "the driver's own `{name}`, called with its handle for this device and the caller's other \
         arguments, valid per the command's valid usage."
    ));
    let again = safety(
        "the caller's arguments again; the driver is live now, so the slot is read from its own table.",
    );
    quote! {
        #device
        let loader_pd = unsafe { &*(#first.0 as *const TerminatorPhysicalDevice) };
        let (table, handle) = loader_pd.driver();
        #read_slot
        if let Some(f) = unsafe { (*table).#slot } {
            #call
            return unsafe { f(#(#args),*) };
        }
        // Loading a driver reads files and runs the driver's code: a panic there is this call's
        // failure, not an unwind into the application (one `guard` for every terminator).
        let mut load = || crate::lazy::driver_loaded_for(loader_pd, #name);
        let load: &mut dyn FnMut() -> crate::lazy::DriverLoad = &mut load;
        match crate::ffi::guard(#name, crate::lazy::DriverLoad::Failed, load) {
            crate::lazy::DriverLoad::Now => {
                #again
                unsafe { #term(#(#all_args),*) }
            }
            crate::lazy::DriverLoad::Already => #missing,
            crate::lazy::DriverLoad::Failed => #failed,
        }
    }
}
