//! `dispatch.rs`: the instance- and device-level dispatch tables, one slot per canonical command.

use quote::{format_ident, quote};

use super::{rust_file, spec_link};
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
        quote! {
            #[doc = #doc]
            #[repr(C)]
            #[derive(Clone, Copy)]
            pub struct #id { #(#fields),* }
            unsafe impl DispatchTable for #id {
                const COMMANDS: &'static [u16] = &[#(#slots),*];
            }
            const _: () = assert!(core::mem::size_of::<#id>() == #count * core::mem::size_of::<PFN_vkVoidFunction>());
            impl Default for #id {
                fn default() -> Self {
                    // SAFETY: every field is an `Option` of a function pointer; all-zero is `None`.
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
