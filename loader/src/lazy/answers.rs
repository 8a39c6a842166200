//! Which physical-device answers are recorded, and how a query is answered from the record.
//!
//! Only answers that are fixed for the driver cache's key and the application are recorded: the
//! properties and features structures listed here (each checked by hand: no pointer member, no
//! value that changes while a process runs: never the memory budget, tool properties, host image
//! copy layouts or `VkPhysicalDeviceVulkan14Properties`, which carry arrays the application
//! provides), memory properties without extension structures, queue families without extension
//! structures, the device extensions (no layer name) and format properties (with
//! `VkFormatProperties3`). A query whose `pNext` chain holds any other structure, or an input not
//! recorded, is not answered from the record: the driver is loaded and asked.
//!
//! Answers are recorded by asking the live driver ([`record_device`]) once per application and
//! driver, when its instance is destroyed; a structure is chained only where the device supports
//! it (its core version or its extension), so the recording calls are valid usage.

use std::ffi::CStr;
use std::mem::{offset_of, size_of};

use vk_generated::padding::ZeroPadding;
use vk_generated::types::*;
use vk_generated::{InstanceDispatchTable, TaggedStruct};

use crate::cache::profile::{answer_key, DeviceAnswers, Family};
use crate::ffi;

/// A structure that may be answered from the record, and when a device has it.
pub struct Allowed {
    pub s_type: VkStructureType,
    pub size: usize,
    /// The Vulkan 1.x minor version that made it core (`u32::MAX`: never).
    core_minor: u32,
    /// The device extension that provides it otherwise.
    extension: &'static [u8],
}

impl Allowed {
    fn supported(&self, api_version: u32, extensions: &[VkExtensionProperties]) -> bool {
        vk_generated::api_version_major_minor(api_version) >= (1, self.core_minor)
            || (!self.extension.is_empty() && extensions.iter().any(|e| ffi::name_of(e) == self.extension))
    }
}

macro_rules! allowed {
    ($($ty:ident: $core:expr, $ext:expr;)*) => {
        &[$(Allowed { s_type: <$ty as TaggedStruct>::STRUCTURE_TYPE, size: size_of::<$ty>(), core_minor: $core, extension: $ext }),*]
    };
}

const NEVER: u32 = u32::MAX;

/// `vkGetPhysicalDeviceProperties2` extension structures answered from the record.
pub static PROPERTIES: &[Allowed] = allowed! {
    VkPhysicalDeviceIDProperties: 1, b"";
    VkPhysicalDeviceSubgroupProperties: 1, b"";
    VkPhysicalDeviceMultiviewProperties: 1, b"VK_KHR_multiview";
    VkPhysicalDevicePointClippingProperties: 1, b"VK_KHR_maintenance2";
    VkPhysicalDeviceProtectedMemoryProperties: 1, b"";
    VkPhysicalDeviceMaintenance3Properties: 1, b"VK_KHR_maintenance3";
    VkPhysicalDeviceDriverProperties: 2, b"VK_KHR_driver_properties";
    VkPhysicalDeviceVulkan11Properties: 2, b"";
    VkPhysicalDeviceVulkan12Properties: 2, b"";
    VkPhysicalDeviceDescriptorIndexingProperties: 2, b"VK_EXT_descriptor_indexing";
    VkPhysicalDeviceFloatControlsProperties: 2, b"VK_KHR_shader_float_controls";
    VkPhysicalDeviceDepthStencilResolveProperties: 2, b"VK_KHR_depth_stencil_resolve";
    VkPhysicalDeviceTimelineSemaphoreProperties: 2, b"VK_KHR_timeline_semaphore";
    VkPhysicalDeviceSamplerFilterMinmaxProperties: 2, b"VK_EXT_sampler_filter_minmax";
    VkPhysicalDeviceVulkan13Properties: 3, b"";
    VkPhysicalDeviceMaintenance4Properties: 3, b"VK_KHR_maintenance4";
    VkPhysicalDeviceInlineUniformBlockProperties: 3, b"VK_EXT_inline_uniform_block";
    VkPhysicalDeviceSubgroupSizeControlProperties: 3, b"VK_EXT_subgroup_size_control";
    VkPhysicalDeviceTexelBufferAlignmentProperties: 3, b"VK_EXT_texel_buffer_alignment";
    VkPhysicalDeviceShaderIntegerDotProductProperties: 3, b"VK_KHR_shader_integer_dot_product";
    VkPhysicalDevicePushDescriptorProperties: 4, b"VK_KHR_push_descriptor";
    VkPhysicalDeviceLineRasterizationProperties: 4, b"VK_EXT_line_rasterization";
    VkPhysicalDeviceMaintenance5Properties: 4, b"VK_KHR_maintenance5";
    VkPhysicalDeviceMaintenance6Properties: 4, b"VK_KHR_maintenance6";
    VkPhysicalDevicePCIBusInfoPropertiesEXT: NEVER, b"VK_EXT_pci_bus_info";
    VkPhysicalDeviceDrmPropertiesEXT: NEVER, b"VK_EXT_physical_device_drm";
    VkPhysicalDeviceRobustness2PropertiesKHR: NEVER, b"VK_EXT_robustness2";
    VkPhysicalDeviceCustomBorderColorPropertiesEXT: NEVER, b"VK_EXT_custom_border_color";
    VkPhysicalDeviceTransformFeedbackPropertiesEXT: NEVER, b"VK_EXT_transform_feedback";
    VkPhysicalDeviceConservativeRasterizationPropertiesEXT: NEVER, b"VK_EXT_conservative_rasterization";
    VkPhysicalDeviceExternalMemoryHostPropertiesEXT: NEVER, b"VK_EXT_external_memory_host";
    VkPhysicalDeviceVertexAttributeDivisorPropertiesEXT: NEVER, b"VK_EXT_vertex_attribute_divisor";
    VkPhysicalDeviceMeshShaderPropertiesEXT: NEVER, b"VK_EXT_mesh_shader";
    VkPhysicalDeviceFragmentShadingRatePropertiesKHR: NEVER, b"VK_KHR_fragment_shading_rate";
    VkPhysicalDeviceAccelerationStructurePropertiesKHR: NEVER, b"VK_KHR_acceleration_structure";
    VkPhysicalDeviceRayTracingPipelinePropertiesKHR: NEVER, b"VK_KHR_ray_tracing_pipeline";
    VkPhysicalDeviceMultiDrawPropertiesEXT: NEVER, b"VK_EXT_multi_draw";
    VkPhysicalDeviceProvokingVertexPropertiesEXT: NEVER, b"VK_EXT_provoking_vertex";
    VkPhysicalDeviceGraphicsPipelineLibraryPropertiesEXT: NEVER, b"VK_EXT_graphics_pipeline_library";
};

/// `vkGetPhysicalDeviceFeatures2` extension structures answered from the record (features are
/// plain booleans, fixed for a driver, a device and an application).
pub static FEATURES: &[Allowed] = allowed! {
    VkPhysicalDevice16BitStorageFeatures: 1, b"VK_KHR_16bit_storage";
    VkPhysicalDeviceMultiviewFeatures: 1, b"VK_KHR_multiview";
    VkPhysicalDeviceVariablePointersFeatures: 1, b"VK_KHR_variable_pointers";
    VkPhysicalDeviceProtectedMemoryFeatures: 1, b"";
    VkPhysicalDeviceSamplerYcbcrConversionFeatures: 1, b"VK_KHR_sampler_ycbcr_conversion";
    VkPhysicalDeviceShaderDrawParametersFeatures: 1, b"VK_KHR_shader_draw_parameters";
    VkPhysicalDeviceVulkan11Features: 2, b"";
    VkPhysicalDeviceVulkan12Features: 2, b"";
    VkPhysicalDevice8BitStorageFeatures: 2, b"VK_KHR_8bit_storage";
    VkPhysicalDeviceShaderAtomicInt64Features: 2, b"VK_KHR_shader_atomic_int64";
    VkPhysicalDeviceShaderFloat16Int8Features: 2, b"VK_KHR_shader_float16_int8";
    VkPhysicalDeviceDescriptorIndexingFeatures: 2, b"VK_EXT_descriptor_indexing";
    VkPhysicalDeviceScalarBlockLayoutFeatures: 2, b"VK_EXT_scalar_block_layout";
    VkPhysicalDeviceVulkanMemoryModelFeatures: 2, b"VK_KHR_vulkan_memory_model";
    VkPhysicalDeviceImagelessFramebufferFeatures: 2, b"VK_KHR_imageless_framebuffer";
    VkPhysicalDeviceUniformBufferStandardLayoutFeatures: 2, b"VK_KHR_uniform_buffer_standard_layout";
    VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures: 2, b"VK_KHR_shader_subgroup_extended_types";
    VkPhysicalDeviceSeparateDepthStencilLayoutsFeatures: 2, b"VK_KHR_separate_depth_stencil_layouts";
    VkPhysicalDeviceHostQueryResetFeatures: 2, b"VK_EXT_host_query_reset";
    VkPhysicalDeviceTimelineSemaphoreFeatures: 2, b"VK_KHR_timeline_semaphore";
    VkPhysicalDeviceBufferDeviceAddressFeatures: 2, b"VK_KHR_buffer_device_address";
    VkPhysicalDeviceVulkan13Features: 3, b"";
    VkPhysicalDeviceDynamicRenderingFeatures: 3, b"VK_KHR_dynamic_rendering";
    VkPhysicalDeviceSynchronization2Features: 3, b"VK_KHR_synchronization2";
    VkPhysicalDeviceMaintenance4Features: 3, b"VK_KHR_maintenance4";
    VkPhysicalDeviceShaderIntegerDotProductFeatures: 3, b"VK_KHR_shader_integer_dot_product";
    VkPhysicalDeviceImageRobustnessFeatures: 3, b"VK_EXT_image_robustness";
    VkPhysicalDevicePrivateDataFeatures: 3, b"VK_EXT_private_data";
    VkPhysicalDeviceTextureCompressionASTCHDRFeatures: 3, b"VK_EXT_texture_compression_astc_hdr";
    VkPhysicalDeviceShaderTerminateInvocationFeatures: 3, b"VK_KHR_shader_terminate_invocation";
    VkPhysicalDeviceZeroInitializeWorkgroupMemoryFeatures: 3, b"VK_KHR_zero_initialize_workgroup_memory";
    VkPhysicalDeviceShaderDemoteToHelperInvocationFeatures: 3, b"VK_EXT_shader_demote_to_helper_invocation";
    VkPhysicalDevicePipelineCreationCacheControlFeatures: 3, b"VK_EXT_pipeline_creation_cache_control";
    VkPhysicalDeviceSubgroupSizeControlFeatures: 3, b"VK_EXT_subgroup_size_control";
    VkPhysicalDeviceInlineUniformBlockFeatures: 3, b"VK_EXT_inline_uniform_block";
    VkPhysicalDeviceVulkan14Features: 4, b"";
    VkPhysicalDeviceLineRasterizationFeatures: 4, b"VK_EXT_line_rasterization";
    VkPhysicalDeviceIndexTypeUint8Features: 4, b"VK_EXT_index_type_uint8";
    VkPhysicalDeviceVertexAttributeDivisorFeatures: 4, b"VK_KHR_vertex_attribute_divisor";
    VkPhysicalDeviceMaintenance5Features: 4, b"VK_KHR_maintenance5";
    VkPhysicalDeviceMaintenance6Features: 4, b"VK_KHR_maintenance6";
    VkPhysicalDevicePipelineRobustnessFeatures: 4, b"VK_EXT_pipeline_robustness";
    VkPhysicalDeviceExtendedDynamicStateFeaturesEXT: NEVER, b"VK_EXT_extended_dynamic_state";
    VkPhysicalDeviceExtendedDynamicState2FeaturesEXT: NEVER, b"VK_EXT_extended_dynamic_state2";
    VkPhysicalDeviceExtendedDynamicState3FeaturesEXT: NEVER, b"VK_EXT_extended_dynamic_state3";
    VkPhysicalDeviceRobustness2FeaturesKHR: NEVER, b"VK_EXT_robustness2";
    VkPhysicalDeviceCustomBorderColorFeaturesEXT: NEVER, b"VK_EXT_custom_border_color";
    VkPhysicalDeviceTransformFeedbackFeaturesEXT: NEVER, b"VK_EXT_transform_feedback";
    VkPhysicalDeviceMeshShaderFeaturesEXT: NEVER, b"VK_EXT_mesh_shader";
    VkPhysicalDeviceAccelerationStructureFeaturesKHR: NEVER, b"VK_KHR_acceleration_structure";
    VkPhysicalDeviceRayTracingPipelineFeaturesKHR: NEVER, b"VK_KHR_ray_tracing_pipeline";
    VkPhysicalDeviceRayQueryFeaturesKHR: NEVER, b"VK_KHR_ray_query";
    VkPhysicalDeviceMultiDrawFeaturesEXT: NEVER, b"VK_EXT_multi_draw";
    VkPhysicalDeviceDescriptorBufferFeaturesEXT: NEVER, b"VK_EXT_descriptor_buffer";
    VkPhysicalDeviceFragmentShadingRateFeaturesKHR: NEVER, b"VK_KHR_fragment_shading_rate";
    VkPhysicalDeviceShaderObjectFeaturesEXT: NEVER, b"VK_EXT_shader_object";
    VkPhysicalDeviceTexelBufferAlignmentFeaturesEXT: NEVER, b"VK_EXT_texel_buffer_alignment";
};

/// `vkGetPhysicalDeviceFormatProperties2` extension structures answered from the record.
pub static FORMAT: &[Allowed] = allowed! {
    VkFormatProperties3: 3, b"VK_KHR_format_feature_flags2";
};

/// The formats recorded: the core 1.0 formats and, on 1.1 devices, the YCbCr ones.
fn recorded_formats(api_version: u32) -> impl Iterator<Item = u32> {
    let ycbcr = vk_generated::api_version_major_minor(api_version) >= (1, 1);
    (1..=184u32).chain((1_000_156_000..=1_000_156_033).filter(move |_| ycbcr))
}

/// The bytes of a structure after its `sType`/`pNext` header, `size` bytes in all.
unsafe fn body<'a>(s: *const VkBaseOutStructure, size: usize) -> &'a [u8] {
    let header = size_of::<VkBaseOutStructure>();
    std::slice::from_raw_parts((s as *const u8).add(header), size - header)
}

/// The head structure of a `2` query (e.g. `VkPhysicalDeviceProperties2`), whose answer is its
/// plain form (`VkPhysicalDeviceProperties`): the same bytes as the 1.0 query's, the head's tail
/// padding left out.
pub struct Head {
    pub family: Family,
    pub s_type: VkStructureType,
    /// The header and the plain structure, without the head's tail padding.
    pub size: usize,
}

pub const PROPERTIES_HEAD: Head = Head {
    family: Family::Properties,
    s_type: VkStructureType::PHYSICAL_DEVICE_PROPERTIES_2,
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceProperties>(),
};
pub const FEATURES_HEAD: Head = Head {
    family: Family::Features,
    s_type: VkStructureType::PHYSICAL_DEVICE_FEATURES_2,
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceFeatures>(),
};
pub const MEMORY_HEAD: Head = Head {
    family: Family::Memory,
    s_type: VkStructureType::PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceMemoryProperties>(),
};
pub const FORMAT_HEAD: Head =
    Head { family: Family::Format, s_type: VkStructureType::FORMAT_PROPERTIES_2, size: size_of::<VkBaseOutStructure>() + size_of::<VkFormatProperties>() };

const _: () = assert!(offset_of!(VkPhysicalDeviceProperties2, properties) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkPhysicalDeviceFeatures2, features) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkPhysicalDeviceMemoryProperties2, memoryProperties) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkFormatProperties2, formatProperties) == size_of::<VkBaseOutStructure>());

/// Fills the chain that starts at `head` (a `2` query's output) from the record, leaving every
/// `sType` and `pNext` as the application set them. `false`, with nothing written, when a
/// structure of the chain was not recorded (or is not one that may be).
///
/// # Safety
/// `head` must be a valid output chain of the query `kind` describes.
pub unsafe fn replay_chain(head: *mut VkBaseOutStructure, kind: &Head, allowed: &[Allowed], input: u32, answers: &DeviceAnswers) -> bool {
    let mut found: Vec<(*mut VkBaseOutStructure, usize, &[u8])> = Vec::new();
    let mut next = head;
    while let Some(s) = next.as_mut() {
        let size = if next == head {
            kind.size
        } else {
            match allowed.iter().find(|a| a.s_type == s.sType) {
                Some(a) => a.size,
                None => return false,
            }
        };
        let Some(bytes) = answers.get(answer_key(kind.family, input, s.sType.0 as u32)) else {
            return false;
        };
        if bytes.len() != size - size_of::<VkBaseOutStructure>() {
            return false;
        }
        found.push((next, size, bytes));
        next = s.pNext;
    }
    for (s, _, bytes) in found {
        let out = (s as *mut u8).add(size_of::<VkBaseOutStructure>());
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
    }
    true
}

/// Records the answers in a filled output chain (the allowed structures of it).
unsafe fn record_chain(head: *const VkBaseOutStructure, kind: &Head, allowed: &[Allowed], input: u32, answers: &mut DeviceAnswers) {
    let mut next = head;
    while let Some(s) = next.as_ref() {
        let size = if next == head { Some(kind.size) } else { allowed.iter().find(|a| a.s_type == s.sType).map(|a| a.size) };
        if let Some(size) = size {
            answers.set(answer_key(kind.family, input, s.sType.0 as u32), body(next, size));
        }
        next = s.pNext;
    }
}

/// Zeroed output structures for every allowed structure the device supports, chained behind a
/// head of `kind`: the storage (8-byte aligned words) and the head's address.
fn output_chain(kind: &Head, allowed: &[Allowed], api_version: u32, extensions: &[VkExtensionProperties]) -> Vec<Vec<u64>> {
    // The head's block is rounded up to whole words, so its tail padding is allocated too.
    let mut blocks: Vec<Vec<u64>> = std::iter::once((kind.s_type, kind.size))
        .chain(allowed.iter().filter(|a| a.supported(api_version, extensions)).map(|a| (a.s_type, a.size)))
        .map(|(s_type, size)| {
            let mut block = vec![0u64; size.div_ceil(8)];
            // SAFETY: the block is large enough and aligned for the header.
            unsafe { (*(block.as_mut_ptr() as *mut VkBaseOutStructure)).sType = s_type };
            block
        })
        .collect();
    for i in (1..blocks.len()).rev() {
        let next = blocks[i].as_mut_ptr() as *mut VkBaseOutStructure;
        // SAFETY: as above; the blocks do not move while the chain is used (the Vec of Vecs keeps them).
        unsafe { (*(blocks[i - 1].as_mut_ptr() as *mut VkBaseOutStructure)).pNext = next };
    }
    blocks
}

/// The device extensions as recorded: (name, spec version) pairs, each name NUL-terminated.
pub fn encode_extensions(extensions: &[VkExtensionProperties]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in extensions {
        out.extend_from_slice(ffi::name_of(e));
        out.push(0);
        out.extend_from_slice(&e.specVersion.to_le_bytes());
    }
    out
}

/// The device extensions read in place from their record, in order: each entry's name and spec
/// version; an entry that does not decode is `None` and ends the list.
pub fn extension_entries(mut bytes: &[u8]) -> impl Iterator<Item = Option<(&CStr, u32)>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let entry = name_at(bytes).and_then(|name| {
            let rest = &bytes[name.to_bytes_with_nul().len()..];
            let spec = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
            (name.to_bytes().len() < VK_MAX_EXTENSION_NAME_SIZE as usize).then_some((name, spec, &rest[4..]))
        });
        bytes = entry.map_or(&[], |(_, _, rest)| rest);
        Some(entry.map(|(name, spec, _)| (name, spec)))
    })
}

/// The NUL-terminated name `bytes` starts with. Found with the C library's `memchr`: a record
/// holds some 250 names, read at every enumeration, and `CStr::from_bytes_until_nul`'s portable
/// search costs some four times as many instructions on names this short.
fn name_at(bytes: &[u8]) -> Option<&CStr> {
    // SAFETY: memchr reads at most `bytes.len()` bytes of `bytes`.
    let nul = unsafe { libc::memchr(bytes.as_ptr().cast(), 0, bytes.len()) };
    if nul.is_null() {
        return None;
    }
    let length = nul as usize - bytes.as_ptr() as usize;
    // SAFETY: `bytes[length]` is the first NUL of `bytes`.
    Some(unsafe { CStr::from_bytes_with_nul_unchecked(&bytes[..=length]) })
}

/// How many device extensions their record holds, and whether `name` is one of them, in one
/// pass; `None` if the record does not decode.
pub fn count_extensions(bytes: &[u8], name: &CStr) -> Option<(u32, bool)> {
    extension_entries(bytes).try_fold((0u32, false), |(n, found), entry| entry.map(|(listed, _)| (n + 1, found || listed == name)))
}

/// A two-call query's answer written straight from the record (`total` entries, as
/// [`count_extensions`] gave): no list is built (a driver lists some 250 extensions, 64 KiB as
/// `VkExtensionProperties`).
///
/// # Safety
/// As [`ffi::fill`]: `count` valid or NULL, `out` NULL or an array of `*count` structures.
pub unsafe fn fill_extensions(bytes: &[u8], total: u32, count: *mut u32, out: *mut VkExtensionProperties) -> VkResult {
    if count.is_null() {
        return VkResult::ERROR_INITIALIZATION_FAILED;
    }
    if out.is_null() {
        *count = total;
        return VkResult::SUCCESS;
    }
    let n = (*count).min(total);
    for (k, (name, spec)) in extension_entries(bytes).map_while(|entry| entry).take(n as usize).enumerate() {
        // Written in place, field by field: a driver lists some 250, and layers ask repeatedly.
        let slot = out.add(k);
        let name_field = std::ptr::addr_of_mut!((*slot).extensionName) as *mut u8;
        let length = name.to_bytes().len();
        std::ptr::copy_nonoverlapping(name.as_ptr() as *const u8, name_field, length);
        std::ptr::write_bytes(name_field.add(length), 0, VK_MAX_EXTENSION_NAME_SIZE as usize - length);
        std::ptr::addr_of_mut!((*slot).specVersion).write(spec);
    }
    *count = n;
    if n < total { VkResult::INCOMPLETE } else { VkResult::SUCCESS }
}

/// A list of plain structures from its record (their bytes, one after the other); `None` if the
/// length does not fit.
pub fn decode_list<T: Copy + Default>(bytes: &[u8]) -> Option<Vec<T>> {
    let size = size_of::<T>();
    if size == 0 || !bytes.len().is_multiple_of(size) {
        return None;
    }
    let mut out = vec![T::default(); bytes.len() / size];
    // SAFETY: plain `#[repr(C)]` Vulkan structures without pointers; lengths checked.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr() as *mut u8, bytes.len()) };
    Some(out)
}

/// Zeroed storage for one `T` (8-byte words, so any Vulkan structure fits its alignment).
fn zeroed_words<T>() -> Vec<u64> {
    vec![0u64; size_of::<T>().div_ceil(8)]
}

/// The bytes a driver wrote into a `T` (`words` from [`zeroed_words`]), padding zeroed: drivers
/// copy their structures' padding too, which must neither reach the file nor make two records of
/// the same answers differ.
unsafe fn plain_bytes<T: ZeroPadding>(words: &mut [u64]) -> &[u8] {
    T::zero_padding(words.as_mut_ptr().cast());
    std::slice::from_raw_parts(words.as_ptr() as *const u8, size_of::<T>())
}

/// Asks a live driver's device everything that may be answered from the record, and records it.
/// The driver writes into zeroed storage of ours, whose padding is zeroed again afterwards.
///
/// # Safety
/// `table` and `handle` must be a live driver instance's table and one of its physical devices.
pub unsafe fn record_device(table: &InstanceDispatchTable, handle: VkPhysicalDevice, answers: &mut DeviceAnswers) {
    let Some(get_properties) = table.vkGetPhysicalDeviceProperties else { return };
    let mut properties = zeroed_words::<VkPhysicalDeviceProperties>();
    get_properties(handle, properties.as_mut_ptr().cast());
    answers.set(answer_key(Family::Properties, 0, PROPERTIES_HEAD.s_type.0 as u32), plain_bytes::<VkPhysicalDeviceProperties>(&mut properties));
    let version = (*(properties.as_ptr() as *const VkPhysicalDeviceProperties)).apiVersion;
    let extensions = match table.vkEnumerateDeviceExtensionProperties {
        Some(f) => ffi::query(|count, out| f(handle, std::ptr::null(), count, out)).unwrap_or_default(),
        None => Vec::new(),
    };
    answers.set(answer_key(Family::DeviceExtensions, 0, 0), &encode_extensions(&extensions));
    if let Some(f) = table.vkGetPhysicalDeviceFeatures {
        let mut features = zeroed_words::<VkPhysicalDeviceFeatures>();
        f(handle, features.as_mut_ptr().cast());
        answers.set(answer_key(Family::Features, 0, FEATURES_HEAD.s_type.0 as u32), plain_bytes::<VkPhysicalDeviceFeatures>(&mut features));
    }
    if let Some(f) = table.vkGetPhysicalDeviceMemoryProperties {
        let mut memory = zeroed_words::<VkPhysicalDeviceMemoryProperties>();
        f(handle, memory.as_mut_ptr().cast());
        answers.set(answer_key(Family::Memory, 0, MEMORY_HEAD.s_type.0 as u32), plain_bytes::<VkPhysicalDeviceMemoryProperties>(&mut memory));
    }
    if let Some(f) = table.vkGetPhysicalDeviceQueueFamilyProperties {
        let mut count = 0;
        f(handle, &mut count, std::ptr::null_mut());
        let size = size_of::<VkQueueFamilyProperties>();
        let mut storage = vec![0u64; (size * count as usize).div_ceil(8)];
        let mut written = count;
        f(handle, &mut written, storage.as_mut_ptr().cast());
        let written = written.min(count) as usize;
        for i in 0..written {
            VkQueueFamilyProperties::zero_padding((storage.as_mut_ptr() as *mut u8).add(i * size));
        }
        let list = std::slice::from_raw_parts(storage.as_ptr() as *const u8, written * size);
        answers.set(answer_key(Family::QueueFamilies, 0, 0), list);
    }
    // The `2` queries, where the device has them (the Vulkan 1.1 device or the instance extension
    // the loader gives drivers for its own use).
    let chained = |kind: &Head, allowed: &[Allowed], input: u32, answers: &mut DeviceAnswers, call: &dyn Fn(*mut VkBaseOutStructure)| {
        let mut blocks = output_chain(kind, allowed, version, &extensions);
        let head = blocks[0].as_mut_ptr() as *mut VkBaseOutStructure;
        call(head);
        for block in &mut blocks {
            let s_type = (*(block.as_ptr() as *const VkBaseOutStructure)).sType;
            vk_generated::padding::zero_padding_by_type(s_type, block.as_mut_ptr().cast());
        }
        record_chain(head, kind, allowed, input, answers);
    };
    if vk_generated::api_version_major_minor(version) >= (1, 1) {
        if let Some(f) = table.vkGetPhysicalDeviceProperties2 {
            chained(&PROPERTIES_HEAD, PROPERTIES, 0, answers, &|head| f(handle, head.cast()));
        }
        if let Some(f) = table.vkGetPhysicalDeviceFeatures2 {
            chained(&FEATURES_HEAD, FEATURES, 0, answers, &|head| f(handle, head.cast()));
        }
    }
    let format2 = table.vkGetPhysicalDeviceFormatProperties2.filter(|_| vk_generated::api_version_major_minor(version) >= (1, 1));
    for format in recorded_formats(version) {
        match (format2, table.vkGetPhysicalDeviceFormatProperties) {
            (Some(f), _) => chained(&FORMAT_HEAD, FORMAT, format, answers, &|head| f(handle, VkFormat(format as _), head.cast())),
            (None, Some(f)) => {
                let mut out = zeroed_words::<VkFormatProperties>();
                f(handle, VkFormat(format as _), out.as_mut_ptr().cast());
                answers.set(answer_key(Family::Format, format, FORMAT_HEAD.s_type.0 as u32), plain_bytes::<VkFormatProperties>(&mut out));
            }
            (None, None) => {}
        }
    }
}

/// A device's name, bounded by its array (a record is read as untrusted input).
pub fn device_name(p: &VkPhysicalDeviceProperties) -> &[u8] {
    ffi::fixed_str(&p.deviceName)
}

/// How a device's answers now differ from its record (verify mode): byte for byte (padding is
/// zeroed when recorded).
pub fn differences(recorded: &crate::cache::profile::Profile, now: &crate::cache::profile::Profile) -> String {
    crate::cache::profile::differences(recorded, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_answered_only_when_every_structure_was_recorded() {
        let mut answers = DeviceAnswers::default();
        let mut recorded = VkPhysicalDeviceProperties2::default();
        recorded.properties.deviceID = 0x1234;
        let mut id = VkPhysicalDeviceIDProperties { deviceUUID: [7; 16], ..Default::default() };
        recorded.pNext = &mut id as *mut _ as *mut _;
        unsafe { record_chain(&recorded as *const _ as *const _, &PROPERTIES_HEAD, PROPERTIES, 0, &mut answers) };

        let mut asked = VkPhysicalDeviceProperties2::default();
        let mut asked_id = VkPhysicalDeviceIDProperties::default();
        asked.pNext = &mut asked_id as *mut _ as *mut _;
        assert!(unsafe { replay_chain(&mut asked as *mut _ as *mut _, &PROPERTIES_HEAD, PROPERTIES, 0, &answers,) });
        assert_eq!(asked.properties.deviceID, 0x1234);
        assert_eq!(asked_id.deviceUUID, [7; 16]);
        assert_eq!(asked.pNext, &mut asked_id as *mut _ as *mut _, "the application's chain is kept");

        // A structure not recorded: nothing is written.
        let mut pci = VkPhysicalDevicePCIBusInfoPropertiesEXT::default();
        let mut again = VkPhysicalDeviceProperties2 { pNext: &mut pci as *mut _ as *mut _, ..Default::default() };
        assert!(!unsafe { replay_chain(&mut again as *mut _ as *mut _, &PROPERTIES_HEAD, PROPERTIES, 0, &answers,) });
        assert_eq!(again.properties.deviceID, 0);
        // A structure that may never be answered from the record.
        let mut budget = VkPhysicalDeviceMemoryBudgetPropertiesEXT::default();
        let mut memory = VkPhysicalDeviceMemoryProperties2 { pNext: &mut budget as *mut _ as *mut _, ..Default::default() };
        answers.set(answer_key(Family::Memory, 0, MEMORY_HEAD.s_type.0 as u32), &[0; size_of::<VkPhysicalDeviceMemoryProperties>()]);
        assert!(!unsafe { replay_chain(&mut memory as *mut _ as *mut _, &MEMORY_HEAD, &[], 0, &answers,) });
    }

    #[test]
    fn a_head_recorded_through_the_2_query_answers_the_1_0_query() {
        let mut answers = DeviceAnswers::default();
        let mut features = VkPhysicalDeviceFeatures2::default();
        features.features.geometryShader = VK_TRUE;
        unsafe { record_chain(&features as *const _ as *const _, &FEATURES_HEAD, FEATURES, 0, &mut answers) };
        // VkPhysicalDeviceFeatures2 has tail padding; the answer is the plain structure's bytes.
        let plain = decode_list::<VkPhysicalDeviceFeatures>(answers.get(answer_key(Family::Features, 0, FEATURES_HEAD.s_type.0 as u32)).unwrap());
        assert_eq!(plain.map(|p| p[0].geometryShader), Some(VK_TRUE));
    }

    #[test]
    fn extension_lists_survive_their_record() {
        let list = vec![ffi::extension_properties(c"VK_KHR_swapchain", 70), ffi::extension_properties(c"VK_EXT_pci_bus_info", 2)];
        let bytes = encode_extensions(&list);
        assert_eq!(count_extensions(&bytes, c"VK_EXT_pci_bus_info"), Some((2, true)));
        assert_eq!(count_extensions(&bytes, c"VK_EXT_pci"), Some((2, false)));
        let mut out = [VkExtensionProperties::default(); 2];
        let mut count = 2;
        assert_eq!(unsafe { fill_extensions(&bytes, 2, &mut count, out.as_mut_ptr()) }, VkResult::SUCCESS);
        assert_eq!((count, ffi::name_of(&out[1]), out[0].specVersion), (2, &b"VK_EXT_pci_bus_info"[..], 70));
        // Room for one: the first, and VK_INCOMPLETE; the count alone.
        let (mut one, mut count) = ([VkExtensionProperties::default(); 1], 1);
        assert_eq!(unsafe { fill_extensions(&bytes, 2, &mut count, one.as_mut_ptr()) }, VkResult::INCOMPLETE);
        assert_eq!((count, ffi::name_of(&one[0])), (1, &b"VK_KHR_swapchain"[..]));
        assert_eq!(unsafe { fill_extensions(&bytes, 2, &mut count, std::ptr::null_mut()) }, VkResult::SUCCESS);
        assert_eq!(count, 2);
        // A spec version cut short, a name without its NUL, a name too long: none decodes.
        assert_eq!(count_extensions(b"VK_KHR_swapchain\0\x01", c"VK_KHR_swapchain"), None);
        assert_eq!(count_extensions(b"VK_KHR_swapchain", c"VK_KHR_swapchain"), None);
        assert_eq!(count_extensions(&[[b'a'; 256].as_slice(), b"\0\x01\0\0\0"].concat(), c"a"), None);
        assert!(decode_list::<VkQueueFamilyProperties>(&[0; 23]).is_none());
    }

    #[test]
    fn no_allowed_structure_is_listed_twice() {
        for list in [PROPERTIES, FEATURES, FORMAT] {
            for (i, a) in list.iter().enumerate() {
                assert!(a.size > size_of::<VkBaseOutStructure>());
                assert!(list[..i].iter().all(|b| b.s_type != a.s_type), "{:?} listed twice", a.s_type);
            }
        }
    }
}
