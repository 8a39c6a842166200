//! `erase.rs`: one `const fn` per command that turns a function of the command's `PFN_*` type into
//! the `PFN_vkVoidFunction` that `vkGet*ProcAddr` returns and tables by command id hold.
//!
//! The function's signature is checked where it is passed (it must coerce to the command's
//! `PFN_*`), so nothing that fills such a table (the loader's terminators and exports, a layer's
//! entry points) casts a function pointer by hand: the one cast is here, generated.

use quote::{format_ident, quote};

use super::{rust_file, safety, spec_link};
use crate::ir::Registry;
use crate::model::Model;

pub fn emit(reg: &Registry, model: &Model) -> Result<String, String> {
    let functions = model.commands.iter().map(|c| {
        let (name, pfn) = (format_ident!("{}", c.name), format_ident!("PFN_{}", c.name));
        let doc = format!("A function of {}'s type, as a `PFN_vkVoidFunction`.", spec_link(&c.name));
        let why = safety(&format!(
            "function pointers (and their `Option`s) have one representation whatever the \
             signature; the result is called only once cast back to `PFN_{}`.",
            c.name
        ));
        quote! {
            #[doc = #doc]
            #[inline(always)]
            pub const fn #name(f: #pfn) -> PFN_vkVoidFunction {
                #why
                unsafe { core::mem::transmute::<#pfn, PFN_vkVoidFunction>(f) }
            }
        }
    });
    let tokens = quote! {
        use crate::types::*;
        #(#functions)*
    };
    rust_file(reg, "typed function pointers erased to PFN_vkVoidFunction", tokens)
}
