//! Pre-instance function chains, built and called: the links of `vk_layer.h`'s
//! `VkEnumerateInstance*Chain` structures through the interceptors `chain::pre_instance` chose,
//! ending in the loader's own answer.

use std::ffi::c_char;
use std::sync::Arc;

use vk_generated::layer_abi::*;
use vk_generated::types::*;

use crate::platform::Library;

/// Interceptors of one command, each with the library that keeps it loaded, top of the chain
/// first: symbols named by a layer manifest's `pre_instance_functions`, which `vk_layer.h` gives
/// the chain function's signature.
pub type Interceptors = Vec<(Arc<Library>, unsafe extern "system" fn())>;

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
            // SAFETY: the layer's interceptor has the chain function's signature (vk_layer.h; the
            // caller's promise that `found` holds this command's interceptors).
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

/// `vkEnumerateInstanceExtensionProperties` through `found`, if any.
///
/// # Safety
/// Vulkan's valid usage of the command: `layer_name` NULL or a NUL-terminated string; `count`
/// valid for reading and writing a `u32`; `props` NULL or valid for writing `*count` structures.
/// `terminator` must accept them (it ends the chain), and `found`'s functions be this command's
/// interceptors (`chain::pre_instance::of_extension_properties`).
pub unsafe fn extension_properties(
    found: Interceptors,
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
        found,
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, layer_name, count, props)
    )
}

/// `vkEnumerateInstanceLayerProperties` through `found`, if any.
///
/// # Safety
/// Vulkan's valid usage of the command: `count` valid for reading and writing a `u32`; `props`
/// NULL or valid for writing `*count` structures. `terminator` must accept them, and `found`'s
/// functions be this command's interceptors (`chain::pre_instance::of_layer_properties`).
pub unsafe fn layer_properties(found: Interceptors, count: *mut u32, props: *mut VkLayerProperties, terminator: LayersFn) -> Option<VkResult> {
    run_chain!(
        VkEnumerateInstanceLayerPropertiesChain,
        VkChainType::ENUMERATE_INSTANCE_LAYER_PROPERTIES,
        LayersFn,
        terminator,
        found,
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, count, props)
    )
}

/// `vkEnumerateInstanceVersion` through `found`, if any.
///
/// # Safety
/// Vulkan's valid usage of the command: `api_version` valid for writing a `u32`. `terminator`
/// must accept it, and `found`'s functions be this command's interceptors
/// (`chain::pre_instance::of_version`).
pub unsafe fn version(found: Interceptors, api_version: *mut u32, terminator: VersionFn) -> Option<VkResult> {
    run_chain!(
        VkEnumerateInstanceVersionChain,
        VkChainType::ENUMERATE_INSTANCE_VERSION,
        VersionFn,
        terminator,
        found,
        |head| head.pfnNextLayer.expect("set")(head.pNextLink, api_version)
    )
}
