//! An instance's layer chain: the layers in it, opened, and the chain's table.

use std::sync::Mutex;

use crate::load::layer::{Gipa, LoadedLayer};
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};
use crate::manifest::layer::LayerManifest;
use crate::plan::layers::Reason;

/// A layer chosen for an instance, opened.
pub struct ActiveLayer {
    pub manifest: LayerManifest,
    pub reason: Reason,
    pub loaded: LoadedLayer,
    /// Meta layers that are on, listed right after this layer by `vkEnumerateDeviceLayerProperties`
    /// (the last of their components in the chain, or the layer before them).
    pub meta_layers_after: Vec<LayerManifest>,
}

/// The physical device the application gets when layers are enabled: a `TerminatorPhysicalDevice`
/// whose `unwrapped` is what the top layer returned (maybe its own wrapper), whose first word is
/// the chain's table, and whose driver fields are those of the loader's device behind it when the
/// layers did not wrap it (unknown physical-device commands go straight to the driver through
/// them), or an empty table when they did.
pub(crate) type TrampolinePhysicalDevice = TerminatorPhysicalDevice;

/// An instance's layer chain.
pub struct InstanceLayers {
    /// Top of the chain first.
    pub layers: Vec<ActiveLayer>,
    /// Filled from the top layer's `vkGetInstanceProcAddr`; the instance's first word points here.
    /// Its unknown physical-device slots hold the loader's terminators.
    pub table: Box<InstanceDispatch>,
    /// Trampoline-level physical devices, created on first enumeration and kept (stable handles).
    pub(crate) physical_devices: Mutex<Vec<Box<TrampolinePhysicalDevice>>>,
    /// The `vkGetInstanceProcAddr` at the end of the instance chain, which the last link of a
    /// device chain carries too.
    pub terminator_gipa: Gipa,
}

