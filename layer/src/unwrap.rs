//! The handle walk: what a generated entry point of a layer with
//! [`WRAPS_HANDLES`](crate::Layer::WRAPS_HANDLES) does to its parameters before `call_down_*`.
//! Every handle it reaches (by value, in arrays, in the structures it points to and their `pNext`
//! chains, `u64` object handles) goes through the layer's unwrap of its type; a structure or array
//! is copied only when a handle in it changes, into the call's [`Scratch`], and the application's
//! memory is only read. The per-structure walkers are generated (`gen/unwrap.rs`, from `vk.xml`);
//! the helpers they call are here.

use std::ffi::c_void;
use std::sync::Arc;

use vk_generated::types::*;

use crate::state::{DeviceState, InstanceState, Layer};
use crate::templates::Layout;

#[allow(non_snake_case, clippy::too_many_arguments, unused_variables, dead_code)]
#[rustfmt::skip]
#[path = "gen/unwrap.rs"]
mod generated;

pub(crate) use generated::unwrap_object_of;
pub use generated::NOT_UNWRAPPED;
// The walkers, by structure name, for the generated entry points.
pub(crate) use generated::*;

pub(crate) mod sealed_trait {
    /// Only the generated handle types implement [`NonDispatchableHandle`](super::NonDispatchableHandle)
    /// and [`DispatchableHandle`](super::DispatchableHandle).
    pub trait Sealed {}
}
pub(crate) use sealed_trait::Sealed;

/// A non-dispatchable handle type of the registry (`VkBuffer`, `VkImage`, `VkSampler`, ...): what
/// [`Layer::unwrap_handle`](crate::Layer::unwrap_handle) is given, one type at a time. A layer
/// keys its map by `(H::OBJECT_TYPE, handle.raw())`.
pub trait NonDispatchableHandle: Copy + Eq + std::fmt::Debug + Sealed + 'static {
    /// The handle type's `VkObjectType`.
    const OBJECT_TYPE: VkObjectType;
    /// The handle's 64-bit value.
    fn raw(self) -> u64;
    /// The handle of this type with the value `raw`.
    fn from_raw(raw: u64) -> Self;
}

/// A dispatchable handle type (`VkInstance`, `VkPhysicalDevice`, `VkDevice`, `VkQueue`,
/// `VkCommandBuffer`): a pointer whose first word is the loader's dispatch pointer, what
/// [`Wrappers::wrap_dispatchable`](crate::Wrappers::wrap_dispatchable) is given.
pub trait DispatchableHandle: Copy + Eq + std::fmt::Debug + Sealed + 'static {
    /// The handle type's `VkObjectType`.
    const OBJECT_TYPE: VkObjectType;
    /// The handle's pointer.
    fn as_ptr(self) -> *mut c_void;
    /// The handle of this type with the pointer `p`.
    fn from_ptr(p: *mut c_void) -> Self;
}

/// Every handle type, dispatchable ones included: how the walk unwraps one at each level, and
/// how one coming back is wrapped and one going away forgotten (`wrap.rs`).
pub(crate) trait Handle: Copy + Eq {
    const OBJECT_TYPE: VkObjectType;
    const DISPATCHABLE: bool;
    fn raw(self) -> u64;
    fn from_raw(raw: u64) -> Self;
    fn at_device<L: Layer>(self, o: &L::Device) -> Option<Self>;
    fn at_instance<L: Layer>(self, o: &L::Instance) -> Option<Self>;
    fn wrap_at_device<L: Layer>(self, o: &L::Device) -> Self;
    fn wrap_at_instance<L: Layer>(self, o: &L::Instance) -> Self;
    fn forget_at_device<L: Layer>(self, o: &L::Device);
    fn forget_at_instance<L: Layer>(self, o: &L::Instance);
}

/// A handle the layer's unwrap refused: its type and value, for the report.
pub(crate) struct Refused(pub VkObjectType, pub u64);

/// The level whose layer object unwraps.
pub(crate) trait Unwrapper {
    fn handle<H: Handle>(&self, h: H) -> Option<H>;
    fn object(&self, object_type: VkObjectType, h: u64) -> Option<u64>;
    /// The layout of the descriptor update template the caller holds as `t` (`crate::templates`).
    fn template(&self, t: u64) -> Option<Arc<Layout>> {
        let _ = t;
        None
    }
}

/// Device-level commands: the layer's device object unwraps.
pub(crate) struct AtDevice<'a, L: Layer>(pub &'a DeviceState<L>);
/// Instance-level commands: the layer's instance object unwraps.
pub(crate) struct AtInstance<'a, L: Layer>(pub &'a InstanceState<L>);

impl<L: Layer> Unwrapper for AtDevice<'_, L> {
    #[inline(always)]
    fn handle<H: Handle>(&self, h: H) -> Option<H> {
        h.at_device::<L>(&self.0.hooks)
    }
    #[inline(always)]
    fn object(&self, object_type: VkObjectType, h: u64) -> Option<u64> {
        match object_type {
            // The instance's layer object unwraps these (`vkSetDebugUtilsObjectNameEXT` names
            // them through a device).
            VkObjectType::INSTANCE | VkObjectType::PHYSICAL_DEVICE => {
                AtInstance::<L>(self.0.instance()).object(object_type, h)
            }
            _ => L::unwrap_object(&self.0.hooks, object_type, h),
        }
    }
    fn template(&self, t: u64) -> Option<Arc<Layout>> {
        self.0.templates.layout(t)
    }
}

impl<L: Layer> Unwrapper for AtInstance<'_, L> {
    #[inline(always)]
    fn handle<H: Handle>(&self, h: H) -> Option<H> {
        h.at_instance::<L>(&self.0.hooks)
    }
    #[inline(always)]
    fn object(&self, object_type: VkObjectType, h: u64) -> Option<u64> {
        let o = &self.0.hooks;
        match object_type {
            VkObjectType::INSTANCE => VkInstance::from_raw(h).at_instance::<L>(o).map(|h| h.raw()),
            VkObjectType::PHYSICAL_DEVICE => {
                VkPhysicalDevice::from_raw(h).at_instance::<L>(o).map(|h| h.raw())
            }
            // An instance-level command's other objects (`vkDebugReportMessageEXT`'s) as they are.
            _ => Some(h),
        }
    }
}

pub(crate) use crate::scratch::Scratch;

/// A handle going down: null as it is, the layer's next-level handle otherwise.
#[inline(always)]
pub(crate) fn value<U: Unwrapper, H: Handle>(u: &U, h: H) -> Result<H, Refused> {
    if h.raw() == 0 {
        return Ok(h);
    }
    u.handle(h).ok_or(Refused(H::OBJECT_TYPE, h.raw()))
}

/// A handle the command may ignore (`noautovalidity`: a descriptor's sampler where the type takes
/// none, a push descriptor's `dstSet`): one the layer does not know goes down as it is, since
/// refusing it would refuse valid calls, and the first such is kept in `scratch` so that the entry
/// point reports it rather than passing it silently.
#[inline(always)]
pub(crate) fn lenient<U: Unwrapper, H: Handle>(u: &U, h: H, scratch: &mut Scratch) -> H {
    match value(u, h) {
        Ok(inner) => inner,
        Err(refused) => {
            scratch.passed_unknown.get_or_insert(refused);
            h
        }
    }
}

/// A `u64` object handle of `object_type` going down (`Layer::unwrap_object`).
#[inline(always)]
pub(crate) fn object<U: Unwrapper>(
    u: &U,
    object_type: VkObjectType,
    h: u64,
) -> Result<u64, Refused> {
    if h == 0 {
        return Ok(h);
    }
    u.object(object_type, h).ok_or(Refused(object_type, h))
}

/// `n` handles at `p` going down: `p` itself when none changes, else a copy.
///
/// # Safety
/// `p` is null or points to `n` handles.
pub(crate) unsafe fn handles<U: Unwrapper, H: Handle + 'static>(
    u: &U,
    p: *const H,
    n: usize,
    scratch: &mut Scratch,
) -> Result<*const H, Refused> {
    // SAFETY: per the contract.
    let given = unsafe { crate::unknown::parameter_array(p, n) };
    let mut copy: Option<*mut H> = None;
    for (i, &h) in given.iter().enumerate() {
        let inner = value(u, h)?;
        if inner != h {
            let copy = *copy.get_or_insert_with(|| scratch.copy_of(given));
            // SAFETY: the copy holds `given.len()` handles, of which `i` is one.
            unsafe { *copy.add(i) = inner };
        }
    }
    Ok(copy.map_or(p, |c| c as *const H))
}

/// A structure walker: a copy with the handles unwrapped, `None` when none changes.
pub(crate) type Walker<U, T> = unsafe fn(&U, &T, &mut Scratch) -> Result<Option<T>, Refused>;

/// `n` structures at `p` going down, each through `walk`: `p` itself when none changes, else a
/// copy of the array.
///
/// # Safety
/// `p` is null or points to `n` structures valid for `walk`.
pub(crate) unsafe fn structs<U: Unwrapper, T: Copy + 'static>(
    u: &U,
    p: *const T,
    n: usize,
    scratch: &mut Scratch,
    walk: Walker<U, T>,
) -> Result<*const T, Refused> {
    // SAFETY: per the contract.
    let given = unsafe { crate::unknown::parameter_array(p, n) };
    let mut copy: Option<*mut T> = None;
    for (i, s) in given.iter().enumerate() {
        // SAFETY: `s` is valid for `walk` (the contract).
        if let Some(inner) = unsafe { walk(u, s, scratch)? } {
            let copy = *copy.get_or_insert_with(|| scratch.copy_of(given));
            // SAFETY: the copy holds `given.len()` structures, of which `i` is one.
            unsafe { *copy.add(i) = inner };
        }
    }
    Ok(copy.map_or(p, |c| c as *const T))
}

/// A `pNext` chain going down: `p` itself when no node changes, else copies of the nodes up to the
/// last one that changes, relinked, the rest the application's. A node before a changed one whose
/// sType this registry does not know cannot be copied: the call is refused (`VK_OBJECT_TYPE_UNKNOWN`,
/// the sType as the value).
///
/// # Safety
/// `p` is null or a valid, null-terminated chain of structures.
pub(crate) unsafe fn chain<U: Unwrapper>(
    u: &U,
    p: *const c_void,
    scratch: &mut Scratch,
) -> Result<*const c_void, Refused> {
    if p.is_null() {
        return Ok(p);
    }
    // SAFETY: every chain structure starts as `VkBaseInStructure` (the contract).
    let head = unsafe { *(p as *const VkBaseInStructure) };
    let next = head.pNext as *const c_void;
    // SAFETY: the rest of the chain, as valid.
    let rest = unsafe { chain(u, next, scratch)? };
    // SAFETY: `p` is a structure of the type its sType names.
    let own = unsafe { generated::chain_node(u, p, head.sType, scratch)? };
    let node = match own {
        Some(node) => node,
        None if rest == next => return Ok(p),
        None => {
            let size = generated::structure_size(head.sType)
                .or_else(|| loader_structure_size(head.sType))
                .ok_or(Refused(VkObjectType::UNKNOWN, head.sType.0 as u64))?;
            // SAFETY: `p` holds `size` bytes (its sType's structure).
            unsafe { scratch.copy_bytes(p as *const u8, size) as *mut c_void }
        }
    };
    // SAFETY: `node` is this call's own copy of a chain structure, headed as `VkBaseOutStructure`.
    unsafe { (*(node as *mut VkBaseOutStructure)).pNext = rest as *mut VkBaseOutStructure };
    Ok(node)
}

/// The size of the loader's structures the registry has no structure for, which head the chains
/// of `vkCreateInstance` and `vkCreateDevice` (`vk_layer.h`).
fn loader_structure_size(stype: VkStructureType) -> Option<usize> {
    use vk_generated::layer_abi::{VkLayerDeviceCreateInfo, VkLayerInstanceCreateInfo};
    match stype {
        VkStructureType::LOADER_INSTANCE_CREATE_INFO => Some(size_of::<VkLayerInstanceCreateInfo>()),
        VkStructureType::LOADER_DEVICE_CREATE_INFO => Some(size_of::<VkLayerDeviceCreateInfo>()),
        _ => None,
    }
}

/// The chain node at `src`, a `T`, through `walk` with its `pNext` left out (the chain walk links
/// it): a copy kept for the call, `None` when nothing changes.
///
/// # Safety
/// `src` points to a valid `T`, a chain structure.
pub(crate) unsafe fn node<U: Unwrapper, T: Copy + 'static>(
    u: &U,
    src: *const c_void,
    scratch: &mut Scratch,
    walk: Walker<U, T>,
) -> Result<Option<*mut c_void>, Refused> {
    // SAFETY: per the contract.
    let mut head = unsafe { *(src as *const T) };
    // SAFETY: a chain structure starts as `VkBaseOutStructure`; `head` is our own copy.
    unsafe { (*(&mut head as *mut T as *mut VkBaseOutStructure)).pNext = std::ptr::null_mut() };
    // SAFETY: `head` is as valid as `*src`, its chain cut.
    Ok(unsafe { walk(u, &head, scratch)? }.map(|copy| scratch.copy_of(&[copy]) as *mut c_void))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Knows the handles of value 1 (its own and the next level's alike) and no other.
    struct KnowsOne;

    impl Unwrapper for KnowsOne {
        fn handle<H: Handle>(&self, h: H) -> Option<H> {
            (h.raw() == 1).then_some(h)
        }
        fn object(&self, _: VkObjectType, h: u64) -> Option<u64> {
            (h == 1).then_some(h)
        }
    }

    fn walk(sampler: u64, image_view: u64) -> (Result<Option<VkDescriptorImageInfo>, Refused>, Scratch) {
        let info = VkDescriptorImageInfo {
            sampler: VkSampler(sampler),
            imageView: VkImageView(image_view),
            imageLayout: VkImageLayout::GENERAL,
        };
        let mut scratch = Scratch::new();
        // SAFETY: a VkDescriptorImageInfo holds no pointer.
        let walked = unsafe { unwrap_VkDescriptorImageInfo(&KnowsOne, &info, &mut scratch) };
        (walked, scratch)
    }

    #[test]
    fn a_member_the_command_may_ignore_goes_down_unknown_and_is_kept_for_the_report() {
        // The sampler (ignored by image-only descriptor types, hence noautovalidity) is unknown.
        let (walked, mut scratch) = walk(7, 1);
        assert!(matches!(walked, Ok(None)), "the call goes down, the sampler as it was");
        let passed = scratch.passed_unknown.take().expect("the unknown sampler is kept for the report");
        assert_eq!((passed.0, passed.1), (VkObjectType::SAMPLER, 7));
    }

    #[test]
    fn known_and_null_members_leave_nothing_to_report() {
        let (walked, scratch) = walk(0, 1);
        assert!(matches!(walked, Ok(None)));
        assert!(scratch.passed_unknown.is_none());
    }
}
