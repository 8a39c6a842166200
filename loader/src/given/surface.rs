//! An application's platform surface create info (`vkCreate*SurfaceKHR`), as given, and the
//! `VkIcdSurface*` structure a driver that leaves surfaces to the loader reads from it.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;

use vk_generated::layer_abi::{
    VkIcdSurfaceBase, VkIcdSurfaceDisplay, VkIcdSurfaceHeadless, VkIcdSurfaceWayland, VkIcdSurfaceXcb,
    VkIcdSurfaceXlib, VkIcdWsiPlatform,
};
use vk_generated::types::*;

/// The platform part of a loader surface: what a driver reads at the `VkSurfaceKHR` address.
#[repr(C)]
#[derive(Clone, Copy)]
pub union IcdSurface {
    pub base: VkIcdSurfaceBase,
    pub xcb: VkIcdSurfaceXcb,
    pub xlib: VkIcdSurfaceXlib,
    pub wayland: VkIcdSurfaceWayland,
    pub display: VkIcdSurfaceDisplay,
    pub headless: VkIcdSurfaceHeadless,
}

/// The application's create info, a bitwise copy (its `pNext` included).
#[derive(Clone, Copy)]
pub(crate) enum Platform {
    Xcb(VkXcbSurfaceCreateInfoKHR),
    Xlib(VkXlibSurfaceCreateInfoKHR),
    Wayland(VkWaylandSurfaceCreateInfoKHR),
    Headless(VkHeadlessSurfaceCreateInfoEXT),
    Display(VkDisplaySurfaceCreateInfoKHR),
}

/// A platform create info as the application gave it: its window-system handles (the display
/// mode, for a display surface) valid for the life of the surface made from it, its `pNext` chain
/// NULL or valid for `'a` (a kept one, [`SurfaceCreateInfo::keep`], has none).
#[derive(Clone, Copy)]
pub struct SurfaceCreateInfo<'a> {
    platform: Platform,
    chain: PhantomData<&'a VkBaseInStructure>,
}

/// A create info kept with its surface for the drivers loaded later: without a chain.
pub type KeptSurfaceCreateInfo = SurfaceCreateInfo<'static>;

// SAFETY: the pointers are the application's window-system handles, which Vulkan requires valid
// for the surface's life and which drivers are given from any thread, and a chain only while the
// call that gave it runs; the loader never reads through them.
unsafe impl Send for SurfaceCreateInfo<'_> {}
// SAFETY: as for `Send`; a copy, never written.
unsafe impl Sync for SurfaceCreateInfo<'_> {}

/// The platform create info structures.
pub trait PlatformCreateInfo: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn platform(self) -> Platform;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! platforms {
    ($($t:ty => $variant:ident),*) => {
        $(
            impl sealed::Sealed for $t {}
            impl PlatformCreateInfo for $t {
                fn platform(self) -> Platform {
                    Platform::$variant(self)
                }
            }
        )*
    };
}

platforms!(
    VkXcbSurfaceCreateInfoKHR => Xcb,
    VkXlibSurfaceCreateInfoKHR => Xlib,
    VkWaylandSurfaceCreateInfoKHR => Wayland,
    VkHeadlessSurfaceCreateInfoEXT => Headless,
    VkDisplaySurfaceCreateInfoKHR => Display
);

impl<'a> SurfaceCreateInfo<'a> {
    /// The view of an application's create info; `None` for NULL.
    ///
    /// # Safety
    /// `info` must be NULL or a valid structure (Vulkan's valid usage of the create command) whose
    /// `pNext` chain is valid for `'a` and whose window-system handles (display mode) stay valid
    /// for as long as the surface made from it lives.
    pub unsafe fn new<T: PlatformCreateInfo>(info: *const T) -> Option<SurfaceCreateInfo<'a>> {
        // SAFETY: NULL or a valid structure (this function's contract), copied.
        let info = unsafe { info.as_ref() }.copied()?;
        Some(SurfaceCreateInfo { platform: info.platform(), chain: PhantomData })
    }

    /// The copy to keep for the drivers loaded later; `None` where it chains structures (kept
    /// only for the call that gave them).
    pub fn keep(&self) -> Option<KeptSurfaceCreateInfo> {
        (!self.chained()).then_some(SurfaceCreateInfo { platform: self.platform, chain: PhantomData })
    }

    /// The create info, for a driver's create function.
    pub(crate) fn platform(&self) -> &Platform {
        &self.platform
    }

    pub fn command(&self) -> &'static str {
        match self.platform {
            Platform::Xcb(_) => "vkCreateXcbSurfaceKHR",
            Platform::Xlib(_) => "vkCreateXlibSurfaceKHR",
            Platform::Wayland(_) => "vkCreateWaylandSurfaceKHR",
            Platform::Headless(_) => "vkCreateHeadlessSurfaceEXT",
            Platform::Display(_) => "vkCreateDisplayPlaneSurfaceKHR",
        }
    }

    pub fn extension(&self) -> &'static CStr {
        match self.platform {
            Platform::Xcb(_) => c"VK_KHR_xcb_surface",
            Platform::Xlib(_) => c"VK_KHR_xlib_surface",
            Platform::Wayland(_) => c"VK_KHR_wayland_surface",
            Platform::Headless(_) => c"VK_EXT_headless_surface",
            Platform::Display(_) => c"VK_KHR_display",
        }
    }

    /// Whether it chains structures (then it is not kept for a driver loaded later).
    pub fn chained(&self) -> bool {
        !match &self.platform {
            Platform::Xcb(i) => i.pNext,
            Platform::Xlib(i) => i.pNext,
            Platform::Wayland(i) => i.pNext,
            Platform::Headless(i) => i.pNext,
            Platform::Display(i) => i.pNext,
        }
        .is_null()
    }

    /// The `VkIcdSurface*` structure of its platform.
    pub fn icd_surface(&self) -> IcdSurface {
        match self.platform {
            Platform::Xcb(info) => IcdSurface {
                xcb: VkIcdSurfaceXcb {
                    base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::XCB },
                    connection: info.connection,
                    window: info.window,
                },
            },
            Platform::Xlib(info) => IcdSurface {
                xlib: VkIcdSurfaceXlib { base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::XLIB }, dpy: info.dpy, window: info.window },
            },
            Platform::Wayland(info) => IcdSurface {
                wayland: VkIcdSurfaceWayland {
                    base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::WAYLAND },
                    display: info.display,
                    surface: info.surface,
                },
            },
            Platform::Headless(_) => {
                IcdSurface { headless: VkIcdSurfaceHeadless { base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::HEADLESS } } }
            }
            Platform::Display(info) => IcdSurface {
                display: VkIcdSurfaceDisplay {
                    base: VkIcdSurfaceBase { platform: VkIcdWsiPlatform::DISPLAY },
                    displayMode: info.displayMode,
                    planeIndex: info.planeIndex,
                    planeStackIndex: info.planeStackIndex,
                    transform: info.transform,
                    globalAlpha: info.globalAlpha,
                    alphaMode: info.alphaMode,
                    imageExtent: info.imageExtent,
                },
            },
        }
    }
}

/// An application's `VkSurfaceCapabilities2KHR` to fill: writable, its `pNext` chain valid (each
/// element writable, its `sType` and `pNext` set, each present mode array valid for its count),
/// for `'a`. Its header is never handed out writable: the chain stays the one the application set.
pub struct SurfaceCapabilities2Out<'a> {
    caps: NonNull<VkSurfaceCapabilities2KHR>,
    lives: PhantomData<&'a mut VkSurfaceCapabilities2KHR>,
}

impl<'a> SurfaceCapabilities2Out<'a> {
    /// The view of an application's output structure; `None` for NULL.
    ///
    /// # Safety
    /// `caps` must be NULL or a writable structure whose chain is valid for `'a` (Vulkan's valid
    /// usage: each element writable, its `sType` and `pNext` set, each present mode array valid for
    /// its count), used by no one else for `'a`.
    pub unsafe fn new(caps: *mut VkSurfaceCapabilities2KHR) -> Option<SurfaceCapabilities2Out<'a>> {
        Some(SurfaceCapabilities2Out { caps: NonNull::new(caps)?, lives: PhantomData })
    }

    /// The structure, for a driver to fill as the application asked (its chain included).
    pub fn as_mut_ptr(&mut self) -> *mut VkSurfaceCapabilities2KHR {
        self.caps.as_ptr()
    }

    /// The plain capabilities inside it.
    pub fn capabilities(&mut self) -> &mut VkSurfaceCapabilitiesKHR {
        // SAFETY: a writable structure (`new`'s contract); a reference to its plain part alone,
        // borrowed from the view.
        unsafe { &mut (*self.caps.as_ptr()).surfaceCapabilities }
    }

    /// `VK_KHR_surface_maintenance1` is an instance extension, so applications ask its questions
    /// of devices whose drivers lack it. For `present_mode` (what the application's surface info
    /// chains), the answers a driver without it would give, as the Khronos loader does: the mode is
    /// compatible only with itself, and no scaling (the scaled extents are the surface's extents).
    pub fn emulate_surface_maintenance1(&mut self, present_mode: VkPresentModeKHR) {
        let plain = *self.capabilities();
        let extent = (plain.minImageExtent, plain.maxImageExtent);
        // SAFETY: a valid structure (`new`'s contract), its header read by value.
        let mut next = unsafe { std::ptr::addr_of!((*self.caps.as_ptr()).pNext).read() }.cast::<VkBaseOutStructure>();
        while !next.is_null() {
            // The header read by value: no reference to it lives while the element is written
            // through a reference of its own type, made only once its sType is known.
            // SAFETY: an element of the valid chain (`new`'s contract).
            let VkBaseOutStructure { sType: s_type, pNext: following } = unsafe { next.read() };
            match s_type {
                VkStructureType::SURFACE_PRESENT_MODE_COMPATIBILITY_KHR => {
                    // SAFETY: its sType says it is one; writable (`new`'s contract).
                    let compatibility = unsafe { &mut *next.cast::<VkSurfacePresentModeCompatibilityKHR>() };
                    if compatibility.pPresentModes.is_null() {
                        compatibility.presentModeCount = 1;
                    } else if compatibility.presentModeCount != 0 {
                        // SAFETY: an array of `presentModeCount` modes (`new`'s contract), at least one.
                        unsafe { *compatibility.pPresentModes = present_mode };
                        compatibility.presentModeCount = 1;
                    }
                }
                VkStructureType::SURFACE_PRESENT_SCALING_CAPABILITIES_KHR => {
                    // SAFETY: its sType says it is one; writable (`new`'s contract).
                    let scaling = unsafe { &mut *next.cast::<VkSurfacePresentScalingCapabilitiesKHR>() };
                    scaling.supportedPresentScaling = Default::default();
                    scaling.supportedPresentGravityX = Default::default();
                    scaling.supportedPresentGravityY = Default::default();
                    (scaling.minScaledImageExtent, scaling.maxScaledImageExtent) = extent;
                }
                _ => {}
            }
            next = following;
        }
    }
}
