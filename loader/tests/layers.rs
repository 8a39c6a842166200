//! The loader with the project's test layer (tests/layer) and test driver: discovery, activation
//! and order, bad layers, the instance and device chains, wrapped handles, callbacks into the
//! loader, failing creation, layer extensions and their entry points.
//!
//! Each scenario runs in a child process (this test binary re-run with `SCENARIO` set): the loader
//! reads the environment and the process keeps what it dlopens. Host layers are never seen:
//! `VK_LAYER_PATH` and `VK_IMPLICIT_LAYER_PATH` always point into the test's own directory.

mod common;

use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

use vk_generated::types::*;

/// A test directory with a driver manifest and empty explicit/implicit layer directories.
struct Setup {
    dir: PathBuf,
    explicit: PathBuf,
    implicit: PathBuf,
    driver: PathBuf,
}

fn setup(name: &str) -> Setup {
    let dir = common::scratch(&format!("layers-{name}"));
    let explicit = dir.join("explicit");
    let implicit = dir.join("implicit");
    std::fs::create_dir_all(&explicit).unwrap();
    std::fs::create_dir_all(&implicit).unwrap();
    let driver = common::driver_manifest(&dir, "driver.json", &common::test_driver());
    Setup { dir, explicit, implicit, driver }
}

impl Setup {
    /// A tagged copy of the test layer with an explicit manifest naming it `VK_LAYER_TEST_<tag>`.
    fn explicit_layer(&self, tag: &str, extra: &str) -> PathBuf {
        vk_test_layer::install::install(&common::test_layer(), &self.explicit, tag, extra).unwrap().manifest
    }

    fn implicit_layer(&self, tag: &str, extra: &str) -> PathBuf {
        vk_test_layer::install::install(&common::test_layer(), &self.implicit, tag, extra).unwrap().manifest
    }

    fn run(&self, env: &[(&str, &str)]) -> (String, String) {
        let mut all = vec![
            ("VK_DRIVER_FILES", p(&self.driver)),
            ("VK_LAYER_PATH", p(&self.explicit)),
            ("VK_IMPLICIT_LAYER_PATH", p(&self.implicit)),
        ];
        all.extend(env.iter().map(|(k, v)| (*k, v.to_string())));
        let (ok, stdout, stderr) = common::child("layers", &all);
        assert!(ok, "child crashed or failed:\n{stdout}\n{stderr}");
        (stdout, stderr)
    }
}

fn lines<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// The child side. Environment: `TEST_APP_LAYERS`, `TEST_APP_EXTENSIONS`,
/// `TEST_DEVICE_EXTENSIONS` (comma lists), `TEST_DEVICE=1` (create a device, record a draw),
/// `TEST_QUERY_LAYER` (a layer name for the extension queries).
#[test]
fn scenario_entry() {
    let Ok(_) = std::env::var("SCENARIO") else { return };
    println!(); // the test harness printed "test scenario_entry ... " without a newline
    let list = |var: &str| -> Vec<CString> {
        std::env::var(var).unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(|s| CString::new(s).unwrap()).collect()
    };
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
    // The test driver's and the test layer's own commands (`...TEST`) are read as the types they
    // have there.
    unsafe {
        let enum_layers: PFN_vkEnumerateInstanceLayerProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceLayerProperties"));
        let mut count = 0;
        enum_layers.unwrap()(&mut count, std::ptr::null_mut());
        let mut props = vec![VkLayerProperties::default(); count as usize];
        enum_layers.unwrap()(&mut count, props.as_mut_ptr());
        for p in &props {
            println!("LAYER {} {}", common::fixed_str(&p.layerName), common::fixed_str(&p.description));
        }
        let version: PFN_vkEnumerateInstanceVersion = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceVersion"));
        let mut v = 0;
        version.unwrap()(&mut v);
        println!("INSTANCE_VERSION {}.{}", v >> 22, (v >> 12) & 0x3ff);
        let enum_ext: PFN_vkEnumerateInstanceExtensionProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
        let query = std::env::var("TEST_QUERY_LAYER").ok().map(|q| CString::new(q).unwrap());
        let query_ptr = query.as_ref().map_or(std::ptr::null(), |q| q.as_ptr());
        let mut count = 0;
        let r = enum_ext.unwrap()(query_ptr, &mut count, std::ptr::null_mut());
        let mut exts = vec![VkExtensionProperties::default(); count as usize];
        enum_ext.unwrap()(query_ptr, &mut count, exts.as_mut_ptr());
        println!("INSTANCE_EXTENSIONS {r:?}");
        for e in &exts {
            println!("INSTANCE_EXTENSION {}", common::fixed_str(&e.extensionName));
        }

        let layers = list("TEST_APP_LAYERS");
        let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
        let extensions = list("TEST_APP_EXTENSIONS");
        let ext_ptrs: Vec<*const c_char> = extensions.iter().map(|l| l.as_ptr()).collect();
        let info = VkInstanceCreateInfo {
            enabledLayerCount: layer_ptrs.len() as u32,
            ppEnabledLayerNames: layer_ptrs.as_ptr(),
            enabledExtensionCount: ext_ptrs.len() as u32,
            ppEnabledExtensionNames: ext_ptrs.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        // A device command unknown to the registry, asked for before any device exists.
        let gipa_draws: Option<unsafe extern "system" fn(VkDevice) -> u32> = std::mem::transmute(get(instance, c"vkGetTestLayerDrawsTEST"));
        let devices = common::list_devices(&get, instance);
        assert_eq!(devices, common::physical_devices(&get, instance), "physical device handles are stable");
        if std::env::var("TEST_UNKNOWN_PHYSICAL_DEVICE_COMMAND").is_ok() {
            // A physical-device command the registry does not know (the test driver's).
            let f: Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32> =
                std::mem::transmute(get(instance, c"vkGetTestDriverRequestedApiVersionTEST"));
            let v = f.expect("the driver's unknown physical-device command")(devices[0]);
            println!("REQUESTED_API {}.{}", v >> 22, (v >> 12) & 0x3ff);
        }
        let dev_layers: PFN_vkEnumerateDeviceLayerProperties = std::mem::transmute(get(instance, c"vkEnumerateDeviceLayerProperties"));
        let mut n = 0;
        dev_layers.unwrap()(devices[0], &mut n, std::ptr::null_mut());
        println!("DEVICE_LAYERS {n}");
        let mut props = vec![VkLayerProperties::default(); n as usize];
        dev_layers.unwrap()(devices[0], &mut n, props.as_mut_ptr());
        for p in &props {
            println!("DEVICE_LAYER {}", common::fixed_str(&p.layerName));
        }
        let dev_ext: PFN_vkEnumerateDeviceExtensionProperties = std::mem::transmute(get(instance, c"vkEnumerateDeviceExtensionProperties"));
        let mut n = 0;
        let r = dev_ext.unwrap()(devices[0], query_ptr, &mut n, std::ptr::null_mut());
        let mut exts = vec![VkExtensionProperties::default(); n as usize];
        dev_ext.unwrap()(devices[0], query_ptr, &mut n, exts.as_mut_ptr());
        println!("DEVICE_EXTENSIONS {r:?}");
        for e in &exts {
            println!("DEVICE_EXTENSION {}", common::fixed_str(&e.extensionName));
        }
        if std::env::var("TEST_DEVICE").is_ok() {
            device_scenario(&get, instance, devices[0], &list("TEST_DEVICE_EXTENSIONS"), gipa_draws);
        }
        if std::env::var("TEST_INSTANCE_OBJECTS").is_ok() {
            instance_objects_scenario(&get, instance, devices[0]);
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
        println!("DESTROYED");
        // The layer libraries still mapped after the last vkDestroyInstance (none: the loader
        // unloads them with the last instance that used them, as the Khronos loader does).
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut mapped: Vec<&str> = maps.lines().filter_map(|l| l.rsplit('/').next()).filter(|f| f.starts_with("libvk_test_layer")).collect();
        mapped.dedup();
        println!("LAYERS_STILL_MAPPED {}", mapped.join(","));
    }
}

/// Creates a device, records a draw through the GDPA pointer, prints what the driver and the
/// layer counted.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks., `pd` one of its physical devices, and `gipa_draws` the test
/// layer's `vkGetTestLayerDrawsTEST` from this loader, or `None`. `TEST_COMPARE_WITH_DRIVER`, where
/// set, names the driver library the loader opened.
unsafe fn device_scenario(
    get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction,
    instance: VkInstance,
    pd: VkPhysicalDevice,
    extensions: &[CString],
    gipa_draws: Option<unsafe extern "system" fn(VkDevice) -> u32>,
) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    // The test driver's and the test layer's own commands (`...TEST`) are read as the types they
    // have there.
    // The driver library named is already loaded (the loader's), so opening it runs no initialiser.
    unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let ext_ptrs: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let info = VkDeviceCreateInfo {
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue,
            enabledExtensionCount: ext_ptrs.len() as u32,
            ppEnabledExtensionNames: ext_ptrs.as_ptr(),
            ..Default::default()
        };
        let mut device = VkDevice::NULL;
        let r = create.unwrap()(pd, &info, std::ptr::null(), &mut device);
        println!("DEVICE_RESULT {r:?}");
        if r != VkResult::SUCCESS {
            return;
        }
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let dev = |name: &CStr| gdpa.unwrap()(device, name.as_ptr());
        let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(dev(c"vkGetDeviceQueue"));
        let mut q = VkQueue::NULL;
        get_queue.unwrap()(device, 0, 0, &mut q);
        let wait: PFN_vkQueueWaitIdle = std::mem::transmute(dev(c"vkQueueWaitIdle"));
        println!("QUEUE_WAIT {:?}", wait.unwrap()(q));
        let pool_create: PFN_vkCreateCommandPool = std::mem::transmute(dev(c"vkCreateCommandPool"));
        let mut pool = VkCommandPool::NULL;
        pool_create.unwrap()(device, &VkCommandPoolCreateInfo::default(), std::ptr::null(), &mut pool);
        let alloc: PFN_vkAllocateCommandBuffers = std::mem::transmute(dev(c"vkAllocateCommandBuffers"));
        let ainfo = VkCommandBufferAllocateInfo { commandPool: pool, commandBufferCount: 1, ..Default::default() };
        let mut cmd = VkCommandBuffer::NULL;
        alloc.unwrap()(device, &ainfo, &mut cmd);
        let begin: PFN_vkBeginCommandBuffer = std::mem::transmute(dev(c"vkBeginCommandBuffer"));
        begin.unwrap()(cmd, &VkCommandBufferBeginInfo::default());
        let draw: PFN_vkCmdDraw = std::mem::transmute(dev(c"vkCmdDraw"));
        draw.unwrap()(cmd, 3, 1, 0, 0);
        let trampoline_draw: PFN_vkCmdDraw = std::mem::transmute(get(instance, c"vkCmdDraw"));
        trampoline_draw.unwrap()(cmd, 3, 1, 0, 0);
        let driver_count: unsafe extern "system" fn(VkCommandBuffer) -> u32 = std::mem::transmute(dev(c"vkGetTestDriverDrawCountTEST"));
        println!("DRIVER_DRAWS {}", driver_count(cmd));
        if let Ok(driver) = std::env::var("TEST_COMPARE_WITH_DRIVER") {
            // The driver the loader opened (the same handle): are these the driver's own functions?
            let driver = libloading::Library::new(driver).unwrap();
            let driver_gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
                driver.get(b"vk_icdGetInstanceProcAddr").unwrap();
            for name in [c"vkCmdDispatch", c"vkCmdDraw", c"vkQueueSubmit"] {
                let (app, own) = (dev(name).map(|f| f as usize), driver_gipa(instance, name.as_ptr()).map(|f| f as usize));
                println!("POINTER {} {}", name.to_string_lossy(), if app == own { "driver" } else { "other" });
            }
        }
        let layer_draws: Option<unsafe extern "system" fn(VkDevice) -> u32> = std::mem::transmute(dev(c"vkGetTestLayerDrawsTEST"));
        if let Some(f) = layer_draws {
            println!("LAYER_DRAWS {}", f(device));
        }
        if let Some(f) = gipa_draws {
            println!("GIPA_LAYER_DRAWS {}", f(device));
        }
        let end: PFN_vkEndCommandBuffer = std::mem::transmute(dev(c"vkEndCommandBuffer"));
        println!("END {:?}", end.unwrap()(cmd));
        let destroy_pool: PFN_vkDestroyCommandPool = std::mem::transmute(dev(c"vkDestroyCommandPool"));
        destroy_pool.unwrap()(device, pool, std::ptr::null());
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(dev(c"vkDestroyDevice"));
        destroy.unwrap()(device, std::ptr::null());
        println!("DEVICE_DESTROYED");
    }
}

/// Creates a headless surface and a debug-utils messenger, then a device on which it names the
/// instance, the physical device and the surface (`vkSetDebugUtilsObjectNameEXT`); prints each
/// result and destroys everything. The application enables `VK_KHR_surface`,
/// `VK_EXT_headless_surface` and `VK_EXT_debug_utils`.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks., with VK_KHR_surface, VK_EXT_headless_surface and
/// VK_EXT_debug_utils enabled, and `pd` one of its physical devices.
unsafe fn instance_objects_scenario(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, pd: VkPhysicalDevice) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instance is live (the contract) and the objects made here are used between their creation
    // and their destruction; the other pointers point to locals that outlive each call.
    unsafe {
        let create_surface: PFN_vkCreateHeadlessSurfaceEXT = std::mem::transmute(get(instance, c"vkCreateHeadlessSurfaceEXT"));
        let mut surface = VkSurfaceKHR::NULL;
        println!("SURFACE {:?}", create_surface.unwrap()(instance, &VkHeadlessSurfaceCreateInfoEXT::default(), std::ptr::null(), &mut surface));
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let messenger_info = VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
            messageType: VkDebugUtilsMessageTypeFlagsEXT::GENERAL_BIT_EXT,
            pfnUserCallback: Some(quiet_messenger),
            ..Default::default()
        };
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        println!("MESSENGER {:?}", create_messenger.unwrap()(instance, &messenger_info, std::ptr::null(), &mut messenger));
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let mut device = VkDevice::NULL;
        println!("DEVICE_RESULT {:?}", create_device.unwrap()(pd, &info, std::ptr::null(), &mut device));
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let set_name: PFN_vkSetDebugUtilsObjectNameEXT = std::mem::transmute(gdpa.unwrap()(device, c"vkSetDebugUtilsObjectNameEXT".as_ptr()));
        for (label, object_type, handle) in [
            ("INSTANCE", VkObjectType::INSTANCE, instance.0 as u64),
            ("PHYSICAL_DEVICE", VkObjectType::PHYSICAL_DEVICE, pd.0 as u64),
            ("SURFACE", VkObjectType::SURFACE_KHR, surface.0),
        ] {
            let name_info = VkDebugUtilsObjectNameInfoEXT { objectType: object_type, objectHandle: handle, pObjectName: c"named".as_ptr(), ..Default::default() };
            println!("NAME_{label} {:?}", set_name.unwrap()(device, &name_info));
        }
        let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
        destroy_device.unwrap()(device, std::ptr::null());
        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger.unwrap()(instance, messenger, std::ptr::null());
        let destroy_surface: PFN_vkDestroySurfaceKHR = std::mem::transmute(get(instance, c"vkDestroySurfaceKHR"));
        destroy_surface.unwrap()(instance, surface, std::ptr::null());
    }
}

/// A messenger callback that stays silent.
///
/// # Safety
/// None: it reads none of its arguments.
unsafe extern "system" fn quiet_messenger(
    _severity: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _types: VkDebugUtilsMessageTypeFlagsEXT,
    _data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _user: *mut std::ffi::c_void,
) -> VkBool32 {
    VK_FALSE
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn two_pass_through_layers_in_order_with_devices_and_draws() {
    let s = setup("order");
    s.explicit_layer("a", "");
    s.explicit_layer("b", "");
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_b,VK_LAYER_TEST_a"),
        ("TEST_DEVICE", "1"),
        ("TEST_UNKNOWN_PHYSICAL_DEVICE_COMMAND", "1"),
        ("VK_TEST_LAYER_LOG", "1"),
        ("VK_LOADER_DEBUG", "layer"),
    ]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(
        lines(&out, "TEST_LAYER ").into_iter().filter(|l| !l.ends_with("TEST")).collect::<Vec<_>>(),
        [
            "TEST_LAYER B vkCreateInstance",
            "TEST_LAYER A vkCreateInstance",
            "TEST_LAYER B vkCreateDevice",
            "TEST_LAYER A vkCreateDevice",
            "TEST_LAYER B vkDestroyDevice",
            "TEST_LAYER A vkDestroyDevice",
            "TEST_LAYER B vkDestroyInstance",
            "TEST_LAYER A vkDestroyInstance",
        ],
        "{out}"
    );
    assert_eq!(lines(&out, "DEVICE "), ["DEVICE Test Driver discrete 0"]);
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("QUEUE_WAIT VK_SUCCESS"), "{out}{err}");
    // Both draws (GDPA pointer and trampoline) went through the top layer and reached the driver.
    assert!(out.contains("DRIVER_DRAWS 2") && out.contains("LAYER_DRAWS 2"), "{out}");
    assert!(out.contains("DEVICE_LAYERS 2"), "{out}");
    // Unknown commands through layers: a physical-device one reaches the driver, a device one
    // (asked for through vkGetInstanceProcAddr) the top layer.
    assert!(out.contains("REQUESTED_API 1.0") && out.contains("GIPA_LAYER_DRAWS 2"), "{out}");
    // ...through both layers' vk_layerGetPhysicalDeviceProcAddr, top first.
    let unknown: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("RequestedApiVersionTEST")).collect();
    assert_eq!(unknown, ["TEST_LAYER B vkGetTestDriverRequestedApiVersionTEST", "TEST_LAYER A vkGetTestDriverRequestedApiVersionTEST"], "{out}");
    assert!(out.contains("DESTROYED"));
    assert_eq!(lines(&out, "LAYERS_STILL_MAPPED "), ["LAYERS_STILL_MAPPED "], "both layers unloaded with the instance\n{out}");
    // VK_LOADER_DEBUG=layer: the chain, with why each layer is in it.
    let chain: Vec<&str> = err.lines().filter(|l| l.contains("0: VK_LAYER_TEST_") || l.contains("1: VK_LAYER_TEST_")).collect();
    assert_eq!(chain.len(), 2, "{err}");
    assert!(chain[0].contains("0: VK_LAYER_TEST_b") && chain[0].contains("ppEnabledLayerNames"), "{err}");
    assert!(chain[1].contains("1: VK_LAYER_TEST_a"), "{err}");
    assert!(err.contains("device layer chain, application first: VK_LAYER_TEST_b -> VK_LAYER_TEST_a -> driver"), "{err}");
}

/// The benchmark setup: five distinct pass-through copies (`vk_test_layer::install`), every draw
/// counted by each of them on its way to the driver.
#[test]
fn five_pass_through_copies() {
    let s = setup("five");
    let layers = vk_test_layer::install::install_pass_through(&common::test_layer(), &s.explicit, 5).unwrap();
    let names: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
    let (out, err) = s.run(&[("TEST_APP_LAYERS", &names.join(",")), ("VK_TEST_LAYER_LOG", "1"), ("TEST_DEVICE", "1")]);
    let creates: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("vkCreateInstance")).collect();
    assert_eq!(creates.len(), 5, "{out}{err}");
    for (i, line) in creates.iter().enumerate() {
        assert_eq!(*line, format!("TEST_LAYER PT{i} vkCreateInstance"));
    }
    assert!(out.contains("DRIVER_DRAWS 2") && out.contains("LAYER_DRAWS 2"), "{out}");
}

#[test]
fn pure_pass_through_and_environment_sources() {
    let s = setup("env");
    s.explicit_layer("a", "");
    s.explicit_layer("b", "");
    s.explicit_layer("c", "");
    let (out, err) = s.run(&[
        ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_c:VK_LAYER_TEST_a"),
        ("VK_LOADER_LAYERS_ENABLE", "*_b"),
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_a"),
        ("VK_TEST_LAYER_LOG", "1"),
        ("VK_TEST_LAYER_INTERCEPT", "0"),
        ("TEST_DEVICE", "1"),
    ]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let creates: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("vkCreateInstance")).collect();
    assert_eq!(creates, ["TEST_LAYER C vkCreateInstance", "TEST_LAYER A vkCreateInstance", "TEST_LAYER B vkCreateInstance"]);
    // Not intercepted: the draw reaches the driver, no layer counts it.
    assert!(out.contains("DRIVER_DRAWS 2") && out.contains("LAYER_DRAWS 0"), "{out}");
    // VK_LOADER_LAYERS_DISABLE removes a layer from every source; one the application asks for
    // by name is then not present (as with the Khronos loader).
    let disable_explicit = [("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_c"), ("VK_LOADER_LAYERS_DISABLE", "~explicit~"), ("VK_TEST_LAYER_LOG", "1")];
    let (out, _) = s.run(&disable_explicit);
    assert!(out.contains("RESULT VK_SUCCESS") && lines(&out, "TEST_LAYER ").is_empty(), "{out}");
    let (out, _) = s.run(&[disable_explicit[0], disable_explicit[1], ("TEST_APP_LAYERS", "VK_LAYER_TEST_a")]);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{out}");
}

#[test]
fn layers_are_enumerated_from_manifests_with_their_extensions() {
    let s = setup("enumerate");
    s.explicit_layer("a", r#", "instance_extensions": [{"name": "VK_TEST_layer_instance", "spec_version": "3"}],
        "device_extensions": [{"name": "VK_TEST_layer_draws", "spec_version": "1", "entrypoints": ["vkGetTestLayerDrawsTEST"]}]"#);
    s.implicit_layer("imp", r#", "disable_environment": {"DISABLE_TEST_IMP": "1"},
        "instance_extensions": [{"name": "VK_TEST_implicit_instance", "spec_version": "1"}]"#);
    let (out, err) = s.run(&[]);
    let layers = lines(&out, "LAYER ");
    assert_eq!(layers, ["LAYER VK_LAYER_TEST_imp test layer VK_LAYER_TEST_imp", "LAYER VK_LAYER_TEST_a test layer VK_LAYER_TEST_a"], "{out}{err}");
    // The implicit layer's extension is merged into the NULL query; the explicit one's is not.
    let exts = lines(&out, "INSTANCE_EXTENSION ");
    assert!(exts.contains(&"INSTANCE_EXTENSION VK_TEST_implicit_instance"), "{out}");
    assert!(!exts.contains(&"INSTANCE_EXTENSION VK_TEST_layer_instance"), "{out}");
    let (out, _) = s.run(&[("TEST_QUERY_LAYER", "VK_LAYER_TEST_a"), ("TEST_APP_LAYERS", "VK_LAYER_TEST_a")]);
    assert_eq!(lines(&out, "INSTANCE_EXTENSION "), ["INSTANCE_EXTENSION VK_TEST_layer_instance"], "{out}");
    assert_eq!(lines(&out, "DEVICE_EXTENSION "), ["DEVICE_EXTENSION VK_TEST_layer_draws"], "{out}");
    let (out, _) = s.run(&[("TEST_QUERY_LAYER", "VK_LAYER_TEST_nope")]);
    assert!(out.contains("INSTANCE_EXTENSIONS VK_ERROR_LAYER_NOT_PRESENT"), "{out}");
    // The layer is not loaded by enumeration: a broken library still enumerates.
    std::fs::write(s.explicit.join("libvk_test_layer_a.so"), b"not a library").unwrap();
    let (out, _) = s.run(&[]);
    assert!(out.contains("LAYER VK_LAYER_TEST_a"), "{out}");
}

#[test]
fn enabling_a_layers_extensions_and_calling_its_entry_points() {
    let s = setup("extensions");
    s.explicit_layer("a", r#", "instance_extensions": [{"name": "VK_TEST_layer_instance", "spec_version": "1"}],
        "device_extensions": [{"name": "VK_TEST_layer_draws", "spec_version": "1", "entrypoints": ["vkGetTestLayerDrawsTEST"]}]"#);
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_a"),
        ("TEST_APP_EXTENSIONS", "VK_TEST_layer_instance"),
        ("TEST_DEVICE", "1"),
        ("TEST_DEVICE_EXTENSIONS", "VK_TEST_layer_draws"),
    ]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
    assert!(out.contains("LAYER_DRAWS 2") && out.contains("GIPA_LAYER_DRAWS 2"), "{out}");
    // Without the layer, the extension is not there.
    let (out, _) = s.run(&[("TEST_APP_EXTENSIONS", "VK_TEST_layer_instance")]);
    assert!(out.contains("RESULT VK_ERROR_EXTENSION_NOT_PRESENT"), "{out}");
}

#[test]
fn handle_wrapping_layer() {
    let s = setup("wrap");
    s.explicit_layer("w", "");
    s.explicit_layer("x", "");
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_x,VK_LAYER_TEST_w"),
        ("VK_TEST_LAYER_WRAP_W", "1"),
        ("TEST_DEVICE", "1"),
    ]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(lines(&out, "DEVICE "), ["DEVICE Test Driver discrete 0"], "{out}");
    assert!(out.contains("DRIVER_DRAWS 2") && out.contains("DEVICE_DESTROYED"), "{out}");
    // A physical-device command the registry does not know reaches each layer with that layer's
    // own handle (the wrapping layer unwraps it on the way down) and then the driver.
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_x,VK_LAYER_TEST_w"),
        ("VK_TEST_LAYER_WRAP_W", "1"),
        ("VK_TEST_LAYER_LOG", "1"),
        ("TEST_UNKNOWN_PHYSICAL_DEVICE_COMMAND", "1"),
    ]);
    assert!(out.contains("REQUESTED_API 1.0"), "{out}{err}");
    let unknown: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("RequestedApiVersionTEST")).collect();
    assert_eq!(unknown, ["TEST_LAYER X vkGetTestDriverRequestedApiVersionTEST", "TEST_LAYER W vkGetTestDriverRequestedApiVersionTEST"], "{out}");
}

/// The environment of [`instance_objects_scenario`]: the driver advertises and the application
/// enables what it needs.
const INSTANCE_OBJECTS: [(&str, &str); 3] = [
    ("TEST_INSTANCE_OBJECTS", "1"),
    ("TEST_APP_EXTENSIONS", "VK_KHR_surface,VK_EXT_headless_surface,VK_EXT_debug_utils"),
    ("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "+VK_EXT_headless_surface,VK_EXT_debug_utils"),
];

/// Every call that names an instance, a physical device or a surface reaches each level with the
/// handle that level knows: the test driver and the wrapping test layer refuse (and report) any
/// other, where a real driver or layer (RenderDoc, gfxreconstruct) would crash.
fn assert_instance_objects_reach_each_level(out: &str, err: &str) {
    for line in ["RESULT VK_SUCCESS", "SURFACE VK_SUCCESS", "MESSENGER VK_SUCCESS", "DEVICE_RESULT VK_SUCCESS", "NAME_INSTANCE VK_SUCCESS", "NAME_PHYSICAL_DEVICE VK_SUCCESS", "NAME_SURFACE VK_SUCCESS", "DESTROYED"] {
        assert!(out.lines().any(|l| l == line), "missing {line:?}:\n{out}{err}");
    }
    assert!(lines(out, "TEST_LAYER_WRAP").is_empty(), "{out}");
    assert!(!err.contains("not destroyed"), "{err}");
}

#[test]
fn instance_objects_named_without_layers() {
    let s = setup("objects-no-layers");
    let (out, err) = s.run(&INSTANCE_OBJECTS);
    assert_instance_objects_reach_each_level(&out, &err);
}

/// `VK_EXT_debug_utils` is the loader's: a driver without its object-naming commands still lets
/// the application name objects (the loader's function does nothing, successfully).
#[test]
fn instance_objects_named_on_a_driver_without_the_commands() {
    let s = setup("objects-driver-without");
    let mut env = INSTANCE_OBJECTS.to_vec();
    env.push(("VK_TEST_DRIVER_WITHOUT_COMMANDS", "vkSetDebugUtilsObjectNameEXT"));
    let (out, err) = s.run(&env);
    assert_instance_objects_reach_each_level(&out, &err);
}

#[test]
fn instance_wrapping_layer() {
    let s = setup("wrap-instance");
    s.explicit_layer("wi", "");
    s.explicit_layer("x", "");
    let mut env = INSTANCE_OBJECTS.to_vec();
    env.extend([("TEST_APP_LAYERS", "VK_LAYER_TEST_x,VK_LAYER_TEST_wi"), ("VK_TEST_LAYER_WRAP_INSTANCE_WI", "1")]);
    let (out, err) = s.run(&env);
    assert_instance_objects_reach_each_level(&out, &err);
    assert_eq!(lines(&out, "DEVICE "), ["DEVICE Test Driver discrete 0"], "{out}");
}

#[test]
fn physical_device_wrapping_layer_names_objects() {
    let s = setup("wrap-names");
    s.explicit_layer("w", "");
    let mut env = INSTANCE_OBJECTS.to_vec();
    env.extend([("TEST_APP_LAYERS", "VK_LAYER_TEST_w"), ("VK_TEST_LAYER_WRAP_W", "1")]);
    let (out, err) = s.run(&env);
    assert_instance_objects_reach_each_level(&out, &err);
}

/// Layers built on the Khronos samples take the next `vk_layerGetPhysicalDeviceProcAddr` from the
/// next vkGetInstanceProcAddr while the instance is created, and resolve the commands they
/// intercept right away, before the application has named them.
#[test]
fn layer_resolving_unknown_commands_during_creation() {
    let s = setup("next-from-gipa");
    s.explicit_layer("n", "");
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_n"),
        ("VK_TEST_LAYER_NEXT_FROM_GIPA", "1"),
        ("VK_TEST_LAYER_LOG", "1"),
        ("TEST_UNKNOWN_PHYSICAL_DEVICE_COMMAND", "1"),
    ]);
    for name in ["vk_layerGetPhysicalDeviceProcAddr", "vkGetTestDriverRequestedApiVersionTEST", "vkTestDeviceCommand000TEST"] {
        assert!(out.contains(&format!("TEST_LAYER_CALLBACK next {name} found")), "{out}{err}");
    }
    assert!(out.contains("TEST_LAYER N vkGetTestDriverRequestedApiVersionTEST") && out.contains("REQUESTED_API 1.0"), "{out}{err}");
}

#[test]
fn layer_calling_back_into_the_loader() {
    let s = setup("callback");
    s.explicit_layer("cb", "");
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_cb"), ("VK_TEST_LAYER_CALLBACK", "1"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert!(out.contains("TEST_LAYER_CALLBACK instance extensions Some(SUCCESS)") || out.contains("TEST_LAYER_CALLBACK instance extensions Some(VK_SUCCESS)"), "{out}");
    assert!(out.contains("TEST_LAYER_CALLBACK device Test Driver discrete 0"), "{out}");
    assert!(out.contains("TEST_LAYER_CALLBACK creating a device on Test Driver discrete 0"), "{out}");
    assert!(out.contains("TEST_LAYER_CALLBACK device loader data ok"), "{out}");
    assert!(out.contains("DEVICE_DESTROYED") && out.contains("DESTROYED"), "{out}");
}

#[test]
fn layer_failing_after_calling_down() {
    let s = setup("fail");
    s.explicit_layer("f", "");
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_f"), ("VK_TEST_LAYER_FAIL_CREATE_INSTANCE", "1")]);
    assert!(out.contains("RESULT VK_ERROR_INITIALIZATION_FAILED"), "{out}{err}");
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_f"), ("VK_TEST_LAYER_FAIL_CREATE_DEVICE", "1"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("DEVICE_RESULT VK_ERROR_INITIALIZATION_FAILED") && out.contains("DESTROYED"), "{out}{err}");
}

#[test]
fn implicit_layer_enable_and_disable_environment() {
    let s = setup("implicit");
    s.implicit_layer("imp", r#", "enable_environment": {"ENABLE_TEST_IMP": "1"}, "disable_environment": {"DISABLE_TEST_IMP": "1"}"#);
    let on = |out: &str| out.contains("TEST_LAYER IMP vkCreateInstance");
    let (out, _) = s.run(&[("VK_TEST_LAYER_LOG", "1")]);
    assert!(out.contains("RESULT VK_SUCCESS") && !on(&out), "{out}");
    let (out, _) = s.run(&[("VK_TEST_LAYER_LOG", "1"), ("ENABLE_TEST_IMP", "1"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("RESULT VK_SUCCESS") && on(&out) && out.contains("LAYER_DRAWS 2"), "{out}");
    let (out, _) = s.run(&[("VK_TEST_LAYER_LOG", "1"), ("ENABLE_TEST_IMP", "1"), ("DISABLE_TEST_IMP", "1")]);
    assert!(out.contains("RESULT VK_SUCCESS") && !on(&out), "{out}");
    // An implicit layer that cannot load is skipped with a warning; the instance is created.
    std::fs::write(s.implicit.join("libvk_test_layer_imp.so"), b"garbage").unwrap();
    let (out, err) = s.run(&[("ENABLE_TEST_IMP", "1"), ("VK_LOADER_DEBUG", "warn")]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert!(err.contains("VK_LAYER_TEST_imp") && err.contains("not an ELF file"), "{err}");
}

/// `VK_LOADER_LAYERS_DISABLE` takes a layer out of the catalog, as with the Khronos loader: not
/// listed, not present when asked for by name, with the Khronos loader's line;
/// `VK_LOADER_LAYERS_ALLOW` keeps it. `VK_LOADER_LAYERS_ENABLE` turning on an implicit layer whose
/// environment leaves it off, and a missing `VK_INSTANCE_LAYERS` name, are logged in its words.
#[test]
fn layer_filters_in_khronos_words() {
    let s = setup("filters");
    s.explicit_layer("a", "");
    s.implicit_layer("imp", r#", "enable_environment": {"ENABLE_TEST_IMP": "1"}, "disable_environment": {"DISABLE_TEST_IMP": "1"}"#);
    let disable = [("TEST_APP_LAYERS", "VK_LAYER_TEST_a"), ("VK_LOADER_LAYERS_DISABLE", "*_a"), ("VK_LOADER_DEBUG", "warn")];
    let (out, err) = s.run(&disable);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{out}{err}");
    assert!(!out.contains("LAYER VK_LAYER_TEST_a"), "{out}");
    let why = "Layer \"VK_LAYER_TEST_a\" forced disabled because name matches filter of env var 'VK_LOADER_LAYERS_DISABLE'.";
    assert!(err.contains(why), "{err}");
    let (out, err) = s.run(&[disable[0], disable[1], ("VK_LOADER_LAYERS_ALLOW", "VK_LAYER_TEST_a")]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("LAYER VK_LAYER_TEST_a"), "{out}{err}");

    let env = [("VK_LOADER_LAYERS_ENABLE", "*imp"), ("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_nope"), ("VK_LOADER_DEBUG", "all")];
    let (out, err) = s.run(&env);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_LAYER VK_LAYER_TEST_imp"), "{out}{err}");
    for line in [
        "Implicit layer \"VK_LAYER_TEST_imp\" forced enabled due to env var 'VK_LOADER_LAYERS_ENABLE'.",
        "Layer \"VK_LAYER_TEST_nope\" was not found but was requested by env var VK_INSTANCE_LAYERS!",
    ] {
        assert!(err.contains(line), "{line}\nnot in\n{err}");
    }
}

/// A layer that corrupts the loader's instance behind the `VkInstance` it passes down (layer
/// policy LLP_LAYER_21) stops the process at the loader's terminator, with the Khronos loader's
/// line, instead of crashing somewhere below.
#[test]
fn layer_corrupting_the_instance_stops_the_process() {
    let s = setup("clobber");
    s.explicit_layer("clobber", "");
    let env = [
        ("VK_DRIVER_FILES", p(&s.driver)),
        ("VK_LAYER_PATH", p(&s.explicit)),
        ("VK_IMPLICIT_LAYER_PATH", p(&s.implicit)),
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_clobber".to_string()),
        ("VK_TEST_LAYER_CLOBBER_INSTANCE", "1".to_string()),
    ];
    let run = common::run_scenario("scenario_entry", "layers", &env);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(run.status.signal(), Some(libc::SIGABRT), "{:?}\n{}{}", run.status, run.stdout, run.stderr);
    assert!(!run.stdout.contains("RESULT"), "{}", run.stdout);
    let line = run.stderr.lines().find(|l| l.starts_with("[Vulkan Loader] ERROR:          terminator_CreateInstance: Instance pointer (0x"));
    let line = line.unwrap_or_else(|| panic!("no terminator line in:\n{}", run.stderr));
    let why = ") has invalid MAGIC value 0x00000000. Instance value possibly corrupted by active layer (Policy #LLP_LAYER_21).";
    assert!(line.ends_with(why), "{line}");
}

/// `vkCreateDevice` hands the layers' chain the loader's own object at `*pDevice`, as the layer
/// interface says: a layer that clears it before calling down (layer policy LLP_LAYER_22, as the
/// Khronos loader's test of the policy does) writes into the loader's object, not through NULL,
/// and the process stops at the loader's terminator with the Khronos loader's line. Under memcheck
/// (`memcheck.rs`), the clearing writes nothing outside the loader's object.
#[test]
fn layer_corrupting_the_device_stops_the_process() {
    let s = setup("clobber-device");
    s.explicit_layer("clobber", "");
    let env = [
        ("VK_DRIVER_FILES", p(&s.driver)),
        ("VK_LAYER_PATH", p(&s.explicit)),
        ("VK_IMPLICIT_LAYER_PATH", p(&s.implicit)),
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_clobber".to_string()),
        ("TEST_DEVICE", "1".to_string()),
        ("VK_TEST_LAYER_CLOBBER_DEVICE", "1".to_string()),
    ];
    let run = common::run_scenario("scenario_entry", "layers", &env);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(run.status.signal(), Some(libc::SIGABRT), "{:?}\n{}{}", run.status, run.stdout, run.stderr);
    assert!(run.stdout.contains("RESULT VK_SUCCESS") && !run.stdout.contains("DEVICE_RESULT"), "{}", run.stdout);
    let line = run.stderr.lines().find(|l| l.starts_with("[Vulkan Loader] ERROR:          terminator_CreateDevice: Device pointer (0x"));
    let line = line.unwrap_or_else(|| panic!("no terminator line in:\n{}", run.stderr));
    let why = ") has invalid MAGIC value 0x00000000. The expected value is 0x10ADED040410ADED. Device value possibly corrupted by active \
               layer (Policy #LLP_LAYER_22).";
    assert!(line.ends_with(why), "{line}");
    // Under memcheck (which a child killed by a signal cannot tell by its exit status).
    assert!(!run.stderr.contains("Invalid write") && !run.stderr.contains("Invalid read"), "{}", run.stderr);
    // The same layer leaving the object alone: the device is created through it.
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_clobber"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("DEVICE_DESTROYED"), "{out}{err}");
}

/// The `library_arch` of the other word size: a layer for it is never loaded.
const OTHER_BITS: &str = if cfg!(target_pointer_width = "64") { "32" } else { "64" };

#[test]
fn requested_layers_that_cannot_load_are_layer_not_present_with_the_reason() {
    let s = setup("bad");
    let good = common::tagged_layer(&s.dir, "good");
    let truncated = s.dir.join("libtruncated.so");
    std::fs::write(&truncated, &std::fs::read(&good).unwrap()[..4096]).unwrap();
    common::layer_manifest(&s.explicit, "truncated.json", "VK_LAYER_TEST_truncated", &truncated, "");
    common::layer_manifest(&s.explicit, "missing.json", "VK_LAYER_TEST_missing", &s.dir.join("libnot_there.so"), "");
    common::layer_manifest(&s.explicit, "arch.json", "VK_LAYER_TEST_arch", &good, &format!(r#", "library_arch": "{OTHER_BITS}""#));
    common::layer_manifest(&s.explicit, "symbol.json", "VK_LAYER_TEST_symbol", &common::test_driver(), "");
    common::layer_manifest(&s.explicit, "negotiate.json", "VK_LAYER_TEST_renamed", &good,
        r#", "functions": {"vkNegotiateLoaderLayerInterfaceVersion": "NoSuchNegotiate", "vkGetInstanceProcAddr": "TestLayer_GetInstanceProcAddr", "vkGetDeviceProcAddr": "TestLayer_GetDeviceProcAddr"}"#);
    std::fs::write(s.explicit.join("broken.json"), "{ nope").unwrap();
    for (layer, why) in [
        ("VK_LAYER_TEST_truncated", "truncated"),
        ("VK_LAYER_TEST_missing", "libnot_there.so"),
        ("VK_LAYER_TEST_arch", &format!("library_arch {OTHER_BITS}")),
        ("VK_LAYER_TEST_symbol", "missing symbol"),
        ("VK_LAYER_TEST_nowhere", "not found"),
    ] {
        let (out, err) = s.run(&[("TEST_APP_LAYERS", layer), ("VK_LOADER_DEBUG", "error")]);
        assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{layer}: {out}{err}");
        assert!(err.lines().any(|l| l.contains(layer) && l.contains(why)), "no line for {layer} saying {why:?}:\n{err}");
    }
    // The older interface: renamed, exported GetProcAddr functions, no negotiation.
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_renamed"), ("TEST_DEVICE", "1"), ("VK_LOADER_DEBUG", "layer")]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("LAYER_DRAWS 2"), "{out}{err}");
    assert!(err.contains("interface 1"), "{err}");
    // A layer listed twice is loaded once.
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_renamed,VK_LAYER_TEST_renamed"), ("VK_TEST_LAYER_LOG", "1")]);
    assert_eq!(lines(&out, "TEST_LAYER "), ["TEST_LAYER GOOD vkCreateInstance", "TEST_LAYER GOOD vkDestroyInstance"], "{out}{err}");
}

/// A requested layer built for the other word size is reported in the Khronos loader's words,
/// from its ELF header, before `dlopen` is tried; each of several unusable layers gets its line.
#[test]
fn requested_layers_of_the_wrong_class_are_named_each() {
    let s = setup("wrong-class");
    let good = common::tagged_layer(&s.dir, "good");
    let mut bytes = std::fs::read(&good).unwrap();
    bytes[4] = if cfg!(target_pointer_width = "64") { 1 } else { 2 }; // EI_CLASS: the other word size's
    let other_class = s.dir.join("libother_class.so");
    std::fs::write(&other_class, bytes).unwrap();
    common::layer_manifest(&s.explicit, "class.json", "VK_LAYER_TEST_class", &other_class, "");
    common::layer_manifest(&s.explicit, "missing.json", "VK_LAYER_TEST_missing", &s.dir.join("libnot_there.so"), "");
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_class,VK_LAYER_TEST_missing"), ("VK_LOADER_DEBUG", "error")]);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{out}{err}");
    assert!(err.contains("Requested layer \"VK_LAYER_TEST_class\" was wrong bit-type!"), "{err}");
    assert!(err.contains("Requested layer \"VK_LAYER_TEST_missing\" failed to load!"), "{err}");
}

/// A library is opened as the Khronos loader opens it, each symbol bound at its first call
/// (`RTLD_LAZY`): a layer calling a function nothing defines is accepted, and the process ends at
/// that call with the dynamic linker's words, as under the Khronos loader. Its manifest beside
/// them, the good layers, one named by a bare file name (as Debian's are), load in every process.
#[test]
fn a_layer_with_an_unbound_symbol_ends_the_process_at_its_first_call() {
    let s = setup("binding");
    vk_test_layer::install::install(&common::test_layer(), &s.explicit, "good", "").unwrap();
    let unbound = common::preload_library(&s.dir, "unbound_layer");
    common::layer_manifest(&s.explicit, "unbound.json", "VK_LAYER_TEST_unbound", &unbound, "");
    let bare = "libvk_test_layer_bare.so";
    common::layer_manifest(&s.explicit, "bare.json", "VK_LAYER_TEST_bare", std::path::Path::new(bare), "");
    let search = s.dir.join("search");
    std::fs::create_dir_all(&search).unwrap();
    std::fs::copy(common::test_layer(), search.join(bare)).unwrap();
    let cache = s.dir.join("cache");
    let env = |layers| {
        [
            ("VK_INSTANCE_LAYERS", layers),
            ("VK_TEST_LAYER_LOG", "1"),
            ("VK_LOADER_DEBUG", "error"),
            ("XDG_CACHE_HOME", cache.to_str().unwrap()),
            ("LD_LIBRARY_PATH", search.to_str().unwrap()),
        ]
    };
    for _ in 0..2 {
        let (out, err) = s.run(&env("VK_LAYER_TEST_good:VK_LAYER_TEST_bare"));
        assert!(out.contains("RESULT VK_SUCCESS") && out.contains("TEST_LAYER GOOD vkCreateInstance"), "{out}{err}");
        assert!(out.contains("TEST_LAYER BARE vkCreateInstance"), "{out}{err}");
    }
    let mut all = vec![("VK_DRIVER_FILES", p(&s.driver)), ("VK_LAYER_PATH", p(&s.explicit)), ("VK_IMPLICIT_LAYER_PATH", p(&s.implicit))];
    all.extend(env("VK_LAYER_TEST_unbound:VK_LAYER_TEST_good").iter().map(|(k, v)| (*k, v.to_string())));
    let (ok, out, err) = common::child("layers", &all);
    assert!(!ok && !out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert!(err.contains("undefined symbol: vk_test_function_nothing_defines"), "{out}{err}");
    assert!(!err.contains("layer VK_LAYER_TEST_unbound ("), "not skipped, opened as the Khronos loader opens it:\n{err}");
}

/// A layer the environment names whose library cannot be used is skipped with a line naming it,
/// the variable and the reason, and the instance is created with the good layer beside it (as the
/// Khronos loader does); the application naming the same layer still fails.
#[test]
fn environment_layers_that_cannot_load_are_skipped_with_the_reason() {
    let s = setup("env-unloadable");
    s.explicit_layer("good", "");
    common::layer_manifest(&s.explicit, "missing.json", "VK_LAYER_TEST_missing", &s.dir.join("libnot_there.so"), "");
    let debug = ("VK_LOADER_DEBUG", "error");
    let (out, err) = s.run(&[("VK_INSTANCE_LAYERS", "VK_LAYER_TEST_missing:VK_LAYER_TEST_good"), ("VK_TEST_LAYER_LOG", "1"), debug]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("TEST_LAYER GOOD vkCreateInstance"), "{out}{err}");
    let line = err.lines().find(|l| l.contains("layer VK_LAYER_TEST_missing (") && l.contains("named in VK_INSTANCE_LAYERS) skipped: "));
    assert!(line.is_some_and(|l| l.contains("libnot_there.so")), "no line naming the layer and the reason:\n{err}");
    let (out, err) = s.run(&[("VK_LOADER_LAYERS_ENABLE", "*missing"), debug]);
    assert!(out.contains("RESULT VK_SUCCESS") && err.contains("matched by VK_LOADER_LAYERS_ENABLE pattern"), "{out}{err}");
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_missing"), debug]);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{out}{err}");
}

/// Device extensions must be the physical device's or an enabled layer's.
#[test]
fn device_extensions_nobody_provides_are_not_present() {
    let s = setup("device-extensions");
    let (out, err) = s.run(&[("TEST_DEVICE", "1"), ("TEST_DEVICE_EXTENSIONS", "VK_KHR_swapchain,VK_KHR_not_a_real_one"), ("VK_LOADER_DEBUG", "error")]);
    assert!(out.contains("DEVICE_RESULT VK_ERROR_EXTENSION_NOT_PRESENT"), "{out}{err}");
    assert!(err.contains("Device extension VK_KHR_not_a_real_one not supported by selected physical device or enabled layers."), "{err}");
    let (out, err) = s.run(&[("TEST_DEVICE", "1"), ("TEST_DEVICE_EXTENSIONS", "VK_KHR_swapchain")]);
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS"), "{out}{err}");
}

#[test]
fn meta_layer_expands_in_place() {
    let s = setup("meta");
    s.explicit_layer("a", "");
    s.explicit_layer("b", "");
    s.explicit_layer("c", "");
    std::fs::write(
        s.explicit.join("meta.json"),
        r#"{"file_format_version": "1.1.1", "layer": {"name": "VK_LAYER_TEST_meta", "type": "GLOBAL", "api_version": "1.3.0",
            "implementation_version": "1", "description": "meta", "component_layers": ["VK_LAYER_TEST_b", "VK_LAYER_TEST_a"]}}"#,
    )
    .unwrap();
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_c,VK_LAYER_TEST_meta,VK_LAYER_TEST_a"), ("VK_TEST_LAYER_LOG", "1")]);
    let creates: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("vkCreateInstance")).collect();
    assert_eq!(creates, ["TEST_LAYER C vkCreateInstance", "TEST_LAYER B vkCreateInstance", "TEST_LAYER A vkCreateInstance"], "{out}{err}");
}

/// An enabled meta layer is reported by `vkEnumerateDeviceLayerProperties` right after its
/// components; meta layers are checked in the Khronos loader's words (which scripts search for):
/// one naming a missing layer is removed, one containing another says so, the extensions of the
/// components are listed.
#[test]
fn meta_layers_listed_after_their_components_and_checked_in_khronos_words() {
    let s = setup("meta-words");
    s.explicit_layer("a", r#", "device_extensions": [{"name": "VK_TEST_component_extension", "spec_version": "1"}]"#);
    s.explicit_layer("b", "");
    let meta = |name: &str, components: &str| {
        let text = format!(
            r#"{{"file_format_version": "1.1.1", "layer": {{"name": "{name}", "type": "GLOBAL", "api_version": "1.3.0",
            "implementation_version": "1", "description": "meta", "component_layers": [{components}]}}}}"#
        );
        std::fs::write(s.explicit.join(format!("{name}.json")), text).unwrap();
    };
    meta("VK_LAYER_TEST_meta", r#""VK_LAYER_TEST_b", "VK_LAYER_TEST_a""#);
    meta("VK_LAYER_TEST_outer", r#""VK_LAYER_TEST_meta""#);
    meta("VK_LAYER_TEST_broken", r#""VK_LAYER_TEST_nope""#);
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_outer"), ("VK_LOADER_DEBUG", "all")]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    let reported = lines(&out, "DEVICE_LAYER ");
    let want = ["DEVICE_LAYER VK_LAYER_TEST_b", "DEVICE_LAYER VK_LAYER_TEST_a", "DEVICE_LAYER VK_LAYER_TEST_meta", "DEVICE_LAYER VK_LAYER_TEST_outer"];
    assert_eq!(reported, want, "{out}");
    for line in [
        "verify_meta_layer_component_layers: Meta-layer VK_LAYER_TEST_broken can't find component layer VK_LAYER_TEST_nope at index 0.  Skipping this layer.",
        "Removing meta-layer VK_LAYER_TEST_broken from instance layer list since it appears invalid.",
        "verify_meta_layer_component_layers: Adding meta-layer VK_LAYER_TEST_outer which also contains meta-layer VK_LAYER_TEST_meta",
        "Meta-layer VK_LAYER_TEST_meta component layer VK_LAYER_TEST_a adding device extension VK_TEST_component_extension",
    ] {
        assert!(err.contains(line), "{line}\nnot in\n{err}");
    }
}

#[test]
fn test_layer_exports_only_layer_entry_points() {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(common::test_layer()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let vk: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().nth(2)).filter(|s| s.starts_with("vk")).collect();
    assert_eq!(vk, ["vkNegotiateLoaderLayerInterfaceVersion"], "{text}");
}

/// Both project layers run on the SDK's chassis (the ported layers: no hand-written plumbing of
/// their own); the scenarios above show them working through our loader.
#[test]
fn ported_layers_are_built_on_the_sdk_chassis() {
    for library in [common::test_layer(), common::built_library("libVkLayer_sample_draw_stats.so")] {
        let out = Command::new("nm").arg(&library).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        // Mangled `vk_layer::chassis::get_instance_proc_addr::<...>`.
        assert!(text.contains("8vk_layer7chassis22get_instance_proc_addr"), "{}: no SDK chassis", library.display());
    }
}

/// Seed 003's sample layer (tests/draw-stats-layer) with its own manifest: renamed GetProcAddr
/// functions, statistics printed at vkEndCommandBuffer.
#[test]
fn draw_statistics_sample_layer() {
    let s = setup("draw-stats");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/draw-stats-layer/VkLayer_sample_draw_stats.json");
    std::fs::copy(manifest, s.explicit.join("VkLayer_sample_draw_stats.json")).unwrap();
    std::fs::copy(common::shipped_library("libVkLayer_sample_draw_stats.so"), s.explicit.join("libVkLayer_sample_draw_stats.so")).unwrap();
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_SAMPLE_SampleLayer"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("END VK_SUCCESS"), "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("Command buffer 0x") && l.ends_with("ended with 2 draws, 2 instances and 6 vertices")), "{out}");
    assert!(out.contains("DRIVER_DRAWS 2"), "{out}");
}

/// A layer on the `vk-layer` SDK (tests/sdk-draw-count-layer) with the manifest the SDK writes:
/// it counts the draws; the commands it does not hook are the driver's own functions.
#[test]
fn sdk_layer_counts_draws_and_passes_the_rest_through() {
    let s = setup("sdk-draw-count");
    let library = s.explicit.join("libVkLayer_sdk_draw_count.so");
    std::fs::copy(common::shipped_library("libVkLayer_sdk_draw_count.so"), &library).unwrap();
    let manifest = vk_layer::Manifest {
        name: "VK_LAYER_TEST_sdk_draw_count",
        library_path: std::path::Path::new("./libVkLayer_sdk_draw_count.so"),
        api_version: vk_generated::make_api_version(0, 1, 4, 0),
        implementation_version: 1,
        description: "counts draws",
        ..vk_layer::Manifest::default()
    };
    manifest.write(&s.explicit.join("sdk_draw_count.json")).unwrap();
    let driver = p(&common::test_driver());
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_sdk_draw_count"), ("TEST_DEVICE", "1"), ("TEST_COMPARE_WITH_DRIVER", &driver)]);
    assert!(out.contains("LAYER VK_LAYER_TEST_sdk_draw_count counts draws"), "{out}{err}");
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("DEVICE_DESTROYED"), "{out}{err}");
    // Both draws (the vkGetDeviceProcAddr pointer's and the exported trampoline's) went through it.
    assert!(out.contains("DRIVER_DRAWS 2") && out.contains("SDK_DRAW_COUNT 2"), "{out}{err}");
    let pointers = lines(&out, "POINTER ");
    assert_eq!(pointers, ["POINTER vkCmdDispatch driver", "POINTER vkCmdDraw other", "POINTER vkQueueSubmit driver"], "{out}");
}

/// The SDK's `declare_layer!` exports the layer's three entry points and no other `vk*` symbol.
#[test]
fn sdk_layer_exports_only_layer_entry_points() {
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(common::shipped_library("libVkLayer_sdk_draw_count.so")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let vk: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().nth(2)).filter(|s| s.starts_with("vk")).collect();
    assert_eq!(vk, ["vkGetDeviceProcAddr", "vkGetInstanceProcAddr", "vkNegotiateLoaderLayerInterfaceVersion"], "{text}");
}

/// Of the SDK's generated entry points, the layer's library holds only those of the commands it
/// hooks: `vkCmdDraw`, not the other few hundred.
#[test]
fn sdk_layer_holds_only_its_hooks_entry_points() {
    let out = Command::new("nm").arg(common::built_library("libVkLayer_sdk_draw_count.so")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Mangled `vk_layer::entries::generated::<command>`: `7entries9generated`, then `<len><name>`.
    let mut commands: Vec<String> = text
        .lines()
        .filter_map(|line| line.split_once("7entries9generated").map(|(_, rest)| rest))
        .filter_map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let len: usize = digits.parse().ok()?;
            rest.get(digits.len()..digits.len() + len).map(str::to_string)
        })
        .collect();
    commands.dedup();
    assert_eq!(commands, ["vkCmdDraw"], "{text}");
}

/// The override meta layer (as vkconfig writes it): its components enabled, its blacklist removing
/// layers, its override_paths replacing the explicit search (VK_LAYER_PATH too), only for the
/// executables in app_keys when given.
#[test]
fn override_layer() {
    let s = setup("override");
    let elsewhere = s.dir.join("override-paths");
    std::fs::create_dir_all(&elsewhere).unwrap();
    s.explicit_layer("c", ""); // only on VK_LAYER_PATH
    let library = common::test_layer();
    vk_test_layer::install::install(&library, &elsewhere, "a", "").unwrap();
    vk_test_layer::install::install(&library, &elsewhere, "b", "").unwrap();
    let write_override = |app_keys: &str| {
        std::fs::write(
            s.implicit.join("override.json"),
            format!(
                r#"{{"file_format_version": "1.2.0", "layer": {{"name": "VK_LAYER_LUNARG_override", "type": "GLOBAL",
                "api_version": "1.3.0", "implementation_version": "1", "description": "LunarG Override Layer",
                "component_layers": ["VK_LAYER_TEST_a"], "blacklisted_layers": ["VK_LAYER_TEST_b"],
                "override_paths": ["{}"], "disable_environment": {{"DISABLE_OVERRIDE": "1"}}{app_keys}}}}}"#,
                elsewhere.display()
            ),
        )
        .unwrap();
    };
    write_override("");
    let creates = |out: &str| -> Vec<String> {
        lines(out, "TEST_LAYER ").into_iter().filter(|l| l.ends_with("vkCreateInstance")).map(str::to_string).collect()
    };
    let (out, err) = s.run(&[("VK_TEST_LAYER_LOG", "1")]);
    assert_eq!(creates(&out), ["TEST_LAYER A vkCreateInstance"], "{out}{err}");
    let names = lines(&out, "LAYER ");
    assert!(!names.iter().any(|l| l.contains("VK_LAYER_TEST_b") || l.contains("VK_LAYER_TEST_c")), "{out}");
    for blocked in ["VK_LAYER_TEST_b", "VK_LAYER_TEST_c"] {
        let (out, err) = s.run(&[("TEST_APP_LAYERS", blocked)]);
        assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{blocked}: {out}{err}");
    }
    // app_keys naming another executable: the override layer does nothing here.
    write_override(r#", "app_keys": ["/no/such/app"]"#);
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_c"), ("VK_TEST_LAYER_LOG", "1")]);
    assert_eq!(creates(&out), ["TEST_LAYER C vkCreateInstance"], "{out}{err}");
    // app_keys naming this executable: it applies.
    let exe = std::env::current_exe().unwrap();
    write_override(&format!(r#", "app_keys": ["{}"]"#, exe.display()));
    let (out, err) = s.run(&[("VK_TEST_LAYER_LOG", "1")]);
    assert_eq!(creates(&out), ["TEST_LAYER A vkCreateInstance"], "{out}{err}");
}

/// The override layer's rules in the Khronos loader's words: listed after its components when
/// active; its blacklist and its override_paths (over VK_LAYER_PATH) logged; its fields in a file
/// format older than theirs warned about but used; with app_keys naming another executable, it is
/// neither used nor listed.
#[test]
fn override_layer_in_khronos_words() {
    let s = setup("override-words");
    let elsewhere = s.dir.join("override-paths");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let library = common::test_layer();
    vk_test_layer::install::install(&library, &elsewhere, "a", "").unwrap();
    vk_test_layer::install::install(&library, &elsewhere, "b", "").unwrap();
    let write_override = |format: &str, app_keys: &str| {
        let text = format!(
            r#"{{"file_format_version": "{format}", "layer": {{"name": "VK_LAYER_LUNARG_override", "type": "GLOBAL",
            "api_version": "1.3.0", "implementation_version": "1", "description": "LunarG Override Layer",
            "component_layers": ["VK_LAYER_TEST_a"], "blacklisted_layers": ["VK_LAYER_TEST_b"],
            "override_paths": ["{}"], "disable_environment": {{"DISABLE_OVERRIDE": "1"}}{app_keys}}}}}"#,
            elsewhere.display()
        );
        std::fs::write(s.implicit.join("override.json"), text).unwrap();
    };
    write_override("1.0.0", "");
    let (out, err) = s.run(&[("VK_LOADER_DEBUG", "all")]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    assert_eq!(lines(&out, "DEVICE_LAYER "), ["DEVICE_LAYER VK_LAYER_TEST_a", "DEVICE_LAYER VK_LAYER_LUNARG_override"], "{out}");
    for line in [
        "loader_remove_layers_in_blacklist: Override layer is active and layer VK_LAYER_TEST_b is in the blacklist inside of it. \
         Removing that layer from current layer list.",
        &format!(
            "Ignoring VK_LAYER_PATH. The Override layer is active and has override paths set, which takes priority. VK_LAYER_PATH is set to {}",
            s.explicit.display()
        ),
        "Layer \"VK_LAYER_LUNARG_override\" contains meta-layer-specific component_layers, but using older JSON file version.",
        "Layer \"VK_LAYER_LUNARG_override\" contains meta-layer-specific override paths, but using older JSON file version.",
        &format!("Override layer has override path {}", elsewhere.display()),
    ] {
        assert!(err.contains(line), "{line}\nnot in\n{err}");
    }
    write_override("1.2.0", r#", "app_keys": ["/no/such/app"]"#);
    let (out, err) = s.run(&[]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("DEVICE_LAYERS 0"), "{out}{err}");
    assert!(!out.contains("LAYER VK_LAYER_LUNARG_override"), "{out}");
}

/// An implicit layer's pre-instance interceptors run before any instance exists, and only while
/// the layer is enabled.
#[test]
fn pre_instance_functions_of_an_implicit_layer() {
    let s = setup("pre-instance");
    s.implicit_layer("pre", r#", "disable_environment": {"DISABLE_TEST_PRE": "1"}, "pre_instance_functions": {
        "vkEnumerateInstanceExtensionProperties": "TestLayer_EnumerateInstanceExtensionProperties",
        "vkEnumerateInstanceLayerProperties": "TestLayer_EnumerateInstanceLayerProperties",
        "vkEnumerateInstanceVersion": "TestLayer_EnumerateInstanceVersion"}"#);
    let (out, err) = s.run(&[]);
    for what in ["extensions", "layers", "version"] {
        assert!(out.contains(&format!("TEST_LAYER_PRE PRE {what}")), "{what}: {out}{err}");
    }
    assert!(out.contains("INSTANCE_VERSION 1.1"), "{out}");
    assert!(out.contains("INSTANCE_EXTENSION VK_TEST_pre_instance_extension"), "{out}");
    assert!(out.contains("LAYER VK_LAYER_TEST_pre"), "{out}");
    let (out, _) = s.run(&[("DISABLE_TEST_PRE", "1")]);
    assert!(!out.contains("TEST_LAYER_PRE") && !out.contains("INSTANCE_VERSION 1.1"), "{out}");
}

/// `pfnLayerCreateDevice`: the top layer creates a private device through the layers below it only.
#[test]
fn layer_creates_a_private_device_through_the_layers_below() {
    let s = setup("layer-device");
    s.explicit_layer("a", "");
    s.explicit_layer("b", "");
    let (out, err) = s.run(&[
        ("TEST_APP_LAYERS", "VK_LAYER_TEST_a,VK_LAYER_TEST_b"),
        ("VK_TEST_LAYER_CREATE_DEVICE_CALLBACK_A", "1"),
        ("VK_TEST_LAYER_LOG", "1"),
        ("TEST_DEVICE", "1"),
    ]);
    assert!(out.contains("TEST_LAYER_CALLBACK private device queue wait VK_SUCCESS"), "{out}{err}");
    let device_lines: Vec<&str> = lines(&out, "TEST_LAYER ").into_iter().filter(|l| l.contains("Device")).collect();
    assert_eq!(
        device_lines,
        [
            "TEST_LAYER A vkCreateDevice",
            "TEST_LAYER B vkCreateDevice",
            "TEST_LAYER B vkCreateDevice",
            "TEST_LAYER B vkDestroyDevice",
            "TEST_LAYER A vkDestroyDevice",
            "TEST_LAYER B vkDestroyDevice",
        ],
        "{out}"
    );
    assert!(out.contains("DEVICE_RESULT VK_SUCCESS") && out.contains("DRIVER_DRAWS 2") && out.contains("DEVICE_DESTROYED"), "{out}");
}

/// Malformed manifests of each version are skipped with a line naming the file and the field; the
/// good layer beside them still works.
#[test]
fn malformed_manifests_are_skipped_with_file_and_field() {
    let s = setup("malformed");
    s.explicit_layer("good", "");
    let lib = common::test_layer();
    let lib = lib.display();
    let cases = [
        ("v100_no_name.json", format!(r#"{{"file_format_version": "1.0.0", "layer": {{"type": "GLOBAL", "library_path": "{lib}", "api_version": "1.0", "implementation_version": "1", "description": ""}}}}"#), "\"name\""),
        ("v101_bad_layers.json", r#"{"file_format_version": "1.0.1", "layers": {"name": "X"}}"#.to_string(), "is not an object"),
        ("v110_bad_type.json", format!(r#"{{"file_format_version": "1.1.0", "layer": {{"name": "VK_LAYER_X", "type": "SOMETIMES", "library_path": "{lib}", "api_version": "1.0", "implementation_version": "1", "description": ""}}}}"#), "\"type\""),
        ("v111_bad_components.json", r#"{"file_format_version": "1.1.1", "layer": {"name": "VK_LAYER_M", "type": "GLOBAL", "component_layers": ["VK_LAYER_TEST_good", 7], "api_version": "1.0", "implementation_version": "1", "description": ""}}"#.to_string(), "component_layers"),
        // A JSON number where the Khronos loader reads only a string: refused by both.
        ("v112_number_implementation_version.json", format!(r#"{{"file_format_version": "1.1.2", "layer": {{"name": "VK_LAYER_P", "type": "GLOBAL", "library_path": "{lib}", "api_version": "1.0", "implementation_version": 1, "description": ""}}}}"#), "implementation_version"),
        ("v120_bad_description.json", format!(r#"{{"file_format_version": "1.2.0", "layer": {{"name": "VK_LAYER_E", "type": "GLOBAL", "library_path": "{lib}", "api_version": "1.0", "implementation_version": "1", "description": 7}}}}"#), "description"),
        ("v121_number_api_version.json", format!(r#"{{"file_format_version": "1.2.1", "layer": {{"name": "VK_LAYER_A", "type": "GLOBAL", "library_path": "{lib}", "api_version": 1.0, "implementation_version": "1", "description": ""}}}}"#), "api_version"),
        ("syntax.json", "{ \"file_format_version\": ".to_string(), "invalid JSON"),
    ];
    for (file, text, _) in &cases {
        std::fs::write(s.explicit.join(file), text).unwrap();
    }
    std::fs::write(
        s.implicit.join("no_disable.json"),
        format!(r#"{{"file_format_version": "1.0.0", "layer": {{"name": "VK_LAYER_I", "type": "GLOBAL", "library_path": "{lib}", "api_version": "1.0", "implementation_version": "1", "description": ""}}}}"#),
    )
    .unwrap();
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_good"), ("VK_LOADER_DEBUG", "warn"), ("TEST_DEVICE", "1")]);
    assert!(out.contains("RESULT VK_SUCCESS") && out.contains("LAYER_DRAWS 2"), "{out}{err}");
    assert_eq!(lines(&out, "LAYER VK_"), ["LAYER VK_LAYER_TEST_good test layer VK_LAYER_TEST_good"], "{out}");
    for (file, _, field) in cases.iter().map(|(f, t, w)| (f.to_string(), t, *w)).chain([("no_disable.json".to_string(), &String::new(), "disable_environment")]) {
        let line = err.lines().find(|l| l.contains(&file)).unwrap_or_else(|| panic!("no line for {file}:\n{err}"));
        assert!(line.contains(field), "{file}: {line}");
    }
}

/// With information messages on, the log names every manifest found (explicit ones too, though
/// none is enabled) with its file format, flags formats this loader does not know (the file is
/// still used), and names each layer inserted, bottom of the chain first: the Khronos loader's
/// lines, which its users search for.
#[test]
fn information_log_names_manifests_and_inserted_layers() {
    let s = setup("info-log");
    let a = s.implicit_layer("a", r#", "disable_environment": {"DISABLE_A": "1"}"#);
    let b = s.implicit_layer("b", r#", "disable_environment": {"DISABLE_B": "1"}"#);
    let e = s.explicit_layer("e", "");
    let newer = std::fs::read_to_string(&b).unwrap().replace(r#""file_format_version": "1.2.0""#, r#""file_format_version": "3.2.1""#);
    std::fs::write(&b, newer).unwrap();
    let (out, err) = s.run(&[("VK_LOADER_DEBUG", "info")]);
    assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
    for (manifest, version) in [(&a, "1.2.0"), (&b, "3.2.1"), (&e, "1.2.0")] {
        assert!(err.contains(&format!("Found manifest file {} (file version {version})", manifest.display())), "{err}");
    }
    let unknown = format!("loader_add_layer_properties: {} has unknown layer manifest file version 3.2.1.  May cause errors.", b.display());
    assert!(err.contains(&unknown), "{err}");
    let inserted: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split("Insert instance layer \"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(inserted, ["VK_LAYER_TEST_b", "VK_LAYER_TEST_a"], "{err}");
}

/// A layer whose `api_version` names another variant of the API (Vulkan SC) is skipped with the
/// Khronos loader's words; asked for by name, it is not present.
#[test]
fn layer_for_another_api_variant_is_skipped() {
    let s = setup("variant");
    let manifest = s.explicit_layer("sc", "");
    let text = std::fs::read_to_string(&manifest).unwrap().replace(r#""api_version": "1.4.0""#, r#""api_version": "1.1.4.0""#);
    std::fs::write(&manifest, text).unwrap();
    let (out, err) = s.run(&[("TEST_APP_LAYERS", "VK_LAYER_TEST_sc"), ("VK_LOADER_DEBUG", "warn")]);
    assert!(out.contains("RESULT VK_ERROR_LAYER_NOT_PRESENT"), "{out}{err}");
    let why = "Layer \"VK_LAYER_TEST_sc\" has an 'api_version' field which contains a non-zero variant value of 1.  Skipping Layer.";
    assert!(err.contains(why), "{err}");
}

/// Layer discovery: explicit_layer.d and implicit_layer.d under the XDG directories (HOME
/// fallback included), VK_ADD_LAYER_PATH / VK_ADD_IMPLICIT_LAYER_PATH before them, VK_LAYER_PATH /
/// VK_IMPLICIT_LAYER_PATH instead of them (empty values count as unset).
#[test]
fn layer_search_paths_and_environment() {
    let s = setup("search");
    let root = s.dir.join("xdg");
    let library = common::test_layer();
    let install = |dir: std::path::PathBuf, tag: &str| {
        std::fs::create_dir_all(&dir).unwrap();
        vk_test_layer::install::install(&library, &dir, tag, r#", "disable_environment": {"NO_TEST_LAYERS": "1"}"#).unwrap();
    };
    install(root.join("home/.local/share/vulkan/explicit_layer.d"), "home");
    install(root.join("data/vulkan/explicit_layer.d"), "data");
    install(root.join("data/vulkan/implicit_layer.d"), "implicit");
    install(root.join("add"), "added");
    install(root.join("add_implicit"), "added_implicit");
    install(root.join("replacement"), "replacement");
    let xdg = |extra: &[(&'static str, String)]| {
        let mut env: Vec<(&str, String)> = vec![
            ("HOME", root.join("home").display().to_string()),
            ("XDG_DATA_HOME", String::new()),
            ("XDG_CONFIG_HOME", String::new()),
            ("XDG_CONFIG_DIRS", root.join("none").display().to_string()),
            ("XDG_DATA_DIRS", root.join("data").display().to_string()),
            ("VK_LAYER_PATH", String::new()),
            ("VK_IMPLICIT_LAYER_PATH", String::new()),
        ];
        env.extend(extra.iter().cloned());
        env
    };
    let names = |env: Vec<(&str, String)>| -> Vec<String> {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (out, err) = s.run(&env);
        assert!(out.contains("RESULT VK_SUCCESS"), "{out}{err}");
        lines(&out, "LAYER VK_").iter().map(|l| l.split(' ').nth(1).unwrap().to_string()).collect()
    };
    assert_eq!(names(xdg(&[])), ["VK_LAYER_TEST_implicit", "VK_LAYER_TEST_home", "VK_LAYER_TEST_data"]);
    let added = xdg(&[
        ("VK_ADD_LAYER_PATH", root.join("add").display().to_string()),
        ("VK_ADD_IMPLICIT_LAYER_PATH", root.join("add_implicit").display().to_string()),
    ]);
    assert_eq!(
        names(added),
        ["VK_LAYER_TEST_added_implicit", "VK_LAYER_TEST_implicit", "VK_LAYER_TEST_added", "VK_LAYER_TEST_home", "VK_LAYER_TEST_data"]
    );
    let replaced = xdg(&[
        ("VK_ADD_LAYER_PATH", root.join("add").display().to_string()),
        ("VK_LAYER_PATH", root.join("replacement").display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", root.join("add_implicit").display().to_string()),
    ]);
    assert_eq!(names(replaced), ["VK_LAYER_TEST_added_implicit", "VK_LAYER_TEST_replacement"]);
}
