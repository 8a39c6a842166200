//! The generated part of the layer SDK, for every command of the registry that a layer can hook:
//! `layer/src/gen/hooks.rs` (hook methods with pass-through defaults on `InstanceHooks` /
//! `DeviceHooks`, the ids of the hookable commands) and `layer/src/gen/entries.rs` (one
//! `extern "system"` entry point per command that runs the hooks around the next level's call).
//! Two files, so that the traits depend on nothing of the SDK and the entry points on its state.
//!
//! Not hookable: global commands (no instance yet: the pre-instance chains are another interface)
//! and [`CHASSIS_COMMANDS`], which the hand-written chassis (`layer/src/chassis.rs`) implements.

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{c_type, ident, param, rust_file, safety, safety_doc, spec_link};
use super::layer_unwrap::{param_step, Walkers};
use super::layer_wrap::{self, Returning};
use crate::ir::{Command, Level, Registry};

/// The commands the chassis implements by hand: creation, destruction and `vkGet*ProcAddr`.
pub const CHASSIS_COMMANDS: &[&str] = &[
    "vkCreateDevice",
    "vkCreateInstance",
    "vkDestroyDevice",
    "vkDestroyInstance",
    "vkGetDeviceProcAddr",
    "vkGetInstanceProcAddr",
];

/// The hookable commands, instance-level and device-level, in name order.
pub(crate) fn hookable(reg: &Registry) -> Result<(Vec<&Command>, Vec<&Command>), String> {
    for name in CHASSIS_COMMANDS {
        if !reg.commands.contains_key(*name) {
            return Err(format!("chassis command {name} is not in the registry"));
        }
    }
    Ok(reg
        .commands
        .values()
        .filter(|c| c.level != Level::Global && !CHASSIS_COMMANDS.contains(&c.name.as_str()))
        .partition(|c| matches!(c.level, Level::Instance | Level::PhysicalDevice)))
}

/// `use core::ffi::...` for the C types the commands' signatures spell.
pub(crate) fn ffi_imports(commands: &[&Command]) -> TokenStream {
    let spelled: String = commands.iter().flat_map(|c| params(c)).map(|p| p.to_string()).collect();
    let ffi = ["c_char", "c_int", "c_void"]
        .into_iter()
        .filter(|t| spelled.contains(t))
        .map(|t| format_ident!("{}", t));
    quote!(#(use core::ffi::#ffi;)*)
}

/// `layer/src/gen/hooks.rs`: the hook traits and the hookable commands' ids.
pub fn emit_hooks(reg: &Registry) -> Result<String, String> {
    let (instance, device) = hookable(reg)?;
    let all: Vec<&Command> = instance.iter().chain(&device).copied().collect();
    let ffi = ffi_imports(&all);
    let instance_methods = instance.iter().map(|c| hook_methods(c, quote!(InstanceDispatchTable)));
    let device_methods = device.iter().map(|c| hook_methods(c, quote!(DeviceDispatchTable)));
    let ids = |list: &[&Command]| {
        let ids = list.iter().map(|c| format_ident!("{}", c.name));
        quote!(&[#(command_id::#ids),*])
    };
    let (instance_ids, device_ids) = (ids(&instance), ids(&device));
    let names = |list: &[&Command]| {
        let names = list.iter().map(|c| snake(c));
        quote!(&[#(#names),*])
    };
    let (instance_names, device_names) = (names(&instance), names(&device));
    let hook_ids = |list: &[&Command]| {
        let consts = list.iter().map(|c| {
            let (name, id) = (format_ident!("{}", snake(c)), format_ident!("{}", c.name));
            let doc = format!("The command id of {}.", spec_link(&c.name));
            quote!(#[doc = #doc] pub const #name: u16 = command_id::#id;)
        });
        quote!(#(#consts)*)
    };
    let (instance_hook_ids, device_hook_ids) = (hook_ids(&instance), hook_ids(&device));
    let tokens = quote! {
        #ffi
        use vk_generated::command_id;
        use vk_generated::types::*;
        use vk_generated::{DeviceDispatchTable, InstanceDispatchTable};
        use crate::guard::Fallback;

        /// The instance-level hookable commands' ids by their hook methods' common suffix
        /// (`enumerate_physical_devices`): how `#[vk_layer::hooks]` names the commands a layer's
        /// hook methods hook.
        #[allow(non_upper_case_globals)]
        pub mod instance_hook_ids {
            use vk_generated::command_id;
            #instance_hook_ids
        }

        /// The device-level hookable commands' ids by their hook methods' suffix (`cmd_draw`).
        #[allow(non_upper_case_globals)]
        pub mod device_hook_ids {
            use vk_generated::command_id;
            #device_hook_ids
        }

        /// Instance-level commands (first parameter a `VkInstance` or `VkPhysicalDevice`) with hooks.
        pub const INSTANCE_HOOKABLE: &[u16] = #instance_ids;
        /// Device-level commands (first parameter a `VkDevice`, `VkQueue` or `VkCommandBuffer`) with hooks.
        pub const DEVICE_HOOKABLE: &[u16] = #device_ids;
        /// The hook-method suffixes of [`INSTANCE_HOOKABLE`], in its order: what
        /// `intercept(prefix_*)` matches.
        pub const INSTANCE_HOOK_NAMES: &[&str] = #instance_names;
        /// The hook-method suffixes of [`DEVICE_HOOKABLE`], in its order.
        pub const DEVICE_HOOK_NAMES: &[&str] = #device_names;

        /// A layer's per-instance object: hooks for the instance-level commands, four per
        /// command, run in this order by the command's entry point. Every default passes the call
        /// through unchanged.
        ///
        /// - `pre_call_validate_*`: `Some(r)` skips the call (and the other hooks) and returns
        ///   `r` to the caller;
        /// - `pre_call_record_*`: before the call goes down;
        /// - `call_down_*`: the call itself, given what goes down (the first handle already the
        ///   next level's: [`Layer::unwrap_*`](crate::Layer::unwrap_instance); with
        ///   [`Layer::WRAPS_HANDLES`](crate::Layer::WRAPS_HANDLES), every handle the other
        ///   parameters reach too); the default calls the next level's function with those
        ///   arguments. A layer that changes what goes down (a parameter replaced) or answers
        ///   the call itself implements it; what it returns is the command's result;
        /// - `post_call_record_*`: after, with the caller's own arguments and the result.
        #[allow(unused_variables)]
        pub trait InstanceHooks: Send + Sync + 'static {
            #(#instance_methods)*
        }

        /// A layer's per-device object: hooks for the device-level commands, as [`InstanceHooks`].
        #[allow(unused_variables)]
        pub trait DeviceHooks: Send + Sync + 'static {
            #(#device_methods)*
        }
    };
    rust_file(reg, "the layer SDK's hook traits", tokens)
}

/// `layer/src/gen/entries.rs`: the entry points that run the hooks, and `entry` by command id.
pub fn emit_entries(reg: &Registry) -> Result<String, String> {
    let (instance, device) = hookable(reg)?;
    let all: Vec<&Command> = instance.iter().chain(&device).copied().collect();
    let ffi = ffi_imports(&all);
    let walkers = Walkers::new(reg);
    let returning = Returning::new(reg);
    let instance_entries = instance
        .iter()
        .map(|c| entry(reg, &walkers, &returning, c, quote!(instance)));
    let device_entries = device
        .iter()
        .map(|c| entry(reg, &walkers, &returning, c, quote!(device)));
    // Each entry point checked against its command's `PFN_*` type as it is erased.
    let arms = all.iter().map(|c| {
        let id = format_ident!("{}", c.name);
        quote!(command_id::#id => vk_generated::erase::#id(Some(#id::<L>)),)
    });
    let tokens = quote! {
        #ffi
        use vk_generated::command_id;
        use vk_generated::types::*;
        use crate::guard::guard;
        use crate::hooks::{DeviceHooks, InstanceHooks};
        use crate::state::Registered;
        use crate::unknown::{refused, unknown};

        /// The layer's entry point for a hookable command id, `None` for any other id. A `const
        /// fn`: `declare_layer!` evaluates it at compile time for the hooked commands only, so a
        /// layer's library holds only the entry points it hooks.
        pub(crate) const fn entry<L: Registered>(id: u16) -> PFN_vkVoidFunction {
            match id {
                #(#arms)*
                _ => None,
            }
        }

        #(#instance_entries)*
        #(#device_entries)*
    };
    rust_file(reg, "the layer SDK's entry points", tokens)
}

/// `vkCmdDraw` -> `cmd_draw`.
pub(crate) fn snake(c: &Command) -> String {
    c.name.trim_start_matches("vk").to_snake_case()
}

/// The Rust type a hook sees for the command's result: `()` for `void`.
fn result_type(c: &Command) -> TokenStream {
    if c.return_type.is_void() {
        quote!(())
    } else {
        c_type(&c.return_type)
    }
}

/// The three hook methods of `c`; each gets the next level's dispatch table (`table`) first.
fn hook_methods(c: &Command, table: TokenStream) -> TokenStream {
    let base = snake(c);
    let (validate, pre, post) = (
        format_ident!("pre_call_validate_{}", base),
        format_ident!("pre_call_record_{}", base),
        format_ident!("post_call_record_{}", base),
    );
    let call_down = format_ident!("call_down_{}", base);
    let id = format_ident!("{}", c.name);
    let args: Vec<_> = c.params.iter().map(|p| ident(&p.name)).collect();
    let params = params(c);
    let result = result_type(c);
    let returns = (!c.return_type.is_void()).then(|| quote!(-> #result));
    // `void` commands' post-call hooks have no result parameter.
    let result_param = (!c.return_type.is_void()).then(|| quote!(result: #result));
    let name = &c.name;
    let (doc_validate, doc_pre, doc_post) = (
        format!("`{name}`: checks before the call; `Some(result)` skips it and returns `result`."),
        format!("`{name}`: records before the call is passed down."),
        format!("`{name}`: records after the call (and its `result`, if any)."),
    );
    let doc_call = format!(
        "`{name}`: the call, with what goes down (the first handle, and with `WRAPS_HANDLES` every \
         handle the parameters reach, already the next level's); the default calls the next \
         level's function (the fallback value when it has none)."
    );
    let call_contract = safety_doc(&format!(
        "Called by the layer's entry point with the caller's arguments (valid per `{name}`'s \
         valid usage), the handles the layer unwraps being the next level's: the default passes \
         them to the next level's `{name}`. An implementation passes down what the next level \
         may be given."
    ));
    let call = safety(&format!(
        "the next level's `{name}`, from the table its `vkGet*ProcAddr` filled, with the \
         arguments the entry point received (valid per the command's valid usage, the handles \
         the layer unwraps the next level's own), per this method's contract."
    ));
    quote! {
        #[doc = #doc_validate]
        fn #validate(&self, next: &#table, #(#params),*) -> Option<#result> { None }
        #[doc = #doc_pre]
        fn #pre(&self, next: &#table, #(#params),*) {}
        #[doc = #doc_call]
        #[doc = ""]
        #call_contract
        #[inline(always)]
        unsafe fn #call_down(&self, next: &#table, #(#params),*) #returns {
            let Some(f) = next.#id else { return Fallback::fallback() };
            #call
            unsafe { f(#(#args),*) }
        }
        #[doc = #doc_post]
        fn #post(&self, next: &#table, #(#params,)* #result_param) {}
    }
}

/// `name: Type` for each parameter, as in the command's signature.
fn params(c: &Command) -> Vec<TokenStream> {
    c.params.iter().map(param).collect()
}

/// The entry point: find the state by the first parameter's dispatch pointer, run the hooks
/// around the next level's function.
fn entry(
    reg: &Registry,
    walkers: &Walkers,
    returning: &Returning,
    c: &Command,
    level: TokenStream,
) -> TokenStream {
    let id = format_ident!("{}", c.name);
    let base = snake(c);
    let (validate, pre, call_down, post) = (
        format_ident!("pre_call_validate_{}", base),
        format_ident!("pre_call_record_{}", base),
        format_ident!("call_down_{}", base),
        format_ident!("post_call_record_{}", base),
    );
    let params = params(c);
    let args: Vec<_> = c.params.iter().map(|p| ident(&p.name)).collect();
    let first = &args[0];
    let ret = if c.return_type.is_void() {
        quote!()
    } else {
        let r = c_type(&c.return_type);
        quote!(-> #r)
    };
    // A wrapping layer's dispatchable handles go down as the next level's (`Layer::unwrap_*`: the
    // identity, compiled away, for the others); the hooks but `call_down_*` see the caller's.
    let (unwrap, object_type) = match (c.params[0].ty.base.as_str(), c.params[0].ty.pointers.is_empty()) {
        ("VkInstance", true) => (Some(quote!(unwrap_instance)), quote!(INSTANCE)),
        ("VkPhysicalDevice", true) => (Some(quote!(unwrap_physical_device)), quote!(PHYSICAL_DEVICE)),
        ("VkDevice", true) => (Some(quote!(unwrap_device)), quote!(DEVICE)),
        ("VkQueue", true) => (Some(quote!(unwrap_queue)), quote!(QUEUE)),
        ("VkCommandBuffer", true) => (Some(quote!(unwrap_command_buffer)), quote!(COMMAND_BUFFER)),
        _ => (None, quote!(UNKNOWN)),
    };
    let (unwrapped, mut down_args) = match unwrap {
        Some(unwrap) => (
            quote! {
                let Some(down) = L::#unwrap(&state.hooks, #first) else {
                    return refused::<L, _>(state.messengers(), command_id::#id, VkObjectType::#object_type, #first.0 as u64);
                };
            },
            std::iter::once(quote!(down)).chain(args[1..].iter().map(|a| quote!(#a))).collect(),
        ),
        None => (quote!(), args.iter().map(|a| quote!(#a)).collect::<Vec<_>>()),
    };
    // With `Layer::WRAPS_HANDLES`, the other parameters go down through the handle walk
    // (`layer/src/unwrap.rs`): every handle they reach unwrapped, copies only where one changes.
    let mut unwrapped = unwrapped;
    let steps: Vec<(usize, TokenStream)> = c
        .params
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, p)| param_step(reg, walkers, c, p).map(|s| (i, s)))
        .collect();
    if !steps.is_empty() {
        let downs: Vec<_> = steps
            .iter()
            .map(|(i, _)| format_ident!("down_{}", c.params[*i].name))
            .collect();
        let givens: Vec<_> = steps
            .iter()
            .map(|(i, _)| ident(&c.params[*i].name))
            .collect();
        let exprs: Vec<_> = steps.iter().map(|(_, s)| s.clone()).collect();
        let uses_scratch = exprs.iter().any(|e| e.to_string().contains("walk_scratch"));
        let at = if level.to_string() == "device" {
            quote!(AtDevice)
        } else {
            quote!(AtInstance)
        };
        let why = safety(
            "the parameters are valid per the command's valid usage (this entry point's \
             contract): each pointer null or valid for the count its length gives, which is \
             what the walk reads.",
        );
        // The scratch lives as long as the entry point's call: its copies are what goes down.
        let (scratch_decl, walk) = if uses_scratch {
            (
                quote!(let mut walk_scratch = crate::unwrap::Scratch::new();),
                quote! {
                    let walk_scratch = &mut walk_scratch;
                    #why
                    let walked: Result<_, crate::unwrap::Refused> = (|| unsafe { Ok((#(#exprs,)*)) })();
                },
            )
        } else {
            (
                quote!(),
                quote!(let walked: Result<_, crate::unwrap::Refused> = (|| Ok((#(#exprs,)*)))();),
            )
        };
        // A handle the command may ignore goes down unknown as it was, and is reported.
        let walked_ok = if uses_scratch {
            quote! {
                Ok(down) => {
                    if let Some(r) = walk_scratch.passed_unknown.take() {
                        crate::unknown::passed_unknown::<L>(state.messengers(), command_id::#id, r.0, r.1);
                    }
                    down
                }
            }
        } else {
            quote!(Ok(down) => down)
        };
        unwrapped.extend(quote! {
            #scratch_decl
            let (#(#downs,)*) = if L::WRAPS_HANDLES {
                let walk_u = &crate::unwrap::#at::<L>(state);
                #walk
                match walked {
                    #walked_ok,
                    Err(r) => return refused::<L, _>(state.messengers(), command_id::#id, r.0, r.1),
                }
            } else {
                (#(#givens,)*)
            };
        });
        for (i, _) in &steps {
            let down = format_ident!("down_{}", c.params[*i].name);
            down_args[*i] = quote!(#down);
        }
    }
    let down_args = quote!(#(#down_args),*);
    let name = &c.name;
    let first_name = &c.params[0].name;
    let call = safety(&format!(
        "the layer's `call_down_{base}`, whose contract is the command's own: the caller's \
         arguments (valid per the command's valid usage) with the next level's handles where \
         the layer unwraps them."
    ));
    // With `Layer::WRAPS_HANDLES`, the handles the next level brought back are wrapped before
    // `post_call_record_*` (which sees the caller's), and those destroyed or freed forgotten after
    // it (`layer/src/wrap.rs`).
    let at = if level.to_string() == "device" {
        quote!(crate::wrap::AtDevice::<L>::new(state, #first.0))
    } else {
        quote!(crate::wrap::AtInstance::<L>::new(state))
    };
    let wrap_up = layer_wrap::up(reg, returning, c, &mut Vec::new()).map(|(stmts, condition)| {
        let why = safety(
            "the next level has just filled the caller's outputs (valid per the command's valid \
             usage, each array for the count its length gives after the call), which the walk \
             reads and writes over with the layer's handles.",
        );
        quote! {
            if L::WRAPS_HANDLES #condition {
                let wrap_w = &#at;
                #why
                unsafe { #stmts }
            }
        }
    });
    let wrap_forget = layer_wrap::forget(reg, c).map(|stmt| {
        let stmt = if stmt.to_string().contains("freed") {
            let why = safety(
                "the caller's array of the handles freed, valid for its count per the command's \
                 valid usage, which the walk only reads.",
            );
            quote!(#why unsafe { #stmt })
        } else {
            stmt
        };
        quote! {
            if L::WRAPS_HANDLES {
                let wrap_w = &#at;
                #stmt
            }
        }
    });
    // A wrapping layer keeps each descriptor update template's layout, by the handle the caller
    // gets, to unwrap the handles in the data given with it (`layer/src/templates.rs`).
    let wrap_up = match c.name.as_str() {
        "vkCreateDescriptorUpdateTemplate" => {
            let why = safety(
                "the call succeeded: `pDescriptorUpdateTemplate` holds the caller's new template, \
                 and `pCreateInfo` is valid per the command's valid usage.",
            );
            Some(quote! {
                #wrap_up
                if L::WRAPS_HANDLES && result == VkResult::SUCCESS {
                    #why
                    unsafe { state.templates.record(*pDescriptorUpdateTemplate, &*pCreateInfo) };
                }
            })
        }
        _ => wrap_up,
    };
    let wrap_forget = match c.name.as_str() {
        "vkDestroyDescriptorUpdateTemplate" => Some(quote! {
            #wrap_forget
            if L::WRAPS_HANDLES {
                state.templates.forget(descriptorUpdateTemplate);
            }
        }),
        _ => wrap_forget,
    };
    let call_and_post = if c.return_type.is_void() {
        quote! {
            #unwrapped
            #call
            unsafe { state.hooks.#call_down(&state.next, #down_args) };
            #wrap_up
            state.hooks.#post(&state.next, #(#args),*);
            #wrap_forget
        }
    } else {
        quote! {
            #unwrapped
            #call
            let result = unsafe { state.hooks.#call_down(&state.next, #down_args) };
            #wrap_up
            state.hooks.#post(&state.next, #(#args,)* result);
            #wrap_forget
            result
        }
    };
    let doc = format!("{} through the layer's hooks.", spec_link(name));
    let contract = safety_doc(&format!(
        "The arguments are valid as `{name}`'s valid usage says: `{first_name}` is a live \
         dispatchable handle of a chain this layer is in. A handle the layer does not know \
         (reported once per command) or a panic in its hooks returns the command's fallback \
         value."
    ));
    let state = safety(&format!(
        "`{first_name}` is a live dispatchable handle (valid usage): its first word, the loader's \
         dispatch pointer, can be read, and keys the layer's state."
    ));
    quote! {
        #[doc = #doc]
        #[doc = ""]
        #contract
        unsafe extern "system" fn #id<L: Registered>(#(#params),*) #ret {
            guard(|| {
                #state
                let Some(state) = (unsafe { L::chassis().#level(#first.0) }) else {
                    return unknown::<L, _>(command_id::#id, VkObjectType::#object_type, #first.0 as u64);
                };
                if let Some(result) = state.hooks.#validate(&state.next, #(#args),*) {
                    return result;
                }
                state.hooks.#pre(&state.next, #(#args),*);
                #call_and_post
            })
        }
    }
}
