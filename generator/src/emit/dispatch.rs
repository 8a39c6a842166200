//! `dispatch.rs`: the instance- and device-level dispatch tables, one slot per canonical command.

use quote::{format_ident, quote};

use super::{rust_file, safety, spec_link};
use crate::ir::Registry;
use crate::model::Model;

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let table = |name: &str, doc: &str, slots: &[u16]| {
        let id = format_ident!("{}", name);
        let fields = slots.iter().map(|&c| {
            let name = &model.commands[c as usize].name;
            let doc = spec_link(name);
            let (field, pfn) = (format_ident!("{}", name), format_ident!("PFN_{}", name));
            quote!(#[doc = #doc] pub #field: #pfn)
        });
        let count = slots.len();
        let impl_why = safety(
            "`#[repr(C)]` with one `PFN_*` field per command of `COMMANDS`, in that order (the size \
             is asserted below), and nothing else.",
        );
        let zeroed_why = safety("every field is an `Option` of a function pointer, for which all-zero is `None`.");
        quote! {
            #[doc = #doc]
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct #id { #(#fields),* }
            #impl_why
            unsafe impl DispatchTable for #id {
                const COMMANDS: &'static [u16] = &[#(#slots),*];
            }
            const _: () = assert!(core::mem::size_of::<#id>() == #count * core::mem::size_of::<PFN_vkVoidFunction>());
            impl Default for #id {
                fn default() -> Self {
                    #zeroed_why
                    unsafe { core::mem::zeroed() }
                }
            }
        }
    };
    let instance = table(
        "InstanceDispatchTable",
        "Global, instance and physical-device commands, in command-id order.",
        &model.instance_slots,
    );
    let device = table("DeviceDispatchTable", "Device, queue and command-buffer commands, in command-id order.", &model.device_slots);
    let tokens = quote! {
        use crate::types::*;
        use crate::DispatchTable;
        #instance
        #device
    };
    rust_file(reg, "dispatch tables", tokens)
}
