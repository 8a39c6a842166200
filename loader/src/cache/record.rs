//! The cache file: what each driver answered when it was last loaded, under the key it answered
//! for. A versioned binary format, read as hostile input: every length is checked against what is
//! left and against fixed bounds, the body carries a digest, and anything that does not decode
//! whole is ignored as a whole (the file is then replaced at the next write). Reading costs one
//! small file and no allocation per byte: no JSON tree per call.
//!
//! ```text
//! file   = "VKLDRVC\0" u32:format-version u32:body-length u64:body-digest body
//!          (the digest: see `platform::digest::checksum`)
//! body   = u32:entry-count entry*
//! entry  = str16:manifest-path u64*6:key u64:written-unix-seconds str16:library-resolved
//!          u32:interface-version u8:has-version u32:instance-version
//!          u16:extension-count (str8:name u32:spec-version)*
//!          u8:device-record-count (u64:application u32:physical-device-count str16:executable)*
//!          u16:input-count (str16:name u64:digest)*
//!          u8:profile-count profile*
//! profile = u64:application u8:device-count (u32:answer-count (u64:key u32:len bytes)*)*
//!          u8:group-count (0xff: none) (u8:member-count u8:member* u32:subset-allocation)*
//! str8 / str16 = a u8 / u16 byte length, then UTF-8 bytes; numbers little-endian
//! ```
//!
//! The drivers file's entries have no profiles; an application's file (`profiles/<digest>`) has an
//! entry per driver it recorded, with that driver's key and the application's one profile.

use std::sync::Arc;

use super::key::Key;
use crate::platform::digest::checksum;
use super::extension_list::ExtensionList;
use super::profile::{self, Profile, Profiles, Span};
use super::reader::Reader;

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"VKLDRVC\0";
/// Bumped whenever the layout or the meaning of a field changes: an older or newer file is ignored.
pub const FORMAT_VERSION: u32 = 5;
/// Bounds: a file or list past them is not ours, or not worth reading.
pub const MAX_FILE_BYTES: usize = 4 << 20;
pub const MAX_ENTRIES: usize = 256;
/// Applications whose physical-device counts an entry keeps (their physical devices' records, one
/// file each, are bounded alike: see `cache::MAX_APPLICATIONS`).
pub const MAX_DEVICE_RECORDS: usize = 32;
/// Named inputs an entry keeps (variables and configuration files).
pub const MAX_INPUTS: usize = 4096;

/// What one driver answered, under `key`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Entry {
    pub manifest_path: String,
    pub key: Key,
    /// When it was recorded (seconds since the epoch): for `vk-loader cache` and eviction.
    pub written: u64,
    /// The library file the dynamic linker loaded for the manifest.
    pub library_resolved: String,
    pub interface_version: u32,
    /// What `vkEnumerateInstanceVersion` said; `None` when the driver lacks it.
    pub instance_version: Option<u32>,
    /// `vkEnumerateInstanceExtensionProperties(NULL)`: (name, spec version).
    pub extensions: ExtensionList,
    /// Physical devices the driver reported at instance creation, per application digest (see
    /// `key::application`), with the path the application's executable was started by (what
    /// names the application to people, and finds its records: `vk-loader explain --as`), the
    /// latest recorded first.
    pub devices: Vec<(u64, u32, String)>,
    /// The variables (`$NAME`) and configuration files (by path) the key was computed from, each
    /// with the digest of its value or identity, sorted by name: what lets a miss name what
    /// changed. Never a variable's value.
    pub inputs: Vec<(String, u64)>,
    /// What its physical devices answered, per application digest (for lazy drivers). Not in the
    /// drivers file: each application's are in a file of its own, in this format, and a session
    /// holds its own application's (see `cache::Session::set_application`).
    pub profiles: Profiles,
}

impl Entry {
    /// The physical devices recorded for `application`, if it was recorded.
    pub fn device_count(&self, application: u64) -> Option<u32> {
        self.devices.iter().find(|(a, _, _)| *a == application).map(|&(_, n, _)| n)
    }

    /// Records `count` devices for `application`: one recorded already keeps its place (its
    /// count updated), a new one goes first, and the list is bounded (the earliest recorded go).
    /// Not moved to the front on use: with several applications taking turns (a desktop's), each
    /// start would change the entry, rewrite the file, and never let the application's physical
    /// devices be recorded (a process that changed its driver's entry leaves that to a later one).
    pub fn set_device_count(&mut self, application: u64, count: u32, executable: &str) {
        if let Some(recorded) = self.devices.iter_mut().find(|(a, _, _)| *a == application) {
            recorded.1 = count;
            if recorded.2 != executable {
                recorded.2 = executable.to_string();
            }
            return;
        }
        self.devices.insert(0, (application, count, executable.to_string()));
        self.devices.truncate(MAX_DEVICE_RECORDS);
    }

    /// The entry without its physical devices' records (kept apart, per application).
    pub fn without_profiles(&self) -> Entry {
        Entry {
            manifest_path: self.manifest_path.clone(),
            key: self.key,
            written: self.written,
            library_resolved: self.library_resolved.clone(),
            interface_version: self.interface_version,
            instance_version: self.instance_version,
            extensions: self.extensions.clone(),
            devices: self.devices.clone(),
            inputs: self.inputs.clone(),
            profiles: Profiles::default(),
        }
    }

    /// The physical devices recorded for `application`, if they were.
    pub fn profile(&self, application: u64) -> Option<&Profile> {
        self.profiles.get(application)
    }

    /// Records `profile`, latest first, keeping a bounded list.
    pub fn set_profile(&mut self, profile: Profile) {
        self.profiles.set(profile, MAX_DEVICE_RECORDS);
    }
}

/// The positions of the times `written`, the latest first and equal times in their given order:
/// what a stable `sort_by_key(|e| Reverse(e.written))` gives, through one unstable sort of one
/// element type for every caller (each stable sort compiled some 5 KB of code of its own).
pub fn latest_first(written: impl Iterator<Item = u64>) -> Vec<usize> {
    let mut order: Vec<(std::cmp::Reverse<u64>, usize)> = written.enumerate().map(|(i, w)| (std::cmp::Reverse(w), i)).collect();
    crate::sort::sort(&mut order);
    order.into_iter().map(|(_, i)| i).collect()
}

/// The file's bytes for `entries` (at most [`MAX_ENTRIES`], the latest written kept).
pub fn encode(entries: &[Entry]) -> Vec<u8> {
    let kept: Vec<&Entry> = latest_first(entries.iter().map(|e| e.written)).into_iter().take(MAX_ENTRIES).map(|i| &entries[i]).collect();
    let mut body = Vec::new();
    body.extend_from_slice(&(kept.len() as u32).to_le_bytes());
    for e in kept {
        put_str16(&mut body, &e.manifest_path);
        for k in e.key {
            body.extend_from_slice(&k.to_le_bytes());
        }
        body.extend_from_slice(&e.written.to_le_bytes());
        put_str16(&mut body, &e.library_resolved);
        body.extend_from_slice(&e.interface_version.to_le_bytes());
        body.push(e.instance_version.is_some() as u8);
        body.extend_from_slice(&e.instance_version.unwrap_or(0).to_le_bytes());
        // Bounded when made (`ExtensionList::from_pairs`): written as it is.
        body.extend_from_slice(&(e.extensions.len() as u16).to_le_bytes());
        body.extend_from_slice(e.extensions.encoded());
        let devices = &e.devices[..e.devices.len().min(MAX_DEVICE_RECORDS)];
        body.push(devices.len() as u8);
        for (application, count, executable) in devices {
            body.extend_from_slice(&application.to_le_bytes());
            body.extend_from_slice(&count.to_le_bytes());
            put_str16(&mut body, executable);
        }
        let inputs = &e.inputs[..e.inputs.len().min(MAX_INPUTS)];
        body.extend_from_slice(&(inputs.len() as u16).to_le_bytes());
        for (name, digest) in inputs {
            put_str16(&mut body, name);
            body.extend_from_slice(&digest.to_le_bytes());
        }
        profile::encode(&mut body, &e.profiles, MAX_DEVICE_RECORDS);
    }
    let mut file = Vec::with_capacity(24 + body.len());
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    file.extend_from_slice(&(body.len() as u32).to_le_bytes());
    file.extend_from_slice(&checksum(&body).to_le_bytes());
    file.extend_from_slice(&body);
    file
}

/// Why a file's bytes were not used.
#[derive(Debug, PartialEq)]
pub enum Unusable {
    /// Not a cache file of ours (wrong magic, too short, too long).
    Foreign,
    /// A cache file of another format version.
    OtherVersion(u32),
    /// Truncated, or its digest or a length does not match.
    Corrupt,
}

/// The entries of a cache file, or why it cannot be used.
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>, Unusable> {
    decode_shared(Arc::new(bytes.to_vec()))
}

/// [`decode`] of the file as read, which the entries' recorded answers keep a share of (rather
/// than a copy).
pub fn decode_shared(file: Arc<Vec<u8>>) -> Result<Vec<Entry>, Unusable> {
    let file = Span::whole(file);
    let bytes = file.bytes();
    if bytes.len() < 24 || bytes.len() > MAX_FILE_BYTES || &bytes[..8] != MAGIC {
        return Err(Unusable::Foreign);
    }
    let mut header = Reader(&bytes[8..24]);
    let version = header.u32().ok_or(Unusable::Corrupt)?;
    if version != FORMAT_VERSION {
        return Err(Unusable::OtherVersion(version));
    }
    let length = header.u32().ok_or(Unusable::Corrupt)? as usize;
    let digest = header.u64().ok_or(Unusable::Corrupt)?;
    let body = &bytes[24..];
    if body.len() != length || checksum(body) != digest {
        return Err(Unusable::Corrupt);
    }
    let mut r = Reader(body);
    let count = r.u32().ok_or(Unusable::Corrupt)? as usize;
    if count > MAX_ENTRIES {
        return Err(Unusable::Corrupt);
    }
    let mut entries = Vec::with_capacity(count);
    for _ in 0..count {
        entries.push(entry(&mut r, &file).ok_or(Unusable::Corrupt)?);
    }
    if !r.0.is_empty() {
        return Err(Unusable::Corrupt);
    }
    Ok(entries)
}

fn entry(r: &mut Reader, file: &Span) -> Option<Entry> {
    let manifest_path = r.str16()?;
    let mut key = [0u64; 6];
    for k in &mut key {
        *k = r.u64()?;
    }
    let written = r.u64()?;
    let library_resolved = r.str16()?;
    let interface_version = r.u32()?;
    let has_version = r.u8()?;
    let version = r.u32()?;
    let instance_version = match has_version {
        0 => None,
        1 => Some(version),
        _ => return None,
    };
    let extension_count = r.u16()? as usize;
    let extensions = ExtensionList::decode(r, file, extension_count)?;
    let device_records = r.u8()? as usize;
    if device_records > MAX_DEVICE_RECORDS {
        return None;
    }
    let mut devices = Vec::with_capacity(device_records);
    for _ in 0..device_records {
        devices.push((r.u64()?, r.u32()?, r.str16()?));
    }
    let input_count = r.u16()? as usize;
    if input_count > MAX_INPUTS {
        return None;
    }
    let mut inputs = Vec::with_capacity(input_count);
    for _ in 0..input_count {
        inputs.push((r.str16()?, r.u64()?));
    }
    let profiles = profile::decode(r, file, MAX_DEVICE_RECORDS)?;
    Some(Entry { manifest_path, key, written, library_resolved, interface_version, instance_version, extensions, devices, inputs, profiles })
}

fn put_str16(out: &mut Vec<u8>, text: &str) {
    // Paths longer than 64 KiB do not exist on Linux (PATH_MAX is 4096); cut rather than fail.
    let bytes = &text.as_bytes()[..text.len().min(u16::MAX as usize)];
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(path: &str, written: u64) -> Entry {
        Entry {
            manifest_path: path.into(),
            key: [1, 2, 3, 4, 5, 6],
            written,
            library_resolved: "/usr/lib/libvulkan_lvp.so".into(),
            interface_version: 5,
            instance_version: Some(vk_generated::make_api_version(0, 1, 3, 230)),
            extensions: ExtensionList::from_pairs([(&b"VK_KHR_surface"[..], 25), (b"VK_EXT_debug_report", 10)]),
            devices: vec![(77, 1, "/usr/bin/vulkaninfo".into()), (78, 0, String::new())],
            inputs: vec![("$HOME".into(), 7), ("$MESA_DEBUG".into(), 8), ("/etc/drirc".into(), 0)],
            profiles: Profiles::from_list(vec![Profile {
                application: 77,
                devices: vec![profile::DeviceAnswers::from_pairs([(3, vec![1, 2, 3]), (9, vec![])])],
                groups: Some(vec![(vec![0], 0)]),
            }]),
        }
    }

    #[test]
    fn latest_first_orders_as_a_stable_sort_by_time_does() {
        assert_eq!(super::latest_first([5, 9, 5, 1, 9].into_iter()), [1, 4, 0, 2, 3]);
        assert_eq!(super::latest_first(std::iter::empty()), Vec::<usize>::new());
    }

    #[test]
    fn entries_survive_a_round_trip() {
        let groupless = Profile { groups: None, ..sample("/c.json", 1).profile(77).unwrap().clone() };
        let entries = vec![
            sample("/a.json", 2),
            Entry { instance_version: None, devices: vec![], inputs: vec![], profiles: Profiles::default(), ..sample("/b.json", 1) },
            Entry { profiles: Profiles::from_list(vec![groupless]), ..sample("/c.json", 0) },
        ];
        assert_eq!(decode(&encode(&entries)), Ok(entries));
        assert_eq!(decode(&encode(&[])), Ok(vec![]));
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_refused() {
        let bytes = encode(&[sample("/a.json", 2)]);
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "truncated to {len}");
        }
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad).is_err(), "byte {i} flipped");
        }
    }

    #[test]
    fn foreign_and_other_version_files_are_named() {
        assert_eq!(decode(b"{\"not\": \"ours\"} and some more bytes"), Err(Unusable::Foreign));
        let mut other = encode(&[]);
        other[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(decode(&other), Err(Unusable::OtherVersion(1)));
        assert_eq!(decode(&vec![0u8; MAX_FILE_BYTES + 1]), Err(Unusable::Foreign));
    }

    #[test]
    fn lengths_that_lie_are_refused_even_with_a_valid_digest() {
        // An entry count far past what the body holds, digest recomputed.
        let mut body = Vec::new();
        body.extend_from_slice(&200u32.to_le_bytes());
        let mut file = MAGIC.to_vec();
        file.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        file.extend_from_slice(&(body.len() as u32).to_le_bytes());
        file.extend_from_slice(&checksum(&body).to_le_bytes());
        file.extend_from_slice(&body);
        assert_eq!(decode(&file), Err(Unusable::Corrupt));
    }

    #[test]
    fn the_file_is_bounded() {
        let many: Vec<Entry> = (0..MAX_ENTRIES as u64 + 10).map(|i| sample(&format!("/{i}.json"), i)).collect();
        let kept = decode(&encode(&many)).unwrap();
        assert_eq!(kept.len(), MAX_ENTRIES);
        assert_eq!(kept[0].written, MAX_ENTRIES as u64 + 9, "the latest kept first");
        let mut e = sample("/a.json", 1);
        for application in 0..40 {
            e.set_device_count(application, 1, "/bin/x");
        }
        assert_eq!(e.devices.len(), MAX_DEVICE_RECORDS);
        assert_eq!(e.device_count(39), Some(1));
        assert_eq!(e.device_count(0), None);
    }

    #[test]
    fn applications_taking_turns_leave_the_entry_as_it_was() {
        let mut e = sample("/a.json", 1);
        e.devices.clear();
        let exe = |application: u64| format!("/bin/{application}");
        for application in [5, 6, 7] {
            e.set_device_count(application, 1, &exe(application));
        }
        let recorded = e.clone();
        for application in [5, 7, 6, 5] {
            e.set_device_count(application, 1, &exe(application));
            assert_eq!(e, recorded, "application {application} started again");
        }
        e.set_device_count(6, 2, &exe(6));
        assert_eq!(e.devices, [(7, 1, exe(7)), (6, 2, exe(6)), (5, 1, exe(5))], "a changed count keeps its place");
    }
}
