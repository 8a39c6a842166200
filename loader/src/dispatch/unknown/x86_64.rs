//! The unknown-command stubs for x86_64 (System V): tail jumps that leave every argument register
//! and the stack as the caller set them. Only r10 and r11 (scratch, never arguments) and the flags
//! are used, so `al` (the vector-register count of variadic calls) survives too.
//!
//! Each kind is one function holding its `UNKNOWN_SLOTS` stubs back to back, [`STRIDE`] bytes
//! apart: stub `I` is at the function's address plus `STRIDE * I` (no table of addresses, no
//! function per stub). The device stubs are complete in their 16 bytes; the physical-device ones
//! load the slot number into r11 and jump to their kind's shared body, which follows the stubs.
//! AT&T syntax: `.rept` numbers the stubs through an assembler symbol, which AT&T's `$` makes an
//! immediate without ambiguity.

use core::arch::naked_asm;
use core::mem::offset_of;

use crate::handles::{HandleHeader, PHYSICAL_DEVICE_MAGIC};
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice, UNKNOWN_SLOTS};
use crate::object::device::DeviceData;
use super::{invalid_physical_device, missing_device_command, missing_physical_device_command, SLOT_SIZE};

/// The distance between two stubs of one kind.
pub(super) const STRIDE: usize = 16;

/// Physical-device slot `I`: checks the handle (not NULL, aligned, the physical-device magic
/// word, as the generated trampolines do), then, like them, passes the handle the next level
/// knows (`unwrapped`: the top layer's, or the loader's own at the end of the chain) and jumps
/// through unknown slot `I` of the table the handle's first word points to.
///
/// # Safety
/// Never called at its own address: stub `I` (at `STRIDE * I` from it) is handed out as the
/// function of an unknown physical-device command, whose caller passes that command's arguments.
/// The first must be a handle readable as a `HandleHeader` when it is not NULL and aligned (a
/// pointer with another magic word is reported and the process stops); one with the magic word is
/// a loader physical device, whose table's slot `I` holds the next level's function for the same
/// command.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_trampolines() {
    naked_asm!(
        ".set vk_unknown_i, 0",
        ".rept {count}",
        "movl $vk_unknown_i, %r11d",
        "jmp 4f",
        ".balign {stride}, 0xcc",
        ".set vk_unknown_i, vk_unknown_i + 1",
        ".endr",
        "4:",
        "testq %rdi, %rdi",
        "jz 3f",
        "testb $7, %dil",
        "jnz 3f",
        "movabsq ${magic}, %r10",
        "cmpq %r10, {magic_at}(%rdi)",
        "jne 3f",
        "movq (%rdi), %r10",
        "movq {unwrapped}(%rdi), %rdi",
        "jmpq *{slots}(%r10, %r11, {slot_size})",
        "3:",
        "movl %r11d, %esi",
        "jmp {invalid}",
        count = const UNKNOWN_SLOTS,
        stride = const STRIDE,
        magic = const PHYSICAL_DEVICE_MAGIC,
        magic_at = const offset_of!(HandleHeader, magic),
        unwrapped = const offset_of!(TerminatorPhysicalDevice, unwrapped),
        slot_size = const SLOT_SIZE,
        slots = const offset_of!(InstanceDispatch, unknown),
        invalid = sym invalid_physical_device,
        options(att_syntax),
    )
}

/// The end of the instance chain for physical-device slot `I`: swaps the loader's physical device
/// for the driver's and jumps to the driver's function, or reports that the driver lacks it.
///
/// # Safety
/// As [`physical_device_trampolines`]' stubs, but reached only from the end of an instance chain:
/// the first argument is a live `TerminatorPhysicalDevice` whose driver table's slot `I` is NULL or
/// the driver's function for the command.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_terminators() {
    naked_asm!(
        ".set vk_unknown_i, 0",
        ".rept {count}",
        "movl $vk_unknown_i, %r11d",
        "jmp 4f",
        ".balign {stride}, 0xcc",
        ".set vk_unknown_i, vk_unknown_i + 1",
        ".endr",
        "4:",
        "movq {driver_table}(%rdi), %r10",
        "movq {slots}(%r10, %r11, {slot_size}), %r10",
        "testq %r10, %r10",
        "jz 2f",
        "movq {driver_handle}(%rdi), %rdi",
        "jmpq *%r10",
        "2:",
        "movl %r11d, %esi",
        "jmp {missing}",
        count = const UNKNOWN_SLOTS,
        stride = const STRIDE,
        driver_table = const offset_of!(TerminatorPhysicalDevice, driver_table),
        driver_handle = const offset_of!(TerminatorPhysicalDevice, driver_handle),
        slot_size = const SLOT_SIZE,
        slots = const offset_of!(InstanceDispatch, unknown),
        missing = sym missing_physical_device_command,
        options(att_syntax),
    )
}

/// Device slot `I`: jumps through unknown slot `I` of the `DeviceData` the handle's first word
/// points to (a `VkDevice`, `VkQueue` or `VkCommandBuffer`). Two instructions, as before.
///
/// # Safety
/// Stub `I` is handed out as the function of an unknown device command: its caller passes that
/// command's arguments, the first a live dispatchable device-level handle of this loader (its
/// first word points to the device's `DeviceData`, whose slot `I` holds a function for the
/// command or `device_missing`'s stub `I`). Not checked: that path stays one load and one jump.
#[unsafe(naked)]
pub unsafe extern "system" fn device_trampolines() {
    naked_asm!(
        ".set vk_unknown_i, 0",
        ".rept {count}",
        "movq (%rdi), %r11",
        "jmp *({slots} + {slot_size} * vk_unknown_i)(%r11)",
        ".balign {stride}, 0xcc",
        ".set vk_unknown_i, vk_unknown_i + 1",
        ".endr",
        count = const UNKNOWN_SLOTS,
        stride = const STRIDE,
        slot_size = const SLOT_SIZE,
        slots = const offset_of!(DeviceData, unknown),
        options(att_syntax),
    )
}

/// What device slot `I` holds when the device's driver lacks the command: reports it.
///
/// # Safety
/// None beyond being reached through a device slot: it reads no argument and does not return.
#[unsafe(naked)]
pub unsafe extern "system" fn device_missing() {
    naked_asm!(
        ".set vk_unknown_i, 0",
        ".rept {count}",
        "movl $vk_unknown_i, %edi",
        "jmp {missing}",
        ".balign {stride}, 0xcc",
        ".set vk_unknown_i, vk_unknown_i + 1",
        ".endr",
        count = const UNKNOWN_SLOTS,
        stride = const STRIDE,
        missing = sym missing_device_command,
        options(att_syntax),
    )
}
