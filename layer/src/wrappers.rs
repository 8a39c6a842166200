//! [`Wrappers`]: a wrapping layer's handles and the next level's, for every type, made on the way
//! up (`Layer::wrap_*`), looked up on the way down (`Layer::unwrap_*`) and forgotten
//! (`Layer::forget_*`).

use std::any::Any;
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use vk_generated::types::VkObjectType;

use crate::{DispatchableHandle, NonDispatchableHandle};

/// The first non-dispatchable wrapper: far from the pointers and small numbers drivers hand out,
/// so that every wrapper differs from every handle of the next level.
const FIRST: u64 = 0x7772_0000_0000_0001;

/// The maps' hash: their keys are numbers this map made (one after another) and addresses, so a
/// multiply by 2^64 / the golden ratio spreads them over the table as well as std's SipHash does,
/// at a fraction of its cost, which every unwrap of every call pays (`vkCmdDraw` through the
/// wrap-all layer: `bench layer-sdk`). The high half is folded into the low bits the table's
/// index takes, so that aligned addresses do not fall in a sixteenth of the buckets.
#[derive(Default)]
struct IntegerHasher(u64);

impl Hasher for IntegerHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<IntegerHasher>>;

/// A layer's wrappers: for each handle it handed up, the next level's handle and its type.
///
/// A non-dispatchable wrapper is a number of its own; a dispatchable one is an allocation whose
/// first word is the loader's dispatch pointer, as the loader and the layers above need, freed
/// when it is forgotten. Values are plain (no reference to an entry is handed out), so forgetting
/// one frees nothing a caller may still hold; a freed dispatchable wrapper is a handle the
/// application may no longer use (the API's rule).
///
/// ```
/// use vk_layer::vk::types::*;
/// use vk_layer::Wrappers;
///
/// let wrappers = Wrappers::new();
/// let image = wrappers.wrap(VkImage(0x51));
/// assert_ne!(image, VkImage(0x51));
/// assert_eq!(wrappers.unwrap(image), Some(VkImage(0x51)));
/// assert_eq!(wrappers.unwrap(VkBuffer(image.0)), None, "another type's");
/// assert_eq!(wrappers.live(VkObjectType::IMAGE), 1);
/// wrappers.forget(image);
/// assert_eq!(wrappers.unwrap(image), None);
/// ```
pub struct Wrappers {
    /// This set's number, unique in the process, which keys the threads' [`LAST`] lookups.
    id: u64,
    /// How many dispatchable wrappers have been forgotten: a thread's [`LAST`] lookup made
    /// before the latest holds no more.
    forgotten: AtomicU64,
    /// The non-dispatchable types wrapped ([`of`](Self::of)); every one when `None`.
    only: Option<Vec<VkObjectType>>,
    next: AtomicU64,
    /// Non-dispatchable wrapper -> (type, the next level's handle).
    handles: RwLock<Map<u64, (VkObjectType, u64)>>,
    /// Dispatchable wrapper (the address of its word) -> (type, the next level's handle).
    objects: RwLock<Map<usize, (VkObjectType, usize)>>,
    /// What the layer keeps with a wrapper ([`attach`](Self::attach)), by its type and value.
    states: RwLock<HashMap<(i32, u64), State>>,
}

/// A layer's state of one object, shared with whoever holds it: forgetting the wrapper drops the
/// set's reference only.
type State = Arc<dyn Any + Send + Sync>;

/// The number of the next set of wrappers.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A thread's last dispatchable lookup, which the next one with the same handle reuses without
/// the lock while no wrapper of the set has been forgotten since: the calls recording one command
/// buffer come from one thread, one after another.
#[derive(Clone, Copy)]
struct Last {
    /// The set's `id` (0: none).
    id: u64,
    /// Its `forgotten` count when the lookup was made.
    forgotten: u64,
    wrapped: usize,
    object_type: VkObjectType,
    inner: usize,
}

const NO_LOOKUP: Last = Last {
    id: 0,
    forgotten: 0,
    wrapped: 0,
    object_type: VkObjectType::UNKNOWN,
    inner: 0,
};

thread_local! {
    /// One per [`slot`]: a queue submit unwraps a queue and command buffers in turn.
    static LAST: [Cell<Last>; 4] = const { [const { Cell::new(NO_LOOKUP) }; 4] };
}

/// The slot of [`LAST`] that lookups of `object_type` use.
const fn slot(object_type: VkObjectType) -> usize {
    match object_type {
        VkObjectType::COMMAND_BUFFER => 0,
        VkObjectType::QUEUE => 1,
        VkObjectType::DEVICE => 2,
        _ => 3,
    }
}

impl Default for Wrappers {
    fn default() -> Self {
        Wrappers {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            forgotten: AtomicU64::new(0),
            only: None,
            next: AtomicU64::new(0),
            handles: RwLock::default(),
            objects: RwLock::default(),
            states: RwLock::default(),
        }
    }
}

// A panic elsewhere leaves plain values: the map is still consistent. Lookups, on every call,
// share the lock; wrapping and forgetting take it alone.
fn read<T>(m: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(m: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

impl Wrappers {
    /// No wrappers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Wrappers of the non-dispatchable handles of `types` only: [`wrap`](Self::wrap) gives a
    /// handle of another type back as it is, [`unwrap`](Self::unwrap) takes it as it is, so
    /// that a layer's generic `wrap_handle` and `unwrap_handle` need not tell the types apart.
    /// (Dispatchable handles are wrapped where the layer asks, by `wrap_dispatchable`.)
    ///
    /// ```
    /// use vk_layer::vk::types::*;
    ///
    /// let images = vk_layer::Wrappers::of(&[VkObjectType::IMAGE]);
    /// assert_ne!(images.wrap(VkImage(0x51)), VkImage(0x51));
    /// assert_eq!(images.wrap(VkBuffer(0x52)), VkBuffer(0x52));
    /// assert_eq!(images.unwrap(VkBuffer(0x52)), Some(VkBuffer(0x52)));
    /// ```
    pub fn of(types: &[VkObjectType]) -> Self {
        let mut wrappers = Self::default();
        wrappers.only = Some(types.to_vec());
        wrappers
    }

    /// Whether handles of `object_type` are wrapped.
    fn wraps(&self, object_type: VkObjectType) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.contains(&object_type))
    }

    /// A new wrapper of the next level's `inner` (`inner` itself for a type [`of`](Self::of)
    /// leaves out).
    pub fn wrap<H: NonDispatchableHandle>(&self, inner: H) -> H {
        if !self.wraps(H::OBJECT_TYPE) {
            return inner;
        }
        let wrapped = FIRST + self.next.fetch_add(1, Ordering::Relaxed);
        write(&self.handles).insert(wrapped, (H::OBJECT_TYPE, inner.raw()));
        H::from_raw(wrapped)
    }

    /// The next level's handle for `wrapped`, `None` when it is no wrapper of this type
    /// (`wrapped` itself for a type [`of`](Self::of) leaves out).
    pub fn unwrap<H: NonDispatchableHandle>(&self, wrapped: H) -> Option<H> {
        if !self.wraps(H::OBJECT_TYPE) {
            return Some(wrapped);
        }
        match read(&self.handles).get(&wrapped.raw()) {
            Some(&(t, inner)) if t == H::OBJECT_TYPE => Some(H::from_raw(inner)),
            _ => None,
        }
    }

    /// Forgets `wrapped`; the next level's handle it stood for, if it was one of this type.
    pub fn forget<H: NonDispatchableHandle>(&self, wrapped: H) -> Option<H> {
        let mut handles = write(&self.handles);
        match handles.get(&wrapped.raw()) {
            Some(&(t, inner)) if t == H::OBJECT_TYPE => {
                handles.remove(&wrapped.raw());
                drop(handles);
                self.detach((H::OBJECT_TYPE.0, wrapped.raw()));
                Some(H::from_raw(inner))
            }
            _ => None,
        }
    }

    /// A new wrapper of the next level's dispatchable `inner`, its first word `inner`'s (the
    /// loader's dispatch pointer).
    ///
    /// # Safety
    /// `inner` is a live dispatchable handle: its first word can be read.
    pub unsafe fn wrap_dispatchable<H: DispatchableHandle>(&self, inner: H) -> H {
        // SAFETY: per the contract.
        let dispatch = unsafe { *(inner.as_ptr() as *const usize) };
        // The loader writes the word through the handle (its dispatch pointer): an atomic, owned
        // through the raw pointer until `forget_dispatchable` or the drop.
        let word = Box::into_raw(Box::new(AtomicUsize::new(dispatch)));
        write(&self.objects).insert(word as usize, (H::OBJECT_TYPE, inner.as_ptr() as usize));
        H::from_ptr(word as *mut c_void)
    }

    /// The next level's handle for the dispatchable `wrapped`, `None` when it is no wrapper of
    /// this type.
    pub fn unwrap_dispatchable<H: DispatchableHandle>(&self, wrapped: H) -> Option<H> {
        let key = wrapped.as_ptr() as usize;
        // Read before the map: a wrapper forgotten after this count was read is one the caller
        // uses while another thread destroys it, which the API forbids.
        let forgotten = self.forgotten.load(Ordering::Acquire);
        let slot = const { slot(H::OBJECT_TYPE) };
        let last = LAST.try_with(|l| l[slot].get()).ok();
        if let Some(last) = last.filter(|l| {
            (l.id, l.forgotten, l.wrapped, l.object_type)
                == (self.id, forgotten, key, H::OBJECT_TYPE)
        }) {
            return Some(H::from_ptr(last.inner as *mut c_void));
        }
        let inner = match read(&self.objects).get(&key) {
            Some(&(t, inner)) if t == H::OBJECT_TYPE => inner,
            _ => return None,
        };
        let last = Last {
            id: self.id,
            forgotten,
            wrapped: key,
            object_type: H::OBJECT_TYPE,
            inner,
        };
        // None while the thread's locals are being destroyed: nothing kept then.
        let _ = LAST.try_with(|l| l[slot].set(last));
        Some(H::from_ptr(inner as *mut c_void))
    }

    /// Forgets the dispatchable `wrapped` and frees it; the next level's handle it stood for.
    pub fn forget_dispatchable<H: DispatchableHandle>(&self, wrapped: H) -> Option<H> {
        let key = wrapped.as_ptr() as usize;
        let mut objects = write(&self.objects);
        match objects.get(&key) {
            Some(&(t, inner)) if t == H::OBJECT_TYPE => {
                objects.remove(&key);
                // Before its word is freed (and its address perhaps reused): no thread's last
                // lookup holds it any more.
                self.forgotten.fetch_add(1, Ordering::Release);
                // SAFETY: `key` came from `Box::into_raw` in `wrap_dispatchable` and has just left
                // the map, so it is freed once.
                drop(unsafe { Box::from_raw(key as *mut AtomicUsize) });
                drop(objects);
                self.detach((H::OBJECT_TYPE.0, key as u64));
                Some(H::from_ptr(inner as *mut c_void))
            }
            _ => None,
        }
    }

    /// Keeps `state` with the live wrapper `wrapped` (replacing what was kept) until it is
    /// forgotten: a layer's per-object state, found by the handle the application passes. False,
    /// keeping nothing, when `wrapped` is no wrapper of this set's of its type.
    ///
    /// ```
    /// use vk_layer::vk::types::*;
    ///
    /// let wrappers = vk_layer::Wrappers::new();
    /// let image = wrappers.wrap(VkImage(0x51));
    /// assert!(wrappers.attach(image, 4096_u64));
    /// let size = wrappers.attached::<_, u64>(image).unwrap();
    /// wrappers.forget(image);
    /// assert_eq!(*size, 4096, "what a caller holds outlives the wrapper");
    /// assert!(wrappers.attached::<_, u64>(image).is_none());
    /// ```
    pub fn attach<H: NonDispatchableHandle, T: Any + Send + Sync>(
        &self,
        wrapped: H,
        state: T,
    ) -> bool {
        if !self.wraps(H::OBJECT_TYPE) || self.unwrap(wrapped).is_none() {
            return false;
        }
        self.keep((H::OBJECT_TYPE.0, wrapped.raw()), Arc::new(state));
        true
    }

    /// What [`attach`](Self::attach) kept with `wrapped`, if it is a `T`.
    pub fn attached<H: NonDispatchableHandle, T: Any + Send + Sync>(
        &self,
        wrapped: H,
    ) -> Option<Arc<T>> {
        self.kept((H::OBJECT_TYPE.0, wrapped.raw()))
    }

    /// [`attach`](Self::attach) for a dispatchable wrapper (`wrap_dispatchable`'s).
    pub fn attach_dispatchable<H: DispatchableHandle, T: Any + Send + Sync>(
        &self,
        wrapped: H,
        state: T,
    ) -> bool {
        if self.unwrap_dispatchable(wrapped).is_none() {
            return false;
        }
        self.keep(
            (H::OBJECT_TYPE.0, wrapped.as_ptr() as usize as u64),
            Arc::new(state),
        );
        true
    }

    /// What [`attach_dispatchable`](Self::attach_dispatchable) kept with `wrapped`, if it is a `T`.
    pub fn attached_dispatchable<H: DispatchableHandle, T: Any + Send + Sync>(
        &self,
        wrapped: H,
    ) -> Option<Arc<T>> {
        self.kept((H::OBJECT_TYPE.0, wrapped.as_ptr() as usize as u64))
    }

    fn keep(&self, key: (i32, u64), state: State) {
        // What it replaces is dropped after the lock, as in `detach`.
        let replaced = write(&self.states).insert(key, state);
        drop(replaced);
    }

    fn kept<T: Any + Send + Sync>(&self, key: (i32, u64)) -> Option<Arc<T>> {
        let state = read(&self.states).get(&key)?.clone();
        state.downcast::<T>().ok()
    }

    /// Drops the set's reference to what was kept with a wrapper being forgotten.
    fn detach(&self, key: (i32, u64)) {
        // Taken out under the lock, dropped after it: a state's drop may call into the set.
        let state = write(&self.states).remove(&key);
        drop(state);
    }

    /// How many wrappers of `object_type` live.
    pub fn live(&self, object_type: VkObjectType) -> usize {
        let handles = read(&self.handles)
            .values()
            .filter(|(t, _)| *t == object_type)
            .count();
        let objects = read(&self.objects)
            .values()
            .filter(|(t, _)| *t == object_type)
            .count();
        handles + objects
    }
}

impl Drop for Wrappers {
    fn drop(&mut self) {
        let objects = self.objects.get_mut().unwrap_or_else(|e| e.into_inner());
        for (word, _) in objects.drain() {
            // SAFETY: each key came from `Box::into_raw` in `wrap_dispatchable` and is freed once,
            // here or in `forget_dispatchable`, which removed it.
            drop(unsafe { Box::from_raw(word as *mut AtomicUsize) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk_generated::types::*;

    #[test]
    fn dispatchable_wrappers_copy_the_dispatch_word_and_are_freed_when_forgotten() {
        let mut queue_object = 0xD15_usize; // the next level's queue: its dispatch word
        let inner = VkQueue(&mut queue_object as *mut usize as *mut c_void);
        let wrappers = Wrappers::new();
        // SAFETY: `inner` points to a readable word.
        let wrapped = unsafe { wrappers.wrap_dispatchable(inner) };
        assert_ne!(wrapped, inner);
        // SAFETY: a wrapper's first word, alive until forgotten.
        assert_eq!(unsafe { *(wrapped.0 as *const usize) }, 0xD15);
        assert_eq!(wrappers.unwrap_dispatchable(wrapped), Some(inner));
        assert_eq!(
            wrappers.unwrap_dispatchable(VkCommandBuffer(wrapped.0)),
            None
        );
        assert_eq!(wrappers.live(VkObjectType::QUEUE), 1);
        assert_eq!(wrappers.forget_dispatchable(wrapped), Some(inner));
        assert_eq!(wrappers.unwrap_dispatchable(wrapped), None);
        assert_eq!(wrappers.forget_dispatchable(wrapped), None, "freed once");
    }

    #[test]
    fn state_is_kept_with_live_wrappers_only_and_dropped_with_them() {
        let mut queue_object = 0xD15_usize;
        let inner = VkQueue(&mut queue_object as *mut usize as *mut c_void);
        let wrappers = Wrappers::of(&[VkObjectType::IMAGE]);
        // SAFETY: `inner` points to a readable word.
        let queue = unsafe { wrappers.wrap_dispatchable(inner) };
        let image = wrappers.wrap(VkImage(0x51));
        assert!(wrappers.attach_dispatchable(queue, "graphics"));
        assert!(wrappers.attach(image, 1_u32));
        assert!(wrappers.attach(image, 2_u32), "replaced");
        assert!(!wrappers.attach(VkImage(0x52), 3_u32), "no wrapper");
        assert!(
            !wrappers.attach(VkBuffer(0x53), 3_u32),
            "a type the set does not wrap"
        );
        assert!(
            !wrappers.attach_dispatchable(inner, 3_u32),
            "the next level's own handle"
        );
        assert_eq!(wrappers.attached::<_, u32>(image).as_deref(), Some(&2));
        assert_eq!(
            wrappers.attached::<_, u64>(image),
            None,
            "another type of state"
        );
        assert_eq!(
            wrappers.attached_dispatchable::<_, &str>(queue).as_deref(),
            Some(&"graphics")
        );
        let held = wrappers.attached::<_, u32>(image).unwrap();
        wrappers.forget(image);
        wrappers.forget_dispatchable(queue);
        assert_eq!(
            (Arc::strong_count(&held), *held),
            (1, 2),
            "the set's reference is dropped"
        );
        assert_eq!(wrappers.attached::<_, u32>(image), None);
        assert_eq!(wrappers.attached_dispatchable::<_, &str>(queue), None);
    }

    #[test]
    fn a_threads_last_lookup_is_reused_only_for_the_same_live_wrapper_of_the_same_set() {
        let (mut a_object, mut b_object) = (1_usize, 2_usize);
        let a = VkCommandBuffer(&mut a_object as *mut usize as *mut c_void);
        let b = VkCommandBuffer(&mut b_object as *mut usize as *mut c_void);
        let (wrappers, others) = (Wrappers::new(), Wrappers::new());
        // SAFETY: `a` and `b` point to readable words.
        let (wa, wb) = unsafe { (wrappers.wrap_dispatchable(a), wrappers.wrap_dispatchable(b)) };
        assert_eq!(wrappers.unwrap_dispatchable(wa), Some(a));
        assert_eq!(
            wrappers.unwrap_dispatchable(wa),
            Some(a),
            "the last lookup again"
        );
        assert_eq!(others.unwrap_dispatchable(wa), None, "another set's");
        assert_eq!(
            wrappers.unwrap_dispatchable(VkQueue(wa.0)),
            None,
            "another type's"
        );
        assert_eq!(wrappers.unwrap_dispatchable(wa), Some(a));
        wrappers.forget_dispatchable(wa);
        assert_eq!(
            wrappers.unwrap_dispatchable(wa),
            None,
            "forgotten since the last lookup"
        );
        // A new wrapper may take the freed one's address: it stands for its own handle.
        // SAFETY: `b` points to a readable word.
        let wb2 = unsafe { wrappers.wrap_dispatchable(b) };
        assert_eq!(wrappers.unwrap_dispatchable(wb2), Some(b));
        assert_eq!(wrappers.unwrap_dispatchable(wb), Some(b));
    }
}
