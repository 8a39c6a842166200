//! A driver removes physical devices between two enumerations and frees them (an eGPU unplugged;
//! the test driver's `VK_TEST_DRIVER_FREE_HIDDEN`), then adds them back: each enumeration lists
//! the devices present, the kept ones with the handles they had, and the loader never reads the
//! memory of a device the driver freed (run under valgrind's memcheck). At the end, a group count
//! larger than the application's array reads nothing past the array.

mod common;

use std::collections::HashMap;
use std::ffi::{c_char, CStr};

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Which devices the driver shows at each step (positions in `VK_TEST_DRIVER_DEVICES`): removals
/// and additions, one and several at a time, as the Khronos suite's
/// `EnumeratePhysicalDevices.MultipleAddRemoves` makes them.
const STEPS: &[&str] = &["0,1,2", "0,2", "0,1,2", "2", "1,2", "0,1,2", "0,2"];

/// The child: at each step, sets what the driver shows and enumerates devices and groups. Prints
/// `STEP <visible> <count>: <name>=<kept|added>, ...` in the loader's order (`kept`: the handle of
/// the previous step; a device listed then under another handle panics), then `GROUPS <count>`.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("removed") {
        return;
    }
    println!();
    // SAFETY: our libvulkan, whose initialisers only set up the loader.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the export has this signature.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: a NULL or live instance of this loader, a C string.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is called through its own PFN type, with valid arguments, on live
    // objects; a device is used only in the step that listed it.
    unsafe {
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let app = VkApplicationInfo { apiVersion: vk_generated::make_api_version(0, 1, 3, 0), ..Default::default() };
        let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, std::ptr::null(), &mut instance), VkResult::SUCCESS);
        let properties: PFN_vkGetPhysicalDeviceProperties = std::mem::transmute(get(instance, c"vkGetPhysicalDeviceProperties"));
        let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
        let mut previous: HashMap<String, VkPhysicalDevice> = HashMap::new();
        for visible in STEPS {
            std::env::set_var("VK_TEST_DRIVER_VISIBLE_DEVICES", visible);
            let devices = common::physical_devices(&get, instance);
            let mut now = HashMap::new();
            let mut listed = Vec::new();
            for &device in &devices {
                let mut p = VkPhysicalDeviceProperties::default();
                properties.unwrap()(device, &mut p);
                let name = CStr::from_ptr(p.deviceName.as_ptr()).to_string_lossy().into_owned();
                let how = match previous.get(&name) {
                    Some(&before) => {
                        assert_eq!(before, device, "step {visible}: {name} kept under another handle");
                        "kept"
                    }
                    None => "added",
                };
                listed.push(format!("{name}={how}"));
                now.insert(name, device);
            }
            println!("STEP {visible} {}: {}", devices.len(), listed.join(", "));
            let mut count = 0;
            assert_eq!(groups.unwrap()(instance, &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
            let mut list = vec![VkPhysicalDeviceGroupProperties::default(); count as usize];
            assert_eq!(groups.unwrap()(instance, &mut count, list.as_mut_ptr()), VkResult::SUCCESS);
            let members: Vec<VkPhysicalDevice> = list.iter().flat_map(|g| g.physicalDevices[..g.physicalDeviceCount as usize].to_vec()).collect();
            assert_eq!(members, devices, "step {visible}: the groups' members are the devices listed");
            println!("GROUPS {count}");
            previous = now;
        }
        // A count larger than the array (4 for the 2 groups there are, in a heap array of 2), as
        // the Khronos suite's CallTwiceRemoveGroupInBetween passes: only the structures filled
        // are read (their pNext), none past the array.
        let mut count = 4;
        let mut two = vec![VkPhysicalDeviceGroupProperties::default(); 2];
        let result = groups.unwrap()(instance, &mut count, two.as_mut_ptr());
        println!("OVERSIZED {result:?} {count}");
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, std::ptr::null());
    }
    println!("DONE");
}

/// Memcheck, with the test driver's own statics (lost when it is unloaded) suppressed.
const MEMCHECK: &str = concat!(
    "valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --keep-debuginfo=yes --suppressions=",
    env!("CARGO_MANIFEST_DIR"),
    "/tests/unloaded-test-driver.supp"
);

#[test]
fn devices_removed_and_freed_between_enumerations_are_gone_and_never_read() {
    assert!(std::process::Command::new("valgrind").arg("--version").output().is_ok(), "valgrind missing: install valgrind");
    let dir = common::scratch("removed-devices");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_TEST_DRIVER_DEVICES", "discrete,integrated,virtual".to_string()),
        ("VK_TEST_DRIVER_DEVICE_EXTENSIONS", "VK_KHR_swapchain,VK_EXT_pci_bus_info".to_string()),
        ("VK_TEST_DRIVER_FREE_HIDDEN", "1".to_string()),
    ];
    let run = common::run_scenario_under(MEMCHECK, "scenario_entry", "removed", &env);
    assert!(run.status.success() && run.stdout.contains("DONE"), "{:?}\n{}{}", run.status, run.stdout, run.stderr);
    assert!(!run.stderr.contains("=="), "memcheck reported:\n{}", run.stderr);
    assert!(run.stdout.contains("OVERSIZED VK_SUCCESS 2\n"), "{}", run.stdout);
    let (d, i, v) = ("Test Driver discrete 0", "Test Driver integrated 1", "Test Driver virtual 2");
    let steps: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("STEP ") || l.starts_with("GROUPS ")).collect();
    assert_eq!(
        steps,
        [
            format!("STEP 0,1,2 3: {d}=added, {i}=added, {v}=added"),
            "GROUPS 3".into(),
            format!("STEP 0,2 2: {d}=kept, {v}=kept"),
            "GROUPS 2".into(),
            format!("STEP 0,1,2 3: {d}=kept, {i}=added, {v}=kept"),
            "GROUPS 3".into(),
            format!("STEP 2 1: {v}=kept"),
            "GROUPS 1".into(),
            format!("STEP 1,2 2: {i}=added, {v}=kept"),
            "GROUPS 2".into(),
            format!("STEP 0,1,2 3: {d}=added, {i}=kept, {v}=kept"),
            "GROUPS 3".into(),
            format!("STEP 0,2 2: {d}=kept, {v}=kept"),
            "GROUPS 2".into(),
        ],
        "{}",
        run.stderr
    );
}
