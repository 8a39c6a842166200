//! Drivers: load a manifest's library (shared while in use: see library_cache), negotiate the
//! interface version (0-7), and find its GetProcAddr functions.

use std::ffi::{c_char, CStr};
use std::sync::Arc;

use vk_generated::types::*;

use crate::debug::log::Level;
use crate::manifest::driver::DriverManifest;
use crate::platform::Library;
use crate::platform::elf::{self, ElfCheck};
use crate::platform::library_cache;

/// The newest driver interface this loader speaks.
pub const LOADER_ICD_INTERFACE_VERSION: u32 = 7;

pub type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
type Negotiate = unsafe extern "system" fn(*mut u32) -> VkResult;

/// A loaded, negotiated driver library.
pub struct Driver {
    pub manifest_path: String,
    pub library_path: String,
    pub manifest: DriverManifest,
    pub get_instance_proc_addr: Gipa,
    /// `vk_icdGetPhysicalDeviceProcAddr` (interface 4 and later): tells physical-device commands
    /// the loader does not know from device ones.
    pub get_physical_device_proc_addr: Option<Gipa>,
    /// The negotiated loader-driver interface version (surfaces depend on it from version 3).
    pub interface_version: u32,
    /// `None` for a driver the application handed over (`VK_LUNARG_direct_driver_loading`), and
    /// for a driver not loaded (see [`Driver::remembered`]).
    library: Option<Arc<Library>>,
    /// For a driver not loaded: what its `vkEnumerateInstanceVersion` said, as recorded.
    remembered_version: Option<Option<u32>>,
}

impl Driver {
    /// The driver's library, when it is loaded (not for a remembered driver or one the
    /// application handed over).
    pub fn library(&self) -> Option<&Arc<Library>> {
        self.library.as_ref()
    }

    /// A global-level function of the driver (`vkCreateInstance`, `vkEnumerateInstance*`).
    pub fn global(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: the driver's GetInstanceProcAddr with a NULL instance and a NUL-terminated name.
        unsafe { (self.get_instance_proc_addr)(VkInstance::NULL, name.as_ptr()) }
    }

    /// The instance API version the driver supports (1.0 when it lacks vkEnumerateInstanceVersion).
    pub fn instance_version(&self) -> u32 {
        self.reported_instance_version().unwrap_or(vk_generated::make_api_version(0, 1, 0, 0))
    }

    /// What the driver's vkEnumerateInstanceVersion says (1.0 when it fails); `None` when it has none.
    pub fn reported_instance_version(&self) -> Option<u32> {
        if let Some(version) = self.remembered_version {
            return version;
        }
        let f = self.global(c"vkEnumerateInstanceVersion")?;
        // SAFETY: the driver's GetInstanceProcAddr answered for this name, so `f` has the
        // signature of vkEnumerateInstanceVersion.
        let f: PFN_vkEnumerateInstanceVersion = unsafe { std::mem::transmute(f) };
        let mut version = 0;
        // SAFETY: vkEnumerateInstanceVersion with a valid pointer to one `u32`.
        match f.map(|f| unsafe { f(&mut version) }) {
            Some(VkResult::SUCCESS) => Some(version),
            _ => Some(vk_generated::make_api_version(0, 1, 0, 0)),
        }
    }
}

/// What loading a manifest's driver came to, short of an error.
pub enum Loaded {
    Driver(Driver),
    /// The library was already loaded through an earlier manifest.
    Duplicate,
    /// The library is for another architecture (a multilib install's other half): skipped
    /// quietly, not an error.
    OtherArchitecture(String),
}

/// Loads the driver of a manifest; `loaded` holds drivers already loaded by earlier manifests, so a
/// library reached through several manifests is loaded once.
pub fn load(manifest_path: &str, manifest: DriverManifest, loaded: &[Arc<Driver>]) -> Result<Loaded, String> {
    let path = manifest.library_path.clone();
    if loaded.iter().any(|d| d.library_path == path) {
        log!(Level::Driver, "{manifest_path}: library {path} already loaded through another manifest");
        return Ok(Loaded::Duplicate);
    }
    if let Some(arch) = &manifest.library_arch {
        let ours = if cfg!(target_pointer_width = "64") { "64" } else { "32" };
        if arch != ours {
            // The Khronos loader's words.
            return Ok(Loaded::OtherArchitecture(
                "loader_parse_icd_manifest: Driver library architecture doesn't match the current running architecture, \
                 skipping this driver"
                    .into(),
            ));
        }
    }
    // A library another call or instance holds is shared (see library_cache); the ELF check guards
    // only the first dlopen.
    let library = match library_cache::get(&path) {
        Some(library) => library,
        None => {
            if elf::names_the_file(&path) {
                match elf::check(&path) {
                    ElfCheck::Loadable => {}
                    ElfCheck::WrongArchitecture(why) => return Ok(Loaded::OtherArchitecture(format!("{path} is for another architecture ({why})"))),
                    ElfCheck::Corrupt(why) => return Err(format!("{path} cannot be loaded: {why}")),
                }
            }
            library_cache::open(&path)?
        }
    };
    // SAFETY: the driver interface names this export's signature: `Gipa`.
    let icd_gipa: Option<Gipa> = library.symbol(c"vk_icdGetInstanceProcAddr").map(|f| unsafe { std::mem::transmute(f) });
    // Interface 7 drivers may expose these only through vk_icdGetInstanceProcAddr(NULL, ...).
    // SAFETY: the driver's GetInstanceProcAddr with a NULL instance and a NUL-terminated name.
    let via_gipa = |name: &CStr| icd_gipa.and_then(|g| unsafe { g(VkInstance::NULL, name.as_ptr()) });
    let negotiate = library
        .symbol(c"vk_icdNegotiateLoaderICDInterfaceVersion")
        .or_else(|| via_gipa(c"vk_icdNegotiateLoaderICDInterfaceVersion"));
    let interface_version = match negotiate {
        Some(negotiate) => negotiate_version(negotiate)?,
        None if icd_gipa.is_some() => 1,
        None => 0,
    };
    let get_instance_proc_addr: Gipa = match icd_gipa {
        Some(g) => g,
        None => match library.symbol(c"vkGetInstanceProcAddr") {
            // SAFETY: a driver of interface 0 exports its GetInstanceProcAddr under the API's
            // name, with the API's signature: `Gipa`.
            Some(f) if interface_version == 0 => unsafe { std::mem::transmute::<unsafe extern "system" fn(), Gipa>(f) },
            _ => return Err("exports neither vk_icdGetInstanceProcAddr nor vkGetInstanceProcAddr".into()),
        },
    };
    let get_physical_device_proc_addr: Option<Gipa> = library
        .symbol(c"vk_icdGetPhysicalDeviceProcAddr")
        .or_else(|| via_gipa(c"vk_icdGetPhysicalDeviceProcAddr"))
        .filter(|_| interface_version >= 4)
        // SAFETY: the driver interface (4 and later) names this function's signature: `Gipa`.
        .map(|f| unsafe { std::mem::transmute(f) });
    log!(Level::Driver, "{manifest_path}: loaded {path}, driver interface version {interface_version}");
    Ok(Loaded::Driver(Driver {
        manifest_path: manifest_path.to_string(),
        library_path: path,
        manifest,
        get_instance_proc_addr,
        get_physical_device_proc_addr,
        interface_version,
        library: Some(library),
        remembered_version: None,
    }))
}

/// Runs `vk_icdNegotiateLoaderICDInterfaceVersion`; the version both sides speak.
fn negotiate_version(negotiate: unsafe extern "system" fn()) -> Result<u32, String> {
    // SAFETY: the driver interface names the negotiate function's signature: `Negotiate`.
    let negotiate: Negotiate = unsafe { std::mem::transmute(negotiate) };
    let mut version = LOADER_ICD_INTERFACE_VERSION;
    // SAFETY: a valid pointer to the version.
    let result = unsafe { negotiate(&mut version) };
    if result != VkResult::SUCCESS {
        return Err(format!("interface negotiation failed ({result:?})"));
    }
    Ok(version.min(LOADER_ICD_INTERFACE_VERSION))
}

/// A driver the application handed over through `VkDirectDriverLoadingInfoLUNARG` (`index` in
/// `pDrivers`): its `vk_icdGetInstanceProcAddr` must give the negotiate function (interface 7 or
/// later), `vkCreateInstance` and `vkEnumerateInstanceExtensionProperties`. The errors are the
/// Khronos loader's messages.
pub fn direct(index: usize, gipa: Gipa) -> Result<Driver, String> {
    // SAFETY: the driver's GetInstanceProcAddr with a NULL instance and a NUL-terminated name.
    let global = |name: &CStr| unsafe { gipa(VkInstance::NULL, name.as_ptr()) };
    let missing = |name: &str| {
        format!("loader_add_direct_driver: Could not get '{name}' from VkDirectDriverLoadingInfoLUNARG structure at index {index}, skipping.")
    };
    let negotiate = global(c"vk_icdNegotiateLoaderICDInterfaceVersion").ok_or_else(|| missing("vk_icdNegotiateLoaderICDInterfaceVersion"))?;
    let interface_version = negotiate_version(negotiate).unwrap_or(0);
    if interface_version < 7 {
        return Err(format!(
            "loader_add_direct_driver: VkDirectDriverLoadingInfoLUNARG structure at index {index} supports interface version \
             {interface_version}, which is incompatible with the Loader Driver Interface version that supports the \
             VK_LUNARG_direct_driver_loading extension, skipping."
        ));
    }
    global(c"vkCreateInstance").ok_or_else(|| missing("vkCreateInstance"))?;
    global(c"vkEnumerateInstanceExtensionProperties").ok_or_else(|| missing("vkEnumerateInstanceExtensionProperties"))?;
    log!(
        Level::InfoDriver,
        "loader_add_direct_driver: Adding driver found in index {index} of VkDirectDriverLoadingListLUNARG::pDrivers structure. \
         pfnGetInstanceProcAddr was set to {:p}",
        gipa as *const ()
    );
    Ok(Driver {
        manifest_path: format!("VkDirectDriverLoadingListLUNARG::pDrivers[{index}]"),
        library_path: format!("{:p}", gipa as *const ()),
        manifest: DriverManifest::default(),
        get_instance_proc_addr: gipa,
        get_physical_device_proc_addr: global(c"vk_icdGetPhysicalDeviceProcAddr")
            // SAFETY: the driver interface names this function's signature: `Gipa`.
            .map(|f| unsafe { std::mem::transmute::<unsafe extern "system" fn(), Gipa>(f) }),
        interface_version,
        library: None,
        remembered_version: None,
    })
}

impl Driver {
    /// A driver not loaded, as its driver-cache record describes it (a lazy driver): its
    /// functions are nowhere (a lazy driver's instance is the loader's until it is loaded).
    pub fn remembered(manifest_path: &str, manifest: &DriverManifest, interface_version: u32, instance_version: Option<u32>) -> Driver {
        /// Answers NULL to every name.
        ///
        /// # Safety
        /// None: no argument is read (`unsafe` to be a `Gipa`).
        unsafe extern "system" fn nothing(_: VkInstance, _: *const c_char) -> PFN_vkVoidFunction {
            None
        }
        Driver {
            manifest_path: manifest_path.to_string(),
            library_path: manifest.library_path.clone(),
            manifest: manifest.clone(),
            get_instance_proc_addr: nothing,
            get_physical_device_proc_addr: None,
            interface_version,
            library: None,
            remembered_version: Some(instance_version),
        }
    }
}
