//! Synthetic extension commands that no registry knows, for testing how a loader dispatches
//! unknown commands: `COUNT` physical-device-level ones,
//! `uint64_t vkTestPhysicalDeviceCommandNNNTEST(VkPhysicalDevice, uint64_t a1, ..., uint64_t a7)`,
//! and `COUNT` device-level ones, `uint64_t vkTestDeviceCommandNNNTEST(VkDevice, uint64_t a1, ..., a7)`
//! (NNN from 000). Each returns [`answer`]: which command ran, on which device (its `deviceID`),
//! with which arguments (seven, so that some travel on the stack on x86_64).
//!
//! Reached like the driver's other commands (`vk_icdGetPhysicalDeviceProcAddr` and
//! `vk_icdGetInstanceProcAddr` for the first kind, `vkGetDeviceProcAddr` and
//! `vk_icdGetInstanceProcAddr` for the second); `VK_TEST_DRIVER_SYNTHETIC_COMMANDS=N` keeps only
//! the first N of each.

use std::ffi::CStr;

use vk_generated::types::{PFN_vkVoidFunction, VkDevice, VkPhysicalDevice};

use crate::instance::physical_device_ref;
use crate::{config, guard, Level};

/// Commands of each level.
pub const COUNT: usize = 300;

/// The physical-device commands' names: this prefix, three digits, [`SUFFIX`].
pub const PHYSICAL_DEVICE_PREFIX: &str = "vkTestPhysicalDeviceCommand";
/// The device commands' names: this prefix, three digits, [`SUFFIX`].
pub const DEVICE_PREFIX: &str = "vkTestDeviceCommand";
/// The end of every synthetic command's name (an author tag, as extensions' commands have).
pub const SUFFIX: &str = "TEST";

/// The name of synthetic command `index` with `prefix`.
pub fn name(prefix: &str, index: usize) -> String {
    format!("{prefix}{index:03}{SUFFIX}")
}

/// What command `index` returns on a device with `device_id` for `args`: the index in the top
/// 16 bits, the device in the next 16, a weighted sum of the arguments in the low 32.
pub fn answer(index: usize, device_id: u32, args: [u64; 7]) -> u64 {
    let sum = args.iter().zip(1u64..).fold(0u64, |acc, (a, w)| acc.wrapping_add(a.wrapping_mul(w)));
    ((index as u64) << 48) | (u64::from(device_id & 0xffff) << 32) | (sum & 0xffff_ffff)
}

/// Physical-device command `I`: [`answer`] for its device, 0 for a NULL one.
///
/// # Safety
/// `physical_device` is NULL or one this driver made and has not freed.
#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn physical_device_command<const I: usize>(
    physical_device: VkPhysicalDevice,
    a1: u64, a2: u64, a3: u64, a4: u64, a5: u64, a6: u64, a7: u64,
) -> u64 {
    guard(0, || {
        // SAFETY: NULL or a live physical device of ours (this function's contract).
        let pd = unsafe { physical_device_ref(physical_device) };
        pd.map_or(0, |pd| answer(I, pd.spec.device_id, [a1, a2, a3, a4, a5, a6, a7]))
    })
}

/// Device command `I`: [`answer`] for its device, 0 for a NULL one.
///
/// # Safety
/// `device` is NULL or one this driver made and has not destroyed.
#[allow(clippy::too_many_arguments)]
unsafe extern "system" fn device_command<const I: usize>(
    device: VkDevice,
    a1: u64, a2: u64, a3: u64, a4: u64, a5: u64, a6: u64, a7: u64,
) -> u64 {
    guard(0, || {
        // SAFETY: NULL or a live device of ours (this function's contract).
        let id = unsafe { crate::device::device_id(device) };
        id.map_or(0, |id| answer(I, id, [a1, a2, a3, a4, a5, a6, a7]))
    })
}

type Function = unsafe extern "system" fn();

/// `f::<i>` for every i below 304 (19 rows of 16), as `Function`s: `table[i / 16][i % 16]`.
macro_rules! instances {
    ($f:ident) => {
        instances!(@rows $f; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18)
    };
    (@rows $f:ident; $($row:literal)*) => {
        [$(instances!(@row $f; $row; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)),*]
    };
    (@row $f:ident; $row:literal; $($col:literal)*) => {
        // SAFETY: called back only through the signature the command's name documents.
        [$(unsafe { std::mem::transmute::<*const (), Function>($f::<{ $row * 16 + $col }> as *const ()) }),*]
    };
}

const ROWS: usize = 19;
const _: () = assert!(ROWS * 16 >= COUNT);

static PHYSICAL_DEVICE_COMMANDS: [[Function; 16]; ROWS] = instances!(physical_device_command);
static DEVICE_COMMANDS: [[Function; 16]; ROWS] = instances!(device_command);

/// The synthetic command called `name`, if its level is one `accept` takes and the configuration
/// keeps it.
pub(crate) fn find(name: &CStr, accept: &dyn Fn(Level) -> bool) -> PFN_vkVoidFunction {
    // Most names asked are not synthetic: rule them out before any UTF-8 check.
    if !name.to_bytes().starts_with(b"vkTest") {
        return None;
    }
    let name = name.to_str().ok()?;
    let (level, table, rest) = if let Some(rest) = name.strip_prefix(PHYSICAL_DEVICE_PREFIX) {
        (Level::PhysicalDevice, &PHYSICAL_DEVICE_COMMANDS, rest)
    } else {
        (Level::Device, &DEVICE_COMMANDS, name.strip_prefix(DEVICE_PREFIX)?)
    };
    let digits = rest.strip_suffix(SUFFIX)?;
    if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) || !accept(level) {
        return None;
    }
    let index: usize = digits.parse().ok()?;
    (index < config::synthetic_commands()).then(|| table[index / 16][index % 16])
}
