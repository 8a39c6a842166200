//! Reporting: a layer's messages reach the application's debug-utils messenger chained at
//! `vkCreateInstance` (while the instance is created and destroyed), messengers and debug-report
//! callbacks created later (with `Layer::MESSAGES`, the layer's own hook of the command still
//! running), with the objects' names (the layer's, or those the application set with
//! `vkSetDebugUtilsObjectNameEXT`); a destroyed messenger hears nothing more.
//! `vkGetPhysicalDeviceToolProperties` lists the tools below, then the layer.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Mutex;

use vk_layer::report::{Message, Object};
use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceCreateInfo, InstanceHooks, InstanceLink, Layer,
    LayerProperties,
};

// ---- the fake next level ----------------------------------------------------------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

/// The fake level's `vkCreateInstance`: a new handle.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_instance(
    _: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkInstance(handle(&INSTANCE_DISPATCH)) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_instance(_: VkInstance, _: *const VkAllocationCallbacks) {}
/// The fake level's `vkCreateDevice`: a new handle.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_device(
    _: VkPhysicalDevice,
    _: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDevice(handle(&DEVICE_DISPATCH)) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_device(_: VkDevice, _: *const VkAllocationCallbacks) {}
/// The fake level's `vkCreateDebugUtilsMessengerEXT`: handle 77.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_messenger(
    _: VkInstance,
    _: *const VkDebugUtilsMessengerCreateInfoEXT,
    _: *const VkAllocationCallbacks,
    out: *mut VkDebugUtilsMessengerEXT,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDebugUtilsMessengerEXT(77) };
    VkResult::SUCCESS
}
extern "system" fn next_destroy_messenger(
    _: VkInstance,
    _: VkDebugUtilsMessengerEXT,
    _: *const VkAllocationCallbacks,
) {
}
/// The fake level's `vkCreateDebugReportCallbackEXT`: handle 88.
///
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_report(
    _: VkInstance,
    _: *const VkDebugReportCallbackCreateInfoEXT,
    _: *const VkAllocationCallbacks,
    out: *mut VkDebugReportCallbackEXT,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe { *out = VkDebugReportCallbackEXT(88) };
    VkResult::SUCCESS
}
/// The fake level's `vkGetPhysicalDeviceToolProperties`: one tool, named "B".
///
/// # Safety
/// `count` is valid and `tools` null or an array of `*count` elements.
unsafe extern "system" fn next_tools(
    _: VkPhysicalDevice,
    count: *mut u32,
    tools: *mut VkPhysicalDeviceToolProperties,
) -> VkResult {
    // SAFETY: per the caller's contract.
    unsafe {
        if !tools.is_null() && *count >= 1 {
            let mut below = VkPhysicalDeviceToolProperties::default();
            below.name[0] = b'B' as c_char;
            *tools = below;
        }
        *count = 1;
    }
    VkResult::SUCCESS
}
extern "system" fn next_set_name(_: VkDevice, _: *const VkDebugUtilsObjectNameInfoEXT) -> VkResult {
    VkResult::SUCCESS
}
extern "system" fn next_cmd_draw(_: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {}

/// `$f`, checked against its command's type `$pfn`, as a `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// The fake level's functions by name.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkDestroyInstance" => void_fn!(PFN_vkDestroyInstance, next_destroy_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkDestroyDevice" => void_fn!(PFN_vkDestroyDevice, next_destroy_device),
        b"vkCreateDebugUtilsMessengerEXT" => {
            void_fn!(PFN_vkCreateDebugUtilsMessengerEXT, next_create_messenger)
        }
        b"vkDestroyDebugUtilsMessengerEXT" => {
            void_fn!(PFN_vkDestroyDebugUtilsMessengerEXT, next_destroy_messenger)
        }
        b"vkCreateDebugReportCallbackEXT" => {
            void_fn!(PFN_vkCreateDebugReportCallbackEXT, next_create_report)
        }
        b"vkGetPhysicalDeviceToolProperties" => {
            void_fn!(PFN_vkGetPhysicalDeviceToolProperties, next_tools)
        }
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        b"vkSetDebugUtilsObjectNameEXT" => {
            void_fn!(PFN_vkSetDebugUtilsObjectNameEXT, next_set_name)
        }
        _ => None,
    }
}
/// The fake level's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
/// The fake level's `vkGetDeviceProcAddr`.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the application's callbacks: what each heard ---------------------------------------------

/// (who: the callback's user data, the message, the objects' names).
static HEARD: Mutex<Vec<(usize, String, Vec<String>)>> = Mutex::new(Vec::new());

/// The application's messenger: records what it heard.
///
/// # Safety
/// As a `PFN_vkDebugUtilsMessengerCallbackEXT`: `data` is valid callback data, with
/// `objectCount` objects and, here, a message id name.
unsafe extern "system" fn messenger(
    _: VkDebugUtilsMessageSeverityFlagsEXT,
    _: VkDebugUtilsMessageTypeFlagsEXT,
    data: *const VkDebugUtilsMessengerCallbackDataEXT,
    user: *mut c_void,
) -> VkBool32 {
    // SAFETY: per the caller's contract: the data, its objects and its strings.
    let (text, objects) = unsafe {
        let data = &*data;
        let objects = (0..data.objectCount as usize)
            .map(|i| {
                let o = &*data.pObjects.add(i);
                let name = if o.pObjectName.is_null() {
                    "-".into()
                } else {
                    CStr::from_ptr(o.pObjectName).to_string_lossy().into_owned()
                };
                format!("{}:{:#x}:{name}", o.objectType.0, o.objectHandle)
            })
            .collect();
        let text = format!(
            "{} {}",
            CStr::from_ptr(data.pMessageIdName).to_string_lossy(),
            CStr::from_ptr(data.pMessage).to_string_lossy()
        );
        (text, objects)
    };
    HEARD.lock().unwrap().push((user as usize, text, objects));
    0
}

/// The application's report callback: records what it heard.
///
/// # Safety
/// As a `PFN_vkDebugReportCallbackEXT`: `prefix` and `text` are NUL-terminated.
#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn report_callback(
    flags: VkDebugReportFlagsEXT,
    _: VkDebugReportObjectTypeEXT,
    object: u64,
    _: usize,
    code: i32,
    prefix: *const c_char,
    text: *const c_char,
    user: *mut c_void,
) -> VkBool32 {
    // SAFETY: per the caller's contract.
    let (prefix, text) = unsafe { (CStr::from_ptr(prefix), CStr::from_ptr(text)) };
    let text = format!(
        "{} {} {} {}",
        prefix.to_string_lossy(),
        flags.0,
        code,
        text.to_string_lossy()
    );
    HEARD
        .lock()
        .unwrap()
        .push((user as usize, text, vec![format!("{object:#x}")]));
    0
}

fn take_heard() -> Vec<(usize, String, Vec<String>)> {
    std::mem::take(&mut *HEARD.lock().unwrap())
}

// ---- the layer under test ---------------------------------------------------------------------

struct Reporter;
struct Instance;
struct Device;
static MESSENGER_HOOK_RAN: AtomicU32 = AtomicU32::new(0);

fn message<'a>(
    severity: VkDebugUtilsMessageSeverityFlagsEXT,
    text: &'a CStr,
    objects: &'a [Object<'a>],
) -> Message<'a> {
    Message {
        severity,
        types: VkDebugUtilsMessageTypeFlagsEXT::VALIDATION_BIT_EXT,
        id_name: c"TEST-id",
        id_number: 7,
        text,
        objects,
    }
}

impl Layer for Reporter {
    type Instance = Instance;
    type Device = Device;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_TEST_reporter",
        spec_version: 0,
        implementation_version: 3,
        description: "reports",
        instance_extensions: &[],
        device_extensions: &[],
    });
    const MESSAGES: bool = true;
    const TOOL_PURPOSES: VkToolPurposeFlags = VkToolPurposeFlags::TRACING_BIT;

    fn before_create_instance(
        _: &mut InstanceCreateInfo<'_>,
        _: &InstanceLink,
        _: *mut VkInstance,
    ) -> Result<(), VkResult> {
        // SAFETY: a null handle: the instance being created.
        unsafe {
            vk_layer::report::<Reporter>(
                ptr::null_mut(),
                &message(
                    VkDebugUtilsMessageSeverityFlagsEXT::INFO_BIT_EXT,
                    c"before creation",
                    &[],
                ),
            )
        };
        Ok(())
    }
    fn create_instance(
        _: &VkInstanceCreateInfo,
        instance: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        let objects = [Object {
            object_type: VkObjectType::INSTANCE,
            handle: instance.0 as u64,
            name: None,
        }];
        // SAFETY: the instance the next level just made.
        unsafe {
            vk_layer::report::<Reporter>(
                instance.0,
                &message(
                    VkDebugUtilsMessageSeverityFlagsEXT::ERROR_BIT_EXT,
                    c"created",
                    &objects,
                ),
            )
        };
        Ok(Instance)
    }
    fn before_destroy_instance(_: &Instance, instance: VkInstance) {
        // SAFETY: the instance, live until the next level destroys it.
        unsafe {
            vk_layer::report::<Reporter>(
                instance.0,
                &message(
                    VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
                    c"destroying",
                    &[],
                ),
            )
        };
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        Ok(Device)
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {
    fn post_call_record_create_debug_utils_messenger_ext(
        &self,
        _: &InstanceDispatchTable,
        _: VkInstance,
        _: *const VkDebugUtilsMessengerCreateInfoEXT,
        _: *const VkAllocationCallbacks,
        _: *mut VkDebugUtilsMessengerEXT,
        _: VkResult,
    ) {
        MESSENGER_HOOK_RAN.fetch_add(1, SeqCst);
    }
}

#[vk_layer::hooks]
impl DeviceHooks for Device {
    fn pre_call_record_cmd_draw(
        &self,
        _: &DeviceDispatchTable,
        cmd: VkCommandBuffer,
        _: u32,
        _: u32,
        _: u32,
        _: u32,
    ) {
        // One object named by the layer, one by the application's vkSetDebugUtilsObjectNameEXT.
        let objects = [
            Object {
                object_type: VkObjectType::COMMAND_BUFFER,
                handle: 0xcb,
                name: Some(c"my command buffer"),
            },
            Object {
                object_type: VkObjectType::COMMAND_BUFFER,
                handle: cmd.0 as u64,
                name: None,
            },
        ];
        // SAFETY: the command buffer of the call, live per the API.
        unsafe {
            vk_layer::report::<Reporter>(
                cmd.0,
                &message(
                    VkDebugUtilsMessageSeverityFlagsEXT::WARNING_BIT_EXT,
                    c"a draw",
                    &objects,
                ),
            )
        };
    }
}

vk_layer::declare_layer!(Reporter);

// ---- the test ---------------------------------------------------------------------------------

/// The layer's `vkGetInstanceProcAddr`.
///
/// # Safety
/// `instance` is null or a live instance of the layer.
unsafe fn gipa(instance: VkInstance, name: &CStr) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract, and a NUL-terminated name.
    unsafe { vkGetInstanceProcAddr(instance, name.as_ptr()) }
}

const ALL_SEVERITIES: VkDebugUtilsMessageSeverityFlagsEXT =
    VkDebugUtilsMessageSeverityFlagsEXT(0x1111);
const ALL_TYPES: VkDebugUtilsMessageTypeFlagsEXT = VkDebugUtilsMessageTypeFlagsEXT(0x7);

#[test]
fn messages_reach_the_applications_messengers() {
    // SAFETY: the layer's entry points, called as the loader and an application would: create
    // infos and the loader's chains that live until each call returns, the handles it handed up,
    // arrays of the counts passed, each function called as the type of the command it was asked
    // for.
    unsafe {
        // The application chains a messenger (user data 1) at vkCreateInstance.
        let mut link = VkLayerInstanceLink {
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            ..Default::default()
        };
        let mut chain = VkLayerInstanceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        // The layer moves the link on in place: the chain holds a pointer that may write.
        let chained = VkDebugUtilsMessengerCreateInfoEXT {
            pNext: &mut chain as *mut _ as *const c_void,
            messageSeverity: ALL_SEVERITIES,
            messageType: ALL_TYPES,
            pfnUserCallback: Some(messenger),
            pUserData: ptr::without_provenance_mut(1),
            ..Default::default()
        };
        let info = VkInstanceCreateInfo {
            pNext: &chained as *const _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateInstance =
            std::mem::transmute(gipa(VkInstance::NULL, c"vkCreateInstance"));
        let mut instance = VkInstance::NULL;
        assert_eq!(
            create.unwrap()(&info, ptr::null(), &mut instance),
            VkResult::SUCCESS
        );
        let instance_object = format!("{}:{:#x}:-", VkObjectType::INSTANCE.0, instance.0 as u64);
        assert_eq!(
            take_heard(),
            [
                (1, "TEST-id before creation".to_string(), vec![]),
                (1, "TEST-id created".to_string(), vec![instance_object])
            ]
        );

        // A messenger (user data 2, warnings and errors only) and a report callback (3) created later.
        let create_messenger: PFN_vkCreateDebugUtilsMessengerEXT =
            std::mem::transmute(gipa(instance, c"vkCreateDebugUtilsMessengerEXT"));
        let later = VkDebugUtilsMessengerCreateInfoEXT {
            messageSeverity: VkDebugUtilsMessageSeverityFlagsEXT(0x1100),
            messageType: ALL_TYPES,
            pfnUserCallback: Some(messenger),
            pUserData: ptr::without_provenance_mut(2),
            ..Default::default()
        };
        let mut handle_later = VkDebugUtilsMessengerEXT::NULL;
        assert_eq!(
            create_messenger.unwrap()(instance, &later, ptr::null(), &mut handle_later),
            VkResult::SUCCESS
        );
        assert_eq!(
            (handle_later.0, MESSENGER_HOOK_RAN.load(SeqCst)),
            (77, 1),
            "the layer's own hook ran too"
        );
        let create_report: PFN_vkCreateDebugReportCallbackEXT =
            std::mem::transmute(gipa(instance, c"vkCreateDebugReportCallbackEXT"));
        let report_info = VkDebugReportCallbackCreateInfoEXT {
            flags: VkDebugReportFlagsEXT::WARNING_BIT_EXT,
            pfnCallback: Some(report_callback),
            pUserData: ptr::without_provenance_mut(3),
            ..Default::default()
        };
        let mut report_handle = VkDebugReportCallbackEXT::NULL;
        assert_eq!(
            create_report.unwrap()(instance, &report_info, ptr::null(), &mut report_handle),
            VkResult::SUCCESS
        );

        // A device, and a message from a device-level hook with a named object: the chained
        // messenger does not hear it (outside creation and destruction), the others do.
        let mut link = VkLayerDeviceLink {
            pNext: ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            pfnNextGetDeviceProcAddr: Some(next_gdpa),
        };
        let mut chain = VkLayerDeviceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let device_info = VkDeviceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create_device: PFN_vkCreateDevice =
            std::mem::transmute(gipa(instance, c"vkCreateDevice"));
        let mut device = VkDevice::NULL;
        let physical_device = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
        assert_eq!(
            create_device.unwrap()(physical_device, &device_info, ptr::null(), &mut device),
            VkResult::SUCCESS
        );
        let draw: PFN_vkCmdDraw =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkCmdDraw".as_ptr()));
        let cmd = VkCommandBuffer(handle(&DEVICE_DISPATCH));
        let set_name: PFN_vkSetDebugUtilsObjectNameEXT = std::mem::transmute(vkGetDeviceProcAddr(
            device,
            c"vkSetDebugUtilsObjectNameEXT".as_ptr(),
        ));
        let name_info = VkDebugUtilsObjectNameInfoEXT {
            objectType: VkObjectType::COMMAND_BUFFER,
            objectHandle: cmd.0 as u64,
            pObjectName: c"named by the application".as_ptr(),
            ..Default::default()
        };
        assert_eq!(set_name.unwrap()(device, &name_info), VkResult::SUCCESS);
        draw.unwrap()(cmd, 3, 1, 0, 0);
        let named = format!("{}:0xcb:my command buffer", VkObjectType::COMMAND_BUFFER.0);
        let by_app = format!(
            "{}:{:#x}:named by the application",
            VkObjectType::COMMAND_BUFFER.0,
            cmd.0 as u64
        );
        assert_eq!(
            take_heard(),
            [
                (2, "TEST-id a draw".to_string(), vec![named, by_app]),
                (
                    3,
                    format!(
                        "VK_LAYER_TEST_reporter {} 7 a draw",
                        VkDebugReportFlagsEXT::WARNING_BIT_EXT.0
                    ),
                    vec!["0xcb".to_string()]
                ),
            ]
        );

        // The tools: the one below, then this layer.
        let tools: PFN_vkGetPhysicalDeviceToolProperties =
            std::mem::transmute(gipa(instance, c"vkGetPhysicalDeviceToolPropertiesEXT"));
        let mut count = 0;
        assert_eq!(
            tools.unwrap()(physical_device, &mut count, ptr::null_mut()),
            VkResult::SUCCESS
        );
        assert_eq!(count, 2);
        let mut list = vec![VkPhysicalDeviceToolProperties::default(); 2];
        assert_eq!(
            tools.unwrap()(physical_device, &mut count, list.as_mut_ptr()),
            VkResult::SUCCESS
        );
        let name = |t: &VkPhysicalDeviceToolProperties| {
            CStr::from_ptr(t.name.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(
            (name(&list[0]), name(&list[1])),
            ("B".to_string(), "VK_LAYER_TEST_reporter".to_string())
        );
        assert_eq!(list[1].purposes, VkToolPurposeFlags::TRACING_BIT);
        assert_eq!(
            CStr::from_ptr(list[1].layer.as_ptr()),
            c"VK_LAYER_TEST_reporter"
        );
        assert_eq!(CStr::from_ptr(list[1].version.as_ptr()), c"3");

        // A destroyed messenger hears nothing more; destruction is heard by the chained one.
        let destroy_messenger: PFN_vkDestroyDebugUtilsMessengerEXT =
            std::mem::transmute(gipa(instance, c"vkDestroyDebugUtilsMessengerEXT"));
        destroy_messenger.unwrap()(instance, handle_later, ptr::null());
        draw.unwrap()(cmd, 3, 1, 0, 0);
        assert_eq!(take_heard().iter().map(|h| h.0).collect::<Vec<_>>(), [3]);
        let destroy_device: PFN_vkDestroyDevice =
            std::mem::transmute(vkGetDeviceProcAddr(device, c"vkDestroyDevice".as_ptr()));
        destroy_device.unwrap()(device, ptr::null());
        let destroy: PFN_vkDestroyInstance =
            std::mem::transmute(gipa(instance, c"vkDestroyInstance"));
        destroy.unwrap()(instance, ptr::null());
        let heard = take_heard();
        assert_eq!(
            heard
                .iter()
                .map(|h| (h.0, h.1.as_str()))
                .collect::<Vec<_>>(),
            [
                (1, "TEST-id destroying"),
                (
                    3,
                    &*format!(
                        "VK_LAYER_TEST_reporter {} 7 destroying",
                        VkDebugReportFlagsEXT::WARNING_BIT_EXT.0
                    )
                )
            ]
        );
    }
}
