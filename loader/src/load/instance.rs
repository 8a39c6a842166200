//! A loaded driver's instance: created with the extensions it supports and an API version it
//! accepts, and its table of instance-level functions checked for what every driver must have.
//! Used when an instance is created and when a lazy driver is loaded later.

use std::ffi::{c_char, CStr};

use vk_generated::lookup::ExtensionSet;
use vk_generated::types::*;
use vk_generated::{DispatchTable, InstanceDispatchTable};

use crate::debug::log::Level;
use crate::ffi::name_of;
use crate::given::allocator::Allocator;
use crate::given::instance_create_info::InstanceCreateInfo;
use crate::load::calls::{InstanceCalls, PhysicalDeviceCalls};
use crate::load::driver::{Driver, Gipa};
use crate::load::fixed_queries::FixedQueries;
use crate::loader_abi::InstanceDispatch;

/// A driver's instance just created, with the table of its instance-level functions, which
/// nothing else uses until it is handed over ([`into_parts`](Self::into_parts)) or destroyed.
pub struct NewDriverInstance {
    handle: VkInstance,
    table: Box<InstanceDispatch>,
    gipa: Gipa,
}

impl NewDriverInstance {
    /// The instance's calls.
    pub fn calls(&self) -> InstanceCalls<'_> {
        // SAFETY: the driver's live instance, the table its vkGetInstanceProcAddr gave for it and
        // that function, all owned by `self`.
        unsafe { InstanceCalls::new(self.gipa, &self.table, self.handle) }
    }

    /// `vkDestroyInstance`: nothing can use the instance afterwards (`self` is gone).
    pub fn destroy(self, allocator: Allocator<'_>) {
        // SAFETY: the live instance, used by nothing else; the callbacks it was created with.
        unsafe { self.calls().destroy(allocator.as_ptr()) };
    }

    /// The handle and table, for the loader's object that keeps them from now on.
    pub fn into_parts(self) -> (VkInstance, Box<InstanceDispatch>) {
        (self.handle, self.table)
    }
}

impl NewDriverInstance {
    /// The instance as a lazy driver keeps it once loaded: `pick` chooses among the physical
    /// devices it lists those to keep, by index, in the order wanted (an error: the instance is
    /// given back with it); `route` changes slots of the table the loader calls it through (the
    /// driver's own table is kept beside it).
    pub fn into_live(
        self,
        pick: impl FnOnce(&[PhysicalDeviceCalls<'_>]) -> Result<Vec<usize>, String>,
        route: impl FnOnce(&mut InstanceDispatchTable),
    ) -> Result<LiveInstance, (NewDriverInstance, String)> {
        let calls = self.calls();
        let picked = {
            let listed = calls.physical_devices().map(|listed| listed.devices).unwrap_or_default();
            pick(&listed).map(|picked| picked.iter().filter_map(|&i| listed.get(i)).map(|d| d.handle()).collect::<Vec<_>>())
        };
        let devices = match picked {
            Ok(devices) => devices,
            Err(why) => return Err((self, why)),
        };
        let gdpa = calls.device_proc_addr();
        let NewDriverInstance { handle, mut table, .. } = self;
        let own = table.table;
        route(&mut table.table);
        Ok(LiveInstance { handle, table, own, devices, gdpa })
    }
}

/// A lazy driver's instance once loaded: its handle, the table the loader calls it through (the
/// driver's, some slots routed to the loader), the driver's own table, the physical devices kept
/// of those it listed and its `vkGetDeviceProcAddr`. The instance lives until the loader's
/// instance that keeps this destroys it, after which nothing calls it.
pub struct LiveInstance {
    handle: VkInstance,
    table: Box<InstanceDispatch>,
    own: InstanceDispatchTable,
    devices: Vec<VkPhysicalDevice>,
    gdpa: PFN_vkGetDeviceProcAddr,
}

// SAFETY: handles and function pointers: a driver's instance and physical devices are used from
// any thread (Vulkan's external synchronization is the callers' to keep, as for the application's
// own handles).
unsafe impl Send for LiveInstance {}
// SAFETY: as for `Send`; nothing in it changes after it is made.
unsafe impl Sync for LiveInstance {}

impl LiveInstance {
    pub fn handle(&self) -> VkInstance {
        self.handle
    }

    /// The table the loader calls the instance through.
    pub fn table(&self) -> &InstanceDispatch {
        &self.table
    }

    /// The driver's own functions.
    pub fn own_table(&self) -> &InstanceDispatchTable {
        &self.own
    }

    /// The physical devices kept, in the order `into_live`'s `pick` gave.
    pub fn devices(&self) -> &[VkPhysicalDevice] {
        &self.devices
    }

    pub fn gdpa(&self) -> PFN_vkGetDeviceProcAddr {
        self.gdpa
    }

    /// Kept device `index`'s fixed queries, through the driver's own table.
    pub fn queries(&self, index: usize) -> Option<FixedQueries<'_>> {
        let device = *self.devices.get(index)?;
        // SAFETY: a physical device the instance listed (`into_live`), live with it, which lives
        // while `self` is used (see the type).
        Some(unsafe { FixedQueries::new(&self.own, device) })
    }
}

/// The Vulkan 1.0 instance-level commands every driver must have: the loader calls them without
/// checking (`vkEnumerateDeviceLayerProperties`, deprecated, is not among them).
const REQUIRED_DRIVER_COMMANDS: &[u16] = {
    use vk_generated::command_id::*;
    &[
        vkDestroyInstance,
        vkEnumeratePhysicalDevices,
        vkGetPhysicalDeviceFeatures,
        vkGetPhysicalDeviceFormatProperties,
        vkGetPhysicalDeviceImageFormatProperties,
        vkGetPhysicalDeviceProperties,
        vkGetPhysicalDeviceQueueFamilyProperties,
        vkGetPhysicalDeviceMemoryProperties,
        vkGetPhysicalDeviceSparseImageFormatProperties,
        vkCreateDevice,
        vkEnumerateDeviceExtensionProperties,
    ]
};

/// A driver instance's table of instance-level functions; a driver lacking one of the required
/// commands (or `vkGetDeviceProcAddr`) is unusable: its instance is destroyed and it is skipped.
///
/// # Safety
/// `handle` must be a live instance `driver` created, not used by anything else until this
/// returns (it is destroyed on error), and `allocator` NULL or the callbacks it was created with.
unsafe fn driver_table(driver: &Driver, handle: VkInstance, allocator: *const VkAllocationCallbacks) -> Result<Box<InstanceDispatch>, String> {
    let gipa = driver.get_instance_proc_addr;
    // SAFETY: the driver's GetInstanceProcAddr with its own live instance and a NUL-terminated name.
    let proc_addr = |name: &CStr| unsafe { gipa(handle, name.as_ptr()) };
    let table = InstanceDispatch::new(InstanceDispatchTable::load(proc_addr));
    let slots = table.table.slots();
    let missing = REQUIRED_DRIVER_COMMANDS
        .iter()
        .map(|&id| &vk_generated::COMMANDS[id as usize])
        .find(|command| slots[command.slot as usize].is_none())
        .map(|command| command.name())
        .or_else(|| proc_addr(c"vkGetDeviceProcAddr").is_none().then_some(c"vkGetDeviceProcAddr"));
    let Some(missing) = missing else {
        return Ok(table);
    };
    log!(Level::Warn, "Unable to load {} from ICD {}", missing.to_string_lossy(), driver.library_path);
    if let Some(destroy) = table.table.vkDestroyInstance {
        // SAFETY: the driver's vkDestroyInstance on its own instance, which nothing else uses, with
        // the allocator it was created with (the caller's contract).
        unsafe { destroy(handle, allocator) };
    }
    Err(format!("it lacks {}, which every driver must have", missing.to_string_lossy()))
}

/// The instance version the driver speaks, with the Khronos loader's warning when its manifest
/// promised more.
fn driver_instance_version(driver: &Driver) -> u32 {
    let version_1_0 = vk_generated::make_api_version(0, 1, 0, 0);
    let reported = driver.reported_instance_version();
    let promised = driver.manifest.api_version.is_some_and(|v| v >= vk_generated::make_api_version(0, 1, 1, 0));
    let path = &driver.library_path;
    match reported {
        None if promised => log!(
            Level::WarnDriver,
            "terminator_CreateInstance: Manifest ICD for \"{path}\" contained a 1.1 or greater API version, but does not support \
             vkEnumerateInstanceVersion, treating as a 1.0 ICD"
        ),
        Some(v) if promised && vk_generated::api_version_major_minor(v) == (1, 0) => log!(
            Level::WarnDriver,
            "terminator_CreateInstance: Manifest ICD for \"{path}\" contained a 1.1 or greater API version, but \
             vkEnumerateInstanceVersion returned 1.0, treating as a 1.0 ICD"
        ),
        _ => {}
    }
    reported.unwrap_or(version_1_0)
}

/// Creates one driver's instance with the extensions it supports and an API version it accepts,
/// and its table (a driver lacking a required command has its instance destroyed and is
/// refused); returns them and the extensions it was given. What the application passed is not
/// written: the driver gets a copy with its own extensions and version.
pub fn create_driver_instance(
    driver: &Driver,
    supported: &[VkExtensionProperties],
    info: InstanceCreateInfo<'_>,
    requested: &[&CStr],
    api_version: u32,
    allocator: Allocator<'_>,
) -> Result<(NewDriverInstance, ExtensionSet), String> {
    let (handle, extensions) = create_instance(driver, supported, info, requested, api_version, allocator)?;
    // SAFETY: the instance the driver just created, used by nothing else; the callbacks it was
    // created with.
    let table = unsafe { driver_table(driver, handle, allocator.as_ptr()) }?;
    Ok((NewDriverInstance { handle, table, gipa: driver.get_instance_proc_addr }, extensions))
}

/// The driver's `vkCreateInstance` for [`create_driver_instance`].
fn create_instance(
    driver: &Driver,
    supported: &[VkExtensionProperties],
    info: InstanceCreateInfo<'_>,
    requested: &[&CStr],
    api_version: u32,
    allocator: Allocator<'_>,
) -> Result<(VkInstance, ExtensionSet), String> {
    let Some(create) = driver.global(c"vkCreateInstance") else {
        return Err("no vkCreateInstance".into());
    };
    // SAFETY: the driver's GetInstanceProcAddr answered for this name, so the function has the
    // signature of vkCreateInstance.
    let create: PFN_vkCreateInstance = unsafe { std::mem::transmute(create) };
    let given = given_extensions(driver, |name| supported.iter().any(|p| name_of(p) == name.to_bytes()), requested, api_version);
    let driver_version = driver_instance_version(driver);
    let extensions: Vec<*const c_char> = given.iter().map(|e| e.as_ptr()).collect();
    let mut app_info = info.application_info().copied();
    // A 1.0-only driver must be given apiVersion 1.0.
    if let Some(app) = app_info.as_mut() {
        if vk_generated::api_version_major_minor(driver_version) == (1, 0) && api_version > driver_version {
            app.apiVersion = vk_generated::make_api_version(0, 1, 0, 0);
        }
    }
    let mut driver_info = *info.raw();
    driver_info.pApplicationInfo = app_info.as_ref().map_or(std::ptr::null(), |a| a as *const _);
    driver_info.enabledExtensionCount = extensions.len() as u32;
    driver_info.ppEnabledExtensionNames = extensions.as_ptr();
    driver_info.enabledLayerCount = 0;
    driver_info.ppEnabledLayerNames = std::ptr::null();
    // Portability enumeration is the loader's business unless the driver has the extension too.
    if !given.contains(&c"VK_KHR_portability_enumeration") {
        driver_info.flags = VkInstanceCreateFlags(info.raw().flags.0 & !VkInstanceCreateFlags::ENUMERATE_PORTABILITY_BIT_KHR.0);
    }
    let mut handle = VkInstance::NULL;
    // SAFETY: `driver_info` is the caller's valid create info (`InstanceCreateInfo`) with pointers
    // to this function's locals (`app_info`, `extensions`, whose names `requested` keeps alive) put
    // in; `allocator` is NULL or valid (`Allocator`); `handle` is a place for one instance.
    let result = create.map_or(VkResult::ERROR_INITIALIZATION_FAILED, |f| unsafe { f(&driver_info, allocator.as_ptr(), &mut handle) });
    if result != VkResult::SUCCESS {
        return Err(format!("its vkCreateInstance returned {result:?}"));
    }
    if handle.is_null() {
        return Err("its vkCreateInstance returned no instance (VK_SUCCESS with VK_NULL_HANDLE)".into());
    }
    Ok((handle, extension_set(&given)))
}

/// The instance extensions a driver is given: those of the application's it supports, and
/// `VK_KHR_get_physical_device_properties2` where that is not core (physical devices are ordered
/// by their PCI address, read through `vkGetPhysicalDeviceProperties2`).
pub fn given_extensions<'a>(driver: &Driver, supports: impl Fn(&CStr) -> bool, requested: &[&'a CStr], api_version: u32) -> Vec<&'a CStr> {
    let mut given: Vec<&CStr> = requested.iter().copied().filter(|e| supports(e)).collect();
    let driver_version = driver.instance_version();
    let properties2 = c"VK_KHR_get_physical_device_properties2";
    let core_properties2 = api_version >= vk_generated::make_api_version(0, 1, 1, 0) && driver_version >= vk_generated::make_api_version(0, 1, 1, 0);
    if !core_properties2 && supports(properties2) && !given.contains(&properties2) {
        given.push(properties2);
    }
    given
}

pub fn extension_set(names: &[&CStr]) -> ExtensionSet {
    let mut set = ExtensionSet::new();
    for ext in names {
        set.insert_name(ext.to_bytes());
    }
    set
}
