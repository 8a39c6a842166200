//! A panic while a lazy driver loads fails the call that needed the driver with its error code; it
//! does not unwind into the application through `extern "system"`, which would abort it. The
//! generated terminators load a lazy driver under `ffi::guard`; the panic is injected in the
//! loader's debug builds through `VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD`.
//!
//! Each step runs in a child process (this test binary with `SCENARIO` set): the first two record
//! the driver and its physical device in the driver cache, the third finds it lazy.

mod common;

use std::ffi::c_char;
use std::path::Path;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The child: creates an instance and lists its physical devices (answered from the driver cache
/// once it is warm), then, with the panic injected, asks each device twice for image format
/// properties, which no record answers: each call needs the driver. The variable is set only
/// after `vkCreateInstance`, as the environment is in the driver cache's key.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("lazy-panic") {
        return;
    }
    println!();
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(std::env::var("LIBVULKAN").unwrap()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: each command is `gipa`'s answer for the name beside it, so it has that PFN type; the
    // instance and its devices are used between the instance's creation and its destruction; the
    // other pointers point to locals that outlive each call.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance".as_ptr()));
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let get = |name: &std::ffi::CStr| gipa(instance, name.as_ptr());
        let devices = common::physical_devices(&|i, name| gipa(i, name.as_ptr()), instance);
        println!("DEVICES {}", devices.len());
        std::env::set_var("VK_LOADER_TEST_PANIC_AT_DRIVER_LOAD", "1");
        let image_format: PFN_vkGetPhysicalDeviceImageFormatProperties = std::mem::transmute(get(c"vkGetPhysicalDeviceImageFormatProperties"));
        for &device in &devices {
            for _ in 0..2 {
                let mut properties = VkImageFormatProperties::default();
                let result = image_format.unwrap()(
                    device,
                    VkFormat::R8G8B8A8_UNORM,
                    VkImageType::TYPE_2D,
                    VkImageTiling::OPTIMAL,
                    VkImageUsageFlags::SAMPLED_BIT,
                    VkImageCreateFlags::default(),
                    &mut properties,
                );
                println!("IMAGE_FORMAT {result:?}");
            }
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
    println!("SURVIVED");
}

/// Ages a file by a minute: the cache trusts no file modified in the last two seconds.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
}

#[test]
fn a_panic_while_a_lazy_driver_loads_fails_the_call_instead_of_aborting() {
    // The injection is compiled into debug builds of the loader only.
    if !cfg!(debug_assertions) {
        return;
    }
    let dir = common::scratch("lazy-load-panic");
    let driver = common::tagged_driver(&dir, "a");
    let manifest = common::driver_manifest(&dir, "a.json", &driver);
    let libvulkan = dir.join("libvulkan.so.1");
    std::fs::copy(common::libvulkan(), &libvulkan).unwrap();
    for path in [&driver, &manifest, &libvulkan] {
        age(path);
    }
    let sysfs = dir.join("sysfs");
    std::fs::create_dir_all(sysfs.join("proc/bus/pci")).unwrap();
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_TEST_DRIVER_DEVICES_A", "discrete:10de:2330".into()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("VK_LOADER_TEST_SYSFS_ROOT", sysfs.display().to_string()),
        ("VK_LOADER_DEBUG", "driver,error".into()),
        ("LIBVULKAN", libvulkan.display().to_string()),
    ];
    let run = || {
        let run = common::run_scenario("scenario_entry", "lazy-panic", &env);
        (run.status, run.stdout, run.stderr)
    };
    // The first process loads the driver (the cache is cold) and records it; the next ones find it
    // lazy once its physical device is recorded too.
    let lazy = "a.json: not loaded: its 1 physical devices answered from the driver cache until first needed";
    let mut runs = (0..3).map(|_| run());
    let (status, out, err) = runs.find(|(status, out, err)| {
        let is_lazy = err.contains(lazy);
        if !is_lazy {
            assert!(status.success(), "{status:?}\n{out}\n{err}");
            let answered = out.contains("IMAGE_FORMAT ") && !out.contains("IMAGE_FORMAT VK_ERROR_INITIALIZATION_FAILED");
            assert!(answered, "the driver answers when it was loaded at vkCreateInstance\n{out}\n{err}");
        }
        is_lazy
    })
    .expect("the driver is lazy by the third process");
    assert!(status.success(), "the panic reached the application: {status:?}\n{out}\n{err}");
    assert!(out.contains("DEVICES 1\n") && out.contains("SURVIVED"), "{out}\n{err}");
    let results: Vec<&str> = out.lines().filter_map(|l| l.strip_prefix("IMAGE_FORMAT ")).collect();
    assert_eq!(results, ["VK_ERROR_INITIALIZATION_FAILED"; 2], "each call that needed the driver fails\n{err}");
    assert!(
        err.contains("vkGetPhysicalDeviceImageFormatProperties: internal error (panic caught at the API boundary)"),
        "{err}"
    );
}
