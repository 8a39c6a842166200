//! The layers on this system: manifests read (never a library opened), bad ones logged and
//! skipped, names de-duplicated, meta layers validated, the override layer's blacklist and search
//! paths applied.

use std::cell::RefCell;
use std::ffi::c_char;

use vk_generated::types::VkLayerProperties;

use crate::discovery;
use crate::layer::validate_catalog;
use crate::layer_manifest::{self, LayerManifest, ParsedFile, OVERRIDE_LAYER_NAME};
use crate::log::{self, Level};
use crate::file_cache::ParseCache;

/// Layer manifests as last parsed, by path and kind (see file_cache): an unchanged file is not
/// read again, which makes instance creation with many manifests present cheap.
static PARSED: ParseCache<(String, bool), Result<ParsedFile, String>> = ParseCache::new();

/// A manifest file parsed, from the cache when the file is unchanged.
fn parse(path: &str, implicit: bool) -> Result<ParsedFile, String> {
    let parsed = PARSED
        .get(&(path.to_string(), implicit), path, |text| layer_manifest::parse_layers(text, path, implicit))
        .map_err(|e| format!("{path}: {e}"))?;
    (*parsed).clone()
}

/// Reads the manifests of one kind, in search order.
fn read(implicit: bool, override_paths: &[String]) -> Vec<LayerManifest> {
    let mut layers = Vec::new();
    for path in discovery::layer_manifests(implicit, override_paths) {
        match parse(&path, implicit) {
            Ok(file) => {
                for why in file.rejected {
                    log!(Level::Warn, "layer manifest {why}; layer skipped");
                }
                layers.extend(file.layers);
            }
            Err(why) => log!(Level::Warn, "layer manifest {why}; file skipped"),
        }
    }
    layers
}

/// What one API call has read so far: nothing yet, or the catalog and whether it includes the
/// explicit layers.
type Reading = Option<(bool, Vec<LayerManifest>)>;

thread_local! {
    /// The catalog read once for the API call under way (see `OneReading`), and whether it
    /// includes the explicit layers.
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// While alive, `load` on this thread reads the manifests once and answers later calls from that
/// reading: one API call (`vkEnumerateInstanceExtensionProperties` asks the pre-instance chain and
/// then the implicit layers' extensions) looks at the file system once.
pub struct OneReading(bool);

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
        OneReading(outermost)
    }
}

impl Drop for OneReading {
    fn drop(&mut self) {
        if self.0 {
            READING.with(|r| r.replace(None));
        }
    }
}

/// The layer catalog. Explicit manifests are read only when `with_explicit` (instance creation
/// without any layer named skips them) or when an implicit meta layer may need them.
pub fn load(with_explicit: bool) -> Vec<LayerManifest> {
    let remembered = READING.with(|r| match &*r.borrow() {
        Some(Some((explicit, catalog))) if *explicit || !with_explicit => Some(catalog.clone()),
        _ => None,
    });
    if let Some(catalog) = remembered {
        return catalog;
    }
    let catalog = read_catalog(with_explicit);
    READING.with(|r| {
        if let Some(slot) = r.borrow_mut().as_mut() {
            *slot = Some((with_explicit, catalog.clone()));
        }
    });
    catalog
}

fn read_catalog(with_explicit: bool) -> Vec<LayerManifest> {
    let implicit = read(true, &[]);
    let over = implicit
        .iter()
        .find(|l| l.name == OVERRIDE_LAYER_NAME && crate::layer::override_applies(l, executable_path().as_deref()));
    let (override_paths, blacklist) = match over {
        Some(o) => (o.override_paths.clone(), o.blacklisted_layers.clone()),
        None => (Vec::new(), Vec::new()),
    };
    let mut all = implicit;
    if with_explicit || all.iter().any(|l| l.is_meta()) {
        all.extend(read(false, &override_paths));
    } else {
        discovery::log_unread_explicit_layers(&override_paths);
    }
    let (catalog, dropped) = validate_catalog(all, &blacklist);
    for why in dropped {
        log::log(Level::Layer, &why);
    }
    catalog
}

/// The running executable's path, for the override layer's `app_keys`.
pub fn executable_path() -> Option<String> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: readlink into a buffer of the size given.
    let n = unsafe { libc::readlink(c"/proc/self/exe".as_ptr(), buf.as_mut_ptr() as *mut c_char, buf.len()) };
    (n > 0).then(|| String::from_utf8_lossy(&buf[..n as usize]).into_owned())
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
