//! The application's `VkAllocationCallbacks`: the loader's instance, device and messenger memory
//! goes through them, and an allocator that fails at the N-th allocation, for every N until
//! creation succeeds, gets `VK_ERROR_OUT_OF_HOST_MEMORY` with nothing leaked.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, c_void, CStr};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};
use std::sync::Mutex;

use common::child;
use vk_generated::types::*;

static LIVE: AtomicIsize = AtomicIsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);
static FAIL_AT: AtomicUsize = AtomicUsize::new(0);

/// The live blocks and their layouts, by address: `free` of anything else is a bug this test reports.
static BLOCKS: Mutex<BTreeMap<usize, Layout>> = Mutex::new(BTreeMap::new());

/// A `PFN_vkAllocationFunction` that fails at the `FAIL_AT`-th call.
///
/// # Safety
/// As Vulkan's allocation callback: `align` is a power of two.
unsafe extern "system" fn allocate(_: *mut c_void, size: usize, align: usize, _: VkSystemAllocationScope) -> *mut c_void {
    if CALLS.fetch_add(1, Ordering::SeqCst) + 1 == FAIL_AT.load(Ordering::SeqCst) {
        return std::ptr::null_mut();
    }
    let layout = Layout::from_size_align(size.max(1), align).unwrap();
    // SAFETY: the layout is not zero-sized.
    let block = unsafe { System.alloc(layout) };
    if !block.is_null() {
        BLOCKS.lock().unwrap().insert(block as usize, layout);
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
    block as *mut c_void
}

/// A `PFN_vkFreeFunction`; the process aborts on a block `allocate` did not hand out (a panic
/// cannot unwind out of an `extern "system"` function).
///
/// # Safety
/// As Vulkan's free callback: `memory` is NULL or a block of `allocate` not freed yet (checked).
unsafe extern "system" fn free(_: *mut c_void, memory: *mut c_void) {
    if memory.is_null() {
        return;
    }
    let layout = BLOCKS.lock().unwrap().remove(&(memory as usize));
    let layout = layout.unwrap_or_else(|| panic!("free of a block this allocator did not make"));
    LIVE.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: `allocate` made this block with this layout, and it leaves the map only once.
    unsafe { System.dealloc(memory as *mut u8, layout) };
}

#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of the type it is read as; `lib` stays loaded
    // while `gipa` is used.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or one this scenario created and has
    // not destroyed.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    let callbacks = VkAllocationCallbacks { pfnAllocation: Some(allocate), pfnFree: Some(free), ..Default::default() };
    assert_eq!(scenario, "fail-each");
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the handles passed are the loader's, each used between its creation and its destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let extensions = [c"VK_EXT_debug_utils".as_ptr()];
        let info = VkInstanceCreateInfo { enabledExtensionCount: 1, ppEnabledExtensionNames: extensions.as_ptr(), ..Default::default() };
        // Creation with an allocator that never fails: how many allocations it makes, once that
        // is the same twice in a row (the first creation also does once-per-process work such as
        // reading VK_LOADER_DEBUG; a driver cache written meanwhile is read again).
        let mut destroy: PFN_vkDestroyInstance = None;
        FAIL_AT.store(0, Ordering::SeqCst);
        let mut counts = Vec::new();
        while counts.len() < 10 || counts[counts.len() - 1] != counts[counts.len() - 2] {
            assert!(counts.len() < 16, "the allocations of a creation do not settle: {counts:?}");
            let mut instance = VkInstance::NULL;
            CALLS.store(0, Ordering::SeqCst);
            assert_eq!(create.unwrap()(&info, &callbacks, &mut instance), VkResult::SUCCESS);
            counts.push(CALLS.load(Ordering::SeqCst));
            destroy = std::mem::transmute::<PFN_vkVoidFunction, PFN_vkDestroyInstance>(get(instance, c"vkDestroyInstance"));
            assert!(LIVE.load(Ordering::SeqCst) > 0, "the instance's memory does not come from the application's allocator");
            destroy.unwrap()(instance, &callbacks);
        }
        CALLS.store(counts[counts.len() - 1], Ordering::SeqCst);
        println!("ALLOCATIONS {}", CALLS.load(Ordering::SeqCst));
        println!("LEAKED-AFTER-DESTROY {}", LIVE.load(Ordering::SeqCst));

        // Fail at the N-th allocation, for every N until creation succeeds.
        let mut failures = 0;
        for n in 1.. {
            FAIL_AT.store(n, Ordering::SeqCst);
            CALLS.store(0, Ordering::SeqCst);
            let mut instance = VkInstance::NULL;
            let result = create.unwrap()(&info, &callbacks, &mut instance);
            if result == VkResult::SUCCESS {
                println!("SUCCEEDED-AT {n}");
                // A device and a messenger, each failing once at their first allocation.
                device_and_messenger(&get, instance, &callbacks);
                destroy.unwrap()(instance, &callbacks);
                break;
            }
            failures += 1;
            if result != VkResult::ERROR_OUT_OF_HOST_MEMORY || LIVE.load(Ordering::SeqCst) != 0 {
                println!("BAD n={n} {result:?} live={}", LIVE.load(Ordering::SeqCst));
            }
        }
        println!("FAILURES {failures}");
        println!("LEAKED {}", LIVE.load(Ordering::SeqCst));
    }
}

/// Creates a device and a messenger, each failing once at its first allocation, then succeeding
/// (the device, destroyed again): what each leaves behind.
///
/// # Safety
/// `instance` is a live instance of the loader `get` asks, with VK_EXT_debug_utils enabled, and
/// created with `callbacks`.
unsafe fn device_and_messenger(get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction, instance: VkInstance, callbacks: &VkAllocationCallbacks) {
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN
    // type; the instance is live (the contract), the device is used between its creation and its
    // destruction, and the other pointers point to locals that outlive each call.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut count = 1;
        let mut pd = VkPhysicalDevice::NULL;
        enumerate.unwrap()(instance, &mut count, &mut pd);
        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        let live_before = LIVE.load(Ordering::SeqCst);
        let mut device = VkDevice::NULL;
        FAIL_AT.store(CALLS.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
        let failed = create_device.unwrap()(pd, &info, callbacks, &mut device);
        println!("DEVICE-FAILING {failed:?} live-delta={}", LIVE.load(Ordering::SeqCst) - live_before);
        FAIL_AT.store(0, Ordering::SeqCst);
        assert_eq!(create_device.unwrap()(pd, &info, callbacks, &mut device), VkResult::SUCCESS);
        println!("DEVICE-LIVE-DELTA {}", LIVE.load(Ordering::SeqCst) - live_before);
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        let destroy_device: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
        destroy_device.unwrap()(device, callbacks);
        println!("DEVICE-DESTROYED-DELTA {}", LIVE.load(Ordering::SeqCst) - live_before);

        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT = std::mem::transmute(get(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let info = VkDebugUtilsMessengerCreateInfoEXT { messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1111), ..Default::default() };
        let mut messenger = VkDebugUtilsMessengerEXT::NULL;
        FAIL_AT.store(CALLS.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
        let failed = create_messenger.unwrap()(instance, &info, callbacks, &mut messenger);
        println!("MESSENGER-FAILING {failed:?} live-delta={}", LIVE.load(Ordering::SeqCst) - live_before);
    }
}

#[test]
fn failing_allocator_gets_out_of_host_memory_and_nothing_leaks() {
    let dir = common::scratch("allocation");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    check_fail_each(&[("VK_DRIVER_FILES", manifest.display().to_string())]);
}

/// The same with an implicit and an explicit layer: their manifests are parsed into the loader's
/// process-wide cache during creation, which must not hold the application's memory.
#[test]
fn failing_allocator_with_layers_leaks_nothing_either() {
    let dir = common::scratch("allocation-layers");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let (explicit, implicit) = (dir.join("explicit"), dir.join("implicit"));
    std::fs::create_dir_all(&explicit).unwrap();
    std::fs::create_dir_all(&implicit).unwrap();
    let layer = vk_test_layer::install::install(&common::test_layer(), &explicit, "alloc", "").unwrap();
    let disable = r#", "disable_environment": {"VK_TEST_ALLOCATION_NO_IMPLICIT": "1"}"#;
    vk_test_layer::install::install(&common::test_layer(), &implicit, "allocimplicit", disable).unwrap();
    check_fail_each(&[
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_LAYER_PATH", explicit.display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", implicit.display().to_string()),
        ("VK_INSTANCE_LAYERS", layer.name),
    ]);
}

fn check_fail_each(env: &[(&str, String)]) {
    let (ok, out, err) = child("fail-each", env);
    assert!(ok, "{out}{err}");
    let value = |key: &str| -> String {
        let line = out.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap_or_else(|| panic!("no {key}:\n{out}{err}"));
        line[key.len()..].trim().to_string()
    };
    let allocations: usize = value("ALLOCATIONS").parse().unwrap();
    assert!(allocations > 10, "{out}");
    assert_eq!(value("LEAKED-AFTER-DESTROY"), "0", "{out}");
    assert!(!out.contains("BAD "), "a failure that was not OUT_OF_HOST_MEMORY, or leaked:\n{out}");
    // Every allocation of a successful creation was tried as the failing one.
    assert_eq!(value("SUCCEEDED-AT").parse::<usize>().unwrap(), allocations + 1, "{out}");
    assert_eq!(value("FAILURES").parse::<usize>().unwrap(), allocations, "{out}");
    assert_eq!(value("DEVICE-FAILING"), "VK_ERROR_OUT_OF_HOST_MEMORY live-delta=0", "{out}");
    assert_ne!(value("DEVICE-LIVE-DELTA"), "0", "the device's memory does not come from the application's allocator:\n{out}");
    assert_eq!(value("DEVICE-DESTROYED-DELTA"), "0", "{out}");
    assert_eq!(value("MESSENGER-FAILING"), "VK_ERROR_OUT_OF_HOST_MEMORY live-delta=0", "{out}");
    assert_eq!(value("LEAKED"), "0", "{out}");
}
