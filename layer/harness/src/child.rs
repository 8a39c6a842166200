//! The child side of a run: the application's script, carried in one environment variable.

use std::ffi::{c_char, c_void, CStr, CString};

use vk_layer::vk::types::*;

/// What the application does.
#[derive(Clone, Debug, Default)]
pub(crate) struct Script {
    /// The loader's library (see `loader_library`).
    pub loader: String,
    /// The layers it enables.
    pub layers: Vec<String>,
    /// `VkLayerSettingsCreateInfoEXT` entries: (layer, setting, string values).
    pub settings: Vec<(String, String, Vec<String>)>,
    /// A messenger chained at `vkCreateInstance`.
    pub messenger: bool,
    /// A device, with this many draws.
    pub device: Option<u32>,
    /// How many times the recorded command buffer is submitted to the device's queue.
    pub submits: u32,
    /// The application's own calls: the name of a function `child_entry!` lists.
    pub calls: Option<String>,
}

// One item per line: `key<TAB>value<TAB>value...`.
impl Script {
    pub(crate) fn encode(&self) -> String {
        let mut lines = vec![format!("loader\t{}", self.loader)];
        lines.extend(self.layers.iter().map(|l| format!("layer\t{l}")));
        lines.extend(
            self.settings
                .iter()
                .map(|(l, s, v)| format!("setting\t{l}\t{s}\t{}", v.join("\t"))),
        );
        if self.messenger {
            lines.push("messenger".into());
        }
        if let Some(draws) = self.device {
            lines.push(format!("device\t{draws}"));
        }
        lines.push(format!("submits\t{}", self.submits));
        lines.extend(self.calls.iter().map(|name| format!("calls\t{name}")));
        lines.join("\n")
    }

    fn decode(text: &str) -> Script {
        let mut script = Script::default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields.as_slice() {
                ["loader", path] => script.loader = path.to_string(),
                ["layer", name] => script.layers.push(name.to_string()),
                ["setting", layer, setting, values @ ..] => script.settings.push((
                    layer.to_string(),
                    setting.to_string(),
                    values.iter().map(|v| v.to_string()).collect(),
                )),
                ["messenger"] => script.messenger = true,
                ["device", draws] => script.device = draws.parse().ok(),
                ["submits", n] => script.submits = n.parse().unwrap_or_default(),
                ["calls", name] => script.calls = Some(name.to_string()),
                _ => {}
            }
        }
        script
    }
}

/// The messenger's callback: prints each message for the parent to read.
///
/// # Safety
/// As a `PFN_vkDebugUtilsMessengerCallbackEXT`: `data` points to valid callback data whose
/// `pMessageIdName` and `pMessage` are null or NUL-terminated.
unsafe extern "system" fn heard(
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    _: *mut c_void,
) -> VkBool32 {
    let name = match severity {
        VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT => "error",
        VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT => "warning",
        VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT => "info",
        _ => "verbose",
    };
    // SAFETY: the callback data and its strings, per the caller's contract.
    let (id, text) = unsafe {
        let data = &*data;
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        (text(data.pMessageIdName), text(data.pMessage))
    };
    println!("HARNESS message {name} {id}: {text}");
    VkBool32::default()
}

/// The child's work when this process is a run's child ([`child_entry!`](crate::child_entry)):
/// the script, step by step. Does nothing in an ordinary test run.
pub fn child_main() {
    child_main_with(&[]);
}

/// A function of the application's own calls, and the name [`Harness::calls`](crate::Harness::calls)
/// gives it ([`call_name`]).
pub type Calls = (&'static str, fn(&App<'_>));

/// The name under which `child_entry!` lists a function and [`Harness::calls`](crate::Harness::calls)
/// asks for it: its type's name (a function item's type is named by the function's path).
pub fn call_name<F>(_: &F) -> &'static str {
    std::any::type_name::<F>()
}

/// [`child_main`], with the functions of the application's own calls that runs may ask for.
pub fn child_main_with(calls: &[Calls]) {
    let Ok(text) = std::env::var(super::SCRIPT) else {
        return;
    };
    println!();
    let script = Script::decode(&text);
    // SAFETY: the parent names the loader built from this repository (`loader_library`).
    unsafe { run(&script, calls) };
    println!("HARNESS done");
}

/// What the run's application made, lent to the function [`Harness::calls`](crate::Harness::calls)
/// names: the instance with its layers, its first physical device, a device of it with its first
/// queue, and a command buffer holding the run's draws (ended, and submitted as many times as
/// asked). Everything is destroyed after the function returns: it destroys nothing of these.
pub struct App<'a> {
    /// The instance.
    pub instance: VkInstance,
    /// The instance's first physical device.
    pub physical_device: VkPhysicalDevice,
    /// The device.
    pub device: VkDevice,
    /// The device's queue of family 0, index 0.
    pub queue: VkQueue,
    /// The command buffer, from a pool destroyed with the device.
    pub command_buffer: VkCommandBuffer,
    get_instance: &'a dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction,
    get_device: &'a dyn Fn(&CStr) -> PFN_vkVoidFunction,
}

impl App<'_> {
    /// The command `name` as the loader's `vkGetInstanceProcAddr` answers it for the instance
    /// (`None` where it answers NULL).
    ///
    /// # Safety
    /// `F` is the command's `PFN_vk*` type (an `Option` of its function pointer type).
    pub unsafe fn instance_command<F: Copy>(&self, name: &CStr) -> F {
        // SAFETY: the caller's contract.
        unsafe { as_pfn((self.get_instance)(self.instance, name)) }
    }

    /// The command `name` as `vkGetDeviceProcAddr` answers it for the device (`None` where it
    /// answers NULL).
    ///
    /// # Safety
    /// As [`App::instance_command`].
    pub unsafe fn device_command<F: Copy>(&self, name: &CStr) -> F {
        // SAFETY: the caller's contract.
        unsafe { as_pfn((self.get_device)(name)) }
    }
}

/// A command's pointer as its own `PFN_vk*` type.
///
/// # Safety
/// `F` is the command's `PFN_vk*` type.
unsafe fn as_pfn<F: Copy>(pointer: PFN_vkVoidFunction) -> F {
    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<PFN_vkVoidFunction>(),
        "a command's type is a PFN_vk* type"
    );
    // SAFETY: the same size (checked above); `F` is an `Option` of the command's function
    // pointer type (the caller's contract), whose `None` is NULL as `PFN_vkVoidFunction`'s is.
    unsafe { std::mem::transmute_copy(&pointer) }
}

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Runs `script`: an instance with its layers, settings and messenger, its physical devices, a
/// device with draws when asked for, everything destroyed again.
///
/// # Safety
/// `script.loader` names a Vulkan loader: a library whose initialisers are sound to run and whose
/// `vkGetInstanceProcAddr` behaves as the Vulkan API says.
unsafe fn run(script: &Script, calls: &[Calls]) {
    // SAFETY: a Vulkan loader, per the caller's contract.
    let library = unsafe { libloading::Library::new(&script.loader) }
        .expect("the Vulkan loader's library (see vk_layer_harness::loader_library)");
    // SAFETY: a loader exports `vkGetInstanceProcAddr` with the type `Gipa`.
    let gipa: libloading::Symbol<Gipa> =
        unsafe { library.get(b"vkGetInstanceProcAddr\0") }.expect("vkGetInstanceProcAddr");
    // SAFETY: a NUL-terminated name, and NULL or the live instance made below.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };

    let layers: Vec<CString> = script
        .layers
        .iter()
        .map(|l| CString::new(l.as_str()).unwrap_or_default())
        .collect();
    let layer_ptrs: Vec<*const c_char> = layers.iter().map(|l| l.as_ptr()).collect();
    // The settings' strings, and per setting its array of pointers.
    let strings: Vec<(CString, CString, Vec<CString>)> = script
        .settings
        .iter()
        .map(|(l, s, v)| (c(l), c(s), v.iter().map(|x| c(x)).collect()))
        .collect();
    let pointers: Vec<Vec<*const c_char>> = strings
        .iter()
        .map(|(_, _, v)| v.iter().map(|x| x.as_ptr()).collect())
        .collect();
    let settings: Vec<VkLayerSettingEXT> = strings
        .iter()
        .zip(&pointers)
        .map(|((layer, setting, _), values)| VkLayerSettingEXT {
            pLayerName: layer.as_ptr(),
            pSettingName: setting.as_ptr(),
            r#type: VkLayerSettingTypeEXT::STRING_EXT,
            valueCount: values.len() as u32,
            pValues: values.as_ptr() as *const c_void,
        })
        .collect();
    let settings_info = VkLayerSettingsCreateInfoEXT {
        settingCount: settings.len() as u32,
        pSettings: settings.as_ptr(),
        ..Default::default()
    };
    let mut p_next: *const c_void = if settings.is_empty() {
        std::ptr::null()
    } else {
        &settings_info as *const _ as *const c_void
    };
    let messenger = VkDebugUtilsMessengerCreateInfoEXT {
        pNext: p_next,
        messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1111),
        messageType: VkDebugUtilsMessageTypeFlagsEXT(0x7),
        pfnUserCallback: Some(heard),
        ..Default::default()
    };
    if script.messenger {
        p_next = &messenger as *const _ as *const c_void;
    }
    let info = VkInstanceCreateInfo {
        pNext: p_next,
        enabledLayerCount: layer_ptrs.len() as u32,
        ppEnabledLayerNames: layer_ptrs.as_ptr(),
        ..Default::default()
    };
    let mut instance = VkInstance::NULL;
    // SAFETY: the loader's `vkCreateInstance` as its own type, called with a create info whose
    // chain, names and settings all live until the call returns.
    let result = unsafe {
        let create: PFN_vkCreateInstance =
            std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        create.map_or(VkResult::ERROR_INITIALIZATION_FAILED, |f| {
            f(&info, std::ptr::null(), &mut instance)
        })
    };
    println!("HARNESS instance {result:?}");
    if result != VkResult::SUCCESS {
        return;
    }
    let mut count = 0;
    let mut devices = Vec::new();
    // SAFETY: `vkEnumeratePhysicalDevices` as its own type, for the live instance: first the
    // count, then an array of that many handles.
    unsafe {
        let enumerate: PFN_vkEnumeratePhysicalDevices =
            std::mem::transmute(get(instance, c"vkEnumeratePhysicalDevices"));
        let enumerate = enumerate.expect("vkEnumeratePhysicalDevices");
        enumerate(instance, &mut count, std::ptr::null_mut());
        devices.resize(count as usize, VkPhysicalDevice::NULL);
        enumerate(instance, &mut count, devices.as_mut_ptr());
    }
    println!("HARNESS physical devices {count}");
    if let (Some(_), Some(&physical_device)) = (script.device, devices.first()) {
        // SAFETY: `get` answers for the live instance, and the physical device is one of its own.
        unsafe { device(&get, instance, physical_device, script, calls) };
    }
    // SAFETY: `vkDestroyInstance` as its own type, for the live instance, whose device is gone.
    unsafe {
        let destroy: PFN_vkDestroyInstance =
            std::mem::transmute(get(instance, c"vkDestroyInstance"));
        destroy.expect("vkDestroyInstance")(instance, std::ptr::null());
    }
    println!("HARNESS instance destroyed");
}

fn c(text: &str) -> CString {
    CString::new(text).unwrap_or_default()
}

/// A device of `physical_device`, a command buffer with the script's draws recorded, submitted
/// as often as it asks, the application's own calls, then all destroyed.
///
/// # Safety
/// `get` is `vkGetInstanceProcAddr` for `instance`, a live instance, and `physical_device` is one
/// of its physical devices.
unsafe fn device(
    get: &dyn Fn(VkInstance, &CStr) -> PFN_vkVoidFunction,
    instance: VkInstance,
    physical_device: VkPhysicalDevice,
    script: &Script,
    calls: &[Calls],
) {
    let draws = script.device.unwrap_or_default();
    let priority = 1.0f32;
    let queue = VkDeviceQueueCreateInfo {
        queueCount: 1,
        pQueuePriorities: &priority,
        ..Default::default()
    };
    let info = VkDeviceCreateInfo {
        queueCreateInfoCount: 1,
        pQueueCreateInfos: &queue,
        ..Default::default()
    };
    let mut device = VkDevice::NULL;
    // SAFETY: `vkCreateDevice` as its own type, for the caller's physical device, with a create
    // info whose queue info and priority live until the call returns.
    let result = unsafe {
        let create: PFN_vkCreateDevice = std::mem::transmute(get(instance, c"vkCreateDevice"));
        create.expect("vkCreateDevice")(physical_device, &info, std::ptr::null(), &mut device)
    };
    println!("HARNESS device {result:?}");
    if result != VkResult::SUCCESS {
        return;
    }
    // SAFETY: `vkGetDeviceProcAddr` as its own type, from the caller's instance.
    let gdpa: PFN_vkGetDeviceProcAddr =
        unsafe { std::mem::transmute(get(instance, c"vkGetDeviceProcAddr")) };
    let gdpa = gdpa.expect("vkGetDeviceProcAddr");
    // SAFETY: the live device and a NUL-terminated name.
    let dev = |name: &CStr| unsafe { gdpa(device, name.as_ptr()) };
    // SAFETY: each command fetched as its own type and called on the live device with valid
    // create, allocate and submit infos; the command buffer is recorded between begin and end,
    // submitted after, the application's calls run while everything lives (they destroy none of
    // it, `App`'s contract), and the pool and the device are destroyed last.
    unsafe {
        let pool_create: PFN_vkCreateCommandPool = std::mem::transmute(dev(c"vkCreateCommandPool"));
        let mut pool = VkCommandPool::NULL;
        pool_create.expect("vkCreateCommandPool")(
            device,
            &VkCommandPoolCreateInfo::default(),
            std::ptr::null(),
            &mut pool,
        );
        let allocate: PFN_vkAllocateCommandBuffers =
            std::mem::transmute(dev(c"vkAllocateCommandBuffers"));
        let allocate_info = VkCommandBufferAllocateInfo {
            commandPool: pool,
            commandBufferCount: 1,
            ..Default::default()
        };
        let mut cmd = VkCommandBuffer::NULL;
        allocate.expect("vkAllocateCommandBuffers")(device, &allocate_info, &mut cmd);
        let begin: PFN_vkBeginCommandBuffer = std::mem::transmute(dev(c"vkBeginCommandBuffer"));
        begin.expect("vkBeginCommandBuffer")(cmd, &VkCommandBufferBeginInfo::default());
        let draw: PFN_vkCmdDraw = std::mem::transmute(dev(c"vkCmdDraw"));
        for _ in 0..draws {
            draw.expect("vkCmdDraw")(cmd, 3, 1, 0, 0);
        }
        println!("HARNESS draws {draws}");
        let end: PFN_vkEndCommandBuffer = std::mem::transmute(dev(c"vkEndCommandBuffer"));
        end.expect("vkEndCommandBuffer")(cmd);
        let get_queue: PFN_vkGetDeviceQueue = std::mem::transmute(dev(c"vkGetDeviceQueue"));
        let mut queue = VkQueue::NULL;
        get_queue.expect("vkGetDeviceQueue")(device, 0, 0, &mut queue);
        if script.submits > 0 {
            let submit: PFN_vkQueueSubmit = std::mem::transmute(dev(c"vkQueueSubmit"));
            let info = VkSubmitInfo {
                commandBufferCount: 1,
                pCommandBuffers: &cmd,
                ..Default::default()
            };
            for _ in 0..script.submits {
                let result = submit.expect("vkQueueSubmit")(queue, 1, &info, VkFence::NULL);
                println!("HARNESS submit {result:?}");
            }
        }
        if let Some(name) = &script.calls {
            let Some((_, function)) = calls.iter().find(|(listed, _)| listed == name) else {
                panic!(
                    "vk_layer_harness: {name} is not listed in this test file's child_entry!(...)"
                );
            };
            let app = App {
                instance,
                physical_device,
                device,
                queue,
                command_buffer: cmd,
                get_instance: get,
                get_device: &dev,
            };
            function(&app);
            println!("HARNESS calls {name} done");
        }
        let destroy_pool: PFN_vkDestroyCommandPool =
            std::mem::transmute(dev(c"vkDestroyCommandPool"));
        destroy_pool.expect("vkDestroyCommandPool")(device, pool, std::ptr::null());
        let destroy: PFN_vkDestroyDevice = std::mem::transmute(dev(c"vkDestroyDevice"));
        destroy.expect("vkDestroyDevice")(device, std::ptr::null());
    }
    println!("HARNESS device destroyed");
}
