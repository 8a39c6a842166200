//! The loader with the project's test driver: discovery through `VK_DRIVER_FILES`, bad manifests
//! skipped with their reason, device order, devices and dispatch.
//!
//! Each scenario runs in a child process (this test binary re-run with `SCENARIO` set), because the
//! loader reads the environment and the process keeps what it dlopens.

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;
use std::process::Command;

use vk_generated::types::*;

/// Runs `scenario` in a child process with `env`; returns (success, stdout, stderr).
fn child(scenario: &str, env: &[(&str, String)]) -> (bool, String, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "scenario_entry", "--nocapture", "--test-threads=1"]).env("SCENARIO", scenario);
    for var in ["VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES", "VK_LOADER_DEVICE_SELECT", "VK_LOADER_DISABLE_SELECT", "VK_LOADER_DEBUG"] {
        cmd.env_remove(var);
    }
    // No host layer: these tests are about drivers.
    let no_layers = common::scratch("drivers-no-layers");
    cmd.env("VK_IMPLICIT_LAYER_PATH", &no_layers).env("VK_LAYER_PATH", &no_layers);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The child side: one entry point that dispatches on `SCENARIO`.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let info = VkInstanceCreateInfo::default();
        let mut instance = VkInstance::NULL;
        let result = create.unwrap()(&info, std::ptr::null(), &mut instance);
        println!("RESULT {result:?}");
        if result != VkResult::SUCCESS {
            return;
        }
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let props: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        let mut count = 0;
        enumerate.unwrap()(instance, &mut count, std::ptr::null_mut());
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr());
        for d in &devices {
            let mut p = VkPhysicalDeviceProperties::default();
            props.unwrap()(*d, &mut p);
            println!("DEVICE {}", CStr::from_ptr(p.deviceName.as_ptr()).to_string_lossy());
        }
        if scenario == "draw" {
            draw(&get, instance, devices[0]);
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
}

/// Creates a device, records draws through the GDPA pointer, and reads the driver's counter.
unsafe fn draw(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, pd: VkPhysicalDevice) {
    let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
    let priority = 1.0f32;
    let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
    let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
    let mut device = VkDevice::NULL;
    assert_eq!(create.unwrap()(pd, &info, std::ptr::null(), &mut device), VkResult::SUCCESS);
    let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
    let dev = |name: &CStr| gdpa.unwrap()(device, name.as_ptr());
    let pool_create: PFN_vkCreateCommandPool = std::mem::transmute(dev(c"vkCreateCommandPool"));
    let mut pool = VkCommandPool::NULL;
    pool_create.unwrap()(device, &VkCommandPoolCreateInfo::default(), std::ptr::null(), &mut pool);
    let alloc: PFN_vkAllocateCommandBuffers = std::mem::transmute(dev(c"vkAllocateCommandBuffers"));
    let info = VkCommandBufferAllocateInfo { commandPool: pool, commandBufferCount: 1, ..Default::default() };
    let mut cmd = VkCommandBuffer::NULL;
    assert_eq!(alloc.unwrap()(device, &info, &mut cmd), VkResult::SUCCESS);
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
    // VK_LOADER_DISABLE_SELECT keeps driver order.
    let mut keep = env.to_vec();
    keep.push(("VK_LOADER_DISABLE_SELECT", "1".into()));
    let (_, out, _) = child("list", &keep);
    assert_eq!(devices(&out)[0], "Test Driver cpu 0");
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
    let bad = format!("{}:{}:{}", path(&broken), path(&missing), path(&truncated));
    let (ok, out, err) = child("list", &[("VK_DRIVER_FILES", format!("{bad}:{}", path(&good)))]);
    assert!(ok && out.contains("RESULT VK_SUCCESS"), "good driver beside bad ones still works: {out}{err}");
    assert_eq!(devices(&out).len(), 1);
    // With no good driver: VK_ERROR_INCOMPATIBLE_DRIVER and one stderr line per rejected
    // manifest, even without VK_LOADER_DEBUG.
    let (_, out, err) = child("list", &[("VK_DRIVER_FILES", bad)]);
    assert!(out.contains("RESULT VK_ERROR_INCOMPATIBLE_DRIVER"), "{out}");
    for (manifest, why) in [(&broken, "invalid JSON"), (&missing, "libnot_there.so"), (&truncated, "truncated")] {
        let line = err.lines().find(|l| l.contains(&path(manifest))).unwrap_or_else(|| panic!("no line for {manifest:?}:\n{err}"));
        assert!(line.contains(why), "{line}");
    }
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
