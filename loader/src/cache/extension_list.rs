//! A driver's instance extensions as its cache record holds them: the file's own encoding
//! (`(str8:name u32:spec-version)*`, checked once when the file is decoded), shared with the
//! file as read and read where used. Decoded, a driver's some 20 extensions were a `String` each
//! and a 260-byte `VkExtensionProperties` each again per instance creation: some 40 KiB of fresh
//! heap (ten page faults) in a warm start-up that needs none of it unless extensions are asked for.

use vk_generated::types::VkExtensionProperties;

use super::profile::Span;
use super::reader::Reader;
use crate::ffi::{extension_properties_of, name_of};

/// Bound on a list's length: a file past it is not ours.
pub const MAX_EXTENSIONS: usize = 1024;

#[derive(Clone, Default)]
pub struct ExtensionList {
    encoded: Span,
    count: usize,
}

impl ExtensionList {
    /// The list of what a driver answered. A name longer than 255 bytes (none is) cannot be
    /// recorded and is left out, as is anything past [`MAX_EXTENSIONS`].
    pub fn from_properties(properties: &[VkExtensionProperties]) -> ExtensionList {
        ExtensionList::from_pairs(properties.iter().map(|p| (name_of(p), p.specVersion)))
    }

    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a [u8], u32)>) -> ExtensionList {
        let mut encoded = Vec::new();
        let mut count = 0;
        for (name, spec) in pairs.into_iter().filter(|(name, _)| name.len() <= u8::MAX as usize && std::str::from_utf8(name).is_ok()).take(MAX_EXTENSIONS) {
            encoded.push(name.len() as u8);
            encoded.extend_from_slice(name);
            encoded.extend_from_slice(&spec.to_le_bytes());
            count += 1;
        }
        ExtensionList { encoded: Span::whole(std::sync::Arc::new(encoded)), count }
    }

    /// The `count` extensions `r` reads next, checked (lengths, UTF-8) and sharing `file`'s
    /// bytes; `None` where they do not decode.
    pub(super) fn decode(r: &mut Reader, file: &Span, count: usize) -> Option<ExtensionList> {
        if count > MAX_EXTENSIONS {
            return None;
        }
        let region = r.0;
        for _ in 0..count {
            let len = r.u8()? as usize;
            std::str::from_utf8(r.take(len)?).ok()?;
            r.u32()?;
        }
        Some(ExtensionList { encoded: file.between(region, r.0), count })
    }

    /// The encoding [`decode`](Self::decode) reads (without the count, which the record puts first).
    pub(super) fn encoded(&self) -> &[u8] {
        self.encoded.bytes()
    }

    pub fn len(&self) -> usize {
        self.count
    }

    /// (name, spec version), in the order the driver gave them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        let mut r = Reader(self.encoded.bytes());
        // Every list was checked when made: a short read only ends the walk.
        std::iter::from_fn(move || {
            let len = r.u8()? as usize;
            let name = std::str::from_utf8(r.take(len)?).ok()?;
            Some((name, r.u32()?))
        })
    }

    pub fn contains(&self, name: &[u8]) -> bool {
        self.iter().any(|(listed, _)| listed.as_bytes() == name)
    }

    /// As the driver's `vkEnumerateInstanceExtensionProperties` gave them. A name with a NUL in
    /// it (only a forged file has one: no C string does) is left out.
    pub fn properties(&self) -> Vec<VkExtensionProperties> {
        let listable = self.iter().filter(|(name, _)| !name.as_bytes().contains(&0));
        listable.map(|(name, spec)| extension_properties_of(name.as_bytes(), spec)).collect()
    }
}

impl PartialEq for ExtensionList {
    fn eq(&self, other: &ExtensionList) -> bool {
        self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for ExtensionList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn lists_read_back_what_they_were_made_of() {
        let list = ExtensionList::from_pairs([(&b"VK_KHR_surface"[..], 25), (b"VK_EXT_debug_report", 10)]);
        assert_eq!(list.len(), 2);
        assert_eq!(list.iter().collect::<Vec<_>>(), [("VK_KHR_surface", 25), ("VK_EXT_debug_report", 10)]);
        assert!(list.contains(b"VK_EXT_debug_report") && !list.contains(b"VK_EXT_debug"));
        let properties = list.properties();
        assert_eq!(properties.len(), 2);
        assert_eq!((name_of(&properties[1]), properties[1].specVersion), (&b"VK_EXT_debug_report"[..], 10));
        assert_eq!(ExtensionList::from_properties(&properties), list);
        assert_ne!(ExtensionList::from_pairs([(&b"VK_KHR_surface"[..], 24)]), list);
        assert!(ExtensionList::default().len() == 0 && ExtensionList::default().iter().next().is_none());
    }

    #[test]
    fn what_a_file_cannot_hold_is_left_out() {
        let long = vec![b'A'; 256];
        let list = ExtensionList::from_pairs([(&long[..], 1), (b"\xff\xfe", 1), (b"VK_KHR_surface", 25)]);
        assert_eq!(list.iter().collect::<Vec<_>>(), [("VK_KHR_surface", 25)]);
        let many: Vec<Vec<u8>> = (0..MAX_EXTENSIONS + 5).map(|i| format!("VK_X_{i}").into_bytes()).collect();
        assert_eq!(ExtensionList::from_pairs(many.iter().map(|n| (&n[..], 1))).len(), MAX_EXTENSIONS);
    }

    #[test]
    fn decoding_checks_every_name_and_shares_the_file() {
        let list = ExtensionList::from_pairs([(&b"VK_KHR_surface"[..], 25), (b"VK_A\0B", 1)]);
        let mut file = list.encoded().to_vec();
        file.push(7); // what follows the list in a record
        let span = Span::whole(Arc::new(file.clone()));
        let mut r = Reader(span.bytes());
        let decoded = ExtensionList::decode(&mut r, &span, 2).expect("decodes");
        assert_eq!(decoded, list);
        assert_eq!(r.0, [7]);
        // The NUL-carrying name is kept as recorded, left out as properties.
        assert_eq!(decoded.properties().len(), 1);
        // A count past what is there, a name that is not UTF-8, a list too long: refused.
        assert!(ExtensionList::decode(&mut Reader(&file[..file.len() - 3]), &span, 2).is_none());
        let mut bad = file.clone();
        bad[1] = 0xff;
        assert!(ExtensionList::decode(&mut Reader(&bad), &Span::whole(Arc::new(bad.clone())), 2).is_none());
        assert!(ExtensionList::decode(&mut Reader(&file), &span, MAX_EXTENSIONS + 1).is_none());
    }
}
