//! What a driver answered about its physical devices for one application: the record that lets
//! an instance hand out physical devices and answer their fixed queries without loading the
//! driver (lazy drivers, a later stage). Pure data, encoded inside the driver's cache entry (see `record`).
//!
//! Each device's answers are keyed by [`answer_key`]: the query family (properties, features,
//! memory, queue families, device extensions, format properties), its input (a format) and the
//! sType of the structure answered; the value is the structure's bytes after its
//! `sType`/`pNext` header (the whole list for the list queries).

use std::sync::Arc;

use super::key::Digest;
use super::reader::Reader;

/// Bounds: a profile past them is not ours, or not worth keeping.
pub const MAX_DEVICES: usize = 16;
pub const MAX_ANSWERS: usize = 4096;
pub const MAX_ANSWER_BYTES: usize = 1 << 16;
pub const MAX_GROUPS: usize = 16;

/// The recorded physical devices of a driver for one application (its digest, see
/// `key::application`), in the driver's order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Profile {
    pub application: u64,
    pub devices: Vec<DeviceAnswers>,
    /// The driver's physical-device groups as indices into `devices`, with `subsetAllocation`;
    /// `None` when the driver cannot report groups (one group per device then).
    pub groups: Option<Vec<(Vec<u8>, u32)>>,
}

/// One physical device's recorded answers: their bytes in one buffer (as read from the file: the
/// file's own bytes, shared, not an allocation per answer or a copy) and an index sorted by key.
#[derive(Clone, Debug, Default)]
pub struct DeviceAnswers {
    /// (key, start, length) of each answer in `bytes`, sorted by key.
    index: Vec<(u64, u32, u32)>,
    /// The answers' bytes, with whatever lies between them (a replaced answer, the file's own
    /// framing).
    bytes: Span,
}

/// A part of a buffer shared by everything decoded from it (the cache file as read), or a buffer
/// of its own (answers recorded in this process).
#[derive(Clone, Debug, Default)]
pub(super) struct Span {
    buffer: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Span {
    /// The whole of `buffer`.
    pub(super) fn whole(buffer: Arc<Vec<u8>>) -> Span {
        let end = buffer.len();
        Span { buffer, start: 0, end }
    }

    pub(super) fn bytes(&self) -> &[u8] {
        &self.buffer[self.start..self.end]
    }

    /// The part of this span that `tail` (a suffix of its bytes) leaves out at its end: `tail`'s
    /// bytes up to where `rest` (a suffix of `tail`) begins.
    pub(super) fn between(&self, tail: &[u8], rest: &[u8]) -> Span {
        Span { buffer: self.buffer.clone(), start: self.end - tail.len(), end: self.end - rest.len() }
    }

    /// Appends `bytes` (the buffer copied first when shared); where they start in the span.
    fn push(&mut self, bytes: &[u8]) -> usize {
        if self.start != 0 || self.end != self.buffer.len() || Arc::get_mut(&mut self.buffer).is_none() {
            *self = Span::whole(Arc::new(self.bytes().to_vec()));
        }
        let buffer = Arc::get_mut(&mut self.buffer).expect("a buffer of its own");
        let at = buffer.len();
        buffer.extend_from_slice(bytes);
        self.end = buffer.len();
        at
    }
}

impl PartialEq for DeviceAnswers {
    fn eq(&self, other: &DeviceAnswers) -> bool {
        self.iter().eq(other.iter())
    }
}

impl DeviceAnswers {
    /// The answers of `pairs` (later ones replacing earlier ones of the same key).
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u64, Vec<u8>)>) -> DeviceAnswers {
        let mut answers = DeviceAnswers::default();
        for (key, bytes) in pairs {
            answers.set(key, &bytes);
        }
        answers
    }

    pub fn get(&self, key: u64) -> Option<&[u8]> {
        let i = self.index.binary_search_by_key(&key, |&(k, _, _)| k).ok()?;
        Some(self.at(i))
    }

    fn at(&self, i: usize) -> &[u8] {
        let (_, start, len) = self.index[i];
        &self.bytes.bytes()[start as usize..start as usize + len as usize]
    }

    /// Every answer, by key.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &[u8])> {
        (0..self.index.len()).map(|i| (self.index[i].0, self.at(i)))
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Records an answer (replacing an earlier one); answers past the bounds are not kept.
    pub fn set(&mut self, key: u64, bytes: &[u8]) {
        if bytes.len() > MAX_ANSWER_BYTES {
            return;
        }
        let position = self.index.binary_search_by_key(&key, |&(k, _, _)| k);
        if position.is_err() && self.index.len() >= MAX_ANSWERS || self.bytes.bytes().len() + bytes.len() > u32::MAX as usize {
            return;
        }
        let entry = (key, self.bytes.push(bytes) as u32, bytes.len() as u32);
        match position {
            Ok(i) => self.index[i] = entry,
            Err(i) => self.index.insert(i, entry),
        }
    }
}

/// The query families whose answers are recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Properties = 1,
    Features = 2,
    Memory = 3,
    QueueFamilies = 4,
    DeviceExtensions = 5,
    Format = 6,
}

/// The key of one recorded answer: the family, its input (a `VkFormat`, else 0) and the sType of
/// the structure answered (0 for the list queries).
pub fn answer_key(family: Family, input: u32, s_type: u32) -> u64 {
    let mut bytes = [0u8; 9];
    bytes[0] = family as u8;
    bytes[1..5].copy_from_slice(&input.to_le_bytes());
    bytes[5..9].copy_from_slice(&s_type.to_le_bytes());
    Digest::default().bytes(&bytes).value()
}

/// How two profiles of the same driver differ, for people (verify mode).
pub fn differences(recorded: &Profile, now: &Profile) -> String {
    if recorded.devices.len() != now.devices.len() {
        return format!("{} physical devices recorded, {} now", recorded.devices.len(), now.devices.len());
    }
    let mut out = Vec::new();
    for (i, (a, b)) in recorded.devices.iter().zip(&now.devices).enumerate() {
        let changed: Vec<String> = b
            .iter()
            .filter(|&(key, bytes)| a.get(key) != Some(bytes))
            .map(|(key, bytes)| {
                let first = a.get(key).and_then(|old| old.iter().zip(bytes).position(|(x, y)| x != y));
                format!("{key:016x} (byte {first:?})")
            })
            .collect();
        let gone = a.iter().filter(|&(key, _)| b.get(key).is_none()).count();
        if !changed.is_empty() || gone > 0 {
            out.push(format!("device {i}: {} answers differ [{}], {gone} no longer given", changed.len(), changed.join(", ")));
        }
    }
    if recorded.groups != now.groups {
        out.push(format!("groups {:?} recorded, {:?} now", recorded.groups, now.groups));
    }
    out.join("; ")
}

/// The profiles of an entry, latest first: as read from the file, each one's bytes (checked
/// whole when the file was read), decoded at its first use; or as recorded in this process. A
/// process needs at most the profile of its own application: the others are carried as bytes.
#[derive(Clone, Debug, Default)]
pub struct Profiles {
    list: Vec<Stored>,
}

#[derive(Clone, Debug)]
struct Stored {
    application: u64,
    /// Its encoding after the application digest, in the file read (empty for one recorded in
    /// this process).
    bytes: Span,
    decoded: std::sync::OnceLock<std::sync::Arc<Profile>>,
}

impl Profiles {
    pub fn from_list(profiles: Vec<Profile>) -> Profiles {
        let list = profiles.into_iter().map(|p| Stored { application: p.application, bytes: Span::default(), decoded: std::sync::Arc::new(p).into() }).collect();
        Profiles { list }
    }

    /// The profile of `application`, decoded now if it was not yet.
    pub fn get(&self, application: u64) -> Option<&Profile> {
        self.shared(application).map(|p| &**p)
    }

    /// [`get`](Self::get), shared rather than copied (a lazy driver keeps it).
    pub fn shared(&self, application: u64) -> Option<&std::sync::Arc<Profile>> {
        self.list.iter().find(|s| s.application == application).map(Stored::profile)
    }

    /// Whether there is a profile of `application` (not decoded to tell).
    pub fn contains(&self, application: u64) -> bool {
        self.list.iter().any(|s| s.application == application)
    }

    /// Only `application`'s profile (shared, not copied), if there is one.
    pub fn only(&self, application: u64) -> Profiles {
        Profiles { list: self.list.iter().filter(|s| s.application == application).cloned().collect() }
    }

    /// Every profile, decoded.
    pub fn iter(&self) -> impl Iterator<Item = &Profile> {
        self.list.iter().map(|s| &**s.profile())
    }

    /// Records `profile`, latest first, keeping at most `limit`.
    pub fn set(&mut self, profile: Profile, limit: usize) {
        self.list.retain(|s| s.application != profile.application);
        self.list.insert(0, Stored { application: profile.application, bytes: Span::default(), decoded: std::sync::Arc::new(profile).into() });
        self.list.truncate(limit);
    }
}

impl PartialEq for Profiles {
    fn eq(&self, other: &Profiles) -> bool {
        self.list.len() == other.list.len() && self.iter().eq(other.iter())
    }
}

impl Stored {
    fn profile(&self) -> &std::sync::Arc<Profile> {
        // Decoded into the process-wide cache, maybe inside an application's allocator scope
        // (`vkCreateInstance`): the system's memory, which outlives that allocator.
        self.decoded.get_or_init(|| {
            crate::platform::host_alloc::with_system_allocator(|| {
                let mut profile = Profile { application: self.application, ..Profile::default() };
                // Checked when the file was read: a failure here cannot happen, and would only
                // leave the profile empty (no device answered from it).
                let _ = body(&mut Reader(self.bytes.bytes()), self.application, Some((&self.bytes, &mut profile)));
                std::sync::Arc::new(profile)
            })
        })
    }
}

/// Appends `profiles`, the first `limit` of them, to an entry's bytes.
pub(super) fn encode(out: &mut Vec<u8>, profiles: &Profiles, limit: usize) {
    let profiles = &profiles.list[..profiles.list.len().min(limit)];
    out.push(profiles.len() as u8);
    for stored in profiles {
        out.extend_from_slice(&stored.application.to_le_bytes());
        match stored.decoded.get() {
            _ if !stored.bytes.bytes().is_empty() => out.extend_from_slice(stored.bytes.bytes()),
            Some(p) => encode_body(out, p),
            None => encode_body(out, &Profile::default()),
        }
    }
}

fn encode_body(out: &mut Vec<u8>, p: &Profile) {
    let devices = &p.devices[..p.devices.len().min(MAX_DEVICES)];
    out.push(devices.len() as u8);
    for d in devices {
        out.extend_from_slice(&(d.len().min(MAX_ANSWERS) as u32).to_le_bytes());
        for (key, bytes) in d.iter().take(MAX_ANSWERS) {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
    }
    match &p.groups {
        None => out.push(0xff),
        Some(groups) => {
            let groups = &groups[..groups.len().min(MAX_GROUPS)];
            out.push(groups.len() as u8);
            for (members, subset) in groups {
                let members = &members[..members.len().min(MAX_DEVICES)];
                out.push(members.len() as u8);
                out.extend_from_slice(members);
                out.extend_from_slice(&subset.to_le_bytes());
            }
        }
    }
}

/// Reads what [`encode`] wrote, checking all of it but keeping each profile's bytes undecoded;
/// `None` when anything is out of bounds or inconsistent (more than `limit` profiles). `r` reads
/// the end of `file`, which the profiles keep a share of.
pub(super) fn decode(r: &mut Reader, file: &Span, limit: usize) -> Option<Profiles> {
    let count = r.u8()? as usize;
    if count > limit {
        return None;
    }
    let mut list = Vec::with_capacity(count);
    for _ in 0..count {
        let application = r.u64()?;
        let start = r.0;
        body(r, application, None)?;
        list.push(Stored { application, bytes: file.between(start, r.0), decoded: std::sync::OnceLock::new() });
    }
    Some(Profiles { list })
}

/// Reads one profile's encoding after its application digest, checking every bound and the
/// answers' order; fills the profile of `out` if given (its answers sharing the span that `r`
/// reads the end of), else only checks, allocating nothing.
fn body(r: &mut Reader, application: u64, mut out: Option<(&Span, &mut Profile)>) -> Option<()> {
    let device_count = r.u8()? as usize;
    if device_count > MAX_DEVICES {
        return None;
    }
    if let Some((_, p)) = out.as_mut() {
        p.devices.reserve_exact(device_count);
    }
    for _ in 0..device_count {
        let answer_count = r.u32()? as usize;
        if answer_count > MAX_ANSWERS {
            return None;
        }
        // The device's answers are kept as the file has them: its bytes copied once, indexed.
        let region = r.0;
        let mut index = Vec::with_capacity(if out.is_some() { answer_count } else { 0 });
        let mut last = None;
        for _ in 0..answer_count {
            let key = r.u64()?;
            let len = r.u32()? as usize;
            if len > MAX_ANSWER_BYTES {
                return None;
            }
            // Sorted and unique, as written: a lookup relies on it.
            if last.is_some_and(|k| k >= key) {
                return None;
            }
            last = Some(key);
            let start = region.len() - r.0.len();
            r.take(len)?;
            if out.is_some() {
                index.push((key, start as u32, len as u32));
            }
        }
        if let Some((span, p)) = out.as_mut() {
            p.devices.push(DeviceAnswers { index, bytes: span.between(region, r.0) });
        }
    }
    let groups = match r.u8()? {
        0xff => None,
        n if n as usize > MAX_GROUPS => return None,
        n => {
            let mut groups = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let members = r.u8()? as usize;
                let members = r.take(members)?;
                if members.is_empty() || members.iter().any(|&m| m as usize >= device_count) {
                    return None;
                }
                groups.push((members.to_vec(), r.u32()?));
            }
            Some(groups)
        }
    };
    if let Some((_, p)) = out {
        p.application = application;
        p.groups = groups;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_found_by_key_and_replaced() {
        let mut d = DeviceAnswers::default();
        d.set(answer_key(Family::Format, 37, 0), b"abc");
        d.set(answer_key(Family::Properties, 0, 1000059001), b"xyz");
        d.set(answer_key(Family::Format, 37, 0), b"def");
        assert_eq!(d.get(answer_key(Family::Format, 37, 0)), Some(&b"def"[..]));
        assert_eq!(d.get(answer_key(Family::Format, 38, 0)), None);
        assert_eq!(d.len(), 2);
        assert_eq!(d, DeviceAnswers::from_pairs([(answer_key(Family::Properties, 0, 1000059001), b"xyz".to_vec()), (answer_key(Family::Format, 37, 0), b"def".to_vec())]), "equal by their answers, not their buffers");
        assert_ne!(answer_key(Family::Format, 1, 0), answer_key(Family::Features, 1, 0));
    }
}
