//! The generated entry points (`layer/src/gen/entries.rs`, written by `cargo xtask regen`): one
//! `extern "system"` function per hookable command that finds the layer's state by the dispatch
//! pointer and runs its hooks around the next level's call, under the panic guard.

use vk_generated::types::PFN_vkVoidFunction;

use crate::state::Registered;

// The parameters keep their C names (`pCreateInfo`) and number, as in the specification.
#[allow(non_snake_case, clippy::too_many_arguments)]
#[rustfmt::skip]
#[path = "gen/entries.rs"]
mod generated;

/// The entry points of the commands `ids` (`N` of them), in order. Evaluated at compile time by
/// [`declare_layer!`](crate::declare_layer), so only the hooked commands' entry points are built.
pub const fn hook_entries<L: Registered, const N: usize>(ids: &[u16]) -> [PFN_vkVoidFunction; N] {
    let mut entries = [None; N];
    let mut i = 0;
    while i < N {
        entries[i] = generated::entry::<L>(ids[i]);
        i += 1;
    }
    entries
}
