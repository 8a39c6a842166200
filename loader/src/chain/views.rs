//! A driver instance of the loader's as the safe calls of `load::calls`: its live instance and
//! table. What makes the view sound is the object's own invariant (`object::instance`), stated
//! once here (a physical device's driver calls are `PhysicalDevice::driver_calls`).

use crate::load::calls::InstanceCalls;
use crate::object::instance::DriverInstance;

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
