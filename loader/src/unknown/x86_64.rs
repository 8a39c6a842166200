//! The unknown-command stubs for x86_64 (System V): tail jumps that leave every argument register
//! and the stack as the caller set them. Only r11 (scratch, never an argument) and the flags are
//! used, so `al` (the vector-register count of variadic calls) survives too.

use core::arch::naked_asm;
use core::mem::offset_of;

use super::{invalid_physical_device, missing_device_command, missing_physical_device_command, SLOT_SIZE};
use crate::handles::{HandleHeader, PHYSICAL_DEVICE_MAGIC};
use crate::device::DeviceData;
use crate::loader_abi::{InstanceDispatch, TerminatorPhysicalDevice};

/// Physical-device slot `I`: checks the handle (not NULL, aligned, the physical-device magic
/// word, as the generated trampolines do), then, like them, passes the handle the next level
/// knows (`unwrapped`: the top layer's, or the loader's own at the end of the chain) and jumps
/// through unknown slot `I` of the table the handle's first word points to.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_trampoline<const I: usize>() {
    naked_asm!(
        "test rdi, rdi",
        "jz 3f",
        "test dil, 7",
        "jnz 3f",
        "mov r11, {magic}",
        "cmp qword ptr [rdi + {magic_at}], r11",
        "jne 3f",
        "mov r11, qword ptr [rdi]",
        "mov rdi, qword ptr [rdi + {unwrapped}]",
        "jmp qword ptr [r11 + {slot}]",
        "3:",
        "mov esi, {index}",
        "jmp {invalid}",
        magic = const PHYSICAL_DEVICE_MAGIC,
        magic_at = const offset_of!(HandleHeader, magic),
        unwrapped = const offset_of!(TerminatorPhysicalDevice, unwrapped),
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        invalid = sym invalid_physical_device,
    )
}

/// The end of the instance chain for physical-device slot `I`: swaps the loader's physical device
/// for the driver's and jumps to the driver's function, or reports that the driver lacks it.
#[unsafe(naked)]
pub unsafe extern "system" fn physical_device_terminator<const I: usize>() {
    naked_asm!(
        "mov r11, qword ptr [rdi + {driver_table}]",
        "mov r11, qword ptr [r11 + {slot}]",
        "test r11, r11",
        "jz 2f",
        "mov rdi, qword ptr [rdi + {driver_handle}]",
        "jmp r11",
        "2:",
        "mov esi, {index}",
        "jmp {missing}",
        driver_table = const offset_of!(TerminatorPhysicalDevice, driver_table),
        driver_handle = const offset_of!(TerminatorPhysicalDevice, driver_handle),
        slot = const offset_of!(InstanceDispatch, unknown) + SLOT_SIZE * I,
        index = const I,
        missing = sym missing_physical_device_command,
    )
}

/// Device slot `I`: jumps through unknown slot `I` of the `DeviceData` the handle's first word
/// points to (a `VkDevice`, `VkQueue` or `VkCommandBuffer`).
#[unsafe(naked)]
pub unsafe extern "system" fn device_trampoline<const I: usize>() {
    naked_asm!(
        "mov r11, qword ptr [rdi]",
        "jmp qword ptr [r11 + {slot}]",
        slot = const offset_of!(DeviceData, unknown) + SLOT_SIZE * I,
    )
}

/// What device slot `I` holds when the device's driver lacks the command: reports it.
#[unsafe(naked)]
pub unsafe extern "system" fn device_missing<const I: usize>() {
    naked_asm!(
        "mov edi, {index}",
        "jmp {missing}",
        index = const I,
        missing = sym missing_device_command,
    )
}
