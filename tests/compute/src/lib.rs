//! A compute dispatch through whichever `libvulkan.so.1` the dynamic linker finds: `run` opens the
//! library by name (as ash does, so `LD_LIBRARY_PATH` chooses the loader), creates an instance and a
//! device on the first physical device with a compute queue, fills a host-visible storage buffer,
//! runs `shader/square.comp` over it and checks every value. The `vk-compute` binary calls it; the
//! loader's integration tests call it in a child process whose `LD_LIBRARY_PATH` points at our
//! library.

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};

use vk_generated::types::*;
use vk_generated::{DeviceDispatchTable, DispatchTable, InstanceDispatchTable};

/// The SPIR-V of `shader/square.comp` (see there for how it was produced).
const SHADER: &[u8] = include_bytes!("shader/square.comp.spv");
/// `local_size_x` in the shader.
const WORKGROUP_SIZE: u32 = 64;

/// What to run: `count` values, the shader applied `iterations` times (one submission each).
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub count: u32,
    pub iterations: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { count: 65536, iterations: 1 }
    }
}

/// The value the buffer starts with at index `i`: spread over all 32 bits, so the products wrap.
pub fn input(i: u32) -> u32 {
    i.wrapping_mul(0x9e37_79b9)
}

/// What the shader leaves at a value after `iterations` passes.
pub fn expected(value: u32, iterations: u32) -> u32 {
    (0..iterations).fold(value, |v, _| v.wrapping_mul(v).wrapping_add(1))
}

/// A table slot, or an error naming the command the loader did not give us.
macro_rules! vk {
    ($table:ident . $name:ident) => {
        $table.$name.ok_or_else(|| format!("{}: the loader returned NULL", stringify!($name)))?
    };
}

fn check(result: VkResult, step: &str) -> Result<(), String> {
    if result == VkResult::SUCCESS { Ok(()) } else { Err(format!("{step} returned {result:?}")) }
}

/// A fixed-size string member up to its first NUL, never past the array (a driver may fill it to
/// the last byte).
fn text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn version(v: u32) -> String {
    let (major, minor) = vk_generated::api_version_major_minor(v);
    format!("{major}.{minor}.{}", v & 0xfff)
}

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// The file the dynamic linker loaded `symbol` from (symbolic links resolved): which loader we got.
fn library_of(symbol: *const c_void) -> String {
    // SAFETY: `Dl_info` is pointers and integers, for which all zeros is a value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address; dli_fname points into the linker's own records.
    if unsafe { libc::dladdr(symbol, &mut info) } == 0 || info.dli_fname.is_null() {
        return "(unknown)".into();
    }
    // SAFETY: a non-NULL `dli_fname` is the NUL-terminated path of a loaded object, which stays
    // loaded (it holds `symbol`, which this process uses).
    let name = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    match std::fs::canonicalize(&name) {
        Ok(real) => real.display().to_string(),
        Err(_) => name,
    }
}

/// Runs the whole program, printing what it ran on and `PASS` at the end; the error names the
/// step that failed.
pub fn run(options: &Options) -> Result<(), String> {
    // SAFETY: loading runs the library's initialisers: a Vulkan loader, made to be loaded into any
    // process.
    let lib = unsafe { libloading::Library::new("libvulkan.so.1") }.map_err(|e| format!("dlopen(\"libvulkan.so.1\"): {e}"))?;
    // SAFETY: a Vulkan loader exports vkGetInstanceProcAddr with the API's signature.
    let gipa: Gipa = *unsafe { lib.get::<Gipa>(b"vkGetInstanceProcAddr\0") }.map_err(|e| format!("dlsym(vkGetInstanceProcAddr): {e}"))?;
    println!("loader: {}", library_of(gipa as *const c_void));
    // SAFETY: the loader's vkGetInstanceProcAddr for global commands (no instance), with
    // NUL-terminated names; the table casts each answer to its command's type.
    let global = InstanceDispatchTable::load(|name| unsafe { gipa(VkInstance::NULL, name.as_ptr()) });

    let mut instance_version = 0;
    // SAFETY: a valid pointer to a `u32`.
    check(unsafe { vk!(global.vkEnumerateInstanceVersion)(&mut instance_version) }, "vkEnumerateInstanceVersion")?;
    println!("instance version: {}", version(instance_version));

    let app = VkApplicationInfo {
        pApplicationName: c"vk-compute".as_ptr(),
        apiVersion: vk_generated::make_api_version(0, 1, 2, 0),
        ..Default::default()
    };
    let instance_info = VkInstanceCreateInfo { pApplicationInfo: &app, ..Default::default() };
    let mut instance = VkInstance::NULL;
    // SAFETY: a valid create info (its application info and name outlive the call) and a place
    // for the handle.
    check(unsafe { vk!(global.vkCreateInstance)(&instance_info, null(), &mut instance) }, "vkCreateInstance")?;
    // SAFETY: the loader's vkGetInstanceProcAddr with the live instance and NUL-terminated names.
    let it = InstanceDispatchTable::load(|name| unsafe { gipa(instance, name.as_ptr()) });
    // SAFETY: `it` is the live instance's table, `gipa` its loader's.
    let result = unsafe { with_instance(&it, gipa, instance, options) };
    // SAFETY: the instance created above, destroyed once, after every object made from it.
    unsafe { vk!(it.vkDestroyInstance)(instance, null()) };
    result?;
    println!("PASS: {} values x {} iteration(s) checked", options.count, options.iterations);
    Ok(())
}

/// The physical device to run on: the first, in the loader's order, with a compute queue family.
struct Chosen {
    physical_device: VkPhysicalDevice,
    queue_family: u32,
    properties: VkPhysicalDeviceProperties,
}

/// # Safety
/// `it` must be the table of `instance`, a live instance.
unsafe fn choose_device(it: &InstanceDispatchTable, instance: VkInstance) -> Result<Chosen, String> {
    let mut count = 0;
    let mut devices = Vec::new();
    // SAFETY: the live instance (the contract); the count, then an array of `count` handles.
    unsafe {
        check(vk!(it.vkEnumeratePhysicalDevices)(instance, &mut count, null_mut()), "vkEnumeratePhysicalDevices")?;
        devices.resize(count as usize, VkPhysicalDevice::NULL);
        check(vk!(it.vkEnumeratePhysicalDevices)(instance, &mut count, devices.as_mut_ptr()), "vkEnumeratePhysicalDevices")?;
    }
    devices.truncate(count as usize);
    println!("physical devices: {count}");
    let mut chosen = None;
    for (index, &physical_device) in devices.iter().enumerate() {
        let mut properties = VkPhysicalDeviceProperties::default();
        let mut family_count = 0;
        let mut families = Vec::new();
        // SAFETY: a physical device of the live instance; a place for its properties, the count,
        // then an array of `family_count` structures.
        unsafe {
            vk!(it.vkGetPhysicalDeviceProperties)(physical_device, &mut properties);
            vk!(it.vkGetPhysicalDeviceQueueFamilyProperties)(physical_device, &mut family_count, null_mut());
            families.resize(family_count as usize, VkQueueFamilyProperties::default());
            vk!(it.vkGetPhysicalDeviceQueueFamilyProperties)(physical_device, &mut family_count, families.as_mut_ptr());
        }
        let compute = families.iter().take(family_count as usize).position(|f| f.queueFlags.contains(VkQueueFlags::COMPUTE_BIT) && f.queueCount > 0);
        println!(
            "  {index}: {} ({:?}, {:04x}:{:04x}, Vulkan {}){}",
            text(&properties.deviceName),
            properties.deviceType,
            properties.vendorID,
            properties.deviceID,
            version(properties.apiVersion),
            if compute.is_none() { ", no compute queue" } else { "" }
        );
        if let (None, Some(family)) = (&chosen, compute) {
            chosen = Some(Chosen { physical_device, queue_family: family as u32, properties });
        }
    }
    chosen.ok_or_else(|| "choosing a device: no physical device has a compute queue".into())
}

/// The driver's name and version string (Vulkan 1.2's driver properties), for the report.
///
/// # Safety
/// `it` must be the table of the live instance `chosen.physical_device` belongs to.
unsafe fn driver_description(it: &InstanceDispatchTable, chosen: &Chosen) -> String {
    let properties = &chosen.properties;
    let fallback = format!("driver version {:#x}", properties.driverVersion);
    let (Some(properties2), true) = (it.vkGetPhysicalDeviceProperties2, properties.apiVersion >= vk_generated::make_api_version(0, 1, 2, 0)) else {
        return fallback;
    };
    let mut driver = VkPhysicalDeviceDriverProperties::default();
    let mut all = VkPhysicalDeviceProperties2 { pNext: &mut driver as *mut _ as *mut c_void, ..Default::default() };
    // SAFETY: a physical device of the live instance (the contract) of Vulkan 1.2, and a valid
    // chain of two output structures on this stack.
    unsafe { properties2(chosen.physical_device, &mut all) };
    let c = driver.conformanceVersion;
    format!(
        "{} ({}), {:?}, conformance {}.{}.{}.{}, {fallback}",
        text(&driver.driverName),
        text(&driver.driverInfo),
        driver.driverID,
        c.major,
        c.minor,
        c.subminor,
        c.patch
    )
}

/// Chooses a device, runs the computation on it and destroys it.
///
/// # Safety
/// `it` must be the table of `instance`, a live instance, and `gipa` the `vkGetInstanceProcAddr`
/// of the loader that created it.
unsafe fn with_instance(it: &InstanceDispatchTable, gipa: Gipa, instance: VkInstance, options: &Options) -> Result<(), String> {
    // SAFETY: the contract.
    let chosen = unsafe { choose_device(it, instance) }?;
    println!("running on: {}", text(&chosen.properties.deviceName));
    // SAFETY: the contract; the chosen device is the instance's.
    println!("driver: {}", unsafe { driver_description(it, &chosen) });

    let priority = 1.0f32;
    let queue_info = VkDeviceQueueCreateInfo {
        queueFamilyIndex: chosen.queue_family,
        queueCount: 1,
        pQueuePriorities: &priority,
        ..Default::default()
    };
    let device_info = VkDeviceCreateInfo { queueCreateInfoCount: 1, pQueueCreateInfos: &queue_info, ..Default::default() };
    let mut device = VkDevice::NULL;
    // SAFETY: a physical device of the live instance, a valid create info (its queue info and
    // priority outlive the call) and a place for the handle.
    check(unsafe { vk!(it.vkCreateDevice)(chosen.physical_device, &device_info, null(), &mut device) }, "vkCreateDevice")?;
    // SAFETY: the loader's vkGetInstanceProcAddr (the contract) answers for this name with
    // vkGetDeviceProcAddr, of the type the transmute gives it.
    let gdpa: PFN_vkGetDeviceProcAddr = unsafe { std::mem::transmute(gipa(instance, c"vkGetDeviceProcAddr".as_ptr())) };
    let gdpa = gdpa.ok_or("vkGetInstanceProcAddr returned NULL for vkGetDeviceProcAddr")?;
    // SAFETY: vkGetDeviceProcAddr with the live device and NUL-terminated names.
    let dt = DeviceDispatchTable::load(|name| unsafe { gdpa(device, name.as_ptr()) });
    let mut objects = Objects::default();
    // SAFETY: the tables of the live instance and of `device`, made on the chosen device; no
    // object made yet.
    let result = unsafe { compute(it, &dt, &chosen, device, options, &mut objects) };
    // SAFETY: `compute` waited for each submission (a failed wait, a lost device or a 60 s
    // timeout, ends the program here, as the Vulkan objects go with it); every object is NULL or
    // the device's, and the device is destroyed once, after them.
    unsafe {
        objects.destroy(&dt, device);
        vk!(dt.vkDestroyDevice)(device, null());
    }
    result
}

/// Everything created on the device, destroyed in reverse order whether or not the run succeeded.
#[derive(Default)]
struct Objects {
    buffer: VkBuffer,
    memory: VkDeviceMemory,
    shader: VkShaderModule,
    set_layout: VkDescriptorSetLayout,
    pipeline_layout: VkPipelineLayout,
    pipeline: VkPipeline,
    descriptor_pool: VkDescriptorPool,
    command_pool: VkCommandPool,
    fence: VkFence,
}

impl Objects {
    /// Destroys every object, in reverse order of creation.
    ///
    /// # Safety
    /// `dt` must be the table of `device`, a live device whose work is done, and each object NULL
    /// or one of the device's that is not used after.
    unsafe fn destroy(&self, dt: &DeviceDispatchTable, device: VkDevice) {
        // Destroying a NULL handle is a no-op for every one of these commands.
        let (Some(fence), Some(command_pool), Some(descriptor_pool), Some(pipeline), Some(pipeline_layout), Some(set_layout), Some(shader), Some(buffer), Some(memory)) = (
            dt.vkDestroyFence,
            dt.vkDestroyCommandPool,
            dt.vkDestroyDescriptorPool,
            dt.vkDestroyPipeline,
            dt.vkDestroyPipelineLayout,
            dt.vkDestroyDescriptorSetLayout,
            dt.vkDestroyShaderModule,
            dt.vkDestroyBuffer,
            dt.vkFreeMemory,
        ) else {
            return;
        };
        // SAFETY: the device's own objects or NULL, idle and not used after (the contract),
        // with no allocator as they were created.
        unsafe {
            fence(device, self.fence, null());
            command_pool(device, self.command_pool, null());
            descriptor_pool(device, self.descriptor_pool, null());
            pipeline(device, self.pipeline, null());
            pipeline_layout(device, self.pipeline_layout, null());
            set_layout(device, self.set_layout, null());
            shader(device, self.shader, null());
            buffer(device, self.buffer, null());
            memory(device, self.memory, null());
        }
    }
}

/// A memory type for `requirements` that the host can map without flushes.
///
/// # Safety
/// `it` must be the table of the live instance `physical_device` belongs to.
unsafe fn host_coherent_memory_type(it: &InstanceDispatchTable, physical_device: VkPhysicalDevice, requirements: &VkMemoryRequirements) -> Result<u32, String> {
    let mut memory = VkPhysicalDeviceMemoryProperties::default();
    // SAFETY: a physical device of the live instance (the contract) and a place for its answer.
    unsafe { vk!(it.vkGetPhysicalDeviceMemoryProperties)(physical_device, &mut memory) };
    let wanted = VkMemoryPropertyFlags::HOST_VISIBLE_BIT | VkMemoryPropertyFlags::HOST_COHERENT_BIT;
    (0..memory.memoryTypeCount)
        .find(|&i| requirements.memoryTypeBits & (1 << i) != 0 && memory.memoryTypes[i as usize].propertyFlags.contains(wanted))
        .ok_or_else(|| format!("choosing memory: no host-visible, host-coherent type among bits {:#x}", requirements.memoryTypeBits))
}

/// Creates the buffer, pipeline, descriptor set and command buffer in `objects`, runs the
/// shader `options.iterations` times and checks the result.
///
/// # Safety
/// `it` and `dt` must be the tables of the live instance and of `device`, a live device made on
/// `chosen.physical_device` with a queue of `chosen.queue_family`; `objects` must hold no object
/// yet. On return `objects` holds what was made, and the queue is idle unless waiting for it
/// failed.
unsafe fn compute(
    it: &InstanceDispatchTable,
    dt: &DeviceDispatchTable,
    chosen: &Chosen,
    device: VkDevice,
    options: &Options,
    objects: &mut Objects,
) -> Result<(), String> {
    let limits = &chosen.properties.limits;
    let groups = options.count.div_ceil(WORKGROUP_SIZE);
    if groups > limits.maxComputeWorkGroupCount[0] || u64::from(options.count) * 4 > u64::from(limits.maxStorageBufferRange) {
        return Err(format!(
            "checking limits: {} values need {groups} workgroups of {WORKGROUP_SIZE} (max {}) and {} bytes of storage buffer (max {})",
            options.count,
            limits.maxComputeWorkGroupCount[0],
            u64::from(options.count) * 4,
            limits.maxStorageBufferRange
        ));
    }
    let size = VkDeviceSize::from(options.count) * 4;

    // In every block below: the live device and its tables (the contract), objects made on it
    // earlier in this function, create infos whose pointers reach locals that outlive the call,
    // and places for the new handles in `objects`.

    // The storage buffer, in host-visible memory, filled with the input.
    let buffer_info = VkBufferCreateInfo { size, usage: VkBufferUsageFlags::STORAGE_BUFFER_BIT, ..Default::default() };
    let mut mapped = null_mut();
    // SAFETY: see above; the memory type is one the instance offers for this buffer.
    unsafe {
        check(vk!(dt.vkCreateBuffer)(device, &buffer_info, null(), &mut objects.buffer), "vkCreateBuffer")?;
        let mut requirements = VkMemoryRequirements::default();
        vk!(dt.vkGetBufferMemoryRequirements)(device, objects.buffer, &mut requirements);
        let allocate_info = VkMemoryAllocateInfo {
            allocationSize: requirements.size,
            memoryTypeIndex: host_coherent_memory_type(it, chosen.physical_device, &requirements)?,
            ..Default::default()
        };
        check(vk!(dt.vkAllocateMemory)(device, &allocate_info, null(), &mut objects.memory), "vkAllocateMemory")?;
        check(vk!(dt.vkBindBufferMemory)(device, objects.buffer, objects.memory, 0), "vkBindBufferMemory")?;
        check(vk!(dt.vkMapMemory)(device, objects.memory, 0, size, VkMemoryMapFlags::default(), &mut mapped), "vkMapMemory")?;
    }
    // SAFETY: `mapped` is the start of `size` = 4 * count bytes of host-coherent memory, aligned
    // to at least `minMemoryMapAlignment` (64), mapped until the memory is freed; the device does
    // not use it until the first submission, after this slice is gone.
    let values = unsafe { std::slice::from_raw_parts_mut(mapped as *mut u32, options.count as usize) };
    for (i, value) in values.iter_mut().enumerate() {
        *value = input(i as u32);
    }

    // The pipeline: one storage buffer at binding 0, the element count as a push constant.
    let code: Vec<u32> = SHADER.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
    let shader_info = VkShaderModuleCreateInfo { codeSize: SHADER.len(), pCode: code.as_ptr(), ..Default::default() };
    let binding = VkDescriptorSetLayoutBinding {
        binding: 0,
        descriptorType: VkDescriptorType::STORAGE_BUFFER,
        descriptorCount: 1,
        stageFlags: VkShaderStageFlags::COMPUTE_BIT,
        pImmutableSamplers: null(),
    };
    let set_layout_info = VkDescriptorSetLayoutCreateInfo { bindingCount: 1, pBindings: &binding, ..Default::default() };
    let push_range = VkPushConstantRange { stageFlags: VkShaderStageFlags::COMPUTE_BIT, offset: 0, size: 4 };
    // SAFETY: see above; the shader is valid SPIR-V (`code` holds its words).
    unsafe {
        check(vk!(dt.vkCreateShaderModule)(device, &shader_info, null(), &mut objects.shader), "vkCreateShaderModule")?;
        check(vk!(dt.vkCreateDescriptorSetLayout)(device, &set_layout_info, null(), &mut objects.set_layout), "vkCreateDescriptorSetLayout")?;
        let pipeline_layout_info = VkPipelineLayoutCreateInfo {
            setLayoutCount: 1,
            pSetLayouts: &objects.set_layout,
            pushConstantRangeCount: 1,
            pPushConstantRanges: &push_range,
            ..Default::default()
        };
        check(vk!(dt.vkCreatePipelineLayout)(device, &pipeline_layout_info, null(), &mut objects.pipeline_layout), "vkCreatePipelineLayout")?;
        let pipeline_info = VkComputePipelineCreateInfo {
            stage: VkPipelineShaderStageCreateInfo {
                stage: VkShaderStageFlags::COMPUTE_BIT,
                module: objects.shader,
                pName: c"main".as_ptr(),
                ..Default::default()
            },
            layout: objects.pipeline_layout,
            ..Default::default()
        };
        check(
            vk!(dt.vkCreateComputePipelines)(device, VkPipelineCache::NULL, 1, &pipeline_info, null(), &mut objects.pipeline),
            "vkCreateComputePipelines",
        )?;
    }

    // The descriptor set pointing at the buffer.
    let pool_size = VkDescriptorPoolSize { r#type: VkDescriptorType::STORAGE_BUFFER, descriptorCount: 1 };
    let pool_info = VkDescriptorPoolCreateInfo { maxSets: 1, poolSizeCount: 1, pPoolSizes: &pool_size, ..Default::default() };
    let mut set = VkDescriptorSet::NULL;
    // SAFETY: see above; the set is written while no command buffer uses it.
    unsafe {
        check(vk!(dt.vkCreateDescriptorPool)(device, &pool_info, null(), &mut objects.descriptor_pool), "vkCreateDescriptorPool")?;
        let set_info = VkDescriptorSetAllocateInfo {
            descriptorPool: objects.descriptor_pool,
            descriptorSetCount: 1,
            pSetLayouts: &objects.set_layout,
            ..Default::default()
        };
        check(vk!(dt.vkAllocateDescriptorSets)(device, &set_info, &mut set), "vkAllocateDescriptorSets")?;
        let buffer_descriptor = VkDescriptorBufferInfo { buffer: objects.buffer, offset: 0, range: VK_WHOLE_SIZE };
        let write = VkWriteDescriptorSet {
            dstSet: set,
            dstBinding: 0,
            descriptorCount: 1,
            descriptorType: VkDescriptorType::STORAGE_BUFFER,
            pBufferInfo: &buffer_descriptor,
            ..Default::default()
        };
        vk!(dt.vkUpdateDescriptorSets)(device, 1, &write, 0, null());
    }

    // One command buffer, recorded once and submitted once per iteration.
    let command_pool_info = VkCommandPoolCreateInfo { queueFamilyIndex: chosen.queue_family, ..Default::default() };
    let mut cmd = VkCommandBuffer::NULL;
    // The previous submission's shader writes before this one's reads and writes.
    let shader_to_shader = VkMemoryBarrier {
        srcAccessMask: VkAccessFlags::SHADER_WRITE_BIT,
        dstAccessMask: VkAccessFlags::SHADER_READ_BIT | VkAccessFlags::SHADER_WRITE_BIT,
        ..Default::default()
    };
    // The shader's writes visible to the host once the fence signals.
    let shader_to_host = VkMemoryBarrier {
        srcAccessMask: VkAccessFlags::SHADER_WRITE_BIT,
        dstAccessMask: VkAccessFlags::HOST_READ_BIT,
        ..Default::default()
    };
    let compute_stage = VkPipelineStageFlags::COMPUTE_SHADER_BIT;
    let no_dependency_flags = VkDependencyFlags::default();
    let count = options.count;
    // SAFETY: see above; the commands are recorded into a command buffer of the pool between
    // its begin and end, with the pipeline, layout and set made above (4 bytes of push constant,
    // the range the layout declares).
    unsafe {
        check(vk!(dt.vkCreateCommandPool)(device, &command_pool_info, null(), &mut objects.command_pool), "vkCreateCommandPool")?;
        let command_info = VkCommandBufferAllocateInfo {
            commandPool: objects.command_pool,
            level: VkCommandBufferLevel::PRIMARY,
            commandBufferCount: 1,
            ..Default::default()
        };
        check(vk!(dt.vkAllocateCommandBuffers)(device, &command_info, &mut cmd), "vkAllocateCommandBuffers")?;
        check(vk!(dt.vkBeginCommandBuffer)(cmd, &VkCommandBufferBeginInfo::default()), "vkBeginCommandBuffer")?;
        vk!(dt.vkCmdPipelineBarrier)(cmd, compute_stage, compute_stage, no_dependency_flags, 1, &shader_to_shader, 0, null(), 0, null());
        vk!(dt.vkCmdBindPipeline)(cmd, VkPipelineBindPoint::COMPUTE, objects.pipeline);
        vk!(dt.vkCmdBindDescriptorSets)(cmd, VkPipelineBindPoint::COMPUTE, objects.pipeline_layout, 0, 1, &set, 0, null());
        vk!(dt.vkCmdPushConstants)(cmd, objects.pipeline_layout, VkShaderStageFlags::COMPUTE_BIT, 0, 4, &count as *const u32 as *const c_void);
        vk!(dt.vkCmdDispatch)(cmd, groups, 1, 1);
        vk!(dt.vkCmdPipelineBarrier)(cmd, compute_stage, VkPipelineStageFlags::HOST_BIT, no_dependency_flags, 1, &shader_to_host, 0, null(), 0, null());
        check(vk!(dt.vkEndCommandBuffer)(cmd), "vkEndCommandBuffer")?;
    }

    let mut queue = VkQueue::NULL;
    let submit = VkSubmitInfo { commandBufferCount: 1, pCommandBuffers: &cmd, ..Default::default() };
    let started = std::time::Instant::now();
    // SAFETY: see above; queue 0 of the family the device was created with; each submission is
    // waited for before the next one and before the result is read.
    unsafe {
        vk!(dt.vkGetDeviceQueue)(device, chosen.queue_family, 0, &mut queue);
        check(vk!(dt.vkCreateFence)(device, &VkFenceCreateInfo::default(), null(), &mut objects.fence), "vkCreateFence")?;
        for _ in 0..options.iterations {
            check(vk!(dt.vkQueueSubmit)(queue, 1, &submit, objects.fence), "vkQueueSubmit")?;
            check(vk!(dt.vkWaitForFences)(device, 1, &objects.fence, VK_TRUE, 60_000_000_000), "vkWaitForFences")?;
            check(vk!(dt.vkResetFences)(device, 1, &objects.fence), "vkResetFences")?;
        }
    }
    let elapsed = started.elapsed();
    println!(
        "dispatched {groups} workgroups of {WORKGROUP_SIZE} over {count} values, {} submission(s) in {:.3} ms",
        options.iterations,
        elapsed.as_secs_f64() * 1e3
    );

    // SAFETY: the mapping as above; every submission has completed and its writes are visible to
    // the host (the barrier to the host stage, the fence waited for).
    let values = unsafe { std::slice::from_raw_parts(mapped as *const u32, options.count as usize) };
    verify(values, options.iterations)
}

/// Every value against the CPU's answer; the error counts the mismatches and shows the first few.
fn verify(values: &[u32], iterations: u32) -> Result<(), String> {
    let wrong: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(i, &got)| {
            let want = expected(input(i as u32), iterations);
            (got != want).then(|| format!("[{i}] = {got:#010x}, expected {want:#010x}"))
        })
        .collect();
    if wrong.is_empty() {
        return Ok(());
    }
    let first: Vec<&str> = wrong.iter().take(8).map(String::as_str).collect();
    Err(format!("checking the result: {} of {} values wrong: {}", wrong.len(), values.len(), first.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_wraps_and_iterates() {
        assert_eq!(expected(3, 1), 10);
        assert_eq!(expected(3, 2), 101);
        assert_eq!(expected(0x1_0000, 1), 1);
        assert_eq!(expected(7, 0), 7);
    }

    #[test]
    fn verify_names_the_first_mismatches() {
        let mut values: Vec<u32> = (0..100).map(|i| expected(input(i), 1)).collect();
        assert_eq!(verify(&values, 1), Ok(()));
        values[42] ^= 1;
        let error = verify(&values, 1).unwrap_err();
        assert!(error.starts_with("checking the result: 1 of 100 values wrong: [42] = "), "{error}");
    }

    #[test]
    fn shader_is_spirv() {
        assert_eq!(SHADER.len() % 4, 0);
        assert_eq!(u32::from_le_bytes(SHADER[..4].try_into().unwrap()), 0x0723_0203);
    }
}
