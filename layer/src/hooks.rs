//! The generated part of the SDK (`layer/src/gen/hooks.rs`, written by `cargo xtask regen`):
//! [`InstanceHooks`] and [`DeviceHooks`], one pre-call validate, pre-call record and post-call
//! record method per hookable command (every non-global command of the registry but the chassis's
//! own), and the entry points that call them.

// The parameters keep their C names (`pCreateInfo`) and number, as in the specification.
#[allow(non_snake_case, clippy::too_many_arguments)]
#[rustfmt::skip]
#[path = "gen/hooks.rs"]
mod generated;

pub(crate) use generated::entry;
pub use generated::{DeviceHooks, InstanceHooks, DEVICE_HOOKABLE, INSTANCE_HOOKABLE};
