//! `padding`: zeroing a structure's padding zeroes every padding byte, nested ones included, and
//! no byte of a member.

use std::mem::{offset_of, size_of};
use std::ops::Range;

use vk_generated::padding::{zero_padding_by_type, zero_padding_of, ZeroPadding, STRUCTURE_TYPES};
use vk_generated::types::*;

const FILL: u8 = 0xAB;

/// A `T`'s bytes, all `FILL`, after `zero_padding`; one byte more at each end to catch writes
/// outside the structure, and at an odd address (no alignment is needed).
fn cleaned<T: ZeroPadding>() -> Vec<u8> {
    let mut buf = vec![FILL; size_of::<T>() + 2];
    // SAFETY: `buf` has `size_of::<T>()` writable bytes after its first.
    unsafe { T::zero_padding(buf.as_mut_ptr().add(1)) };
    assert_eq!(
        (buf[0], buf[buf.len() - 1]),
        (FILL, FILL),
        "wrote outside the structure"
    );
    buf[1..buf.len() - 1].to_vec()
}

/// The runs of zero bytes.
fn zero_runs(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match runs.last_mut() {
            _ if b != 0 => assert_eq!(b, FILL, "byte {i} changed to {b:#x}"),
            Some(run) if run.end == i => run.end += 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

/// Checks that the bytes of every listed member are intact, and that the zeroed bytes number
/// `size_of::<T>()` less the members' sizes (`member_bytes`, the sum of every member's size,
/// recursively: given per target below).
fn check<T: ZeroPadding>(
    members: &[(&str, usize, usize)],
    member_bytes: usize,
) -> Vec<Range<usize>> {
    let bytes = cleaned::<T>();
    for &(name, offset, size) in members {
        assert!(offset + size <= bytes.len(), "{name}");
        assert!(
            bytes[offset..offset + size].iter().all(|&b| b == FILL),
            "{name} ({offset}..{}) was touched",
            offset + size
        );
    }
    let zeroed = bytes.iter().filter(|&&b| b == 0).count();
    assert_eq!(
        zeroed,
        size_of::<T>() - member_bytes,
        "zeroed {:?}",
        zero_runs(&bytes)
    );
    zero_runs(&bytes)
}

macro_rules! member {
    ($t:ty, $m:ident, $mt:ty) => {
        (stringify!($m), offset_of!($t, $m), size_of::<$mt>())
    };
}

/// Runs shifted by `by`.
fn shifted(runs: &[Range<usize>], by: usize) -> Vec<Range<usize>> {
    runs.iter().map(|r| r.start + by..r.end + by).collect()
}

#[test]
fn physical_device_properties() {
    type P = VkPhysicalDeviceProperties;
    type L = VkPhysicalDeviceLimits;
    let limits = offset_of!(P, limits);
    let members = [
        member!(P, apiVersion, u32),
        member!(P, deviceType, VkPhysicalDeviceType),
        member!(
            P,
            deviceName,
            [std::ffi::c_char; VK_MAX_PHYSICAL_DEVICE_NAME_SIZE as usize]
        ),
        member!(P, pipelineCacheUUID, [u8; VK_UUID_SIZE as usize]),
        member!(P, sparseProperties, VkPhysicalDeviceSparseProperties),
        (
            "limits.maxImageDimension1D",
            limits + offset_of!(L, maxImageDimension1D),
            4,
        ),
        (
            "limits.bufferImageGranularity",
            limits + offset_of!(L, bufferImageGranularity),
            8,
        ),
        (
            "limits.sparseAddressSpaceSize",
            limits + offset_of!(L, sparseAddressSpaceSize),
            8,
        ),
        (
            "limits.maxComputeWorkGroupCount",
            limits + offset_of!(L, maxComputeWorkGroupCount),
            12,
        ),
        (
            "limits.minMemoryMapAlignment",
            limits + offset_of!(L, minMemoryMapAlignment),
            size_of::<usize>(),
        ),
        (
            "limits.pointSizeRange",
            limits + offset_of!(L, pointSizeRange),
            8,
        ),
        (
            "limits.nonCoherentAtomSize",
            limits + offset_of!(L, nonCoherentAtomSize),
            8,
        ),
    ];
    if cfg!(target_pointer_width = "64") {
        let runs = check::<P>(&members, size_of::<P>() - 20);
        let mut expected: Vec<Range<usize>> = Vec::new();
        expected.push(292..296);
        expected.extend(shifted(&[44..48, 300..304, 476..480], limits));
        expected.push(820..824);
        assert_eq!(limits, 296);
        assert_eq!(runs, expected);
    }
}

#[test]
fn physical_device_memory_properties() {
    type M = VkPhysicalDeviceMemoryProperties;
    let heaps = offset_of!(M, memoryHeaps);
    let mut members = vec![
        member!(M, memoryTypeCount, u32),
        member!(M, memoryTypes, [VkMemoryType; VK_MAX_MEMORY_TYPES as usize]),
        member!(M, memoryHeapCount, u32),
    ];
    let heap_members = [
        member!(VkMemoryHeap, size, VkDeviceSize),
        member!(VkMemoryHeap, flags, VkMemoryHeapFlags),
    ];
    let mut heap_member_bytes = 0;
    for i in 0..VK_MAX_MEMORY_HEAPS as usize {
        for &(name, offset, size) in &heap_members {
            members.push((name, heaps + i * size_of::<VkMemoryHeap>() + offset, size));
            heap_member_bytes += size;
        }
    }
    // Every member's size: the heaps' by their members, the rest whole (VkMemoryType has no padding).
    let member_bytes =
        4 + size_of::<[VkMemoryType; VK_MAX_MEMORY_TYPES as usize]>() + 4 + heap_member_bytes;
    let runs = check::<M>(&members, member_bytes);
    // After `flags` where a `u64` is 8-byte aligned; none on i686, where it is 4-byte aligned.
    let heap_padding: Vec<Range<usize>> = (std::mem::align_of::<u64>() == 8).then_some(12..16).into_iter().collect();
    assert_eq!(zero_runs(&cleaned::<VkMemoryHeap>()), heap_padding);
    if cfg!(target_pointer_width = "64") {
        assert_eq!(heaps, 264);
        let expected: Vec<Range<usize>> = (0..16)
            .map(|i| heaps + 16 * i + 12..heaps + 16 * i + 16)
            .collect();
        assert_eq!(runs, expected);
    }
}

#[test]
fn vulkan12_properties() {
    type V = VkPhysicalDeviceVulkan12Properties;
    let members = [
        member!(V, sType, VkStructureType),
        member!(V, pNext, *mut std::ffi::c_void),
        member!(V, driverID, VkDriverId),
        member!(
            V,
            driverName,
            [std::ffi::c_char; VK_MAX_DRIVER_NAME_SIZE as usize]
        ),
        member!(
            V,
            driverInfo,
            [std::ffi::c_char; VK_MAX_DRIVER_INFO_SIZE as usize]
        ),
        member!(V, conformanceVersion, VkConformanceVersion),
        member!(V, filterMinmaxImageComponentMapping, VkBool32),
        member!(V, maxTimelineSemaphoreValueDifference, u64),
        member!(V, framebufferIntegerColorSampleCounts, VkSampleCountFlags),
    ];
    if cfg!(target_pointer_width = "64") {
        // 4..8 after sType; 732..736 after the last member (the u64 makes the size a multiple of 8).
        let runs = check::<V>(&members, size_of::<V>() - 8);
        assert_eq!(runs, vec![4..8, 732..736]);
    }
}

#[test]
fn texel_buffer_alignment_properties() {
    type T = VkPhysicalDeviceTexelBufferAlignmentProperties;
    let members = [
        member!(T, sType, VkStructureType),
        member!(T, pNext, *mut std::ffi::c_void),
        member!(T, storageTexelBufferOffsetAlignmentBytes, VkDeviceSize),
        member!(T, storageTexelBufferOffsetSingleTexelAlignment, VkBool32),
        member!(T, uniformTexelBufferOffsetAlignmentBytes, VkDeviceSize),
        member!(T, uniformTexelBufferOffsetSingleTexelAlignment, VkBool32),
    ];
    let member_bytes = members.iter().map(|m| m.2).sum();
    let runs = check::<T>(&members, member_bytes);
    if cfg!(target_pointer_width = "64") {
        assert_eq!(runs, vec![4..8, 28..32, 44..48]);
    }
}

#[test]
fn format_properties3() {
    type F = VkFormatProperties3;
    let members = [
        member!(F, sType, VkStructureType),
        member!(F, pNext, *mut std::ffi::c_void),
        member!(F, linearTilingFeatures, VkFormatFeatureFlags2),
        member!(F, optimalTilingFeatures, VkFormatFeatureFlags2),
        member!(F, bufferFeatures, VkFormatFeatureFlags2),
    ];
    let member_bytes = members.iter().map(|m| m.2).sum();
    let runs = check::<F>(&members, member_bytes);
    if cfg!(target_pointer_width = "64") {
        assert_eq!(runs, vec![4..8]);
    }
}

#[test]
fn extension_properties_have_no_padding() {
    assert!(zero_runs(&cleaned::<VkExtensionProperties>()).is_empty());
}

/// By sType: the same bytes as by type; an sType not covered does nothing.
#[test]
fn by_type() {
    let mut by_type = vec![FILL; size_of::<VkPhysicalDeviceTexelBufferAlignmentProperties>()];
    // SAFETY: `by_type` is as large as the structure the sType names.
    let done = unsafe {
        zero_padding_by_type(
            VkStructureType::PHYSICAL_DEVICE_TEXEL_BUFFER_ALIGNMENT_PROPERTIES,
            by_type.as_mut_ptr(),
        )
    };
    assert!(done);
    assert_eq!(
        by_type,
        cleaned::<VkPhysicalDeviceTexelBufferAlignmentProperties>()
    );

    let mut other = vec![FILL; size_of::<VkApplicationInfo>()];
    // SAFETY: `other` is as large as the structure the sType names.
    assert!(!unsafe {
        zero_padding_by_type(VkStructureType::APPLICATION_INFO, other.as_mut_ptr())
    });
    // SAFETY: an sType that names no structure: nothing is written.
    assert!(!unsafe { zero_padding_by_type(VkStructureType(0x7fff_fff0), other.as_mut_ptr()) });
    assert!(other.iter().all(|&b| b == FILL));

    for root in [
        VkStructureType::PHYSICAL_DEVICE_PROPERTIES_2,
        VkStructureType::PHYSICAL_DEVICE_FEATURES_2,
        VkStructureType::PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
        VkStructureType::FORMAT_PROPERTIES_2,
        VkStructureType::QUEUE_FAMILY_PROPERTIES_2,
        VkStructureType::PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES,
        VkStructureType::FORMAT_PROPERTIES_3,
    ] {
        assert!(STRUCTURE_TYPES.contains(&root), "{root:?}");
    }
}

/// Every covered sType is handled, and writes only padding: 0xAB bytes stay, none become other values.
#[test]
fn every_structure_type() {
    for &s_type in STRUCTURE_TYPES {
        let mut buf = vec![FILL; 1 << 16];
        assert!(
            // SAFETY: 64 KiB, more than any structure the sType can name.
            unsafe { zero_padding_by_type(s_type, buf.as_mut_ptr()) },
            "{s_type:?}"
        );
        zero_runs(&buf);
    }
}

/// The safe form, on a typed value: a driver's garbage in the padding after sType is gone, the
/// members stay.
#[test]
fn typed_value() {
    if cfg!(target_pointer_width = "32") {
        return; // pNext follows sType directly: no padding there to test.
    }
    let mut value = VkPhysicalDeviceProperties2::default();
    value.properties.limits.bufferImageGranularity = 0x1234;
    // SAFETY: bytes 4..8 of the structure, the padding after the 4-byte sType (before the 8-byte
    // aligned pNext): inside it, and any value is valid for padding.
    unsafe {
        std::ptr::from_mut(&mut value)
            .cast::<u8>()
            .add(4)
            .write_bytes(0xCD, 4)
    };
    zero_padding_of(&mut value);
    // SAFETY: the bytes of `value`, which lives and is not written while `bytes` is read; its
    // padding was just zeroed, so every byte is initialised.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            std::ptr::from_ref(&value).cast::<u8>(),
            size_of::<VkPhysicalDeviceProperties2>(),
        )
    };
    assert_eq!(bytes[4..8], [0; 4]);
    assert_eq!(value.sType, VkStructureType::PHYSICAL_DEVICE_PROPERTIES_2);
    assert_eq!(value.properties.limits.bufferImageGranularity, 0x1234);
}
