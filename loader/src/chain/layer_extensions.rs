//! Extensions layers provide, as their manifests list them: the answer to
//! `vkEnumerate*ExtensionProperties` with a layer name, and the implicit layers' extensions merged
//! into the query without one.

use std::ffi::CStr;

use vk_generated::types::VkExtensionProperties;

use crate::discover;
use crate::ffi::extension_properties;
use crate::manifest::layer::{LayerExtension, LayerManifest};
use crate::plan::{self, layers::Reason};
use crate::platform::executable_path;

fn to_properties(list: &[LayerExtension]) -> Vec<VkExtensionProperties> {
    let mut out: Vec<VkExtensionProperties> = Vec::new();
    for e in list {
        let Ok(name) = std::ffi::CString::new(e.name.as_str()) else { continue };
        let props = extension_properties(&name, e.spec_version);
        if !out.iter().any(|p| crate::ffi::name_of(p) == name.as_bytes()) {
            out.push(props);
        }
    }
    out
}

/// A layer's extensions of one kind; a meta layer's are its components' (recursively; the catalog
/// has no cycles).
fn collect(catalog: &[LayerManifest], layer: &LayerManifest, device: bool, out: &mut Vec<LayerExtension>) {
    out.extend_from_slice(if device { &layer.device_extensions } else { &layer.instance_extensions });
    for c in &layer.component_layers {
        if let Some(component) = catalog.iter().find(|l| &l.name == c) {
            collect(catalog, component, device, out);
        }
    }
}

/// The extensions of the named layer (kind chosen by `device`), or `None` if there is no such layer.
pub fn extensions_of(catalog: &[LayerManifest], name: &CStr, device: bool) -> Option<Vec<VkExtensionProperties>> {
    let name = name.to_str().ok()?;
    let layer = catalog.iter().find(|l| l.name == name)?;
    let mut list = Vec::new();
    collect(catalog, layer, device, &mut list);
    Some(to_properties(&list))
}

/// `vkEnumerateInstanceExtensionProperties(pLayerName)`.
pub fn instance_extensions_of(name: &CStr) -> Option<Vec<VkExtensionProperties>> {
    extensions_of(&discover::layers::load(true), name, false)
}

/// The instance extensions of the implicit layers that are on.
pub fn implicit_instance_extensions() -> Vec<VkExtensionProperties> {
    let catalog = discover::layers::load(false);
    if catalog.is_empty() {
        return Vec::new();
    }
    let getenv = plan::layers::process_env;
    let exe = executable_path();
    let Ok(active) = plan::layers::activate(&catalog, &[], &getenv, exe.as_deref()) else { return Vec::new() };
    let mut list = Vec::new();
    for (i, reason) in &active.layers {
        if !reason.is_requested() && matches!(reason, Reason::Implicit | Reason::Component(..)) {
            list.extend_from_slice(&catalog[*i].instance_extensions);
        }
    }
    to_properties(&list)
}
