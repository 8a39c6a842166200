//! Pre-instance function chains: implicit layers that declare `pre_instance_functions` intercept
//! `vkEnumerateInstanceExtensionProperties`, `vkEnumerateInstanceLayerProperties` and
//! `vkEnumerateInstanceVersion` before any instance exists. The chain runs through the enabled
//! implicit layers that name an interceptor, in chain order, and ends in the loader's own answer.
//! Only those layers' libraries are opened, for the duration of the call.

use std::ffi::{c_char, CString};

use vk_generated::layer_abi::*;
use vk_generated::types::*;

use crate::debug::log::Level;
use crate::discover;
use crate::load;
use crate::manifest::layer::{LayerManifest, PreInstanceFunctions};
use crate::plan::{self, layers::Reason};
use crate::platform::{executable_path, Library};

/// The enabled implicit layers' interceptors for one command, opened, top of the chain first.
fn interceptors(pick: fn(&PreInstanceFunctions) -> &Option<String>) -> Vec<(std::sync::Arc<Library>, unsafe extern "system" fn())> {
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

fn header(kind: VkChainType, size: usize) -> VkChainHeader {
    VkChainHeader { r#type: kind, version: VK_CURRENT_CHAIN_VERSION, size: size as u32 }
}

type ExtensionsFn = unsafe extern "system" fn(*const VkEnumerateInstanceExtensionPropertiesChain, *const c_char, *mut u32, *mut VkExtensionProperties) -> VkResult;
type LayersFn = unsafe extern "system" fn(*const VkEnumerateInstanceLayerPropertiesChain, *mut u32, *mut VkLayerProperties) -> VkResult;
type VersionFn = unsafe extern "system" fn(*const VkEnumerateInstanceVersionChain, *mut u32) -> VkResult;

/// Builds the links, bottom first, and calls the top one. `make(header, next_fn, next_link)`.
macro_rules! run_chain {
    ($chain:ty, $kind:expr, $fn_ty:ty, $terminator:expr, $found:expr, |$head:ident| $call:expr) => {{
        let found = $found;
        if found.is_empty() {
            return None;
        }
        // Boxed so that the links keep their addresses while the vector grows.
        let mut links: Vec<Box<$chain>> = Vec::with_capacity(found.len() + 1);
        links.push(Box::new(<$chain>::default()));
        links[0].header = header($kind, std::mem::size_of::<$chain>());
        links[0].pfnNextLayer = Some($terminator);
        for (_, f) in found.iter().rev() {
            let next: *const $chain = &**links.last().expect("the terminator link");
            let mut link = Box::new(<$chain>::default());
            link.header = header($kind, std::mem::size_of::<$chain>());
            // SAFETY: the layer's interceptor has the chain function's signature (vk_layer.h).
            link.pfnNextLayer = Some(unsafe { std::mem::transmute::<unsafe extern "system" fn(), $fn_ty>(*f) });
            link.pNextLink = next;
            links.push(link);
        }
        let $head: &$chain = links.last().expect("at least the terminator");
        // SAFETY: the top link's function (an interceptor of a library `found` keeps open, or the
        // terminator) with the next link, all of which live until after the call; the caller's
        // promise for the application's arguments.
        let result = unsafe { $call };
        drop(links);
        drop(found);
        Some(result)
    }};
}

/// `vkEnumerateInstanceExtensionProperties` through the interceptors, if any layer has one.
///
/// # Safety
/// Vulkan's valid usage of the command: `layer_name` NULL or a NUL-terminated string; `count`
/// valid for reading and writing a `u32`; `props` NULL or valid for writing `*count` structures.
/// `terminator` must accept them (it ends the chain).
pub unsafe fn extension_properties(
    layer_name: *const c_char,
    count: *mut u32,
    props: *mut VkExtensionProperties,
    terminator: ExtensionsFn,
) -> Option<VkResult> {
    run_chain!(
        VkEnumerateInstanceExtensionPropertiesChain,
        VkChainType::ENUMERATE_INSTANCE_EXTENSION_PROPERTIES,
        ExtensionsFn,
        terminator,
        interceptors(|p| &p.enumerate_instance_extension_properties),
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, layer_name, count, props)
    )
}

/// `vkEnumerateInstanceLayerProperties` through the interceptors, if any layer has one.
///
/// # Safety
/// Vulkan's valid usage of the command: `count` valid for reading and writing a `u32`; `props`
/// NULL or valid for writing `*count` structures. `terminator` must accept them.
pub unsafe fn layer_properties(count: *mut u32, props: *mut VkLayerProperties, terminator: LayersFn) -> Option<VkResult> {
    run_chain!(
        VkEnumerateInstanceLayerPropertiesChain,
        VkChainType::ENUMERATE_INSTANCE_LAYER_PROPERTIES,
        LayersFn,
        terminator,
        interceptors(|p| &p.enumerate_instance_layer_properties),
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, count, props)
    )
}

/// `vkEnumerateInstanceVersion` through the interceptors, if any layer has one.
///
/// # Safety
/// Vulkan's valid usage of the command: `api_version` valid for writing a `u32`. `terminator`
/// must accept it.
pub unsafe fn version(api_version: *mut u32, terminator: VersionFn) -> Option<VkResult> {
    run_chain!(
        VkEnumerateInstanceVersionChain,
        VkChainType::ENUMERATE_INSTANCE_VERSION,
        VersionFn,
        terminator,
        interceptors(|p| &p.enumerate_instance_version),
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, api_version)
    )
}
