//! Opening a layer's library: architecture and ELF checks before `dlopen`, then
//! `vkNegotiateLoaderLayerInterfaceVersion` (interface 2, with `vk_layerGetPhysicalDeviceProcAddr`)
//! or, for older layers, the exported (possibly renamed) GetProcAddr functions.

use std::ffi::{CStr, CString};
use std::sync::Arc;
use vk_generated::layer_abi::{
    PFN_GetPhysicalDeviceProcAddr, VkNegotiateLayerInterface, VkNegotiateLayerStructType,
    CURRENT_LOADER_LAYER_INTERFACE_VERSION, MIN_SUPPORTED_LOADER_LAYER_INTERFACE_VERSION,
};
use vk_generated::types::*;
use crate::platform::elf::{self, ElfCheck};
use crate::manifest::layer::LayerManifest;
use crate::platform::library_cache;
use crate::debug::log::Level;
use crate::platform::Library;

pub type Gipa = unsafe extern "system" fn(VkInstance, *const std::ffi::c_char) -> PFN_vkVoidFunction;
pub type Gdpa = unsafe extern "system" fn(VkDevice, *const std::ffi::c_char) -> PFN_vkVoidFunction;

/// A layer library, opened and negotiated (a clone holds the library open too).
#[derive(Clone)]
pub struct LoadedLayer {
    pub gipa: Gipa,
    pub gdpa: Option<Gdpa>,
    pub gpdpa: PFN_GetPhysicalDeviceProcAddr,
    pub interface_version: u32,
    _library: Arc<Library>,
}

/// Why a layer's library cannot be used.
#[derive(Debug)]
pub enum LoadError {
    /// The library is for another architecture (`library_arch` or its ELF header says so).
    WrongArchitecture(String),
    /// Anything else: missing, not a library, no entry point, negotiation failed.
    Failed(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::WrongArchitecture(why) | LoadError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<String> for LoadError {
    fn from(why: String) -> LoadError {
        LoadError::Failed(why)
    }
}

fn symbol_name(name: &Option<String>, default: &str) -> Result<CString, String> {
    CString::new(name.as_deref().unwrap_or(default)).map_err(|_| "function name contains NUL".to_string())
}

/// Opens a layer's library after the architecture and ELF checks.
pub fn open_library(manifest: &LayerManifest) -> Result<Arc<Library>, LoadError> {
    let path = manifest.library_path.as_deref().ok_or_else(|| "a meta layer has no library".to_string())?;
    if let Some(arch) = &manifest.library_arch {
        let ours = if cfg!(target_pointer_width = "64") { "64" } else { "32" };
        if arch != ours {
            // The Khronos loader's words.
            log!(
                Level::Info,
                "The library architecture in layer {} doesn't match the current running architecture, skipping this layer",
                manifest.manifest_path
            );
            return Err(LoadError::WrongArchitecture(format!("library_arch {arch} does not match this {ours}-bit process")));
        }
    }
    // A library another call or instance holds is shared (see library_cache); the
    // ELF check guards only the first dlopen.
    if let Some(library) = library_cache::get(path) {
        log!(Level::DebugLayer, "Loading layer library {path}");
        return Ok(library);
    }
    if elf::names_the_file(path) {
        match elf::check(path) {
            ElfCheck::Loadable => {}
            ElfCheck::WrongArchitecture(why) => return Err(LoadError::WrongArchitecture(format!("{path}: {why}"))),
            ElfCheck::Corrupt(why) => return Err(format!("{path} cannot be loaded: {why}").into()),
        }
    }
    let library = library_cache::open(path)?;
    // The Khronos loader's words, at each load as there.
    log!(Level::DebugLayer, "Loading layer library {path}");
    Ok(library)
}

/// Opens and negotiates the layer of `manifest`; the error says why it cannot be used.
pub fn load(manifest: &LayerManifest) -> Result<LoadedLayer, LoadError> {
    let path = manifest.library_path.as_deref().unwrap_or_default();
    let library = open_library(manifest)?;
    let f = &manifest.functions;
    let negotiate_name = symbol_name(&f.negotiate, "vkNegotiateLoaderLayerInterfaceVersion")?;
    let gipa_name = symbol_name(&f.get_instance_proc_addr, "vkGetInstanceProcAddr")?;
    let gdpa_name = symbol_name(&f.get_device_proc_addr, "vkGetDeviceProcAddr")?;
    let mut gipa: Option<Gipa> = None;
    let mut gdpa: Option<Gdpa> = None;
    let mut gpdpa: PFN_GetPhysicalDeviceProcAddr = None;
    let mut interface_version = 1;
    if let Some(negotiate) = library.symbol(&negotiate_name) {
        // SAFETY: the signature of vkNegotiateLoaderLayerInterfaceVersion.
        let negotiate: unsafe extern "system" fn(*mut VkNegotiateLayerInterface) -> VkResult =
            unsafe { std::mem::transmute(negotiate) };
        let mut request = VkNegotiateLayerInterface {
            sType: VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT,
            loaderLayerInterfaceVersion: CURRENT_LOADER_LAYER_INTERFACE_VERSION,
            ..Default::default()
        };
        // SAFETY: the layer's negotiate function with a valid, initialised request it may fill.
        let result = unsafe { negotiate(&mut request) };
        if result != VkResult::SUCCESS {
            return Err(format!("interface negotiation failed ({result:?})").into());
        }
        interface_version = request.loaderLayerInterfaceVersion;
        if !(MIN_SUPPORTED_LOADER_LAYER_INTERFACE_VERSION..=CURRENT_LOADER_LAYER_INTERFACE_VERSION).contains(&interface_version) {
            return Err(format!("negotiated an unsupported layer interface version {interface_version}").into());
        }
        gipa = request.pfnGetInstanceProcAddr;
        gdpa = request.pfnGetDeviceProcAddr;
        if interface_version >= 2 {
            gpdpa = request.pfnGetPhysicalDeviceProcAddr;
        }
    }
    // Older layers (and negotiating ones that left a pointer out): the exported functions.
    let exported = |name: &CStr| library.symbol(name);
    if gipa.is_none() {
        // SAFETY: the layer interface names this export's signature, vkGetInstanceProcAddr's: `Gipa`.
        gipa = exported(&gipa_name).or_else(|| exported(c"vkGetInstanceProcAddr")).map(|f| unsafe { std::mem::transmute(f) });
    }
    if gdpa.is_none() {
        // SAFETY: the layer interface names this export's signature, vkGetDeviceProcAddr's: `Gdpa`.
        gdpa = exported(&gdpa_name).or_else(|| exported(c"vkGetDeviceProcAddr")).map(|f| unsafe { std::mem::transmute(f) });
    }
    let gipa = gipa.ok_or_else(|| format!("{path} has no {} (missing symbol)", gipa_name.to_string_lossy()))?;
    Ok(LoadedLayer { gipa, gdpa, gpdpa, interface_version, _library: library })
}
