//! The test driver on its own, without a loader: this test plays the loader's part, dlopening
//! `libvk_test_driver.so` from the target directory and calling its `vk_icd*` entry points.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard, OnceLock};

use libloading::Library;
use vk_generated::layer_abi::{
    PFN_vk_icdGetInstanceProcAddr, PFN_vk_icdGetPhysicalDeviceProcAddr,
    PFN_vk_icdNegotiateLoaderICDInterfaceVersion, ICD_LOADER_MAGIC,
};
use vk_generated::make_api_version;
use vk_generated::types::*;

/// The driver reads the environment and keeps the negotiated version in a global: tests that
/// touch either run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The driver cargo built for this test run. The test executable is `target/<profile>/deps/direct-*`;
/// `cargo test` leaves the cdylib beside it in `deps/` (only `cargo build` copies it up to
/// `target/<profile>/`, where it may be stale), so `deps/` is searched first.
fn library_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("target/<profile>/deps");
    let candidates = [
        deps.join("libvk_test_driver.so"),
        deps.parent().unwrap_or(deps).join("libvk_test_driver.so"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("libvk_test_driver.so not built: {candidates:?}"))
}

struct Driver {
    _library: Library,
    negotiate: unsafe extern "system" fn(*mut u32) -> VkResult,
    gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction,
    gpdpa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction,
}

impl Driver {
    fn open(path: &Path) -> Driver {
        // SAFETY: the test driver's initialisers ask nothing of us; each entry point is read as
        // the type the loader interface gives it, and `_library` keeps them loaded.
        unsafe {
            let library = Library::new(path).expect("dlopen");
            let negotiate = *library
                .get::<PFN_vk_icdNegotiateLoaderICDInterfaceVersion>(
                    b"vk_icdNegotiateLoaderICDInterfaceVersion\0",
                )
                .expect("vk_icdNegotiateLoaderICDInterfaceVersion");
            let gipa = *library
                .get::<PFN_vk_icdGetInstanceProcAddr>(b"vk_icdGetInstanceProcAddr\0")
                .expect("gipa");
            let gpdpa = *library
                .get::<PFN_vk_icdGetPhysicalDeviceProcAddr>(b"vk_icdGetPhysicalDeviceProcAddr\0")
                .expect("gpdpa");
            Driver {
                _library: library,
                negotiate: negotiate.unwrap(),
                gipa: gipa.unwrap(),
                gpdpa: gpdpa.unwrap(),
            }
        }
    }

    /// The driver at its usual place, opened once for the whole test binary.
    fn get() -> &'static Driver {
        static DRIVER: OnceLock<Driver> = OnceLock::new();
        DRIVER.get_or_init(|| Driver::open(&library_path()))
    }

    fn negotiate(&self, loader_version: u32) -> (VkResult, u32) {
        let mut version = loader_version;
        // SAFETY: `version` is a local the driver reads and writes.
        let result = unsafe { (self.negotiate)(&mut version) };
        (result, version)
    }

    /// `vk_icdGetInstanceProcAddr` with a NULL instance: the global commands.
    fn global(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: a NULL instance and a C string.
        unsafe { (self.gipa)(VkInstance::NULL, name.as_ptr()) }
    }

    fn gpdpa_raw(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: a NULL instance (the physical-device commands are the same for all) and a C
        // string.
        unsafe { (self.gpdpa)(VkInstance::NULL, name.as_ptr()) }
    }
}

/// Where [`command!`] asks for a command by name: a driver (its global commands), an instance
/// or a device's `vkGetDeviceProcAddr`.
trait ProcAddr {
    fn proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction;
}

impl ProcAddr for Driver {
    fn proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction {
        self.global(name)
    }
}

impl<F: Fn(&CStr) -> PFN_vkVoidFunction> ProcAddr for F {
    fn proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction {
        self(name)
    }
}

/// `command!(from, PFN_vkX)`: the command `vkX` from `from` (a [`ProcAddr`]), as its type
/// `PFN_vkX`; `command!(from, PFN_vkX, KHR)` asks for its alias `vkXKHR` instead. The name is
/// spelt from the type, so the two cannot disagree.
macro_rules! command {
    ($from:expr, $pfn:ident) => {
        command!(@named $from, $pfn, "")
    };
    ($from:expr, $pfn:ident, KHR) => {
        command!(@named $from, $pfn, "KHR")
    };
    (@named $from:expr, $pfn:ident, $suffix:literal) => {{
        let name = concat!(stringify!($pfn), $suffix).strip_prefix("PFN_").expect("a PFN_ type");
        let name = std::ffi::CString::new(name).unwrap();
        let f: PFN_vkVoidFunction = $from.proc_addr(&name);
        // SAFETY: `name` is the command whose type `$pfn` is (its own name, or its KHR alias,
        // which has the same type), and a driver answers a command's name with a function of
        // that command's type, or NULL.
        unsafe { std::mem::transmute::<PFN_vkVoidFunction, $pfn>(f) }
    }};
}

/// Clears every `VK_TEST_DRIVER_*` variable, then sets `vars`.
fn set_env(vars: &[(&str, &str)]) {
    for (key, _) in std::env::vars() {
        if key.starts_with("VK_TEST_DRIVER_") {
            std::env::remove_var(key);
        }
    }
    for (key, value) in vars {
        std::env::set_var(key, value);
    }
}

/// The first word of a dispatchable handle: the loader's, `ICD_LOADER_MAGIC` as the driver left it.
///
/// # Safety
/// `handle` is a live dispatchable handle the driver made.
unsafe fn magic_of(handle: *mut c_void) -> usize {
    assert!(!handle.is_null());
    // SAFETY: a live dispatchable handle points to the driver's object, whose first word is the
    // loader's dispatch slot.
    unsafe { *(handle as *const usize) }
}

fn c_str(chars: &[c_char]) -> &CStr {
    // SAFETY: `c_char` and `u8` have one size and alignment; the slice's bytes stay borrowed.
    CStr::from_bytes_until_nul(unsafe { &*(chars as *const [c_char] as *const [u8]) })
        .expect("NUL-terminated")
}

struct Instance<'a> {
    driver: &'a Driver,
    handle: VkInstance,
}

impl<'a> Instance<'a> {
    fn create(
        driver: &'a Driver,
        api_version: u32,
        extensions: &[&CStr],
    ) -> Result<Self, VkResult> {
        let create = command!(driver, PFN_vkCreateInstance);
        let app = VkApplicationInfo {
            apiVersion: api_version,
            ..Default::default()
        };
        let names: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let info = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            enabledExtensionCount: names.len() as u32,
            ppEnabledExtensionNames: names.as_ptr(),
            ..Default::default()
        };
        let mut handle = VkInstance::NULL;
        // SAFETY: `info` and what it points to (`app`, `names` and the extension names) live
        // across the call; `handle` is a local.
        match unsafe { create.unwrap()(&info, null(), &mut handle) } {
            VkResult::SUCCESS => {
                // SAFETY: the instance the driver just created.
                assert_eq!(unsafe { magic_of(handle.0) }, ICD_LOADER_MAGIC, "instance magic");
                Ok(Instance { driver, handle })
            }
            error => Err(error),
        }
    }

    fn physical_devices(&self) -> Vec<VkPhysicalDevice> {
        let enumerate = command!(self, PFN_vkEnumeratePhysicalDevices).unwrap();
        let mut count = 0;
        assert_eq!(
            // SAFETY: the live instance, a local count and no array: a count query.
            unsafe { enumerate(self.handle, &mut count, null_mut()) },
            VkResult::SUCCESS
        );
        let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
        assert_eq!(
            // SAFETY: the live instance and an array of `count` handles.
            unsafe { enumerate(self.handle, &mut count, devices.as_mut_ptr()) },
            VkResult::SUCCESS
        );
        assert_eq!(count as usize, devices.len());
        devices
    }

    /// The properties of `physical_device`, one of this instance's.
    fn properties(&self, physical_device: VkPhysicalDevice) -> VkPhysicalDeviceProperties {
        let get = command!(self, PFN_vkGetPhysicalDeviceProperties);
        let mut props = VkPhysicalDeviceProperties::default();
        // SAFETY: a physical device of this live instance (every caller's comes from
        // `physical_devices`) and a local to fill.
        unsafe { get.unwrap()(physical_device, &mut props) };
        props
    }
}

impl ProcAddr for Instance<'_> {
    fn proc_addr(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: the instance lives as long as `self`; the name is a C string.
        unsafe { (self.driver.gipa)(self.handle, name.as_ptr()) }
    }
}

impl Drop for Instance<'_> {
    fn drop(&mut self) {
        let destroy = command!(self, PFN_vkDestroyInstance);
        // SAFETY: the instance `create` made, destroyed once, here.
        unsafe { destroy.unwrap()(self.handle, null()) };
    }
}

fn extension_names(props: &[VkExtensionProperties]) -> Vec<String> {
    props
        .iter()
        .map(|p| c_str(&p.extensionName).to_str().unwrap().to_owned())
        .collect()
}

fn instance_extensions(driver: &Driver) -> Vec<String> {
    let enumerate = command!(driver, PFN_vkEnumerateInstanceExtensionProperties).unwrap();
    let mut count = 0;
    assert_eq!(
        // SAFETY: no layer, a local count and no array: a count query.
        unsafe { enumerate(null(), &mut count, null_mut()) },
        VkResult::SUCCESS
    );
    let mut props = vec![
        VkExtensionProperties {
            extensionName: [0; 256],
            specVersion: 0
        };
        count as usize
    ];
    assert_eq!(
        // SAFETY: no layer and an array of `count` properties.
        unsafe { enumerate(null(), &mut count, props.as_mut_ptr()) },
        VkResult::SUCCESS
    );
    extension_names(&props[..count as usize])
}

#[test]
fn negotiates_the_newest_common_interface_version() {
    let _serial = serial();
    set_env(&[]);
    let driver = Driver::get();
    assert_eq!(driver.negotiate(7), (VkResult::SUCCESS, 7));
    assert_eq!(driver.negotiate(9), (VkResult::SUCCESS, 7));
    assert_eq!(driver.negotiate(5), (VkResult::SUCCESS, 5));
    assert_eq!(driver.negotiate(2), (VkResult::SUCCESS, 2));
    assert_eq!(
        // SAFETY: the interface lets the loader pass NULL; the driver must refuse it.
        unsafe { (driver.negotiate)(null_mut()) },
        VkResult::ERROR_INCOMPATIBLE_DRIVER
    );

    set_env(&[("VK_TEST_DRIVER_INTERFACE_VERSION", "4")]);
    assert_eq!(driver.negotiate(7), (VkResult::SUCCESS, 4));
    set_env(&[("VK_TEST_DRIVER_FAIL_NEGOTIATE", "1")]);
    assert_eq!(driver.negotiate(7).0, VkResult::ERROR_INCOMPATIBLE_DRIVER);
    set_env(&[]);
    assert_eq!(driver.negotiate(7), (VkResult::SUCCESS, 7));
}

#[test]
fn proc_addr_levels() {
    let _serial = serial();
    set_env(&[]);
    let driver = Driver::get();
    driver.negotiate(7);

    // Interface 7: the vk_icd* entry points are also reachable through vk_icdGetInstanceProcAddr.
    let negotiate = driver.global(c"vk_icdNegotiateLoaderICDInterfaceVersion");
    assert_eq!(
        negotiate.map(|f| f as usize),
        Some(driver.negotiate as usize)
    );
    let gpdpa = driver.global(c"vk_icdGetPhysicalDeviceProcAddr");
    assert_eq!(gpdpa.map(|f| f as usize), Some(driver.gpdpa as usize));
    let gipa = driver.global(c"vk_icdGetInstanceProcAddr");
    assert_eq!(gipa.map(|f| f as usize), Some(driver.gipa as usize));

    // A NULL instance gives global commands only.
    for name in [
        c"vkCreateInstance",
        c"vkEnumerateInstanceExtensionProperties",
        c"vkEnumerateInstanceVersion",
    ] {
        assert!(driver.global(name).is_some(), "{name:?}");
    }
    for name in [
        c"vkEnumeratePhysicalDevices",
        c"vkDestroyInstance",
        c"vkCmdDraw",
        c"vkGetDeviceProcAddr",
    ] {
        assert!(driver.global(name).is_none(), "{name:?}");
    }
    for name in [
        c"vkNotACommand",
        c"vkCreateSwapchainKHR",
        c"",
        c"vkEnumerateInstanceLayerProperties",
    ] {
        assert!(driver.global(name).is_none(), "{name:?}");
    }
    // SAFETY: a NULL name breaks valid usage on purpose: the test driver checks for it and answers
    // NULL (what this line tests).
    assert!(unsafe { (driver.gipa)(VkInstance::NULL, null()) }.is_none());

    // vk_icdGetPhysicalDeviceProcAddr: physical-device commands only.
    for name in [
        c"vkGetPhysicalDeviceProperties",
        c"vkGetPhysicalDeviceProperties2KHR",
        c"vkEnumerateDeviceExtensionProperties",
        c"vkCreateDevice",
        c"vkGetTestDriverRequestedApiVersionTEST",
        c"vkGetPhysicalDeviceFormatProperties",
        c"vkGetPhysicalDeviceImageFormatProperties",
        c"vkGetPhysicalDeviceSparseImageFormatProperties",
    ] {
        assert!(driver.gpdpa_raw(name).is_some(), "{name:?}");
    }
    for name in [
        c"vkCreateInstance",
        c"vkEnumeratePhysicalDevices",
        c"vkCmdDraw",
        c"vkGetTestDriverDrawCountTEST",
        c"vkFoo",
    ] {
        assert!(driver.gpdpa_raw(name).is_none(), "{name:?}");
    }

    // A real instance gives every command, device-level ones included.
    let instance = Instance::create(driver, make_api_version(0, 1, 3, 0), &[]).expect("instance");
    for name in [
        c"vkEnumeratePhysicalDevices",
        c"vkEnumeratePhysicalDeviceGroupsKHR",
        c"vkGetPhysicalDeviceFeatures2",
        c"vkGetDeviceProcAddr",
        c"vkCmdDraw",
        c"vkCreateInstance",
    ] {
        assert!(instance.proc_addr(name).is_some(), "{name:?}");
    }
    assert!(instance.proc_addr(c"vkCmdDrawIndexed").is_none());

    // vkGetDeviceProcAddr: device-level commands only.
    let gdpa = command!(instance, PFN_vkGetDeviceProcAddr);
    // SAFETY: the test driver answers from the name alone and never reads the (NULL) device,
    // which is what these lines check; the name is a C string.
    let gdpa = |name: &CStr| unsafe { gdpa.unwrap()(VkDevice::NULL, name.as_ptr()) };
    for name in [
        c"vkCmdDraw",
        c"vkGetTestDriverDrawCountTEST",
        c"vkGetDeviceProcAddr",
        c"vkDestroyDevice",
        c"vkQueueWaitIdle",
    ] {
        assert!(gdpa(name).is_some(), "{name:?}");
    }
    for name in [
        c"vkCreateInstance",
        c"vkEnumeratePhysicalDevices",
        c"vkGetPhysicalDeviceProperties",
        c"vkCmdBlitImage",
    ] {
        assert!(gdpa(name).is_none(), "{name:?}");
    }
}

#[test]
fn instance_device_and_command_buffers() {
    let _serial = serial();
    set_env(&[(
        "VK_TEST_DRIVER_DEVICES",
        "discrete:10de:2330,integrated:8086:46a6,cpu",
    )]);
    let driver = Driver::get();
    assert_eq!(driver.negotiate(7), (VkResult::SUCCESS, 7));

    let version = command!(driver, PFN_vkEnumerateInstanceVersion);
    let mut api_version = 0;
    assert_eq!(
        // SAFETY: a local to fill.
        unsafe { version.unwrap()(&mut api_version) },
        VkResult::SUCCESS
    );
    assert_eq!(api_version, make_api_version(0, 1, 4, 0));

    // Instance extensions, and VK_INCOMPLETE.
    assert_eq!(
        instance_extensions(driver),
        ["VK_KHR_surface", "VK_KHR_get_physical_device_properties2"]
    );
    let enumerate = command!(driver, PFN_vkEnumerateInstanceExtensionProperties);
    let mut props = [VkExtensionProperties {
        extensionName: [0; 256],
        specVersion: 0,
    }; 2];
    let mut count = 1;
    assert_eq!(
        // SAFETY: no layer and an array of 2, more than `count` says.
        unsafe { enumerate.unwrap()(null(), &mut count, props.as_mut_ptr()) },
        VkResult::INCOMPLETE
    );
    assert_eq!(count, 1);
    assert_eq!(c_str(&props[0].extensionName), c"VK_KHR_surface");
    assert!(props[0].specVersion >= 25, "spec version from the registry");
    assert_eq!(
        c_str(&props[1].extensionName),
        c"",
        "nothing past the count is written"
    );
    assert_eq!(
        // SAFETY: a C string for the layer and an array of 2, more than `count` says.
        unsafe { enumerate.unwrap()(c"VK_LAYER_foo".as_ptr(), &mut count, props.as_mut_ptr()) },
        VkResult::ERROR_LAYER_NOT_PRESENT
    );

    let instance = Instance::create(driver, make_api_version(0, 1, 3, 0), &[c"VK_KHR_surface"])
        .expect("vkCreateInstance");

    // Physical devices, and VK_INCOMPLETE.
    let devices = instance.physical_devices();
    assert_eq!(devices.len(), 3);
    for &pd in &devices {
        // SAFETY: a physical device of the live instance.
        assert_eq!(unsafe { magic_of(pd.0) }, ICD_LOADER_MAGIC, "physical device magic");
    }
    let enumerate = command!(instance, PFN_vkEnumeratePhysicalDevices);
    let mut some = [VkPhysicalDevice::NULL; 3];
    let mut count = 2;
    assert_eq!(
        // SAFETY: the live instance and an array of 3, more than `count` says.
        unsafe { enumerate.unwrap()(instance.handle, &mut count, some.as_mut_ptr()) },
        VkResult::INCOMPLETE
    );
    assert_eq!(
        (count, &some[..2], some[2]),
        (2, &devices[..2], VkPhysicalDevice::NULL)
    );
    assert_eq!(instance.physical_devices(), devices, "handles are stable");

    // Groups: one per device.
    let groups_fn = command!(instance, PFN_vkEnumeratePhysicalDeviceGroups);
    let mut count = 0;
    assert_eq!(
        // SAFETY: the live instance, a local count and no array: a count query.
        unsafe { groups_fn.unwrap()(instance.handle, &mut count, null_mut()) },
        VkResult::SUCCESS
    );
    assert_eq!(count, 3);
    let mut groups = [VkPhysicalDeviceGroupProperties::default(); 3];
    count = 2;
    assert_eq!(
        // SAFETY: the live instance and an array of 3, more than `count` says.
        unsafe { groups_fn.unwrap()(instance.handle, &mut count, groups.as_mut_ptr()) },
        VkResult::INCOMPLETE
    );
    count = 3;
    assert_eq!(
        // SAFETY: the live instance and an array of `count`.
        unsafe { groups_fn.unwrap()(instance.handle, &mut count, groups.as_mut_ptr()) },
        VkResult::SUCCESS
    );
    for (group, &pd) in groups.iter().zip(&devices) {
        assert_eq!(
            group.sType,
            VkStructureType::PHYSICAL_DEVICE_GROUP_PROPERTIES
        );
        assert_eq!(
            (group.physicalDeviceCount, group.physicalDevices[0]),
            (1, pd)
        );
    }

    // Properties.
    let expected = [
        (
            VkPhysicalDeviceType::DISCRETE_GPU,
            0x10de,
            0x2330,
            c"Test Driver discrete 0",
        ),
        (
            VkPhysicalDeviceType::INTEGRATED_GPU,
            0x8086,
            0x46a6,
            c"Test Driver integrated 1",
        ),
        (
            VkPhysicalDeviceType::CPU,
            0x10de,
            0x2330,
            c"Test Driver cpu 2",
        ),
    ];
    for (&pd, (ty, vendor, device, name)) in devices.iter().zip(expected) {
        let props = instance.properties(pd);
        assert_eq!(
            (props.deviceType, props.vendorID, props.deviceID),
            (ty, vendor, device)
        );
        assert_eq!(c_str(&props.deviceName), name);
        assert_eq!(props.apiVersion, make_api_version(0, 1, 4, 0));
    }

    // Properties2 with PCI bus and ID structures in the chain, through the KHR name.
    let props2_fn = command!(instance, PFN_vkGetPhysicalDeviceProperties2, KHR);
    let mut driver_props = VkPhysicalDeviceDriverProperties::default();
    let mut ids = VkPhysicalDeviceIDProperties {
        pNext: (&mut driver_props as *mut VkPhysicalDeviceDriverProperties).cast(),
        ..Default::default()
    };
    let mut pci = VkPhysicalDevicePCIBusInfoPropertiesEXT {
        pNext: (&mut ids as *mut VkPhysicalDeviceIDProperties).cast(),
        ..Default::default()
    };
    let mut props2 = VkPhysicalDeviceProperties2 {
        pNext: (&mut pci as *mut VkPhysicalDevicePCIBusInfoPropertiesEXT).cast(),
        ..Default::default()
    };
    // SAFETY: a device of the live instance; `props2` and the structures chained to it are
    // locals, each with its own sType.
    unsafe { props2_fn.unwrap()(devices[1], &mut props2) };
    assert_eq!(
        c_str(&props2.properties.deviceName),
        c"Test Driver integrated 1"
    );
    assert_eq!(pci.pciBus, 1);
    assert_eq!(
        pci.sType,
        VkStructureType::PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT
    );
    assert_eq!(&ids.deviceUUID[..4], b"VKTD");
    assert_eq!(c_str(&driver_props.driverName), c"vk_test_driver");
    assert_eq!(driver_props.pNext, null_mut());

    let requested = driver.gpdpa_raw(c"vkGetTestDriverRequestedApiVersionTEST");
    // SAFETY: the test driver's vkGetTestDriverRequestedApiVersionTEST has this type.
    let requested = unsafe {
        std::mem::transmute::<PFN_vkVoidFunction, Option<unsafe extern "system" fn(VkPhysicalDevice) -> u32>>(requested)
    }
    .unwrap();
    assert_eq!(
        // SAFETY: a device of the live instance.
        unsafe { requested(devices[0]) },
        make_api_version(0, 1, 3, 0)
    );

    // Features, queue families, memory.
    let features_fn = command!(instance, PFN_vkGetPhysicalDeviceFeatures2);
    let mut features = VkPhysicalDeviceFeatures2::default();
    // SAFETY: a device of the live instance and a local to fill.
    unsafe { features_fn.unwrap()(devices[0], &mut features) };
    assert_eq!(features.features.robustBufferAccess, VK_TRUE);
    assert_eq!(features.features.geometryShader, VK_FALSE);

    let families_fn = command!(instance, PFN_vkGetPhysicalDeviceQueueFamilyProperties);
    let mut count = 0;
    // SAFETY: a device of the live instance, a local count and no array: a count query.
    unsafe { families_fn.unwrap()(devices[0], &mut count, null_mut()) };
    assert_eq!(count, 1);
    let mut family = VkQueueFamilyProperties::default();
    // SAFETY: as above, with room for the one family `count` says.
    unsafe { families_fn.unwrap()(devices[0], &mut count, &mut family) };
    let flags = VkQueueFlags::GRAPHICS_BIT | VkQueueFlags::COMPUTE_BIT | VkQueueFlags::TRANSFER_BIT;
    assert_eq!((family.queueFlags, family.queueCount), (flags, 2));

    let memory_fn = command!(instance, PFN_vkGetPhysicalDeviceMemoryProperties);
    let mut memory = VkPhysicalDeviceMemoryProperties::default();
    // SAFETY: a device of the live instance and a local to fill.
    unsafe { memory_fn.unwrap()(devices[0], &mut memory) };
    assert!(memory.memoryTypeCount >= 1 && memory.memoryHeapCount >= 1);

    // Device extensions.
    let dev_ext_fn = command!(instance, PFN_vkEnumerateDeviceExtensionProperties);
    let mut count = 0;
    assert_eq!(
        // SAFETY: a device of the live instance, a local count and no array: a count query.
        unsafe { dev_ext_fn.unwrap()(devices[0], null(), &mut count, null_mut()) },
        VkResult::SUCCESS
    );
    let mut dev_exts = vec![
        VkExtensionProperties {
            extensionName: [0; 256],
            specVersion: 0
        };
        count as usize
    ];
    assert_eq!(
        // SAFETY: as above, with an array of `count`.
        unsafe { dev_ext_fn.unwrap()(devices[0], null(), &mut count, dev_exts.as_mut_ptr()) },
        VkResult::SUCCESS
    );
    assert_eq!(extension_names(&dev_exts), ["VK_KHR_swapchain"]);
    count = 0;
    assert_eq!(
        // SAFETY: as above, the array larger than `count` says.
        unsafe { dev_ext_fn.unwrap()(devices[0], null(), &mut count, dev_exts.as_mut_ptr()) },
        VkResult::INCOMPLETE
    );

    // vkCreateDevice validation.
    let create_device = command!(instance, PFN_vkCreateDevice).unwrap();
    let priorities = [1.0f32, 0.5];
    let create = |family: u32,
                  queues: u32,
                  extensions: &[&CStr],
                  features: Option<&VkPhysicalDeviceFeatures>| {
        let queue_info = VkDeviceQueueCreateInfo {
            queueFamilyIndex: family,
            queueCount: queues,
            pQueuePriorities: priorities.as_ptr(),
            ..Default::default()
        };
        let names: Vec<*const c_char> = extensions.iter().map(|e| e.as_ptr()).collect();
        let info = VkDeviceCreateInfo {
            queueCreateInfoCount: 1,
            pQueueCreateInfos: &queue_info,
            enabledExtensionCount: names.len() as u32,
            ppEnabledExtensionNames: names.as_ptr(),
            pEnabledFeatures: features.map_or(null(), |f| f as *const _),
            ..Default::default()
        };
        let mut device = VkDevice::NULL;
        // SAFETY: a device of the live instance; `info` and what it points to (`queue_info`,
        // `priorities`, `names`, the caller's names and features) live across the call.
        let result = unsafe { create_device(devices[0], &info, null(), &mut device) };
        (result, device)
    };
    assert_eq!(
        create(1, 1, &[], None).0,
        VkResult::ERROR_INITIALIZATION_FAILED,
        "no such queue family"
    );
    assert_eq!(
        create(0, 3, &[], None).0,
        VkResult::ERROR_INITIALIZATION_FAILED,
        "too many queues"
    );
    assert_eq!(
        create(0, 1, &[c"VK_KHR_maintenance9"], None).0,
        VkResult::ERROR_EXTENSION_NOT_PRESENT
    );
    let geometry = VkPhysicalDeviceFeatures {
        geometryShader: VK_TRUE,
        ..Default::default()
    };
    assert_eq!(
        create(0, 1, &[], Some(&geometry)).0,
        VkResult::ERROR_FEATURE_NOT_PRESENT
    );
    let robust = VkPhysicalDeviceFeatures {
        robustBufferAccess: VK_TRUE,
        ..Default::default()
    };
    let (result, device) = create(0, 2, &[c"VK_KHR_swapchain"], Some(&robust));
    assert_eq!(result, VkResult::SUCCESS);
    // SAFETY: the device just created.
    assert_eq!(unsafe { magic_of(device.0) }, ICD_LOADER_MAGIC, "device magic");

    // Device-level commands come from vkGetDeviceProcAddr.
    let gdpa = command!(instance, PFN_vkGetDeviceProcAddr).unwrap();
    // SAFETY: the device lives until `destroy_device` below, after the last lookup; the name is
    // a C string.
    let device_proc = |name: &CStr| unsafe { gdpa(device, name.as_ptr()) };
    macro_rules! device_fn {
        ($pfn:ident) => {
            command!(device_proc, $pfn).expect(stringify!($pfn))
        };
    }
    let get_queue = device_fn!(PFN_vkGetDeviceQueue);
    let mut queues = [VkQueue::NULL; 3];
    for (i, queue) in queues.iter_mut().enumerate() {
        // SAFETY: the live device and a local to fill (index 2 is past the queues created: the
        // driver leaves it NULL).
        unsafe { get_queue(device, 0, i as u32, queue) };
    }
    // SAFETY: the queues of the live device.
    assert_eq!(unsafe { magic_of(queues[0].0) }, ICD_LOADER_MAGIC, "queue magic");
    // SAFETY: as above.
    assert_eq!(unsafe { magic_of(queues[1].0) }, ICD_LOADER_MAGIC, "queue magic");
    assert_ne!(queues[0], queues[1]);
    assert_eq!(queues[2], VkQueue::NULL, "only two queues were created");
    let mut again = VkQueue::NULL;
    // SAFETY: the live device and a local to fill.
    unsafe { get_queue(device, 0, 1, &mut again) };
    assert_eq!(again, queues[1]);
    let queue_wait_idle = device_fn!(PFN_vkQueueWaitIdle);
    // SAFETY: a queue of the live device.
    assert_eq!(unsafe { queue_wait_idle(queues[0]) }, VkResult::SUCCESS);

    let create_pool = device_fn!(PFN_vkCreateCommandPool);
    let destroy_pool = device_fn!(PFN_vkDestroyCommandPool);
    let allocate = device_fn!(PFN_vkAllocateCommandBuffers);
    let free = device_fn!(PFN_vkFreeCommandBuffers);
    let begin = device_fn!(PFN_vkBeginCommandBuffer);
    let end = device_fn!(PFN_vkEndCommandBuffer);
    let draw = device_fn!(PFN_vkCmdDraw);
    let dispatch = device_fn!(PFN_vkCmdDispatch);
    let draw_count = device_proc(c"vkGetTestDriverDrawCountTEST");
    // SAFETY: the test driver's vkGetTestDriverDrawCountTEST has this type.
    let draw_count = unsafe {
        std::mem::transmute::<PFN_vkVoidFunction, Option<unsafe extern "system" fn(VkCommandBuffer) -> u32>>(draw_count)
    }
    .expect("test command");
    let device_wait_idle = device_fn!(PFN_vkDeviceWaitIdle);
    let destroy_device = device_fn!(PFN_vkDestroyDevice);

    let pool_info = VkCommandPoolCreateInfo {
        queueFamilyIndex: 0,
        ..Default::default()
    };
    let mut pool = VkCommandPool::NULL;
    assert_eq!(
        // SAFETY: the live device; `pool_info` and `pool` are locals.
        unsafe { create_pool(device, &pool_info, null(), &mut pool) },
        VkResult::SUCCESS
    );
    assert!(!pool.is_null());
    let alloc_info = VkCommandBufferAllocateInfo {
        commandPool: pool,
        level: VkCommandBufferLevel::PRIMARY,
        commandBufferCount: 2,
        ..Default::default()
    };
    let mut buffers = [VkCommandBuffer::NULL; 2];
    assert_eq!(
        // SAFETY: the live device and pool; room for the 2 buffers `alloc_info` asks for.
        unsafe { allocate(device, &alloc_info, buffers.as_mut_ptr()) },
        VkResult::SUCCESS
    );
    for b in buffers {
        // SAFETY: the command buffers just allocated.
        assert_eq!(unsafe { magic_of(b.0) }, ICD_LOADER_MAGIC, "command buffer magic");
    }
    let [cb, other] = buffers;
    let begin_info = VkCommandBufferBeginInfo::default();
    // SAFETY: the live device, its pool and the pool's two command buffers, each used before it is
    // freed (but the second free of `other`, a case the driver tolerates and the test checks);
    // the device is destroyed last, once; the infos and `buffers` are locals.
    unsafe {
        assert_eq!(begin(cb, &begin_info), VkResult::SUCCESS);
        assert_eq!(begin(other, &begin_info), VkResult::SUCCESS);
        for _ in 0..3 {
            draw(cb, 3, 1, 0, 0);
        }
        dispatch(other, 1, 1, 1);
        assert_eq!(end(cb), VkResult::SUCCESS);
        assert_eq!(draw_count(cb), 3);
        assert_eq!(draw_count(other), 1);
        assert_eq!(begin(cb, &begin_info), VkResult::SUCCESS);
        assert_eq!(draw_count(cb), 0, "vkBeginCommandBuffer resets the count");

        free(device, pool, 1, &other);
        free(device, pool, 1, &other); // a second free of the same handle is ignored
        assert_eq!(device_wait_idle(device), VkResult::SUCCESS);
        free(device, pool, 1, &cb);
        destroy_pool(device, pool, null());

        // A pool (and its buffers) left alive is freed with the device.
        let mut leftover = VkCommandPool::NULL;
        assert_eq!(
            create_pool(device, &pool_info, null(), &mut leftover),
            VkResult::SUCCESS
        );
        assert_eq!(
            allocate(
                device,
                &VkCommandBufferAllocateInfo {
                    commandPool: leftover,
                    ..alloc_info
                },
                buffers.as_mut_ptr()
            ),
            VkResult::SUCCESS
        );
        destroy_device(device, null());
    }
    drop(instance);
}

#[test]
fn create_instance_failures() {
    let _serial = serial();
    set_env(&[]);
    let driver = Driver::get();
    driver.negotiate(7);
    let v1_3 = make_api_version(0, 1, 3, 0);

    assert_eq!(
        Instance::create(driver, v1_3, &[c"VK_EXT_debug_utils"]).err(),
        Some(VkResult::ERROR_EXTENSION_NOT_PRESENT)
    );
    let both = [c"VK_KHR_surface", c"VK_KHR_get_physical_device_properties2"];
    assert!(Instance::create(driver, v1_3, &both).is_ok());

    set_env(&[("VK_TEST_DRIVER_FAIL_CREATE_INSTANCE", "1")]);
    assert_eq!(
        Instance::create(driver, v1_3, &[]).err(),
        Some(VkResult::ERROR_INITIALIZATION_FAILED)
    );
    set_env(&[]);

    // A loader older than interface 5 does not check apiVersion: the driver refuses > 1.0.
    assert_eq!(driver.negotiate(4), (VkResult::SUCCESS, 4));
    assert_eq!(
        Instance::create(driver, v1_3, &[]).err(),
        Some(VkResult::ERROR_INCOMPATIBLE_DRIVER)
    );
    assert!(Instance::create(driver, make_api_version(0, 1, 0, 0), &[]).is_ok());
    assert!(Instance::create(driver, 0, &[]).is_ok());
    driver.negotiate(7);
    assert!(Instance::create(driver, make_api_version(0, 1, 4, 0), &[]).is_ok());

    let create = command!(driver, PFN_vkCreateInstance);
    let mut handle = VkInstance::NULL;
    assert_eq!(
        // SAFETY: a NULL create info breaks valid usage; the test driver checks for it and fails.
        unsafe { create.unwrap()(null(), null(), &mut handle) },
        VkResult::ERROR_INITIALIZATION_FAILED
    );
}

#[test]
fn environment_configuration() {
    let _serial = serial();
    let driver = Driver::get();
    driver.negotiate(7);

    set_env(&[
        ("VK_TEST_DRIVER_API_VERSION", "1.2"),
        (
            "VK_TEST_DRIVER_DEVICES",
            "virtual:1234:abcd, other ,bogus,cpu:1",
        ),
        (
            "VK_TEST_DRIVER_INSTANCE_EXTENSIONS",
            "+VK_EXT_debug_utils,VK_KHR_surface",
        ),
        ("VK_TEST_DRIVER_DEVICE_EXTENSIONS", "VK_EXT_pci_bus_info"),
    ]);
    let version = command!(driver, PFN_vkEnumerateInstanceVersion);
    let mut api_version = 0;
    // SAFETY: a local to fill.
    unsafe { version.unwrap()(&mut api_version) };
    assert_eq!(api_version, make_api_version(0, 1, 2, 0));
    assert_eq!(
        instance_extensions(driver),
        [
            "VK_KHR_surface",
            "VK_KHR_get_physical_device_properties2",
            "VK_EXT_debug_utils"
        ]
    );
    let instance = Instance::create(driver, 0, &[c"VK_EXT_debug_utils"]).expect("instance");
    let devices = instance.physical_devices();
    assert_eq!(devices.len(), 2, "bad entries are skipped");
    let props = instance.properties(devices[0]);
    assert_eq!(
        (props.deviceType, props.vendorID, props.deviceID),
        (VkPhysicalDeviceType::VIRTUAL_GPU, 0x1234, 0xabcd)
    );
    assert_eq!(props.apiVersion, make_api_version(0, 1, 2, 0));
    assert_eq!(
        c_str(&instance.properties(devices[1]).deviceName),
        c"Test Driver other 1"
    );

    // The configuration is fixed at vkCreateInstance.
    set_env(&[("VK_TEST_DRIVER_DEVICES", "")]);
    assert_eq!(instance.physical_devices().len(), 2);
    drop(instance);
    let instance = Instance::create(driver, 0, &[]).expect("instance");
    assert!(instance.physical_devices().is_empty());
    drop(instance);

    set_env(&[("VK_TEST_DRIVER_INSTANCE_EXTENSIONS", "")]);
    assert!(instance_extensions(driver).is_empty());
    set_env(&[]);
}

/// A copy named `libvk_test_driver_<tag>.so` reads `VK_TEST_DRIVER_<VAR>_<TAG>` first.
#[test]
fn tagged_copies_have_their_own_configuration() {
    let _serial = serial();
    let dir = std::env::temp_dir().join(format!("vk_test_driver_direct_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy_path = dir.join("libvk_test_driver_b.so");
    std::fs::copy(library_path(), &copy_path).unwrap();
    let copy = Driver::open(&copy_path);
    let original = Driver::get();
    set_env(&[
        ("VK_TEST_DRIVER_DEVICES", "cpu"),
        ("VK_TEST_DRIVER_DEVICES_B", "virtual,virtual"),
    ]);
    for driver in [&copy, original] {
        driver.negotiate(7);
    }
    {
        let a = Instance::create(original, 0, &[]).expect("instance");
        let b = Instance::create(&copy, 0, &[]).expect("instance");
        let a_devices = a.physical_devices();
        let b_devices = b.physical_devices();
        assert_eq!(a_devices.len(), 1);
        assert_eq!(b_devices.len(), 2);
        assert_eq!(
            a.properties(a_devices[0]).deviceType,
            VkPhysicalDeviceType::CPU
        );
        assert_eq!(
            b.properties(b_devices[1]).deviceType,
            VkPhysicalDeviceType::VIRTUAL_GPU
        );
    }
    set_env(&[]);
    // The copy stays mapped until the process ends: unloading Rust cdylibs is not worth the risk.
    std::mem::forget(copy);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The library exports the `vk_icd*` entry points and nothing else (checked with `nm -D` when
/// binutils is installed).
#[test]
fn exports_only_icd_entry_points() {
    let output = match std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(library_path())
        .output()
    {
        Ok(output) if output.status.success() => output,
        _ => {
            eprintln!("nm not available; skipping the export check");
            return;
        }
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut functions: Vec<&str> = text
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().rev();
            let name = fields.next()?;
            let kind = fields.next()?;
            matches!(kind, "T" | "W" | "i").then_some(name)
        })
        .collect();
    functions.sort();
    assert_eq!(
        functions,
        [
            "vk_icdGetInstanceProcAddr",
            "vk_icdGetPhysicalDeviceProcAddr",
            "vk_icdNegotiateLoaderICDInterfaceVersion"
        ]
    );
    let vk: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .filter(|n| n.starts_with("vk"))
        .collect();
    assert!(
        vk.iter().all(|n| n.starts_with("vk_icd")),
        "unexpected vk* symbols: {vk:?}"
    );
}
