//! Changing what goes down: `before_create_instance` / `before_create_device` add an extension,
//! raise the API version and push a `pNext` structure, and the next level sees exactly that;
//! the layer's own device extension is removed before the call goes down; `create_*` see the
//! create info as sent.

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{make_api_version, DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceCreateInfo, DeviceHooks, DeviceLink, InstanceCreateInfo, InstanceHooks, InstanceLink,
    Layer, LayerProperties,
};

// ---- the fake next level: records what it was handed ------------------------------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

/// What a create info said: extensions, API version (instances), the `sType`s of its `pNext`.
#[derive(Debug, Default, Clone, PartialEq)]
struct Seen {
    extensions: Vec<String>,
    api_version: u32,
    chain: Vec<VkStructureType>,
}
static SEEN_BY_NEXT: Mutex<Vec<Seen>> = Mutex::new(Vec::new());
static SEEN_BY_LAYER: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

/// What a create info with these extensions, version and chain says.
///
/// # Safety
/// `extensions` holds `count` NUL-terminated names; `next` is a valid `pNext` chain.
unsafe fn seen(
    extensions: *const *const c_char,
    count: u32,
    api_version: u32,
    mut next: *const c_void,
) -> Seen {
    let extensions = (0..count as usize)
        .map(|i| {
            // SAFETY: per the caller's contract, `count` names.
            unsafe { CStr::from_ptr(*extensions.add(i)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut chain = Vec::new();
    while !next.is_null() {
        // SAFETY: per the caller's contract, each element starts with `sType` and `pNext`.
        let header = unsafe { &*(next as *const VkBaseInStructure) };
        // The loader's own structures are not what the layer changed.
        if header.sType != VkStructureType::LOADER_INSTANCE_CREATE_INFO
            && header.sType != VkStructureType::LOADER_DEVICE_CREATE_INFO
        {
            chain.push(header.sType);
        }
        next = header.pNext as *const c_void;
    }
    Seen {
        extensions,
        api_version,
        chain,
    }
}

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

/// The fake level's `vkCreateInstance`: records what it was handed.
///
/// # Safety
/// As `vkCreateInstance`: `info` is a valid create info and `out` writable.
unsafe extern "system" fn next_create_instance(
    info: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    // SAFETY: per the caller's contract: the create info, its application info, names and chain.
    unsafe {
        let info = &*info;
        let api = info.pApplicationInfo.as_ref().map_or(0, |a| a.apiVersion);
        SEEN_BY_NEXT.lock().unwrap().push(seen(
            info.ppEnabledExtensionNames,
            info.enabledExtensionCount,
            api,
            info.pNext,
        ));
        *out = VkInstance(handle(&INSTANCE_DISPATCH));
    }
    VkResult::SUCCESS
}
/// The fake level's `vkCreateDevice`: records what it was handed.
///
/// # Safety
/// As `vkCreateDevice`: `info` is a valid create info and `out` writable.
unsafe extern "system" fn next_create_device(
    _: VkPhysicalDevice,
    info: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    // SAFETY: per the caller's contract: the create info, its names and chain.
    unsafe {
        let info = &*info;
        SEEN_BY_NEXT.lock().unwrap().push(seen(
            info.ppEnabledExtensionNames,
            info.enabledExtensionCount,
            0,
            info.pNext,
        ));
        *out = VkDevice(handle(&DEVICE_DISPATCH));
    }
    VkResult::SUCCESS
}

/// `$f`, checked against its command's type `$pfn`, as a `PFN_vkVoidFunction`.
macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// The fake level's `vkGetInstanceProcAddr`: its two create functions.
///
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    let name = unsafe { CStr::from_ptr(name) };
    match name.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        _ => None,
    }
}
extern "system" fn next_gdpa(_: VkDevice, _: *const c_char) -> PFN_vkVoidFunction {
    None
}

// ---- the layer under test ---------------------------------------------------------------------

struct Changing;
struct Instance;
struct Device;

impl Layer for Changing {
    type Instance = Instance;
    type Device = Device;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_TEST_changing",
        spec_version: 0,
        implementation_version: 1,
        description: "changes create infos",
        instance_extensions: &[],
        device_extensions: &[("VK_TEST_own_device_extension", 1, &[])],
    });

    fn before_create_instance(
        info: &mut InstanceCreateInfo<'_>,
        _: &InstanceLink,
        _: *mut VkInstance,
    ) -> Result<(), VkResult> {
        info.add_extension(c"VK_EXT_debug_utils");
        info.remove_extension(c"VK_TEST_removed");
        if info.api_version() < make_api_version(0, 1, 3, 0) {
            info.set_api_version(make_api_version(0, 1, 3, 0));
        }
        info.push_next(VkValidationFeaturesEXT::default());
        Ok(())
    }
    fn create_instance(
        info: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        // SAFETY: the create info as sent down, valid for the call.
        let api = unsafe { info.pApplicationInfo.as_ref() }.map_or(0, |a| a.apiVersion);
        // SAFETY: as above: its names and chain.
        SEEN_BY_LAYER.lock().unwrap().push(unsafe {
            seen(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                api,
                info.pNext,
            )
        });
        Ok(Instance)
    }
    fn before_create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        info: &mut DeviceCreateInfo<'_>,
        _: &DeviceLink,
        _: *mut VkDevice,
    ) -> Result<(), VkResult> {
        // The layer's own extension is already gone.
        assert!(info
            .extensions()
            .all(|e| e != c"VK_TEST_own_device_extension"));
        info.add_extension(c"VK_KHR_maintenance1");
        info.push_next(VkPhysicalDeviceVulkan12Features {
            bufferDeviceAddress: 1,
            ..Default::default()
        });
        Ok(())
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        // SAFETY: the create info as sent down, valid for the call: its names and chain.
        SEEN_BY_LAYER.lock().unwrap().push(unsafe {
            seen(
                info.ppEnabledExtensionNames,
                info.enabledExtensionCount,
                0,
                info.pNext,
            )
        });
        Ok(Device)
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {}
#[vk_layer::hooks]
impl DeviceHooks for Device {}

vk_layer::declare_layer!(Changing);

#[test]
fn what_goes_down_is_what_the_layer_made_it() {
    // SAFETY: the layer's create functions as their own types, with create infos and the
    // loader's chains that live until each call returns, and a physical device of the instance.
    unsafe {
        let mut link = VkLayerInstanceLink {
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            ..Default::default()
        };
        let mut chain = VkLayerInstanceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let app = VkApplicationInfo {
            apiVersion: make_api_version(0, 1, 1, 0),
            ..Default::default()
        };
        let extensions = [c"VK_KHR_surface".as_ptr(), c"VK_TEST_removed".as_ptr()];
        // The layer moves the link on in place: the chain holds a pointer that may write.
        let info = VkInstanceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            pApplicationInfo: &app,
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(vkGetInstanceProcAddr(
            VkInstance::NULL,
            c"vkCreateInstance".as_ptr(),
        ));
        let mut instance = VkInstance::NULL;
        assert_eq!(
            create.unwrap()(&info, ptr::null(), &mut instance),
            VkResult::SUCCESS
        );

        let mut link = VkLayerDeviceLink {
            pNext: ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            pfnNextGetDeviceProcAddr: Some(next_gdpa),
        };
        let mut chain = VkLayerDeviceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let device_extensions = [
            c"VK_TEST_own_device_extension".as_ptr(),
            c"VK_KHR_swapchain".as_ptr(),
        ];
        let info = VkDeviceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            enabledExtensionCount: 2,
            ppEnabledExtensionNames: device_extensions.as_ptr(),
            ..Default::default()
        };
        let create: PFN_vkCreateDevice =
            std::mem::transmute(vkGetInstanceProcAddr(instance, c"vkCreateDevice".as_ptr()));
        let mut device = VkDevice::NULL;
        let physical_device = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
        assert_eq!(
            create.unwrap()(physical_device, &info, ptr::null(), &mut device),
            VkResult::SUCCESS
        );
    }
    let expected = vec![
        Seen {
            extensions: vec!["VK_KHR_surface".into(), "VK_EXT_debug_utils".into()],
            api_version: make_api_version(0, 1, 3, 0),
            chain: vec![VkStructureType::VALIDATION_FEATURES_EXT],
        },
        Seen {
            extensions: vec!["VK_KHR_swapchain".into(), "VK_KHR_maintenance1".into()],
            api_version: 0,
            chain: vec![VkStructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES],
        },
    ];
    assert_eq!(*SEEN_BY_NEXT.lock().unwrap(), expected);
    assert_eq!(
        *SEEN_BY_LAYER.lock().unwrap(),
        expected,
        "create_* see the create info as sent down"
    );
}
