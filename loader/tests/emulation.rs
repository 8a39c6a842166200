//! A 1.0-only driver (no `VK_KHR_get_physical_device_properties2`, entry points withheld as a real
//! 1.0 driver would) beside a 1.3 driver: the application sees the same instance on both devices.
//! The `2` queries reach the 1.3 driver's own functions (it fills the pNext chain) and are emulated
//! for the 1.0 driver through the 1.0 queries (chain untouched); external handle capabilities
//! report no support; tool properties report no tools; every device is its own group, and a
//! device created with its group chained reaches the driver with the driver's handle in it.

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
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<Gipa> = unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: `gipa` is our libvulkan's vkGetInstanceProcAddr, and `lib` stays loaded to the end.
    unsafe {
        match scenario.as_str() {
            "display" => displays(*gipa),
            "not-enabled" => properties2_not_enabled(*gipa),
            _ => queries(*gipa, &scenario),
        }
    };
}

/// A 1.0 instance that enabled no extension calls the core `vkGetPhysicalDeviceProperties2`:
/// emulated even for the driver that has it (the loader gave it the extension for itself).
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn properties2_not_enabled(gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance and devices
    // are the loader's, used before they are destroyed; the other pointers point to locals that outlive
    // each call, each array as long as the count passed with it, or longer.
    unsafe {
        let Some((instance, devices)) = create_instance(gipa, &VkInstanceCreateInfo::default()) else { return };
        let properties2: PFN_vkGetPhysicalDeviceProperties2 = function(gipa, instance, c"vkGetPhysicalDeviceProperties2");
        for &pd in &devices {
            let mut driver = VkPhysicalDeviceDriverProperties::default();
            let mut props = VkPhysicalDeviceProperties2 { pNext: &mut driver as *mut _ as *mut c_void, ..Default::default() };
            properties2.unwrap()(pd, &mut props);
            let device = common::fixed_str(&props.properties.deviceName);
            println!("DEVICE {device} driver_name={:?}", common::fixed_str(&driver.driverName));
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

/// Creates the instance (printing the result) and lists its physical devices.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
/// `info` is a valid create info.
unsafe fn create_instance(gipa: Gipa, info: &VkInstanceCreateInfo) -> Option<(VkInstance, Vec<VkPhysicalDevice>)> {
    // SAFETY: each command comes from `function` with its own PFN type; the instance and devices
    // are the loader's, used before they are destroyed; the other pointers point to locals that outlive
    // each call, each array as long as the count passed with it, or longer.
    unsafe {
        let create: PFN_vkCreateInstance = function(gipa, VkInstance::NULL, c"vkCreateInstance");
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return None;
        }
        let enumerate: PFN_vkEnumeratePhysicalDevices = function(gipa, instance, c"vkEnumeratePhysicalDevices");
        let mut count = 0;
        enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
        Some((instance, devices))
    }
}

/// `core`: a 1.1 instance calling the core names; `khr`: a 1.0 instance with the extension
/// enabled, calling the KHR names.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn queries(gipa: Gipa, scenario: &str) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance and devices
    // are the loader's, used before they are destroyed; the other pointers point to locals that outlive
    // each call, each array as long as the count passed with it, or longer.
    unsafe {
        let khr = scenario == "khr";
        let suffix = if khr { "KHR" } else { "" };
        let name = |base: &str| std::ffi::CString::new(format!("{base}{suffix}")).unwrap();
        let app = VkApplicationInfo {
            apiVersion: vk_generated::make_api_version(0, 1, if khr { 0 } else { 1 }, 0),
            ..Default::default()
        };
        let extensions = [
            c"VK_KHR_get_physical_device_properties2".as_ptr(),
            c"VK_KHR_external_memory_capabilities".as_ptr(),
            c"VK_KHR_external_semaphore_capabilities".as_ptr(),
            c"VK_KHR_external_fence_capabilities".as_ptr(),
            c"VK_KHR_device_group_creation".as_ptr(),
        ];
        let info = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            enabledExtensionCount: if khr { extensions.len() as u32 } else { 0 },
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let Some((instance, devices)) = create_instance(gipa, &info) else { return };

        let properties2: PFN_vkGetPhysicalDeviceProperties2 = function(gipa, instance, &name("vkGetPhysicalDeviceProperties2"));
        let features2: PFN_vkGetPhysicalDeviceFeatures2 = function(gipa, instance, &name("vkGetPhysicalDeviceFeatures2"));
        let memory2: PFN_vkGetPhysicalDeviceMemoryProperties2 = function(gipa, instance, &name("vkGetPhysicalDeviceMemoryProperties2"));
        let queues2: PFN_vkGetPhysicalDeviceQueueFamilyProperties2 =
            function(gipa, instance, &name("vkGetPhysicalDeviceQueueFamilyProperties2"));
        let format2: PFN_vkGetPhysicalDeviceFormatProperties2 = function(gipa, instance, &name("vkGetPhysicalDeviceFormatProperties2"));
        let image2: PFN_vkGetPhysicalDeviceImageFormatProperties2 =
            function(gipa, instance, &name("vkGetPhysicalDeviceImageFormatProperties2"));
        let sparse2: PFN_vkGetPhysicalDeviceSparseImageFormatProperties2 =
            function(gipa, instance, &name("vkGetPhysicalDeviceSparseImageFormatProperties2"));
        let buffer: PFN_vkGetPhysicalDeviceExternalBufferProperties =
            function(gipa, instance, &name("vkGetPhysicalDeviceExternalBufferProperties"));
        let semaphore: PFN_vkGetPhysicalDeviceExternalSemaphoreProperties =
            function(gipa, instance, &name("vkGetPhysicalDeviceExternalSemaphoreProperties"));
        let fence: PFN_vkGetPhysicalDeviceExternalFenceProperties =
            function(gipa, instance, &name("vkGetPhysicalDeviceExternalFenceProperties"));
        let groups: PFN_vkEnumeratePhysicalDeviceGroups = function(gipa, instance, &name("vkEnumeratePhysicalDeviceGroups"));

        for &pd in &devices {
            let mut driver = VkPhysicalDeviceDriverProperties::default();
            let mut props = VkPhysicalDeviceProperties2 { pNext: &mut driver as *mut _ as *mut c_void, ..Default::default() };
            properties2.unwrap()(pd, &mut props);
            let device = common::fixed_str(&props.properties.deviceName);
            let (major, minor) = vk_generated::api_version_major_minor(props.properties.apiVersion);
            let driver_name = common::fixed_str(&driver.driverName);
            let chain_kept = props.pNext == &mut driver as *mut _ as *mut c_void && driver.sType == VkStructureType::PHYSICAL_DEVICE_DRIVER_PROPERTIES;

            let mut features = VkPhysicalDeviceFeatures2::default();
            features2.unwrap()(pd, &mut features);
            let mut memory = VkPhysicalDeviceMemoryProperties2::default();
            memory2.unwrap()(pd, &mut memory);
            let mut n = 0;
            queues2.unwrap()(pd, &mut n, std::ptr::null_mut());
            let mut families = vec![VkQueueFamilyProperties2::default(); n as usize];
            queues2.unwrap()(pd, &mut n, families.as_mut_ptr());
            let family = families.first().map(|f| (f.sType, f.queueFamilyProperties.queueCount, f.queueFamilyProperties.queueFlags.0));
            let mut format = VkFormatProperties2 {
                formatProperties: VkFormatProperties { linearTilingFeatures: VkFormatFeatureFlags(!0), ..Default::default() },
                ..Default::default()
            };
            format2.unwrap()(pd, VkFormat::R8G8B8A8_UNORM, &mut format);
            let image_info = VkPhysicalDeviceImageFormatInfo2 { format: VkFormat::R8G8B8A8_UNORM, ..Default::default() };
            let mut image = VkImageFormatProperties2::default();
            let image_r = image2.unwrap()(pd, &image_info, &mut image);
            let sparse_info = VkPhysicalDeviceSparseImageFormatInfo2::default();
            let mut sparse_n = 99;
            sparse2.unwrap()(pd, &sparse_info, &mut sparse_n, std::ptr::null_mut());

            // Pre-filled with every bit: the loader must write "nothing supported".
            let mut buffer_props = VkExternalBufferProperties::default();
            buffer_props.externalMemoryProperties.externalMemoryFeatures.0 = !0;
            buffer_props.externalMemoryProperties.compatibleHandleTypes.0 = !0;
            buffer.unwrap()(pd, &VkPhysicalDeviceExternalBufferInfo::default(), &mut buffer_props);
            let mut semaphore_props = VkExternalSemaphoreProperties::default();
            semaphore_props.externalSemaphoreFeatures.0 = !0;
            semaphore.unwrap()(pd, &VkPhysicalDeviceExternalSemaphoreInfo::default(), &mut semaphore_props);
            let mut fence_props = VkExternalFenceProperties::default();
            fence_props.externalFenceFeatures.0 = !0;
            fence.unwrap()(pd, &VkPhysicalDeviceExternalFenceInfo::default(), &mut fence_props);
            let external = buffer_props.externalMemoryProperties.externalMemoryFeatures.0
                | buffer_props.externalMemoryProperties.compatibleHandleTypes.0
                | semaphore_props.externalSemaphoreFeatures.0
                | fence_props.externalFenceFeatures.0;

            println!(
                "DEVICE {device} api={major}.{minor} driver_name={driver_name:?} chain_kept={chain_kept} robust={} memory_types={} families={n}/{family:?} format_linear={} image={image_r:?} sparse={sparse_n} external={external}",
                features.features.robustBufferAccess,
                memory.memoryProperties.memoryTypeCount,
                format.formatProperties.linearTilingFeatures.0,
            );
            if !khr {
                let tools: PFN_vkGetPhysicalDeviceToolProperties = function(gipa, instance, c"vkGetPhysicalDeviceToolProperties");
                let mut tool_count = 99;
                let r = tools.unwrap()(pd, &mut tool_count, std::ptr::null_mut());
                println!("TOOLS {device} {r:?} {tool_count}");
            }
        }
        let mut group_count = 0;
        groups.unwrap()(instance, &mut group_count, std::ptr::null_mut());
        let mut group_props = vec![VkPhysicalDeviceGroupProperties::default(); group_count as usize];
        groups.unwrap()(instance, &mut group_count, group_props.as_mut_ptr());
        let singles = group_props.iter().filter(|g| g.physicalDeviceCount == 1).count();
        println!("GROUPS {group_count} single={singles}");
        for group in &group_props {
            create_in_group(gipa, instance, group.physicalDevices[0]);
        }
        let destroy: PFN_vkDestroyInstance = function(gipa, instance, c"vkDestroyInstance");
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Creates a device with its group chained second (after a features struct), as applications
/// using device groups do, and says whether the application's chain came back as it was.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded, `instance` a live instance of it and
/// `pd` one of its physical devices.
unsafe fn create_in_group(gipa: Gipa, instance: VkInstance, pd: VkPhysicalDevice) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance and devices
    // are the loader's, used before they are destroyed; the other pointers point to locals that outlive
    // each call, each array as long as the count passed with it, or longer.
    unsafe {
        let group = VkDeviceGroupDeviceCreateInfo { physicalDeviceCount: 1, pPhysicalDevices: &pd, ..Default::default() };
        let features = VkPhysicalDeviceFeatures2 { pNext: &group as *const _ as *mut c_void, ..Default::default() };
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo {
            pNext: &features as *const _ as *const c_void,
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue,
            ..Default::default()
        };
        let create: PFN_vkCreateDevice = function(gipa, instance, c"vkCreateDevice");
        let mut device = VkDevice::NULL;
        let r = create.unwrap()(pd, &info, std::ptr::null(), &mut device);
        let restored = features.pNext == &group as *const _ as *mut c_void && std::ptr::eq(group.pPhysicalDevices, &pd);
        let mut props = VkPhysicalDeviceProperties::default();
        let get: PFN_vkGetPhysicalDeviceProperties = function(gipa, instance, c"vkGetPhysicalDeviceProperties");
        get.unwrap()(pd, &mut props);
        let name = common::fixed_str(&props.deviceName);
        println!("DEVICE_IN_GROUP {name} {r:?} chain_restored={restored}");
        if r == VkResult::SUCCESS {
            let destroy: PFN_vkDestroyDevice = function(gipa, instance, c"vkDestroyDevice");
            destroy.unwrap()(device, std::ptr::null());
        }
    }
}

/// `VK_KHR_get_display_properties2` on every device: the display, its plane, mode and capabilities.
///
/// # Safety
/// `gipa` is a loader's vkGetInstanceProcAddr, still loaded.
unsafe fn displays(gipa: Gipa) {
    // SAFETY: each command comes from `function` with its own PFN type; the instance and devices
    // are the loader's, used before they are destroyed; the other pointers point to locals that outlive
    // each call, each array as long as the count passed with it, or longer.
    // A display name the driver gives is NULL (checked) or a C string.
    unsafe {
        let extensions = [c"VK_KHR_surface".as_ptr(), c"VK_KHR_display".as_ptr(), c"VK_KHR_get_display_properties2".as_ptr()];
        let info = VkInstanceCreateInfo {
            enabledExtensionCount: extensions.len() as u32,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let Some((instance, devices)) = create_instance(gipa, &info) else { return };
        let props: PFN_vkGetPhysicalDeviceProperties = function(gipa, instance, c"vkGetPhysicalDeviceProperties");
        let displays: PFN_vkGetPhysicalDeviceDisplayProperties2KHR = function(gipa, instance, c"vkGetPhysicalDeviceDisplayProperties2KHR");
        let planes: PFN_vkGetPhysicalDeviceDisplayPlaneProperties2KHR =
            function(gipa, instance, c"vkGetPhysicalDeviceDisplayPlaneProperties2KHR");
        let modes: PFN_vkGetDisplayModeProperties2KHR = function(gipa, instance, c"vkGetDisplayModeProperties2KHR");
        let caps: PFN_vkGetDisplayPlaneCapabilities2KHR = function(gipa, instance, c"vkGetDisplayPlaneCapabilities2KHR");
        for &pd in &devices {
            let mut p = VkPhysicalDeviceProperties::default();
            props.unwrap()(pd, &mut p);
            let device = common::fixed_str(&p.deviceName);
            let mut display = [VkDisplayProperties2KHR::default()];
            let mut n = 1;
            let d_r = displays.unwrap()(pd, &mut n, display.as_mut_ptr());
            let d = display[0].displayProperties;
            let name = if d.displayName.is_null() { "".into() } else { CStr::from_ptr(d.displayName).to_string_lossy().into_owned() };
            let mut plane = [VkDisplayPlaneProperties2KHR::default()];
            let mut np = 1;
            let p_r = planes.unwrap()(pd, &mut np, plane.as_mut_ptr());
            let mut mode = [VkDisplayModeProperties2KHR::default()];
            let mut nm = 1;
            let m_r = modes.unwrap()(pd, d.display, &mut nm, mode.as_mut_ptr());
            let m = mode[0].displayModeProperties;
            let plane_info = VkDisplayPlaneInfo2KHR { mode: m.displayMode, planeIndex: 0, ..Default::default() };
            let mut capabilities = VkDisplayPlaneCapabilities2KHR::default();
            let c_r = caps.unwrap()(pd, &plane_info, &mut capabilities);
            let kept = display[0].sType == VkStructureType::DISPLAY_PROPERTIES_2_KHR
                && mode[0].sType == VkStructureType::DISPLAY_MODE_PROPERTIES_2_KHR
                && capabilities.sType == VkStructureType::DISPLAY_PLANE_CAPABILITIES_2_KHR;
            println!(
                "DISPLAY {device} {d_r:?}/{n} {name:?} {}x{} plane={p_r:?}/{np}/{} mode={m_r:?}/{nm}/{} caps={c_r:?}/{}x{} stype_kept={kept}",
                d.physicalResolution.width,
                d.physicalResolution.height,
                plane[0].displayPlaneProperties.currentDisplay == d.display && !d.display.is_null(),
                m.parameters.refreshRate,
                capabilities.capabilities.maxDstExtent.width,
                capabilities.capabilities.maxDstExtent.height,
            );
        }
        let destroy: PFN_vkDestroyInstance = function(gipa, instance, c"vkDestroyInstance");
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// The 1.3 driver's instance extensions: the default ones and every one `queries` enables.
const NEW_DRIVER_EXTENSIONS: &str = "+VK_KHR_external_memory_capabilities,VK_KHR_external_semaphore_capabilities,\
VK_KHR_external_fence_capabilities,VK_KHR_device_group_creation";

fn run(scenario: &str) -> (String, String) {
    let display = scenario == "display";
    let dir = common::scratch(&format!("emulation-{scenario}"));
    let old = common::tagged_driver(&dir, "old");
    let new = common::tagged_driver(&dir, "new");
    let manifest_old = common::driver_manifest(&dir, "old.json", &old);
    let manifest_new = common::driver_manifest(&dir, "new.json", &new);
    let (ok, out, err) = child(
        scenario,
        &[
            ("VK_DRIVER_FILES", format!("{}:{}", manifest_old.display(), manifest_new.display())),
            ("VK_TEST_DRIVER_STRICT_ENTRY_POINTS", "1".into()),
            ("VK_TEST_DRIVER_API_VERSION_OLD", "1.0".into()),
            ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_OLD", if display { "VK_KHR_surface,VK_KHR_display" } else { "" }.into()),
            // The 1.3 driver has the extensions the application enables (an instance extension no
            // driver has cannot be enabled); the 1.0 driver has none of them.
            ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_NEW", if display { "+VK_KHR_display,VK_KHR_get_display_properties2" } else { NEW_DRIVER_EXTENSIONS }.into()),
            ("VK_TEST_DRIVER_DEVICE_EXTENSIONS_OLD", "".into()),
            ("VK_TEST_DRIVER_DEVICES_OLD", "integrated".into()),
            ("VK_TEST_DRIVER_API_VERSION_NEW", "1.3".into()),
            ("VK_TEST_DRIVER_DEVICES_NEW", "discrete".into()),
        ],
    );
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}\n{err}");
    (out, err)
}

/// What both scenarios must show.
fn check(out: &str, err: &str) {
    // The 1.3 driver answers itself: its properties chain is filled.
    let new = "DEVICE Test Driver discrete 0 api=1.3 driver_name=\"vk_test_driver\" chain_kept=true robust=1 memory_types=2 families=1/Some((VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2, 2, 7)) format_linear=0 image=VK_ERROR_FORMAT_NOT_SUPPORTED sparse=0 external=0";
    // The 1.0 driver is emulated: same answers from the 1.0 queries, its chain left alone.
    let old = "DEVICE Test Driver integrated 0 api=1.0 driver_name=\"\" chain_kept=true robust=1 memory_types=2 families=1/Some((VK_STRUCTURE_TYPE_QUEUE_FAMILY_PROPERTIES_2, 2, 7)) format_linear=0 image=VK_ERROR_FORMAT_NOT_SUPPORTED sparse=0 external=0";
    assert!(out.contains(new), "missing {new}\n{out}\n{err}");
    assert!(out.contains(old), "missing {old}\n{out}\n{err}");
    assert!(out.contains("GROUPS 2 single=2"), "{out}");
    // The driver sees its own handle in the group; the application's chain is left as it was.
    for device in ["discrete", "integrated"] {
        assert!(out.contains(&format!("DEVICE_IN_GROUP Test Driver {device} 0 VK_SUCCESS chain_restored=true")), "{out}\n{err}");
    }
}

#[test]
fn a_1_0_driver_beside_a_1_3_driver_on_a_1_1_instance() {
    let (out, err) = run("core");
    check(&out, &err);
    for device in ["discrete", "integrated"] {
        assert!(out.contains(&format!("TOOLS Test Driver {device} 0 VK_SUCCESS 0")), "{out}");
    }
}

#[test]
fn a_1_0_driver_beside_a_1_3_driver_with_the_khr_extensions() {
    let (out, err) = run("khr");
    check(&out, &err);
}

#[test]
fn properties2_on_an_instance_that_did_not_enable_it_is_emulated() {
    let dir = common::scratch("emulation-not-enabled");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [("VK_DRIVER_FILES", manifest.display().to_string()), ("VK_LOADER_DEBUG", "info".to_string())];
    let (ok, out, err) = child("not-enabled", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}\n{err}");
    assert!(out.contains("DEVICE Test Driver discrete 0 driver_name=\"\""), "the driver answered:\n{out}\n{err}");
    assert!(err.contains("vkGetPhysicalDeviceProperties2: Emulating call in ICD"), "{err}");
}

/// The 1.0 driver has `VK_KHR_display` but not `VK_KHR_get_display_properties2` (emulated); the
/// 1.3 driver has both (its own functions).
#[test]
fn display_properties2_for_a_driver_with_only_vk_khr_display() {
    let (out, err) = run("display");
    for device in ["discrete", "integrated"] {
        let expected = format!("DISPLAY Test Driver {device} 0 VK_SUCCESS/1 \"Test Display\" 1920x1080 plane=VK_SUCCESS/1/true mode=VK_SUCCESS/1/60000 caps=VK_SUCCESS/1920x1080 stype_kept=true");
        assert!(out.contains(&expected), "missing {expected}\n{out}\n{err}");
    }
}
