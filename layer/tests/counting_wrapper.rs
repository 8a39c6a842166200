//! How short a wrapping layer is on the SDK: between the markers, a complete layer (what its
//! crate's `src/lib.rs` would hold) that wraps images, image views and command buffers and counts
//! those it holds (their wrappers' count); the test counts its lines and runs it over a fake next level.

// ---- LAYER BEGIN ---------------------------------------------------------------------------------
use vk_layer::vk::{types::*, DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::*;

pub struct Counting;
pub struct Objects(Wrappers);

const WRAPPED: [VkObjectType; 2] = [VkObjectType::IMAGE, VkObjectType::IMAGE_VIEW];

impl Layer for Counting {
    type Instance = Objects;
    type Device = Objects;
    const WRAPS_HANDLES: bool = true;
    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Objects, VkResult> {
        Ok(Objects(Wrappers::of(&WRAPPED)))
    }
    fn create_device(
        _: &Objects,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Objects, VkResult> {
        Ok(Objects(Wrappers::of(&WRAPPED)))
    }
    fn wrap_handle<H: NonDispatchableHandle>(d: &Objects, h: H) -> H {
        d.0.wrap(h)
    }
    fn unwrap_handle<H: NonDispatchableHandle>(d: &Objects, h: H) -> Option<H> {
        d.0.unwrap(h)
    }
    fn forget_handle<H: NonDispatchableHandle>(d: &Objects, h: H) {
        d.0.forget(h);
    }
    fn wrap_command_buffer(d: &Objects, c: VkCommandBuffer) -> VkCommandBuffer {
        // SAFETY: the next level's live command buffer, as the SDK hands it.
        unsafe { d.0.wrap_dispatchable(c) }
    }
    fn unwrap_command_buffer(d: &Objects, c: VkCommandBuffer) -> Option<VkCommandBuffer> {
        d.0.unwrap_dispatchable(c)
    }
    fn forget_command_buffer(d: &Objects, c: VkCommandBuffer) {
        d.0.forget_dispatchable(c);
    }
    fn before_destroy_device(d: &Objects, _: VkDevice) {
        let images = d.0.live(VkObjectType::IMAGE);
        let views = d.0.live(VkObjectType::IMAGE_VIEW);
        let buffers = d.0.live(VkObjectType::COMMAND_BUFFER);
        println!("{images} images, {views} views, {buffers} command buffers");
    }
}

#[vk_layer::hooks]
impl InstanceHooks for Objects {}

#[vk_layer::hooks(intercept(*))]
impl DeviceHooks for Objects {}

vk_layer::declare_layer!(Counting);
// ---- LAYER END -----------------------------------------------------------------------------------

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::Mutex;

use vk_layer::vk::layer_abi::*;

static INSTANCE_DISPATCH: u64 = 1;
static DEVICE_DISPATCH: u64 = 2;
static NEXT: Mutex<u64> = Mutex::new(0x10);
/// What the fake next level was handed.
static HANDED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn object(word: usize) -> *mut c_void {
    Box::into_raw(Box::new(word)) as *mut c_void
}

unsafe extern "system" fn next_create_instance(
    _: *const VkInstanceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkInstance,
) -> VkResult {
    // SAFETY: the caller's output.
    unsafe { *out = VkInstance(object(&INSTANCE_DISPATCH as *const u64 as usize)) };
    VkResult::SUCCESS
}
unsafe extern "system" fn next_create_device(
    _: VkPhysicalDevice,
    _: *const VkDeviceCreateInfo,
    _: *const VkAllocationCallbacks,
    out: *mut VkDevice,
) -> VkResult {
    // SAFETY: the caller's output.
    unsafe { *out = VkDevice(object(&DEVICE_DISPATCH as *const u64 as usize)) };
    VkResult::SUCCESS
}
unsafe extern "system" fn next_create<I, H: NonDispatchableHandle>(
    _: VkDevice,
    _: *const I,
    _: *const VkAllocationCallbacks,
    out: *mut H,
) -> VkResult {
    let mut next = NEXT.lock().unwrap();
    *next += 1;
    // SAFETY: the caller's output.
    unsafe { *out = H::from_raw(*next) };
    VkResult::SUCCESS
}
/// `vkCreateImageView`: records the image it is given.
unsafe extern "system" fn next_create_view(
    device: VkDevice,
    info: *const VkImageViewCreateInfo,
    a: *const VkAllocationCallbacks,
    out: *mut VkImageView,
) -> VkResult {
    // SAFETY: a valid create info.
    let image = unsafe { (*info).image.0 };
    HANDED.lock().unwrap().push(format!("view of {image:#x}"));
    // SAFETY: the caller's arguments.
    unsafe { next_create(device, info, a, out) }
}
unsafe extern "system" fn next_allocate(
    _: VkDevice,
    info: *const VkCommandBufferAllocateInfo,
    out: *mut VkCommandBuffer,
) -> VkResult {
    // SAFETY: a valid info, and room for its count.
    unsafe {
        for i in 0..(*info).commandBufferCount as usize {
            *out.add(i) = VkCommandBuffer(object(ICD_LOADER_MAGIC));
        }
    }
    VkResult::SUCCESS
}
extern "system" fn next_cmd_draw(cmd: VkCommandBuffer, _: u32, _: u32, _: u32, _: u32) {
    HANDED
        .lock()
        .unwrap()
        .push(format!("draw {:#x}", cmd.0 as usize));
}

macro_rules! void_fn {
    ($pfn:ty, $f:expr) => {{
        let f: $pfn = Some($f);
        // SAFETY: function pointers of one size; the caller casts it back to `$pfn`.
        unsafe { std::mem::transmute::<$pfn, PFN_vkVoidFunction>(f) }
    }};
}

/// # Safety
/// `name` is NUL-terminated.
unsafe fn next_function(name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    match unsafe { CStr::from_ptr(name) }.to_bytes() {
        b"vkCreateInstance" => void_fn!(PFN_vkCreateInstance, next_create_instance),
        b"vkCreateDevice" => void_fn!(PFN_vkCreateDevice, next_create_device),
        b"vkCreateImage" => void_fn!(PFN_vkCreateImage, next_create),
        b"vkCreateImageView" => void_fn!(PFN_vkCreateImageView, next_create_view),
        b"vkAllocateCommandBuffers" => void_fn!(PFN_vkAllocateCommandBuffers, next_allocate),
        b"vkCmdDraw" => void_fn!(PFN_vkCmdDraw, next_cmd_draw),
        _ => None,
    }
}
unsafe extern "system" fn next_gipa(_: VkInstance, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}
unsafe extern "system" fn next_gdpa(_: VkDevice, name: *const c_char) -> PFN_vkVoidFunction {
    // SAFETY: per the caller's contract.
    unsafe { next_function(name) }
}

#[test]
fn the_layer_is_short_and_wraps_and_counts() {
    let source = include_str!("counting_wrapper.rs");
    let begin = source.find("// ---- LAYER BEGIN").unwrap();
    let end = source.find("// ---- LAYER END").unwrap();
    let lines = source[begin..end]
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count();
    assert!(lines <= 60, "the layer takes {lines} lines");
    eprintln!("the layer takes {lines} lines besides blank ones");

    // SAFETY: the layer's entry points as their own types, with the loader's chains alive for
    // each call and the handles the layer handed back.
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
        let info = VkDeviceCreateInfo {
            pNext: &mut chain as *mut _ as *const c_void,
            ..Default::default()
        };
        let create: PFN_vkCreateDevice =
            std::mem::transmute(vkGetInstanceProcAddr(instance, c"vkCreateDevice".as_ptr()));
        let mut device = VkDevice::NULL;
        let physical = VkPhysicalDevice(object(&INSTANCE_DISPATCH as *const u64 as usize));
        assert_eq!(
            create.unwrap()(physical, &info, ptr::null(), &mut device),
            VkResult::SUCCESS
        );

        let gdpa = |name: &CStr| vkGetDeviceProcAddr(device, name.as_ptr());
        let create_image: PFN_vkCreateImage = std::mem::transmute(gdpa(c"vkCreateImage"));
        let create_view: PFN_vkCreateImageView = std::mem::transmute(gdpa(c"vkCreateImageView"));
        let allocate: PFN_vkAllocateCommandBuffers =
            std::mem::transmute(gdpa(c"vkAllocateCommandBuffers"));
        let draw: PFN_vkCmdDraw = std::mem::transmute(gdpa(c"vkCmdDraw"));
        let mut image = VkImage::NULL;
        assert_eq!(
            create_image.unwrap()(
                device,
                &VkImageCreateInfo::default(),
                ptr::null(),
                &mut image
            ),
            VkResult::SUCCESS
        );
        let view_info = VkImageViewCreateInfo {
            image,
            ..Default::default()
        };
        let mut view = VkImageView::NULL;
        assert_eq!(
            create_view.unwrap()(device, &view_info, ptr::null(), &mut view),
            VkResult::SUCCESS
        );
        let mut cmds = [VkCommandBuffer::NULL; 2];
        let info = VkCommandBufferAllocateInfo {
            commandBufferCount: 2,
            ..Default::default()
        };
        assert_eq!(
            allocate.unwrap()(device, &info, cmds.as_mut_ptr()),
            VkResult::SUCCESS
        );
        *(cmds[1].0 as *mut usize) = &DEVICE_DISPATCH as *const u64 as usize; // as the loader does
        draw.unwrap()(cmds[1], 3, 1, 0, 0);

        let state = <Counting as vk_layer::Registered>::chassis()
            .device(device.0)
            .unwrap();
        let live = |t| state.hooks.0.live(t);
        let counts = [
            VkObjectType::IMAGE,
            VkObjectType::IMAGE_VIEW,
            VkObjectType::COMMAND_BUFFER,
        ];
        assert_eq!(counts.map(live), [1, 1, 2]);
        let inner = state.hooks.0.unwrap_dispatchable(cmds[1]).unwrap();
        assert!(
            image.0 != 0x11 && view.0 != 0x12 && inner != cmds[1],
            "the layer's own handles"
        );
        assert_eq!(
            *HANDED.lock().unwrap(),
            [
                "view of 0x11".to_string(),
                format!("draw {:#x}", inner.0 as usize)
            ]
        );
    }
}
