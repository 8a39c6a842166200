//! Vulkan's types and the loader's tables, generated from the Khronos registry (`vk.xml`).
//!
//! This crate is what layer and tool authors build on:
//! - [`types`]: every handle, enum, bitmask, struct, union, function pointer and constant, ABI-exact,
//!   under their C names. Enums and bitmasks are `#[repr(transparent)]` newtypes with associated
//!   constants (`VkStructureType::APPLICATION_INFO`), so unknown values from drivers are fine.
//! - [`InstanceDispatchTable`] / [`DeviceDispatchTable`]: one slot per canonical command, aliases
//!   sharing it, filled by [`DispatchTable::load`] from any GetProcAddr.
//! - [`lookup`]: name -> command and name -> extension, through tables hashed at generation time,
//!   and the availability of a command name for an API version and a set of extensions.
//! - [`COMMANDS`], [`EXTENSIONS`], [`EXPORTED_COMMANDS`]: metadata tables; [`command_id`] and
//!   [`extension_id`]: their indices by name, as constants.
//! - [`erase`]: a function of a command's `PFN_*` type as the `PFN_vkVoidFunction` that
//!   `vkGet*ProcAddr` returns, its signature checked by the compiler.
//! - [`chain_sizes`]: the size of each structure of a `VkDeviceCreateInfo` chain, by sType.
//! - [`deep_copy`]: deep copies of `VkInstanceCreateInfo` and its `pNext` chain, to create a driver's
//!   instance after `vkCreateInstance` returned.
//! - [`padding`]: zeroing the padding bytes of the structures drivers fill (physical-device
//!   properties, features, memory, format and queue family properties), before the loader records them.
//! - [`layer_abi`]: the `vk_layer.h` / `vk_icd.h` structures the registry does not describe.
//!
//! Everything under `src/gen/` is generator output (`cargo xtask regen`); this file and the other
//! hand-written modules only give it shape.

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::all)]
// The generator documents every item it emits (the registry name, linked to the specification's
// reference page), so the whole public surface is held to this, generated or not.
#![warn(missing_docs)]
#![no_std]

extern crate alloc;

#[macro_use]
mod macros;

/// Every handle, enum, bitmask, struct, union, function pointer and constant of the registry,
/// under its C name, each linked to its page in the Vulkan specification.
#[rustfmt::skip]
#[path = "gen/types.rs"]
pub mod types;

#[rustfmt::skip]
#[path = "gen/commands.rs"]
mod commands;

#[rustfmt::skip]
#[path = "gen/dispatch.rs"]
mod dispatch;

#[rustfmt::skip]
#[path = "gen/extensions.rs"]
mod extensions;

/// Each command's typed function pointer as a `PFN_vkVoidFunction`, by command name: what a
/// `vkGet*ProcAddr` returns or a table by command id holds, with no cast by hand
/// (`erase::vkCmdDraw(Some(my_cmd_draw))` compiles only if `my_cmd_draw` is a `PFN_vkCmdDraw`).
#[rustfmt::skip]
#[path = "gen/erase.rs"]
pub mod erase;

#[rustfmt::skip]
#[path = "gen/exports.rs"]
mod exports;

/// The size of each structure that may sit in a `VkDeviceCreateInfo` chain, by its sType: for
/// bitwise copies of chain elements known only by their sType.
#[rustfmt::skip]
#[path = "gen/chain_sizes.rs"]
pub mod chain_sizes;

pub mod deep_copy;
pub mod layer_abi;
pub mod lookup;
pub mod padding;
mod tables;

pub use commands::{id as command_id, COMMANDS, COMMAND_COUNT};
pub use dispatch::{DeviceDispatchTable, InstanceDispatchTable};
pub use exports::EXPORTED_COMMANDS;
pub use extensions::{id as extension_id, EXTENSIONS, EXTENSION_COUNT};
pub use tables::*;

/// `VK_MAKE_API_VERSION(variant, major, minor, patch)`.
pub const fn make_api_version(variant: u32, major: u32, minor: u32, patch: u32) -> u32 {
    (variant << 29) | (major << 22) | (minor << 12) | patch
}

/// Major and minor of an API version, for messages.
pub const fn api_version_major_minor(version: u32) -> (u32, u32) {
    ((version >> 22) & 0x7f, (version >> 12) & 0x3ff)
}

/// The registry version this crate was generated from (`VK_HEADER_VERSION_COMPLETE`).
pub const HEADER_VERSION_COMPLETE: u32 = types::VK_HEADER_VERSION_COMPLETE;

// The README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
