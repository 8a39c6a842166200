//! What a loader-managed `VkDevice`'s first word points to: its dispatch table and the loader's
//! data about it; while its layer chain creates it, the data lent to the chain's end.

use std::cell::Cell;
use std::ptr::NonNull;

use vk_generated::DeviceDispatchTable;
use vk_generated::types::*;

use crate::given::allocator::Allocator;
use crate::given::device_create_info::DeviceCreateInfo;
use crate::load::calls::DeviceCalls;
use crate::load::device_chain::{self, CreatedDevice, DeviceChainEnd, DeviceChainStart, HandedDownDevice};
use crate::loader_abi::UnknownSlots;

/// What the first word of a loader-managed `VkDevice` points to. The table comes first, so the
/// trampolines (which read a `DeviceDispatchTable` there) and this module agree; the unknown
/// device-command slots follow it at the constant offset the assembly trampolines use.
#[repr(C)]
pub struct DeviceData {
    pub table: DeviceDispatchTable,
    /// Commands the generated table does not know, by the slot `dispatch::unknown` gave their name.
    pub unknown: UnknownSlots,
    /// The driver's `vkGetDeviceProcAddr`, for names the generated table does not know.
    pub driver_gdpa: PFN_vkGetDeviceProcAddr,
    /// With layers: the top layer's `vkGetDeviceProcAddr`, asked instead of the driver's.
    pub chain_gdpa: PFN_vkGetDeviceProcAddr,
    /// The driver's swapchain commands where the loader unwraps surfaces for it.
    pub wsi: DeviceWsi,
    /// The functions behind the loader's for the commands that name objects by handle.
    pub debug_objects: DeviceDebugObjects,
    /// With `maintenance5` enabled, the instance's API version: core commands of newer versions
    /// are not handed out (`u32::MAX`: no limit).
    pub core_version_limit: u32,
}

impl DeviceData {
    /// The loader's data of `device`; `None` for a NULL handle or a device whose dispatch pointer
    /// is NULL.
    ///
    /// # Safety
    /// `device` must be NULL or a live `VkDevice` created through this loader (its first word
    /// points to the `DeviceData` the loader installed), and that device must outlive `'a`.
    pub unsafe fn of<'a>(device: VkDevice) -> Option<&'a DeviceData> {
        if device.is_null() {
            return None;
        }
        // SAFETY: a live loader device's first word is NULL or points to its `DeviceData`, built
        // before it is installed there and freed only by vkDestroyDevice (after which the handle
        // is not live); once installed it changes only through its atomic unknown slots.
        unsafe { (*(device.0 as *const *const DeviceData)).as_ref() }
    }
}

/// The loader's data for a device being created: owned here until the device points to it
/// ([`install`](Self::install)), from then on the device's (freed by `vkDestroyDevice`); freed
/// here if the creation fails. Kept as the pointer `Box::into_raw` gave, the one the device's
/// first word gets, so that every later use derives from it.
pub(crate) struct NewDeviceData(std::ptr::NonNull<DeviceData>);

impl NewDeviceData {
    /// Empty data for a device about to be created (the table is filled once it exists), with
    /// `unknown` its unknown-command slots; `chain_gdpa` is the top layer's `vkGetDeviceProcAddr`
    /// when there are layers.
    pub fn new(chain_gdpa: PFN_vkGetDeviceProcAddr, unknown: UnknownSlots) -> NewDeviceData {
        let data = Box::new(DeviceData {
            table: DeviceDispatchTable::default(),
            unknown,
            driver_gdpa: None,
            chain_gdpa,
            wsi: Default::default(),
            debug_objects: Default::default(),
            core_version_limit: u32::MAX,
        });
        NewDeviceData(std::ptr::NonNull::from(Box::leak(data)))
    }

    /// The data, to fill. Not while the layers' chain runs: its terminator fills it then through
    /// [`as_ptr`](Self::as_ptr).
    pub fn get_mut(&mut self) -> &mut DeviceData {
        // SAFETY: a live box of ours, which no device points to yet (or whose device is not handed
        // out yet), so nothing else refers to it while this borrow of `self` lasts.
        unsafe { self.0.as_mut() }
    }

    /// The data's address, for the terminator of the layers' chain and for the device's first word.
    pub fn as_ptr(&self) -> *mut DeviceData {
        self.0.as_ptr()
    }

    /// Hands the data over to `device`, whose first word now points to it.
    pub fn install(self, device: DeviceCalls) -> InstalledDevice {
        device.set_dispatch(self.as_ptr().cast_const().cast());
        self.leave_to_driver_device(device)
    }

    /// Hands the data over to the device the driver created, which the terminator of the layers'
    /// chain pointed to it; `device` is the device the layers returned (their own), which the
    /// caller keeps in its place.
    pub fn leave_to_driver_device(self, device: DeviceCalls) -> InstalledDevice {
        let data = self.0;
        std::mem::forget(self);
        // SAFETY: a field of the box `new` leaked, now the device's (freed by vkDestroyDevice or
        // pfnLayerDestroyDevice only).
        let slots = unsafe { NonNull::new_unchecked(&raw mut (*data.as_ptr()).unknown) };
        InstalledDevice { slots, device }
    }

    /// Creates the device through `start`'s layer chain ending in `end`, with this data lent to
    /// the chain's end on this thread ([`with_lent`]) and the loader's [`DeviceInCreation`] for it
    /// at `*pDevice`: the device the top of the chain returned, with the `vkGetDeviceProcAddr`
    /// that answers for it (the top layer's, or the driver's the end created it with).
    pub fn create_through(&mut self, start: &DeviceChainStart<'_>, end: DeviceChainEnd, info: DeviceCreateInfo<'_>, allocator: Allocator<'_>) -> Result<DeviceCalls, VkResult> {
        let mut in_creation = DeviceInCreation::new(self.as_ptr());
        let mut lending = Lending { data: self.as_ptr(), created: None };
        struct Restore(*mut Lending);
        impl Drop for Restore {
            fn drop(&mut self) {
                LENT.with(|lent| lent.set(self.0));
            }
        }
        // A layer may create a device of its own (pfnLayerCreateDevice) while the chain of another
        // is under way on this thread: the outer one is lent again once this returns.
        let restore = Restore(LENT.with(|lent| lent.replace(&mut lending)));
        // SAFETY: the loader's object, live and writable until this function returns.
        let handed_down = unsafe { HandedDownDevice::new(in_creation.handle()) };
        let created = device_chain::create_device(start, end, info, allocator, handed_down);
        drop(restore);
        match created? {
            CreatedDevice::Layered(device) => Ok(device),
            // The end's device, which it created with the driver's vkGetDeviceProcAddr.
            CreatedDevice::AtTheEnd(handle) => lending.created.filter(|d| d.handle() == handle).ok_or(VkResult::ERROR_INITIALIZATION_FAILED),
        }
    }
}

/// The data lent to the end of a device chain, and the driver's device that end created.
struct Lending {
    data: *mut DeviceData,
    created: Option<DeviceCalls>,
}

thread_local! {
    /// The lending of the device chain being called on this thread (NULL: none, or taken).
    static LENT: Cell<*mut Lending> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `f` with the device data lent to the chain being called on this thread, when it is `data`
/// (what the chain's [`DeviceInCreation`] names), taken for the time of `f`, and the place for the
/// driver's device `f` creates; `None` outside [`NewDeviceData::create_through`] or for other data.
pub fn with_lent<R>(data: *mut DeviceData, f: impl FnOnce(&mut DeviceData, &mut Option<DeviceCalls>) -> R) -> Option<R> {
    let taken = LENT.with(|lent| lent.replace(std::ptr::null_mut()));
    struct PutBack(*mut Lending);
    impl Drop for PutBack {
        fn drop(&mut self) {
            LENT.with(|lent| lent.set(self.0));
        }
    }
    let _put_back = PutBack(taken);
    // SAFETY: NULL or the lending `create_through` made, live while it runs (it puts the one
    // before back when it returns); taken from `LENT` until `f` returns, so this is the only
    // reference to it.
    let lending = unsafe { taken.as_mut() }?;
    if lending.data != data {
        return None;
    }
    // SAFETY: the data of the `NewDeviceData` whose `create_through` made this lending, which
    // does not touch it until the chain returns (it holds no reference to it meanwhile); taken
    // with the lending, so this is the only reference to it.
    let fields = unsafe { &mut *lending.data };
    Some(f(fields, &mut lending.created))
}

/// A device's unknown-command slots once its data is the device's: they live until the device's
/// `vkDestroyDevice` (or `pfnLayerDestroyDevice`) frees the data, which forgets them first
/// (`dispatch::unknown::device_destroyed`); with the device as the level that owns the data knows
/// it, live until then.
pub struct InstalledDevice {
    slots: NonNull<UnknownSlots>,
    device: DeviceCalls,
}

impl InstalledDevice {
    /// The slots, alive until the device's data is freed (see the type).
    pub fn slots(&self) -> NonNull<UnknownSlots> {
        self.slots
    }

    pub fn device(&self) -> DeviceCalls {
        self.device
    }
}

impl Drop for NewDeviceData {
    fn drop(&mut self) {
        // SAFETY: the box `new` leaked, which no device was handed out with.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

/// The magic word of a [`DeviceInCreation`]: the Khronos loader's value for the device object it
/// hands its layers, so that the message naming a corrupted one reads as there.
pub const DEVICE_IN_CREATION_MAGIC: u64 = 0x10AD_ED04_0410_ADED;

/// What the loader puts at `*pDevice` for the layers' chain of `vkCreateDevice`: the layer
/// interface says the loader passes its terminator information there, and a layer must not change
/// it (policy LLP_LAYER_22). The terminator finds the device's data through it, and stops the
/// process, naming the cause, when a layer wrote over it.
#[repr(C)]
pub struct DeviceInCreation {
    magic: u64,
    data: *mut DeviceData,
    /// The rest of the 128 bytes that layers written against the Khronos loader find there (its
    /// device object, which is larger): a layer that clears them, as that loader's test of the
    /// policy does, writes into the loader's object, not past it.
    _room: [u8; DEVICE_IN_CREATION_ROOM],
}

/// The bytes after the magic word and the data pointer, whatever a pointer's size.
const DEVICE_IN_CREATION_ROOM: usize = 128 - 8 - std::mem::size_of::<*mut DeviceData>();

const _: () = assert!(std::mem::size_of::<DeviceInCreation>() == 128);

/// How the object at `*pDevice` was found when the chain reached the terminator.
pub enum HandedDown {
    /// Intact: the device's data.
    Intact(*mut DeviceData),
    /// NULL.
    Null,
    /// Not a [`DeviceInCreation`]: the word found where its magic should be.
    Corrupted(u64),
}

impl DeviceInCreation {
    /// The object for the device whose data `data` is ([`NewDeviceData::as_ptr`]).
    pub fn new(data: *mut DeviceData) -> DeviceInCreation {
        DeviceInCreation { magic: DEVICE_IN_CREATION_MAGIC, data, _room: [0; DEVICE_IN_CREATION_ROOM] }
    }

    /// The handle the layers' chain gets at `*pDevice`: this object's address, writable (a broken
    /// layer writes there; the terminator sees it).
    pub fn handle(&mut self) -> VkDevice {
        VkDevice(self as *mut DeviceInCreation as *mut core::ffi::c_void)
    }

    /// Reads what a layer passed down at `*pDevice`.
    ///
    /// # Safety
    /// `handed_down` must be NULL, misaligned, or readable for a `DeviceInCreation`: the handle
    /// [`handle`](Self::handle) gave, of an object still alive, or what a layer put in its place
    /// (a layer passing an unreadable pointer breaks the layer interface).
    pub unsafe fn read(handed_down: VkDevice) -> HandedDown {
        let object = handed_down.0 as *const DeviceInCreation;
        if object.is_null() {
            return HandedDown::Null;
        }
        if !object.is_aligned() {
            return HandedDown::Corrupted(0);
        }
        // SAFETY: not NULL and aligned: readable for the object (the caller's contract).
        let (magic, data) = unsafe { ((*object).magic, (*object).data) };
        match magic {
            DEVICE_IN_CREATION_MAGIC if !data.is_null() => HandedDown::Intact(data),
            _ => HandedDown::Corrupted(magic),
        }
    }
}

/// The surface commands of a device, where its driver creates its own surfaces: the driver's
/// functions, called by the loader's after swapping in the driver's surface handles. Devices of
/// other drivers keep the driver's functions in their table (no loader code on that path).
#[derive(Default)]
pub struct DeviceWsi {
    pub(crate) driver: usize,
    pub(crate) create_swapchain: PFN_vkCreateSwapchainKHR,
    pub(crate) create_shared_swapchains: PFN_vkCreateSharedSwapchainsKHR,
    pub(crate) group_surface_present_modes: PFN_vkGetDeviceGroupSurfacePresentModesKHR,
}

/// The four commands, as a device table names them.
#[derive(Default, Clone, Copy)]
pub(crate) struct Functions {
    pub(crate) vkSetDebugUtilsObjectNameEXT: PFN_vkSetDebugUtilsObjectNameEXT,
    pub(crate) vkSetDebugUtilsObjectTagEXT: PFN_vkSetDebugUtilsObjectTagEXT,
    pub(crate) vkDebugMarkerSetObjectNameEXT: PFN_vkDebugMarkerSetObjectNameEXT,
    pub(crate) vkDebugMarkerSetObjectTagEXT: PFN_vkDebugMarkerSetObjectTagEXT,
}

impl Functions {
    pub(crate) fn of(table: &DeviceDispatchTable) -> Functions {
        Functions {
            vkSetDebugUtilsObjectNameEXT: table.vkSetDebugUtilsObjectNameEXT,
            vkSetDebugUtilsObjectTagEXT: table.vkSetDebugUtilsObjectTagEXT,
            vkDebugMarkerSetObjectNameEXT: table.vkDebugMarkerSetObjectNameEXT,
            vkDebugMarkerSetObjectTagEXT: table.vkDebugMarkerSetObjectTagEXT,
        }
    }
}

/// One device's part: the functions the loader's call after swapping handles.
#[derive(Default)]
pub struct DeviceDebugObjects {
    /// The top of the device's layer chain (empty without device layers).
    pub(crate) layers: Functions,
    /// The driver's own functions.
    pub(crate) driver: Functions,
    /// The driver's index in its instance (whose surface handle to use) and its instance handle.
    pub(crate) driver_index: usize,
    pub(crate) driver_instance: VkInstance,
}

