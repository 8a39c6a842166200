//! A Vulkan loader library opened with `dlopen` (RTLD_LOCAL, so two loaders' `vk*` symbols never
//! interpose on each other), and the objects the benchmarks drive through its exported commands.

use std::ffi::{c_char, CStr};
use std::ptr;

use libloading::Library;
use vk_generated::make_api_version;
use vk_generated::types::*;

pub const API_VERSION: u32 = make_api_version(0, 1, 3, 0);

pub type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
pub type Gdpa = unsafe extern "system" fn(VkDevice, *const c_char) -> PFN_vkVoidFunction;
pub type CreateInstance =
    unsafe extern "system" fn(*const VkInstanceCreateInfo, *const VkAllocationCallbacks, *mut VkInstance) -> VkResult;
pub type DestroyInstance = unsafe extern "system" fn(VkInstance, *const VkAllocationCallbacks);
pub type EnumerateExtensions = unsafe extern "system" fn(*const c_char, *mut u32, *mut VkExtensionProperties) -> VkResult;
pub type CmdDraw = unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32, u32);
pub type QueueSubmit = unsafe extern "system" fn(VkQueue, u32, *const VkSubmitInfo, VkFence) -> VkResult;
type DrawCount = unsafe extern "system" fn(VkCommandBuffer) -> u32;

/// A loader library and its exported global entry points.
pub struct Loader {
    pub gipa: Gipa,
    pub create_instance: CreateInstance,
    pub destroy_instance: DestroyInstance,
    lib: Library,
}

impl Loader {
    pub fn open(path: &str) -> Result<Loader, String> {
        // SAFETY: a Vulkan loader's initialisers are well behaved.
        let lib = unsafe { Library::new(path) }.map_err(|e| format!("cannot load {path}: {e}"))?;
        // SAFETY: every Vulkan loader exports these three with these signatures.
        unsafe {
            Ok(Loader {
                gipa: export(&lib, c"vkGetInstanceProcAddr")?,
                create_instance: export(&lib, c"vkCreateInstance")?,
                destroy_instance: export(&lib, c"vkDestroyInstance")?,
                lib,
            })
        }
    }

    /// An exported command of the loader (`dlsym`).
    ///
    /// # Safety
    /// `T` must be the command's function pointer type.
    pub unsafe fn export<T: Copy>(&self, name: &CStr) -> Result<T, String> {
        // SAFETY: the caller's contract is `export`'s.
        unsafe { export(&self.lib, name) }
    }

    /// `vkCreateInstance` with API 1.3, no extensions, and the given layers enabled.
    pub fn create(&self, layers: &[*const c_char]) -> Result<VkInstance, String> {
        let app = VkApplicationInfo {
            pApplicationName: c"loader-bench".as_ptr(),
            apiVersion: API_VERSION,
            ..Default::default()
        };
        let info = VkInstanceCreateInfo {
            pApplicationInfo: &app,
            enabledLayerCount: layers.len() as u32,
            ppEnabledLayerNames: if layers.is_empty() { ptr::null() } else { layers.as_ptr() },
            ..Default::default()
        };
        let mut instance = VkInstance::NULL;
        // SAFETY: valid create info, no allocator, a place for the handle.
        check(unsafe { (self.create_instance)(&info, ptr::null(), &mut instance) }, "vkCreateInstance")?;
        Ok(instance)
    }

    pub fn destroy(&self, instance: VkInstance) {
        // SAFETY: an instance this loader created, destroyed once.
        unsafe { (self.destroy_instance)(instance, ptr::null()) }
    }
}

/// # Safety
/// `T` must be the symbol's function pointer type.
unsafe fn export<T: Copy>(lib: &Library, name: &CStr) -> Result<T, String> {
    // SAFETY: `T` is the symbol's type (the contract).
    unsafe { lib.get::<T>(name.to_bytes_with_nul()) }
        .map(|s| *s)
        .map_err(|e| format!("no {name:?} exported: {e}"))
}

pub fn check(result: VkResult, what: &str) -> Result<(), String> {
    if result == VkResult::SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {result:?}"))
    }
}

/// An instance, a device on its first physical device, and a command buffer in the recording
/// state, all made through the loader's exported commands (so the loader sets the dispatch
/// pointers of the objects the driver returns).
pub struct Recording<'a> {
    pub loader: &'a Loader,
    pub instance: VkInstance,
    pub device: VkDevice,
    pub pool: VkCommandPool,
    pub cmd: VkCommandBuffer,
    pub queue_family: u32,
    pub gdpa: Gdpa,
}

impl<'a> Recording<'a> {
    pub fn new(loader: &'a Loader, layers: &[*const c_char]) -> Result<Recording<'a>, String> {
        let instance = loader.create(layers)?;
        let mut recording = Recording {
            loader,
            instance,
            device: VkDevice::NULL,
            pool: VkCommandPool::NULL,
            cmd: VkCommandBuffer::NULL,
            queue_family: 0,
            // SAFETY: the exported vkGetDeviceProcAddr has this signature.
            gdpa: unsafe { loader.export(c"vkGetDeviceProcAddr")? },
        };
        // SAFETY: the exported commands have the signatures named; handles are the ones created.
        unsafe { recording.make_device()? };
        Ok(recording)
    }

    /// Makes the device, its command pool and a command buffer in the recording state.
    ///
    /// # Safety
    /// `self.instance` must be a live instance of `self.loader`, and no device made yet.
    unsafe fn make_device(&mut self) -> Result<(), String> {
        let l = self.loader;
        let mut count = 1;
        let mut physical = VkPhysicalDevice::NULL;
        // SAFETY: the loader exports the command with this type; the live instance (the
        // contract), a count of 1 and room for one handle.
        let result = unsafe {
            let enumerate: unsafe extern "system" fn(VkInstance, *mut u32, *mut VkPhysicalDevice) -> VkResult =
                l.export(c"vkEnumeratePhysicalDevices")?;
            enumerate(self.instance, &mut count, &mut physical)
        };
        if result != VkResult::INCOMPLETE {
            check(result, "vkEnumeratePhysicalDevices")?;
        }
        if count == 0 {
            return Err("no physical device".into());
        }
        // The first queue family that can compute (the test driver's only one; a GPU's first).
        let mut count = 0;
        let mut props = Vec::new();
        // SAFETY: the loader exports the command with this type; a physical device of the live
        // instance, the count, then an array of `count` structures.
        unsafe {
            let families: unsafe extern "system" fn(VkPhysicalDevice, *mut u32, *mut VkQueueFamilyProperties) =
                l.export(c"vkGetPhysicalDeviceQueueFamilyProperties")?;
            families(physical, &mut count, ptr::null_mut());
            props.resize(count as usize, VkQueueFamilyProperties::default());
            families(physical, &mut count, props.as_mut_ptr());
        }
        let family = props
            .iter()
            .position(|p| p.queueFlags.contains(VkQueueFlags::COMPUTE_BIT))
            .ok_or("no queue family can compute")? as u32;
        self.queue_family = family;
        let priority = 1.0f32;
        let queue = VkDeviceQueueCreateInfo {
            queueFamilyIndex: family,
            queueCount: 1,
            pQueuePriorities: &priority,
            ..Default::default()
        };
        let info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue, ..Default::default() };
        // SAFETY: the loader exports the command with this type; a physical device of the live
        // instance, a valid create info (its queue info and priority outlive the call) and a
        // place for the handle.
        unsafe {
            let create_device: unsafe extern "system" fn(
                VkPhysicalDevice,
                *const VkDeviceCreateInfo,
                *const VkAllocationCallbacks,
                *mut VkDevice,
            ) -> VkResult = l.export(c"vkCreateDevice")?;
            check(create_device(physical, &info, ptr::null(), &mut self.device), "vkCreateDevice")?;
        }

        let pool_info = VkCommandPoolCreateInfo {
            flags: VkCommandPoolCreateFlags::RESET_COMMAND_BUFFER_BIT,
            queueFamilyIndex: family,
            ..Default::default()
        };
        // SAFETY: the loader exports each command with the type named; the device just made, a
        // pool of the family it has a queue of, valid infos and places for the handles; the one
        // command buffer begun.
        unsafe {
            let create_pool: unsafe extern "system" fn(
                VkDevice,
                *const VkCommandPoolCreateInfo,
                *const VkAllocationCallbacks,
                *mut VkCommandPool,
            ) -> VkResult = l.export(c"vkCreateCommandPool")?;
            check(create_pool(self.device, &pool_info, ptr::null(), &mut self.pool), "vkCreateCommandPool")?;
            let allocate: unsafe extern "system" fn(VkDevice, *const VkCommandBufferAllocateInfo, *mut VkCommandBuffer) -> VkResult =
                l.export(c"vkAllocateCommandBuffers")?;
            let alloc_info = VkCommandBufferAllocateInfo {
                commandPool: self.pool,
                level: VkCommandBufferLevel::PRIMARY,
                commandBufferCount: 1,
                ..Default::default()
            };
            check(allocate(self.device, &alloc_info, &mut self.cmd), "vkAllocateCommandBuffers")?;
            let begin: unsafe extern "system" fn(VkCommandBuffer, *const VkCommandBufferBeginInfo) -> VkResult =
                l.export(c"vkBeginCommandBuffer")?;
            check(begin(self.cmd, &VkCommandBufferBeginInfo::default()), "vkBeginCommandBuffer")
        }
    }

    /// A device command through `vkGetDeviceProcAddr`.
    pub fn device_proc(&self, name: &CStr) -> PFN_vkVoidFunction {
        // SAFETY: a live device and a NUL-terminated name.
        unsafe { (self.gdpa)(self.device, name.as_ptr()) }
    }

    /// The device's first queue of [`Self::queue_family`], through the loader's exported
    /// `vkGetDeviceQueue` (so through the device's layers: a layer that wraps queues gives its
    /// wrapper, the handle the application sees).
    pub fn queue(&self) -> Result<VkQueue, String> {
        type GetQueue = unsafe extern "system" fn(VkDevice, u32, u32, *mut VkQueue);
        // SAFETY: the exported command's signature.
        let get: GetQueue = unsafe { self.loader.export(c"vkGetDeviceQueue")? };
        let mut queue = VkQueue::NULL;
        // SAFETY: the live device, the family and index of the one queue it was created with, a
        // place for the handle.
        unsafe { get(self.device, self.queue_family, 0, &mut queue) };
        if queue.is_null() {
            return Err("vkGetDeviceQueue gave NULL".into());
        }
        Ok(queue)
    }

    /// The test driver's count of draws recorded since `vkBeginCommandBuffer` (a test-only
    /// command reached through `vkGetDeviceProcAddr`), or `None` if the driver is another one.
    pub fn draws_recorded(&self) -> Option<u32> {
        let f = self.device_proc(c"vkGetTestDriverDrawCountTEST")?;
        // SAFETY: the test driver's signature for this command.
        let f: DrawCount = unsafe { std::mem::transmute(f) };
        // SAFETY: the command buffer being recorded.
        Some(unsafe { f(self.cmd) })
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        // SAFETY: the handles were created above and are destroyed once, children first.
        unsafe {
            if let Ok(end) = self.loader.export::<unsafe extern "system" fn(VkCommandBuffer) -> VkResult>(c"vkEndCommandBuffer") {
                if !self.cmd.is_null() {
                    end(self.cmd);
                }
            }
            type DestroyPool = unsafe extern "system" fn(VkDevice, VkCommandPool, *const VkAllocationCallbacks);
            if let Ok(destroy) = self.loader.export::<DestroyPool>(c"vkDestroyCommandPool") {
                if !self.pool.is_null() {
                    destroy(self.device, self.pool, ptr::null());
                }
            }
            type DestroyDevice = unsafe extern "system" fn(VkDevice, *const VkAllocationCallbacks);
            if let Ok(destroy) = self.loader.export::<DestroyDevice>(c"vkDestroyDevice") {
                if !self.device.is_null() {
                    destroy(self.device, ptr::null());
                }
            }
        }
        self.loader.destroy(self.instance);
    }
}
