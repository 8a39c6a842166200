//! Wrapping on the way up: what a generated entry point of a layer with
//! [`WRAPS_HANDLES`](crate::Layer::WRAPS_HANDLES) does with the handles the next level brings back
//! (created, allocated, enumerated, queried) before `post_call_record_*` and the caller see them,
//! and with those a command destroys or frees, after `post_call_record_*`. Each handle goes
//! through the layer's wrap of its type (`Layer::wrap_handle`, `wrap_queue`, ...), which is
//! written over the next level's in the caller's output; destroyed ones through its forget
//! (`Layer::forget_handle`, `forget_command_buffer`).
//!
//! The chassis records, per instance and per device, the handles another object owns ([`Owned`]):
//! a pool's command buffers and descriptor sets, a swapchain's images, and the objects a query
//! returns again and again (queues, physical devices, displays: the same wrapper each time, found
//! by the next level's handle). Destroying the owner (a pool, a swapchain), freeing or resetting a
//! pool forgets them. The records hold plain values (no reference to them is handed out), so
//! removing one frees nothing a caller may still hold.
//!
//! Which commands do what is generated from `vk.xml` (`gen/wrap.rs`'s structure walkers, the
//! statements in `gen/entries.rs`, by `generator/src/emit/layer_wrap.rs`), with a short table of
//! exceptions ([`WRAP_EXCEPTIONS`]).

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use vk_generated::types::*;

use crate::state::{DeviceState, InstanceState, Layer};
use crate::unwrap::Handle;

#[allow(non_snake_case, clippy::too_many_arguments, unused_variables, dead_code)]
#[rustfmt::skip]
#[path = "gen/wrap.rs"]
mod generated;

pub use generated::{NOT_WRAPPED, WRAP_EXCEPTIONS};
// The structure walkers, by structure name, for the generated entry points.
pub(crate) use generated::*;

/// An object that owns handles, as the caller knows it: its type and value.
pub(crate) type Key = (i32, u64);

/// The key of `h`.
#[inline(always)]
pub(crate) fn key<H: Handle>(h: H) -> Key {
    (H::OBJECT_TYPE.0, h.raw())
}

/// A handle the chassis wrapped that another object owns: its type, the next level's value, the
/// caller's, and how the layer forgets it.
struct Child<O> {
    object_type: i32,
    inner: u64,
    wrapped: u64,
    forget: fn(&O, u64),
}

/// The handles each owner holds, for one instance or device of the layer (`O` is the layer's
/// object of that level).
pub(crate) struct Owned<O> {
    children: Mutex<HashMap<Key, Vec<Child<O>>>>,
}

impl<O> Default for Owned<O> {
    fn default() -> Self {
        Owned {
            children: Mutex::new(HashMap::new()),
        }
    }
}

impl<O> Owned<O> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Vec<Child<O>>>> {
        // A panic elsewhere leaves plain values: the map is still consistent.
        self.children.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// How the handles of one output came back.
pub(crate) enum How {
    /// New objects, owned by the given object (a pool) when it frees them.
    Created(Option<Key>),
    /// Objects that exist already, under the given owner: the wrapper made the first time.
    Existing(Key),
}

/// The level whose layer object wraps and forgets, and its records.
pub(crate) trait Wrapper {
    /// The layer's object of the level.
    type Object;
    /// The layer's object.
    fn object(&self) -> &Self::Object;
    /// The records of the level.
    fn owned(&self) -> &Owned<Self::Object>;
    /// The layer's handle for the next level's `h`.
    ///
    /// # Safety
    /// `h` is a live handle the next level has just returned.
    unsafe fn wrap<H: Handle>(&self, h: H) -> H;
    /// How the layer forgets a handle of type `H`.
    fn forget_fn<H: Handle>(&self) -> fn(&Self::Object, u64);
}

/// Device-level commands: the layer's device object wraps; `device` is a dispatchable handle of
/// the device as the caller passed it (the loader's dispatch pointer first).
pub(crate) struct AtDevice<'a, L: Layer> {
    state: &'a DeviceState<L>,
    device: *mut c_void,
}

impl<'a, L: Layer> AtDevice<'a, L> {
    pub(crate) fn new(state: &'a DeviceState<L>, device: *mut c_void) -> Self {
        AtDevice { state, device }
    }
}

impl<L: Layer> Wrapper for AtDevice<'_, L> {
    type Object = L::Device;
    fn object(&self) -> &L::Device {
        &self.state.hooks
    }
    fn owned(&self) -> &Owned<L::Device> {
        &self.state.owned
    }
    unsafe fn wrap<H: Handle>(&self, h: H) -> H {
        // A queue or command buffer of the next level gets the loader's dispatch pointer, which
        // the loader gives only the handle it is handed (the layer's): the layers below find
        // their state by it, and the layer's wrapper copies it.
        if H::DISPATCHABLE {
            if let Some(set) = self.state.link.set_loader_data {
                // SAFETY: `device` is the caller's live device-level handle, whose first word is
                // the loader's; `h` a dispatchable object the next level has just returned.
                unsafe { set(VkDevice(self.device), h.raw() as usize as *mut c_void) };
            }
        }
        h.wrap_at_device::<L>(&self.state.hooks)
    }
    fn forget_fn<H: Handle>(&self) -> fn(&L::Device, u64) {
        |o, raw| H::from_raw(raw).forget_at_device::<L>(o)
    }
}

/// Instance-level commands: the layer's instance object wraps.
pub(crate) struct AtInstance<'a, L: Layer> {
    state: &'a InstanceState<L>,
}

impl<'a, L: Layer> AtInstance<'a, L> {
    pub(crate) fn new(state: &'a InstanceState<L>) -> Self {
        AtInstance { state }
    }
}

impl<L: Layer> Wrapper for AtInstance<'_, L> {
    type Object = L::Instance;
    fn object(&self) -> &L::Instance {
        &self.state.hooks
    }
    fn owned(&self) -> &Owned<L::Instance> {
        &self.state.owned
    }
    unsafe fn wrap<H: Handle>(&self, h: H) -> H {
        h.wrap_at_instance::<L>(&self.state.hooks)
    }
    fn forget_fn<H: Handle>(&self) -> fn(&L::Instance, u64) {
        |o, raw| H::from_raw(raw).forget_at_instance::<L>(o)
    }
}

/// Whether a command's outputs were written: a success code but `VK_OPERATION_DEFERRED_KHR`
/// (`deferrable`: written when the operation completes), or any result for a creation that keeps
/// what it made on failure (`kept`).
#[inline(always)]
pub(crate) fn returned(result: VkResult, deferrable: bool, kept: bool) -> bool {
    if deferrable && result == VkResult::OPERATION_DEFERRED_KHR {
        return false;
    }
    result.0 >= 0 || kept
}

/// The `n` handles at `p` the next level has just written, each non-null one replaced by the
/// layer's, as `how` says.
///
/// # Safety
/// `p` is null or points to `n` writable handles, live ones of the next level or null.
pub(crate) unsafe fn handles<W: Wrapper, H: Handle>(w: &W, p: *mut H, n: usize, how: &How) {
    if p.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: within the `n` handles (the contract).
        let slot = unsafe { p.add(i) };
        // SAFETY: as above.
        let inner = unsafe { slot.read() };
        if inner.raw() == 0 {
            continue;
        }
        let wrapped = match how {
            // SAFETY: a live handle the next level has just returned (the contract).
            How::Created(None) => unsafe { w.wrap(inner) },
            How::Created(Some(owner)) => {
                // SAFETY: as above.
                let wrapped = unsafe { w.wrap(inner) };
                w.owned().lock().entry(*owner).or_default().push(Child {
                    object_type: H::OBJECT_TYPE.0,
                    inner: inner.raw(),
                    wrapped: wrapped.raw(),
                    forget: w.forget_fn::<H>(),
                });
                wrapped
            }
            How::Existing(owner) => {
                // Under the lock, so that two threads asking for one object get one wrapper.
                let mut owned = w.owned().lock();
                let children = owned.entry(*owner).or_default();
                match children
                    .iter()
                    .find(|c| c.object_type == H::OBJECT_TYPE.0 && c.inner == inner.raw())
                {
                    Some(known) => H::from_raw(known.wrapped),
                    None => {
                        // SAFETY: as above.
                        let wrapped = unsafe { w.wrap(inner) };
                        children.push(Child {
                            object_type: H::OBJECT_TYPE.0,
                            inner: inner.raw(),
                            wrapped: wrapped.raw(),
                            forget: w.forget_fn::<H>(),
                        });
                        wrapped
                    }
                }
            }
        };
        // SAFETY: the caller's output (the contract).
        unsafe { slot.write(wrapped) };
    }
}

/// The `n` structures at `p` the next level has just written, each through `walk`.
///
/// # Safety
/// `p` is null or points to `n` writable structures valid for `walk`.
pub(crate) unsafe fn structs<W: Wrapper, T>(
    w: &W,
    p: *mut T,
    n: usize,
    how: &How,
    walk: unsafe fn(&W, *mut T, &How),
) {
    if p.is_null() {
        return;
    }
    for i in 0..n {
        // SAFETY: within the `n` structures, valid for `walk` (the contract).
        unsafe { walk(w, p.add(i), how) };
    }
}

/// Forgets what `owner` holds, all of it.
fn forget_children<W: Wrapper>(w: &W, owner: Key) {
    let children = w.owned().lock().remove(&owner).unwrap_or_default();
    for child in children {
        (child.forget)(w.object(), child.wrapped);
    }
}

/// `h` is destroyed: the layer forgets it, and what it owned (a pool's command buffers or
/// descriptor sets, a swapchain's images).
pub(crate) fn destroyed<W: Wrapper, H: Handle>(w: &W, h: H) {
    if h.raw() == 0 {
        return;
    }
    forget_children(w, key(h));
    (w.forget_fn::<H>())(w.object(), h.raw());
}

/// The `n` handles at `p` are freed (from the pool `owner`): the layer forgets them.
///
/// # Safety
/// `p` is null or points to `n` handles.
pub(crate) unsafe fn freed<W: Wrapper, H: Handle>(
    w: &W,
    owner: Option<Key>,
    p: *const H,
    n: usize,
) {
    // SAFETY: per the contract.
    let freed = unsafe { crate::unknown::parameter_array(p, n) };
    if let Some(owner) = owner {
        if let Some(children) = w.owned().lock().get_mut(&owner) {
            children.retain(|c| {
                c.object_type != H::OBJECT_TYPE.0 || !freed.iter().any(|h| h.raw() == c.wrapped)
            });
        }
    }
    let forget = w.forget_fn::<H>();
    for h in freed.iter().filter(|h| h.raw() != 0) {
        forget(w.object(), h.raw());
    }
}

/// The pool `owner` is reset: what it held is forgotten.
pub(crate) fn reset<W: Wrapper>(w: &W, owner: Key) {
    forget_children(w, owner);
}
