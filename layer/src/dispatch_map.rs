//! [`DispatchMap`]: per-instance and per-device state keyed by the dispatch pointer (the first
//! word of a dispatchable handle), read without a lock.
//!
//! Every intercepted call looks its state up, from any thread, while creation and destruction are
//! rare. So writers (insert, remove) take a mutex and readers take none: slots are atomic
//! (key, value) pairs in open-addressed chunks of `CHUNK` (64) slots; a full chunk links a new one,
//! and chunks live as long as the map. A writer publishes the value before the key (release), a
//! reader loads the key (acquire) and then the value. Removal leaves a tombstone so later probes
//! go on. A value is freed only by `remove`, which the chassis calls from `vkDestroy*`, when the
//! Vulkan API already forbids any other use of the object and of its children. A sharded
//! `RwLock` map was the alternative; it still writes a shared cache line on every read.
//!
//! [`get`](DispatchMap::get) hands out plain references (no count to touch on the dispatch path),
//! so nothing safe may free a stored value: [`insert`](DispatchMap::insert) refuses a key that
//! holds one, and only the `unsafe` [`remove`](DispatchMap::remove) and dropping the map (which
//! no reference outlives) free values.

use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Slots per chunk.
const CHUNK: usize = 64;
/// A slot never used: probes stop here. Dispatch pointers are never null.
const EMPTY: usize = 0;
/// A slot whose state was removed: probes go on past it, inserts may reuse it.
const TOMBSTONE: usize = usize::MAX;

struct Slot<T> {
    key: AtomicUsize,
    value: AtomicPtr<T>,
}

// The `EMPTY` constants only initialize arrays and statics, each use a fresh value.
#[allow(clippy::declare_interior_mutable_const)]
impl<T> Slot<T> {
    const EMPTY: Self = Slot {
        key: AtomicUsize::new(EMPTY),
        value: AtomicPtr::new(ptr::null_mut()),
    };
}

/// The slot where a probe for `key` starts, below `CHUNK`.
fn home(key: usize) -> usize {
    // Dispatch tables are allocations at least 8-byte aligned: drop the always-zero bits.
    // Fibonacci hashing: 2^BITS / golden ratio, the 64-bit constant's top half on 32-bit targets.
    (key >> 3).wrapping_mul((0x9E37_79B9_7F4A_7C15_u64 >> (64 - usize::BITS)) as usize) >> (usize::BITS - CHUNK.trailing_zeros())
}

struct Chunk<T> {
    slots: [Slot<T>; CHUNK],
    next: AtomicPtr<Chunk<T>>,
}

#[allow(clippy::declare_interior_mutable_const)]
impl<T> Chunk<T> {
    const EMPTY: Self = Chunk {
        slots: [Slot::EMPTY; CHUNK],
        next: AtomicPtr::new(ptr::null_mut()),
    };

    /// The slots in the order a probe for `key` visits them.
    fn probe(&self, key: usize) -> impl Iterator<Item = &Slot<T>> {
        let start = home(key);
        (0..CHUNK).map(move |i| &self.slots[(start + i) % CHUNK])
    }
}

/// A map from dispatch pointers to owned values; lock-free lookups, locked inserts and removals.
///
/// A stored value stays where it is until the `unsafe` [`remove`](Self::remove): inserting
/// again under its key is refused, so a reference from [`get`](Self::get) cannot dangle.
///
/// ```
/// use vk_layer::dispatch_map::DispatchMap;
///
/// let map = DispatchMap::new();
/// assert!(map.insert(0x1000, Box::new(vec![1, 2, 3])).is_ok());
/// let first = map.get(0x1000).unwrap();
/// let refused = map.insert(0x1000, Box::new(vec![4])).unwrap_err();
/// assert_eq!((first[2], refused[0]), (3, 4));
/// ```
///
/// Freeing a value takes `unsafe`, whose caller promises that no reference is in use:
///
/// ```compile_fail,E0133
/// use vk_layer::dispatch_map::DispatchMap;
///
/// let map = DispatchMap::new();
/// let _ = map.insert(0x1000, Box::new(vec![1, 2, 3]));
/// let first = map.get(0x1000).unwrap();
/// drop(map.remove(0x1000));
/// println!("{}", first[2]);
/// ```
///
/// Values move between threads (inserted on one, dropped on another), so a shared map needs them
/// `Send` as well as `Sync`:
///
/// ```compile_fail,E0277
/// fn shared<T: Sync>() {}
/// shared::<vk_layer::dispatch_map::DispatchMap<std::sync::MutexGuard<'static, ()>>>();
/// ```
pub struct DispatchMap<T> {
    first: Chunk<T>,
    writers: Mutex<()>,
    owns: PhantomData<Box<T>>,
}

// SAFETY: the map owns its values as a `Box<T>` would; sending the map sends them.
unsafe impl<T: Send> Send for DispatchMap<T> {}
// SAFETY: through `&DispatchMap` values are read from any thread (`T: Sync`) and inserted on one
// thread and removed or dropped on another (`T: Send`); slots and links are atomics, and writers
// hold the mutex.
unsafe impl<T: Send + Sync> Sync for DispatchMap<T> {}

impl<T> Default for DispatchMap<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> DispatchMap<T> {
    /// An empty map, usable in a `static`.
    pub const fn new() -> Self {
        DispatchMap {
            first: Chunk::EMPTY,
            writers: Mutex::new(()),
            owns: PhantomData,
        }
    }

    /// The chunks, first to last.
    fn chunks(&self) -> impl Iterator<Item = &Chunk<T>> {
        // SAFETY: linked chunks are leaked boxes, freed only by `Drop`, which has `&mut self`.
        std::iter::successors(Some(&self.first), |c| unsafe {
            c.next.load(Ordering::Acquire).as_ref()
        })
    }

    /// The slot holding `key`, if any.
    fn find(&self, key: usize) -> Option<&Slot<T>> {
        if key == EMPTY || key == TOMBSTONE {
            return None;
        }
        for chunk in self.chunks() {
            for slot in chunk.probe(key) {
                match slot.key.load(Ordering::Acquire) {
                    k if k == key => return Some(slot),
                    EMPTY => break,
                    _ => {}
                }
            }
        }
        None
    }

    /// The value stored for `key`. No lock.
    pub fn get(&self, key: usize) -> Option<&T> {
        // SAFETY: a published key's value is a live box until `remove`, whose caller guarantees
        // that no reference from `get` is still in use.
        self.find(key)
            .and_then(|slot| unsafe { slot.value.load(Ordering::Acquire).as_ref() })
    }

    /// Stores `value` for `key` (a dispatch pointer: neither 0 nor `usize::MAX`) and returns a
    /// reference to it. Refused, `value` given back, when `key` already holds a value (which
    /// stays: references to it may be in use) or is not a dispatch pointer.
    pub fn insert(&self, key: usize, value: Box<T>) -> Result<&T, Box<T>> {
        if key == EMPTY || key == TOMBSTONE {
            return Err(value);
        }
        let _writer = self.writers.lock().unwrap_or_else(|e| e.into_inner());
        if self.find(key).is_some() {
            return Err(value);
        }
        let value = Box::into_raw(value);
        // SAFETY: the box just leaked: the map owns it until `remove` or `Drop`, and hands out
        // shared references only.
        let stored = unsafe { &*value };
        let mut last = &self.first;
        for chunk in self.chunks() {
            last = chunk;
            let free = chunk
                .probe(key)
                .find(|s| matches!(s.key.load(Ordering::Relaxed), EMPTY | TOMBSTONE));
            if let Some(slot) = free {
                slot.value.store(value, Ordering::Release);
                slot.key.store(key, Ordering::Release);
                return Ok(stored);
            }
        }
        let chunk = Box::leak(Box::new(Chunk::EMPTY));
        let slot = &chunk.slots[home(key)];
        slot.value.store(value, Ordering::Relaxed);
        slot.key.store(key, Ordering::Relaxed);
        last.next.store(chunk, Ordering::Release);
        Ok(stored)
    }

    /// Takes the value stored for `key` out of the map.
    ///
    /// # Safety
    /// No reference returned by [`get`](Self::get) for `key` may be in use, now or later: the
    /// chassis calls this from `vkDestroyInstance` / `vkDestroyDevice`, which the application must
    /// not call while it uses the object on another thread.
    pub unsafe fn remove(&self, key: usize) -> Option<Box<T>> {
        let _writer = self.writers.lock().unwrap_or_else(|e| e.into_inner());
        let slot = self.find(key)?;
        slot.key.store(TOMBSTONE, Ordering::Release);
        let value = slot.value.swap(ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: the map owned `value`; the caller guarantees it is no longer borrowed.
        (!value.is_null()).then(|| unsafe { Box::from_raw(value) })
    }
}

impl<T> Drop for DispatchMap<T> {
    fn drop(&mut self) {
        for chunk in self.chunks() {
            for slot in &chunk.slots {
                let value = slot.value.swap(ptr::null_mut(), Ordering::Relaxed);
                if !value.is_null() {
                    // SAFETY: the map owned it and nothing borrows the map any more.
                    drop(unsafe { Box::from_raw(value) });
                }
            }
        }
        let mut next = self.first.next.swap(ptr::null_mut(), Ordering::Relaxed);
        while !next.is_null() {
            // SAFETY: linked chunks are leaked boxes, each linked once.
            let chunk = unsafe { Box::from_raw(next) };
            next = chunk.next.swap(ptr::null_mut(), Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A key shaped like a dispatch pointer.
    fn key(i: usize) -> usize {
        0x10_0000 + i * 0x40
    }

    #[test]
    fn stores_finds_and_removes() {
        let map = DispatchMap::new();
        assert!(map.get(key(1)).is_none());
        assert_eq!(map.insert(key(1), Box::new(1)), Ok(&1));
        assert_eq!(map.insert(key(2), Box::new(2)), Ok(&2));
        assert_eq!((map.get(key(1)), map.get(key(2))), (Some(&1), Some(&2)));
        // SAFETY: no reference from `get` is used after this.
        assert_eq!(unsafe { map.remove(key(1)) }.as_deref(), Some(&1));
        assert!(map.get(key(1)).is_none());
        // SAFETY: as above.
        assert_eq!(unsafe { map.remove(key(1)) }, None);
        assert_eq!(map.get(key(2)), Some(&2));
        assert!(map.get(0).is_none() && map.get(usize::MAX).is_none());
    }

    #[test]
    fn a_taken_key_is_refused_and_its_value_stays_where_references_see_it() {
        let map = DispatchMap::new();
        assert!(map.insert(key(1), Box::new(vec![1u64, 2, 3])).is_ok());
        let first = map.get(key(1)).unwrap();
        let refused = map.insert(key(1), Box::new(vec![4])).unwrap_err();
        drop(refused);
        assert_eq!(first, &[1, 2, 3]);
        assert!(std::ptr::eq(first, map.get(key(1)).unwrap()));
    }

    #[test]
    fn keys_that_are_no_dispatch_pointer_are_refused() {
        let map = DispatchMap::new();
        assert_eq!(map.insert(0, Box::new(0)), Err(Box::new(0)));
        assert_eq!(map.insert(usize::MAX, Box::new(1)), Err(Box::new(1)));
        assert!(map.get(0).is_none() && map.get(usize::MAX).is_none());
    }

    #[test]
    fn grows_past_a_chunk_and_reuses_tombstones() {
        let map = DispatchMap::new();
        let n = CHUNK * 3 + 5;
        for i in 0..n {
            assert_eq!(map.insert(key(i), Box::new(i)), Ok(&i));
        }
        assert_eq!(map.chunks().count(), 4);
        for i in 0..n {
            assert_eq!(map.get(key(i)), Some(&i), "key {i}");
        }
        for i in (0..n).step_by(2) {
            // SAFETY: no reference from `get` is used after this.
            assert_eq!(unsafe { map.remove(key(i)) }.as_deref(), Some(&i));
        }
        for i in 0..n {
            assert_eq!(map.get(key(i)).is_some(), i % 2 == 1, "key {i}");
        }
        // Removed slots are used again before any new chunk is linked.
        for i in (0..n).step_by(2) {
            assert!(map.insert(key(n + i), Box::new(n + i)).is_ok());
        }
        assert_eq!(map.chunks().count(), 4);
        assert_eq!(map.get(key(n + 2)), Some(&(n + 2)));
    }

    #[test]
    fn readers_see_every_published_value_while_others_are_inserted() {
        let map = Arc::new(DispatchMap::new());
        assert!(map.insert(key(0), Box::new(0usize)).is_ok());
        let reader = {
            let map = Arc::clone(&map);
            std::thread::spawn(move || {
                for _ in 0..20_000 {
                    assert_eq!(map.get(key(0)), Some(&0));
                }
            })
        };
        for i in 1..CHUNK * 2 {
            assert!(map.insert(key(i), Box::new(i)).is_ok());
        }
        reader.join().unwrap();
        assert_eq!(map.get(key(CHUNK * 2 - 1)), Some(&(CHUNK * 2 - 1)));
    }

    #[test]
    fn drop_frees_every_value() {
        let value = Arc::new(());
        let map = DispatchMap::new();
        for i in 0..CHUNK + 1 {
            assert!(map.insert(key(i), Box::new(Arc::clone(&value))).is_ok());
        }
        drop(map);
        assert_eq!(Arc::strong_count(&value), 1);
    }
}
