//! A layer that wraps images (`WRAPS_HANDLES`, `unwrap_handle` for `VkImage`): the generated
//! entry points hand the next level its own images wherever a device-level command reaches one
//! (by value, in an array of parameters, inside the structures the parameters point to and their
//! `pNext` chains), the layer's hooks seeing the application's, whose memory is left as it is; an
//! image the layer does not know is refused.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{
    DeviceHooks, DeviceLink, InstanceHooks, InstanceLink, Layer, NonDispatchableHandle,
};

// ---- the fake next level: records the images it is handed -------------------------------------

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;

fn handle(dispatch: &'static u64) -> *mut c_void {
    Box::into_raw(Box::new(dispatch as *const u64 as usize)) as *mut c_void
}

static HANDED: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The next level's next image.
static NEXT_IMAGE: Mutex<u64> = Mutex::new(0x51);

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
/// # Safety
/// `out` is writable.
unsafe extern "system" fn next_create_image(
    _: VkDevice,
    _: *const VkImageCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkImage,
) -> VkResult {
    let mut next = NEXT_IMAGE.lock().unwrap();
    // SAFETY: per the caller's contract.
    unsafe { *out = VkImage(*next) };
    *next += 1;
    VkResult::SUCCESS
}
extern "system" fn next_destroy_image(_: VkDevice, image: VkImage, _: *const VkAllocationCallbacks) {
    HANDED.lock().unwrap().push(format!("vkDestroyImage {:#x}", image.0));
}
extern "system" fn next_cmd_copy_image(
    _: VkCommandBuffer,
    src: VkImage,
    _: VkImageLayout,
    dst: VkImage,
    _: VkImageLayout,
    _: u32,
    _: *const VkImageCopy,
) {
    HANDED
        .lock()
        .unwrap()
        .push(format!("vkCmdCopyImage {:#x} {:#x}", src.0, dst.0));
}
/// # Safety
/// `images` holds `count` images.
unsafe extern "system" fn next_capture_data(
    _: VkDevice,
    count: u32,
    images: *const VkImage,
    _: *mut VkHostAddressRangeEXT,
) -> VkResult {
    // SAFETY: per the caller's contract.
    let images = unsafe { std::slice::from_raw_parts(images, count as usize) };
    let images: Vec<String> = images.iter().map(|i| format!("{:#x}", i.0)).collect();
    HANDED.lock().unwrap().push(format!(
        "vkGetImageOpaqueCaptureDataEXT {}",
        images.join(" ")
    ));
    VkResult::SUCCESS
}

/// # Safety
/// `barriers` holds `count` image barriers.
unsafe extern "system" fn next_cmd_pipeline_barrier(
    _: VkCommandBuffer,
    _: VkPipelineStageFlags,
    _: VkPipelineStageFlags,
    _: VkDependencyFlags,
    _: u32,
    _: *const VkMemoryBarrier,
    _: u32,
    _: *const VkBufferMemoryBarrier,
    count: u32,
    barriers: *const VkImageMemoryBarrier,
) {
    // SAFETY: per the caller's contract.
    let barriers = unsafe { std::slice::from_raw_parts(barriers, count as usize) };
    let images: Vec<String> = barriers
        .iter()
        .map(|b| format!("{:#x}", b.image.0))
        .collect();
    HANDED
        .lock()
        .unwrap()
        .push(format!("vkCmdPipelineBarrier {}", images.join(" ")));
}
/// # Safety
/// `info` is a valid allocate info whose chain holds the two structures the test gives it.
unsafe extern "system" fn next_allocate_memory(
    _: VkDevice,
    info: *const VkMemoryAllocateInfo,
    _: *const VkAllocationCallbacks,
    _: *mut VkDeviceMemory,
) -> VkResult {
    // SAFETY: per the caller's contract: flags info, then dedicated info.
    let text = unsafe {
        let flags = &*((*info).pNext as *const VkMemoryAllocateFlagsInfo);
        let dedicated = &*(flags.pNext as *const VkMemoryDedicatedAllocateInfo);
        format!(
            "vkAllocateMemory flags {} dedicated {:#x}",
            flags.deviceMask, dedicated.image.0
        )
    };
    HANDED.lock().unwrap().push(text);
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

extern "system" fn next_set_private_data(
    _: VkDevice,
    object_type: VkObjectType,
    handle: u64,
    _: VkPrivateDataSlot,
    data: u64,
) -> VkResult {
    HANDED.lock().unwrap().push(format!(
        "vkSetPrivateData {} {handle:#x} {data}",
        object_type.0
    ));
    VkResult::SUCCESS
}
/// # Safety
/// `info` is a valid name info.
unsafe extern "system" fn next_set_name(
    _: VkDevice,
    info: *const VkDebugUtilsObjectNameInfoEXT,
) -> VkResult {
    // SAFETY: per the caller's contract.
    let info = unsafe { &*info };
    HANDED.lock().unwrap().push(format!(
        "vkSetDebugUtilsObjectNameEXT {} {:#x}",
        info.objectType.0, info.objectHandle
    ));
    VkResult::SUCCESS
}

/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkCreateImage" => void_fn!(PFN_vkCreateImage, next_create_image),
        b"vkDestroyImage" => void_fn!(PFN_vkDestroyImage, next_destroy_image),
        b"vkCmdCopyImage" => void_fn!(PFN_vkCmdCopyImage, next_cmd_copy_image),
        b"vkSetPrivateData" => void_fn!(PFN_vkSetPrivateData, next_set_private_data),
        b"vkCmdPipelineBarrier" => void_fn!(PFN_vkCmdPipelineBarrier, next_cmd_pipeline_barrier),
        b"vkAllocateMemory" => void_fn!(PFN_vkAllocateMemory, next_allocate_memory),
        b"vkSetDebugUtilsObjectNameEXT" => {
            void_fn!(PFN_vkSetDebugUtilsObjectNameEXT, next_set_name)
        }
        b"vkGetImageOpaqueCaptureDataEXT" => {
            void_fn!(PFN_vkGetImageOpaqueCaptureDataEXT, next_capture_data)
        }
        _ => None,
    }
}
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
/// # Safety
/// `name` is NUL-terminated.
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

// ---- the layer: its own image handles ----------------------------------------------------------

struct ImageWrapping;
struct Instance;
struct Device {
    /// The layer's image -> the next level's. Plain values: nothing here is borrowed across a
    /// call, so removing an entry frees nothing a reference holds.
    images: Mutex<HashMap<u64, u64>>,
    /// The images the hooks saw.
    seen: Mutex<Vec<u64>>,
}

/// The layer's handles: distinct from every handle of the next level's.
const WRAPPER_BASE: u64 = 0x7700_0000;

impl Layer for ImageWrapping {
    type Instance = Instance;
    type Device = Device;

    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        Ok(Instance)
    }
    fn create_device(
        _: &Instance,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        Ok(Device {
            images: Mutex::new(HashMap::new()),
            seen: Mutex::new(Vec::new()),
        })
    }
    const WRAPS_HANDLES: bool = true;
    fn unwrap_handle<H: NonDispatchableHandle>(object: &Device, handle: H) -> Option<H> {
        if H::OBJECT_TYPE != VkObjectType::IMAGE {
            return Some(handle);
        }
        object
            .images
            .lock()
            .unwrap()
            .get(&handle.raw())
            .map(|&inner| H::from_raw(inner))
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Instance {}

#[vk_layer::hooks(intercept(
    cmd_copy_image,
    cmd_pipeline_barrier,
    allocate_memory,
    get_image_opaque_capture_data_ext,
    set_private_data,
    set_debug_utils_object_name_ext
))]
impl DeviceHooks for Device {
    /// Hands out the layer's own image.
    fn post_call_record_create_image(
        &self,
        _: &DeviceDispatchTable,
        _: VkDevice,
        _: *const VkImageCreateInfo,
        _: *const VkAllocationCallbacks,
        image: *mut VkImage,
        result: VkResult,
    ) {
        if result == VkResult::SUCCESS {
            // SAFETY: the caller's output, which the next level just wrote.
            unsafe {
                let inner = (*image).0;
                let wrapper = WRAPPER_BASE + inner;
                self.images.lock().unwrap().insert(wrapper, inner);
                *image = VkImage(wrapper);
            }
        }
    }
    fn pre_call_record_destroy_image(
        &self,
        _: &DeviceDispatchTable,
        _: VkDevice,
        image: VkImage,
        _: *const VkAllocationCallbacks,
    ) {
        self.seen.lock().unwrap().push(image.0);
    }
    /// The next level has destroyed it: forgotten.
    fn post_call_record_destroy_image(
        &self,
        _: &DeviceDispatchTable,
        _: VkDevice,
        image: VkImage,
        _: *const VkAllocationCallbacks,
    ) {
        self.images.lock().unwrap().remove(&image.0);
    }
}

vk_layer::declare_layer!(ImageWrapping);

#[test]
fn images_go_down_as_the_next_levels_own() {
    // SAFETY: the layer's entry points as their own types, called as an application through the
    // loader would, with create infos and chains that live until each call returns.
    unsafe {
        let mut link = VkLayerInstanceLink {
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            ..Default::default()
        };
        let mut chain = VkLayerInstanceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let info = VkInstanceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateInstance = std::mem::transmute(vkGetInstanceProcAddr(
            VkInstance::NULL,
            c"vkCreateInstance".as_ptr(),
        ));
        let mut instance = VkInstance::NULL;
        assert_eq!(create.unwrap()(&info, ptr::null(), &mut instance), VkResult::SUCCESS);
        let mut link = VkLayerDeviceLink {
            pNext: ptr::null_mut(),
            pfnNextGetInstanceProcAddr: Some(next_gipa),
            pfnNextGetDeviceProcAddr: Some(next_gdpa),
        };
        let mut chain = VkLayerDeviceCreateInfo::default();
        chain.u.pLayerInfo = &mut link;
        let info = VkDeviceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateDevice =
            std::mem::transmute(vkGetInstanceProcAddr(instance, c"vkCreateDevice".as_ptr()));
        let mut device = VkDevice::NULL;
        let physical = VkPhysicalDevice(handle(&INSTANCE_DISPATCH));
        assert_eq!(create.unwrap()(physical, &info, ptr::null(), &mut device), VkResult::SUCCESS);

        let proc_addr = |name: &CStr| vkGetDeviceProcAddr(device, name.as_ptr());
        let create_image: PFN_vkCreateImage = std::mem::transmute(proc_addr(c"vkCreateImage"));
        let destroy_image: PFN_vkDestroyImage = std::mem::transmute(proc_addr(c"vkDestroyImage"));
        let copy: PFN_vkCmdCopyImage = std::mem::transmute(proc_addr(c"vkCmdCopyImage"));
        let capture: PFN_vkGetImageOpaqueCaptureDataEXT =
            std::mem::transmute(proc_addr(c"vkGetImageOpaqueCaptureDataEXT"));
        let (mut a, mut b) = (VkImage::NULL, VkImage::NULL);
        for image in [&mut a, &mut b] {
            assert_eq!(
                create_image.unwrap()(device, &VkImageCreateInfo::default(), ptr::null(), image),
                VkResult::SUCCESS
            );
        }
        assert_eq!((a.0, b.0), (WRAPPER_BASE + 0x51, WRAPPER_BASE + 0x52), "the layer's own");

        let cmd = VkCommandBuffer(handle(&DEVICE_DISPATCH));
        let layout = VkImageLayout::GENERAL;
        copy.unwrap()(cmd, a, layout, b, layout, 0, ptr::null());
        let mut ranges = [VkHostAddressRangeEXT::default(); 2];
        assert_eq!(
            capture.unwrap()(device, 2, [b, a].as_ptr(), ranges.as_mut_ptr()),
            VkResult::SUCCESS
        );
        // An image the layer never handed out: refused, not passed down.
        let stranger = VkImage(0x51);
        assert_eq!(
            capture.unwrap()(device, 2, [a, stranger].as_ptr(), ranges.as_mut_ptr()),
            VkResult::ERROR_UNKNOWN
        );
        copy.unwrap()(cmd, stranger, layout, b, layout, 0, ptr::null());
        // `u64` object handles: the image's, unwrapped; another type's, as it is.
        let set_private: PFN_vkSetPrivateData =
            std::mem::transmute(proc_addr(c"vkSetPrivateData"));
        let set_name: PFN_vkSetDebugUtilsObjectNameEXT =
            std::mem::transmute(proc_addr(c"vkSetDebugUtilsObjectNameEXT"));
        let slot = VkPrivateDataSlot(9);
        assert_eq!(
            set_private.unwrap()(device, VkObjectType::IMAGE, a.0, slot, 1),
            VkResult::SUCCESS
        );
        assert_eq!(
            set_private.unwrap()(device, VkObjectType::BUFFER, a.0, slot, 2),
            VkResult::SUCCESS
        );
        assert_eq!(
            set_private.unwrap()(device, VkObjectType::IMAGE, stranger.0, slot, 3),
            VkResult::ERROR_UNKNOWN
        );
        let named = VkDebugUtilsObjectNameInfoEXT {
            objectType: VkObjectType::IMAGE,
            objectHandle: b.0,
            pObjectName: c"b".as_ptr(),
            ..Default::default()
        };
        assert_eq!(set_name.unwrap()(device, &named), VkResult::SUCCESS);
        assert_eq!(
            named.objectHandle, b.0,
            "the application's structure is left as it is"
        );
        // Inside structures: an array of barriers, and a `pNext` chain whose second node holds
        // the image (the first copied to relink it); the application's memory left as it is.
        let barrier: PFN_vkCmdPipelineBarrier =
            std::mem::transmute(proc_addr(c"vkCmdPipelineBarrier"));
        let barriers = [
            VkImageMemoryBarrier {
                image: a,
                ..Default::default()
            },
            VkImageMemoryBarrier {
                image: b,
                ..Default::default()
            },
        ];
        let stage = VkPipelineStageFlags(0);
        let (none, no_memory, no_buffer) = (VkDependencyFlags(0), ptr::null(), ptr::null());
        barrier.unwrap()(
            cmd,
            stage,
            stage,
            none,
            0,
            no_memory,
            0,
            no_buffer,
            2,
            barriers.as_ptr(),
        );
        assert_eq!(
            (barriers[0].image, barriers[1].image),
            (a, b),
            "the application's barriers"
        );
        let barriers = [VkImageMemoryBarrier {
            image: stranger,
            ..Default::default()
        }];
        barrier.unwrap()(
            cmd,
            stage,
            stage,
            none,
            0,
            no_memory,
            0,
            no_buffer,
            1,
            barriers.as_ptr(),
        );
        let allocate: PFN_vkAllocateMemory = std::mem::transmute(proc_addr(c"vkAllocateMemory"));
        let dedicated = VkMemoryDedicatedAllocateInfo {
            image: b,
            ..Default::default()
        };
        let flags = VkMemoryAllocateFlagsInfo {
            pNext: &dedicated as *const _ as *const c_void,
            deviceMask: 3,
            ..Default::default()
        };
        let info = VkMemoryAllocateInfo {
            pNext: &flags as *const _ as *const c_void,
            ..Default::default()
        };
        let mut memory = VkDeviceMemory::NULL;
        assert_eq!(
            allocate.unwrap()(device, &info, ptr::null(), &mut memory),
            VkResult::SUCCESS
        );
        assert_eq!(dedicated.image, b, "the application's chain");
        assert_eq!(
            flags.pNext, &dedicated as *const _ as *const c_void,
            "the application's chain"
        );
        let stranger_dedicated = VkMemoryDedicatedAllocateInfo {
            image: stranger,
            ..Default::default()
        };
        let info = VkMemoryAllocateInfo {
            pNext: &stranger_dedicated as *const _ as *const c_void,
            ..Default::default()
        };
        assert_eq!(
            allocate.unwrap()(device, &info, ptr::null(), &mut memory),
            VkResult::ERROR_UNKNOWN
        );
        destroy_image.unwrap()(device, a, ptr::null());
        // Destroyed, so unknown now.
        copy.unwrap()(cmd, a, layout, b, layout, 0, ptr::null());

        assert_eq!(
            *HANDED.lock().unwrap(),
            [
                "vkCmdCopyImage 0x51 0x52",
                "vkGetImageOpaqueCaptureDataEXT 0x52 0x51",
                "vkSetPrivateData 10 0x51 1",
                format!("vkSetPrivateData 9 {:#x} 2", a.0).as_str(),
                "vkSetDebugUtilsObjectNameEXT 10 0x52",
                "vkCmdPipelineBarrier 0x51 0x52",
                "vkAllocateMemory flags 3 dedicated 0x52",
                "vkDestroyImage 0x51",
            ]
        );
        let state = <ImageWrapping as vk_layer::Registered>::chassis()
            .device(device.0)
            .expect("the device's state");
        assert_eq!(
            *state.hooks.seen.lock().unwrap(),
            [a.0],
            "the hooks see the layer's image"
        );
    }
}
