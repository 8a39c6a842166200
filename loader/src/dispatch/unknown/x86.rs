//! The unknown-command stubs for 32-bit x86 (i386 System V, cdecl: `VKAPI_CALL` is empty there).
//! Every argument is on the stack, the dispatchable handle at `4(%esp)` on entry; the stubs use
//! only `eax`, `ecx`, `edx` (scratch) and the flags, and change the argument area only where they
//! swap the handle (that area is the callee's to change). Offsets are `const` operands and the
//! reporters are reached by PC-relative calls (`sym`): no stub reads a static, so none needs the
//! GOT (i386 has no PC-relative data addressing).
//!
//! The error paths do not return: they align the stack to 16 bytes, as GCC's i386 code expects at
//! a call, push the reporter's arguments and call it.
//!
//! Tested as a 32-bit process (`rustup target add i686-unknown-linux-gnu`, Debian's
//! `gcc-multilib`): `cargo test -p loader --target i686-unknown-linux-gnu --lib --test
//! unknown_commands --test handles`.

use core::arch::naked_asm;
use core::mem::{align_of, offset_of};

use crate::handles::{HandleHeader, PHYSICAL_DEVICE_MAGIC};
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};
use crate::object::device::DeviceData;
use super::{invalid_physical_device, missing_device_command, missing_physical_device_command, SLOT_SIZE};

/// Physical-device slot `I`: checks the handle (not NULL, aligned to a `HandleHeader`, the
/// physical-device magic word compared in two 32-bit halves), stores the handle the next level
/// knows (`unwrapped`) over the first argument and jumps through unknown slot `I` of the table
/// the handle's first word points to. See the x86_64 version.
///
/// # Safety
/// As the x86_64 stubs': handed out as the function of an unknown physical-device command, whose
/// caller passes that command's arguments; the first a handle readable as a `HandleHeader` when
/// it is not NULL and aligned (a pointer with another magic word is reported and the process
/// stops); one with the magic word is a loader physical device, whose table's slot `I` holds the
/// next level's function for the same command.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_trampoline<const I: usize>() {
    naked_asm!(
        "movl 4(%esp), %eax",
        "testl %eax, %eax",
        "jz 3f",
        "testl ${align_mask}, %eax",
        "jnz 3f",
        "cmpl ${magic_low}, {magic_at}(%eax)",
        "jne 3f",
        "cmpl ${magic_high}, {magic_at} + 4(%eax)",
        "jne 3f",
        "movl (%eax), %ecx",
        "movl {unwrapped}(%eax), %eax",
        "movl %eax, 4(%esp)",
        "jmp *{slot}(%ecx)",
        "3:",
        "andl $-16, %esp",
        "subl $8, %esp",
        "pushl ${index}",
        "pushl %eax",
        "call {invalid}",
        "ud2",
        align_mask = const align_of::<HandleHeader>() - 1,
        magic_at = const offset_of!(HandleHeader, magic),
        magic_low = const PHYSICAL_DEVICE_MAGIC & 0xffff_ffff,
        magic_high = const PHYSICAL_DEVICE_MAGIC >> 32,
        unwrapped = const offset_of!(TerminatorPhysicalDevice, unwrapped),
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        invalid = sym invalid_physical_device,
        options(att_syntax),
    )
}

/// The end of the instance chain for physical-device slot `I`: stores the driver's physical device
/// over the loader's and jumps to the driver's function, or reports that the driver lacks it.
/// The driver table is read before the driver handle; x86 does not reorder loads with each other,
/// so a lazy driver's table (stored after its handle, with release ordering) is never paired with
/// the placeholder handle, as on x86_64.
///
/// # Safety
/// As the x86_64 stubs': reached only from the end of an instance chain, the first argument a
/// live `TerminatorPhysicalDevice` whose driver table's slot `I` is NULL or the driver's function.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_terminator<const I: usize>() {
    naked_asm!(
        "movl 4(%esp), %eax",
        "movl {driver_table}(%eax), %ecx",
        "movl {slot}(%ecx), %ecx",
        "testl %ecx, %ecx",
        "jz 2f",
        "movl {driver_handle}(%eax), %edx",
        "movl %edx, 4(%esp)",
        "jmp *%ecx",
        "2:",
        "andl $-16, %esp",
        "subl $8, %esp",
        "pushl ${index}",
        "pushl %eax",
        "call {missing}",
        "ud2",
        driver_table = const offset_of!(TerminatorPhysicalDevice, driver_table),
        driver_handle = const offset_of!(TerminatorPhysicalDevice, driver_handle),
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        missing = sym missing_physical_device_command,
        options(att_syntax),
    )
}

/// Device slot `I`: jumps through unknown slot `I` of the `DeviceData` the handle's first word
/// points to, the arguments untouched. Three instructions: the handle is loaded from the stack.
///
/// # Safety
/// As the x86_64 stubs': the first argument a live dispatchable device-level handle of this
/// loader, whose `DeviceData` slot `I` holds a function for the command (not checked).
#[unsafe(naked)]
pub unsafe extern "system" fn device_trampoline<const I: usize>() {
    naked_asm!(
        "movl 4(%esp), %eax",
        "movl (%eax), %eax",
        "jmp *{slot}(%eax)",
        slot = const offset_of!(DeviceData, unknown) + SLOT_SIZE * I,
        options(att_syntax),
    )
}

/// What device slot `I` holds when the device's driver lacks the command: reports it.
///
/// # Safety
/// None beyond being reached through a device slot: it reads no argument and does not return.
#[unsafe(naked)]
pub unsafe extern "system" fn device_missing<const I: usize>() {
    naked_asm!(
        "andl $-16, %esp",
        "subl $12, %esp",
        "pushl ${index}",
        "call {missing}",
        "ud2",
        index = const I,
        missing = sym missing_device_command,
        options(att_syntax),
    )
}
