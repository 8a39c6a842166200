//! The layers on this system: manifests read (never a library opened), bad ones logged and
//! skipped, names de-duplicated, meta layers validated, the override layer's blacklist and search
//! paths applied.

use std::cell::RefCell;
use std::sync::Arc;
use std::ffi::{c_char, OsStr};

use vk_generated::types::VkLayerProperties;

use crate::debug::log::{self, Level};
use crate::discover::search;
use crate::manifest::settings::{self, Control, LayerEntry, Settings};
use crate::manifest::{self, layer::{LayerManifest, ParsedFile, OVERRIDE_LAYER_NAME}};
use crate::plan::layers::validate_catalog;
use crate::plan::{self, Decision};
use crate::platform::executable_path;
use crate::platform::file_cache::ParseCache;

/// Layer manifests as last parsed, by path and kind (see file_cache): an unchanged file is not
/// read again, which makes instance creation with many manifests present cheap.
static PARSED: ParseCache<Result<ParsedFile, String>> = ParseCache::new();

/// A manifest file parsed, from the cache when the file is unchanged: `file` is opened, `path`
/// (the same, but for a name that is not UTF-8: see `search::Found`) is the name it goes by.
fn parse(file: &OsStr, path: &str, implicit: bool) -> Result<ParsedFile, String> {
    // Keyed by the path and whether it was found as an implicit layer's, which the parse depends on.
    let key = format!("{}{path}", if implicit { "implicit " } else { "explicit " });
    let parsed = PARSED.get_manifest(&key, file, |text| manifest::layer::parse_layers(text, path, implicit));
    let parsed = parsed.map_err(|e| {
        // The Khronos loader's words.
        log!(Level::Error, "loader_get_json: Failed to open JSON file {path}");
        format!("{path}: {e}")
    })?;
    (*parsed).clone()
}

/// Reads the manifests of one kind, in search order.
fn read(implicit: bool, override_paths: &[String]) -> Vec<LayerManifest> {
    let mut layers = Vec::new();
    for found in search::layer_manifests(implicit, override_paths) {
        let path = found.path;
        match parse(&found.file, &path, implicit) {
            Ok(file) => {
                log_found(&path, &file);
                for rejected in file.rejected {
                    let why = rejected.why;
                    // The Khronos loader's words for a missing field already say the layer is skipped.
                    let skipped = if why.ends_with("skipping this layer") { "" } else { "; layer skipped" };
                    log!(Level::WarnLayer, "layer manifest {why}{skipped}");
                    plan::record(|p| p.layer(&rejected.name, &path, implicit, Decision::Rejected, why));
                }
                plan::record(|p| {
                    for l in &file.layers {
                        p.layer_found(&l.name, &l.manifest_path, l.implicit);
                    }
                });
                for (level, warning) in file.warnings {
                    log::log(level, &warning);
                }
                layers.extend(file.layers);
            }
            Err(why) => {
                log!(Level::WarnLayer, "layer manifest {why}; file skipped");
                plan::record(|p| p.layer("", &path, implicit, Decision::Rejected, why));
            }
        }
    }
    layers
}

/// The Khronos loader's lines for a manifest read, which its users search for.
fn log_found(path: &str, file: &ParsedFile) {
    let version = &file.file_format_version;
    log!(Level::Info, "Found manifest file {path} (file version {version})");
    if file.unknown_file_format {
        log!(Level::InfoLayer, "loader_add_layer_properties: {path} has unknown layer manifest file version {version}.  May cause errors.");
    }
}

/// What one API call has read so far: nothing yet, or the catalog and whether it includes the
/// explicit layers.
type Reading = Option<(bool, Catalog)>;

/// The layer catalog, shared: the calls that read it only look (a copy of every manifest per
/// look cost a fresh process's first calls some 50 us with Debian's six implicit layers).
pub type Catalog = Arc<Vec<LayerManifest>>;

thread_local! {
    /// The catalog read once for the API call under way (see `OneReading`), and whether it
    /// includes the explicit layers.
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// While alive, `load` on this thread reads the manifests once and answers later calls from that
/// reading: one API call (`vkEnumerateInstanceExtensionProperties` asks the pre-instance chain and
/// then the implicit layers' extensions) looks at the file system once.
pub struct OneReading {
    outermost: bool,
    /// The settings file is looked for once in the call too.
    _settings: settings::OneLook,
}

impl OneReading {
    pub fn enter() -> OneReading {
        // Only the outermost scope on the thread starts (and later ends) a reading.
        let outermost = READING.with(|r| {
            let mut reading = r.borrow_mut();
            let outermost = reading.is_none();
            if outermost {
                *reading = Some(None);
            }
            outermost
        });
        OneReading { outermost, _settings: settings::OneLook::enter() }
    }
}

impl Drop for OneReading {
    fn drop(&mut self) {
        if self.outermost {
            READING.with(|r| r.replace(None));
        }
    }
}

/// The layer catalog. Explicit manifests are read only when `with_explicit` (instance creation
/// without any layer named skips them) or when an implicit meta layer may need them.
pub fn load(with_explicit: bool) -> Catalog {
    let remembered = READING.with(|r| match &*r.borrow() {
        Some(Some((explicit, catalog))) if *explicit || !with_explicit => Some(catalog.clone()),
        _ => None,
    });
    if let Some(catalog) = remembered {
        return catalog;
    }
    let catalog = Arc::new(read_catalog(with_explicit));
    READING.with(|r| {
        if let Some(slot) = r.borrow_mut().as_mut() {
            *slot = Some((with_explicit, catalog.clone()));
        }
    });
    catalog
}

fn read_catalog(with_explicit: bool) -> Vec<LayerManifest> {
    let settings = settings::current();
    if let Some(settings) = &settings {
        settings::log_in_use(settings);
    }
    match settings {
        Some(settings) if settings.decides_layers() => settings_catalog(&settings, with_explicit),
        _ => regular_catalog(with_explicit),
    }
}

/// The layers found the usual way: search paths, environment, override layer.
fn regular_catalog(with_explicit: bool) -> Vec<LayerManifest> {
    let implicit = keep_one_override_layer(read(true, &[]));
    let over = implicit.iter().find(|l| l.name == OVERRIDE_LAYER_NAME);
    let (override_paths, blacklist) = match over {
        Some(o) => (o.override_paths.clone(), o.blacklisted_layers.clone()),
        None => (Vec::new(), Vec::new()),
    };
    for path in &override_paths {
        // The Khronos loader's words.
        log!(Level::WarnLayer, "Override layer has override path {path}");
    }
    let mut all = implicit;
    // Someone reading the loader's information messages sees every manifest found, as with the
    // Khronos loader, which always reads them all.
    if with_explicit || all.iter().any(|l| l.is_meta()) || log::wanted(Level::Info) {
        all.extend(read(false, &override_paths));
    } else {
        search::log_unread_explicit_layers(&override_paths);
    }
    let (catalog, dropped) = validate_catalog(all, &blacklist);
    let (catalog, disabled) = crate::plan::layers::remove_disabled(catalog, &crate::plan::layers::process_env);
    for (level, line) in dropped.into_iter().chain(disabled) {
        log::log(level, &line);
    }
    catalog
}

/// A layer of the settings file's list, or a name it turns off (`None`).
type Slot = (String, Option<LayerManifest>);

/// The catalog when a settings file has a `layers` list: its layers in its order, each read from
/// the manifest it names (as implicit where `treat_as_implicit_manifest`); the layers found the
/// usual way go where `unordered_layer_location` is, unless the file names them, and are left out
/// when it has no such marker. Layers it turns off are named only to keep those out: they are not
/// in the catalog, so nothing can enable them.
fn settings_catalog(settings: &Settings, with_explicit: bool) -> Vec<LayerManifest> {
    let entries = settings.layers.as_deref().unwrap_or_default();
    let marker = entries.iter().position(|e| *e == LayerEntry::UnorderedLocation);
    let (before, after) = match marker {
        Some(at) => (&entries[..at], &entries[at + 1..]),
        None => (entries, &[][..]),
    };
    let before = settings_slots(before);
    let after = settings_slots(after);
    let mut combined: Vec<Slot> = Vec::with_capacity(before.len() + after.len());
    for slot in before {
        push_unless_present(&mut combined, slot);
    }
    if marker.is_some() {
        // A meta layer of the file may name explicit layers found the usual way.
        let has_meta = combined.iter().chain(&after).any(|(_, l)| l.as_ref().is_some_and(LayerManifest::is_meta));
        let regular = regular_catalog(with_explicit || has_meta);
        for mut layer in regular {
            let named_by_file = combined.iter().chain(&after).any(|(name, _)| *name == layer.name);
            if !named_by_file {
                layer.settings_control = Some(Control::Auto);
                combined.push((layer.name.clone(), Some(layer)));
            }
        }
    }
    for slot in after {
        push_unless_present(&mut combined, slot);
    }
    combined.into_iter().filter_map(|(_, layer)| layer).collect()
}

/// Adds a settings-file slot unless the list has it already: a name turned off, a meta layer of
/// that name, or the same library under that name (a layer of the same name from another library
/// is a different layer: the file may list both).
fn push_unless_present(list: &mut Vec<Slot>, slot: Slot) {
    let present = list.iter().find(|(name, _)| *name == slot.0).is_some_and(|(_, there)| match (there, &slot.1) {
        (None, _) | (_, None) => true,
        (Some(there), Some(new)) => new.is_meta() || there.library_path == new.library_path,
    });
    if !present {
        list.push(slot);
    }
}

/// The layers named by settings-file entries, in order. A manifest that cannot be read, or that
/// has no layer of the name the entry gives, is logged and skipped.
fn settings_slots(entries: &[LayerEntry]) -> Vec<Slot> {
    let mut slots = Vec::with_capacity(entries.len());
    for entry in entries {
        let LayerEntry::Named { name, path, control, treat_as_implicit_manifest } = entry else { continue };
        if *control == Control::Off {
            plan::record(|p| p.layer(name, path, *treat_as_implicit_manifest, Decision::Off, "turned off by the loader settings file"));
            slots.push((name.clone(), None));
            continue;
        }
        if !path.ends_with(".json") {
            log!(Level::WarnLayer, "loader settings file: layer {name}: path {path} is not a .json manifest; skipped");
            continue;
        }
        let layers = match parse(OsStr::new(path), path, *treat_as_implicit_manifest) {
            Ok(file) => {
                for (level, warning) in &file.warnings {
                    log::log(*level, warning);
                }
                file.layers
            }
            Err(why) => {
                log!(Level::WarnLayer, "loader settings file: layer {name}: manifest {why}; skipped");
                continue;
            }
        };
        let before = slots.len();
        for mut layer in layers.into_iter().filter(|l| l.name == *name) {
            plan::record(|p| p.layer_found(&layer.name, &layer.manifest_path, layer.implicit));
            layer.settings_control = Some(*control);
            slots.push((name.clone(), Some(layer)));
        }
        if slots.len() == before {
            log!(Level::WarnLayer, "loader settings file: layer {name}: not in its manifest {path}; skipped");
        }
    }
    slots
}

/// Keeps one override layer: the first whose `app_keys` name this executable, else the first
/// without `app_keys` (the global one); the others are not for this process, and are neither used
/// nor listed (the Khronos loader's rules and words).
fn keep_one_override_layer(layers: Vec<LayerManifest>) -> Vec<LayerManifest> {
    let is_override = |l: &LayerManifest| l.name == OVERRIDE_LAYER_NAME;
    if !layers.iter().any(is_override) {
        return layers;
    }
    let exe = executable_path().unwrap_or_default();
    let for_this_app = |l: &LayerManifest| l.app_keys.contains(&exe);
    let chosen = layers.iter().position(|l| is_override(l) && for_this_app(l))
        .or_else(|| layers.iter().position(|l| is_override(l) && l.app_keys.is_empty()));
    for l in layers.iter().filter(|l| is_override(l) && !l.app_keys.is_empty() && !for_this_app(l)) {
        log!(Level::InfoLayer, "--Override layer found but not used because app '{exe}' is not in 'app_keys' list! ({})", l.manifest_path);
    }
    match chosen.map(|i| layers[i].app_keys.is_empty()) {
        Some(false) => log!(Level::InfoLayer, "Using the override layer for app key {exe}"),
        Some(true) => log::log(Level::InfoLayer, "Using the global override layer"),
        None => {}
    }
    layers.into_iter().enumerate().filter(|(i, l)| !is_override(l) || chosen == Some(*i)).map(|(_, l)| l).collect()
}

fn copy_str(dst: &mut [c_char], src: &str) {
    let room = dst.len() - 1; // the last byte stays NUL
    for (d, &s) in dst.iter_mut().take(room).zip(src.as_bytes()) {
        *d = s as c_char;
    }
}

/// A layer as `vkEnumerate*LayerProperties` reports it.
pub fn properties(layer: &LayerManifest) -> VkLayerProperties {
    let mut p = VkLayerProperties {
        specVersion: layer.api_version,
        implementationVersion: layer.implementation_version,
        ..Default::default()
    };
    copy_str(&mut p.layerName, &layer.name);
    copy_str(&mut p.description, &layer.description);
    p
}
