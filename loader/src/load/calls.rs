//! A loaded driver's functions as safe calls: the one place that turns a slot of a driver's
//! dispatch table into a call and states what the call needs. Each view is made by an `unsafe fn`
//! whose contract is the handle's (a live instance, physical device or device of that driver,
//! with its table); its methods are then safe, each giving the driver only memory of its own
//! making (counts, arrays and output structures sized for what the driver is told). The calls
//! that pass on memory the application or a layer gave stay `unsafe`, with that memory's
//! requirements as their contract.

use std::ffi::{c_char, c_void, CStr};

use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable, TaggedStruct};

use crate::debug::log::{self, Level};
use crate::ffi;
use crate::load::driver::{Driver, Gipa};
use crate::load::layer::Gdpa;
use crate::given::allocator::Allocator;
use crate::given::surface::{Platform, SurfaceCreateInfo};

impl Driver {
    /// The instance extensions the driver supports (none when it cannot list them).
    pub fn instance_extensions(&self) -> Vec<VkExtensionProperties> {
        let Some(f) = self.global(c"vkEnumerateInstanceExtensionProperties") else { return Vec::new() };
        // SAFETY: the driver's GetInstanceProcAddr answered for this name, so `f` has the
        // signature of vkEnumerateInstanceExtensionProperties.
        let f: PFN_vkEnumerateInstanceExtensionProperties = unsafe { std::mem::transmute(f) };
        let Some(f) = f else { return Vec::new() };
        // SAFETY: no layer name; `query` passes a count and, when it is not NULL, an array of that
        // many structures.
        ffi::query(|count, out| unsafe { f(std::ptr::null(), count, out) }).unwrap_or_default()
    }
}

/// One driver instance's calls: its handle, its table of instance-level functions and its
/// driver's `vkGetInstanceProcAddr`.
#[derive(Clone, Copy)]
pub struct InstanceCalls<'a> {
    gipa: Gipa,
    table: &'a InstanceDispatchTable,
    handle: VkInstance,
}

/// The physical devices a driver instance listed (NULL handles left out).
pub struct Enumerated<'a> {
    pub devices: Vec<PhysicalDeviceCalls<'a>>,
    /// Whether the driver wrote NULL handles among those it counted.
    pub wrote_null: bool,
}

/// The `pNext` chains the application put on its `VkPhysicalDeviceGroupProperties`: the driver is
/// given the one of the application's structure it is about to fill, for the same group. Each
/// structure's `pNext` is read when its group is filled, never before: applications pass counts
/// larger than their arrays (the Khronos loader reads only the structures it fills, and its
/// suite relies on it), so a structure no group reaches is never touched.
pub struct GroupChains {
    structures: *const VkPhysicalDeviceGroupProperties,
    count: usize,
}

impl GroupChains {
    /// No chain on any group.
    pub fn none() -> GroupChains {
        GroupChains { structures: std::ptr::null(), count: 0 }
    }

    /// The chains of the application's `count` structures at `structures` (NULL: none).
    ///
    /// # Safety
    /// `structures` must be NULL or valid for reading the first `k` of its `count` structures'
    /// `pNext` for any `k` groups the drivers report (what the application may expect to be filled),
    /// each `pNext` NULL or a valid chain of structures extending `VkPhysicalDeviceGroupProperties`,
    /// writable by the drivers for as long as this lives.
    pub unsafe fn new(structures: *const VkPhysicalDeviceGroupProperties, count: usize) -> GroupChains {
        if structures.is_null() {
            return GroupChains::none();
        }
        GroupChains { structures, count }
    }

    /// The chains from the `first`-th structure on (the groups before it are another driver's).
    pub fn after(&self, first: usize) -> GroupChains {
        if first >= self.count {
            return GroupChains::none();
        }
        GroupChains { structures: self.structures.wrapping_add(first), count: self.count - first }
    }

    fn get(&self, index: usize) -> *mut c_void {
        if index >= self.count {
            return std::ptr::null_mut();
        }
        // SAFETY: `new`'s contract: the structures a group reaches are readable; only this one's
        // `pNext` field is read, when its group is about to be filled.
        unsafe { std::ptr::addr_of!((*self.structures.add(index)).pNext).read() }
    }
}

impl<'a> InstanceCalls<'a> {
    /// # Safety
    /// `handle` must be an instance live for `'a` whose instance-level functions are `table`'s
    /// (a driver's instance and the table its `vkGetInstanceProcAddr` gave for it, or a driver
    /// not loaded yet: the lazy front's table and handle), and `gipa` that driver's
    /// `vkGetInstanceProcAddr`.
    pub unsafe fn new(gipa: Gipa, table: &'a InstanceDispatchTable, handle: VkInstance) -> InstanceCalls<'a> {
        InstanceCalls { gipa, table, handle }
    }

    /// The physical device `handle` of this instance, with the instance's table.
    ///
    /// # Safety
    /// `handle` must be a physical device this instance listed (and still lists: a driver may
    /// free the handle of a device it removed).
    pub unsafe fn physical_device(self, handle: VkPhysicalDevice) -> PhysicalDeviceCalls<'a> {
        PhysicalDeviceCalls { table: self.table, handle }
    }

    /// `vkEnumeratePhysicalDevices`, both calls: none when the driver lacks the function.
    pub fn physical_devices(self) -> Result<Enumerated<'a>, VkResult> {
        let Some(enumerate) = self.table.vkEnumeratePhysicalDevices else {
            return Ok(Enumerated { devices: Vec::new(), wrote_null: false });
        };
        // SAFETY: the instance's own function with its live handle; `query` passes a count and,
        // when it is not NULL, an array of that many handles.
        let handles = ffi::query(|count, out| unsafe { enumerate(self.handle, count, out) })?;
        let wrote_null = handles.iter().any(|h| h.is_null());
        // SAFETY: handles the instance just listed.
        let devices = handles.into_iter().filter(|h| !h.is_null()).map(|h| unsafe { self.physical_device(h) }).collect();
        Ok(Enumerated { devices, wrote_null })
    }

    /// `vkEnumeratePhysicalDevices` asked for the count only: 0 when it fails or the driver lacks
    /// the function.
    pub fn physical_device_count(self) -> u32 {
        let Some(enumerate) = self.table.vkEnumeratePhysicalDevices else { return 0 };
        let mut count = 0u32;
        // SAFETY: the instance's own function with its live handle, a count and no array.
        match unsafe { enumerate(self.handle, &mut count, std::ptr::null_mut()) } {
            VkResult::SUCCESS => count,
            _ => 0,
        }
    }

    /// `vkEnumeratePhysicalDeviceGroups`, both calls, the `i`-th structure given `chains`'
    /// `i`-th `pNext`; `None` when the driver lacks the function. The members are the driver's
    /// handles, to compare with those it listed (not to call with: a group may name a device
    /// the driver listed no more).
    pub fn physical_device_groups(self, chains: &GroupChains) -> Option<Result<Vec<VkPhysicalDeviceGroupProperties>, VkResult>> {
        let enumerate = self.table.vkEnumeratePhysicalDeviceGroups?;
        // SAFETY: the instance's own function with its live handle; `query` passes a count and,
        // when it is not NULL, an array of that many structures (its own, each with its sType),
        // whose `pNext` is NULL or a chain the driver may write (`GroupChains`' contract).
        Some(ffi::query(|count, out: *mut VkPhysicalDeviceGroupProperties| unsafe {
            if !out.is_null() {
                for i in 0..*count as usize {
                    (*out.add(i)).pNext = chains.get(i);
                }
            }
            enumerate(self.handle, count, out)
        }))
    }

    /// The driver's `vkGetDeviceProcAddr`, as its `vkGetInstanceProcAddr` gives it for this
    /// instance.
    pub fn device_proc_addr(self) -> Option<Gdpa> {
        // SAFETY: the driver's vkGetInstanceProcAddr with its own live instance and a
        // NUL-terminated name.
        let f = unsafe { (self.gipa)(self.handle, c"vkGetDeviceProcAddr".as_ptr()) };
        // SAFETY: what it answers for this name has the signature of vkGetDeviceProcAddr.
        unsafe { std::mem::transmute::<PFN_vkVoidFunction, PFN_vkGetDeviceProcAddr>(f) }
    }

    /// The driver's `vkCreate*SurfaceKHR` for `info`'s platform: what it returned and the surface
    /// it wrote (NULL where it wrote none); `None` where the driver lacks the function (it leaves
    /// surfaces to the loader).
    pub fn create_surface(self, info: &SurfaceCreateInfo<'_>, allocator: Allocator<'_>) -> Option<(VkResult, VkSurfaceKHR)> {
        let (handle, allocator) = (self.handle, allocator.as_ptr());
        let mut out = VkSurfaceKHR::NULL;
        // SAFETY: the driver's live instance with its own function; a copy of the application's
        // create info whose window-system handles live as long as the surface and whose chain is
        // NULL or valid for the view's life (`SurfaceCreateInfo`); NULL or valid callbacks
        // (`Allocator`); a handle of ours to write.
        let result = unsafe {
            match info.platform() {
                Platform::Xcb(info) => self.table.vkCreateXcbSurfaceKHR.map(|f| f(handle, info, allocator, &mut out)),
                Platform::Xlib(info) => self.table.vkCreateXlibSurfaceKHR.map(|f| f(handle, info, allocator, &mut out)),
                Platform::Wayland(info) => self.table.vkCreateWaylandSurfaceKHR.map(|f| f(handle, info, allocator, &mut out)),
                Platform::Headless(info) => self.table.vkCreateHeadlessSurfaceEXT.map(|f| f(handle, info, allocator, &mut out)),
                Platform::Display(info) => self.table.vkCreateDisplayPlaneSurfaceKHR.map(|f| f(handle, info, allocator, &mut out)),
            }
        };
        result.map(|result| (result, out))
    }

    /// The driver's `vkDestroySurfaceKHR` for its own surface `own` (nothing for NULL).
    ///
    /// # Safety
    /// `own` must be NULL or a surface this instance made ([`create_surface`](Self::create_surface))
    /// that nothing destroyed and nothing uses afterwards; `allocator` compatible with the
    /// callbacks it was made with.
    pub unsafe fn destroy_surface(self, own: VkSurfaceKHR, allocator: Allocator<'_>) {
        if let (false, Some(destroy)) = (own.is_null(), self.table.vkDestroySurfaceKHR) {
            // SAFETY: the driver's live instance with its own function; the caller's promise for
            // `own`; NULL or valid callbacks (`Allocator`).
            unsafe { destroy(self.handle, own, allocator.as_ptr()) };
        }
    }

    /// `vkDestroyInstance`.
    ///
    /// # Safety
    /// `allocator` must be NULL or valid callbacks compatible with those the instance was created
    /// with; nothing calls the instance, its physical devices or their devices afterwards.
    pub unsafe fn destroy(self, allocator: *const VkAllocationCallbacks) {
        if let Some(destroy) = self.table.vkDestroyInstance {
            // SAFETY: the instance's own function with its live handle; the caller's promise for
            // `allocator` and for what comes after.
            unsafe { destroy(self.handle, allocator) };
        }
    }
}

/// One physical device with the table of its instance-level functions: a driver instance's, or
/// a layer chain's for the handle its top layer knows.
#[derive(Clone, Copy)]
pub struct PhysicalDeviceCalls<'a> {
    table: &'a InstanceDispatchTable,
    handle: VkPhysicalDevice,
}

/// The structures the loader reads through `vkGetPhysicalDeviceProperties2`: each one extends
/// `VkPhysicalDeviceProperties2`, so a driver may be given it in that structure's chain.
pub trait PropertiesExtension: TaggedStruct + Default + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! properties_extensions {
    ($($t:ty),*) => {
        $(
            impl sealed::Sealed for $t {}
            impl PropertiesExtension for $t {}
        )*
    };
}

properties_extensions!(VkPhysicalDevicePCIBusInfoPropertiesEXT, VkPhysicalDeviceDriverProperties, VkPhysicalDeviceIDProperties);

impl<'a> PhysicalDeviceCalls<'a> {
    /// # Safety
    /// `handle` must be a physical device live for `'a` whose instance-level functions are
    /// `table`'s: listed by the driver instance `table` belongs to, a lazy driver's placeholder
    /// with the lazy front's table, or what the top of a layer chain returned with that chain's
    /// table.
    pub unsafe fn new(table: &'a InstanceDispatchTable, handle: VkPhysicalDevice) -> PhysicalDeviceCalls<'a> {
        PhysicalDeviceCalls { table, handle }
    }

    pub fn handle(self) -> VkPhysicalDevice {
        self.handle
    }

    /// `vkGetPhysicalDeviceProperties` (all zeros when the driver lacks it).
    pub fn properties(self) -> VkPhysicalDeviceProperties {
        let mut properties = VkPhysicalDeviceProperties::default();
        if let Some(get) = self.table.vkGetPhysicalDeviceProperties {
            // SAFETY: the driver's function with its own live handle and a structure to fill.
            unsafe { get(self.handle, &mut properties) };
        }
        properties
    }

    /// One structure filled through `vkGetPhysicalDeviceProperties2` (alone in the chain);
    /// `None` when the driver lacks the function. A driver that does not know the structure
    /// leaves it as it was (zeros).
    pub fn properties2<T: PropertiesExtension>(self) -> Option<T> {
        let get2 = self.table.vkGetPhysicalDeviceProperties2?;
        let mut extension = T::default();
        let mut properties2 = VkPhysicalDeviceProperties2 { pNext: (&mut extension as *mut T).cast(), ..Default::default() };
        // SAFETY: the driver's function with its own live handle and a structure whose chain is
        // one structure extending it (`PropertiesExtension`), sType set, pNext NULL.
        unsafe { get2(self.handle, &mut properties2) };
        Some(extension)
    }

    /// The device's extensions (`vkEnumerateDeviceExtensionProperties` without a layer name,
    /// both calls); `VK_ERROR_INITIALIZATION_FAILED` when the driver lacks the function.
    pub fn extensions(self) -> Result<Vec<VkExtensionProperties>, VkResult> {
        let Some(enumerate) = self.table.vkEnumerateDeviceExtensionProperties else {
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        };
        // SAFETY: the driver's function with its own live handle and no layer name; `query`
        // passes a count and, when it is not NULL, an array of that many structures.
        ffi::query(|count, out| unsafe { enumerate(self.handle, std::ptr::null(), count, out) })
    }

    /// `vkEnumerateDeviceExtensionProperties` with the caller's arguments, as they are;
    /// `VK_ERROR_INITIALIZATION_FAILED` when the driver lacks the function.
    ///
    /// # Safety
    /// Vulkan's valid usage of the command for `layer_name`, `count` and `out`: NULL or a
    /// NUL-terminated string; valid for a `u32`; NULL or valid for writing `*count` structures.
    pub unsafe fn enumerate_extensions(self, layer_name: *const c_char, count: *mut u32, out: *mut VkExtensionProperties) -> VkResult {
        let Some(enumerate) = self.table.vkEnumerateDeviceExtensionProperties else {
            return VkResult::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the driver's function with its own live handle; the caller's promise for the rest.
        unsafe { enumerate(self.handle, layer_name, count, out) }
    }

    /// `vkCreateDevice`: the new device, with `gdpa` (the driver's `vkGetDeviceProcAddr`) to call
    /// it through. `VK_ERROR_INITIALIZATION_FAILED` when the driver lacks the function or
    /// returns `VK_SUCCESS` without a device.
    ///
    /// # Safety
    /// `info` must be a valid `VkDeviceCreateInfo` for this physical device (Vulkan's valid usage:
    /// its arrays valid for their counts, its names NUL-terminated, its chain valid, any device
    /// group naming this driver's handles); `allocator` NULL or valid callbacks; `gdpa` the
    /// driver's `vkGetDeviceProcAddr`.
    pub unsafe fn create_device(self, info: &VkDeviceCreateInfo, allocator: *const VkAllocationCallbacks, gdpa: Gdpa) -> Result<DeviceCalls, VkResult> {
        let Some(create) = self.table.vkCreateDevice else { return Err(VkResult::ERROR_INITIALIZATION_FAILED) };
        let mut device = VkDevice::NULL;
        // SAFETY: the driver's function with its own live handle and a place for one device; the
        // caller's promise for `info` and `allocator`.
        let result = unsafe { create(self.handle, info, allocator, &mut device) };
        if result != VkResult::SUCCESS {
            return Err(result);
        }
        if device.is_null() {
            log::write(Level::ErrorDriver, "vkCreateDevice: the driver returned no device (VK_SUCCESS with VK_NULL_HANDLE)");
            return Err(VkResult::ERROR_INITIALIZATION_FAILED);
        }
        // SAFETY: a device the driver just created, which its vkGetDeviceProcAddr answers for.
        Ok(unsafe { DeviceCalls::new(device, gdpa) })
    }
}

/// A device the level below the loader created (a driver, or with layers the top layer), with
/// the `vkGetDeviceProcAddr` that answers for it.
#[derive(Clone, Copy)]
pub struct DeviceCalls {
    handle: VkDevice,
    gdpa: Gdpa,
}

impl DeviceCalls {
    /// # Safety
    /// `handle` must be a live device `gdpa` answers for, and a dispatchable object whose first
    /// word is the loader's to read and set (the driver interface: `ICD_LOADER_MAGIC` until the
    /// loader sets its dispatch pointer there), for as long as this view is used.
    pub unsafe fn new(handle: VkDevice, gdpa: Gdpa) -> DeviceCalls {
        DeviceCalls { handle, gdpa }
    }

    pub fn handle(self) -> VkDevice {
        self.handle
    }

    pub fn gdpa(self) -> Gdpa {
        self.gdpa
    }

    /// Every device-level function, as `vkGetDeviceProcAddr` gives them.
    pub fn table(self) -> DeviceDispatchTable {
        // SAFETY: the live device's own vkGetDeviceProcAddr and a NUL-terminated name.
        DeviceDispatchTable::load(|name| unsafe { (self.gdpa)(self.handle, name.as_ptr()) })
    }

    /// `vkGetDeviceProcAddr` for one name.
    pub fn proc_addr(self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: as in `table`.
        unsafe { (self.gdpa)(self.handle, name.as_ptr()) }
    }

    /// Whether the device's first word is still `ICD_LOADER_MAGIC`, as the driver interface
    /// requires of a new dispatchable object.
    pub fn has_loader_magic(self) -> bool {
        // SAFETY: a live dispatchable object: its first word is an aligned, readable pointer.
        unsafe { vk_generated::layer_abi::valid_loader_magic_value(self.handle.0) }
    }

    /// Points the device's first word at `dispatch` (the loader's data for it).
    pub fn set_dispatch(self, dispatch: *const c_void) {
        // SAFETY: a live dispatchable object whose first word is the loader's to set (`new`'s contract).
        unsafe { *(self.handle.0 as *mut *const c_void) = dispatch };
    }

    /// `vkDestroyDevice`, found through `vkGetDeviceProcAddr`.
    ///
    /// # Safety
    /// `allocator` must be NULL or valid callbacks compatible with those the device was created
    /// with; nothing uses the device afterwards.
    pub unsafe fn destroy(self, allocator: *const VkAllocationCallbacks) {
        // SAFETY: what vkGetDeviceProcAddr answers for this name has the signature of vkDestroyDevice.
        let destroy = unsafe { std::mem::transmute::<PFN_vkVoidFunction, PFN_vkDestroyDevice>(self.proc_addr(c"vkDestroyDevice")) };
        if let Some(destroy) = destroy {
            // SAFETY: the device's own function with its live handle; the caller's promise for
            // `allocator` and for what comes after.
            unsafe { destroy(self.handle, allocator) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEVICES: [VkPhysicalDevice; 3] = [VkPhysicalDevice(0x10 as *mut c_void), VkPhysicalDevice::NULL, VkPhysicalDevice(0x30 as *mut c_void)];

    /// Counts three devices and writes a NULL handle among them, as a faulty driver may.
    ///
    /// # Safety
    /// `count` valid; `out` NULL or valid for `*count` handles.
    unsafe extern "system" fn enumerate(_: VkInstance, count: *mut u32, out: *mut VkPhysicalDevice) -> VkResult {
        // SAFETY: the contract.
        unsafe { crate::ffi::fill(&DEVICES, count, out) }
    }

    /// Two groups, each naming in `physicalDeviceCount` the address of the `pNext` it was given.
    ///
    /// # Safety
    /// `count` valid; `out` NULL or valid for `*count` structures.
    unsafe extern "system" fn groups(_: VkInstance, count: *mut u32, out: *mut VkPhysicalDeviceGroupProperties) -> VkResult {
        if out.is_null() {
            // SAFETY: the contract.
            unsafe { *count = 2 };
            return VkResult::SUCCESS;
        }
        // SAFETY: the contract.
        let out = unsafe { std::slice::from_raw_parts_mut(out, *count as usize) };
        for group in out {
            group.physicalDeviceCount = group.pNext as usize as u32;
        }
        VkResult::SUCCESS
    }

    /// A driver's NULL handles are left out and said; each group structure carries the chain of
    /// the application's structure it stands for, NULL past the application's array.
    #[test]
    fn listed_devices_skip_null_handles_and_groups_carry_the_applications_chains() {
        let table = InstanceDispatchTable { vkEnumeratePhysicalDevices: Some(enumerate), vkEnumeratePhysicalDeviceGroups: Some(groups), ..Default::default() };
        /// Answers no name.
        ///
        /// # Safety
        /// None: nothing is read.
        unsafe extern "system" fn gipa(_: VkInstance, _: *const c_char) -> PFN_vkVoidFunction {
            None
        }
        // SAFETY: the table's functions take any handle and read only what the loader gives them.
        let calls = unsafe { InstanceCalls::new(gipa, &table, VkInstance(std::ptr::dangling_mut())) };
        let listed = calls.physical_devices().unwrap();
        assert!(listed.wrote_null);
        assert_eq!(listed.devices.iter().map(|d| d.handle()).collect::<Vec<_>>(), [DEVICES[0], DEVICES[2]]);
        assert_eq!(calls.physical_device_count(), 3);
        assert!(calls.device_proc_addr().is_none());
        let structures: Vec<VkPhysicalDeviceGroupProperties> =
            [0x100, 0x200, 0x300].iter().map(|&p| VkPhysicalDeviceGroupProperties { pNext: p as *mut c_void, ..Default::default() }).collect();
        // SAFETY: three readable structures; their "chains" are never dereferenced by this table's function.
        let chains = unsafe { GroupChains::new(structures.as_ptr(), structures.len()) };
        let seen = |chains: &GroupChains| {
            let groups = calls.physical_device_groups(chains).unwrap().unwrap();
            groups.iter().map(|g| g.physicalDeviceCount).collect::<Vec<_>>()
        };
        assert_eq!(seen(&chains), [0x100, 0x200]);
        assert_eq!(seen(&chains.after(2)), [0x300, 0]);
        assert_eq!(seen(&GroupChains::none()), [0, 0]);
    }
}
