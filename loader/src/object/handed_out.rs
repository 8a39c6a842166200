//! A physical device as the application holds it: a handle this loader handed out, at either
//! level (terminator-level without layers, trampoline-level with them), read as the layout both
//! share.

use std::marker::PhantomData;

use vk_generated::types::*;

use crate::load::calls::PhysicalDeviceCalls;
use crate::load::device_chain::DeviceChainStart;
use crate::loader_abi::{self, TerminatorPhysicalDevice};
use crate::object::instance::Instance;

/// A `VkPhysicalDevice` this loader handed out, live for `'a`.
#[derive(Clone, Copy)]
pub struct HandedOutPhysicalDevice<'a> {
    handle: VkPhysicalDevice,
    lives: PhantomData<&'a TerminatorPhysicalDevice>,
}

impl<'a> HandedOutPhysicalDevice<'a> {
    /// # Safety
    /// `handle` must be a `VkPhysicalDevice` this loader handed out (either level), whose instance
    /// lives for `'a`.
    pub unsafe fn new(handle: VkPhysicalDevice) -> HandedOutPhysicalDevice<'a> {
        HandedOutPhysicalDevice { handle, lives: PhantomData }
    }

    /// The members of a group the loader's enumeration filled (at most its array's length).
    ///
    /// # Safety
    /// As [`new`](Self::new), for each of the group's first `physicalDeviceCount` members.
    pub unsafe fn members_of(group: &VkPhysicalDeviceGroupProperties) -> Vec<HandedOutPhysicalDevice<'a>> {
        let members = group.physicalDevices.iter().take(group.physicalDeviceCount as usize);
        // SAFETY: this function's contract.
        members.map(|&d| unsafe { HandedOutPhysicalDevice::new(d) }).collect()
    }

    pub fn handle(self) -> VkPhysicalDevice {
        self.handle
    }

    /// The loader instance the device belongs to.
    pub fn instance(self) -> Option<&'a Instance> {
        // SAFETY: a physical device this loader handed out (`new`'s contract), whose instance
        // lives for `'a`.
        unsafe { Instance::of_physical_device(self.handle) }
    }

    /// The device as its instance's chain has it: the chain's table (the top layer's, or the
    /// terminators') with the handle that level knows. What a layer reports (it may change ids).
    pub fn chain_calls(self) -> PhysicalDeviceCalls<'a> {
        // SAFETY: a loader physical device (`new`'s contract), whose first word is its instance's
        // dispatch table, live with the instance, whose functions take the handle it unwraps to.
        unsafe { PhysicalDeviceCalls::new(&*loader_abi::instance_table(self.handle.0), loader_abi::unwrap_physical_device(self.handle)) }
    }

    /// The device chain of the device's instance, with the instance: its layers from the top,
    /// given the instance and this device as the top layer knows them; `None` without layers.
    pub fn device_chain(self) -> Option<(&'a Instance, DeviceChainStart<'a>)> {
        let instance = self.instance()?;
        let chain = instance.layers.as_deref()?;
        let layers = chain.layers.iter().map(|l| &l.loaded);
        // SAFETY: the instance's chain handle is what its top layer returned for it, which every
        // layer of the chain knows, and this device's unwrapped handle what that layer returned
        // for it (`chain_calls`); the chain's terminator_gipa is the instance chain's end; the
        // instance lives, and its chain holds the layers' libraries open, for `'a`.
        let start = unsafe { DeviceChainStart::new(layers, chain.terminator_gipa, instance.chain_handle, self.chain_calls().handle()) };
        Some((instance, start))
    }

    /// The device's driver, where it has one: at either level the driver fields are its driver's
    /// table and handle (the trampoline-level ones copied from the terminator-level device), or
    /// an empty table and NULL.
    pub fn driver_calls(self) -> Option<PhysicalDeviceCalls<'a>> {
        // SAFETY: a loader physical device of either level has the layout of a
        // `TerminatorPhysicalDevice` (`new`'s contract), live for `'a`.
        let (table, handle) = unsafe { (*(self.handle.0 as *const TerminatorPhysicalDevice)).driver() };
        if handle.is_null() {
            return None;
        }
        // SAFETY: NULL or the driver's table, read together with its handle for this device; the
        // instance keeps both for `'a`.
        let table = unsafe { table.as_ref() }?;
        // SAFETY: as above: the driver's table and its handle for this device.
        Some(unsafe { PhysicalDeviceCalls::new(table, handle) })
    }
}
