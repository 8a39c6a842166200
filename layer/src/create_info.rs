//! The create infos a layer hands down: [`InstanceCreateInfo`] and [`DeviceCreateInfo`] start as
//! the caller's and may be changed by `before_create_instance` / `before_create_device` (an
//! extension added or removed, a higher API version, a structure pushed onto `pNext`). The
//! copies of what changed live in the value, which the chassis keeps until the next level's
//! `vkCreate*` and the layer's `create_*` have returned.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString};
use std::marker::PhantomData;
use std::ops::Deref;

use vk_generated::types::{
    VkApplicationInfo, VkDeviceCreateInfo, VkInstanceCreateInfo, VkStructureType,
};
use vk_generated::TaggedStruct;

/// The start of every structure of a `pNext` chain.
#[repr(C)]
struct Header {
    s_type: VkStructureType,
    p_next: *const c_void,
}

/// An extension list, copied when first changed, and the structures pushed onto `pNext`.
#[derive(Default)]
struct Owned {
    /// The list handed down, once changed.
    extensions: Option<Vec<*const c_char>>,
    /// The names added (their pointers are in `extensions`).
    names: Vec<CString>,
    /// The structures pushed onto `pNext`, each boxed (so it never moves).
    chained: Vec<Box<dyn Any>>,
}

impl Owned {
    /// # Safety
    /// `list` holds `count` NUL-terminated names (or `count` is 0).
    unsafe fn names<'a>(list: *const *const c_char, count: u32) -> impl Iterator<Item = &'a CStr> {
        let slice: &[*const c_char] = if count == 0 || list.is_null() {
            &[]
        } else {
            // SAFETY: per the caller's contract, `count` pointers.
            unsafe { std::slice::from_raw_parts(list, count as usize) }
        };
        slice.iter().filter(|p| !p.is_null()).map(|&p| {
            // SAFETY: per the caller's contract, a NUL-terminated name.
            unsafe { CStr::from_ptr(p) }
        })
    }

    /// The list after `edit`, as (pointer, count).
    ///
    /// # Safety
    /// As [`Owned::names`].
    unsafe fn edit(
        &mut self,
        list: *const *const c_char,
        count: u32,
        edit: impl FnOnce(&mut Vec<*const c_char>, &mut Vec<CString>),
    ) -> (*const *const c_char, u32) {
        let current = self.extensions.get_or_insert_with(|| {
            // SAFETY: per the caller's contract.
            unsafe { Owned::names(list, count) }
                .map(CStr::as_ptr)
                .collect()
        });
        edit(current, &mut self.names);
        (current.as_ptr(), current.len() as u32)
    }

    fn push<T: TaggedStruct + 'static>(
        &mut self,
        mut value: T,
        head: *const c_void,
    ) -> *const c_void {
        let header = &mut value as *mut T as *mut Header;
        // SAFETY: a `TaggedStruct` starts with `sType` and `pNext`.
        unsafe { (*header).p_next = head };
        let boxed = Box::new(value);
        let pointer = &*boxed as *const T as *const c_void;
        self.chained.push(boxed);
        pointer
    }
}

fn add(list: &mut Vec<*const c_char>, names: &mut Vec<CString>, name: &CStr) {
    // SAFETY: the list holds valid names (the caller's or ours).
    if !list.iter().any(|&p| unsafe { CStr::from_ptr(p) } == name) {
        let owned = name.to_owned();
        list.push(owned.as_ptr());
        names.push(owned);
    }
}

fn remove(list: &mut Vec<*const c_char>, name: &CStr) {
    // SAFETY: as in `add`.
    list.retain(|&p| unsafe { CStr::from_ptr(p) } != name);
}

/// The `VkInstanceCreateInfo` this layer hands down; reads as the structure itself.
pub struct InstanceCreateInfo<'a> {
    info: VkInstanceCreateInfo,
    application: Option<Box<VkApplicationInfo>>,
    owned: Owned,
    _caller: PhantomData<&'a VkInstanceCreateInfo>,
}

impl<'a> InstanceCreateInfo<'a> {
    /// The caller's create info, unchanged so far.
    pub fn new(info: &'a VkInstanceCreateInfo) -> Self {
        InstanceCreateInfo {
            info: *info,
            application: None,
            owned: Owned::default(),
            _caller: PhantomData,
        }
    }

    /// The enabled extensions.
    pub fn extensions(&self) -> impl Iterator<Item = &CStr> {
        // SAFETY: the caller's list (valid per the API) or ours.
        unsafe {
            Owned::names(
                self.info.ppEnabledExtensionNames,
                self.info.enabledExtensionCount,
            )
        }
    }

    /// Enables `name` (once).
    pub fn add_extension(&mut self, name: &CStr) {
        let info = &mut self.info;
        // SAFETY: the list and count go together.
        let (list, count) = unsafe {
            self.owned.edit(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                |l, n| add(l, n, name),
            )
        };
        (info.ppEnabledExtensionNames, info.enabledExtensionCount) = (list, count);
    }

    /// Disables `name`.
    pub fn remove_extension(&mut self, name: &CStr) {
        let info = &mut self.info;
        // SAFETY: as in `add_extension`.
        let (list, count) = unsafe {
            self.owned.edit(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                |l, _| remove(l, name),
            )
        };
        (info.ppEnabledExtensionNames, info.enabledExtensionCount) = (list, count);
    }

    /// The application's API version (`VK_API_VERSION_1_0` without `pApplicationInfo`).
    pub fn api_version(&self) -> u32 {
        // SAFETY: the caller's application info (valid per the API) or ours.
        unsafe { self.info.pApplicationInfo.as_ref() }
            .map_or(vk_generated::make_api_version(0, 1, 0, 0), |a| a.apiVersion)
    }

    /// Asks for `version` (the application info copied, or made when there was none).
    pub fn set_api_version(&mut self, version: u32) {
        // SAFETY: as in `api_version`.
        let mut application = unsafe { self.info.pApplicationInfo.as_ref() }
            .copied()
            .unwrap_or_default();
        application.apiVersion = version;
        let boxed = Box::new(application);
        self.info.pApplicationInfo = &*boxed;
        self.application = Some(boxed);
    }

    /// Puts `value` at the head of the `pNext` chain (its own `pNext` is overwritten).
    pub fn push_next<T: TaggedStruct + 'static>(&mut self, value: T) {
        self.info.pNext = self.owned.push(value, self.info.pNext);
    }

    /// The structure handed down, valid while `self` lives.
    pub fn as_ptr(&self) -> *const VkInstanceCreateInfo {
        &self.info
    }
}

impl Deref for InstanceCreateInfo<'_> {
    type Target = VkInstanceCreateInfo;
    fn deref(&self) -> &VkInstanceCreateInfo {
        &self.info
    }
}

/// The `VkDeviceCreateInfo` this layer hands down; reads as the structure itself.
pub struct DeviceCreateInfo<'a> {
    info: VkDeviceCreateInfo,
    owned: Owned,
    _caller: PhantomData<&'a VkDeviceCreateInfo>,
}

impl<'a> DeviceCreateInfo<'a> {
    /// The caller's create info, unchanged so far.
    pub fn new(info: &'a VkDeviceCreateInfo) -> Self {
        DeviceCreateInfo {
            info: *info,
            owned: Owned::default(),
            _caller: PhantomData,
        }
    }

    /// The enabled extensions.
    pub fn extensions(&self) -> impl Iterator<Item = &CStr> {
        // SAFETY: as for the instance.
        unsafe {
            Owned::names(
                self.info.ppEnabledExtensionNames,
                self.info.enabledExtensionCount,
            )
        }
    }

    /// Enables `name` (once).
    pub fn add_extension(&mut self, name: &CStr) {
        let info = &mut self.info;
        // SAFETY: the list and count go together.
        let (list, count) = unsafe {
            self.owned.edit(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                |l, n| add(l, n, name),
            )
        };
        (info.ppEnabledExtensionNames, info.enabledExtensionCount) = (list, count);
    }

    /// Disables `name`.
    pub fn remove_extension(&mut self, name: &CStr) {
        let info = &mut self.info;
        // SAFETY: as in `add_extension`.
        let (list, count) = unsafe {
            self.owned.edit(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                |l, _| remove(l, name),
            )
        };
        (info.ppEnabledExtensionNames, info.enabledExtensionCount) = (list, count);
    }

    /// Puts `value` at the head of the `pNext` chain (a feature structure, say).
    pub fn push_next<T: TaggedStruct + 'static>(&mut self, value: T) {
        self.info.pNext = self.owned.push(value, self.info.pNext);
    }

    /// The structure handed down, valid while `self` lives.
    pub fn as_ptr(&self) -> *const VkDeviceCreateInfo {
        &self.info
    }
}

impl Deref for DeviceCreateInfo<'_> {
    type Target = VkDeviceCreateInfo;
    fn deref(&self) -> &VkDeviceCreateInfo {
        &self.info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk_generated::types::*;

    fn names(info: &InstanceCreateInfo) -> Vec<String> {
        info.extensions()
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn extensions_added_once_and_removed_the_callers_list_untouched() {
        let caller = [c"VK_KHR_surface".as_ptr(), c"VK_EXT_debug_utils".as_ptr()];
        let original = VkInstanceCreateInfo {
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: caller.as_ptr(),
            ..Default::default()
        };
        let mut info = InstanceCreateInfo::new(&original);
        info.add_extension(c"VK_EXT_layer_settings");
        info.add_extension(c"VK_EXT_layer_settings");
        info.remove_extension(c"VK_KHR_surface");
        for i in 0..20 {
            // Growth moves the list: the pointer handed down follows it.
            info.add_extension(&CString::new(format!("VK_TEST_{i}")).unwrap());
        }
        let got = names(&info);
        assert_eq!(&got[..2], ["VK_EXT_debug_utils", "VK_EXT_layer_settings"]);
        assert_eq!(got.len(), 22);
        assert_eq!(info.enabledExtensionCount, 22);
        assert_eq!(original.enabledExtensionCount, 2);
        // SAFETY: a C string literal of the caller's list.
        assert_eq!(unsafe { CStr::from_ptr(caller[0]) }, c"VK_KHR_surface");
    }

    #[test]
    fn api_version_raised_with_or_without_application_info() {
        let original = VkInstanceCreateInfo::default();
        let mut info = InstanceCreateInfo::new(&original);
        assert_eq!(
            info.api_version(),
            vk_generated::make_api_version(0, 1, 0, 0)
        );
        info.set_api_version(vk_generated::make_api_version(0, 1, 3, 0));
        assert_eq!(
            info.api_version(),
            vk_generated::make_api_version(0, 1, 3, 0)
        );
        assert!(original.pApplicationInfo.is_null());
        let app = VkApplicationInfo {
            apiVersion: vk_generated::make_api_version(0, 1, 1, 0),
            applicationVersion: 7,
            ..Default::default()
        };
        let original = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            ..Default::default()
        };
        let mut info = InstanceCreateInfo::new(&original);
        info.set_api_version(vk_generated::make_api_version(0, 1, 2, 0));
        // SAFETY: the application info copied into `info`, alive as long as it.
        let sent = unsafe { &*info.pApplicationInfo };
        assert_eq!(
            (sent.apiVersion, sent.applicationVersion),
            (vk_generated::make_api_version(0, 1, 2, 0), 7)
        );
        assert_eq!(app.apiVersion, vk_generated::make_api_version(0, 1, 1, 0));
    }

    #[test]
    fn pushed_structures_lead_the_chain() {
        let tail = VkValidationFeaturesEXT::default();
        let original = VkDeviceCreateInfo {
            pNext: &tail as *const _ as *const c_void,
            ..Default::default()
        };
        let mut info = DeviceCreateInfo::new(&original);
        info.push_next(VkPhysicalDeviceFeatures2::default());
        info.push_next(VkPhysicalDeviceVulkan12Features {
            bufferDeviceAddress: 1,
            ..Default::default()
        });
        // SAFETY: the chain's head is the structure pushed last, boxed in `info`.
        let first = unsafe { &*(info.pNext as *const VkPhysicalDeviceVulkan12Features) };
        assert_eq!(
            (first.sType, first.bufferDeviceAddress),
            (VkStructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, 1)
        );
        // SAFETY: next comes the structure pushed first, boxed in `info`.
        let second = unsafe { &*(first.pNext as *const VkPhysicalDeviceFeatures2) };
        assert_eq!(second.sType, VkStructureType::PHYSICAL_DEVICE_FEATURES_2);
        assert_eq!(
            second.pNext as *const c_void,
            &tail as *const _ as *const c_void
        );
        info.add_extension(c"VK_KHR_swapchain");
        assert_eq!(info.extensions().collect::<Vec<_>>(), [c"VK_KHR_swapchain"]);
    }
}
