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
//! driver, at the first enumeration of its devices (else when its instance is destroyed); a
//! structure is chained only where the device supports it (its core version or its extension), so
//! the recording calls are valid usage. Formats are not among them: the loader asks a driver only
//! the formats the application asks (a driver may fail on one nobody asked, as the Khronos loader
//! never asks it). A lazy driver records each format the application asks, once its record lacks
//! one ([`record_format`]), for the next launches.

use std::ffi::CStr;
use std::mem::{offset_of, size_of};

use vk_generated::types::*;

use crate::cache::profile::{answer_key, DeviceAnswers, Family};
use crate::ffi::{self, OutArray, OutChain, TaggedSize};
pub use crate::plain::{decode_body, decode_list};
use crate::load::fixed_queries::{FixedQueries, OutputChain};

/// A structure that may be answered from the record, and when a device has it.
pub struct Allowed {
    /// Its structure type and size.
    pub structure: TaggedSize,
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
        &[$(Allowed { structure: TaggedSize::of::<$ty>(), core_minor: $core, extension: $ext }),*]
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

/// The head structure of a `2` query (e.g. `VkPhysicalDeviceProperties2`), whose answer is its
/// plain form (`VkPhysicalDeviceProperties`): the same bytes as the 1.0 query's, the head's tail
/// padding left out.
pub struct Head {
    pub family: Family,
    /// The head's own type and size.
    pub structure: TaggedSize,
    /// The header and the plain structure, without the head's tail padding.
    pub size: usize,
}

pub const PROPERTIES_HEAD: Head = Head {
    family: Family::Properties,
    structure: TaggedSize::of::<VkPhysicalDeviceProperties2>(),
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceProperties>(),
};
pub const FEATURES_HEAD: Head = Head {
    family: Family::Features,
    structure: TaggedSize::of::<VkPhysicalDeviceFeatures2>(),
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceFeatures>(),
};
pub const MEMORY_HEAD: Head = Head {
    family: Family::Memory,
    structure: TaggedSize::of::<VkPhysicalDeviceMemoryProperties2>(),
    size: size_of::<VkBaseOutStructure>() + size_of::<VkPhysicalDeviceMemoryProperties>(),
};
pub const FORMAT_HEAD: Head = Head {
    family: Family::Format,
    structure: TaggedSize::of::<VkFormatProperties2>(),
    size: size_of::<VkBaseOutStructure>() + size_of::<VkFormatProperties>(),
};

const _: () = assert!(offset_of!(VkPhysicalDeviceProperties2, properties) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkPhysicalDeviceFeatures2, features) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkPhysicalDeviceMemoryProperties2, memoryProperties) == size_of::<VkBaseOutStructure>());
const _: () = assert!(offset_of!(VkFormatProperties2, formatProperties) == size_of::<VkBaseOutStructure>());

/// Fills the application's output chain of a `2` query from the record, leaving every `sType`
/// and `pNext` as the application set them. `false`, with nothing written, when a structure of
/// the chain was not recorded (or is not one that may be).
pub fn replay_chain(chain: &mut OutChain, kind: &Head, allowed: &[Allowed], input: u32, answers: &DeviceAnswers) -> bool {
    let mut bodies = Vec::new();
    for (i, element) in chain.elements().enumerate() {
        let s_type = element.s_type();
        let (structure, size) = if i == 0 {
            (kind.structure, kind.size)
        } else {
            match allowed.iter().find(|a| a.structure.s_type() == s_type) {
                Some(a) => (a.structure, a.structure.size()),
                None => return false,
            }
        };
        let Some(bytes) = answers.get(answer_key(kind.family, input, s_type.0 as u32)) else {
            return false;
        };
        if bytes.len() != size - size_of::<VkBaseOutStructure>() {
            return false;
        }
        bodies.push((element, structure, bytes));
    }
    chain.write_bodies(&bodies)
}

/// Records the answers in a filled output chain, each structure's bytes (header included) in
/// order, head first: each one's body, the head's without its tail padding.
fn record_structures<'a>(structures: impl Iterator<Item = (TaggedSize, &'a [u8])>, kind: &Head, input: u32, answers: &mut DeviceAnswers) {
    let header = size_of::<VkBaseOutStructure>();
    for (i, (structure, bytes)) in structures.enumerate() {
        let size = if i == 0 { kind.size } else { structure.size() };
        if let Some(body) = bytes.get(header..size) {
            answers.set(answer_key(kind.family, input, structure.s_type().0 as u32), body);
        }
    }
}

/// Zeroed output structures for every allowed structure the device supports, chained behind a
/// head of `kind`.
fn output_chain(kind: &Head, allowed: &[Allowed], api_version: u32, extensions: &[VkExtensionProperties]) -> OutputChain {
    OutputChain::new(kind.structure, allowed.iter().filter(|a| a.supported(api_version, extensions)).map(|a| a.structure))
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
        let entry = ffi::c_str_at(bytes).and_then(|name| {
            let rest = &bytes[name.to_bytes_with_nul().len()..];
            let spec = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?);
            (name.to_bytes().len() < VK_MAX_EXTENSION_NAME_SIZE as usize).then_some((name, spec, &rest[4..]))
        });
        bytes = entry.map_or(&[], |(_, _, rest)| rest);
        Some(entry.map(|(name, spec, _)| (name, spec)))
    })
}

/// How many device extensions their record holds, and whether `name` is one of them, in one
/// pass; `None` if the record does not decode.
pub fn count_extensions(bytes: &[u8], name: &CStr) -> Option<(u32, bool)> {
    extension_entries(bytes).try_fold((0u32, false), |(n, found), entry| entry.map(|(listed, _)| (n + 1, found || listed == name)))
}

/// A two-call query's answer written straight from the record (`total` entries, as
/// [`count_extensions`] gave): no list is built (a driver lists some 250 extensions, 64 KiB as
/// `VkExtensionProperties`), and each entry is written in place.
pub fn fill_extensions(bytes: &[u8], total: u32, out: OutArray<VkExtensionProperties>) -> VkResult {
    let entries = extension_entries(bytes).map_while(|entry| entry);
    out.fill_with(total as usize, entries, |slot, (name, spec)| ffi::write_extension(slot, name.to_bytes(), spec))
}

/// Asks a live driver's device everything that may be answered from the record, and records it.
pub fn record_device(device: FixedQueries, answers: &mut DeviceAnswers) {
    let Some(mut properties) = device.properties() else { return };
    answers.set(answer_key(Family::Properties, 0, PROPERTIES_HEAD.structure.s_type().0 as u32), properties.bytes());
    let version = properties.get(0).map_or(0, |p| p.apiVersion);
    let extensions = device.extensions();
    answers.set(answer_key(Family::DeviceExtensions, 0, 0), &encode_extensions(&extensions));
    if let Some(mut features) = device.features() {
        answers.set(answer_key(Family::Features, 0, FEATURES_HEAD.structure.s_type().0 as u32), features.bytes());
    }
    if let Some(mut memory) = device.memory_properties() {
        answers.set(answer_key(Family::Memory, 0, MEMORY_HEAD.structure.s_type().0 as u32), memory.bytes());
    }
    if let Some(mut families) = device.queue_families() {
        answers.set(answer_key(Family::QueueFamilies, 0, 0), families.bytes());
    }
    // The `2` queries, where the device has them (the Vulkan 1.1 device or the instance extension
    // the loader gives drivers for its own use).
    let chained = |kind: &Head, allowed: &[Allowed], input: u32, answers: &mut DeviceAnswers, call: &dyn Fn(&mut OutputChain) -> bool| {
        let mut chain = output_chain(kind, allowed, version, &extensions);
        if call(&mut chain) {
            record_structures(chain.structures(), kind, input, answers);
        }
    };
    if vk_generated::api_version_major_minor(version) >= (1, 1) {
        chained(&PROPERTIES_HEAD, PROPERTIES, 0, answers, &|chain| device.properties2(chain));
        chained(&FEATURES_HEAD, FEATURES, 0, answers, &|chain| device.features2(chain));
    }
}

/// The formats whose answers `answers` holds (those an application asked): found among every
/// format the registry names (`VK_FORMAT_UNDEFINED` too), the core ones and those of extensions
/// (1,000,000,000 + 1000 x (the extension's number - 1) + an offset).
pub fn recorded_formats(answers: &DeviceAnswers) -> Vec<u32> {
    let core = 0..1000u32;
    let of_extensions = (0..1000u32).flat_map(|e| (0..100u32).map(move |o| 1_000_000_000 + e * 1000 + o));
    let head = FORMAT_HEAD.structure.s_type().0 as u32;
    core.chain(of_extensions)
        .filter(|&f| VkFormat(f as _).name().is_some() && answers.get(answer_key(Family::Format, f, head)).is_some())
        .collect()
}

/// What [`FormatRecorder::record_format`] needs to know of a device once: its API version and extensions.
pub struct FormatRecorder {
    version: u32,
    extensions: Vec<VkExtensionProperties>,
}

impl FormatRecorder {
    /// Asks the live driver's device its version and extensions.
    pub fn of(device: FixedQueries) -> FormatRecorder {
        let version = device.properties().and_then(|p| p.get(0).map(|p| p.apiVersion)).unwrap_or(0);
        FormatRecorder { version, extensions: device.extensions() }
    }

    /// Asks the live driver's device the properties of `format` (one the application asked), as
    /// the record keeps them (with `VkFormatProperties3` where the device has it), and records them.
    pub fn record_format(&self, device: FixedQueries, format: u32, answers: &mut DeviceAnswers) {
        let vk_format = VkFormat(format as _);
        if vk_generated::api_version_major_minor(self.version) >= (1, 1) && device.has_format_properties2() {
            let mut chain = output_chain(&FORMAT_HEAD, FORMAT, self.version, &self.extensions);
            if device.format_properties2(vk_format, &mut chain) {
                record_structures(chain.structures(), &FORMAT_HEAD, format, answers);
            }
        } else if let Some(mut out) = device.format_properties(vk_format) {
            answers.set(answer_key(Family::Format, format, FORMAT_HEAD.structure.s_type().0 as u32), out.bytes());
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
    use std::ffi::c_void;

    use vk_generated::padding::ZeroPadding;
    use vk_generated::TaggedStruct;

    use super::*;

    /// A structure's bytes as a filled output chain hands them over (its padding zeroed first).
    fn filled<T: TaggedStruct + ZeroPadding>(value: &mut T) -> (TaggedSize, &[u8]) {
        vk_generated::padding::zero_padding_of(value);
        // SAFETY: every byte of the `T` is initialised: its members, and its padding just zeroed.
        (TaggedSize::of::<T>(), unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) })
    }

    /// The view an entry point makes of an output structure and its chain.
    fn out_chain<T: TaggedStruct>(head: &mut T) -> OutChain<'_> {
        // SAFETY: a structure of the test's own whose chain (if any) is of the test's own
        // structures, each of the type its sType names, alive for the whole test.
        unsafe { OutChain::new(head as *mut T) }.expect("not NULL")
    }

    #[test]
    fn a_chain_is_answered_only_when_every_structure_was_recorded() {
        let mut answers = DeviceAnswers::default();
        let mut recorded = VkPhysicalDeviceProperties2::default();
        recorded.properties.deviceID = 0x1234;
        let mut id = VkPhysicalDeviceIDProperties { deviceUUID: [7; 16], ..Default::default() };
        record_structures([filled(&mut recorded), filled(&mut id)].into_iter(), &PROPERTIES_HEAD, 0, &mut answers);

        let mut asked = VkPhysicalDeviceProperties2::default();
        let mut asked_id = VkPhysicalDeviceIDProperties::default();
        let asked_id_address: *mut c_void = (&mut asked_id as *mut VkPhysicalDeviceIDProperties).cast();
        asked.pNext = asked_id_address;
        assert!(replay_chain(&mut out_chain(&mut asked), &PROPERTIES_HEAD, PROPERTIES, 0, &answers));
        assert_eq!(asked.properties.deviceID, 0x1234);
        assert_eq!(asked_id.deviceUUID, [7; 16]);
        assert_eq!(asked.pNext, asked_id_address, "the application's chain is kept");

        // A structure not recorded: nothing is written.
        let mut pci = VkPhysicalDevicePCIBusInfoPropertiesEXT::default();
        let mut again = VkPhysicalDeviceProperties2 { pNext: (&mut pci as *mut VkPhysicalDevicePCIBusInfoPropertiesEXT).cast(), ..Default::default() };
        assert!(!replay_chain(&mut out_chain(&mut again), &PROPERTIES_HEAD, PROPERTIES, 0, &answers));
        assert_eq!(again.properties.deviceID, 0);
        // A structure that may never be answered from the record.
        let mut budget = VkPhysicalDeviceMemoryBudgetPropertiesEXT::default();
        let mut memory = VkPhysicalDeviceMemoryProperties2 { pNext: (&mut budget as *mut VkPhysicalDeviceMemoryBudgetPropertiesEXT).cast(), ..Default::default() };
        answers.set(answer_key(Family::Memory, 0, MEMORY_HEAD.structure.s_type().0 as u32), &[0; size_of::<VkPhysicalDeviceMemoryProperties>()]);
        assert!(!replay_chain(&mut out_chain(&mut memory), &MEMORY_HEAD, &[], 0, &answers));
    }

    #[test]
    fn a_recorded_body_that_does_not_fit_its_structure_is_not_written() {
        let mut answers = DeviceAnswers::default();
        let key = |s_type: VkStructureType| answer_key(Family::Properties, 0, s_type.0 as u32);
        answers.set(key(PROPERTIES_HEAD.structure.s_type()), &vec![1; PROPERTIES_HEAD.size - size_of::<VkBaseOutStructure>()]);
        // The ID structure's answer, one byte too long.
        let id_body = TaggedSize::of::<VkPhysicalDeviceIDProperties>().size() - size_of::<VkBaseOutStructure>();
        answers.set(key(VkStructureType::PHYSICAL_DEVICE_ID_PROPERTIES), &vec![2; id_body + 1]);
        let mut id = VkPhysicalDeviceIDProperties::default();
        let mut asked = VkPhysicalDeviceProperties2 { pNext: (&mut id as *mut VkPhysicalDeviceIDProperties).cast(), ..Default::default() };
        assert!(!replay_chain(&mut out_chain(&mut asked), &PROPERTIES_HEAD, PROPERTIES, 0, &answers));
        assert_eq!((asked.properties.apiVersion, id.deviceUUID), (0, [0; 16]), "nothing written");
        // The chain view itself refuses a body past its structure, or a structure of another type.
        let mut plain = VkPhysicalDeviceIDProperties::default();
        let mut chain = out_chain(&mut plain);
        let head = chain.elements().next().expect("the head");
        let too_long = vec![3; id_body + 1];
        assert!(!chain.write_bodies(&[(head, TaggedSize::of::<VkPhysicalDeviceIDProperties>(), &too_long)]));
        let mut head = VkPhysicalDeviceProperties2 { pNext: (&mut plain as *mut VkPhysicalDeviceIDProperties).cast(), ..Default::default() };
        let mut chain = out_chain(&mut head);
        let elements: Vec<_> = chain.elements().collect();
        let body = vec![4; TaggedSize::of::<VkPhysicalDeviceDriverProperties>().size() - size_of::<VkBaseOutStructure>()];
        let head_body = [5u8; 8];
        let bodies = [(elements[0], PROPERTIES_HEAD.structure, &head_body[..]), (elements[1], TaggedSize::of::<VkPhysicalDeviceDriverProperties>(), &body[..])];
        assert!(!chain.write_bodies(&bodies));
        assert_eq!((head.properties.apiVersion, plain.deviceUUID), (0, [0; 16]), "nothing written");
    }

    #[test]
    fn a_head_recorded_through_the_2_query_answers_the_1_0_query() {
        let mut answers = DeviceAnswers::default();
        let mut features = VkPhysicalDeviceFeatures2::default();
        features.features.geometryShader = VK_TRUE;
        record_structures([filled(&mut features)].into_iter(), &FEATURES_HEAD, 0, &mut answers);
        // VkPhysicalDeviceFeatures2 has tail padding; the answer is the plain structure's bytes.
        let plain = decode_list::<VkPhysicalDeviceFeatures>(answers.get(answer_key(Family::Features, 0, FEATURES_HEAD.structure.s_type().0 as u32)).unwrap());
        assert_eq!(plain.map(|p| p[0].geometryShader), Some(VK_TRUE));
    }

    /// The view an entry point makes of a two-call query's count and array.
    fn out_array<T>(count: &mut u32, out: *mut T) -> OutArray<'_, T> {
        // SAFETY: a count of the test's own and NULL or an array of the test's own of `*count` items.
        unsafe { OutArray::new(count, out) }.expect("a count")
    }

    #[test]
    fn extension_lists_survive_their_record() {
        let list = vec![ffi::extension_properties(c"VK_KHR_swapchain", 70), ffi::extension_properties(c"VK_EXT_pci_bus_info", 2)];
        let bytes = encode_extensions(&list);
        assert_eq!(count_extensions(&bytes, c"VK_EXT_pci_bus_info"), Some((2, true)));
        assert_eq!(count_extensions(&bytes, c"VK_EXT_pci"), Some((2, false)));
        let mut out = [VkExtensionProperties::default(); 2];
        let mut count = 2;
        assert_eq!(fill_extensions(&bytes, 2, out_array(&mut count, out.as_mut_ptr())), VkResult::SUCCESS);
        assert_eq!((count, ffi::name_of(&out[1]), out[0].specVersion), (2, &b"VK_EXT_pci_bus_info"[..], 70));
        // Room for one: the first, and VK_INCOMPLETE; the count alone.
        let (mut one, mut count) = ([VkExtensionProperties::default(); 1], 1);
        assert_eq!(fill_extensions(&bytes, 2, out_array(&mut count, one.as_mut_ptr())), VkResult::INCOMPLETE);
        assert_eq!((count, ffi::name_of(&one[0])), (1, &b"VK_KHR_swapchain"[..]));
        assert_eq!(fill_extensions(&bytes, 2, out_array(&mut count, std::ptr::null_mut())), VkResult::SUCCESS);
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
                assert!(a.structure.size() > size_of::<VkBaseOutStructure>());
                assert!(list[..i].iter().all(|b| b.structure.s_type() != a.structure.s_type()), "{:?} listed twice", a.structure.s_type());
            }
        }
    }
}
