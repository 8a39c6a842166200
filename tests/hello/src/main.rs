//! `vk-hello LIBVULKAN`: creates an instance through the given loader library, lists the physical
//! devices in the loader's order, creates a device on the first, records a pipeline barrier through
//! the exported `vkCmdPipelineBarrier` trampoline and through the `vkGetDeviceProcAddr` pointer
//! (valid on every driver), and cleans up.
//! Exits non-zero, saying where, if any step fails.

use std::ffi::{c_char, CStr};
use std::process::ExitCode;

use vk_generated::types::*;

struct Loader {
    _lib: libloading::Library,
    gipa: unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction,
}

impl Loader {
    /// A command through `vkGetInstanceProcAddr`, cast to its PFN type.
    unsafe fn get<T>(&self, instance: VkInstance, name: &CStr) -> Result<T, String> {
        match (self.gipa)(instance, name.as_ptr()) {
            Some(f) => Ok(std::mem::transmute_copy(&f)),
            None => Err(format!("vkGetInstanceProcAddr returned NULL for {name:?}")),
        }
    }
}

fn check(result: VkResult, what: &str) -> Result<(), String> {
    if result == VkResult::SUCCESS { Ok(()) } else { Err(format!("{what} failed: {result:?}")) }
}

unsafe fn run(path: &str) -> Result<(), String> {
    let lib = libloading::Library::new(path).map_err(|e| format!("cannot load {path}: {e}"))?;
    let gipa = *lib
        .get::<unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction>(b"vkGetInstanceProcAddr\0")
        .map_err(|e| e.to_string())?;
    let loader = Loader { gipa, _lib: lib };
    let no_instance = VkInstance::NULL;

    let enumerate_version: unsafe extern "system" fn(*mut u32) -> VkResult = loader.get(no_instance, c"vkEnumerateInstanceVersion")?;
    let mut version = 0;
    check(enumerate_version(&mut version), "vkEnumerateInstanceVersion")?;
    let (major, minor) = vk_generated::api_version_major_minor(version);
    println!("loader: {path}\ninstance version: {major}.{minor}.{}", version & 0xfff);

    let app = VkApplicationInfo {
        pApplicationName: c"vk-hello".as_ptr(),
        apiVersion: vk_generated::make_api_version(0, 1, 3, 0),
        ..Default::default()
    };
    let info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
    let create_instance: unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult =
        loader.get(no_instance, c"vkCreateInstance")?;
    let mut instance = VkInstance::NULL;
    check(create_instance(&info, std::ptr::null(), &mut instance), "vkCreateInstance")?;

    let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult =
        loader.get(instance, c"vkEnumeratePhysicalDevices")?;
    let mut count = 0;
    check(enumerate(instance, &mut count, std::ptr::null_mut()), "vkEnumeratePhysicalDevices")?;
    let mut devices = vec![VkPhysicalDevice::NULL; count as usize];
    check(enumerate(instance, &mut count, devices.as_mut_ptr()), "vkEnumeratePhysicalDevices")?;
    let properties: unsafe extern "system" fn(VkPhysicalDevice, *mut VkPhysicalDeviceProperties) =
        loader.get(instance, c"vkGetPhysicalDeviceProperties")?;
    println!("physical devices: {count}");
    for (i, &pd) in devices.iter().enumerate() {
        let mut p = VkPhysicalDeviceProperties::default();
        properties(pd, &mut p);
        let name = CStr::from_ptr(p.deviceName.as_ptr());
        let (major, minor) = vk_generated::api_version_major_minor(p.apiVersion);
        println!("  {i}: {} ({:?}, {:04x}:{:04x}, Vulkan {major}.{minor})", name.to_string_lossy(), p.deviceType, p.vendorID, p.deviceID);
    }
    let Some(&physical_device) = devices.first() else { return Err("no physical device".into()) };

    let priority = 1.0f32;
    let queue_info = VkDeviceQueueCreateInfo { queueFamilyIndex: 0, queueCount: 1, pQueuePriorities: &priority, ..Default::default() };
    let device_info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue_info, ..Default::default() };
    let create_device: unsafe extern "system" fn(VkPhysicalDevice, *const VkDeviceCreateInfo, *const VkAllocationCallbacks, *mut VkDevice) -> VkResult =
        loader.get(instance, c"vkCreateDevice")?;
    let mut device = VkDevice::NULL;
    check(create_device(physical_device, &device_info, std::ptr::null(), &mut device), "vkCreateDevice")?;

    let gdpa: unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction = loader.get(instance, c"vkGetDeviceProcAddr")?;
    let device_fn = |name: &CStr| gdpa(device, name.as_ptr()).ok_or_else(|| format!("vkGetDeviceProcAddr returned NULL for {name:?}"));
    let get_queue: unsafe extern "system" fn(VkDevice, u32, u32, *mut VkQueue) = std::mem::transmute(device_fn(c"vkGetDeviceQueue")?);
    let mut queue = VkQueue::NULL;
    get_queue(device, 0, 0, &mut queue);

    let create_pool: unsafe extern "system" fn(VkDevice, *const VkCommandPoolCreateInfo, *const VkAllocationCallbacks, *mut VkCommandPool) -> VkResult =
        std::mem::transmute(device_fn(c"vkCreateCommandPool")?);
    let pool_info = VkCommandPoolCreateInfo { queueFamilyIndex: 0, ..Default::default() };
    let mut pool = VkCommandPool::NULL;
    check(create_pool(device, &pool_info, std::ptr::null(), &mut pool), "vkCreateCommandPool")?;
    let allocate: unsafe extern "system" fn(VkDevice, *const VkCommandBufferAllocateInfo, *mut VkCommandBuffer) -> VkResult =
        std::mem::transmute(device_fn(c"vkAllocateCommandBuffers")?);
    let alloc_info = VkCommandBufferAllocateInfo { commandPool: pool, commandBufferCount: 1, ..Default::default() };
    let mut cmd = VkCommandBuffer::NULL;
    check(allocate(device, &alloc_info, &mut cmd), "vkAllocateCommandBuffers")?;
    let begin: unsafe extern "system" fn(VkCommandBuffer, *const VkCommandBufferBeginInfo) -> VkResult =
        std::mem::transmute(device_fn(c"vkBeginCommandBuffer")?);
    check(begin(cmd, &VkCommandBufferBeginInfo::default()), "vkBeginCommandBuffer")?;
    // The exported trampoline and the pointer from vkGetDeviceProcAddr (the driver's own), each
    // recording an execution barrier: valid on every driver with no pipeline or resource bound.
    let exported: PFN_vkCmdPipelineBarrier = Some(*loader
        ._lib
        .get(b"vkCmdPipelineBarrier\0")
        .map_err(|e| e.to_string())?);
    let direct: PFN_vkCmdPipelineBarrier = std::mem::transmute(Some(device_fn(c"vkCmdPipelineBarrier")?));
    let top = VkPipelineStageFlags::TOP_OF_PIPE_BIT;
    let bottom = VkPipelineStageFlags::BOTTOM_OF_PIPE_BIT;
    for barrier in [exported, direct].into_iter().flatten() {
        let none = std::ptr::null();
        barrier(cmd, top, bottom, VkDependencyFlags::empty(), 0, none, 0, std::ptr::null(), 0, std::ptr::null());
    }
    let end: unsafe extern "system" fn(VkCommandBuffer) -> VkResult = std::mem::transmute(device_fn(c"vkEndCommandBuffer")?);
    check(end(cmd), "vkEndCommandBuffer")?;
    println!("device created on device 0; recorded 2 pipeline barriers (exported trampoline + vkGetDeviceProcAddr pointer)");

    let destroy_pool: unsafe extern "system" fn(VkDevice, VkCommandPool, *const VkAllocationCallbacks) = std::mem::transmute(device_fn(c"vkDestroyCommandPool")?);
    destroy_pool(device, pool, std::ptr::null());
    let destroy_device: unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks) = std::mem::transmute(device_fn(c"vkDestroyDevice")?);
    destroy_device(device, std::ptr::null());
    let destroy_instance: unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks) = loader.get(instance, c"vkDestroyInstance")?;
    destroy_instance(instance, std::ptr::null());
    println!("ok");
    Ok(())
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: vk-hello /path/to/libvulkan.so.1");
        return ExitCode::FAILURE;
    };
    match unsafe { run(&path) } {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vk-hello: {e}");
            ExitCode::FAILURE
        }
    }
}
