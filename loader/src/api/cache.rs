//! `vk-loader cache [--clear]`: the driver cache's entries (each driver's key, age and what it
//! answered), whether each is current for this process, and removing the file.

use crate::cache::{self, key, record::Entry};
use crate::manifest;

/// The cache file's path and its entries as a report, each marked current or stale (and why).
pub fn report() -> String {
    let Some(path) = cache::file_path() else { return "driver cache: no cache directory (neither XDG_CACHE_HOME nor HOME is set)\n".into() };
    let (mode, why) = cache::mode();
    let mut out = format!("driver cache: {path}\nmode: {mode:?}{}\n", why.map(|w| format!(" ({w})")).unwrap_or_default());
    let entries = match cache::read(&path) {
        Ok(entries) => entries,
        Err(why) => return out + &why + "\n",
    };
    out += &format!("{} entries\n", entries.len());
    let mut session = cache::Session::open();
    for entry in entries.iter() {
        out += &describe(entry, &mut session);
    }
    out
}

fn describe(entry: &Entry, session: &mut cache::Session) -> String {
    let state = match manifest::driver::read_driver(&entry.manifest_path) {
        Err(why) => format!("stale: the manifest cannot be read ({why})"),
        Ok(m) => match session.lookup(&entry.manifest_path, &m, &|_| Ok(())) {
            cache::Lookup::Hit(_) => "current".to_string(),
            cache::Lookup::Miss(why) => format!("not used now: {why}"),
        },
    };
    let version = entry.instance_version.map_or("none".to_string(), |v| {
        let (major, minor) = vk_generated::api_version_major_minor(v);
        format!("{major}.{minor}.{}", v & 0xfff)
    });
    let devices: Vec<String> = entry.devices.iter().map(|(application, n, executable)| format!("{n} for {}", application_name(*application, executable))).collect();
    let keys: Vec<String> = key::COMPONENTS.iter().zip(entry.key).map(|(name, k)| format!("{name} {k:016x}")).collect();
    format!(
        "\n{}\n  {state}; recorded {} ago\n  library: {}\n  interface {}, instance version {version}, {} instance extensions\n  physical devices: {}\n  key: {}\n",
        entry.manifest_path,
        cache::age(entry),
        entry.library_resolved,
        entry.interface_version,
        entry.extensions.len(),
        if devices.is_empty() { "not recorded".to_string() } else { devices.join(", ") },
        keys.join(", ")
    )
}

/// An application as people know it: its executable, beside the digest its records are kept by
/// (the digest also covers its `VkApplicationInfo`: one executable may have several).
pub fn application_name(application: u64, executable: &str) -> String {
    if application == cache::key::unnamed_applications() {
        return "the applications no profile names (and new ones)".into();
    }
    match executable {
        "" => format!("application {application:016x}"),
        executable => format!("{executable} (application {application:016x})"),
    }
}

/// Removes the cache file and the applications' records beside it; the next process records
/// afresh. Says what it removed, one file a line, or that there was nothing to remove.
pub fn clear() -> Result<String, String> {
    let path = cache::file_path().ok_or("no cache directory (neither XDG_CACHE_HOME nor HOME is set)")?;
    let removed = cache::remove(&path)?;
    if removed.is_empty() {
        return Ok(format!("nothing to remove: {path} does not exist"));
    }
    Ok(removed.iter().map(|file| format!("removed {file}")).collect::<Vec<_>>().join("\n"))
}
