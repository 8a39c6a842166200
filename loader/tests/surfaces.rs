//! Surfaces with an interface-2 driver and an interface-7 driver side by side (two copies of the
//! test driver). The interface-2 driver must always get the loader's `VkIcdSurface*`; the
//! interface-7 driver creates its own surfaces and must always get its own handle, in the
//! physical-device queries and in the swapchain commands. The test driver answers
//! `VK_ERROR_SURFACE_LOST_KHR` to the wrong kind of handle and reports what it saw (see its README).

mod common;

use std::ffi::{c_char, c_void, CStr};

use common::child;
use vk_generated::types::*;

const EXTENSIONS: &str = "+VK_EXT_headless_surface,VK_KHR_xcb_surface,VK_KHR_display";

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The file a function pointer lives in.
fn library_of(f: PFN_vkVoidFunction) -> String {
    let Some(f) = f else { return "NULL".into() };
    // SAFETY: Dl_info is plain C data (pointers and integers), for which zeroes are valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks the address up, and `info` is a local for it to fill.
    if unsafe { libc::dladdr(f as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return "?".into();
    }
    // SAFETY: dladdr succeeded: `dli_fname` is the C string of a library still loaded.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    path.rsplit('/').next().unwrap_or_default().to_owned()
}

#[test]
fn scenario_entry() {
    let Ok(_scenario) = std::env::var("SCENARIO") else { return };
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: libloading::Symbol<Gipa> = unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: `gipa` is our loader's, still loaded.
    unsafe { surfaces(*gipa) };
}

/// `get!(gipa, instance, vkX)`: the command `vkX` as its type `PFN_vkX` (through
/// `concat_idents_pfn!`, which pairs the two); NULL is a test failure. For use in unsafe code: the
/// transmute is sound because the type is the named command's.
macro_rules! get {
    ($gipa:expr, $instance:expr, $name:ident) => {
        std::mem::transmute::<PFN_vkVoidFunction, concat_idents_pfn!($name)>($gipa($instance, concat!(stringify!($name), "\0").as_ptr() as *const c_char))
            .expect(stringify!($name))
    };
}

macro_rules! concat_idents_pfn {
    (vkCreateInstance) => { PFN_vkCreateInstance };
    (vkDestroyInstance) => { PFN_vkDestroyInstance };
    (vkEnumeratePhysicalDevices) => { PFN_vkEnumeratePhysicalDevices };
    (vkGetPhysicalDeviceProperties) => { PFN_vkGetPhysicalDeviceProperties };
    (vkCreateHeadlessSurfaceEXT) => { PFN_vkCreateHeadlessSurfaceEXT };
    (vkCreateXcbSurfaceKHR) => { PFN_vkCreateXcbSurfaceKHR };
    (vkCreateDisplayPlaneSurfaceKHR) => { PFN_vkCreateDisplayPlaneSurfaceKHR };
    (vkDestroySurfaceKHR) => { PFN_vkDestroySurfaceKHR };
    (vkGetPhysicalDeviceSurfaceSupportKHR) => { PFN_vkGetPhysicalDeviceSurfaceSupportKHR };
    (vkGetPhysicalDeviceSurfaceCapabilitiesKHR) => { PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR };
    (vkGetPhysicalDeviceSurfaceFormatsKHR) => { PFN_vkGetPhysicalDeviceSurfaceFormatsKHR };
    (vkGetPhysicalDeviceSurfacePresentModesKHR) => { PFN_vkGetPhysicalDeviceSurfacePresentModesKHR };
    (vkGetPhysicalDevicePresentRectanglesKHR) => { PFN_vkGetPhysicalDevicePresentRectanglesKHR };
    (vkGetPhysicalDeviceSurfaceCapabilities2KHR) => { PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR };
    (vkGetPhysicalDeviceSurfaceFormats2KHR) => { PFN_vkGetPhysicalDeviceSurfaceFormats2KHR };
    (vkCreateDevice) => { PFN_vkCreateDevice };
    (vkGetDeviceProcAddr) => { PFN_vkGetDeviceProcAddr };
    (vkCreateSwapchainKHR) => { PFN_vkCreateSwapchainKHR };
    (vkCreateSharedSwapchainsKHR) => { PFN_vkCreateSharedSwapchainsKHR };
    (vkDestroySwapchainKHR) => { PFN_vkDestroySwapchainKHR };
    (vkGetDeviceGroupSurfacePresentModesKHR) => { PFN_vkGetDeviceGroupSurfacePresentModesKHR };
    (vkDestroyDevice) => { PFN_vkDestroyDevice };
}

/// Creates an instance with the surface extensions, a surface of each kind, and asks every
/// physical device about each; then [`swapchains`].
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn surfaces(gipa: Gipa) {
    // SAFETY: each command comes from `get!`, which names the command and its PFN type together;
    // the instance, devices, surfaces and swapchains are used between their creation and their
    // destruction; the other pointers point to locals that outlive each call, each array as long as
    // the count passed with it. The xcb connection is never dereferenced: no driver here talks to an
    // X server.
    unsafe {
        let extensions = [
            c"VK_KHR_surface".as_ptr(),
            c"VK_EXT_headless_surface".as_ptr(),
            c"VK_KHR_xcb_surface".as_ptr(),
            c"VK_KHR_display".as_ptr(),
            c"VK_KHR_get_surface_capabilities2".as_ptr(),
        ];
        let info = VkInstanceCreateInfo {
            enabledExtensionCount: extensions.len() as u32,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let mut instance = VkInstance::NULL;
        let result = get!(gipa, VkInstance::NULL, vkCreateInstance)(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let enumerate = get!(gipa, instance, vkEnumeratePhysicalDevices);
        let mut count = 0;
        enumerate(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate(instance, &mut count, devices.as_mut_ptr());

        let mut surfaces = Vec::new();
        let mut surface = VkSurfaceKHR::NULL;
        let headless = VkHeadlessSurfaceCreateInfoEXT::default();
        let r = get!(gipa, instance, vkCreateHeadlessSurfaceEXT)(instance, &headless, std::ptr::null(), &mut surface);
        println!("CREATE headless {r:?}");
        surfaces.push(("headless", surface));
        // The connection is never dereferenced: no driver here talks to an X server.
        let xcb = VkXcbSurfaceCreateInfoKHR { connection: 0x1000 as *mut _, window: 77, ..Default::default() };
        let r = get!(gipa, instance, vkCreateXcbSurfaceKHR)(instance, &xcb, std::ptr::null(), &mut surface);
        println!("CREATE xcb {r:?}");
        surfaces.push(("xcb", surface));
        let display = VkDisplaySurfaceCreateInfoKHR {
            displayMode: VkDisplayModeKHR(0x1234),
            imageExtent: VkExtent2D { width: 300, height: 200 },
            ..Default::default()
        };
        let r = get!(gipa, instance, vkCreateDisplayPlaneSurfaceKHR)(instance, &display, std::ptr::null(), &mut surface);
        println!("CREATE display {r:?}");
        surfaces.push(("display", surface));

        for &pd in &devices {
            let mut props = VkPhysicalDeviceProperties::default();
            get!(gipa, instance, vkGetPhysicalDeviceProperties)(pd, &mut props);
            let name = common::fixed_str(&props.deviceName);
            for &(kind, surface) in &surfaces {
                let mut supported = VK_FALSE;
                let support = get!(gipa, instance, vkGetPhysicalDeviceSurfaceSupportKHR)(pd, 0, surface, &mut supported);
                let mut caps = VkSurfaceCapabilitiesKHR::default();
                let caps_r = get!(gipa, instance, vkGetPhysicalDeviceSurfaceCapabilitiesKHR)(pd, surface, &mut caps);
                let mut n = 0;
                let formats = get!(gipa, instance, vkGetPhysicalDeviceSurfaceFormatsKHR)(pd, surface, &mut n, std::ptr::null_mut());
                let mut m = 0;
                let modes = get!(gipa, instance, vkGetPhysicalDeviceSurfacePresentModesKHR)(pd, surface, &mut m, std::ptr::null_mut());
                let mut rect = VkRect2D::default();
                let mut one = 1;
                let rects = get!(gipa, instance, vkGetPhysicalDevicePresentRectanglesKHR)(pd, surface, &mut one, &mut rect);
                let info2 = VkPhysicalDeviceSurfaceInfo2KHR { surface, ..Default::default() };
                let mut caps2 = VkSurfaceCapabilities2KHR::default();
                let caps2_r = get!(gipa, instance, vkGetPhysicalDeviceSurfaceCapabilities2KHR)(pd, &info2, &mut caps2);
                let mut formats2 = [VkSurfaceFormat2KHR::default(); 2];
                let mut f2 = 2;
                let formats2_r = get!(gipa, instance, vkGetPhysicalDeviceSurfaceFormats2KHR)(pd, &info2, &mut f2, formats2.as_mut_ptr());
                println!(
                    "QUERY {name} {kind} support={support:?}/{supported} caps={caps_r:?}/min{}/{}x{} formats={formats:?}/{n} modes={modes:?}/{m} rect={rects:?}/{}x{} caps2={caps2_r:?}/layers{}/{}x{} formats2={formats2_r:?}/{:?}/{:?}",
                    caps.minImageCount,
                    caps.currentExtent.width,
                    caps.currentExtent.height,
                    rect.extent.width,
                    rect.extent.height,
                    caps2.surfaceCapabilities.maxImageArrayLayers,
                    caps2.surfaceCapabilities.currentExtent.width,
                    caps2.surfaceCapabilities.currentExtent.height,
                    formats2[0].surfaceFormat.format,
                    formats2[1].sType,
                );
            }
            swapchains(gipa, instance, pd, &name, &surfaces);
        }
        for &(_, surface) in &surfaces {
            get!(gipa, instance, vkDestroySurfaceKHR)(instance, surface, std::ptr::null());
        }
        get!(gipa, instance, vkDestroyInstance)(instance, std::ptr::null());
    }
}

/// A device per physical device; a swapchain on every surface through the exported trampoline,
/// the group present modes through the `vkGetDeviceProcAddr` pointer.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, `instance` a live instance of it with the
/// surface extensions, `pd` one of its physical devices, and `surfaces` live surfaces of it.
unsafe fn swapchains(gipa: Gipa, instance: VkInstance, pd: VkPhysicalDevice, name: &str, surfaces: &[(&str, VkSurfaceKHR)]) {
    // SAFETY: each command comes from `get!` (or from vkGetDeviceProcAddr, as its type), which names the command and its PFN type together;
    // the instance, devices, surfaces and swapchains are used between their creation and their
    // destruction; the other pointers point to locals that outlive each call, each array as long as
    // the count passed with it. The xcb connection is never dereferenced: no driver here talks to an
    // X server.
    unsafe {
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let swapchain_ext = [c"VK_KHR_swapchain".as_ptr(), c"VK_KHR_display_swapchain".as_ptr()];
        let info = VkDeviceCreateInfo {
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue,
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: swapchain_ext.as_ptr(),
            ..Default::default()
        };
        let mut device = VkDevice::NULL;
        let r = get!(gipa, instance, vkCreateDevice)(pd, &info, std::ptr::null(), &mut device);
        assert_eq!(r, VkResult::SUCCESS);
        let gdpa = get!(gipa, instance, vkGetDeviceProcAddr);
        let raw = gdpa(device, c"vkCreateSwapchainKHR".as_ptr());
        println!("GDPA {name} vkCreateSwapchainKHR in {}", library_of(raw));
        let create = get!(gipa, instance, vkCreateSwapchainKHR);
        let destroy = get!(gipa, instance, vkDestroySwapchainKHR);
        let modes: PFN_vkGetDeviceGroupSurfacePresentModesKHR =
            std::mem::transmute(gdpa(device, c"vkGetDeviceGroupSurfacePresentModesKHR".as_ptr()));
        for &(kind, surface) in surfaces {
            let info = VkSwapchainCreateInfoKHR { surface, minImageCount: 2, ..Default::default() };
            let mut swapchain = VkSwapchainKHR::NULL;
            let r = create(device, &info, std::ptr::null(), &mut swapchain);
            destroy(device, swapchain, std::ptr::null());
            let mut flags = VkDeviceGroupPresentModeFlagsKHR::default();
            let m = modes.unwrap()(device, surface, &mut flags);
            println!("SWAPCHAIN {name} {kind} create={r:?} group_modes={m:?}/{}", flags.0);
        }
        // All surfaces at once, through the exported trampoline.
        let infos: Vec<VkSwapchainCreateInfoKHR> =
            surfaces.iter().map(|&(_, surface)| VkSwapchainCreateInfoKHR { surface, minImageCount: 2, ..Default::default() }).collect();
        let mut swapchains = vec![VkSwapchainKHR::NULL; infos.len()];
        let r = get!(gipa, instance, vkCreateSharedSwapchainsKHR)(device, infos.len() as u32, infos.as_ptr(), std::ptr::null(), swapchains.as_mut_ptr());
        for swapchain in swapchains {
            destroy(device, swapchain, std::ptr::null());
        }
        println!("SHARED {name} {r:?}");
        get!(gipa, instance, vkDestroyDevice)(device, std::ptr::null());
    }
}

#[test]
fn interface_2_and_interface_7_drivers_each_get_their_kind_of_surface() {
    let dir = common::scratch("surfaces");
    let a = common::tagged_driver(&dir, "a");
    let b = common::tagged_driver(&dir, "b");
    let manifest_a = common::driver_manifest(&dir, "a.json", &a);
    let manifest_b = common::driver_manifest(&dir, "b.json", &b);
    let (ok, out, err) = child(
        "surfaces",
        &[
            ("VK_DRIVER_FILES", format!("{}:{}", manifest_a.display(), manifest_b.display())),
            ("VK_TEST_DRIVER_INTERFACE_VERSION_A", "2".into()),
            ("VK_TEST_DRIVER_DEVICES_A", "integrated".into()),
            ("VK_TEST_DRIVER_DEVICES_B", "discrete".into()),
            // Only driver b has VK_KHR_get_surface_capabilities2: driver a's is emulated.
            ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_A", EXTENSIONS.into()),
            ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_B", format!("{EXTENSIONS},VK_KHR_get_surface_capabilities2")),
            ("VK_TEST_DRIVER_DEVICE_EXTENSIONS", "+VK_KHR_display_swapchain".into()),
            ("VK_LOADER_DEBUG", "driver".into()),
        ],
    );
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}\n{err}");
    assert!(err.contains("a.json: loaded") && err.contains("driver interface version 2"), "{err}");
    for kind in ["headless", "xcb", "display"] {
        assert!(out.contains(&format!("CREATE {kind} VK_SUCCESS")), "{out}");
    }
    let queries: Vec<&str> = out.lines().filter(|l| l.starts_with("QUERY ")).collect();
    assert_eq!(queries.len(), 6, "{out}");
    let extents = [("headless", "64x64"), ("xcb", "77x77"), ("display", "300x200")];
    // Interface 2 (integrated, driver a): the loader's surface (min2), capabilities2 emulated
    // (layers1); interface 7 (discrete, driver b): its own surface (min1), its own capabilities2.
    for (device, min, layers) in [("Test Driver integrated 0", "min2", "layers1"), ("Test Driver discrete 0", "min1", "layers2")] {
        for (kind, extent) in extents {
            let expected = format!(
                "QUERY {device} {kind} support=VK_SUCCESS/1 caps=VK_SUCCESS/{min}/{extent} formats=VK_SUCCESS/2 modes=VK_SUCCESS/2 rect=VK_SUCCESS/{extent} caps2=VK_SUCCESS/{layers}/{extent} formats2=VK_SUCCESS/VK_FORMAT_B8G8R8A8_UNORM/VK_STRUCTURE_TYPE_SURFACE_FORMAT_2_KHR"
            );
            assert!(queries.contains(&expected.as_str()), "missing {expected}\n{out}");
            assert!(
                out.contains(&format!("SWAPCHAIN {device} {kind} create=VK_SUCCESS group_modes=VK_SUCCESS/1")),
                "{device} {kind}: {out}"
            );
        }
        assert!(out.contains(&format!("SHARED {device} VK_SUCCESS")), "{device}: {out}");
    }
    // No loader code between the application and an interface-2 driver's swapchain creation.
    assert!(out.contains("GDPA Test Driver integrated 0 vkCreateSwapchainKHR in libvk_test_driver_a.so"), "{out}");
    // The interface-7 driver's devices get the loader's function, which swaps in its surfaces.
    assert!(out.contains("GDPA Test Driver discrete 0 vkCreateSwapchainKHR in libvulkan.so"), "{out}");
    assert!(!err.contains("not destroyed"), "the loader left driver surfaces behind: {err}");
}
