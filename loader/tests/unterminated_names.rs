//! A driver that fills `deviceName` and `extensionName` to their last byte, with no NUL (the test
//! driver's fault `unterminated_names`): the loader reads nothing past those arrays. The name it
//! logs (`VK_LOADER_DEBUG=driver`), explains (`VK_LOADER_EXPLAIN`) and records in the driver cache
//! is the array's first 255 bytes, so that it stays a C string when copied back out.

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The test driver's name of its one device, before the fault's padding.
const DEVICE: &str = "Test Driver discrete 0";

/// The child: creates an instance, lists each physical device's extensions as the loader
/// returns them (`EXTENSION <bytes before the NUL> <whether the array has a NUL>`), destroys it.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("unterminated") {
        return;
    }
    println!();
    // SAFETY: our libvulkan, whose initialisers only set up the loader.
    let lib = unsafe { libloading::Library::new(std::env::var("LIBVULKAN").unwrap()).unwrap() };
    // SAFETY: the export has this signature.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: a NULL or live instance of this loader, a C string.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is called through its own PFN type, with valid arguments, on live objects.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let app = VkApplicationInfo { pApplicationName: c"unterminated".as_ptr(), apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let extensions: PFN_vkEnumerateDeviceExtensionProperties = std::mem::transmute(get(instance, c"vkEnumerateDeviceExtensionProperties"));
        for physical in common::physical_devices(&get, instance) {
            let mut count = 0;
            extensions.unwrap()(physical, std::ptr::null(), &mut count, std::ptr::null_mut());
            let mut list = vec![VkExtensionProperties::default(); count as usize];
            extensions.unwrap()(physical, std::ptr::null(), &mut count, list.as_mut_ptr());
            for e in &list[..count as usize] {
                let bytes: Vec<u8> = e.extensionName.iter().map(|&c| c as u8).collect();
                let end = bytes.iter().position(|&b| b == 0);
                println!("EXTENSION {} {}", String::from_utf8_lossy(&bytes[..end.unwrap_or(bytes.len())]), end.is_some());
            }
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
    println!("DONE");
}

/// `name` padded with `#` to 255 bytes: what is left of a padded 256-byte array once cut to fit
/// a terminated copy.
fn cut(name: &str) -> String {
    format!("{name}{}", "#".repeat(255 - name.len()))
}

/// Every place `text` shows a padded name: each must be the cut name and end right after it
/// (no byte from past the array: the device's pipelineCacheUUID starts with `vk_test_driver`,
/// an extension's specVersion follows its name).
fn assert_cut_where_shown(text: &str, name: &str, what: &str) {
    let mut shown = 0;
    for (at, _) in text.match_indices(name) {
        let rest = &text[at + name.len()..];
        let padding = rest.bytes().take_while(|&b| b == b'#').count();
        if padding == 0 {
            continue;
        }
        shown += 1;
        assert_eq!(padding, 255 - name.len(), "{what}: {name} padded to {} bytes, then {:?}", name.len() + padding, &rest[padding..][..20.min(rest.len() - padding)]);
        assert!(rest[padding..].starts_with('"'), "{what}: bytes past the array after {name}: {:?}", &rest[padding..][..20.min(rest.len() - padding)]);
    }
    assert!(shown > 0, "{what} shows no padded {name}:\n{text}");
}

/// Ages a file by a minute: the driver cache trusts no file modified in the last two seconds.
fn age(path: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(old).unwrap();
}

#[test]
fn names_filling_their_arrays_are_logged_explained_and_recorded_cut_to_255_bytes() {
    let dir = common::scratch("unterminated-names");
    let driver = common::tagged_driver(&dir, "a");
    let manifest = common::driver_manifest(&dir, "a.json", &driver);
    let libvulkan = dir.join("libvulkan.so.1");
    std::fs::copy(common::libvulkan(), &libvulkan).unwrap();
    for path in [&driver, &manifest, &libvulkan] {
        age(path);
    }
    let sysfs = dir.join("sysfs");
    std::fs::create_dir_all(sysfs.join("proc/bus/pci")).unwrap();
    let explain = dir.join("explain.jsonl");
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_TEST_DRIVER_FAULTS", "unterminated_names".into()),
        ("VK_TEST_DRIVER_DEVICE_EXTENSIONS", "VK_KHR_swapchain".into()),
        ("VK_LOADER_DEBUG", "driver".into()),
        ("VK_LOADER_EXPLAIN", explain.display().to_string()),
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("VK_LOADER_TEST_SYSFS_ROOT", sysfs.display().to_string()),
        ("LIBVULKAN", libvulkan.display().to_string()),
    ];
    // The first run records the driver, the second its device's answers; the third answers the
    // device's queries from that record without loading the driver.
    let runs: Vec<common::ChildRun> = (0..3).map(|_| common::run_scenario("scenario_entry", "unterminated", &env)).collect();
    for (i, run) in runs.iter().enumerate() {
        assert!(run.status.success() && run.stdout.contains("DONE"), "run {i}:\n{}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(&format!("physical device \"{DEVICE}#")), "run {i} logs no device name:\n{}", run.stderr);
        assert_cut_where_shown(&run.stderr, DEVICE, &format!("run {i}'s log"));
    }
    let documents = std::fs::read_to_string(&explain).unwrap();
    assert_cut_where_shown(&documents, DEVICE, "the explained plan");
    for line in documents.lines() {
        let doc: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(doc["devices"][0]["name"], cut(DEVICE), "{doc:#}");
    }
    let lazy = &runs[2];
    assert!(lazy.stderr.contains("a.json: not loaded"), "the last run loaded the driver:\n{}", lazy.stderr);
    let answered: Vec<&str> = lazy.stdout.lines().filter(|l| l.starts_with("EXTENSION ")).collect();
    assert_eq!(answered, [format!("EXTENSION {} true", cut("VK_KHR_swapchain"))], "{}", lazy.stderr);
}
