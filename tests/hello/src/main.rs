//! `vk-hello LIBVULKAN`: creates an instance through the given loader library, lists the physical
//! devices in the loader's order, creates a device on the first, records a pipeline barrier through
//! the exported `vkCmdPipelineBarrier` trampoline and through the `vkGetDeviceProcAddr` pointer
//! (valid on every driver), and cleans up.
//! Exits non-zero, saying where, if any step fails.

use std::ffi::{c_char, CStr};
use std::process::ExitCode;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
type Gdpa = unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction;

struct Loader {
    lib: libloading::Library,
    gipa: Gipa,
}

impl Loader {
    /// Loads the library at `path` and finds its `vkGetInstanceProcAddr`.
    fn open(path: &str) -> Result<Loader, String> {
        // SAFETY: loading runs the library's initialisers; `path` names a Vulkan loader, which is
        // made to be loaded into any process.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("cannot load {path}: {e}"))?;
        // SAFETY: a Vulkan loader exports vkGetInstanceProcAddr with the API's signature.
        let gipa = unsafe { Loader::export_of(&lib, b"vkGetInstanceProcAddr\0") }?;
        Ok(Loader { lib, gipa })
    }

    /// An exported function of `lib`, cast to `T`.
    ///
    /// # Safety
    /// `T` must be the function pointer type the export `name` (NUL-terminated) has.
    unsafe fn export_of<T: Copy>(lib: &libloading::Library, name: &[u8]) -> Result<T, String> {
        // SAFETY: `T` is the export's type (the contract).
        unsafe { lib.get::<T>(name) }.map(|symbol| *symbol).map_err(|e| e.to_string())
    }

    /// A command through `vkGetInstanceProcAddr`, cast to its function pointer type.
    ///
    /// # Safety
    /// `T` must be command `name`'s function pointer type (its `PFN_vk*` without the `Option`), and
    /// `instance` NULL or a live instance of this loader.
    unsafe fn get<T>(&self, instance: VkInstance, name: &CStr) -> Result<T, String> {
        // SAFETY: the loader's vkGetInstanceProcAddr with a NUL-terminated name and an instance as
        // the contract says.
        match unsafe { (self.gipa)(instance, name.as_ptr()) } {
            // SAFETY: `T` is the command's function pointer type (the contract), as large as `f`.
            Some(f) => Ok(unsafe { std::mem::transmute_copy(&f) }),
            None => Err(format!("vkGetInstanceProcAddr returned NULL for {name:?}")),
        }
    }
}

/// A device command through `vkGetDeviceProcAddr`, cast to its function pointer type.
///
/// # Safety
/// `T` must be command `name`'s function pointer type, and `device` a live device `gdpa` serves.
unsafe fn device_command<T>(gdpa: Gdpa, device: VkDevice, name: &CStr) -> Result<T, String> {
    // SAFETY: vkGetDeviceProcAddr with a live device and a NUL-terminated name (the contract).
    match unsafe { gdpa(device, name.as_ptr()) } {
        // SAFETY: `T` is the command's function pointer type (the contract), as large as `f`.
        Some(f) => Ok(unsafe { std::mem::transmute_copy(&f) }),
        None => Err(format!("vkGetDeviceProcAddr returned NULL for {name:?}")),
    }
}

fn check(result: VkResult, what: &str) -> Result<(), String> {
    if result == VkResult::SUCCESS { Ok(()) } else { Err(format!("{what} failed: {result:?}")) }
}

/// What `bytes` (a fixed-size name array) holds up to its first NUL, never past its end.
fn name_in(bytes: &[c_char]) -> String {
    let name: Vec<u8> = bytes.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&name).into_owned()
}

// Each command below is asked for by its own name and cast to its own type, then called with
// handles this function created and pointers to its locals: the SAFETY comments say so once per
// step.
fn run(path: &str) -> Result<(), String> {
    let loader = Loader::open(path)?;
    let no_instance = VkInstance::NULL;

    let mut version = 0;
    // SAFETY: a global command asked with no instance; called with a valid pointer to a `u32`.
    unsafe {
        let enumerate_version: unsafe extern "system" fn(*mut u32) -> VkResult = loader.get(no_instance, c"vkEnumerateInstanceVersion")?;
        check(enumerate_version(&mut version), "vkEnumerateInstanceVersion")?;
    }
    let (major, minor) = vk_generated::api_version_major_minor(version);
    println!("loader: {path}\ninstance version: {major}.{minor}.{}", version & 0xfff);

    let app = VkApplicationInfo {
        pApplicationName: c"vk-hello".as_ptr(),
        apiVersion: vk_generated::make_api_version(0, 1, 3, 0),
        ..Default::default()
    };
    let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
    let mut instance = VkInstance::NULL;
    // SAFETY: a global command; a valid create info (its application info and name outlive the
    // call) and a place for the handle.
    unsafe {
        let create_instance: unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult =
            loader.get(no_instance, c"vkCreateInstance")?;
        check(create_instance(&info, std::ptr::null(), &mut instance), "vkCreateInstance")?;
    }

    let mut count = 0;
    let mut devices = Vec::new();
    // SAFETY: the instance just created; the count, then an array of `count` handles.
    unsafe {
        let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult =
            loader.get(instance, c"vkEnumeratePhysicalDevices")?;
        check(enumerate(instance, &mut count, std::ptr::null_mut()), "vkEnumeratePhysicalDevices")?;
        devices.resize(count as usize, VkPhysicalDevice::NULL);
        check(enumerate(instance, &mut count, devices.as_mut_ptr()), "vkEnumeratePhysicalDevices")?;
    }
    // SAFETY: the command's own type, asked of the live instance.
    let properties: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties) =
        unsafe { loader.get(instance, c"vkGetPhysicalDeviceProperties") }?;
    println!("physical devices: {count}");
    for (i, &pd) in devices.iter().enumerate() {
        let mut p = VkPhysicalDeviceProperties::default();
        // SAFETY: a physical device of the live instance and a place for its properties.
        unsafe { properties(pd, &mut p) };
        let (major, minor) = vk_generated::api_version_major_minor(p.apiVersion);
        println!("  {i}: {} ({:?}, {:04x}:{:04x}, Vulkan {major}.{minor})", name_in(&p.deviceName), p.deviceType, p.vendorID, p.deviceID);
    }
    let Some(&physical_device) = devices.first() else { return Err("no physical device".into()) };

    let priority = 1.0f32;
    let queue_info = VkDeviceQueueCreateInfo { queueFamilyIndex: 0, queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
    let device_info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue_info, ..Default::default() };
    let mut device = VkDevice::NULL;
    // SAFETY: a physical device of the live instance, a valid create info (its queue info and
    // priority outlive the call) and a place for the handle.
    let gdpa: Gdpa = unsafe {
        let create_device: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult =
            loader.get(instance, c"vkCreateDevice")?;
        check(create_device(physical_device, &device_info, std::ptr::null(), &mut device), "vkCreateDevice")?;
        loader.get(instance, c"vkGetDeviceProcAddr")?
    };

    let mut queue = VkQueue::NULL;
    let mut pool = VkCommandPool::NULL;
    let mut cmd = VkCommandBuffer::NULL;
    // SAFETY: the device just created; valid create and allocate infos (queue family 0, as the
    // device was created with) and places for the handles; the pool's one command buffer begun.
    unsafe {
        let get_queue: unsafe extern "system" fn(VkDevice, u32, u32, *mut VkQueue) = device_command(gdpa, device, c"vkGetDeviceQueue")?;
        get_queue(device, 0, 0, &mut queue);
        let create_pool: unsafe extern "system" fn(VkDevice, *const VkCommandPoolCreateInfo, *const VkAllocationCallbacks, *mut VkCommandPool) -> VkResult =
            device_command(gdpa, device, c"vkCreateCommandPool")?;
        let pool_info = VkCommandPoolCreateInfo { queueFamilyIndex: 0, ..Default::default() };
        check(create_pool(device, &pool_info, std::ptr::null(), &mut pool), "vkCreateCommandPool")?;
        let allocate: unsafe extern "system" fn(VkDevice, *const VkCommandBufferAllocateInfo, *mut VkCommandBuffer) -> VkResult =
            device_command(gdpa, device, c"vkAllocateCommandBuffers")?;
        let alloc_info = VkCommandBufferAllocateInfo { commandPool: pool, commandBufferCount: 1, ..Default::default() };
        check(allocate(device, &alloc_info, &mut cmd), "vkAllocateCommandBuffers")?;
        let begin: unsafe extern "system" fn(VkCommandBuffer, *const VkCommandBufferBeginInfo) -> VkResult =
            device_command(gdpa, device, c"vkBeginCommandBuffer")?;
        check(begin(cmd, &VkCommandBufferBeginInfo::default()), "vkBeginCommandBuffer")?;
    }
    // The exported trampoline and the pointer from vkGetDeviceProcAddr (the driver's own), each
    // recording an execution barrier: valid on every driver with no pipeline or resource bound.
    // SAFETY: both have vkCmdPipelineBarrier's type (the loader exports it so).
    let exported: PFN_vkCmdPipelineBarrier = Some(unsafe { Loader::export_of(&loader.lib, b"vkCmdPipelineBarrier\0") }?);
    // SAFETY: as above.
    let direct: PFN_vkCmdPipelineBarrier = Some(unsafe { device_command(gdpa, device, c"vkCmdPipelineBarrier") }?);
    let top = VkPipelineStageFlags::TOP_OF_PIPE_BIT;
    let bottom = VkPipelineStageFlags::BOTTOM_OF_PIPE_BIT;
    for barrier in [exported, direct].into_iter().flatten() {
        let none = std::ptr::null();
        // SAFETY: a command buffer in the recording state; no barrier structures (counts 0).
        unsafe { barrier(cmd, top, bottom, VkDependencyFlags::empty(), 0, none, 0, std::ptr::null(), 0, std::ptr::null()) };
    }
    // SAFETY: the command's own type; the command buffer being recorded.
    unsafe {
        let end: unsafe extern "system" fn(VkCommandBuffer) -> VkResult = device_command(gdpa, device, c"vkEndCommandBuffer")?;
        check(end(cmd), "vkEndCommandBuffer")?;
    }
    println!("device created on device 0; recorded 2 pipeline barriers (exported trampoline + vkGetDeviceProcAddr pointer)");

    // SAFETY: the pool, device and instance created above, each destroyed once after what it
    // holds, with no allocator as created.
    unsafe {
        let destroy_pool: unsafe extern "system" fn(VkDevice, VkCommandPool, *const VkAllocationCallbacks) =
            device_command(gdpa, device, c"vkDestroyCommandPool")?;
        destroy_pool(device, pool, std::ptr::null());
        let destroy_device: unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks) = device_command(gdpa, device, c"vkDestroyDevice")?;
        destroy_device(device, std::ptr::null());
        let destroy_instance: unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks) = loader.get(instance, c"vkDestroyInstance")?;
        destroy_instance(instance, std::ptr::null());
    }
    println!("ok");
    Ok(())
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: vk-hello /path/to/libvulkan.so.1");
        return ExitCode::FAILURE;
    };
    match run(&path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vk-hello: {e}");
            ExitCode::FAILURE
        }
    }
}
