//! The loader with the project's test driver: discovery through `VK_DRIVER_FILES`, bad manifests
//! skipped with their reason, device order, devices and dispatch.
//!
//! Each scenario runs in a child process (this test binary re-run with `SCENARIO` set), because the
//! loader reads the environment and the process keeps what it dlopens.

mod common;

use common::child;

use std::ffi::{c_char, CStr};
use std::path::Path;

use vk_generated::types::*;

/// The child side: one entry point that dispatches on `SCENARIO`.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    // DIRECT_DRIVER is the test driver, whose vk_icdGetInstanceProcAddr has the type it is read as.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        // Group enumeration is Vulkan 1.1: those scenarios ask for 1.3.
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let wants_1_3 = matches!(scenario.as_str(), "groups" | "incomplete" | "gpa-1.3" | "changing-devices");
        let mut info = VkInstanceCreateInfo { pApplicationInfo: if wants_1_3 { &app } else { std::ptr::null() }, ..Default::default() };
        // DIRECT_DRIVER=<library> DIRECT_MODE=exclusive|inclusive|not-enabled: hand that driver over
        // through VK_LUNARG_direct_driver_loading.
        let direct_lib = std::env::var("DIRECT_DRIVER").ok().map(|p| libloading::Library::new(p).unwrap());
        let direct_gipa = direct_lib.as_ref().map(|l| *l.get::<PFN_vkGetInstanceProcAddrLUNARG>(b"vk_icdGetInstanceProcAddr\0").unwrap());
        let direct_info = VkDirectDriverLoadingInfoLUNARG { pfnGetInstanceProcAddr: direct_gipa.flatten(), ..Default::default() };
        let mode = std::env::var("DIRECT_MODE").unwrap_or_default();
        let direct_list = VkDirectDriverLoadingListLUNARG {
            mode: if mode == "exclusive" { VkDirectDriverLoadingModeLUNARG::EXCLUSIVE_LUNARG } else { VkDirectDriverLoadingModeLUNARG::INCLUSIVE_LUNARG },
            driverCount: 1,
            pDrivers: &direct_info,
            ..Default::default()
        };
        // REQUEST_LAYER=<name>: asked for in ppEnabledLayerNames.
        let requested_layer = std::env::var("REQUEST_LAYER").ok().map(|n| std::ffi::CString::new(n).unwrap());
        let layer_names = requested_layer.iter().map(|n| n.as_ptr()).collect::<Vec<_>>();
        info.enabledLayerCount = layer_names.len() as u32;
        info.ppEnabledLayerNames = layer_names.as_ptr();
        let direct_extension = [c"VK_LUNARG_direct_driver_loading".as_ptr()];
        // EXTENSION=<name>: enabled on the instance.
        let extension = std::env::var("EXTENSION").ok().map(|n| std::ffi::CString::new(n).unwrap());
        let extension_names = extension.iter().map(|n| n.as_ptr()).collect::<Vec<_>>();
        info.enabledExtensionCount = extension_names.len() as u32;
        info.ppEnabledExtensionNames = extension_names.as_ptr();
        if direct_lib.is_some() {
            info.pNext = &direct_list as *const _ as *const std::ffi::c_void;
            if mode != "not-enabled" {
                info.enabledExtensionCount = 1;
                info.ppEnabledExtensionNames = direct_extension.as_ptr();
            }
        }
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let devices = common::list_devices(&get, instance);
        let props: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        let name_of = |d: VkPhysicalDevice| {
            let mut p = VkPhysicalDeviceProperties::default();
            props.unwrap()(d, &mut p);
            common::fixed_str(&p.deviceName)
        };
        match scenario.as_str() {
            "draw" => draw(&get, instance, devices[0]),
            "groups" => {
                let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
                let mut count = 0;
                groups.unwrap()(instance, &mut count, std::ptr::null_mut());
                // Each struct's pNext chain goes to the driver (the test driver fills driver
                // properties found there).
                let mut chained = vec![VkPhysicalDeviceDriverProperties::default(); count as usize];
                let mut list = vec![VkPhysicalDeviceGroupProperties::default(); count as usize];
                for (g, next) in list.iter_mut().zip(&mut chained) {
                    g.pNext = next as *mut VkPhysicalDeviceDriverProperties as *mut std::ffi::c_void;
                }
                groups.unwrap()(instance, &mut count, list.as_mut_ptr());
                for (g, next) in list.iter().zip(&chained) {
                    let names: Vec<String> = g.physicalDevices[..g.physicalDeviceCount as usize].iter().map(|d| name_of(*d)).collect();
                    println!("GROUP {}", names.join(","));
                    println!("CHAINED {}", common::fixed_str(&next.driverName));
                }
            }
            "incomplete" => incomplete(&get, instance, devices.len() as u32),
            "changing-devices" => changing_devices(&get, instance),
            "debug-utils-gpa" => debug_utils_gpa(&get, instance, devices[0]),
            "extensions" => {
                let enumerate: PFN_vkEnumerateInstanceExtensionProperties =
                    std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
                let mut count = 0;
                enumerate.unwrap()(std::ptr::null(), &mut count, std::ptr::null_mut());
                let mut props = vec![VkExtensionProperties::default(); count as usize];
                enumerate.unwrap()(std::ptr::null(), &mut count, props.as_mut_ptr());
                for p in &props {
                    println!("EXTENSION {}", common::fixed_str(&p.extensionName));
                }
            }
            "gpa" => {
                for name in [c"vkEnumeratePhysicalDeviceGroups", c"vkGetPhysicalDeviceProperties2", c"vkGetPhysicalDeviceProperties2KHR", c"vkCmdDraw", c"vkCreateDebugUtilsMessengerEXT", c"vkNotACommand"] {
                    println!("GPA {} {}", name.to_string_lossy(), get(instance, name).is_some());
                }
                global_commands_through_an_instance(&get, instance);
            }
            "gpa-1.3" => global_commands_through_an_instance(&get, instance),
            _ => {}
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Whether `vkGetInstanceProcAddr` with an instance answers for global commands.
fn global_commands_through_an_instance(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance) {
    for name in [c"vkCreateInstance", c"vkEnumerateInstanceExtensionProperties"] {
        println!("GLOBAL {} {}", name.to_string_lossy(), get(instance, name).is_some());
    }
    println!("GLOBAL vkGetInstanceProcAddr {}", get(instance, c"vkGetInstanceProcAddr").is_some());
}

/// Creates a device, records draws through the GDPA pointer, and reads the driver's counter.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks., and `pd` one of its physical devices.
unsafe fn draw(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, pd: VkPhysicalDevice) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    // A command buffer is a dispatchable handle: its first word is readable while it lives.
    unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        // A device group of one, naming the application's (loader) handle.
        let members = [pd];
        let group = VkDeviceGroupDeviceCreateInfo { physicalDeviceCount: 1, pPhysicalDevices: members.as_ptr(), ..Default::default() };
        let info = VkDeviceCreateInfo {
            pNext: &group as *const _ as *const std::ffi::c_void,
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue,
            ..Default::default()
        };
        let mut device = VkDevice::NULL;
        assert_eq!(create.unwrap()(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        assert_eq!(group.pPhysicalDevices, members.as_ptr(), "the application's struct is restored");
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let dev = |name: &CStr| gdpa.unwrap()(device, name.as_ptr());
        let pool_create: PFN_vkCreateCommandPool = std::mem::transmute(dev(c"vkCreateCommandPool"));
        let mut pool = VkCommandPool::NULL;
        pool_create.unwrap()(device, &VkCommandPoolCreateInfo::default(), std::ptr::null(), &mut pool);
        let alloc: PFN_vkAllocateCommandBuffers = std::mem::transmute(dev(c"vkAllocateCommandBuffers"));
        let info = VkCommandBufferAllocateInfo { commandPool: pool, commandBufferCount: 1, ..Default::default() };
        let mut cmd = VkCommandBuffer::NULL;
        assert_eq!(alloc.unwrap()(device, &info, &mut cmd), VkResult::SUCCESS);
        if std::env::var_os("VK_TEST_DRIVER_NO_MAGIC").is_some() {
            // The loader must have left the driver's first word alone.
            println!("FIRST WORD {:#x}", *(cmd.0 as *const usize));
            return;
        }
        let begin: PFN_vkBeginCommandBuffer = std::mem::transmute(dev(c"vkBeginCommandBuffer"));
        begin.unwrap()(cmd, &VkCommandBufferBeginInfo::default());
        // Through the device-level pointer from vkGetInstanceProcAddr: the loader's trampoline.
        let draw_trampoline: PFN_vkCmdDraw = std::mem::transmute(get(instance, c"vkCmdDraw"));
        let draw_direct: PFN_vkCmdDraw = std::mem::transmute(dev(c"vkCmdDraw"));
        assert_ne!(draw_trampoline.map(|f| f as usize), draw_direct.map(|f| f as usize), "GDPA gives the driver's own pointer");
        draw_trampoline.unwrap()(cmd, 3, 1, 0, 0);
        draw_direct.unwrap()(cmd, 3, 1, 0, 0);
        let count: unsafe extern "system" fn(VkCommandBuffer) -> u32 = std::mem::transmute(dev(c"vkGetTestDriverDrawCountTEST"));
        println!("DRAWS {}", count(cmd));
        let destroy_pool: PFN_vkDestroyCommandPool = std::mem::transmute(dev(c"vkDestroyCommandPool"));
        destroy_pool.unwrap()(device, pool, std::ptr::null());
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(dev(c"vkDestroyDevice"));
        destroy.unwrap()(device, std::ptr::null());
    }
}

/// Every loader enumeration asked for one item fewer than it has: `VK_INCOMPLETE` and a count of
/// what was written.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks., with `devices` (at least 1) physical devices, one
/// group each, and at least one instance extension.
unsafe fn incomplete(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, devices: u32) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    // Each array is as long as the count passed with it, or longer.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut handles = vec![VkPhysicalDevice::NULL; devices as usize];
        let mut count = devices - 1;
        let result = enumerate.unwrap()(instance, &mut count, handles.as_mut_ptr());
        println!("DEVICES {result:?} {count} {}", handles[count as usize].is_null());
        let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
        let mut list = vec![VkPhysicalDeviceGroupProperties::default(); devices as usize];
        let mut count = devices - 1;
        let result = groups.unwrap()(instance, &mut count, list.as_mut_ptr());
        println!("GROUPS {result:?} {count} {}", list[count as usize].physicalDeviceCount);
        let extensions: PFN_vkEnumerateInstanceExtensionProperties =
            std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
        let mut total = 0;
        extensions.unwrap()(std::ptr::null(), &mut total, std::ptr::null_mut());
        let mut props = vec![VkExtensionProperties::default(); total as usize];
        let mut count = total - 1;
        let result = extensions.unwrap()(std::ptr::null(), &mut count, props.as_mut_ptr());
        println!("EXTENSIONS {result:?} {} {}", total - count, props[count as usize].extensionName[0]);
    }
}

/// Whether both GetProcAddr functions hand out `vkSetDebugUtilsObjectNameEXT`, a device command
/// of an instance extension (the test driver has it whatever is enabled): `GIPA <bool>` and
/// `GDPA <bool>` lines.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks., and `pd` one of its physical devices.
unsafe fn debug_utils_gpa(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, pd: VkPhysicalDevice) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        assert_eq!(create.unwrap()(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let name = c"vkSetDebugUtilsObjectNameEXT";
        println!("GIPA {}", get(instance, name).is_some());
        println!("GDPA {}", gdpa.unwrap()(device, name.as_ptr()).is_some());
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
        destroy.unwrap()(device, std::ptr::null());
    }
}

/// The driver's devices change under the live instance (`VK_TEST_DRIVER_VISIBLE_DEVICES` set
/// between calls): each enumeration sees the change, a device keeps its handle, and no device at
/// all is `VK_ERROR_INITIALIZATION_FAILED`. Prints `ENUMERATE <result> <count> <handles seen
/// before>` and `GROUPS <result> <count>` lines.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks. of the test driver, created with the Vulkan 1.1
/// group commands available.
unsafe fn changing_devices(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    // Each array is as long as the count passed with it.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
        let mut seen: Vec<VkPhysicalDevice> = Vec::new();
        let mut call = |visible: &str, room: u32| {
            std::env::set_var("VK_TEST_DRIVER_VISIBLE_DEVICES", visible);
            let mut handles = vec![VkPhysicalDevice::NULL; room as usize];
            let mut count = room;
            let result = enumerate.unwrap()(instance, &mut count, handles.as_mut_ptr());
            let known = handles[..count.min(room) as usize].iter().filter(|h| seen.contains(h)).count();
            println!("ENUMERATE {visible} {result:?} {count} {known}");
            seen.extend(&handles[..count.min(room) as usize]);
        };
        call("0,1", 2);
        call("0,1,2,3", 2);
        call("0,1,2,3", 4);
        call("0,2,3", 4);
        call("", 4);
        std::env::set_var("VK_TEST_DRIVER_VISIBLE_DEVICES", "");
        let mut count = 0;
        println!("GROUPS {:?} {count}", groups.unwrap()(instance, &mut count, std::ptr::null_mut()));
        std::env::set_var("VK_TEST_DRIVER_VISIBLE_DEVICES", "0");
        std::env::set_var("VK_TEST_DRIVER_ENUMERATE_RESULT", "-3");
        let mut count = 0;
        println!("ENUMERATE failing {:?} {count}", enumerate.unwrap()(instance, &mut count, std::ptr::null_mut()));
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

fn devices(stdout: &str) -> Vec<&str> {
    stdout.lines().filter_map(|l| l.strip_prefix("DEVICE ")).collect()
}

#[test]
fn devices_are_ordered_discrete_integrated_virtual_other_cpu() {
    let dir = common::scratch("order");
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    let env = [
        ("VK_DRIVER_FILES", format!("{}:{}", path(&a), path(&b))),
        ("VK_TEST_DRIVER_DEVICES_A", "cpu,other".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "virtual,integrated,discrete".to_string()),
    ];
    let (ok, out, err) = child("list", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(
        devices(&out),
        ["Test Driver discrete 2", "Test Driver integrated 1", "Test Driver virtual 0", "Test Driver other 1", "Test Driver cpu 0"]
    );
    // VK_LOADER_DISABLE_SELECT: no sorting; as with the Khronos loader, the driver found last
    // comes first, each driver's devices in its own order.
    let mut keep = env.to_vec();
    keep.push(("VK_LOADER_DISABLE_SELECT", "1".into()));
    let (_, out, _) = child("list", &keep);
    assert_eq!(devices(&out), ["Test Driver virtual 0", "Test Driver integrated 1", "Test Driver discrete 2", "Test Driver cpu 0", "Test Driver other 1"]);
    // ... when it is a number other than 0, as for the Khronos loader.
    let mut zero = env.to_vec();
    zero.push(("VK_LOADER_DISABLE_SELECT", "0".into()));
    let (_, out, _) = child("list", &zero);
    assert_eq!(devices(&out)[0], "Test Driver discrete 2");
    // VK_LOADER_DEVICE_SELECT puts the named device first.
    let mut select = env.to_vec();
    select.push(("VK_TEST_DRIVER_DEVICES_A", "cpu:1234:5678,other".into()));
    select.push(("VK_LOADER_DEVICE_SELECT", "1234:5678".into()));
    let (_, out, _) = child("list", &select);
    assert_eq!(devices(&out)[0], "Test Driver cpu 0", "{out}");
}

#[test]
fn bad_manifests_are_skipped_and_named() {
    let dir = common::scratch("bad");
    let good = common::driver_manifest(&dir, "good.json", &common::test_driver());
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let missing = common::driver_manifest(&dir, "missing.json", &dir.join("libnot_there.so"));
    let truncated_lib = dir.join("libtruncated.so");
    std::fs::write(&truncated_lib, &std::fs::read(common::test_driver()).unwrap()[..4096]).unwrap();
    let truncated = common::driver_manifest(&dir, "truncated.json", &truncated_lib);
    let text_lib = dir.join("libtext.so");
    std::fs::write(&text_lib, "this is not a shared library\n".repeat(100)).unwrap();
    let not_elf = common::driver_manifest(&dir, "notelf.json", &text_lib);
    // A real shared library without any driver entry point.
    let no_entry = common::driver_manifest(&dir, "noentry.json", &common::system_library("libm.so.6"));
    // The test driver with its ELF machine changed to AArch64 (e_machine at offset 18).
    let mut foreign = std::fs::read(common::test_driver()).unwrap();
    foreign[18..20].copy_from_slice(&183u16.to_le_bytes());
    let foreign_lib = dir.join("libforeign.so");
    std::fs::write(&foreign_lib, foreign).unwrap();
    let other_arch = common::driver_manifest(&dir, "otherarch.json", &foreign_lib);
    let bad = [&broken, &missing, &truncated, &not_elf, &no_entry, &other_arch].map(|p| path(p)).join(":");
    let (ok, out, err) = child("list", &[("VK_DRIVER_FILES", format!("{bad}:{}", path(&good)))]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "good driver beside bad ones still works: {out}{err}");
    assert_eq!(devices(&out).len(), 1);
    // With no good driver: VK_ERROR_INCOMPATIBLE_DRIVER and one error line per rejected manifest
    // (on stderr with VK_LOADER_DEBUG=error).
    let (_, out, err) = child("list", &[("VK_DRIVER_FILES", bad.clone()), ("VK_LOADER_DEBUG", "error".into())]);
    assert!(out.contains("RESULT VK_ERROR_INCOMPATIBLE_DRIVER"), "{out}");
    let expected = [
        (&broken, "invalid JSON"),
        (&missing, "libnot_there.so"),
        (&truncated, "truncated"),
        (&not_elf, "not an ELF"),
        (&no_entry, "exports neither vk_icdGetInstanceProcAddr nor vkGetInstanceProcAddr"),
        (&other_arch, "another architecture"),
    ];
    for (manifest, why) in expected {
        let line = err.lines().find(|l| l.contains(&path(manifest))).unwrap_or_else(|| panic!("no line for {manifest:?}:\n{err}"));
        assert!(line.contains(why), "{line}");
    }
    // A library for another architecture (the other half of a multilib install) is skipped
    // quietly: no warning, unlike the broken ones.
    let (_, _, err) = child("list", &[("VK_DRIVER_FILES", format!("{bad}:{}", path(&good))), ("VK_LOADER_DEBUG", "warn".into())]);
    assert!(err.contains(&path(&truncated)) && !err.contains(&path(&other_arch)), "{err}");
}

#[test]
fn failing_driver_is_skipped() {
    let dir = common::scratch("fail");
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    let env = [
        ("VK_DRIVER_FILES", format!("{}:{}", path(&a), path(&b))),
        ("VK_TEST_DRIVER_FAIL_CREATE_INSTANCE_A", "1".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "integrated".to_string()),
    ];
    let (ok, out, err) = child("list", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(devices(&out), ["Test Driver integrated 0"]);
}

#[test]
fn draws_reach_the_driver_through_trampoline_and_gdpa_pointer() {
    let dir = common::scratch("draw");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let (ok, out, err) = child("draw", &[("VK_DRIVER_FILES", path(&manifest))]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("DRAWS 2"), "{out}{err}");
}

/// Two tagged drivers, A (cpu, vendor 0x1002, devices 0x10-0x11) and B (discrete, vendor 0x10de,
/// device 0x20), as a driver file list.
fn two_drivers(name: &str) -> Vec<(&'static str, String)> {
    let dir = common::scratch(name);
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    vec![
        ("VK_DRIVER_FILES", format!("{}:{}", path(&a), path(&b))),
        ("VK_TEST_DRIVER_DEVICES_A", "cpu:1002:10,cpu:1002:11".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "discrete:10de:20".to_string()),
    ]
}

fn with(env: &[(&'static str, String)], extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    env.iter().cloned().chain(extra.iter().map(|(k, v)| (*k, v.to_string()))).collect()
}

#[test]
fn id_filters_hide_devices() {
    let env = two_drivers("filters");
    let list = |extra: &[(&'static str, &str)]| {
        let (ok, out, err) = child("list", &with(&env, extra));
        assert!(ok, "{out}{err}");
        devices(&out).into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(list(&[]), ["Test Driver discrete 0", "Test Driver cpu 0", "Test Driver cpu 1"]);
    assert_eq!(list(&[("VK_LOADER_VENDOR_ID_FILTER", "0x1002")]), ["Test Driver cpu 0", "Test Driver cpu 1"]);
    assert_eq!(list(&[("VK_LOADER_DEVICE_ID_FILTER", "0x11-0x20")]), ["Test Driver discrete 0", "Test Driver cpu 1"]);
    assert_eq!(list(&[("VK_LOADER_DEVICE_ID_FILTER", "16"), ("VK_LOADER_VENDOR_ID_FILTER", "0x1002")]), ["Test Driver cpu 0"]);
    // Driver ids come from VkPhysicalDeviceDriverProperties (13 = VK_DRIVER_ID_MESA_LLVMPIPE).
    assert_eq!(
        list(&[("VK_TEST_DRIVER_DRIVER_ID_B", "13"), ("VK_LOADER_DRIVER_ID_FILTER", "13")]),
        ["Test Driver discrete 0"]
    );
    // Asked of a device that advertises neither Vulkan 1.2 nor VK_KHR_driver_properties too.
    assert_eq!(
        list(&[("VK_TEST_DRIVER_API_VERSION_B", "1.1"), ("VK_TEST_DRIVER_DRIVER_ID_B", "13"), ("VK_LOADER_DRIVER_ID_FILTER", "13")]),
        ["Test Driver discrete 0"]
    );
}

#[test]
fn drivers_groups_are_kept_and_ordered_like_devices() {
    let env = with(&two_drivers("groups"), &[("VK_TEST_DRIVER_GROUP_SIZE_A", "2")]);
    let (ok, out, err) = child("groups", &env);
    assert!(ok, "{out}{err}");
    let groups: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("GROUP ")).collect();
    assert_eq!(groups, ["Test Driver discrete 0", "Test Driver cpu 0,Test Driver cpu 1"]);
    // The application's pNext chains reached the drivers.
    assert_eq!(out.lines().filter(|l| *l == "CHAINED vk_test_driver").count(), 2, "{out}");
    // A hidden device hides its group (as with the Khronos loader: no hidden device is reachable).
    let (_, out, _) = child("groups", &with(&env, &[("VK_LOADER_DEVICE_ID_FILTER", "0x11-0x20")]));
    let groups: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("GROUP ")).collect();
    assert_eq!(groups, ["Test Driver discrete 0"]);
}

#[test]
fn groups_of_equal_devices_keep_the_drivers_order() {
    let dir = common::scratch("group-order");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [
        ("VK_DRIVER_FILES", path(&manifest)),
        ("VK_TEST_DRIVER_DEVICES", "discrete,discrete,discrete,discrete,discrete,discrete,discrete".to_string()),
        ("VK_TEST_DRIVER_GROUPS", "0;1,2,3;6;4,5".to_string()),
    ];
    let (ok, out, err) = child("groups", &env);
    assert!(ok, "{out}{err}");
    let groups: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("GROUP ")).collect();
    let name = |i: usize| format!("Test Driver discrete {i}");
    let expected = [name(0), [name(1), name(2), name(3)].join(","), name(6), [name(4), name(5)].join(",")];
    assert_eq!(groups, expected);
}

#[test]
fn short_arrays_get_incomplete() {
    let (ok, out, err) = child("incomplete", &two_drivers("incomplete"));
    assert!(ok, "{out}{err}");
    assert!(out.contains("DEVICES VK_INCOMPLETE 2 true"), "{out}");
    assert!(out.contains("GROUPS VK_INCOMPLETE 2 0"), "{out}");
    assert!(out.contains("EXTENSIONS VK_INCOMPLETE 1 0"), "{out}");
}

#[test]
fn command_buffers_without_loader_magic_are_reported_and_left_alone() {
    let dir = common::scratch("nomagic");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [("VK_DRIVER_FILES", path(&manifest)), ("VK_TEST_DRIVER_NO_MAGIC", "1".into()), ("VK_LOADER_DEBUG", "error".into())];
    let (ok, out, err) = child("draw", &env);
    assert!(ok, "{out}{err}");
    assert!(out.contains("FIRST WORD 0x0"), "{out}");
    assert!(err.contains("without ICD_LOADER_MAGIC"), "{err}");
}

#[test]
fn direct_driver_loading_inclusive_and_exclusive() {
    let dir = common::scratch("direct");
    let listed = common::driver_manifest(&dir, "listed.json", &common::tagged_driver(&dir, "listed"));
    let direct = common::tagged_driver(&dir, "direct");
    let env = |mode: &str| {
        vec![
            ("VK_DRIVER_FILES", path(&listed)),
            ("VK_TEST_DRIVER_DEVICES_LISTED", "integrated".to_string()),
            ("VK_TEST_DRIVER_DEVICES_DIRECT", "cpu".to_string()),
            ("DIRECT_DRIVER", path(&direct)),
            ("DIRECT_MODE", mode.to_string()),
        ]
    };
    let run = |mode: &str| {
        let (ok, out, err) = child("list", &env(mode));
        assert!(ok && out.contains("RESULT VK_SUCCESS"), "{mode}: {out}{err}");
        devices(&out).into_iter().map(String::from).collect::<Vec<_>>()
    };
    assert_eq!(run("inclusive"), ["Test Driver integrated 0", "Test Driver cpu 0"]);
    assert_eq!(run("exclusive"), ["Test Driver cpu 0"]);
    // The list is ignored unless the application enabled the extension.
    assert_eq!(run("not-enabled"), ["Test Driver integrated 0"]);
}

/// A setgid copy of this test binary runs with AT_SECURE set (its effective group differs from
/// the real one): the loader must ignore VK_DRIVER_FILES and the HOME/XDG paths there.
#[test]
fn elevated_process_ignores_driver_variables_and_home_paths() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: making a setgid binary needs root (CI runs as root)");
        return;
    }
    let dir = common::scratch("elevated");
    let manifest = common::driver_manifest(&dir, "test.json", &common::test_driver());
    let home_icd = dir.join("config/vulkan/icd.d");
    std::fs::create_dir_all(&home_icd).unwrap();
    common::driver_manifest(&home_icd, "home.json", &common::test_driver());
    let exe = dir.join("elevated-test");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::os::unix::fs::chown(&exe, Some(0), Some(65534)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o2755)).unwrap();
    // A layer reachable only through VK_LAYER_PATH, requested by the application.
    let layers = dir.join("layers");
    std::fs::create_dir_all(&layers).unwrap();
    let layer = vk_test_layer::install::install(&common::test_layer(), &layers, "elevated", "").unwrap();
    let env = |elevated: bool, layered: bool| {
        let mut cmd = std::process::Command::new(if elevated { exe.clone() } else { std::env::current_exe().unwrap() });
        cmd.args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"])
            .env("SCENARIO", "list")
            .env("TEST_LIBVULKAN", common::libvulkan())
            .env("VK_DRIVER_FILES", path(&manifest))
            .env("XDG_CONFIG_HOME", dir.join("config"));
        if layered {
            cmd.env("VK_LAYER_PATH", &layers).env("REQUEST_LAYER", &layer.name);
        }
        let out = cmd.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    // Not elevated: the variables are honoured.
    assert!(env(false, false).contains("DEVICE Test Driver"), "{}", env(false, false));
    let out = env(true, false);
    assert!(out.contains("RESULT "), "the elevated copy did not run the scenario:\n{out}");
    assert!(!out.contains("DEVICE Test Driver"), "an elevated process used VK_DRIVER_FILES or XDG_CONFIG_HOME:\n{out}");
    // VK_LAYER_PATH too: the requested layer is found normally, not when elevated.
    assert!(env(false, true).contains("RESULT VK_SUCCESS"), "{}", env(false, true));
    let out = env(true, true);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "an elevated process used VK_LAYER_PATH:\n{out}");
}

#[test]
fn devices_added_and_removed_under_a_live_instance_are_seen_at_each_enumeration() {
    let dir = common::scratch("changing-devices");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [
        ("VK_DRIVER_FILES", path(&manifest)),
        ("VK_TEST_DRIVER_DEVICES", "discrete,discrete,discrete,discrete".to_string()),
        ("VK_TEST_DRIVER_VISIBLE_DEVICES", "0,1".to_string()),
    ];
    let (ok, out, err) = child("changing-devices", &env);
    assert!(ok, "{out}{err}");
    let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("ENUMERATE") || l.starts_with("GROUPS")).collect();
    assert_eq!(
        lines,
        [
            "ENUMERATE 0,1 VK_SUCCESS 2 0",
            "ENUMERATE 0,1,2,3 VK_INCOMPLETE 2 2",
            "ENUMERATE 0,1,2,3 VK_SUCCESS 4 2",
            "ENUMERATE 0,2,3 VK_SUCCESS 3 3",
            "ENUMERATE  VK_ERROR_INITIALIZATION_FAILED 4 0",
            "GROUPS VK_ERROR_INITIALIZATION_FAILED 0",
            "ENUMERATE failing VK_ERROR_INITIALIZATION_FAILED 0",
        ],
        "{err}"
    );
}

/// `VK_EXT_debug_utils` is an instance extension with device commands: both GetProcAddr
/// functions answer NULL for them unless the instance enabled it, as the Khronos loader does.
#[test]
fn debug_utils_device_commands_need_the_instance_extension() {
    let dir = common::scratch("debug-utils-gpa");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [
        ("VK_DRIVER_FILES", path(&manifest)),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_debug_utils".to_string()),
    ];
    let lines = |extra: &[(&'static str, &str)]| {
        let (ok, out, err) = child("debug-utils-gpa", &with(&env, extra));
        assert!(ok, "{out}{err}");
        out.lines().filter(|l| l.starts_with("GIPA") || l.starts_with("GDPA")).map(String::from).collect::<Vec<_>>()
    };
    let expect = |found: bool| [format!("GIPA {found}"), format!("GDPA {found}")];
    assert_eq!(lines(&[]), expect(false));
    assert_eq!(lines(&[("EXTENSION", "VK_EXT_debug_utils")]), expect(true));
}

#[test]
fn drivers_without_devices_are_released_and_the_rest_still_work() {
    let dir = common::scratch("release");
    let empty = common::driver_manifest(&dir, "empty.json", &common::tagged_driver(&dir, "empty"));
    let used = common::driver_manifest(&dir, "used.json", &common::tagged_driver(&dir, "used"));
    let env = [
        ("VK_DRIVER_FILES", format!("{}:{}", path(&empty), path(&used))),
        ("VK_TEST_DRIVER_DEVICES_EMPTY", String::new()),
        ("VK_LOADER_DEBUG", "driver".to_string()),
    ];
    let (ok, out, err) = child("draw", &env);
    assert!(ok && out.contains("DRAWS 2"), "{out}{err}");
    assert!(err.contains(&format!("{}: no physical device; driver released", path(&empty))), "{err}");
    assert!(!err.contains(&format!("{}: no physical device", path(&used))), "{err}");
}

/// On a 1.0 instance with no extension enabled: core commands of every version are handed out
/// (as the spec's table and the Khronos loader do), instance extension commands are not.
#[test]
fn instance_proc_addr_hands_out_core_commands_and_enabled_extensions_only() {
    let dir = common::scratch("gpa");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let (ok, out, err) = child("gpa", &[("VK_DRIVER_FILES", path(&manifest))]);
    assert!(ok, "{out}{err}");
    let answers: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("GPA ")).collect();
    assert_eq!(
        answers,
        [
            "vkEnumeratePhysicalDeviceGroups true",
            "vkGetPhysicalDeviceProperties2 true",
            "vkGetPhysicalDeviceProperties2KHR false",
            "vkCmdDraw true",
            "vkCreateDebugUtilsMessengerEXT false",
            "vkNotACommand false",
        ]
    );
    // Global commands through an instance: still there for applications of Vulkan 1.2 and older,
    // NULL from 1.3 on (as the spec and the Khronos loader have it); vkGetInstanceProcAddr always.
    let globals = |out: &str| out.lines().filter_map(|l| l.strip_prefix("GLOBAL ")).map(String::from).collect::<Vec<_>>();
    assert_eq!(globals(&out), ["vkCreateInstance true", "vkEnumerateInstanceExtensionProperties true", "vkGetInstanceProcAddr true"]);
    let (ok, out, err) = child("gpa-1.3", &[("VK_DRIVER_FILES", path(&manifest))]);
    assert!(ok, "{out}{err}");
    assert_eq!(globals(&out), ["vkCreateInstance false", "vkEnumerateInstanceExtensionProperties false", "vkGetInstanceProcAddr true"]);
}

#[test]
fn unknown_driver_instance_extensions_are_filtered_unless_asked() {
    let dir = common::scratch("extfilter");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [("VK_DRIVER_FILES", path(&manifest)), ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_FAKE_unknown_extension".to_string())];
    let extensions = |extra: Option<(&'static str, String)>| {
        let (ok, out, err) = child("extensions", &env.iter().cloned().chain(extra).collect::<Vec<_>>());
        assert!(ok, "{out}{err}");
        out.lines().filter_map(|l| l.strip_prefix("EXTENSION ")).map(String::from).collect::<Vec<_>>()
    };
    let filtered = extensions(None);
    assert!(filtered.contains(&"VK_KHR_surface".to_string()), "{filtered:?}");
    assert!(!filtered.contains(&"VK_FAKE_unknown_extension".to_string()), "{filtered:?}");
    let unfiltered = extensions(Some(("VK_LOADER_DISABLE_INST_EXT_FILTER", "1".into())));
    assert!(unfiltered.contains(&"VK_FAKE_unknown_extension".to_string()), "{unfiltered:?}");
}

/// A driver lacking a Vulkan 1.0 command the loader calls without checking is skipped with the
/// Khronos loader's line; the other driver keeps working.
#[test]
fn driver_missing_a_required_command_is_skipped() {
    let env = with(&two_drivers("required"), &[("VK_TEST_DRIVER_WITHOUT_COMMANDS_A", "vkGetPhysicalDeviceFeatures"), ("VK_LOADER_DEBUG", "warn")]);
    let (ok, out, err) = child("list", &env);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(devices(&out), ["Test Driver discrete 0"], "{out}");
    assert!(err.contains("Unable to load vkGetPhysicalDeviceFeatures from ICD"), "{err}");
}

/// The instance extensions listed are the drivers' and the loader's own: none the loader would
/// only emulate for drivers that lack it when no driver has it.
#[test]
fn instance_extensions_no_driver_has_are_not_listed() {
    let dir = common::scratch("extlist");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let extensions = |driver_extensions: &str| {
        let env = [("VK_DRIVER_FILES", path(&manifest)), ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", driver_extensions.to_string())];
        let (ok, out, err) = child("extensions", &env);
        assert!(ok, "{out}{err}");
        out.lines().filter_map(|l| l.strip_prefix("EXTENSION ")).map(String::from).collect::<Vec<_>>()
    };
    let none = extensions("VK_KHR_surface");
    assert!(!none.iter().any(|e| e == "VK_KHR_get_physical_device_properties2" || e == "VK_KHR_external_fence_capabilities"), "{none:?}");
    let with_properties2 = extensions("VK_KHR_surface,VK_KHR_get_physical_device_properties2");
    assert!(with_properties2.iter().any(|e| e == "VK_KHR_get_physical_device_properties2"), "{with_properties2:?}");
}

/// Without `VK_KHR_get_physical_device_properties2` anywhere (a 1.0 application, 1.0 drivers
/// without the extension) the Khronos loader cannot read the sort keys and lists the devices
/// unsorted, the driver found last first: so do we, for the same order through either loader.
/// One driver with the extension is enough for sorting.
#[test]
fn devices_unsorted_where_no_driver_has_properties2() {
    let dir = common::scratch("unsortable");
    let a = common::driver_manifest(&dir, "a.json", &common::tagged_driver(&dir, "a"));
    let b = common::driver_manifest(&dir, "b.json", &common::tagged_driver(&dir, "b"));
    let env = [
        ("VK_DRIVER_FILES", format!("{}:{}", path(&a), path(&b))),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete".to_string()),
        ("VK_TEST_DRIVER_DEVICES_B", "cpu".to_string()),
        ("VK_TEST_DRIVER_API_VERSION", "1.0".to_string()),
        ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "VK_KHR_surface".to_string()),
    ];
    let (ok, out, err) = child("list", &env);
    assert!(ok, "{out}{err}");
    assert_eq!(devices(&out), ["Test Driver cpu 0", "Test Driver discrete 0"], "{err}");
    let mut one_sortable = env.to_vec();
    one_sortable.push(("VK_TEST_DRIVER_INSTANCE_EXTENSIONS_B", "VK_KHR_surface,VK_KHR_get_physical_device_properties2".into()));
    let (ok, out, err) = child("list", &one_sortable);
    assert!(ok, "{out}{err}");
    assert_eq!(devices(&out), ["Test Driver discrete 0", "Test Driver cpu 0"], "{err}");
}
