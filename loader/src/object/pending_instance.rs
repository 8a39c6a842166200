//! The loader's instance while its layer chain creates it: held by address, since the chain
//! reaches it through its handle, and lent, for the time of the call down the chain, to the end
//! of that chain on the same thread (the terminator of `vkCreateInstance` creates the drivers'
//! instances into it). One `&mut` to it at a time: the owner's outside the call, the end's inside.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::NonNull;

use vk_generated::types::*;

use crate::given::allocator::Allocator;
use crate::load::instance_chain::HandedDownInstance;
use crate::object::instance::Instance;

thread_local! {
    /// The instance lent to the chain being called on this thread (NULL: none, or taken).
    static LENT: Cell<*mut Instance> = const { Cell::new(std::ptr::null_mut()) };
}

/// An instance being created through its layer chain (a `Box<Instance>` held by address).
pub struct PendingInstance {
    instance: NonNull<Instance>,
}

impl PendingInstance {
    pub fn new(instance: Box<Instance>) -> PendingInstance {
        PendingInstance { instance: NonNull::from(Box::leak(instance)) }
    }

    pub fn get_mut(&mut self) -> &mut Instance {
        // SAFETY: the box this owns; the only other way to it, `lend`, takes `&mut self`.
        unsafe { self.instance.as_mut() }
    }

    /// Runs `call` (the call down the chain) with the instance handed down and lent to the end of
    /// the chain on this thread ([`with_lent`]); no reference to it is live meanwhile.
    pub fn lend<R>(&mut self, call: impl FnOnce(HandedDownInstance<'_>) -> R) -> R {
        struct Return;
        impl Drop for Return {
            fn drop(&mut self) {
                LENT.with(|lent| lent.set(std::ptr::null_mut()));
            }
        }
        let _return = Return;
        LENT.with(|lent| lent.set(self.instance.as_ptr()));
        // SAFETY: the loader's instance, live while `self` is borrowed; its first word is final
        // (the chain's table is set before the chain is created, see `chain::instance_layers`).
        call(unsafe { HandedDownInstance::new(VkInstance(self.instance.as_ptr().cast::<c_void>())) })
    }

    /// The instance, created: the application's from now on.
    pub fn into_box(self) -> Box<Instance> {
        let instance = self.instance;
        std::mem::forget(self);
        // SAFETY: the box `new` leaked, given back once (`self` is forgotten, so not dropped).
        unsafe { Box::from_raw(instance.as_ptr()) }
    }

    /// Destroys what the chain created of it (a layer that failed after calling down may leave
    /// the drivers' instances behind), then it.
    pub fn discard(self, allocator: Allocator<'_>) {
        let instance = self.into_box();
        // SAFETY: NULL or valid callbacks (`Allocator`), those the drivers' instances were created
        // with; the instance was never the application's and is freed right after: no driver
        // instance is used afterwards.
        unsafe { instance.destroy_drivers(allocator.as_ptr()) };
    }
}

impl Drop for PendingInstance {
    fn drop(&mut self) {
        // SAFETY: the box `new` leaked, not lent any more (`lend` borrows `self`).
        drop(unsafe { Box::from_raw(self.instance.as_ptr()) });
    }
}

/// Runs `f` with the instance lent to the chain being called on this thread, taken for the time of
/// `f` (so a call back into the chain's end finds none); `None` outside [`PendingInstance::lend`].
pub fn with_lent<R>(f: impl FnOnce(&mut Instance) -> R) -> Option<R> {
    let taken = LENT.with(|lent| lent.replace(std::ptr::null_mut()));
    if taken.is_null() {
        return None;
    }
    struct PutBack(*mut Instance);
    impl Drop for PutBack {
        fn drop(&mut self) {
            LENT.with(|lent| lent.set(self.0));
        }
    }
    let _put_back = PutBack(taken);
    // SAFETY: the instance `lend` lent, live while `lend` runs (`LENT` is NULL otherwise); no
    // reference to it is live meanwhile (`lend` borrows its owner, and it was taken from `LENT`
    // until `f` returns).
    Some(f(unsafe { &mut *taken }))
}

/// Whether an instance is lent to the chain on this thread (and not taken).
pub fn is_lent() -> bool {
    LENT.with(|lent| !lent.get().is_null())
}
