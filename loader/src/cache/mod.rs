//! The driver cache: what the loader remembers between processes about each driver, so that a
//! process loads no driver it does not need. Every loader loads every driver library at the first
//! `vkEnumerateInstance*` call to learn its instance extensions and whether it has a device
//! (tens of milliseconds, and waking a discrete GPU); with a warm cache, we answer from what the
//! driver said last time, and load only the drivers that have physical devices.
//!
//! Per driver, the decision is "answer from the record", "not needed" (its record says it has no
//! physical device) or "load it"; a miss is exactly the eager path (load, answer, record), so the
//! cache can make start-up faster but never an answer different. The key computation
//! ([`key`]) and the file format ([`record`]) are pure and unit-tested; [`inputs`] reads the
//! system. The file is `$XDG_CACHE_HOME/vulkan-loader-rs/drivers` (default `~/.cache/...`),
//! mode 0600, replaced atomically; what each application's physical devices answered (for lazy
//! drivers) is in a file per application beside it, `profiles/<application digest>`: a process
//! reads its own application's, not every application's the user ran.
//!
//! # What the answers depend on, and the key
//!
//! An entry is used only while every component of its key is unchanged:
//! - **manifest**: the manifest's path and its file identity (device, inode, size, mtime): an
//!   edited manifest may name another library or API version.
//! - **library**: the path the manifest gives, the file the dynamic linker loaded for it (recorded
//!   with `dladdr`) and that file's identity: a driver upgraded or replaced in place is a new
//!   driver. For a bare name (searched by the dynamic linker), also `/etc/ld.so.cache` and the
//!   executable (whose `DT_RPATH` takes part in the search); `LD_LIBRARY_PATH` is in the
//!   environment.
//! - **loader**: our version, the cache format and a digest of the runtime's source (another
//!   build of the loader may record differently; `vk-loader`, built from the same source, shares
//!   the records).
//! - **machine**: the GPUs as the kernel shows them without waking them (every PCI function with
//!   its vendor and device ids and bound driver from `/proc/bus/pci/devices`; the `/dev/dri` nodes,
//!   NVIDIA's control node and the GPUs its module lists), the kernel release and the loaded GPU
//!   modules with their versions, and the CPU's `cpuid` signature and features (lavapipe answers
//!   from them; glibc's copy where it has one, see `inputs::cpu`). Read once per process.
//! - **environment**: every variable but those that identify a launch, a login session, a
//!   terminal, a tab, a window or a pane ([`launch`]: a documented rule with its sources); a
//!   driver's own switches (`MESA_*`, `RADV_*`, `__NV_*`,
//!   `DRI_PRIME`, `LD_LIBRARY_PATH`, `LD_PRELOAD`...) always count.
//!
//! Physical-device counts are recorded per application as well ([`key::application`]: the
//! executable and the whole `VkApplicationInfo`), because application profiles (Mesa's drirc,
//! NVIDIA's) match on them. The pre-instance answers (interface version, instance version,
//! instance extensions) are taken as independent of the application: no profile mechanism of
//! Mesa or NVIDIA acts before an instance exists. A driver's physical-device count is taken to
//! depend on the key and the application, not on the instance extensions enabled: drivers
//! enumerate the hardware they drive (the one assumption here that a driver could break; `verify`
//! mode would show it). The counts of the applications no profile names are recorded once more
//! for them all, and answer for an application not recorded yet ([`application_rules`]).
//!
//! Considered and left out: the driver library's own dependencies (LLVM for lavapipe, libdrm),
//! which do not change what a driver says about its instance extensions or whether it has a
//! device; the file system's other contents (drivers read their configuration files, drirc
//! included, only once an instance or device exists).
//!
//! # Never used
//!
//! In elevated processes (nothing the user controls may decide what an elevated process
//! believes); for a driver whose library is already loaded in the process (`RTLD_NOLOAD`: it
//! costs nothing to ask it, and its state may have been set up in-process); for drivers the
//! application hands over (`VK_LUNARG_direct_driver_loading`); with `VK_LOADER_DRIVER_CACHE=off`.
//! `VK_LOADER_DRIVER_CACHE=verify` loads every driver anyway and logs each difference between
//! what it says and what its record says.

pub mod application_rules;
pub mod extension_list;
pub mod inputs;
pub mod key;
pub mod launch;
pub mod profile;
mod reader;
pub mod record;

use vk_generated::types::VkExtensionProperties;

use crate::debug::log::Level;
use crate::manifest::driver::DriverManifest;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::platform;
use crate::platform::file_cache::ParseCache;
use crate::platform::host_alloc::with_system_allocator;
use application_rules::NewApplication;
use profile::Profile;
use extension_list::ExtensionList;
use record::Entry;

/// Why a driver already in the process is asked rather than answered for.
const LOADED_ALREADY: &str = "its library is loaded in this process already: asked directly";


/// How the cache is used in this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off,
    On,
    /// Every driver loaded anyway; its answers compared with its record.
    Verify,
}

/// The mode, and why when it is not the default.
pub fn mode() -> (Mode, Option<&'static str>) {
    if platform::elevated() {
        return (Mode::Off, Some("an elevated process uses no user cache"));
    }
    let words = [
        ("on", Mode::On),
        ("1", Mode::On),
        ("true", Mode::On),
        ("yes", Mode::On),
        ("off", Mode::Off),
        ("0", Mode::Off),
        ("false", Mode::Off),
        ("no", Mode::Off),
        ("verify", Mode::Verify),
    ];
    match crate::reference::variables::VK_LOADER_DRIVER_CACHE.word(&words, |message| crate::debug::log::log(Level::Warn, message)) {
        Some(Mode::Off) => (Mode::Off, Some("VK_LOADER_DRIVER_CACHE is off")),
        Some(Mode::Verify) => (Mode::Verify, Some("VK_LOADER_DRIVER_CACHE=verify: every driver is loaded and compared with its record")),
        _ if crate::manifest::settings::current().is_some_and(|s| s.driver_cache_off) => {
            (Mode::Off, Some("the settings file's \"driver_cache\" is \"off\""))
        }
        _ => (Mode::On, None),
    }
}

/// The cache file: `$XDG_CACHE_HOME/vulkan-loader-rs/drivers`, else under `$HOME/.cache`.
pub fn file_path() -> Option<String> {
    platform::cache_directory().map(|dir| format!("{dir}/drivers"))
}

/// Why there is no cache file to use where the cache is on ([`file_path`] is `None`).
fn why_no_file() -> String {
    use crate::reference::variables::{HOME, XDG_CACHE_HOME};
    if XDG_CACHE_HOME.get().is_some_and(|p| p.starts_with('/')) || HOME.is_set() {
        "its directory is another user's".into()
    } else {
        "HOME unset (and XDG_CACHE_HOME unset or not absolute)".into()
    }
}

/// The cache file as last decoded, reused while the file is unchanged (see `file_cache`).
static DECODED: ParseCache<Result<Arc<Vec<Entry>>, String>> = ParseCache::new();

/// Reads the cache file: its entries, or why it could not be used (a missing file is an empty
/// cache, not an error).
pub fn read(path: &str) -> Result<Arc<Vec<Entry>>, String> {
    // Written only by replacing it whole: remembered at once (see `get_replaced_whole`).
    let decoded = DECODED.get_replaced_whole(path, path, record::MAX_FILE_BYTES + 1, |bytes| {
        record::decode_shared(Arc::new(bytes)).map(Arc::new).map_err(|why| format!("{path}: ignored ({why:?}); it will be replaced"))
    });
    match decoded {
        // Not there (or not readable): nothing recorded yet.
        Err(_) => Ok(Arc::new(Vec::new())),
        Ok(result) => (*result).clone(),
    }
}

/// Removes the cache file and the applications' physical devices' records beside it
/// (`vk-loader cache --clear`): the files that were there and are gone.
pub fn remove(path: &str) -> Result<Vec<String>, String> {
    let mut files: Vec<String> = profiles_directory(path)
        .map(|dir| platform::list_dir(&dir).unwrap_or_default().into_iter().map(|name| format!("{dir}/{name}")).collect())
        .unwrap_or_default();
    files.push(path.to_string());
    let mut removed = Vec::new();
    for file in files {
        if platform::write::remove_file(&file)? {
            removed.push(file);
        }
    }
    Ok(removed)
}

/// The drivers this process recorded already: (manifest path, application digest for a device
/// count). Allocated from the system (see `with_system_allocator`).
static RECORDED: std::sync::Mutex<Vec<(String, Option<u64>)>> = std::sync::Mutex::new(Vec::new());

/// What the cache says about one driver.
pub enum Lookup {
    /// Its record is current: its answers may be used without loading it.
    Hit(SharedEntry),
    /// It must be loaded; why.
    Miss(String),
}

/// An entry of a session's entries, shared with them rather than copied.
#[derive(Clone)]
pub struct SharedEntry {
    entries: Arc<Vec<Entry>>,
    index: usize,
}

impl std::ops::Deref for SharedEntry {
    type Target = Entry;
    fn deref(&self) -> &Entry {
        &self.entries[self.index]
    }
}

/// One call's use of the cache: the file read once, the machine and environment digested once,
/// entries looked up and recorded, the file written back if anything changed.
pub struct Session {
    mode: Mode,
    path: Option<String>,
    /// The file's entries, shared with the decoded file until this session changes them.
    entries: Option<Arc<Vec<Entry>>>,
    /// (loader, machine, configuration, environment) digests, computed at the first lookup or
    /// record; the configuration's is why not while a file of it cannot be identified.
    shared: Option<([u64; 2], Result<u64, String>, u64)>,
    /// The variables and configuration files by name, with their digests (see `Entry::inputs`):
    /// computed only to record an entry or to say why one is stale.
    named: Option<Vec<(String, u64)>>,
    /// The configuration files with their identities (or the one that could not be identified,
    /// and why), read at the first need.
    configuration_files: Option<Result<Vec<(String, u64)>, String>>,
    /// The keys computed so far (or why one cannot be), by (manifest path, resolved library): a
    /// driver's entries (one per key it was recorded under) share their files, which one call
    /// need not `stat` again.
    keys: Vec<((String, String), Result<key::Key, String>)>,
    changed: bool,
    /// The application whose physical devices' records are read with the entries (and written
    /// back, when `profiles_changed`).
    application: Option<u64>,
    profiles_changed: bool,
    /// What tells whether the application is configured apart from those no profile names, per
    /// driver (see `application_rules`): their physical-device count is recorded with its own.
    unnamed: Option<std::rc::Rc<NewApplication>>,
}

impl Session {
    /// The cache as this process may use it (`Mode::Off`: every lookup is a miss, nothing is
    /// written).
    pub fn open() -> Session {
        with_system_allocator(Session::read)
    }

    fn read() -> Session {
        let (mode, why) = mode();
        if let (Mode::Off, Some(why)) = (mode, why) {
            log!(Level::Driver, "driver cache not used: {why}");
        }
        let session = Session::in_mode(mode);
        if mode != Mode::Off && session.path.is_none() {
            log!(Level::Driver, "driver cache not used: {}", why_no_file());
        }
        session
    }

    /// The cache in a mode decided earlier (by the instance being destroyed, at its creation):
    /// the settings file is not read again.
    pub fn in_mode(mode: Mode) -> Session {
        let path = if mode == Mode::Off { None } else { with_system_allocator(file_path) };
        Session { mode, path, ..Session::off() }
    }

    /// The file's entries, read at the first need (a call whose drivers are all loaded already
    /// reads nothing).
    fn entries(&mut self) -> &[Entry] {
        self.entries_arc()
    }

    /// The entries, to be changed (copied from the decoded file the first time).
    fn entries_mut(&mut self) -> &mut Vec<Entry> {
        self.entries_arc();
        Arc::make_mut(self.entries.as_mut().expect("just read"))
    }

    fn entries_arc(&mut self) -> &Arc<Vec<Entry>> {
        if self.entries.is_none() {
            let entries = match self.path.as_deref().map(read) {
                Some(Ok(entries)) => entries,
                Some(Err(why)) => {
                    log!(Level::WarnDriver, "driver cache {why}");
                    self.changed = true;
                    Arc::new(Vec::new())
                }
                None => Arc::new(Vec::new()),
            };
            let profiles = self.application.and_then(|application| Some((application, self.profiles_path(application)?)));
            self.entries = Some(match profiles {
                // The merge outlives the call (`LAST_MERGE`): the process's memory.
                Some((application, path)) => with_system_allocator(|| with_profiles(entries, application, &path)),
                None => entries,
            });
        }
        self.entries.as_ref().expect("just read")
    }

    /// The application whose physical devices' records this session reads and writes; before
    /// the first lookup.
    pub fn set_application(&mut self, application: u64) {
        debug_assert!(self.entries.is_none(), "set before the entries are read");
        self.application = Some(application);
    }

    /// What tells, per driver, whether this session's application gets what the applications no
    /// profile names get: its device counts are then recorded for them too.
    pub fn set_new_application(&mut self, new_application: std::rc::Rc<NewApplication>) {
        self.unnamed = Some(new_application);
    }

    /// The file of `application`'s physical devices' records.
    fn profiles_path(&self, application: u64) -> Option<String> {
        Some(profiles_file(&profiles_directory(self.path.as_deref()?)?, application))
    }

    /// How this session uses the cache.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A session that neither reads nor writes (the eager path).
    pub fn off() -> Session {
        Session { mode: Mode::Off, path: None, entries: None, shared: None, named: None, configuration_files: None, keys: Vec::new(), changed: false, application: None, profiles_changed: false, unnamed: None }
    }

    fn shared(&mut self) -> ([u64; 2], Result<u64, String>, u64) {
        if let Some(shared) = &self.shared {
            return shared.clone();
        }
        // The environment's digest is a sum over its entries: taken entry by entry, no copy.
        let mut environment = 0u64;
        platform::for_each_environment_entry(|entry| environment = environment.wrapping_add(key::environment(std::iter::once(entry))));
        let configuration = self.configuration_files().as_deref().map(key::configuration).map_err(Clone::clone);
        self.shared.insert(([inputs::loader(), inputs::machine()], configuration, environment)).clone()
    }

    /// The configuration files (see `inputs::configuration_files`), read once per session for
    /// the key and the named inputs alike.
    fn configuration_files(&mut self) -> &Result<Vec<(String, u64)>, String> {
        self.configuration_files.get_or_insert_with(inputs::configuration_files)
    }

    /// The variables that count and the configuration files, by name, with their digests.
    fn named(&mut self) -> &[(String, u64)] {
        if self.named.is_none() {
            let mut named = self.configuration_files().clone().unwrap_or_default();
            let mut entries = Vec::new();
            platform::for_each_environment_entry(|entry| entries.push(entry.to_vec()));
            named.extend(key::environment_by_name(entries.iter().map(Vec::as_slice)));
            crate::sort::sort(&mut named);
            self.named = Some(named);
        }
        self.named.as_deref().unwrap_or_default()
    }

    /// The key of the driver of `manifest_path` whose library the dynamic linker resolved to
    /// `resolved`; or, where a file it depends on cannot be identified (unreadable, or modified in
    /// the last two seconds), that file and why: such a driver is neither answered for nor recorded.
    fn key(&mut self, manifest_path: &str, manifest: &DriverManifest, resolved: &str) -> Result<key::Key, String> {
        if let Some((_, known)) = self.keys.iter().find(|((m, r), _)| m == manifest_path && r == resolved) {
            return known.clone();
        }
        let key = self.compute_key(manifest_path, manifest, resolved);
        with_system_allocator(|| self.keys.push(((manifest_path.to_string(), resolved.to_string()), key.clone())));
        key
    }

    fn compute_key(&mut self, manifest_path: &str, manifest: &DriverManifest, resolved: &str) -> Result<key::Key, String> {
        // The driver's own files first: one too young to identify (a driver being installed)
        // ends it before the machine, the configuration and the environment are read.
        let manifest_identity = inputs::identity(manifest_path)?;
        let library_identity = inputs::identity(resolved)?;
        let search = match key::is_bare_name(&manifest.library_path) {
            true => Some((inputs::linker_cache()?, executable())),
            false => None,
        };
        let ([loader, machine], configuration, environment) = self.shared();
        let library = key::library(&manifest.library_path, resolved, library_identity, search.as_ref().map(|(c, e)| (*c, e.as_str())));
        Ok([key::manifest(manifest_path, manifest_identity), library, loader, machine, configuration?, environment])
    }

    /// Whether the driver of `manifest_path` may be answered from its record: a record that
    /// `answers` this call (checked first: a driver that must be loaded anyway costs no key) and is
    /// current.
    pub fn lookup(&mut self, manifest_path: &str, manifest: &DriverManifest, answers: &dyn Fn(&Entry) -> Result<(), String>) -> Lookup {
        // The cache's memory is the process's, never the application's allocator's.
        match with_system_allocator(|| self.find(manifest_path, manifest, answers)) {
            Ok(index) => Lookup::Hit(SharedEntry { entries: self.entries_arc().clone(), index }),
            Err(why) => Lookup::Miss(why),
        }
    }

    /// The index of the current entry of `manifest_path`, or why there is none.
    fn find(&mut self, manifest_path: &str, manifest: &DriverManifest, answers: &dyn Fn(&Entry) -> Result<(), String>) -> Result<usize, String> {
        match self.mode {
            Mode::Off => return Err("the driver cache is off".into()),
            Mode::Verify => return Err("verify mode".into()),
            Mode::On if self.path.is_none() => return Err(format!("no driver cache: {}", why_no_file())),
            Mode::On => {}
        }
        // Cheapest first: ours, the record, then the dynamic linker (`RTLD_NOLOAD` of a path opens
        // the file to compare its identity with the loaded ones').
        if platform::library_cache::get(&manifest.library_path).is_some() {
            return Err(LOADED_ALREADY.into());
        }
        // A driver has an entry per key it was recorded under (another environment, say), the
        // latest first.
        let mut candidates: Vec<usize> = (0..self.entries().len()).filter(|&i| self.entries()[i].manifest_path == manifest_path).collect();
        if candidates.is_empty() {
            return Err("not in the driver cache yet".into());
        }
        // Of records that cannot answer, the latest one's reason is given.
        let mut lacks = String::new();
        candidates.retain(|&i| answers(&self.entries()[i]).map_err(|why| lacks = why).is_ok());
        if candidates.is_empty() {
            return Err(format!("its cache record does not answer this call: {lacks}"));
        }
        if platform::is_loaded(&manifest.library_path) {
            return Err(LOADED_ALREADY.into());
        }
        // The latest first: by time, and among those of one second the later written (pushed last).
        candidates.reverse();
        let latest_first = record::latest_first(candidates.iter().map(|&i| self.entries()[i].written));
        let mut stale = None;
        for index in latest_first.into_iter().map(|at| candidates[at]) {
            let (recorded, resolved) = (self.entries()[index].key, self.entries()[index].library_resolved.clone());
            let current = self.key(manifest_path, manifest, &resolved)?;
            match key::changed(&recorded, &current) {
                None => return Ok(index),
                Some(component) => {
                    stale.get_or_insert((component, index));
                }
            }
        }
        let Some((component, index)) = stale else { return Err("its cache entry is stale".into()) };
        // Which variables or files, by name, where the latest entry recorded them.
        let names = match component {
            "environment" | "configuration" => {
                let recorded = self.entries()[index].inputs.clone();
                let differences = key::differences(&recorded, self.named());
                let prefix = if component == "environment" { "$" } else { "/" };
                let named: Vec<String> = differences.into_iter().filter(|d| d.starts_with(prefix)).collect();
                if named.is_empty() { String::new() } else { format!(": {}", named.join(", ")) }
            }
            _ => String::new(),
        };
        // A bare library name is searched for, and the executable's DT_RPATH takes part in the
        // search: the key holds the executable, so another program finds the entry stale too.
        if component == "library" && key::is_bare_name(&manifest.library_path) {
            return Err("its cache entry is stale: the library changed, or the program searching for it did (the manifest names it bare, and the search depends on the executable)".into());
        }
        Err(format!("its cache entry is stale: the {component} changed{names}"))
    }

    /// The index of the driver's entry recorded under the key of now, if any.
    fn current_entry(&mut self, manifest_path: &str, manifest: &DriverManifest) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.entries().len()).filter(|&i| self.entries()[i].manifest_path == manifest_path).collect();
        candidates.into_iter().find(|&i| {
            let (recorded, resolved) = (self.entries()[i].key, self.entries()[i].library_resolved.clone());
            self.key(manifest_path, manifest, &resolved).is_ok_and(|current| current == recorded)
        })
    }

    /// Whether [`record`](Self::record) would store anything for this driver (and application):
    /// not when the cache is off, nor when this process recorded it already. Cheap: the caller
    /// asks before gathering the answers.
    pub fn wants(&self, manifest_path: &str, application: Option<u64>) -> bool {
        match self.mode {
            Mode::Off => false,
            _ if self.path.is_none() => false,
            Mode::Verify => true,
            Mode::On => !RECORDED.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|(p, a)| p == manifest_path && *a == application),
        }
    }

    /// Records what a loaded driver answered; `devices` is (application digest, physical device
    /// count) when an instance was created. In verify mode, first logs how it differs from the
    /// record it replaces.
    pub fn record(&mut self, manifest_path: &str, manifest: &DriverManifest, answers: Answers<'_>, devices: Option<(u64, u32)>) {
        if self.mode == Mode::Off || self.path.is_none() {
            return;
        }
        with_system_allocator(|| self.store(manifest_path, manifest, answers, devices));
    }

    fn store(&mut self, manifest_path: &str, manifest: &DriverManifest, answers: Answers<'_>, devices: Option<(u64, u32)>) {
        // Once per process and driver (and application): a driver that stays loaded answers
        // every later call itself, and its record was made when it was loaded.
        let done = (manifest_path.to_string(), devices.map(|(application, _)| application));
        if self.mode == Mode::On && RECORDED.lock().unwrap_or_else(|e| e.into_inner()).contains(&done) {
            return;
        }
        let key = match self.key(manifest_path, manifest, &answers.library_resolved) {
            Ok(key) => key,
            Err(why) => {
                log!(Level::Driver, "{manifest_path}: not recorded in the driver cache: {why}");
                return;
            }
        };
        let entries = self.entries_mut();
        // The same key: the answers are refreshed, the other applications' records kept. Another
        // key gets an entry of its own, beside the driver's latest few.
        let existing = entries.iter().position(|e| e.manifest_path == manifest_path && e.key == key);
        let mut entry = match existing {
            Some(i) => entries.remove(i),
            None => {
                keep_latest_keys(entries, manifest_path, MAX_KEYS_PER_DRIVER - 1);
                Entry::default()
            }
        };
        let extensions = ExtensionList::from_properties(answers.extensions);
        // Whether the application gets what the applications no profile names get: asked (a read
        // of the driconf files) only where their count is to be compared or would change.
        let asked = devices.is_some_and(|(_, count)| self.mode == Mode::Verify || entry.device_count(key::unnamed_applications()) != Some(count));
        let unnamed = asked && self.unnamed.as_ref().is_some_and(|n| n.configured_apart(&answers.library_resolved).is_none());
        if self.mode == Mode::Verify && entry.key == key {
            verify(manifest_path, &entry, &answers, &extensions, devices, unnamed);
        }
        let before = entry.clone();
        entry.manifest_path = manifest_path.to_string();
        entry.key = key;
        entry.library_resolved = answers.library_resolved;
        entry.interface_version = answers.interface_version;
        entry.instance_version = answers.instance_version;
        entry.extensions = extensions;
        entry.inputs = self.named().to_vec();
        if let Some((application, count)) = devices {
            entry.set_device_count(application, count, &executable());
            if unnamed {
                entry.set_device_count(key::unnamed_applications(), count, "");
            }
        }
        if entry != (Entry { written: entry.written, ..before }) {
            entry.written = now();
            self.changed = true;
        }
        self.entries_mut().push(entry);
        RECORDED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(done);
    }

    /// Records that the driver of `manifest_path` has no physical device for `application`, as its
    /// entry under the key of now says of every application recorded (see `application_rules`):
    /// the application's next processes find a count of their own, and need no driconf read.
    pub fn record_no_device(&mut self, manifest_path: &str, manifest: &DriverManifest, application: u64) {
        if self.mode != Mode::On || self.path.is_none() {
            return;
        }
        with_system_allocator(|| {
            let Some(index) = self.current_entry(manifest_path, manifest) else { return };
            let executable = executable();
            let entry = &mut self.entries_mut()[index];
            if entry.device_count(application).is_none() {
                entry.set_device_count(application, 0, &executable);
                self.changed = true;
            }
        })
    }

    /// Whether [`record_profile`](Self::record_profile) would store anything: the driver has an
    /// entry recorded under the key of now (a stale one, of an older library or another
    /// environment, would drop the profile: gathering it would only cost the driver calls the
    /// application never made) and it lacks a profile for `application` (or verify mode, which
    /// always records), from the first process that meets the driver on: the next launch of the
    /// application is lazy.
    pub fn wants_profile(&mut self, manifest_path: &str, manifest: &DriverManifest, application: u64) -> bool {
        match self.mode {
            Mode::Off => false,
            _ if self.path.is_none() => false,
            mode => {
                let done = (format!("{manifest_path}\0profile"), Some(application));
                if mode == Mode::On && RECORDED.lock().unwrap_or_else(|e| e.into_inner()).contains(&done) {
                    return false;
                }
                with_system_allocator(|| match self.current_entry(manifest_path, manifest) {
                    Some(index) => mode == Mode::Verify || !self.entries()[index].profiles.contains(application),
                    None => false,
                })
            }
        }
    }

    /// Records what a loaded driver's physical devices answered for `profile.application`, in its
    /// entry recorded under the key of now, if there is one. In verify mode, `same` says where the
    /// new profile differs from the recorded one.
    pub fn record_profile(&mut self, manifest_path: &str, manifest: &DriverManifest, profile: Profile, same: &dyn Fn(&Profile, &Profile) -> String) {
        with_system_allocator(|| {
            let done = (format!("{manifest_path}\0profile"), Some(profile.application));
            RECORDED.lock().unwrap_or_else(|e| e.into_inner()).push(done);
            let Some(index) = self.current_entry(manifest_path, manifest) else { return };
            if self.mode == Mode::Verify {
                if let Some(recorded) = self.entries()[index].profile(profile.application) {
                    match same(recorded, &profile) {
                        differences if differences.is_empty() => {
                            log!(Level::Driver, "{manifest_path}: driver cache verified: the physical devices answer as recorded")
                        }
                        differences => log!(Level::WarnDriver, "{manifest_path}: driver cache verify: the physical devices answer differently from their record: {differences}"),
                    }
                }
            }
            // In the application's own file: the entry itself (the drivers file) is unchanged.
            self.entries_mut()[index].set_profile(profile);
            self.profiles_changed = true;
        })
    }

    /// In verify mode, the profile recorded for `application` in the driver's entry recorded under
    /// the key of now, which [`record_profile`](Self::record_profile) compares with; `None`
    /// otherwise.
    pub fn profile_to_verify(&mut self, manifest_path: &str, manifest: &DriverManifest, application: u64) -> Option<&Profile> {
        if self.mode != Mode::Verify {
            return None;
        }
        let index = with_system_allocator(|| self.current_entry(manifest_path, manifest))?;
        self.entries()[index].profile(application)
    }

    /// Adds answers a lazy driver's devices gave after its record was made (the formats the
    /// application asked, see `lazy`) to its profile for `application`, in its entry recorded under
    /// the key of now; `learned` holds each device's new answers, by the device's index in the
    /// profile. Nothing where that profile is gone or no longer has those devices.
    pub fn add_answers(&mut self, manifest_path: &str, manifest: &DriverManifest, application: u64, learned: &[(usize, profile::DeviceAnswers)]) {
        with_system_allocator(|| {
            let Some(index) = self.current_entry(manifest_path, manifest) else { return };
            let Some(mut profile) = self.entries()[index].profile(application).cloned() else { return };
            let mut added = 0;
            for (device, answers) in learned {
                let Some(recorded) = profile.devices.get_mut(*device) else { return };
                for (key, bytes) in answers.iter() {
                    if recorded.get(key).is_none() {
                        recorded.set(key, bytes);
                        added += 1;
                    }
                }
            }
            if added > 0 {
                log!(Level::Driver, "{manifest_path}: {added} answers added to the driver cache's record of its physical devices");
                self.entries_mut()[index].set_profile(profile);
                self.profiles_changed = true;
            }
        })
    }

    /// Writes the file back if anything changed. A failure costs only the next process's time,
    /// and is said at debug level only: a sandbox refusing writes, a read-only or full home are
    /// ordinary, and the answers are the same. After one, this process writes no more.
    pub fn save(self) {
        if !WRITES_REFUSED.load(Ordering::Relaxed) {
            with_system_allocator(|| self.write());
        }
    }

    fn write(self) {
        let Some(path) = &self.path else { return };
        let Some(dir) = path.rsplit_once('/').map(|(d, _)| d) else { return };
        let entries = self.entries.as_deref().map(Vec::as_slice).unwrap_or_default();
        let refused = |why: String| {
            log!(Level::DebugDriver, "driver cache not written: {why}; this process writes no more");
            WRITES_REFUSED.store(true, Ordering::Relaxed);
        };
        if self.changed {
            let without: Vec<Entry> = entries.iter().map(Entry::without_profiles).collect();
            let written = platform::write::create_own_dir_all(dir, 0o700).and_then(|()| platform::write::replace_file(path, &record::encode(&without)));
            if let Err(why) = written {
                return refused(why);
            }
        }
        if let (Some(application), true, Some(profiles_dir)) = (self.application, self.profiles_changed, profiles_directory(path)) {
            // Each entry with the application's record, and only what finds its entry again.
            let own = entries.iter().filter(|e| e.profiles.contains(application));
            let kept: Vec<Entry> = own.map(|e| Entry { manifest_path: e.manifest_path.clone(), key: e.key, written: e.written, profiles: e.profiles.only(application), ..Entry::default() }).collect();
            let written = platform::write::create_own_dir_all(&profiles_dir, 0o700)
                .and_then(|()| platform::write::replace_file(&profiles_file(&profiles_dir, application), &record::encode(&kept)));
            match written {
                Ok(()) => keep_latest_applications(&profiles_dir, MAX_APPLICATIONS),
                Err(why) => refused(why),
            }
        }
    }
}

/// Set once a write of the cache failed: the rest of the process writes nothing (a sandbox that
/// refused one write refuses the next).
static WRITES_REFUSED: AtomicBool = AtomicBool::new(false);

/// From now on this process writes no cache file (`vk-loader explain --as`, which decides as
/// another executable and must not record in its name).
pub fn write_nothing() {
    WRITES_REFUSED.store(true, Ordering::Relaxed);
}

/// The records stored for the application started as `executable`: one per driver entry and
/// application digest (an executable run with several `VkApplicationInfo`s has several), the
/// latest recorded first.
pub fn recorded_for(executable: &str) -> Vec<crate::plan::CacheRecord> {
    with_system_allocator(|| records_of(executable))
}

fn records_of(executable: &str) -> Vec<crate::plan::CacheRecord> {
    let Some(path) = file_path() else { return Vec::new() };
    let Ok(entries) = read(&path) else { return Vec::new() };
    let profiles = profiles_directory(&path);
    let mut records = Vec::new();
    for entry in entries.iter() {
        for (application, count, _) in entry.devices.iter().filter(|(_, _, e)| e == executable) {
            let answers = profiles.as_deref().is_some_and(|dir| platform::readable(&profiles_file(dir, *application)));
            records.push(crate::plan::CacheRecord {
                manifest: entry.manifest_path.clone(),
                application: format!("{application:016x}"),
                physical_devices: *count,
                device_answers: answers && *count > 0,
                written: entry.written,
                age: age(entry),
            });
        }
    }
    let mut slots: Vec<Option<crate::plan::CacheRecord>> = records.into_iter().map(Some).collect();
    record::latest_first(slots.iter().flatten().map(|r| r.written)).into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Where the applications' physical devices' records are: `profiles/` beside the drivers file at
/// `cache_path`.
fn profiles_directory(cache_path: &str) -> Option<String> {
    cache_path.rsplit_once('/').map(|(dir, _)| format!("{dir}/profiles"))
}

/// `application`'s file in the profiles directory `dir`.
fn profiles_file(dir: &str, application: u64) -> String {
    format!("{dir}/{application:016x}")
}

/// Applications whose physical devices' records are kept (as many as an entry keeps device counts
/// for: a record without its count is not used).
const MAX_APPLICATIONS: usize = record::MAX_DEVICE_RECORDS;

/// `entries` with `application`'s physical devices' records from `path` attached to the entries
/// they were recorded for (same driver, same key); a record whose entry is gone is left out.
fn with_profiles(entries: Arc<Vec<Entry>>, application: u64, path: &str) -> Arc<Vec<Entry>> {
    let recorded = match read(path) {
        Ok(recorded) => recorded,
        Err(why) => {
            // Replaced when the application's physical devices are next recorded.
            log!(Level::WarnDriver, "driver cache {why}");
            return entries;
        }
    };
    // Both files unchanged since the last merge (the same parses): that merge, not a new copy of
    // every entry.
    let mut last = LAST_MERGE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(m) = last.as_ref().filter(|m| m.application == application && Arc::ptr_eq(&m.entries, &entries) && Arc::ptr_eq(&m.recorded, &recorded)) {
        return m.merged.clone();
    }
    let found = |e: &Entry| recorded.iter().find(|r| r.manifest_path == e.manifest_path && r.key == e.key && r.profiles.contains(application));
    let attached: Vec<(usize, &Entry)> = entries.iter().enumerate().filter_map(|(i, e)| Some((i, found(e)?))).collect();
    if attached.is_empty() {
        return entries;
    }
    let mut merged = (*entries).clone();
    for (i, r) in attached {
        merged[i].profiles = r.profiles.only(application);
    }
    let merged = Arc::new(merged);
    *last = Some(Merge { application, entries, recorded, merged: merged.clone() });
    merged
}

/// The last [`with_profiles`]: an application's profiles merged into the drivers file's entries,
/// with the two parses it was made from. Process memory, allocated from the system (its caller
/// holds `with_system_allocator`).
struct Merge {
    application: u64,
    entries: Arc<Vec<Entry>>,
    recorded: Arc<Vec<Entry>>,
    merged: Arc<Vec<Entry>>,
}

static LAST_MERGE: std::sync::Mutex<Option<Merge>> = std::sync::Mutex::new(None);

/// Removes the records of the applications that recorded longest ago beyond `keep` (by the
/// files' modification times: a file is rewritten only when its application's devices are).
fn keep_latest_applications(dir: &str, keep: usize) {
    let Some(names) = platform::list_dir(dir) else { return };
    // The applications' files only (not another process's file being written).
    let names: Vec<String> = names.into_iter().filter(|n| n.len() == 16 && n.bytes().all(|b| b.is_ascii_hexdigit())).collect();
    if names.len() <= keep {
        return;
    }
    let mut files: Vec<(std::time::SystemTime, String)> = names
        .into_iter()
        .map(|name| format!("{dir}/{name}"))
        .filter_map(|path| Some((std::fs::metadata(&path).ok()?.modified().ok()?, path)))
        .collect();
    crate::sort::sort(&mut files);
    let excess = files.len().saturating_sub(keep);
    for (_, path) in files.into_iter().take(excess) {
        let _ = platform::write::remove_file(&path);
    }
}

/// Entries kept per driver: one per key it was recorded under (processes in different
/// environments, such as games under Steam's runtime and the desktop, do not replace each
/// other's records).
const MAX_KEYS_PER_DRIVER: usize = 4;

/// Drops the oldest entries of a driver beyond `keep`.
fn keep_latest_keys(entries: &mut Vec<Entry>, manifest_path: &str, keep: usize) {
    let mut times: Vec<u64> = entries.iter().filter(|e| e.manifest_path == manifest_path).map(|e| e.written).collect();
    if times.len() <= keep {
        return;
    }
    crate::sort::sort(&mut times);
    times.reverse();
    let oldest_kept = if keep == 0 { u64::MAX } else { times[keep - 1] };
    let mut kept = 0;
    entries.retain(|e| {
        if e.manifest_path != manifest_path {
            return true;
        }
        let keep_it = e.written >= oldest_kept && kept < keep;
        kept += keep_it as usize;
        keep_it
    });
}

/// What a loaded driver answered.
pub struct Answers<'a> {
    /// The file the dynamic linker loaded for the manifest.
    pub library_resolved: String,
    pub interface_version: u32,
    pub instance_version: Option<u32>,
    pub extensions: &'a [VkExtensionProperties],
}

/// Verify mode: each difference between a driver's live answers and its record, logged.
/// `unnamed`: the application gets what the applications no profile names get, whose count is
/// compared too (a new application is not loaded a driver recorded with none for them).
fn verify(manifest_path: &str, recorded: &Entry, live: &Answers<'_>, extensions: &ExtensionList, devices: Option<(u64, u32)>, unnamed: bool) {
    let mut differences = Vec::new();
    if recorded.interface_version != live.interface_version {
        differences.push(format!("interface version {} recorded, {} now", recorded.interface_version, live.interface_version));
    }
    if recorded.instance_version != live.instance_version {
        differences.push(format!("instance version {:?} recorded, {:?} now", recorded.instance_version, live.instance_version));
    }
    if recorded.extensions != *extensions {
        differences.push(format!("instance extensions {:?} recorded, {:?} now", recorded.extensions, extensions));
    }
    if let Some((application, count)) = devices {
        if let Some(recorded) = recorded.device_count(application).filter(|&n| n != count) {
            differences.push(format!("{recorded} physical devices recorded, {count} now"));
        }
        let for_unnamed = recorded.device_count(key::unnamed_applications()).filter(|&n| unnamed && n != count);
        if let Some(recorded) = for_unnamed {
            differences.push(format!("{recorded} physical devices recorded for the applications no profile names (and so for new ones), {count} now for one of them"));
        }
    }
    if differences.is_empty() {
        log!(Level::Driver, "{manifest_path}: driver cache verified: the record matches");
    }
    for difference in differences {
        log!(Level::WarnDriver, "{manifest_path}: driver cache verify: {difference}");
    }
}

/// Drops a driver's entry (its lazy loading failed: the next instance loads it at once).
pub fn forget(manifest_path: &str) {
    let mut session = Session::open();
    if session.mode == Mode::Off {
        return;
    }
    with_system_allocator(|| {
        if session
            .entries()
            .iter()
            .any(|e| e.manifest_path == manifest_path)
        {
            session
                .entries_mut()
                .retain(|e| e.manifest_path != manifest_path);
            session.changed = true;
        }
    });
    session.save();
}

/// The path the executable was started by, for keys that depend on it (see `platform::started_as`).
pub fn executable() -> String {
    platform::started_as().unwrap_or_default()
}

/// [`executable`], where known: what names the application in its records.
pub fn executable_name() -> Option<String> {
    platform::started_as()
}

/// How long ago `entry` was recorded, for people.
pub fn age(entry: &Entry) -> String {
    let seconds = now().saturating_sub(entry.written);
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        7200..172_800 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}

/// Seconds since the epoch.
fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_applications_recorded_longest_ago_go_first() {
        let dir = std::env::temp_dir().join(format!("loader-profiles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let epoch = std::time::SystemTime::UNIX_EPOCH;
        for (i, age) in [(1u64, 50u64), (2, 10), (3, 40), (4, 20), (5, 30)] {
            let file = std::fs::File::create(dir.join(format!("{i:016x}"))).unwrap();
            file.set_modified(epoch + std::time::Duration::from_secs(1_000_000 - age)).unwrap();
        }
        // Another process's file being written, and anything else, are left alone.
        std::fs::write(dir.join("0000000000000001.77.77.tmp"), b"").unwrap();
        std::fs::write(dir.join("notes"), b"").unwrap();
        keep_latest_applications(dir.to_str().unwrap(), 3);
        let left = platform::list_dir(dir.to_str().unwrap()).unwrap();
        assert_eq!(left, ["0000000000000001.77.77.tmp", "0000000000000002", "0000000000000004", "0000000000000005", "notes"]);
        keep_latest_applications(dir.to_str().unwrap(), 3);
        assert_eq!(platform::list_dir(dir.to_str().unwrap()).unwrap().len(), 5, "within the bound: nothing more goes");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
