//! Commands the generated tables do not know (extensions newer than the registry, or private
//! ones), dispatched through trampolines written in assembly, per architecture.
//!
//! `vkGetInstanceProcAddr(instance, name)` for such a name (the Khronos driver interface's order):
//! 1. a driver's `vk_icdGetPhysicalDeviceProcAddr` (or a layer's physical-device GetProcAddr)
//!    knows it: it is a physical-device command. It gets a slot; each driver's slot holds the
//!    driver's function (its `vk_icdGetPhysicalDeviceProcAddr` answer, or its GetInstanceProcAddr's
//!    for drivers older than interface 4); the application gets `physical_device_trampoline<slot>`,
//!    which checks the handle's magic word (see `handles`) and jumps through the slot of its
//!    dispatch table, where
//!    `physical_device_terminator<slot>` swaps in the driver's handle and jumps to the driver.
//! 2. a driver's GetInstanceProcAddr (or a layer) knows it: it is a device command. It gets a
//!    device slot, filled in every device (from its `vkGetDeviceProcAddr`) when the device is
//!    created, and in the devices that already exist right away; the application gets
//!    `device_trampoline<slot>`, which jumps through the slot of the device's `DeviceData`. So a
//!    device command obtained before any device exists works on every device created later.
//! 3. otherwise NULL.
//!
//! Slots are numbered per process (one name, one slot, whichever instance asked first); what a
//! slot holds is per instance (physical-device level) or per device. A device whose driver lacks
//! a command holds `device_missing<slot>` there, which reports the name and aborts, as the
//! physical-device terminator does for a driver lacking one: there is no return value to fake.
//!
//! Layers plug in through the `chain` and `layers` parameters of [`physical_device_command`] and
//! [`device_command`] (resolvers asked before the drivers) and through [`device_created`]'s
//! `gdpa` (the top of the device chain instead of the driver). Layers that call down reach
//! [`physical_device_chain_end`] and [`device_command`] from the end of the instance chain.

use std::ffi::{CStr, CString};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

use vk_generated::types::*;

use crate::debug::log::{self, Level};
use crate::load::calls::DeviceCalls;
use crate::loader_abi::{TerminatorPhysicalDevice, UNKNOWN_SLOTS, UnknownSlots};
use crate::object::device::InstalledDevice;
use crate::object::instance::Instance;
use crate::platform::host_alloc::with_system_allocator;

#[cfg(target_arch = "aarch64")]
#[path = "aarch64.rs"]
mod arch;
#[cfg(target_arch = "x86_64")]
#[path = "x86_64.rs"]
mod arch;
#[cfg(target_arch = "x86")]
#[path = "x86.rs"]
mod arch;

#[cfg(not(target_arch = "x86_64"))]
use arch::{device_missing, device_trampoline, physical_device_terminator, physical_device_trampoline};

/// The size of one slot, which the assembly multiplies the slot number by.
const SLOT_SIZE: usize = std::mem::size_of::<usize>();

type Stub = unsafe extern "system" fn();

/// The stubs of one kind: on x86_64 one function holding them all, `arch::STRIDE` bytes apart.
#[cfg(target_arch = "x86_64")]
struct Stubs(Stub);

#[cfg(target_arch = "x86_64")]
const PHYSICAL_DEVICE_TRAMPOLINES: Stubs = Stubs(arch::physical_device_trampolines);
#[cfg(target_arch = "x86_64")]
const PHYSICAL_DEVICE_TERMINATORS: Stubs = Stubs(arch::physical_device_terminators);
#[cfg(target_arch = "x86_64")]
const DEVICE_TRAMPOLINES: Stubs = Stubs(arch::device_trampolines);
#[cfg(target_arch = "x86_64")]
const DEVICE_MISSING: Stubs = Stubs(arch::device_missing);

/// Stub `slot` of a kind: its address is computed, so no table of addresses is relocated.
#[cfg(target_arch = "x86_64")]
fn stub(stubs: &Stubs, slot: usize) -> Stub {
    assert!(slot < UNKNOWN_SLOTS);
    let at = (stubs.0 as *const u8).wrapping_add(arch::STRIDE * slot);
    // SAFETY: `at` is the start of stub `slot`, itself code of the `extern "system"` kind.
    unsafe { std::mem::transmute::<*const u8, Stub>(at) }
}

/// One instantiation of a stub per slot, in rows of sixteen: `stubs!(f)[i / 16][i % 16]` is `f::<i>`.
#[cfg(not(target_arch = "x86_64"))]
macro_rules! stubs {
    ($f:ident) => {
        stubs!(@rows $f; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@rows $f:ident; $($row:literal)*) => {
        [$(stubs!(@row $f; $row; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)),*]
    };
    (@row $f:ident; $row:literal; $($col:literal)*) => {
        [$($f::<{ $row * 16 + $col }> as Stub),*]
    };
}

#[cfg(not(target_arch = "x86_64"))]
const ROWS: usize = UNKNOWN_SLOTS / 16;
#[cfg(not(target_arch = "x86_64"))]
const _: () = assert!(ROWS * 16 == UNKNOWN_SLOTS && ROWS == 32, "stubs! writes out 32 rows of 16");

#[cfg(not(target_arch = "x86_64"))]
static PHYSICAL_DEVICE_TRAMPOLINES: [[Stub; 16]; ROWS] = stubs!(physical_device_trampoline);
#[cfg(not(target_arch = "x86_64"))]
static PHYSICAL_DEVICE_TERMINATORS: [[Stub; 16]; ROWS] = stubs!(physical_device_terminator);
#[cfg(not(target_arch = "x86_64"))]
static DEVICE_TRAMPOLINES: [[Stub; 16]; ROWS] = stubs!(device_trampoline);
#[cfg(not(target_arch = "x86_64"))]
static DEVICE_MISSING: [[Stub; 16]; ROWS] = stubs!(device_missing);

#[cfg(not(target_arch = "x86_64"))]
fn stub(table: &[[Stub; 16]; ROWS], slot: usize) -> Stub {
    table[slot / 16][slot % 16]
}

/// A resolver of command names (a layer chain's GetProcAddr); `None` where there is nothing to ask.
pub type Resolver<'a> = Option<&'a dyn Fn(&CStr) -> PFN_vkVoidFunction>;

/// The names given physical-device slots, by slot.
static PHYSICAL_DEVICE_NAMES: Mutex<Vec<CString>> = Mutex::new(Vec::new());

/// The names given device slots, by slot, and the devices whose slots follow them.
static DEVICES: Mutex<DeviceRegistry> = Mutex::new(DeviceRegistry { names: Vec::new(), live: Vec::new() });

struct DeviceRegistry {
    names: Vec<CString>,
    live: Vec<LiveDevice>,
}

/// A device whose unknown slots must be filled when a new device command is named.
struct LiveDevice {
    slots: *const UnknownSlots,
    device: DeviceCalls,
}

// SAFETY: the slots are atomics alive until `device_destroyed` removes the entry
// (`InstalledDevice`), and a device's vkGetDeviceProcAddr may be called from any thread.
unsafe impl Send for LiveDevice {}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The slot of `name` in `names`, given it now if it has none and one is free.
fn slot_for(names: &mut Vec<CString>, name: &CStr, level: &str) -> Option<(usize, bool)> {
    if let Some(slot) = names.iter().position(|n| n.as_c_str() == name) {
        return Some((slot, false));
    }
    if names.len() == UNKNOWN_SLOTS {
        log::write(Level::Error, &format!("vkGetInstanceProcAddr: {name:?}: all {UNKNOWN_SLOTS} slots for unknown {level} commands are taken"));
        return None;
    }
    // Process-lifetime data: never from an application's allocator.
    with_system_allocator(|| names.push(name.to_owned()));
    Some((names.len() - 1, true))
}

fn store(slot: &std::sync::atomic::AtomicUsize, f: PFN_vkVoidFunction) {
    slot.store(f.map_or(0, |f| f as usize), Ordering::Release);
}

/// Fills an instance's unknown slots with the physical-device terminators (the end of its chain).
pub fn set_terminators(slots: &UnknownSlots) {
    for (i, slot) in slots.iter().enumerate() {
        store(slot, Some(stub(&PHYSICAL_DEVICE_TERMINATORS, i)));
    }
}

/// Unknown slots for a new device: every one reports a missing command until filled.
pub fn device_slots() -> UnknownSlots {
    std::array::from_fn(|i| std::sync::atomic::AtomicUsize::new(stub(&DEVICE_MISSING, i) as usize))
}

/// `vkGetInstanceProcAddr` for a name the registry does not know, without layers. The drivers are
/// asked through their live instances (`DriverInstance::live`), which a loader instance holds
/// while it lives (what `DriverInstance::calls` relies on too).
pub fn instance_proc_addr(instance: &Instance, name: &CStr) -> PFN_vkVoidFunction {
    physical_device_command(instance, name, None).or_else(|| device_command(instance, name, None))
}

/// A layer chain's part in an unknown physical-device command: the chain's unknown slots (the
/// first word of the application's handles points to them) and the first layer's
/// `vk_layerGetPhysicalDeviceProcAddr`, which calls down the chain itself.
pub struct ChainSlots<'a> {
    pub slots: &'a UnknownSlots,
    pub resolve: Resolver<'a>,
}

/// Step 1: a physical-device command, if a driver's `vk_icdGetPhysicalDeviceProcAddr` or the
/// layers know `name`. The chain's slot gets the layers' answer (the terminator otherwise).
/// Asked again, it refreshes this instance's slots (the same answers).
pub fn physical_device_command(instance: &Instance, name: &CStr, chain: Option<ChainSlots>) -> PFN_vkVoidFunction {
    // Asked first, with no lock held: the layers call down to the terminators, which may give the
    // name its slot already.
    let from_layers = chain.as_ref().and_then(|c| c.resolve).and_then(|resolve| resolve(name));
    let slot = physical_device_slot(instance, name, from_layers.is_some())?;
    if let Some(chain) = chain {
        store(&chain.slots[slot], from_layers.or(Some(stub(&PHYSICAL_DEVICE_TERMINATORS, slot))));
    }
    Some(stub(&PHYSICAL_DEVICE_TRAMPOLINES, slot))
}

/// The end of the instance chain's `vk_layerGetPhysicalDeviceProcAddr` (and of its
/// `vkGetInstanceProcAddr`) for a name the registry does not know: the physical-device terminator,
/// if a driver's `vk_icdGetPhysicalDeviceProcAddr` knows `name`. Layers ask while the instance is
/// being created, before the application names the command.
pub fn physical_device_chain_end(instance: &Instance, name: &CStr) -> PFN_vkVoidFunction {
    let slot = physical_device_slot(instance, name, false)?;
    Some(stub(&PHYSICAL_DEVICE_TERMINATORS, slot))
}

/// The slot of physical-device command `name`, if a driver's `vk_icdGetPhysicalDeviceProcAddr`
/// knows it or `known_to_layers`; each driver's slot gets the driver's function.
fn physical_device_slot(instance: &Instance, name: &CStr, known_to_layers: bool) -> Option<usize> {
    // Only a live driver can say whether it knows a name the registry does not.
    instance.load_lazy_drivers("vkGetInstanceProcAddr of a command unknown to the registry");
    let ask = |d: &crate::object::instance::DriverInstance| {
        // SAFETY: a driver's physical-device GetProcAddr with its live instance (a loader
        // instance's drivers are live while it is: see `instance_proc_addr`) and a NUL-terminated
        // name.
        d.live_driver().get_physical_device_proc_addr.and_then(|gpdpa| unsafe { gpdpa(d.live().1, name.as_ptr()) })
    };
    // Most names asked here are no physical-device command: answer those without allocating.
    if !known_to_layers && !instance.drivers.iter().any(|d| ask(d).is_some()) {
        return None;
    }
    let from_drivers: Vec<PFN_vkVoidFunction> = instance.drivers.iter().map(ask).collect();
    let (slot, new) = slot_for(&mut lock(&PHYSICAL_DEVICE_NAMES), name, "physical-device")?;
    for (d, found) in instance.drivers.iter().zip(from_drivers) {
        // A driver without vk_icdGetPhysicalDeviceProcAddr cannot say; its GetInstanceProcAddr may.
        let (table, handle) = d.live();
        let f = match d.live_driver().get_physical_device_proc_addr {
            Some(_) => found,
            // SAFETY: the driver's GetInstanceProcAddr with its live instance (as above) and a
            // NUL-terminated name.
            None => unsafe { (d.live_driver().get_instance_proc_addr)(handle, name.as_ptr()) },
        };
        store(&table.unknown[slot], f);
    }
    if new {
        log!(Level::Info, "vkGetInstanceProcAddr: {name:?} is an unknown physical-device command, slot {slot}");
    }
    Some(slot)
}

/// Step 2: a device command, if a driver's GetInstanceProcAddr or `layers` knows `name`. A new
/// name's slot is filled in every live device before this returns.
pub fn device_command(instance: &Instance, name: &CStr, layers: Resolver) -> PFN_vkVoidFunction {
    let known = layers.and_then(|resolve| resolve(name)).is_some() || {
        instance.load_lazy_drivers("vkGetInstanceProcAddr of a command unknown to the registry");
        // SAFETY: each driver's GetInstanceProcAddr with its live instance (a loader instance's
        // drivers are live while it is: see `instance_proc_addr`) and a NUL-terminated name.
        instance.drivers.iter().any(|d| unsafe { (d.live_driver().get_instance_proc_addr)(d.live().1, name.as_ptr()) }.is_some())
    };
    if !known {
        return None;
    }
    let mut registry = lock(&DEVICES);
    let (slot, new) = slot_for(&mut registry.names, name, "device")?;
    if new {
        // The one place the loader calls down with a lock held: it keeps every listed device alive
        // (vkDestroyDevice waits for it). A GetDeviceProcAddr is a lookup that does not call back.
        for live in &registry.live {
            // SAFETY: a listed device's slots live until `device_destroyed` removes it, which
            // waits for this lock (`InstalledDevice`); the device lives as long.
            let (slots, f) = (unsafe { &*live.slots }, live.device.proc_addr(name));
            store(&slots[slot], f.or(Some(stub(&DEVICE_MISSING, slot))));
        }
        log!(Level::Info, "vkGetInstanceProcAddr: {name:?} is an unknown device command, slot {slot}");
    }
    Some(stub(&DEVICE_TRAMPOLINES, slot))
}

/// Fills a new device's unknown slots for every device command named so far (asking the
/// `vkGetDeviceProcAddr` that answers for the device: the top of its chain) and keeps it for names
/// to come, until [`device_destroyed`]. No lock is held while that function runs.
pub fn device_created(installed: InstalledDevice) {
    let (slots, device) = (installed.slots(), installed.device());
    // SAFETY: the device's slots, alive until its data is freed, after `device_destroyed`
    // (`InstalledDevice`).
    let slot_array = unsafe { slots.as_ref() };
    let mut filled = 0;
    loop {
        let pending: Vec<CString> = {
            let mut registry = lock(&DEVICES);
            if registry.names.len() == filled {
                with_system_allocator(|| registry.live.push(LiveDevice { slots: slots.as_ptr(), device }));
                return;
            }
            with_system_allocator(|| registry.names[filled..].to_vec())
        };
        for name in pending {
            if let Some(f) = device.proc_addr(&name) {
                store(&slot_array[filled], Some(f));
            }
            filled += 1;
        }
    }
}

/// Forgets a device before it is destroyed.
pub fn device_destroyed(slots: &UnknownSlots) {
    lock(&DEVICES).live.retain(|d| !std::ptr::eq(d.slots, slots));
}

fn name_of(names: &Mutex<Vec<CString>>, slot: usize) -> String {
    lock(names).get(slot).map_or_else(|| format!("unknown command #{slot}"), |n| n.to_string_lossy().into_owned())
}

/// Reached from `physical_device_terminator<slot>` when the physical device's driver lacks the
/// command (`physical_device` is the loader's, still unswapped).
pub(crate) extern "C" fn missing_physical_device_command(physical_device: *const TerminatorPhysicalDevice, slot: usize) -> ! {
    let _ = physical_device;
    let name = name_of(&PHYSICAL_DEVICE_NAMES, slot);
    log::fatal(Level::Error, &format!("Function {name} not supported for this physical device"));
    std::process::abort()
}

/// Reached from `physical_device_trampoline<slot>` when its handle is not a loader physical device.
pub(crate) extern "C" fn invalid_physical_device(_handle: *const std::ffi::c_void, slot: usize) -> ! {
    crate::handles::invalid_handle(&name_of(&PHYSICAL_DEVICE_NAMES, slot), "physicalDevice")
}

/// Reached from `device_missing<slot>` when a device's driver lacks the command.
pub(crate) extern "C" fn missing_device_command(slot: usize) -> ! {
    let name = lock(&DEVICES).names.get(slot).map_or_else(|| format!("unknown command #{slot}"), |n| n.to_string_lossy().into_owned());
    log::fatal(Level::Error, &format!("Function {name} not supported for this device"));
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::object::device::DeviceData;
    use crate::loader_abi::InstanceDispatch;

    /// The function under test's slot: returns the handle it was given.
    ///
    /// # Safety
    /// None: `unsafe` only to have the type the slots hold.
    unsafe extern "system" fn echo(handle: usize) -> usize {
        handle
    }

    /// Every other slot: a stub that read the wrong slot gets this.
    ///
    /// # Safety
    /// None, as [`echo`].
    unsafe extern "system" fn wrong(_: usize) -> usize {
        usize::MAX
    }

    fn only(slots: &UnknownSlots, slot: usize) {
        for (i, s) in slots.iter().enumerate() {
            let f = if i == slot { echo as *const () } else { wrong as *const () };
            s.store(f as usize, Ordering::Relaxed);
        }
    }

    #[test]
    fn every_physical_device_slot_reaches_the_same_driver_slot_with_the_driver_handle() {
        let instance = InstanceDispatch::new(Default::default());
        set_terminators(&instance.unknown);
        let driver = InstanceDispatch::new(Default::default());
        for slot in 0..UNKNOWN_SLOTS {
            only(&driver.unknown, slot);
            let mut physical_device = Box::new(TerminatorPhysicalDevice {
                dispatch: &instance.table,
                magic: crate::handles::PHYSICAL_DEVICE_MAGIC,
                unwrapped: VkPhysicalDevice::NULL,
                instance: std::ptr::null(),
                driver_table: std::sync::atomic::AtomicPtr::new((&*driver as *const InstanceDispatch).cast_mut().cast()),
                driver_handle: std::sync::atomic::AtomicPtr::new((0x1000 + slot) as *mut _),
            });
            // At the end of the chain the next level's handle is the loader's device itself.
            physical_device.unwrapped = VkPhysicalDevice(&mut *physical_device as *mut TerminatorPhysicalDevice as *mut _);
            // SAFETY: the stub tail-calls `echo` or `wrong`, which take and return one word.
            let f: unsafe extern "system" fn(*const TerminatorPhysicalDevice) -> usize =
                unsafe { std::mem::transmute(stub(&PHYSICAL_DEVICE_TRAMPOLINES, slot)) };
            // SAFETY: a loader physical device with the magic word, whose dispatch and driver
            // tables live across the call; the stubs jump to `echo` or `wrong`.
            assert_eq!(unsafe { f(&*physical_device) }, 0x1000 + slot, "slot {slot}");
        }
    }

    #[test]
    fn every_device_slot_reaches_its_own_slot_with_the_handle_unchanged() {
        let data = DeviceData {
            table: Default::default(),
            unknown: std::array::from_fn(|_| AtomicUsize::new(0)),
            driver_gdpa: None,
            chain_gdpa: None,
            wsi: Default::default(),
            debug_objects: Default::default(),
            core_version_limit: u32::MAX,
        };
        let handle: [*const DeviceData; 1] = [&data];
        for slot in 0..UNKNOWN_SLOTS {
            only(&data.unknown, slot);
            // SAFETY: as above.
            let f: unsafe extern "system" fn(*const *const DeviceData) -> usize =
                unsafe { std::mem::transmute(stub(&DEVICE_TRAMPOLINES, slot)) };
            // SAFETY: the handle's first word points to `data`, which lives across the call; the
            // stub jumps to `echo` or `wrong`.
            assert_eq!(unsafe { f(handle.as_ptr()) }, handle.as_ptr() as usize, "slot {slot}");
        }
    }
}
