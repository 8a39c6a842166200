//! What an application (or the layer above) gave the loader, as safe views. Each view is made
//! once, at the `extern "system"` entry point that received the pointers, by an `unsafe fn` whose
//! contract is Vulkan's valid usage for them; what decides (`chain/`, `lazy/`, `debug/`, `wsi`)
//! reads them through safe methods after that. Nothing here writes what was given: where the
//! level below needs something changed, it gets a copy.

pub mod allocator;
pub mod device_create_info;
mod device_group;
pub mod instance_create_info;
pub mod kept;
pub mod surface;
