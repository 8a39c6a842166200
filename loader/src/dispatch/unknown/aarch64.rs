//! The unknown-command stubs for aarch64 (AAPCS64): tail jumps that leave x0-x7, v0-v7, x8 (the
//! indirect-result register) and the stack as the caller set them. Only x16 and x17 (IP0/IP1, the
//! registers the ABI reserves for veneers like these) and the flags are used. Slot offsets go through a register:
//! the tables are larger than a scaled 12-bit immediate may reach.
//!
//! Tested under user-mode emulation, in CI by `cargo xtask test-aarch64`, which does the following
//! (packages qemu-user, gcc-12-aarch64-linux-gnu, libc6-dev-arm64-cross):
//! `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc-12`,
//! `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER` and `LOADER_TEST_RUNNER` both
//! `"qemu-aarch64 -L /usr/aarch64-linux-gnu"`, then
//! `cargo test -p loader --target aarch64-unknown-linux-gnu --test unknown_commands --test handles`
//! (`--lib` passes too but for one test of a library path that `qemu -L` maps: see docs/i686.md).

use core::arch::naked_asm;
use core::mem::offset_of;

use crate::handles::{HandleHeader, PHYSICAL_DEVICE_MAGIC};
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};
use crate::object::device::DeviceData;
use super::{invalid_physical_device, missing_device_command, missing_physical_device_command, SLOT_SIZE};

/// Physical-device slot `I`: see the x86_64 version (the handle check included).
///
/// # Safety
/// As the x86_64 stubs': handed out as the function of an unknown physical-device command, whose
/// caller passes that command's arguments; the first a handle readable as a `HandleHeader` when
/// it is not NULL and aligned.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_trampoline<const I: usize>() {
    naked_asm!(
        "cbz x0, 3f",
        "tst x0, #7",
        "b.ne 3f",
        "ldr x16, [x0, #{magic_at}]",
        "movz x17, #{m0}",
        "movk x17, #{m1}, lsl #16",
        "movk x17, #{m2}, lsl #32",
        "movk x17, #{m3}, lsl #48",
        "cmp x16, x17",
        "b.ne 3f",
        "ldr x16, [x0]",
        "ldr x0, [x0, #{unwrapped}]",
        "mov x17, #{slot}",
        "ldr x16, [x16, x17]",
        "br x16",
        "3:",
        "mov x1, #{index}",
        "b {invalid}",
        magic_at = const offset_of!(HandleHeader, magic),
        unwrapped = const offset_of!(TerminatorPhysicalDevice, unwrapped),
        m0 = const PHYSICAL_DEVICE_MAGIC & 0xffff,
        m1 = const (PHYSICAL_DEVICE_MAGIC >> 16) & 0xffff,
        m2 = const (PHYSICAL_DEVICE_MAGIC >> 32) & 0xffff,
        m3 = const PHYSICAL_DEVICE_MAGIC >> 48,
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        invalid = sym invalid_physical_device,
    )
}

/// The end of the instance chain for physical-device slot `I`: see the x86_64 version.
///
/// The driver table is read with acquire ordering (`ldar`, which takes no offset: the address is
/// computed first), then the driver handle: a lazy driver going live stores the handle, then the
/// table with release ordering (`TerminatorPhysicalDevice::set_driver`), so a live table is never
/// paired with the placeholder handle. x86_64 needs no fence: its loads are not reordered with
/// each other.
///
/// # Safety
/// As the x86_64 stubs': reached only from the end of an instance chain, the first argument a
/// live `TerminatorPhysicalDevice` whose driver table's slot `I` is NULL or the driver's function.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_terminator<const I: usize>() {
    naked_asm!(
        "add x16, x0, #{driver_table}",
        "ldar x16, [x16]",
        "mov x17, #{slot}",
        "ldr x16, [x16, x17]",
        "cbz x16, 2f",
        "ldr x0, [x0, #{driver_handle}]",
        "br x16",
        "2:",
        "mov x1, #{index}",
        "b {missing}",
        driver_table = const offset_of!(TerminatorPhysicalDevice, driver_table),
        driver_handle = const offset_of!(TerminatorPhysicalDevice, driver_handle),
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        missing = sym missing_physical_device_command,
    )
}

/// Device slot `I`: see the x86_64 version.
///
/// # Safety
/// As the x86_64 stubs': the first argument a live dispatchable device-level handle of this
/// loader, whose `DeviceData` slot `I` holds a function for the command (not checked).
#[unsafe(naked)]
pub unsafe extern "system" fn device_trampoline<const I: usize>() {
    naked_asm!(
        "ldr x16, [x0]",
        "mov x17, #{slot}",
        "ldr x16, [x16, x17]",
        "br x16",
        slot = const offset_of!(DeviceData, unknown) + SLOT_SIZE * I,
    )
}

/// What device slot `I` holds when the device's driver lacks the command: reports it.
///
/// # Safety
/// None beyond being reached through a device slot: it reads no argument and does not return.
#[unsafe(naked)]
pub unsafe extern "system" fn device_missing<const I: usize>() {
    naked_asm!(
        "mov x0, #{index}",
        "b {missing}",
        index = const I,
        missing = sym missing_device_command,
    )
}
