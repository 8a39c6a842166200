//! The loader's objects as the safe calls of `load::calls`: a driver instance's live instance and
//! table, a physical device's driver handle and table, and the instance a physical device
//! belongs to. What makes them sound is the objects' own invariants (`object::instance`), stated
//! once here.

use crate::load::calls::{InstanceCalls, PhysicalDeviceCalls};
use crate::object::instance::{DriverInstance, Instance, PhysicalDevice};

/// The calls of a driver instance: the live driver's, once a lazy driver is loaded.
pub(crate) fn instance_calls(d: &DriverInstance) -> InstanceCalls<'_> {
    let (table, handle) = d.live();
    // SAFETY: a `DriverInstance` holds, from its creation in `chain::drivers` until
    // `Instance::destroy_drivers` (after which the loader's instance is freed, not called), a
    // driver's live instance with the table its vkGetInstanceProcAddr gave for it, or a lazy
    // driver's front table and handle; `live` gives the live driver's once it is loaded, and
    // `live_driver` is the driver of whichever it gives. Both live as long as `d`.
    unsafe { InstanceCalls::new(d.live_driver().get_instance_proc_addr, table, handle) }
}

/// The driver's calls for a physical device of the loader: a lazy driver's front until it is
/// loaded, the live driver's after.
pub(crate) fn physical_device_calls(pd: &PhysicalDevice) -> PhysicalDeviceCalls<'_> {
    let (table, handle) = pd.term.driver();
    // SAFETY: a loader physical device's table is one of its instance's drivers' (a
    // `DriverInstance`'s, or its lazy driver's live one), boxed and freed with the instance, which
    // outlives the device; the handle read with it is that driver's for the device (see
    // `TerminatorPhysicalDevice::driver`), or the lazy front's, whose functions take either.
    unsafe { PhysicalDeviceCalls::new(&*table, handle) }
}

/// The instance a physical device of the loader belongs to.
pub(crate) fn instance_of(pd: &PhysicalDevice) -> Option<&Instance> {
    // SAFETY: NULL or the instance whose list holds the device (boxed there, freed with the
    // instance), so it outlives every reference to the device.
    unsafe { pd.instance.as_ref() }
}
