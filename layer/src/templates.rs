//! Descriptor update templates for a layer that wraps handles: the layout each template gives its
//! `pData` (recorded at `vkCreateDescriptorUpdateTemplate`, forgotten at its destruction), and the
//! walk of a `pData` going down (`vkUpdateDescriptorSetWithTemplate`,
//! `vkCmdPushDescriptorSetWithTemplate`, `VkPushDescriptorSetWithTemplateInfo`): the image views,
//! samplers, buffers, buffer views and acceleration structures it holds unwrapped in a copy, made
//! only when one changes. The application's data is only read.

use std::collections::HashMap;
use std::ffi::c_void;
use std::mem::size_of;
use std::sync::{Arc, PoisonError, RwLock};

use vk_generated::types::*;

use crate::unwrap::{self, Refused, Scratch, Unwrapper};

/// What a template entry's elements are, as far as the walk needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `VkDescriptorImageInfo`.
    Image,
    /// `VkDescriptorBufferInfo`.
    Buffer,
    /// `VkBufferView`.
    TexelBuffer,
    /// `VkAccelerationStructureKHR`.
    AccelerationStructureKhr,
    /// `VkAccelerationStructureNV`.
    AccelerationStructureNv,
    /// Bytes of an inline uniform block: `descriptorCount` of them at `offset`, no handle.
    InlineBytes,
    /// A type whose element this SDK does not know (one added after it was built, say): the data's
    /// extent is unknown, so it cannot be copied.
    Unknown,
}

impl Kind {
    fn of(t: VkDescriptorType) -> Kind {
        match t {
            VkDescriptorType::SAMPLER
            | VkDescriptorType::COMBINED_IMAGE_SAMPLER
            | VkDescriptorType::SAMPLED_IMAGE
            | VkDescriptorType::STORAGE_IMAGE
            | VkDescriptorType::INPUT_ATTACHMENT
            | VkDescriptorType::SAMPLE_WEIGHT_IMAGE_QCOM
            | VkDescriptorType::BLOCK_MATCH_IMAGE_QCOM => Kind::Image,
            VkDescriptorType::UNIFORM_BUFFER
            | VkDescriptorType::STORAGE_BUFFER
            | VkDescriptorType::UNIFORM_BUFFER_DYNAMIC
            | VkDescriptorType::STORAGE_BUFFER_DYNAMIC => Kind::Buffer,
            VkDescriptorType::UNIFORM_TEXEL_BUFFER | VkDescriptorType::STORAGE_TEXEL_BUFFER => {
                Kind::TexelBuffer
            }
            VkDescriptorType::ACCELERATION_STRUCTURE_KHR => Kind::AccelerationStructureKhr,
            VkDescriptorType::ACCELERATION_STRUCTURE_NV => Kind::AccelerationStructureNv,
            VkDescriptorType::INLINE_UNIFORM_BLOCK => Kind::InlineBytes,
            _ => Kind::Unknown,
        }
    }

    /// The size of one element; `None` for [`Kind::Unknown`].
    fn element_size(self) -> Option<usize> {
        Some(match self {
            Kind::Image => size_of::<VkDescriptorImageInfo>(),
            Kind::Buffer => size_of::<VkDescriptorBufferInfo>(),
            Kind::TexelBuffer => size_of::<VkBufferView>(),
            Kind::AccelerationStructureKhr => size_of::<VkAccelerationStructureKHR>(),
            Kind::AccelerationStructureNv => size_of::<VkAccelerationStructureNV>(),
            Kind::InlineBytes => 1,
            Kind::Unknown => return None,
        })
    }
}

/// One entry of a template: `count` elements of `kind` at `offset`, `stride` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    kind: Kind,
    count: usize,
    offset: usize,
    stride: usize,
}

impl Entry {
    /// The offset of element `i`.
    fn at(&self, i: usize) -> usize {
        self.offset + i * self.stride
    }

    /// One past the last byte the entry reads; `None` for an unknown kind.
    fn end(&self) -> Option<usize> {
        if self.count == 0 {
            return Some(0);
        }
        Some(match self.kind {
            Kind::InlineBytes => self.offset + self.count,
            kind => self.at(self.count - 1) + kind.element_size()?,
        })
    }
}

/// The layout of one template's `pData`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    entries: Vec<Entry>,
    /// The bytes of `pData` the entries read; `None` when one is of an unknown kind.
    size: Option<usize>,
}

impl Layout {
    /// The layout `info` describes.
    ///
    /// # Safety
    /// `info.pDescriptorUpdateEntries` is null or points to `info.descriptorUpdateEntryCount`
    /// entries (the command's valid usage).
    unsafe fn of(info: &VkDescriptorUpdateTemplateCreateInfo) -> Layout {
        // SAFETY: per the contract.
        let given = unsafe {
            crate::unknown::parameter_array(
                info.pDescriptorUpdateEntries,
                info.descriptorUpdateEntryCount as usize,
            )
        };
        let entries: Vec<Entry> = given
            .iter()
            .map(|e| Entry {
                kind: Kind::of(e.descriptorType),
                count: e.descriptorCount as usize,
                offset: e.offset,
                stride: e.stride,
            })
            .collect();
        let size = entries
            .iter()
            .try_fold(0, |size, e| Some(e.end()?.max(size)));
        Layout { entries, size }
    }
}

/// The layouts of one device's templates, by the handle the application holds.
#[derive(Default)]
pub(crate) struct Templates {
    layouts: RwLock<HashMap<u64, Arc<Layout>>>,
}

impl Templates {
    /// Records the layout of `template`, just created from `info`.
    ///
    /// # Safety
    /// `info` is the valid create info of `template` (as [`Layout::of`] requires).
    pub(crate) unsafe fn record(
        &self,
        template: VkDescriptorUpdateTemplate,
        info: &VkDescriptorUpdateTemplateCreateInfo,
    ) {
        // SAFETY: per the contract.
        let layout = Arc::new(unsafe { Layout::of(info) });
        // A panic elsewhere leaves plain values: the map is still consistent.
        let mut layouts = self.layouts.write().unwrap_or_else(PoisonError::into_inner);
        layouts.insert(template.0, layout);
    }

    /// Forgets `template`, destroyed.
    pub(crate) fn forget(&self, template: VkDescriptorUpdateTemplate) {
        let mut layouts = self.layouts.write().unwrap_or_else(PoisonError::into_inner);
        layouts.remove(&template.0);
    }

    /// The layout of `template`, as the application holds it.
    pub(crate) fn layout(&self, template: u64) -> Option<Arc<Layout>> {
        let layouts = self.layouts.read().unwrap_or_else(PoisonError::into_inner);
        layouts.get(&template).cloned()
    }
}

/// `pData` of `template` going down: `data` itself when no handle in it changes, else a copy with
/// them unwrapped. A template the layer has no layout for, or one with an entry of a type this SDK
/// does not know, refuses the call (naming the template).
///
/// # Safety
/// `data` is valid for `template`'s layout: every entry's elements readable at their offsets.
pub(crate) unsafe fn data<U: Unwrapper>(
    u: &U,
    template: VkDescriptorUpdateTemplate,
    data: *const c_void,
    scratch: &mut Scratch,
) -> Result<*const c_void, Refused> {
    let refused = || Refused(VkObjectType::DESCRIPTOR_UPDATE_TEMPLATE, template.0);
    let layout = u.template(template.0).ok_or_else(refused)?;
    if data.is_null() || layout.entries.iter().all(|e| e.count == 0) {
        return Ok(data);
    }
    let size = layout.size.ok_or_else(refused)?;
    // The copy, made at the first change: whole words, so that it is aligned as `data` may be.
    let mut copy: Vec<u64> = Vec::new();
    for entry in &layout.entries {
        for i in 0..entry.count {
            let at = entry.at(i);
            // SAFETY: element `i` of the entry lies in `data` (the contract) and in a copy of
            // `size` bytes (the layout's extent); `write` is called with a copy at least that long.
            unsafe {
                match entry.kind {
                    Kind::Image => {
                        element(data, at, &mut copy, size, |s: &VkDescriptorImageInfo| {
                            unwrap::unwrap_VkDescriptorImageInfo(u, s, scratch)
                        })?
                    }
                    Kind::Buffer => {
                        element(data, at, &mut copy, size, |s: &VkDescriptorBufferInfo| {
                            unwrap::unwrap_VkDescriptorBufferInfo(u, s, scratch)
                        })?
                    }
                    Kind::TexelBuffer => {
                        element(data, at, &mut copy, size, |h: &VkBufferView| handle(u, *h))?
                    }
                    Kind::AccelerationStructureKhr => element(
                        data,
                        at,
                        &mut copy,
                        size,
                        |h: &VkAccelerationStructureKHR| handle(u, *h),
                    )?,
                    Kind::AccelerationStructureNv => element(
                        data,
                        at,
                        &mut copy,
                        size,
                        |h: &VkAccelerationStructureNV| handle(u, *h),
                    )?,
                    Kind::InlineBytes | Kind::Unknown => {}
                }
            }
        }
    }
    // Into the call's scratch (the walk above borrows it, so the copy was made beside it).
    Ok(if copy.is_empty() {
        data
    } else {
        // SAFETY: the copy holds `size` bytes.
        unsafe { scratch.copy_bytes(copy.as_ptr() as *const u8, size) as *const c_void }
    })
}

/// A handle element going down: `None` when it does not change.
fn handle<U: Unwrapper, H: unwrap::Handle>(u: &U, h: H) -> Result<Option<H>, Refused> {
    let inner = unwrap::value(u, h)?;
    Ok((inner != h).then_some(inner))
}

/// The element of type `T` at byte `at` of `data`, through `walk`: when it changes, written at
/// the same place of `copy`, which is first filled with `data`'s `size` bytes.
///
/// # Safety
/// `data` holds `size` readable bytes, and a `T` at `at` (`at + size_of::<T>() <= size`).
unsafe fn element<T: Copy>(
    data: *const c_void,
    at: usize,
    copy: &mut Vec<u64>,
    size: usize,
    walk: impl FnOnce(&T) -> Result<Option<T>, Refused>,
) -> Result<(), Refused> {
    // SAFETY: per the contract; the application's offsets need not be aligned.
    let given = unsafe { (data as *const u8).add(at).cast::<T>().read_unaligned() };
    let Some(inner) = walk(&given)? else {
        return Ok(());
    };
    if copy.is_empty() {
        copy.resize(size.div_ceil(8), 0);
        // SAFETY: `data` holds `size` bytes; the copy has room for them.
        unsafe {
            std::ptr::copy_nonoverlapping(data as *const u8, copy.as_mut_ptr() as *mut u8, size)
        };
    }
    // SAFETY: the copy holds `size` bytes, and the element lies within them (the contract).
    unsafe {
        (copy.as_mut_ptr() as *mut u8)
            .add(at)
            .cast::<T>()
            .write_unaligned(inner)
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds 100 to every handle it unwraps; knows one template, of `layout`.
    struct Plus100(Arc<Layout>);

    impl Unwrapper for Plus100 {
        fn handle<H: unwrap::Handle>(&self, h: H) -> Option<H> {
            Some(H::from_raw(h.raw() + 100))
        }
        fn object(&self, _: VkObjectType, h: u64) -> Option<u64> {
            Some(h + 100)
        }
        fn template(&self, t: u64) -> Option<Arc<Layout>> {
            (t == 1).then(|| self.0.clone())
        }
    }

    fn entry(
        descriptor_type: VkDescriptorType,
        count: u32,
        offset: usize,
        stride: usize,
    ) -> VkDescriptorUpdateTemplateEntry {
        VkDescriptorUpdateTemplateEntry {
            dstBinding: 0,
            dstArrayElement: 0,
            descriptorCount: count,
            descriptorType: descriptor_type,
            offset,
            stride,
        }
    }

    fn layout(entries: &[VkDescriptorUpdateTemplateEntry]) -> Arc<Layout> {
        // SAFETY: an all-zero create info is a valid value; its entries point to `entries`.
        let mut info: VkDescriptorUpdateTemplateCreateInfo = unsafe { std::mem::zeroed() };
        info.descriptorUpdateEntryCount = entries.len() as u32;
        info.pDescriptorUpdateEntries = entries.as_ptr();
        // SAFETY: the entries are `entries`, alive for the call.
        Arc::new(unsafe { Layout::of(&info) })
    }

    #[test]
    fn handles_at_unaligned_offsets_are_unwrapped_in_a_copy_and_the_rest_kept() {
        // A buffer view at byte 3 (unaligned), an inline block of 5 bytes at 11, two image infos
        // from byte 16, 32 apart.
        let layout = layout(&[
            entry(VkDescriptorType::UNIFORM_TEXEL_BUFFER, 1, 3, 0),
            entry(VkDescriptorType::INLINE_UNIFORM_BLOCK, 5, 11, 0),
            entry(VkDescriptorType::SAMPLED_IMAGE, 2, 16, 32),
        ]);
        assert_eq!(
            layout.size,
            Some(16 + 32 + size_of::<VkDescriptorImageInfo>())
        );
        let mut bytes = vec![0xabu8; 96];
        let put = |bytes: &mut Vec<u8>, at: usize, v: u64| {
            bytes[at..at + 8].copy_from_slice(&v.to_ne_bytes())
        };
        put(&mut bytes, 3, 7); // the buffer view
        put(&mut bytes, 16, 0); // image info 0: no sampler
        put(&mut bytes, 24, 8); // its view
        put(&mut bytes, 48, 0);
        put(&mut bytes, 56, 9);
        let mut scratch = Scratch::new();
        let u = Plus100(layout);
        // SAFETY: `bytes` holds the layout's 72 bytes.
        let down = unsafe {
            data(
                &u,
                VkDescriptorUpdateTemplate(1),
                bytes.as_ptr().cast(),
                &mut scratch,
            )
        }
        .ok()
        .unwrap();
        assert_ne!(down, bytes.as_ptr().cast(), "a copy goes down");
        // SAFETY: the copy holds the layout's 72 bytes.
        let got = unsafe { std::slice::from_raw_parts(down as *const u8, 72) };
        let word = |at: usize| u64::from_ne_bytes(got[at..at + 8].try_into().unwrap());
        assert_eq!((word(3), word(24), word(56)), (107, 108, 109));
        assert_eq!((word(16), word(48)), (0, 0), "null samplers stay null");
        assert_eq!(
            &got[11..16],
            &bytes[11..16],
            "the inline block's bytes are copied"
        );
        assert_eq!(
            &bytes[3..11],
            &7u64.to_ne_bytes(),
            "the application's data is untouched"
        );
    }

    #[test]
    fn an_unknown_template_or_descriptor_type_refuses_the_call() {
        let known = Plus100(layout(&[entry(VkDescriptorType::MUTABLE_EXT, 1, 0, 0)]));
        let bytes = [0u64; 4];
        let mut scratch = Scratch::new();
        for template in [1, 2] {
            // SAFETY: `bytes` is readable; the walk refuses before reading it.
            let refused = unsafe {
                data(
                    &known,
                    VkDescriptorUpdateTemplate(template),
                    bytes.as_ptr().cast(),
                    &mut scratch,
                )
            };
            let Err(Refused(object_type, value)) = refused else {
                panic!("template {template} went down")
            };
            assert_eq!(
                (object_type, value),
                (VkObjectType::DESCRIPTOR_UPDATE_TEMPLATE, template)
            );
        }
    }
}
