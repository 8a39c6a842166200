//! Surface queries a driver lacks, answered by the loader as the Khronos loader does: the
//! platform presentation-support queries (`VK_FALSE`, with its messages),
//! `vkGetPhysicalDeviceSurfaceCapabilities2EXT` (emulated through the KHR query) and the
//! `VK_KHR_surface_maintenance1` structures of `vkGetPhysicalDeviceSurfaceCapabilities2KHR`. And a
//! driver that "created" a NULL surface gets NULL back, never the loader's surface.

mod common;

use std::ffi::{c_char, c_void, CStr};

use common::child;
use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: libloading::Symbol<Gipa> = unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: `gipa` is the vkGetInstanceProcAddr of `lib`, our loader, loaded to the end.
    unsafe {
        match scenario.as_str() {
            "presentation" => presentation(&lib, *gipa),
            "capabilities2-ext" => capabilities2_ext(*gipa),
            "maintenance1" => maintenance1(*gipa),
            "null-surface" => null_surface(*gipa),
            _ => {}
        }
    }
}

/// The command `name`, as `T`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, `instance` NULL or a live instance of it, and `T`
/// the PFN type of the command `name`.
unsafe fn function<T>(gipa: Gipa, instance: VkInstance, name: &CStr) -> T {
    assert_eq!(size_of::<T>(), size_of::<PFN_vkVoidFunction>());
    // SAFETY: `instance` is NULL or live and the name a C string (the contract).
    let f = unsafe { gipa(instance, name.as_ptr()) };
    assert!(f.is_some(), "vkGetInstanceProcAddr({name:?}) is NULL");
    // SAFETY: the loader answered for `name`, so `f` is a function of the type `T` is (the
    // contract), and it has the size of one (asserted).
    unsafe { std::mem::transmute_copy(&f) }
}

/// An instance with `extensions` enabled, and its physical devices.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn instance_with(gipa: Gipa, extensions: &[&CStr]) -> (VkInstance, Vec<VkPhysicalDevice>) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    // `common::physical_devices` gets `gipa` itself, for the instance just created.
    unsafe {
        let names: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let info = VkInstanceCreateInfo {
            enabledExtensionCount: names.len() as u32,
            ppEnabledExtensionNames: names.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = function(gipa, VkInstance::NULL, c"vkCreateInstance");
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let devices = common::physical_devices(&|i, n| gipa(i, n.as_ptr()), instance);
        (instance, devices)
    }
}

/// A headless surface of `instance`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `instance` a live instance of it with
/// VK_EXT_headless_surface enabled.
unsafe fn headless_surface(gipa: Gipa, instance: VkInstance) -> VkSurfaceKHR {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    unsafe {
        let create: PFN_vkCreateHeadlessSurfaceEXT = function(gipa, instance, c"vkCreateHeadlessSurfaceEXT");
        let mut surface = VkSurfaceKHR::NULL;
        assert_eq!(create.unwrap()(instance, &VkHeadlessSurfaceCreateInfoEXT::default(), std::ptr::null(), &mut surface), VkResult::SUCCESS);
        surface
    }
}

/// The name of `pd`.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, `instance` a live instance of it and `pd` one of
/// its physical devices.
unsafe fn device_name(gipa: Gipa, instance: VkInstance, pd: VkPhysicalDevice) -> String {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    unsafe {
        let properties: PFN_vkGetPhysicalDeviceProperties = function(gipa, instance, c"vkGetPhysicalDeviceProperties");
        let mut p = VkPhysicalDeviceProperties::default();
        properties.unwrap()(pd, &mut p);
        common::fixed_str(&p.deviceName)
    }
}

/// The exported `vkGetPhysicalDeviceXcbPresentationSupportKHR` on an instance with
/// `VK_KHR_xcb_surface` (the driver lacks the command) and on one without it.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, and `lib` the loader it comes from.
unsafe fn presentation(lib: &libloading::Library, gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    // The exported presentation query is read as its own type; it gets a NULL connection, which
    // the loader never reads: the driver lacks the command, so the loader answers alone.
    unsafe {
        let support: libloading::Symbol<PFN_vkGetPhysicalDeviceXcbPresentationSupportKHR> =
            lib.get(b"vkGetPhysicalDeviceXcbPresentationSupportKHR\0").unwrap();
        for extensions in [&[c"VK_KHR_surface", c"VK_KHR_xcb_surface"][..], &[c"VK_KHR_surface"][..]] {
            let (instance, devices) = instance_with(gipa, extensions);
            eprintln!("CALL with {} extension(s)", extensions.len());
            let supported = support.unwrap()(devices[0], 0, std::ptr::null_mut(), 0);
            println!("SUPPORTED {supported}");
            let destroy: PFN_vkDestroyInstance = function(gipa, instance, c"vkDestroyInstance");
            destroy.unwrap()(instance, std::ptr::null());
        }
    }
}

/// `vkGetPhysicalDeviceSurfaceCapabilities2EXT` next to the plain query, for a driver without it.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn capabilities2_ext(gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    unsafe {
        let extensions = [c"VK_KHR_surface", c"VK_EXT_headless_surface", c"VK_EXT_display_surface_counter"];
        let (instance, devices) = instance_with(gipa, &extensions);
        let surface = headless_surface(gipa, instance);
        let plain: PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR = function(gipa, instance, c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
        let ext: PFN_vkGetPhysicalDeviceSurfaceCapabilities2EXT = function(gipa, instance, c"vkGetPhysicalDeviceSurfaceCapabilities2EXT");
        let mut caps = VkSurfaceCapabilitiesKHR::default();
        plain.unwrap()(devices[0], surface, &mut caps);
        let mut caps2 = VkSurfaceCapabilities2EXT { supportedSurfaceCounters: VkSurfaceCounterFlagsEXT(7), ..Default::default() };
        let result = ext.unwrap()(devices[0], surface, &mut caps2);
        println!(
            "CAPS2EXT {result:?} same={} counters={}",
            (caps2.minImageCount, caps2.maxImageCount, caps2.currentExtent.width, caps2.maxImageArrayLayers)
                == (caps.minImageCount, caps.maxImageCount, caps.currentExtent.width, caps.maxImageArrayLayers),
            caps2.supportedSurfaceCounters.0
        );
    }
}

/// The surface capabilities of a headless surface, as the driver reports them.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn null_surface(gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    unsafe {
        let (instance, devices) = instance_with(gipa, &[c"VK_KHR_surface", c"VK_EXT_headless_surface"]);
        let surface = headless_surface(gipa, instance);
        let plain: PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR = function(gipa, instance, c"vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
        let mut caps = VkSurfaceCapabilitiesKHR::default();
        let result = plain.unwrap()(devices[0], surface, &mut caps);
        println!("CAPS {result:?} min_images={}", caps.minImageCount);
        let destroy: PFN_vkDestroySurfaceKHR = function(gipa, instance, c"vkDestroySurfaceKHR");
        destroy.unwrap()(instance, surface, std::ptr::null());
    }
}

/// `VK_KHR_surface_maintenance1` questions about FIFO on every device: a compatibility count
/// (NULL array), the modes written into an array of one, and the scaled extents against the
/// surface's extents.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn maintenance1(gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance, devices and
    // surfaces are the loader's, used before they are destroyed; the other pointers point to locals
    // that outlive each call, each array as long as the count passed with it.
    unsafe {
        let extensions =
            [c"VK_KHR_surface", c"VK_EXT_headless_surface", c"VK_KHR_get_surface_capabilities2", c"VK_EXT_surface_maintenance1"];
        let (instance, devices) = instance_with(gipa, &extensions);
        let surface = headless_surface(gipa, instance);
        let caps2: PFN_vkGetPhysicalDeviceSurfaceCapabilities2KHR = function(gipa, instance, c"vkGetPhysicalDeviceSurfaceCapabilities2KHR");
        for &pd in &devices {
            let mode = VkSurfacePresentModeKHR { presentMode: VkPresentModeKHR::FIFO_KHR, ..Default::default() };
            let info = VkPhysicalDeviceSurfaceInfo2KHR { pNext: &mode as *const _ as *const c_void, surface, ..Default::default() };
            let mut modes = [VkPresentModeKHR::MAILBOX_KHR; 1];
            let mut compatibility = VkSurfacePresentModeCompatibilityKHR::default();
            let mut scaling = VkSurfacePresentScalingCapabilitiesKHR {
                pNext: &mut compatibility as *mut _ as *mut c_void,
                supportedPresentScaling: VkPresentScalingFlagsKHR(7),
                ..Default::default()
            };
            let mut caps = VkSurfaceCapabilities2KHR { pNext: &mut scaling as *mut _ as *mut c_void, ..Default::default() };
            let count_result = caps2.unwrap()(pd, &info, &mut caps);
            let count = compatibility.presentModeCount;
            compatibility.pPresentModes = modes.as_mut_ptr();
            compatibility.presentModeCount = 1;
            caps2.unwrap()(pd, &info, &mut caps);
            let surface_caps = &caps.surfaceCapabilities;
            let extents_kept = scaling.minScaledImageExtent.width == surface_caps.minImageExtent.width
                && scaling.maxScaledImageExtent.width == surface_caps.maxImageExtent.width;
            println!(
                "MAINTENANCE1 {} {count_result:?} count={count} mode={:?} scaling={} extents={extents_kept}",
                device_name(gipa, instance, pd),
                modes[0],
                scaling.supportedPresentScaling.0
            );
        }
    }
}

fn run(scenario: &str, env: &[(&str, String)]) -> (String, String) {
    let (ok, out, err) = child(scenario, env);
    assert!(ok, "{out}\n{err}");
    (out, err)
}

fn one_driver(name: &str, extensions: &str) -> Vec<(&'static str, String)> {
    let dir = common::scratch(name);
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    vec![
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", extensions.to_string()),
        ("VK_LOADER_DEBUG", "error,info".to_string()),
    ]
}

#[test]
fn presentation_support_is_false_with_the_khronos_messages() {
    let (out, err) = run("presentation", &one_driver("wsi-presentation", "+VK_KHR_xcb_surface"));
    assert_eq!(out.lines().filter(|l| *l == "SUPPORTED 0").count(), 2, "{out}");
    let (with_extension, without) = err.split_once("CALL with 1 extension(s)").expect(&err);
    let lacking = "ICD for selected physical device does not export vkGetPhysicalDeviceXcbPresentationSupportKHR!";
    assert!(with_extension.contains(lacking), "{err}");
    let not_enabled = "VK_KHR_xcb_surface extension not enabled. vkGetPhysicalDeviceXcbPresentationSupportKHR not executed!";
    assert!(without.contains(not_enabled) && !without.contains(lacking), "{err}");
}

#[test]
fn surface_capabilities2_ext_is_emulated_for_a_driver_without_it() {
    let env = one_driver("wsi-caps2ext", "+VK_EXT_headless_surface,VK_EXT_display_surface_counter");
    let (out, err) = run("capabilities2-ext", &env);
    assert!(out.contains("CAPS2EXT VK_SUCCESS same=true counters=0"), "{out}\n{err}");
    assert!(err.contains("vkGetPhysicalDeviceSurfaceCapabilities2EXT: Emulating call in ICD"), "{err}");
}

/// Driver A has the extensions (its own answers: nothing written by the test driver); driver B
/// lacks them (the loader's answers).
#[test]
fn surface_maintenance1_is_emulated_for_a_driver_without_it() {
    let dir = common::scratch("wsi-maintenance1");
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    let env = [
        ("VK_DRIVER_FILES", format!("{}:{}", a.display(), b.display())),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "integrated".to_string()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_A", "+VK_EXT_headless_surface,VK_KHR_get_surface_capabilities2,VK_EXT_surface_maintenance1".to_string()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_B", "+VK_EXT_headless_surface".to_string()),
    ];
    let (out, _) = run("maintenance1", &env);
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("MAINTENANCE1")).collect();
    assert_eq!(
        lines,
        [
            "MAINTENANCE1 Test Driver discrete 0 VK_SUCCESS count=0 mode=VK_PRESENT_MODE_MAILBOX_KHR scaling=7 extents=false",
            "MAINTENANCE1 Test Driver integrated 0 VK_SUCCESS count=1 mode=VK_PRESENT_MODE_FIFO_KHR scaling=0 extents=true",
        ]
    );
}

/// An interface-7 driver whose create function succeeds without writing a handle is handed NULL
/// (what it "made"), as the Khronos loader does, not the loader's `VkIcdSurface`, which it never
/// agreed to read.
#[test]
fn a_driver_that_made_a_null_surface_gets_null() {
    let mut env = one_driver("wsi-null-surface", "+VK_EXT_headless_surface");
    env.push(("VK_TEST_DRIVER_NULL_SURFACES", "1".to_string()));
    let (out, err) = run("null-surface", &env);
    assert!(out.contains("CAPS VK_SUCCESS min_images=1"), "{out}\n{err}");
}
