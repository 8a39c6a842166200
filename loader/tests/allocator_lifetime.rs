//! What outlives a call is never the application's memory: an application's allocator passed to
//! `vkCreateInstance` serves that instance and nothing the loader keeps for the process, so once
//! the instance is destroyed the application may unload the allocator's code and the loader
//! never calls it again.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Mutex;

use vk_generated::types::*;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// Set once the application is done with the allocator (as if the library holding it were
/// unloaded): every call after that is counted in `CALLS_AFTER_POISON`.
static POISONED: AtomicBool = AtomicBool::new(false);
static CALLS_AFTER_POISON: AtomicUsize = AtomicUsize::new(0);
/// The live blocks and their layouts, by address.
static BLOCKS: Mutex<BTreeMap<usize, Layout>> = Mutex::new(BTreeMap::new());

/// A `PFN_vkAllocationFunction` that counts its live blocks and its calls after the poisoning.
///
/// # Safety
/// As Vulkan's allocation callback: `align` is a power of two.
unsafe extern "system" fn allocate(_: *mut c_void, size: usize, align: usize, _: VkSystemAllocationScope) -> *mut c_void {
    if POISONED.load(Ordering::SeqCst) {
        CALLS_AFTER_POISON.fetch_add(1, Ordering::SeqCst);
    }
    let Ok(layout) = Layout::from_size_align(size.max(1), align) else { return std::ptr::null_mut() };
    // SAFETY: the layout is not zero-sized.
    let block = unsafe { System.alloc(layout) };
    if !block.is_null() {
        BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).insert(block as usize, layout);
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
    block.cast()
}

/// A `PFN_vkFreeFunction`; a block `allocate` did not hand out is counted as live forever (a panic
/// cannot unwind out of an `extern "system"` function).
///
/// # Safety
/// As Vulkan's free callback: `memory` is NULL or a block of `allocate` not freed yet.
unsafe extern "system" fn free(_: *mut c_void, memory: *mut c_void) {
    if memory.is_null() {
        return;
    }
    if POISONED.load(Ordering::SeqCst) {
        CALLS_AFTER_POISON.fetch_add(1, Ordering::SeqCst);
    }
    let Some(layout) = BLOCKS.lock().unwrap_or_else(|e| e.into_inner()).remove(&(memory as usize)) else { return };
    LIVE.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: `allocate` made this block with this layout, and it leaves the map only once.
    unsafe { System.dealloc(memory.cast(), layout) };
}

/// The child: an instance created with the allocator while a settings file's `log_locations` are
/// in force, then destroyed; then the allocator is poisoned, the settings file names another log,
/// and the loader reads it again and logs (a query and an instance without an allocator).
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    assert_eq!(scenario, "settings-log");
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
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // the instances are used between their creation and their destruction; the other pointers
    // point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let info = VkInstanceCreateInfo::default();
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, &callbacks, &mut instance), VkResult::SUCCESS);
        assert!(LIVE.load(Ordering::SeqCst) > 0, "the instance's memory does not come from the application's allocator");
        // Enumerated, so that the driver cache records the devices (a later launch's driver is lazy).
        let enumerate: PFN_vkEnumeratePhysicalDevices = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let mut count = 0;
        assert_eq!(enumerate.unwrap()(instance, &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        assert_eq!(enumerate.unwrap()(instance, &mut count, devices.as_mut_ptr()), VkResult::SUCCESS);
        let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        let mut props = VkPhysicalDeviceProperties::default();
        properties.unwrap()(devices[0], &mut props);
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, &callbacks);
        println!("LIVE-AFTER-DESTROY {}", LIVE.load(Ordering::SeqCst));
        POISONED.store(true, Ordering::SeqCst);

        let settings = std::env::var("SETTINGS_FILE").unwrap();
        std::fs::write(&settings, std::env::var("SETTINGS_THEN").unwrap()).unwrap();
        let extensions: PFN_vkEnumerateInstanceExtensionProperties =
            std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
        let mut count = 0;
        assert_eq!(extensions.unwrap()(std::ptr::null(), &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        destroy.unwrap()(instance, std::ptr::null());
        println!("CALLS-AFTER-POISON {}", CALLS_AFTER_POISON.load(Ordering::SeqCst));
    }
}

/// A settings file's `log_locations` in force during `vkCreateInstance` with an allocator: the
/// list of log files the loader keeps for the process is not the application's memory (it was:
/// left live past `vkDestroyInstance`, then freed through the application's `pfnFree` when the
/// settings changed). Twice, with a layer: the first launch loads the driver and records it in the
/// driver cache, the second finds its driver lazy.
#[test]
fn log_locations_read_inside_the_allocator_scope_keep_none_of_its_memory() {
    let dir = common::scratch("allocator-lifetime-settings-log");
    // A copy of the driver and its manifest, aged: the driver cache trusts no file modified in the
    // last two seconds.
    let driver = common::tagged_driver(&dir, "lifetime");
    let manifest = common::driver_manifest(&dir, "d.json", &driver);
    for path in [&driver, &manifest] {
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
    }
    let settings = dir.join("config/vulkan/loader_settings.d/vk_loader_settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let (first, then) = (dir.join("first.log"), dir.join("then-a-longer-name.log"));
    let text = |log: &Path| {
        format!(
            r#"{{"file_format_version": "1.0.0", "settings": {{"log_locations": [{{"destinations": ["{}"], "filters": ["all"]}}]}}}}"#,
            log.display()
        )
    };
    let layers = dir.join("layers");
    std::fs::create_dir_all(&layers).unwrap();
    let layer = vk_test_layer::install::install(&common::test_layer(), &layers, "lifetime", "").unwrap();
    let sub = |name: &str| dir.join(name).display().to_string();
    for launch in ["cold", "lazy"] {
        std::fs::write(&settings, text(&first)).unwrap();
        let _ = std::fs::remove_file(&then);
        let (ok, out, err) = common::child(
            "settings-log",
            &[
                ("VK_DRIVER_FILES", manifest.display().to_string()),
                ("VK_LAYER_PATH", layers.display().to_string()),
                ("VK_INSTANCE_LAYERS", layer.name.clone()),
                ("HOME", sub("home")),
                ("XDG_CONFIG_HOME", sub("config")),
                ("XDG_CACHE_HOME", sub("cache")),
                ("XDG_DATA_HOME", sub("data")),
                ("XDG_CONFIG_DIRS", sub("etc-xdg")),
                ("XDG_DATA_DIRS", sub("usr-share")),
                ("SETTINGS_FILE", settings.display().to_string()),
                ("SETTINGS_THEN", text(&then)),
            ],
        );
        let context = format!("{launch} launch:\n{out}{err}");
        assert!(ok, "{context}");
        let read = |log: &Path| std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}\n{context}", log.display()));
        // The settings were in force at each step.
        assert!(read(&first).contains("[Vulkan Loader]") && read(&then).contains("[Vulkan Loader]"), "{context}");
        if launch == "lazy" {
            assert!(read(&first).contains("answered from the driver cache"), "the driver was not lazy: {}", read(&first));
        }
        assert!(out.contains("LIVE-AFTER-DESTROY 0\n"), "the loader kept the application's memory past vkDestroyInstance, {context}");
        assert!(out.contains("CALLS-AFTER-POISON 0\n"), "the loader called the application's allocator after its instance was gone, {context}");
    }
}
