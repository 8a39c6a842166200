//! The loader's interfaces to layers and drivers: the structures of `vk_layer.h` and `vk_icd.h`
//! that the registry (`vk.xml`) does not describe, written by hand once, ABI-exact.
//!
//! Names are the C names. C enums are `#[repr(transparent)]` newtypes with associated constants,
//! like the generated ones (`VkLayerFunction::LAYER_LINK_INFO`), so unknown values are fine.
//! C's anonymous union and struct members get names here: `VkLayerInstanceCreateInfo::u` is a
//! [`VkLayerInstanceCreateInfoUnion`], its `layerDevice` a [`VkLayerInstanceCreateInfoLayerDevice`].
//! Only the Linux surfaces of `vk_icd.h` are defined. `generated/tests/layer_abi.rs` compares every
//! layout and value here with the C headers.

use core::ffi::{c_char, c_void};

use crate::types::{
    wl_display, wl_surface, xcb_connection_t, xcb_window_t, Display, PFN_vkDestroyDevice,
    PFN_vkGetDeviceProcAddr, PFN_vkGetInstanceProcAddr, PFN_vkVoidFunction, VkAllocationCallbacks,
    VkDevice, VkDeviceCreateInfo, VkDisplayModeKHR, VkDisplayPlaneAlphaFlagBitsKHR,
    VkExtensionProperties, VkExtent2D, VkFlags, VkInstance, VkLayerProperties, VkPhysicalDevice,
    VkResult, VkStructureType, VkSurfaceTransformFlagBitsKHR, Window,
};

/// A C enum of `vk_layer.h` / `vk_icd.h`: a transparent `i32` newtype with one associated constant
/// per value, `name()` and a `Debug` that prints the C name.
macro_rules! c_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $value:literal => $cname:literal,)* }) => {
        $(#[$doc])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub i32);
        impl $name {
            $(
                #[doc = concat!("`", $cname, "`")]
                pub const $variant: Self = Self($value);
            )*
            /// The C name of this value, if the header defines it.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $(Self::$variant => Some($cname),)*
                    _ => None,
                }
            }
        }
        enum_debug!($name);
    };
}

// ------------------------------------------------------------------------------------------------
// vk_layer.h: loader <-> layer negotiation
// ------------------------------------------------------------------------------------------------

/// `CURRENT_LOADER_LAYER_INTERFACE_VERSION`: the newest loader-layer interface (2 adds
/// `vk_layerGetPhysicalDeviceProcAddr` and `vkNegotiateLoaderLayerInterfaceVersion`).
pub const CURRENT_LOADER_LAYER_INTERFACE_VERSION: u32 = 2;
/// `MIN_SUPPORTED_LOADER_LAYER_INTERFACE_VERSION`: the oldest loader-layer interface a loader accepts.
pub const MIN_SUPPORTED_LOADER_LAYER_INTERFACE_VERSION: u32 = 1;
/// `VK_CURRENT_CHAIN_VERSION`: the `VkChainHeader::version` of the pre-instance chains.
pub const VK_CURRENT_CHAIN_VERSION: u32 = 1;
/// `MAX_NUM_UNKNOWN_EXTS`: how many unknown commands the loader's dispatch tables have room for.
pub const MAX_NUM_UNKNOWN_EXTS: u32 = 250;

/// `PFN_GetPhysicalDeviceProcAddr`: a layer's or driver's `vk_*GetPhysicalDeviceProcAddr`, which
/// returns physical-device commands the loader does not know (NULL for anything else).
pub type PFN_GetPhysicalDeviceProcAddr = Option<
    unsafe extern "system" fn(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction,
>;

c_enum! {
    /// `VkNegotiateLayerStructType`: the `sType` of [`VkNegotiateLayerInterface`].
    VkNegotiateLayerStructType {
        LAYER_NEGOTIATE_UNINTIALIZED = 0 => "LAYER_NEGOTIATE_UNINTIALIZED",
        LAYER_NEGOTIATE_INTERFACE_STRUCT = 1 => "LAYER_NEGOTIATE_INTERFACE_STRUCT",
    }
}

/// `VkNegotiateLayerInterface`: passed to a layer's `vkNegotiateLoaderLayerInterfaceVersion`; the
/// loader fills `sType` and its version, the layer lowers the version and fills its entry points.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkNegotiateLayerInterface {
    /// `VkNegotiateLayerStructType sType`: `LAYER_NEGOTIATE_INTERFACE_STRUCT`.
    pub sType: VkNegotiateLayerStructType,
    /// `void *pNext`
    pub pNext: *mut c_void,
    /// `uint32_t loaderLayerInterfaceVersion`: in, the loader's version; out, the agreed one.
    pub loaderLayerInterfaceVersion: u32,
    /// `PFN_vkGetInstanceProcAddr pfnGetInstanceProcAddr`
    pub pfnGetInstanceProcAddr: PFN_vkGetInstanceProcAddr,
    /// `PFN_vkGetDeviceProcAddr pfnGetDeviceProcAddr`
    pub pfnGetDeviceProcAddr: PFN_vkGetDeviceProcAddr,
    /// `PFN_GetPhysicalDeviceProcAddr pfnGetPhysicalDeviceProcAddr`
    pub pfnGetPhysicalDeviceProcAddr: PFN_GetPhysicalDeviceProcAddr,
}
zeroed_default!(VkNegotiateLayerInterface);

/// `PFN_vkNegotiateLoaderLayerInterfaceVersion`: a layer's negotiation entry point.
pub type PFN_vkNegotiateLoaderLayerInterfaceVersion =
    Option<unsafe extern "system" fn(pVersionStruct: *mut VkNegotiateLayerInterface) -> VkResult>;

/// `PFN_PhysDevExt`: the shape the loader calls an unknown physical-device command through.
pub type PFN_PhysDevExt =
    Option<unsafe extern "system" fn(phys_device: VkPhysicalDevice) -> VkResult>;

// ------------------------------------------------------------------------------------------------
// vk_layer.h: vkCreateInstance / vkCreateDevice chain information
// ------------------------------------------------------------------------------------------------

c_enum! {
    /// `VkLayerFunction`: what the `u` of a [`VkLayerInstanceCreateInfo`] or
    /// [`VkLayerDeviceCreateInfo`] holds.
    VkLayerFunction {
        LAYER_LINK_INFO = 0 => "VK_LAYER_LINK_INFO",
        LOADER_DATA_CALLBACK = 1 => "VK_LOADER_DATA_CALLBACK",
        LOADER_LAYER_CREATE_DEVICE_CALLBACK = 2 => "VK_LOADER_LAYER_CREATE_DEVICE_CALLBACK",
        LOADER_FEATURES = 3 => "VK_LOADER_FEATURES",
    }
}

/// `VkLayerInstanceLink`: one link of the instance chain, for the layer below the current one.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerInstanceLink {
    /// `struct VkLayerInstanceLink_ *pNext`: the link for the layer after the next one.
    pub pNext: *mut VkLayerInstanceLink,
    /// `PFN_vkGetInstanceProcAddr pfnNextGetInstanceProcAddr`
    pub pfnNextGetInstanceProcAddr: PFN_vkGetInstanceProcAddr,
    /// `PFN_GetPhysicalDeviceProcAddr pfnNextGetPhysicalDeviceProcAddr`
    pub pfnNextGetPhysicalDeviceProcAddr: PFN_GetPhysicalDeviceProcAddr,
}
zeroed_default!(VkLayerInstanceLink);

/// `VkLayerDeviceInfo`: what the loader passes down about its device at the end of the chain.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerDeviceInfo {
    /// `void *device_info`
    pub device_info: *mut c_void,
    /// `PFN_vkGetInstanceProcAddr pfnNextGetInstanceProcAddr`
    pub pfnNextGetInstanceProcAddr: PFN_vkGetInstanceProcAddr,
}
zeroed_default!(VkLayerDeviceInfo);

/// `PFN_vkSetInstanceLoaderData`: gives an instance-level dispatchable object a layer created the
/// loader's dispatch pointer.
pub type PFN_vkSetInstanceLoaderData =
    Option<unsafe extern "system" fn(instance: VkInstance, object: *mut c_void) -> VkResult>;
/// `PFN_vkSetDeviceLoaderData`: gives a device-level dispatchable object a layer created (a queue,
/// a command buffer) the loader's dispatch pointer.
pub type PFN_vkSetDeviceLoaderData =
    Option<unsafe extern "system" fn(device: VkDevice, object: *mut c_void) -> VkResult>;
/// `PFN_vkLayerCreateDevice`: lets a layer create a device through the loader, with its own
/// chain (`VK_LOADER_LAYER_CREATE_DEVICE_CALLBACK`).
pub type PFN_vkLayerCreateDevice = Option<
    unsafe extern "system" fn(
        instance: VkInstance,
        physicalDevice: VkPhysicalDevice,
        pCreateInfo: *const VkDeviceCreateInfo,
        pAllocator: *const VkAllocationCallbacks,
        pDevice: *mut VkDevice,
        layerGIPA: PFN_vkGetInstanceProcAddr,
        nextGDPA: *mut PFN_vkGetDeviceProcAddr,
    ) -> VkResult,
>;
/// `PFN_vkLayerDestroyDevice`: destroys a device made through [`PFN_vkLayerCreateDevice`].
pub type PFN_vkLayerDestroyDevice = Option<
    unsafe extern "system" fn(
        physicalDevice: VkDevice,
        pAllocator: *const VkAllocationCallbacks,
        destroyFunction: PFN_vkDestroyDevice,
    ),
>;

/// `VkLoaderFeatureFlags`: features of the loader, passed with `VK_LOADER_FEATURES`.
pub type VkLoaderFeatureFlags = VkFlags;
/// `VK_LOADER_FEATURE_PHYSICAL_DEVICE_SORTING`: the loader sorts physical devices.
pub const VK_LOADER_FEATURE_PHYSICAL_DEVICE_SORTING: VkLoaderFeatureFlags = 0x0000_0001;

/// The anonymous `layerDevice` struct inside `VkLayerInstanceCreateInfo::u`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerInstanceCreateInfoLayerDevice {
    /// `PFN_vkLayerCreateDevice pfnLayerCreateDevice`
    pub pfnLayerCreateDevice: PFN_vkLayerCreateDevice,
    /// `PFN_vkLayerDestroyDevice pfnLayerDestroyDevice`
    pub pfnLayerDestroyDevice: PFN_vkLayerDestroyDevice,
}
zeroed_default!(VkLayerInstanceCreateInfoLayerDevice);

/// The anonymous union `VkLayerInstanceCreateInfo::u`; `function` says which member is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union VkLayerInstanceCreateInfoUnion {
    /// `VkLayerInstanceLink *pLayerInfo` (`VK_LAYER_LINK_INFO`)
    pub pLayerInfo: *mut VkLayerInstanceLink,
    /// `PFN_vkSetInstanceLoaderData pfnSetInstanceLoaderData` (`VK_LOADER_DATA_CALLBACK`)
    pub pfnSetInstanceLoaderData: PFN_vkSetInstanceLoaderData,
    /// `struct { ... } layerDevice` (`VK_LOADER_LAYER_CREATE_DEVICE_CALLBACK`)
    pub layerDevice: VkLayerInstanceCreateInfoLayerDevice,
    /// `VkLoaderFeatureFlags loaderFeatures` (`VK_LOADER_FEATURES`)
    pub loaderFeatures: VkLoaderFeatureFlags,
}
zeroed_default!(VkLayerInstanceCreateInfoUnion);

/// `VkLayerInstanceCreateInfo`: what the loader chains into `VkInstanceCreateInfo::pNext` for
/// layers (`sType` `VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO`, one per `function`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerInstanceCreateInfo {
    /// `VkStructureType sType`: `VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO`.
    pub sType: VkStructureType,
    /// `const void *pNext`
    pub pNext: *const c_void,
    /// `VkLayerFunction function`: which member of `u` is live.
    pub function: VkLayerFunction,
    /// `union { ... } u`
    pub u: VkLayerInstanceCreateInfoUnion,
}
impl Default for VkLayerInstanceCreateInfo {
    fn default() -> Self {
        // SAFETY: integers, pointers and `Option<fn>`: all-zero is valid; then the type is set.
        let mut value: Self = unsafe { core::mem::zeroed() };
        value.sType = VkStructureType::LOADER_INSTANCE_CREATE_INFO;
        value
    }
}

/// `VkLayerDeviceLink`: one link of the device chain, for the layer below the current one.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerDeviceLink {
    /// `struct VkLayerDeviceLink_ *pNext`: the link for the layer after the next one.
    pub pNext: *mut VkLayerDeviceLink,
    /// `PFN_vkGetInstanceProcAddr pfnNextGetInstanceProcAddr`
    pub pfnNextGetInstanceProcAddr: PFN_vkGetInstanceProcAddr,
    /// `PFN_vkGetDeviceProcAddr pfnNextGetDeviceProcAddr`
    pub pfnNextGetDeviceProcAddr: PFN_vkGetDeviceProcAddr,
}
zeroed_default!(VkLayerDeviceLink);

/// The anonymous union `VkLayerDeviceCreateInfo::u`; `function` says which member is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union VkLayerDeviceCreateInfoUnion {
    /// `VkLayerDeviceLink *pLayerInfo` (`VK_LAYER_LINK_INFO`)
    pub pLayerInfo: *mut VkLayerDeviceLink,
    /// `PFN_vkSetDeviceLoaderData pfnSetDeviceLoaderData` (`VK_LOADER_DATA_CALLBACK`)
    pub pfnSetDeviceLoaderData: PFN_vkSetDeviceLoaderData,
}
zeroed_default!(VkLayerDeviceCreateInfoUnion);

/// `VkLayerDeviceCreateInfo`: what the loader chains into `VkDeviceCreateInfo::pNext` for layers
/// (`sType` `VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO`, one per `function`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkLayerDeviceCreateInfo {
    /// `VkStructureType sType`: `VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO`.
    pub sType: VkStructureType,
    /// `const void *pNext`
    pub pNext: *const c_void,
    /// `VkLayerFunction function`: which member of `u` is live.
    pub function: VkLayerFunction,
    /// `union { ... } u`
    pub u: VkLayerDeviceCreateInfoUnion,
}
impl Default for VkLayerDeviceCreateInfo {
    fn default() -> Self {
        // SAFETY: as for `VkLayerInstanceCreateInfo`.
        let mut value: Self = unsafe { core::mem::zeroed() };
        value.sType = VkStructureType::LOADER_DEVICE_CREATE_INFO;
        value
    }
}

// ------------------------------------------------------------------------------------------------
// vk_layer.h: pre-instance chains (implicit layers intercepting vkEnumerateInstance*)
// ------------------------------------------------------------------------------------------------

c_enum! {
    /// `VkChainType`: which pre-instance function a chain is for.
    VkChainType {
        UNKNOWN = 0 => "VK_CHAIN_TYPE_UNKNOWN",
        ENUMERATE_INSTANCE_EXTENSION_PROPERTIES = 1 => "VK_CHAIN_TYPE_ENUMERATE_INSTANCE_EXTENSION_PROPERTIES",
        ENUMERATE_INSTANCE_LAYER_PROPERTIES = 2 => "VK_CHAIN_TYPE_ENUMERATE_INSTANCE_LAYER_PROPERTIES",
        ENUMERATE_INSTANCE_VERSION = 3 => "VK_CHAIN_TYPE_ENUMERATE_INSTANCE_VERSION",
    }
}

/// `VkChainHeader`: the start of every pre-instance chain link.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct VkChainHeader {
    /// `VkChainType type`
    pub r#type: VkChainType,
    /// `uint32_t version`: [`VK_CURRENT_CHAIN_VERSION`].
    pub version: u32,
    /// `uint32_t size`: `sizeof` the whole link.
    pub size: u32,
}

/// `VkEnumerateInstanceExtensionPropertiesChain`: the link an implicit layer's
/// `vkEnumerateInstanceExtensionProperties` interceptor receives first.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkEnumerateInstanceExtensionPropertiesChain {
    /// `VkChainHeader header`: type `VK_CHAIN_TYPE_ENUMERATE_INSTANCE_EXTENSION_PROPERTIES`.
    pub header: VkChainHeader,
    /// `VkResult (*pfnNextLayer)(const struct VkEnumerateInstanceExtensionPropertiesChain *,
    /// const char *, uint32_t *, VkExtensionProperties *)`: call with `pNextLink` to call down.
    pub pfnNextLayer: Option<
        unsafe extern "system" fn(
            *const VkEnumerateInstanceExtensionPropertiesChain,
            *const c_char,
            *mut u32,
            *mut VkExtensionProperties,
        ) -> VkResult,
    >,
    /// `const struct VkEnumerateInstanceExtensionPropertiesChain *pNextLink`
    pub pNextLink: *const VkEnumerateInstanceExtensionPropertiesChain,
}
zeroed_default!(VkEnumerateInstanceExtensionPropertiesChain);

/// `VkEnumerateInstanceLayerPropertiesChain`: the link an implicit layer's
/// `vkEnumerateInstanceLayerProperties` interceptor receives first.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkEnumerateInstanceLayerPropertiesChain {
    /// `VkChainHeader header`: type `VK_CHAIN_TYPE_ENUMERATE_INSTANCE_LAYER_PROPERTIES`.
    pub header: VkChainHeader,
    /// `VkResult (*pfnNextLayer)(const struct VkEnumerateInstanceLayerPropertiesChain *, uint32_t *,
    /// VkLayerProperties *)`: call with `pNextLink` to call down.
    pub pfnNextLayer: Option<
        unsafe extern "system" fn(
            *const VkEnumerateInstanceLayerPropertiesChain,
            *mut u32,
            *mut VkLayerProperties,
        ) -> VkResult,
    >,
    /// `const struct VkEnumerateInstanceLayerPropertiesChain *pNextLink`
    pub pNextLink: *const VkEnumerateInstanceLayerPropertiesChain,
}
zeroed_default!(VkEnumerateInstanceLayerPropertiesChain);

/// `VkEnumerateInstanceVersionChain`: the link an implicit layer's `vkEnumerateInstanceVersion`
/// interceptor receives first.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkEnumerateInstanceVersionChain {
    /// `VkChainHeader header`: type `VK_CHAIN_TYPE_ENUMERATE_INSTANCE_VERSION`.
    pub header: VkChainHeader,
    /// `VkResult (*pfnNextLayer)(const struct VkEnumerateInstanceVersionChain *, uint32_t *)`: call
    /// with `pNextLink` to call down.
    pub pfnNextLayer: Option<
        unsafe extern "system" fn(*const VkEnumerateInstanceVersionChain, *mut u32) -> VkResult,
    >,
    /// `const struct VkEnumerateInstanceVersionChain *pNextLink`
    pub pNextLink: *const VkEnumerateInstanceVersionChain,
}
zeroed_default!(VkEnumerateInstanceVersionChain);

// ------------------------------------------------------------------------------------------------
// vk_icd.h: loader <-> driver
// ------------------------------------------------------------------------------------------------

/// `CURRENT_LOADER_ICD_INTERFACE_VERSION`: the newest loader-driver interface (7: the `vk_icd*`
/// entry points may come from `vk_icdGetInstanceProcAddr` instead of being exported).
pub const CURRENT_LOADER_ICD_INTERFACE_VERSION: u32 = 7;
/// `MIN_SUPPORTED_LOADER_ICD_INTERFACE_VERSION`: the oldest loader-driver interface a loader accepts.
pub const MIN_SUPPORTED_LOADER_ICD_INTERFACE_VERSION: u32 = 0;
/// `MIN_PHYS_DEV_EXTENSION_ICD_INTERFACE_VERSION`: the first interface with
/// `vk_icdGetPhysicalDeviceProcAddr`.
pub const MIN_PHYS_DEV_EXTENSION_ICD_INTERFACE_VERSION: u32 = 4;

/// `PFN_vkNegotiateLoaderICDInterfaceVersion`: a driver's `vk_icdNegotiateLoaderICDInterfaceVersion`
/// (the header's old name); `*pVersion` is the loader's version in, the agreed one out.
pub type PFN_vkNegotiateLoaderICDInterfaceVersion =
    Option<unsafe extern "system" fn(pVersion: *mut u32) -> VkResult>;
/// `PFN_vk_icdNegotiateLoaderICDInterfaceVersion`: the same, under the header's newer name.
pub type PFN_vk_icdNegotiateLoaderICDInterfaceVersion = PFN_vkNegotiateLoaderICDInterfaceVersion;
/// `PFN_vk_icdGetInstanceProcAddr`: a driver's `vk_icdGetInstanceProcAddr` (interface 1 and later).
pub type PFN_vk_icdGetInstanceProcAddr = Option<
    unsafe extern "system" fn(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction,
>;
/// `PFN_vk_icdGetPhysicalDeviceProcAddr`: a driver's `vk_icdGetPhysicalDeviceProcAddr` (interface 4
/// and later).
pub type PFN_vk_icdGetPhysicalDeviceProcAddr = Option<
    unsafe extern "system" fn(instance: VkInstance, pName: *const c_char) -> PFN_vkVoidFunction,
>;

/// `ICD_LOADER_MAGIC`: what a driver stores in the first word of a new dispatchable object, for the
/// loader to replace with its dispatch table.
pub const ICD_LOADER_MAGIC: usize = 0x01CD_C0DE;

/// `VK_LOADER_DATA`: the first word of every dispatchable object a driver creates.
#[repr(C)]
#[derive(Clone, Copy)]
pub union VK_LOADER_DATA {
    /// `uintptr_t loaderMagic`: [`ICD_LOADER_MAGIC`] until the loader takes the object.
    pub loaderMagic: usize,
    /// `void *loaderData`: the loader's dispatch table.
    pub loaderData: *mut c_void,
}
zeroed_default!(VK_LOADER_DATA);

/// `set_loader_magic_value`: stores [`ICD_LOADER_MAGIC`] in the first word of `pNewObject`.
///
/// # Safety
/// `pNewObject` must be valid for writing one pointer-aligned word.
#[inline]
pub unsafe fn set_loader_magic_value(pNewObject: *mut c_void) {
    // SAFETY: one aligned, writable word (this function's contract).
    unsafe {
        pNewObject.cast::<VK_LOADER_DATA>().write(VK_LOADER_DATA {
            loaderMagic: ICD_LOADER_MAGIC,
        })
    };
}

/// `valid_loader_magic_value`: whether the low 32 bits of the first word of `pNewObject` are
/// [`ICD_LOADER_MAGIC`].
///
/// # Safety
/// `pNewObject` must be valid for reading one pointer-aligned word.
#[inline]
pub unsafe fn valid_loader_magic_value(pNewObject: *const c_void) -> bool {
    // SAFETY: one aligned, readable word (this function's contract); both members of the union
    // are plain words, so any bits read are a value of `loaderMagic`.
    let magic = unsafe { pNewObject.cast::<VK_LOADER_DATA>().read().loaderMagic };
    (magic & 0xffff_ffff) == ICD_LOADER_MAGIC
}

c_enum! {
    /// `VkIcdWsiPlatform`: which kind of surface a `VkSurfaceKHR` made by the loader points to.
    VkIcdWsiPlatform {
        MIR = 0 => "VK_ICD_WSI_PLATFORM_MIR",
        WAYLAND = 1 => "VK_ICD_WSI_PLATFORM_WAYLAND",
        WIN32 = 2 => "VK_ICD_WSI_PLATFORM_WIN32",
        XCB = 3 => "VK_ICD_WSI_PLATFORM_XCB",
        XLIB = 4 => "VK_ICD_WSI_PLATFORM_XLIB",
        ANDROID = 5 => "VK_ICD_WSI_PLATFORM_ANDROID",
        MACOS = 6 => "VK_ICD_WSI_PLATFORM_MACOS",
        IOS = 7 => "VK_ICD_WSI_PLATFORM_IOS",
        DISPLAY = 8 => "VK_ICD_WSI_PLATFORM_DISPLAY",
        HEADLESS = 9 => "VK_ICD_WSI_PLATFORM_HEADLESS",
        METAL = 10 => "VK_ICD_WSI_PLATFORM_METAL",
        DIRECTFB = 11 => "VK_ICD_WSI_PLATFORM_DIRECTFB",
        VI = 12 => "VK_ICD_WSI_PLATFORM_VI",
        GGP = 13 => "VK_ICD_WSI_PLATFORM_GGP",
        SCREEN = 14 => "VK_ICD_WSI_PLATFORM_SCREEN",
        FUCHSIA = 15 => "VK_ICD_WSI_PLATFORM_FUCHSIA",
    }
}

/// `VkIcdSurfaceBase`: the start of every loader-made surface; a `VkSurfaceKHR` the loader creates
/// is a pointer to one of the `VkIcdSurface*` structs.
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct VkIcdSurfaceBase {
    /// `VkIcdWsiPlatform platform`
    pub platform: VkIcdWsiPlatform,
}

/// `VkIcdSurfaceWayland` (`VK_ICD_WSI_PLATFORM_WAYLAND`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkIcdSurfaceWayland {
    /// `VkIcdSurfaceBase base`
    pub base: VkIcdSurfaceBase,
    /// `struct wl_display *display`
    pub display: *mut wl_display,
    /// `struct wl_surface *surface`
    pub surface: *mut wl_surface,
}
zeroed_default!(VkIcdSurfaceWayland);

/// `VkIcdSurfaceXcb` (`VK_ICD_WSI_PLATFORM_XCB`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkIcdSurfaceXcb {
    /// `VkIcdSurfaceBase base`
    pub base: VkIcdSurfaceBase,
    /// `xcb_connection_t *connection`
    pub connection: *mut xcb_connection_t,
    /// `xcb_window_t window`
    pub window: xcb_window_t,
}
zeroed_default!(VkIcdSurfaceXcb);

/// `VkIcdSurfaceXlib` (`VK_ICD_WSI_PLATFORM_XLIB`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkIcdSurfaceXlib {
    /// `VkIcdSurfaceBase base`
    pub base: VkIcdSurfaceBase,
    /// `Display *dpy`
    pub dpy: *mut Display,
    /// `Window window`
    pub window: Window,
}
zeroed_default!(VkIcdSurfaceXlib);

/// `VkIcdSurfaceDisplay` (`VK_ICD_WSI_PLATFORM_DISPLAY`): the fields of
/// `VkDisplaySurfaceCreateInfoKHR`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VkIcdSurfaceDisplay {
    /// `VkIcdSurfaceBase base`
    pub base: VkIcdSurfaceBase,
    /// `VkDisplayModeKHR displayMode`
    pub displayMode: VkDisplayModeKHR,
    /// `uint32_t planeIndex`
    pub planeIndex: u32,
    /// `uint32_t planeStackIndex`
    pub planeStackIndex: u32,
    /// `VkSurfaceTransformFlagBitsKHR transform`
    pub transform: VkSurfaceTransformFlagBitsKHR,
    /// `float globalAlpha`
    pub globalAlpha: f32,
    /// `VkDisplayPlaneAlphaFlagBitsKHR alphaMode`
    pub alphaMode: VkDisplayPlaneAlphaFlagBitsKHR,
    /// `VkExtent2D imageExtent`
    pub imageExtent: VkExtent2D,
}
zeroed_default!(VkIcdSurfaceDisplay);

/// `VkIcdSurfaceHeadless` (`VK_ICD_WSI_PLATFORM_HEADLESS`).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct VkIcdSurfaceHeadless {
    /// `VkIcdSurfaceBase base`
    pub base: VkIcdSurfaceBase,
}
