//! What a driver answered about its physical devices for one application: the record that lets
//! an instance hand out physical devices and answer their fixed queries without loading the
//! driver (lazy drivers, a later stage). Pure data, encoded inside the driver's cache entry (see `record`).
//!
//! Each device's answers are keyed by [`answer_key`]: the query family (properties, features,
//! memory, queue families, device extensions, format properties), its input (a format) and the
//! sType of the structure answered; the value is the structure's bytes after its
//! `sType`/`pNext` header (the whole list for the list queries).

use super::key::Digest;

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

/// One physical device's recorded answers, sorted by key.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DeviceAnswers {
    pub answers: Vec<(u64, Vec<u8>)>,
}

impl DeviceAnswers {
    pub fn get(&self, key: u64) -> Option<&[u8]> {
        self.answers.binary_search_by_key(&key, |(k, _)| *k).ok().map(|i| self.answers[i].1.as_slice())
    }

    /// Records an answer (replacing an earlier one); answers past the bounds are not kept.
    pub fn set(&mut self, key: u64, bytes: &[u8]) {
        if bytes.len() > MAX_ANSWER_BYTES {
            return;
        }
        match self.answers.binary_search_by_key(&key, |(k, _)| *k) {
            Ok(i) => self.answers[i].1 = bytes.to_vec(),
            Err(_) if self.answers.len() >= MAX_ANSWERS => {}
            Err(i) => self.answers.insert(i, (key, bytes.to_vec())),
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
            .answers
            .iter()
            .filter(|(key, bytes)| a.get(*key) != Some(bytes.as_slice()))
            .map(|(key, bytes)| {
                let first = a.get(*key).and_then(|old| old.iter().zip(bytes).position(|(x, y)| x != y));
                format!("{key:016x} (byte {first:?})")
            })
            .collect();
        let gone = a.answers.iter().filter(|(key, _)| b.get(*key).is_none()).count();
        if !changed.is_empty() || gone > 0 {
            out.push(format!("device {i}: {} answers differ [{}], {gone} no longer given", changed.len(), changed.join(", ")));
        }
    }
    if recorded.groups != now.groups {
        out.push(format!("groups {:?} recorded, {:?} now", recorded.groups, now.groups));
    }
    out.join("; ")
}

/// Appends `profiles` to an entry's bytes.
pub(super) fn encode(out: &mut Vec<u8>, profiles: &[Profile]) {
    let profiles = &profiles[..profiles.len().min(super::record::MAX_DEVICE_RECORDS)];
    out.push(profiles.len() as u8);
    for p in profiles {
        out.extend_from_slice(&p.application.to_le_bytes());
        let devices = &p.devices[..p.devices.len().min(MAX_DEVICES)];
        out.push(devices.len() as u8);
        for d in devices {
            let answers = &d.answers[..d.answers.len().min(MAX_ANSWERS)];
            out.extend_from_slice(&(answers.len() as u32).to_le_bytes());
            for (key, bytes) in answers {
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
}

/// Reads what [`encode`] wrote; `None` when anything is out of bounds or inconsistent.
pub(super) fn decode(r: &mut super::record::Reader) -> Option<Vec<Profile>> {
    let count = r.u8()? as usize;
    if count > super::record::MAX_DEVICE_RECORDS {
        return None;
    }
    let mut profiles = Vec::with_capacity(count);
    for _ in 0..count {
        let application = r.u64()?;
        let device_count = r.u8()? as usize;
        if device_count > MAX_DEVICES {
            return None;
        }
        let mut devices = Vec::with_capacity(device_count);
        for _ in 0..device_count {
            let answer_count = r.u32()? as usize;
            if answer_count > MAX_ANSWERS {
                return None;
            }
            let mut answers: Vec<(u64, Vec<u8>)> = Vec::with_capacity(answer_count.min(256));
            for _ in 0..answer_count {
                let key = r.u64()?;
                let len = r.u32()? as usize;
                if len > MAX_ANSWER_BYTES {
                    return None;
                }
                // Sorted and unique, as written: a lookup relies on it.
                if answers.last().is_some_and(|(k, _)| *k >= key) {
                    return None;
                }
                answers.push((key, r.take(len)?.to_vec()));
            }
            devices.push(DeviceAnswers { answers });
        }
        let groups = match r.u8()? {
            0xff => None,
            n if n as usize > MAX_GROUPS => return None,
            n => {
                let mut groups = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    let members = r.u8()? as usize;
                    let members = r.take(members)?.to_vec();
                    if members.is_empty() || members.iter().any(|&m| m as usize >= device_count) {
                        return None;
                    }
                    groups.push((members, r.u32()?));
                }
                Some(groups)
            }
        };
        profiles.push(Profile { application, devices, groups });
    }
    Some(profiles)
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
        assert_eq!(d.answers.len(), 2);
        assert_ne!(answer_key(Family::Format, 1, 0), answer_key(Family::Features, 1, 0));
    }
}
