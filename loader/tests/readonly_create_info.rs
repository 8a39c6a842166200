//! What an application passes as `const` is never written: `vkCreateInstance` and `vkCreateDevice`
//! with every input (create infos, application info, names, allocation callbacks, `pNext`
//! structures) on pages made read-only first, a `VkDeviceGroupDeviceCreateInfo` first in the chain
//! and deeper in it, with and without a layer, on the test driver and on lavapipe. A write would
//! kill the child process (SIGSEGV); the bytes are compared as well.

mod common;

use std::ffi::{c_char, c_void, CStr};
use std::path::Path;

use vk_generated::types::*;

const LAVAPIPE: &str = common::LAVAPIPE;

/// Pages of memory values are put on, then made read-only.
struct ReadOnlyArena {
    base: *mut u8,
    len: usize,
    used: usize,
}

impl ReadOnlyArena {
    fn new(len: usize) -> ReadOnlyArena {
        // SAFETY: an anonymous private mapping, checked below.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        assert_ne!(base, libc::MAP_FAILED);
        ReadOnlyArena { base: base.cast(), len, used: 0 }
    }

    /// A copy of `values` in the arena.
    fn slice<T: Copy>(&mut self, values: &[T]) -> *const T {
        let start = self.used.next_multiple_of(std::mem::align_of::<T>().max(8));
        let size = std::mem::size_of_val(values);
        assert!(start + size <= self.len, "the arena is full");
        // SAFETY: `start..start + size` lies in the writable mapping and is aligned for `T`.
        let at = unsafe { self.base.add(start) }.cast::<T>();
        // SAFETY: as above; the arena's bytes are not referenced elsewhere.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), at, values.len()) };
        self.used = start + size;
        at
    }

    fn put<T: Copy>(&mut self, value: T) -> *const T {
        self.slice(std::slice::from_ref(&value))
    }

    fn string(&mut self, s: &CStr) -> *const c_char {
        self.slice(s.to_bytes_with_nul()).cast()
    }

    fn strings(&mut self, list: &[&CStr]) -> *const *const c_char {
        let pointers: Vec<*const c_char> = list.iter().map(|s| self.string(s)).collect();
        self.slice(&pointers)
    }

    /// Makes the arena read-only; returns its bytes, to compare later.
    fn protect(&self) -> Vec<u8> {
        // SAFETY: the arena's own mapping.
        assert_eq!(unsafe { libc::mprotect(self.base.cast(), self.len, libc::PROT_READ) }, 0);
        self.bytes()
    }

    fn bytes(&self) -> Vec<u8> {
        // SAFETY: the mapping is readable for `len` bytes.
        unsafe { std::slice::from_raw_parts(self.base, self.len) }.to_vec()
    }
}

unsafe extern "system" fn allocate(_: *mut c_void, size: usize, align: usize, _: VkSystemAllocationScope) -> *mut c_void {
    let mut block = std::ptr::null_mut();
    // SAFETY: `align` is a power of two (Vulkan's rule), rounded up to a multiple of a pointer's size.
    match unsafe { libc::posix_memalign(&mut block, align.max(std::mem::size_of::<usize>()), size.max(1)) } {
        0 => block,
        _ => std::ptr::null_mut(),
    }
}

unsafe extern "system" fn reallocate(user: *mut c_void, old: *mut c_void, size: usize, align: usize, scope: VkSystemAllocationScope) -> *mut c_void {
    // SAFETY: a fresh block of `size` bytes, `old` one of ours (or NULL) holding at least what is copied.
    unsafe {
        let new = allocate(user, size, align, scope);
        if !old.is_null() && !new.is_null() {
            std::ptr::copy_nonoverlapping(old.cast::<u8>(), new.cast::<u8>(), libc::malloc_usable_size(old).min(size));
            libc::free(old);
        }
        new
    }
}

unsafe extern "system" fn free(_: *mut c_void, block: *mut c_void) {
    // SAFETY: NULL or a block `allocate` made.
    unsafe { libc::free(block) }
}

unsafe extern "system" fn utils_callback(
    _: VkDebugUtilsMessageSeverityFlagBitsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    _: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut c_void,
) -> VkBool32 {
    VK_FALSE
}

unsafe extern "system" fn report_callback(
    _: VkDebugReportFlagsEXT,
    _: VkDebugReportObjectTypeEXT,
    _: u64,
    _: usize,
    _: i32,
    _: *const c_char,
    _: *const c_char,
    _: *mut c_void,
) -> VkBool32 {
    VK_FALSE
}

/// The child: `LAYER` names the layer to enable, if any.
#[test]
fn scenario_entry() {
    let Ok(scenario) = std::env::var("SCENARIO") else { return };
    assert_eq!(scenario, "read-only");
    println!();
    let layer = std::env::var("LAYER").ok().map(|name| std::ffi::CString::new(name).unwrap());
    let layers: Vec<&CStr> = layer.iter().map(|l| l.as_c_str()).collect();
    // SAFETY: our libvulkan, whose initialisers ask nothing of us; it stays loaded to the end.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the export's own type.
    let gipa: libloading::Symbol<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction> =
        unsafe { lib.get(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: each command is transmuted to its own type before it is called; the pointers given
    // are the arena's (read-only, alive to the end) or locals that outlive each call.
    unsafe {
        let get = |instance: VkInstance, name: &CStr| gipa(instance, name.as_ptr());
        let mut arena = ReadOnlyArena::new(1 << 16);
        let callbacks = arena.put(VkAllocationCallbacks {
            pfnAllocation: Some(allocate),
            pfnReallocation: Some(reallocate),
            pfnFree: Some(free),
            ..Default::default()
        });
        let (app_name, engine_name) = (arena.string(c"read-only create infos"), arena.string(c"none"));
        let app = arena.put(VkApplicationInfo {
            pApplicationName: app_name,
            applicationVersion: 3,
            pEngineName: engine_name,
            apiVersion: vk_generated::make_api_version(0, 1, 1, 0),
            ..Default::default()
        });
        let report = arena.put(VkDebugReportCallbackCreateInfoEXT {
            flags: VkDebugReportFlagsEXT(0x1f),
            pfnCallback: Some(report_callback),
            ..Default::default()
        });
        let utils = arena.put(VkDebugUtilsMessengerCreateInfoEXT {
            pNext: report.cast(),
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1111),
            messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
            pfnUserCallback: Some(utils_callback),
            ..Default::default()
        });
        let extensions = [c"VK_EXT_debug_utils", c"VK_EXT_debug_report", c"VK_KHR_get_physical_device_properties2"];
        let (layer_names, extension_names) = (arena.strings(&layers), arena.strings(&extensions));
        let info = arena.put(VkInstanceCreateInfo {
            pNext: utils.cast(),
            pApplicationInfo: app,
            enabledLayerCount: layers.len() as u32,
            ppEnabledLayerNames: layer_names,
            enabledExtensionCount: extensions.len() as u32,
            ppEnabledExtensionNames: extension_names,
            ..Default::default()
        });
        let before = arena.protect();
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(info, callbacks, &mut instance), VkResult::SUCCESS);
        assert!(arena.bytes() == before, "vkCreateInstance changed its inputs");
        println!("INSTANCE CREATED");

        let groups: PFN_vkEnumeratePhysicalDeviceGroups = std::mem::transmute(get(instance, c"vkEnumeratePhysicalDeviceGroups"));
        let mut count = 1;
        let mut group = VkPhysicalDeviceGroupProperties::default();
        let result = groups.unwrap()(instance, &mut count, &mut group);
        assert!(matches!(result, VkResult::SUCCESS | VkResult::INCOMPLETE) && count == 1, "{result:?}");
        let members = &group.physicalDevices[..group.physicalDeviceCount as usize];
        println!("GROUP OF {}", members.len());

        let mut arena = ReadOnlyArena::new(1 << 16);
        let priority = arena.put(1.0f32);
        let queue = arena.put(VkDeviceQueueCreateInfo { queueCount: 1, pQueuePriorities: priority, ..Default::default() });
        let device_extensions = arena.strings(&[c"VK_KHR_swapchain"]);
        let device_layers = arena.strings(&layers);
        let pointers = arena.slice(members);
        let device_info = |next: *const c_void| VkDeviceCreateInfo {
            pNext: next,
            queueCreateInfoCount: 1,
            pQueueCreateInfos: queue,
            enabledLayerCount: layers.len() as u32,
            ppEnabledLayerNames: device_layers,
            enabledExtensionCount: 1,
            ppEnabledExtensionNames: device_extensions,
            ..Default::default()
        };
        // The group first in the chain, features after it.
        let features = arena.put(VkPhysicalDeviceFeatures2::default());
        let group_first = arena.put(VkDeviceGroupDeviceCreateInfo {
            pNext: features.cast(),
            physicalDeviceCount: members.len() as u32,
            pPhysicalDevices: pointers,
            ..Default::default()
        });
        let first = arena.put(device_info(group_first.cast()));
        // The group third, after two structures the loader copies to relink.
        let group_deeper = arena.put(VkDeviceGroupDeviceCreateInfo {
            physicalDeviceCount: members.len() as u32,
            pPhysicalDevices: pointers,
            ..Default::default()
        });
        let protected = arena.put(VkPhysicalDeviceProtectedMemoryFeatures { pNext: group_deeper.cast_mut().cast(), ..Default::default() });
        let features = arena.put(VkPhysicalDeviceFeatures2 { pNext: protected.cast_mut().cast(), ..Default::default() });
        let deeper = arena.put(device_info(features.cast()));
        let before = arena.protect();

        let create_device: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        let gdpa: PFN_vkGetDeviceProcAddr = std::mem::transmute(get(instance, c"vkGetDeviceProcAddr"));
        for (what, info) in [("first", first), ("deeper", deeper)] {
            let mut device = VkDevice::NULL;
            let result = create_device.unwrap()(members[0], info, callbacks, &mut device);
            assert_eq!(result, VkResult::SUCCESS, "the group {what} in the chain");
            assert!(arena.bytes() == before, "vkCreateDevice changed its inputs (the group {what} in the chain)");
            let destroy: PFN_vkDestroyDevice = std::mem::transmute(gdpa.unwrap()(device, c"vkDestroyDevice".as_ptr()));
            destroy.unwrap()(device, callbacks);
            println!("DEVICE CREATED WITH THE GROUP {what}");
        }
        let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, callbacks);
        println!("DONE");
    }
}

/// Runs the child on the driver manifest `driver` (with `env`), with no layer and with the test
/// layer; each run must create its instance and both devices.
fn check(name: &str, driver: &Path, env: &[(&str, String)]) {
    let dir = common::scratch(name);
    let layer = vk_test_layer::install::install(&common::test_layer(), &dir, "readonly", "").unwrap();
    for with_layer in [false, true] {
        let mut all = vec![("VK_DRIVER_FILES", driver.display().to_string())];
        all.extend(env.iter().cloned());
        if with_layer {
            all.push(("VK_LAYER_PATH", dir.display().to_string()));
            all.push(("LAYER", layer.name.clone()));
        }
        let run = common::run_scenario("scenario_entry", "read-only", &all);
        let context = format!("with_layer={with_layer} {:?}\n{}{}", run.status, run.stdout, run.stderr);
        assert!(run.status.success(), "{context}");
        for line in ["INSTANCE CREATED", "DEVICE CREATED WITH THE GROUP first", "DEVICE CREATED WITH THE GROUP deeper", "DONE"] {
            assert!(run.stdout.contains(line), "{line} missing: {context}");
        }
    }
}

/// Two physical devices in one group, so the loader maps more than one handle.
#[test]
fn read_only_inputs_on_the_test_driver() {
    let dir = common::scratch("readonly-driver");
    let manifest = common::driver_manifest(&dir, "d.json", &common::test_driver());
    let env = [("VK_TEST_DRIVER_DEVICES", "discrete,discrete".to_string()), ("VK_TEST_DRIVER_GROUP_SIZE", "2".to_string())];
    check("readonly-driver-layer", &manifest, &env);
}

#[test]
fn read_only_inputs_on_lavapipe() {
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    check("readonly-lavapipe", Path::new(LAVAPIPE), &[]);
}
