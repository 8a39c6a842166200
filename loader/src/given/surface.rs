//! An application's platform surface create info (`vkCreate*SurfaceKHR`), as given, and the
//! `VkIcdSurface*` structure a driver that leaves surfaces to the loader reads from it.

use std::ffi::CStr;
use std::marker::PhantomData;

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
