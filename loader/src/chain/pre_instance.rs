//! Pre-instance function chains: implicit layers that declare `pre_instance_functions` intercept
//! `vkEnumerateInstanceExtensionProperties`, `vkEnumerateInstanceLayerProperties` and
//! `vkEnumerateInstanceVersion` before any instance exists. The chain runs through the enabled
//! implicit layers that name an interceptor, in chain order, and ends in the loader's own answer.
//! Only those layers' libraries are opened, for the duration of the call. Which layers is decided
//! here; the chain is built and called by `load::pre_instance`.

use std::ffi::CString;

use crate::debug::log::Level;
use crate::discover;
use crate::load;
use crate::load::pre_instance::Interceptors;
use crate::manifest::layer::{LayerManifest, PreInstanceFunctions};
use crate::plan::{self, layers::Reason};
use crate::platform::executable_path;

/// The interceptors of `vkEnumerateInstanceExtensionProperties`.
pub fn of_extension_properties() -> Interceptors {
    interceptors(|p| &p.enumerate_instance_extension_properties)
}

/// The interceptors of `vkEnumerateInstanceLayerProperties`.
pub fn of_layer_properties() -> Interceptors {
    interceptors(|p| &p.enumerate_instance_layer_properties)
}

/// The interceptors of `vkEnumerateInstanceVersion`.
pub fn of_version() -> Interceptors {
    interceptors(|p| &p.enumerate_instance_version)
}

/// The enabled implicit layers' interceptors for one command, opened, top of the chain first.
fn interceptors(pick: fn(&PreInstanceFunctions) -> &Option<String>) -> Interceptors {
    let catalog = discover::layers::load(false);
    let candidates: Vec<&LayerManifest> = catalog.iter().filter(|l| l.implicit && pick(&l.pre_instance_functions).is_some()).collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let getenv = plan::layers::process_env;
    let exe = executable_path();
    let Ok(active) = plan::layers::activate(&catalog, &[], &getenv, exe.as_deref()) else { return Vec::new() };
    let mut out = Vec::new();
    for (index, reason) in active.layers {
        let manifest = &catalog[index];
        let Some(name) = pick(&manifest.pre_instance_functions) else { continue };
        if reason != Reason::Implicit {
            continue;
        }
        let Ok(symbol) = CString::new(name.as_str()) else { continue };
        match load::layer::open_library(manifest) {
            Ok(library) => match library.symbol(&symbol) {
                Some(f) => out.push((library, f)),
                None => log!(Level::WarnLayer, "implicit layer {}: pre-instance function {name} not found; skipped", manifest.name),
            },
            Err(why) => log!(Level::WarnLayer, "implicit layer {} skipped: {why}", manifest.name),
        }
    }
    out
}
