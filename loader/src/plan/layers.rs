//! Which layers an instance gets, in which order, and why: a pure function of the layer catalog,
//! the environment (passed in as a lookup, so the rules are unit-tested) and the application's
//! `ppEnabledLayerNames`.
//!
//! Order, top of the chain first: implicit layers (discovery order; enable/disable environment),
//! `VK_INSTANCE_LAYERS` (its order), `VK_LOADER_LAYERS_ENABLE` (discovery order), then
//! `ppEnabledLayerNames` (its order). A layer already in the list is not added again. Meta layers
//! are replaced in place by their components. `VK_LOADER_LAYERS_DISABLE` (name filters, `~all~`,
//! `~implicit~`, `~explicit~`) removes layers from the catalog (see [`remove_disabled`]) and from
//! every source unless `VK_LOADER_LAYERS_ALLOW` matches them; `VK_LOADER_LAYERS_ENABLE` wins over
//! both. The override layer's `blacklisted_layers` are removed from the catalog before any of this.

use crate::debug::log::Level;
use crate::manifest::layer::{LayerManifest, OVERRIDE_LAYER_NAME};
use crate::plan::name_filter::{self, NameFilter};
use crate::plan::{self, Decision};
use crate::reference::variables::{VK_INSTANCE_LAYERS, VK_LOADER_LAYERS_ALLOW, VK_LOADER_LAYERS_DISABLE, VK_LOADER_LAYERS_ENABLE};

/// Why a layer is in the chain (printed with `VK_LOADER_DEBUG=layer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// An implicit layer, on by default or through its `enable_environment`.
    Implicit,
    /// Named in `VK_INSTANCE_LAYERS`.
    InstanceLayersEnv,
    /// Matched by this `VK_LOADER_LAYERS_ENABLE` pattern.
    LoaderLayersEnable(String),
    /// In the application's `ppEnabledLayerNames`.
    Application,
    /// A component of this meta layer, itself in the chain for the inner reason.
    Component(String, Box<Reason>),
    /// Turned `on` by the loader settings file.
    SettingsFile,
}

impl Reason {
    /// Whether the application or the user asked for the layer by name (its failure to load is an
    /// error), as opposed to an implicit layer (skipped when it fails).
    pub fn is_requested(&self) -> bool {
        match self {
            Reason::Implicit => false,
            Reason::Component(_, inner) => inner.is_requested(),
            _ => true,
        }
    }
}

impl Reason {
    /// Whether a failure to load the layer fails `vkCreateInstance`: only for a layer the
    /// application names in `ppEnabledLayerNames`. A layer the environment, the settings file
    /// or a meta layer adds is skipped with a log line, as the Khronos loader does (one stale
    /// `VK_INSTANCE_LAYERS` must not stop every Vulkan program of that user).
    pub fn is_required(&self) -> bool {
        matches!(self, Reason::Application)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Implicit => f.write_str("implicit layer"),
            Reason::InstanceLayersEnv => f.write_str("named in VK_INSTANCE_LAYERS"),
            Reason::LoaderLayersEnable(p) => write!(f, "matched by VK_LOADER_LAYERS_ENABLE pattern \"{p}\""),
            Reason::Application => f.write_str("requested by the application (ppEnabledLayerNames)"),
            Reason::Component(meta, inner) => write!(f, "component of meta layer {meta} ({inner})"),
            Reason::SettingsFile => f.write_str("turned on by the loader settings file"),
        }
    }
}

/// The `VK_LOADER_LAYERS_ENABLE` / `_DISABLE` / `_ALLOW` filters, read as the Khronos loader
/// reads them (see `name_filter`: entries taken as written, not trimmed).
#[derive(Debug, Default)]
pub struct Filters {
    enable: Vec<NameFilter>,
    disable: Vec<NameFilter>,
    disable_all: bool,
    disable_implicit: bool,
    disable_explicit: bool,
    allow: Vec<NameFilter>,
}

/// Whether a layer name passes a filter (names compare ignoring case, as with the Khronos loader).
fn name_matches(filter: &NameFilter, name: &str) -> bool {
    filter.matches(name)
}

/// The filters of `list`, saying when entries past the sixteenth are left out.
fn patterns(list: Option<String>, log: &mut Vec<(Level, String)>, var: &str) -> Vec<NameFilter> {
    let Some(list) = list else { return Vec::new() };
    let (filters, left_out) = name_filter::parse_list(&list);
    if left_out > 0 {
        log.push((Level::WarnLayer, format!("{var}: only the first {} entries are read, as by the Khronos loader: {left_out} left out", name_filter::MAX_FILTERS)));
    }
    filters
}

impl Filters {
    pub fn from_env(getenv: &dyn Fn(&str) -> Option<String>, log: &mut Vec<(Level, String)>) -> Filters {
        let mut filters = Filters {
            enable: patterns(getenv(VK_LOADER_LAYERS_ENABLE.name), log, VK_LOADER_LAYERS_ENABLE.name),
            allow: patterns(getenv(VK_LOADER_LAYERS_ALLOW.name), log, VK_LOADER_LAYERS_ALLOW.name),
            ..Filters::default()
        };
        let disable = getenv(VK_LOADER_LAYERS_DISABLE.name).unwrap_or_default();
        // The special words set switches and are not counted among the sixteen filters
        // (`parse_layers_disable_filter_environment_var`); a `~word~` it does not know is ignored.
        let mut rest = Vec::new();
        for word in name_filter::entries(&disable) {
            if !name_filter::is_special(word) {
                rest.push(word);
                continue;
            }
            match word.to_ascii_lowercase().as_str() {
                "~all~" | "*" | "**" => filters.disable_all = true,
                "~implicit~" => filters.disable_implicit = true,
                "~explicit~" => filters.disable_explicit = true,
                _ => {}
            }
        }
        filters.disable = patterns(Some(rest.join(",")), log, VK_LOADER_LAYERS_DISABLE.name);
        filters
    }

    /// The `VK_LOADER_LAYERS_ENABLE` pattern matching `name`, if any.
    fn enabled_by(&self, name: &str) -> Option<&NameFilter> {
        self.enable.iter().find(|p| name_matches(p, name))
    }

    /// Why a layer the settings file leaves on `auto` is filtered out, or `None` if it may be
    /// used. The Khronos loader's rule for that case: `~all~`, `~implicit~` (which then applies to
    /// every such layer) and the name patterns, unless `VK_LOADER_LAYERS_ALLOW` matches; checked
    /// before `VK_LOADER_LAYERS_ENABLE`.
    fn disabled_under_settings(&self, layer: &LayerManifest) -> Option<String> {
        if self.allow.iter().any(|p| name_matches(p, &layer.name)) {
            return None;
        }
        let matched = self.disable.iter().any(|p| name_matches(p, &layer.name));
        // The Khronos loader's words.
        (self.disable_all || self.disable_implicit || matched).then(|| {
            format!("Layer \"{}\" forced disabled because name matches filter of env var 'VK_LOADER_LAYERS_DISABLE'.", layer.name)
        })
    }

    /// Why the layer is filtered out, or `None` if it may be used.
    fn disabled(&self, layer: &LayerManifest) -> Option<String> {
        if self.enabled_by(&layer.name).is_some() || self.allow.iter().any(|p| name_matches(p, &layer.name)) {
            return None;
        }
        let by_kind = if layer.implicit { self.disable_implicit } else { self.disable_explicit };
        let matched = self.disable.iter().find(|p| name_matches(p, &layer.name));
        if self.disable_all || by_kind || matched.is_some() {
            let what = match matched {
                Some(p) => format!("pattern \"{p}\""),
                None if self.disable_all => "~all~".into(),
                None if layer.implicit => "~implicit~".into(),
                None => "~explicit~".into(),
            };
            return Some(format!("disabled by VK_LOADER_LAYERS_DISABLE ({what})"));
        }
        None
    }
}

/// The catalog without the layers `VK_LOADER_LAYERS_DISABLE` turns off (unless
/// `VK_LOADER_LAYERS_ALLOW` or `VK_LOADER_LAYERS_ENABLE` names them): as with the Khronos loader,
/// such a layer is not listed, and asking for it by name finds nothing. Run after
/// [`validate_catalog`]: a meta layer stays valid without its disabled components.
pub fn remove_disabled(catalog: Vec<LayerManifest>, getenv: &dyn Fn(&str) -> Option<String>) -> (Vec<LayerManifest>, Vec<(Level, String)>) {
    if getenv(VK_LOADER_LAYERS_DISABLE.name).is_none() {
        return (catalog, Vec::new());
    }
    // Bad patterns are reported when the layers are activated.
    let filters = Filters::from_env(getenv, &mut Vec::new());
    let mut log = Vec::new();
    let kept = catalog
        .into_iter()
        .filter(|layer| {
            let disabled = filters.disabled(layer).is_some();
            if disabled {
                let line = format!(
                    "Layer \"{}\" forced disabled because name matches filter of env var 'VK_LOADER_LAYERS_DISABLE'.",
                    layer.name
                );
                record(layer, Decision::Off, &line);
                log.push((Level::WarnLayer, line));
            }
            !disabled
        })
        .collect();
    (kept, log)
}

/// Keeps the first layer of each name, drops invalid meta layers (missing components, cycles,
/// components with an older API version) and, when the override layer is valid, the layers of
/// `blacklist`; returns the log of what was checked and dropped, in the Khronos loader's words.
pub fn validate_catalog(layers: Vec<LayerManifest>, blacklist: &[String]) -> (Vec<LayerManifest>, Vec<(Level, String)>) {
    let mut log = Vec::new();
    let mut kept: Vec<LayerManifest> = Vec::with_capacity(layers.len());
    for layer in layers {
        if let Some(first) = kept.iter().find(|k| k.name == layer.name) {
            record(&layer, Decision::Skipped, &format!("a layer of this name was found first in {}", first.manifest_path));
            // The Khronos loader's words (it removes duplicates from enumeration since 1.4.3xx).
            let line = format!(
                "Removing layer {} ({}) because it is a duplicate of {} ({})",
                layer.name, layer.manifest_path, first.name, first.manifest_path
            );
            log.push((Level::Warn, line));
        } else {
            kept.push(layer);
        }
    }
    // One pass, as the Khronos loader does: checking a meta layer checks the meta layers it names.
    let mut i = 0;
    while i < kept.len() {
        if !kept[i].is_meta() {
            i += 1;
            continue;
        }
        if verify_meta(&kept, i, &mut vec![false; kept.len()], &mut log) {
            log_component_extensions(&kept, &kept[i], &mut log);
            i += 1;
            continue;
        }
        let l = kept.remove(i);
        let why = log.iter().rev().find(|(level, _)| *level == Level::Warn).map_or("", |(_, line)| line.as_str());
        record(&l, Decision::Rejected, &format!("invalid meta layer: {why}"));
        log.push((Level::Debug, format!("Removing meta-layer {} from instance layer list since it appears invalid.", l.name)));
    }
    if kept.iter().any(|l| l.name == OVERRIDE_LAYER_NAME) {
        kept.retain(|l| {
            let blocked = l.name != OVERRIDE_LAYER_NAME && blacklist.contains(&l.name);
            if blocked {
                record(l, Decision::Overridden, &format!("in the blacklisted_layers of the override layer {OVERRIDE_LAYER_NAME}"));
                log.push((
                    Level::Debug,
                    format!(
                        "loader_remove_layers_in_blacklist: Override layer is active and layer {} is in the blacklist inside of it. \
                         Removing that layer from current layer list.",
                        l.name
                    ),
                ));
            }
            !blocked
        });
    }
    (kept, log)
}

/// The extensions a valid meta layer offers through its components (see `layer_extensions`),
/// logged in the Khronos loader's words.
fn log_component_extensions(catalog: &[LayerManifest], meta: &LayerManifest, log: &mut Vec<(Level, String)>) {
    for component in meta.component_layers.iter().filter_map(|name| catalog.iter().find(|l| &l.name == name)) {
        let kinds = [("instance", &component.instance_extensions), ("device", &component.device_extensions)];
        for (kind, extensions) in kinds {
            for e in extensions {
                let line = format!("Meta-layer {} component layer {} adding {kind} extension {}", meta.name, component.name, e.name);
                log.push((Level::Debug, line));
            }
        }
    }
}

/// Whether the meta layer `catalog[index]` can be used: every component there, none older than
/// it, none itself, no meta layer named twice on one path (`checked`). Logs why not, and the meta
/// layers it contains, as the Khronos loader does (scripts search for these lines).
fn verify_meta(catalog: &[LayerManifest], index: usize, checked: &mut [bool], log: &mut Vec<(Level, String)>) -> bool {
    const CHECK: &str = "verify_meta_layer_component_layers";
    let meta = &catalog[index];
    checked[index] = true;
    let version = |v: u32| vk_generated::api_version_major_minor(v);
    for (at, name) in meta.component_layers.iter().enumerate() {
        let Some(ci) = catalog.iter().position(|l| &l.name == name) else {
            log.push((Level::Warn, format!("{CHECK}: Meta-layer {} can't find component layer {name} at index {at}.  Skipping this layer.", meta.name)));
            return false;
        };
        let component = &catalog[ci];
        if version(component.api_version) < version(meta.api_version) {
            let ((a, b), (c, d)) = (version(meta.api_version), version(component.api_version));
            log.push((
                Level::Warn,
                format!("{CHECK}: Meta-layer uses API version {a}.{b}, but component layer {at} has API version {c}.{d} that is lower.  Skipping this layer."),
            ));
            return false;
        }
        if component.name == meta.name {
            log.push((Level::Warn, format!("{CHECK}: Meta-layer {} lists itself in its component layer list at index {at}.  Skipping this layer.", meta.name)));
            return false;
        }
        if !component.is_meta() {
            continue;
        }
        if checked[ci] {
            log.push((
                Level::Warn,
                format!("{CHECK}: Recursive dependency between Meta-layer {} and  Meta-layer {name}.  Skipping this layer.", meta.name),
            ));
            return false;
        }
        log.push((Level::Info, format!("{CHECK}: Adding meta-layer {} which also contains meta-layer {name}", meta.name)));
        if !verify_meta(catalog, ci, checked, log) {
            log.push((Level::Warn, format!("Meta-layer {} component layer {name} can not find all component layers.  Skipping this layer.", meta.name)));
            return false;
        }
    }
    let count = meta.component_layers.len();
    log.push((Level::InfoLayer, format!("Meta-layer \"{}\" all {count} component layers appear to be valid.", meta.name)));
    for (at, name) in meta.component_layers.iter().enumerate() {
        log.push((Level::Layer, format!("  [{at}] {name}")));
    }
    true
}

/// Whether an implicit layer is on: `disable_environment` set turns it off, whatever else says
/// (as with the Khronos loader); else `VK_LOADER_LAYERS_ENABLE` turns it on; else an
/// `enable_environment` must hold the given value.
fn implicit_on(layer: &LayerManifest, filters: &Filters, getenv: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    if let Some(d) = &layer.disable_environment {
        if getenv(&d.var).is_some() {
            return Err(format!("disabled by its disable_environment {}", d.var));
        }
    }
    if filters.enabled_by(&layer.name).is_some() {
        return Ok(());
    }
    enable_environment_met(layer, getenv)
}

/// Whether an implicit layer's `enable_environment`, if it has one, holds its value.
fn enable_environment_met(layer: &LayerManifest, getenv: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
    if let Some(e) = &layer.enable_environment {
        if getenv(&e.var).as_deref() != Some(e.value.as_str()) {
            return Err(format!("off: its enable_environment {}={} is not set", e.var, e.value));
        }
    }
    Ok(())
}

/// Whether the override layer applies to this executable (`app_keys` empty: to all).
pub fn override_applies(layer: &LayerManifest, exe: Option<&str>) -> bool {
    layer.app_keys.is_empty() || exe.is_some_and(|exe| layer.app_keys.iter().any(|k| k == exe))
}

/// The chosen layers: catalog indices with the reason, top of the chain first.
#[derive(Debug, Default)]
pub struct Activation {
    pub layers: Vec<(usize, Reason)>,
    /// Layers left out on purpose and why (logged with `VK_LOADER_DEBUG=layer`), and the
    /// warnings about the choice the Khronos loader gives, each at its level.
    pub log: Vec<(Level, String)>,
    /// The meta layers that are on (catalog indices), each with the number of `layers` before it
    /// in the list `vkEnumerateDeviceLayerProperties` gives: a meta layer comes after its
    /// components, as with the Khronos loader.
    pub meta_layers: Vec<(usize, usize)>,
    /// The meta layers being expanded (settings-file meta layers are not validated: they may
    /// name each other in a cycle).
    expanding: Vec<usize>,
}

impl Activation {
    /// Leaves a layer out of the chain, saying why.
    fn leave_out(&mut self, layer: &LayerManifest, why: String) {
        record(layer, Decision::Off, &why);
        self.log.push((Level::Layer, format!("{}: {why}", layer.name)));
    }
}

/// Records a decision about a layer in the plan being recorded, if one is.
fn record(layer: &LayerManifest, decision: Decision, reason: &str) {
    plan::record(|p| p.layer(&layer.name, &layer.manifest_path, layer.implicit, decision, reason));
}

/// A layer the application requested that is not there.
#[derive(Debug, PartialEq, Eq)]
pub struct Missing(pub String);

/// The process environment as activation reads it, as the Khronos loader does: the loader's
/// variables as their declarations say (the `VK_LOADER_LAYERS_*` filters ignored by elevated
/// processes, `VK_INSTANCE_LAYERS` read by them); the layers' own enable and disable variables,
/// which only choose among the layers the secure search found, through `getenv`.
pub fn process_env(name: &str) -> Option<String> {
    match crate::reference::variable(name) {
        Some(declared) => declared.get(),
        None => crate::platform::manifest_variable(name),
    }
}

/// Chooses the layers. `catalog` is validated (see [`validate_catalog`]); `app` is
/// `ppEnabledLayerNames`; `exe` the executable's path for the override layer's `app_keys`.
pub fn activate(
    catalog: &[LayerManifest],
    app: &[&str],
    getenv: &dyn Fn(&str) -> Option<String>,
    exe: Option<&str>,
) -> Result<Activation, Missing> {
    let mut out = Activation::default();
    let filters = Filters::from_env(getenv, &mut out.log);
    if catalog.iter().any(|l| l.settings_control.is_some()) {
        return activate_by_settings(catalog, app, getenv, &filters, out);
    }
    let find = |name: &str| catalog.iter().position(|l| l.name == name);
    let instance_layers = getenv(VK_INSTANCE_LAYERS.name);
    let instance_layer_names: Vec<&str> =
        // Names as written, as the Khronos loader splits the list (`loader_get_next_path`): not trimmed.
        instance_layers.as_deref().map(|list| list.split(':').filter(|n| !n.is_empty()).collect()).unwrap_or_default();

    for (i, layer) in catalog.iter().enumerate().filter(|(_, l)| l.implicit) {
        if instance_layer_names.contains(&layer.name.as_str()) {
            continue; // in the chain where VK_INSTANCE_LAYERS puts it, as with the Khronos loader
        }
        if layer.name == OVERRIDE_LAYER_NAME && !override_applies(layer, exe) {
            out.leave_out(layer, "not for this executable (app_keys)".into());
            continue;
        }
        match implicit_on(layer, &filters, getenv) {
            Ok(()) => {
                if filters.enabled_by(&layer.name).is_some() && enable_environment_met(layer, getenv).is_err() {
                    // The Khronos loader's words.
                    let line = format!("Implicit layer \"{}\" forced enabled due to env var 'VK_LOADER_LAYERS_ENABLE'.", layer.name);
                    out.log.push((Level::WarnLayer, line));
                }
                add(catalog, &filters, &mut out, i, Reason::Implicit)
            }
            Err(why) => out.leave_out(layer, why),
        }
    }
    for &name in &instance_layer_names {
        match find(name) {
            Some(i) => add(catalog, &filters, &mut out, i, Reason::InstanceLayersEnv),
            None => {
                // The Khronos loader's words.
                out.log.push((Level::ErrorLayer, format!("Layer \"{name}\" was not found but was requested by env var VK_INSTANCE_LAYERS!")));
                record_not_found(name, "named in VK_INSTANCE_LAYERS", catalog);
            }
        }
    }
    for (i, layer) in catalog.iter().enumerate().filter(|(_, l)| !l.implicit) {
        if let Some(p) = filters.enabled_by(&layer.name) {
            add(catalog, &filters, &mut out, i, Reason::LoaderLayersEnable(p.to_string()));
        }
    }
    for pattern in filters.enable.iter().filter(|p| !catalog.iter().any(|l| name_matches(p, &l.name))) {
        record_not_found(&pattern.to_string(), "a VK_LOADER_LAYERS_ENABLE pattern", catalog);
    }
    for (index, name) in app.iter().enumerate() {
        match find(name) {
            Some(i) => add(catalog, &filters, &mut out, i, Reason::Application),
            None => {
                record_not_found(name, "requested by the application", catalog);
                return Err(missing_app_layer(index, format!("layer {name} requested by the application was not found")));
            }
        }
    }
    Ok(out)
}

/// Records in the explanation a name that matches no layer, how it was named (`named in
/// VK_INSTANCE_LAYERS`), and the layer it may be a misspelling of.
fn record_not_found(name: &str, how: &str, catalog: &[LayerManifest]) {
    plan::record(|p| {
        let near = catalog.iter().map(|l| &l.name).find(|known| misspelt(name, known));
        let hint = near.map(|known| format!(" (did you mean {known}?)")).unwrap_or_default();
        p.layer(name, "", false, Decision::Rejected, format!("{how}, but no layer has this name{hint}"))
    });
}

/// Whether `name` is `known` misspelt: equal ignoring case, or at most two letters added, left
/// out or changed.
fn misspelt(name: &str, known: &str) -> bool {
    if name.eq_ignore_ascii_case(known) {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (name.chars().collect(), known.chars().collect());
    // Levenshtein distance, one row at a time.
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let replaced = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = replaced.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()] <= 2
}

/// The application's layer `index` (in `ppEnabledLayerNames`) is not there: said at once in the
/// Khronos loader's words (the caller logs `why` after it and fails the call, with no activation
/// whose log could carry the line).
fn missing_app_layer(index: usize, why: String) -> Missing {
    crate::debug::log::log(Level::Error, &format!("loader_validate_layers: Layer {index} does not exist in the list of available layers"));
    Missing(why)
}

/// Chooses the layers when a loader settings file decides them (see `discover::layers`): the chain
/// follows the catalog's order, which is the file's. A layer the file turns `on` is in the chain
/// whatever the filters say; one it turns `off` is not in the catalog; the others are enabled by
/// the usual sources (`VK_LOADER_LAYERS_ENABLE`, `VK_INSTANCE_LAYERS`, the application, an
/// implicit layer's own switches) unless `VK_LOADER_LAYERS_DISABLE` removes them.
fn activate_by_settings(
    catalog: &[LayerManifest],
    app: &[&str],
    getenv: &dyn Fn(&str) -> Option<String>,
    filters: &Filters,
    mut out: Activation,
) -> Result<Activation, Missing> {
    if let Some((index, name)) = app.iter().enumerate().find(|(_, name)| !catalog.iter().any(|l| l.name == **name)) {
        let why = format!("layer {name} requested by the application was not found (or the loader settings file turns it off)");
        return Err(missing_app_layer(index, why));
    }
    let instance_layers = getenv(VK_INSTANCE_LAYERS.name).unwrap_or_default();
    for (i, layer) in catalog.iter().enumerate() {
        let implicitly_on = || layer.implicit && implicit_on(layer, filters, getenv).is_ok();
        let reason = if layer.settings_control == Some(crate::manifest::settings::Control::On) {
            // An implicit layer that is on anyway stays one (its pre-instance functions run, a
            // failure to load skips it), as with the Khronos loader.
            if implicitly_on() { Reason::Implicit } else { Reason::SettingsFile }
        } else if let Some(why) = filters.disabled_under_settings(layer) {
            record(layer, Decision::Off, &why);
            out.log.push((Level::WarnLayer, why));
            continue;
        } else if let Some(p) = filters.enabled_by(&layer.name) {
            Reason::LoaderLayersEnable(p.to_string())
        } else if instance_layers.split(':').any(|n| n == layer.name) {
            Reason::InstanceLayersEnv
        } else if app.contains(&layer.name.as_str()) {
            Reason::Application
        } else if implicitly_on() {
            Reason::Implicit
        } else {
            continue;
        };
        add_layer(catalog, None, &mut out, i, reason);
    }
    Ok(out)
}

/// Adds a layer (a meta layer: its components in place) unless filtered out or already there.
fn add(catalog: &[LayerManifest], filters: &Filters, out: &mut Activation, index: usize, reason: Reason) {
    add_layer(catalog, Some(filters), out, index, reason)
}

/// `add`, with the filters applied only when given.
fn add_layer(catalog: &[LayerManifest], filters: Option<&Filters>, out: &mut Activation, index: usize, reason: Reason) {
    let layer = &catalog[index];
    if let Some(why) = filters.and_then(|f| f.disabled(layer)) {
        out.leave_out(layer, why);
        return;
    }
    if layer.is_meta() {
        if out.expanding.contains(&index) {
            // The Khronos loader's words.
            out.log.push((
                Level::WarnLayer,
                format!(
                    "loader_add_meta_layer: Meta-layer {} recursively references itself through its component layers. Skipping the recursive reference.",
                    layer.name
                ),
            ));
            return;
        }
        out.expanding.push(index);
        for c in &layer.component_layers {
            // Validated catalog: every component exists and there is no cycle.
            if let Some(ci) = catalog.iter().position(|l| &l.name == c) {
                add_layer(catalog, filters, out, ci, Reason::Component(layer.name.clone(), Box::new(reason.clone())));
            }
        }
        out.expanding.pop();
        if !out.meta_layers.iter().any(|(_, i)| *i == index) {
            out.meta_layers.push((out.layers.len(), index));
        }
        return;
    }
    if layer.library_path.is_none() {
        return; // an override layer with nothing but a blacklist or search paths
    }
    if out.layers.iter().any(|(i, _)| *i == index) {
        out.log.push((Level::Layer, format!("{}: already enabled; {reason} ignored", layer.name)));
        return;
    }
    out.layers.push((index, reason));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::layer::EnvCondition;
    use std::collections::HashMap;

    /// An environment as pairs.
    type Env<'a> = &'a [(&'a str, &'a str)];

    #[test]
    fn only_the_applications_layers_must_load() {
        assert!(Reason::Application.is_required());
        for skipped in [
            Reason::Implicit,
            Reason::InstanceLayersEnv,
            Reason::LoaderLayersEnable("*".into()),
            Reason::SettingsFile,
            Reason::Component("VK_LAYER_meta".into(), Box::new(Reason::Application)),
        ] {
            assert!(!skipped.is_required(), "{skipped}");
        }
    }

    fn layer(name: &str, implicit: bool) -> LayerManifest {
        LayerManifest {
            manifest_path: format!("/m/{name}.json"),
            implicit,
            name: name.into(),
            library_path: Some(format!("lib{name}.so")),
            component_layers: Vec::new(),
            api_version: vk_generated::make_api_version(0, 1, 3, 0),
            implementation_version: 1,
            description: String::new(),
            functions: Default::default(),
            instance_extensions: Vec::new(),
            device_extensions: Vec::new(),
            enable_environment: None,
            disable_environment: implicit.then(|| EnvCondition { var: format!("DISABLE_{name}"), value: "1".into() }),
            pre_instance_functions: Default::default(),
            library_arch: None,
            app_keys: Vec::new(),
            blacklisted_layers: Vec::new(),
            override_paths: Vec::new(),
            settings_control: None,
        }
    }

    fn meta(name: &str, implicit: bool, components: &[&str]) -> LayerManifest {
        let mut m = layer(name, implicit);
        m.library_path = None;
        m.component_layers = components.iter().map(|c| c.to_string()).collect();
        m
    }

    /// Runs `activate` with an environment given as pairs; returns the chain's names or the error.
    fn run(catalog: &[LayerManifest], app: &[&str], env: &[(&str, &str)]) -> Result<Vec<String>, Missing> {
        let env: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let getenv = |k: &str| env.get(k).cloned();
        activate(catalog, app, &getenv, Some("/usr/bin/app"))
            .map(|a| a.layers.iter().map(|(i, _)| catalog[*i].name.clone()).collect())
    }

    #[test]
    fn sources_in_order_duplicates_once() {
        let cat = vec![layer("I1", true), layer("E1", false), layer("E2", false), layer("E3", false), layer("I2", true)];
        let got = run(&cat, &["E3", "E1", "I1"], &[("VK_INSTANCE_LAYERS", "E2:E1"), ("VK_LOADER_LAYERS_ENABLE", "E3")]).unwrap();
        assert_eq!(got, ["I1", "I2", "E2", "E1", "E3"]);
    }

    #[test]
    fn implicit_layer_named_in_vk_instance_layers_takes_that_place() {
        let cat = vec![layer("I1", true), layer("I2", true), layer("E1", false)];
        assert_eq!(run(&cat, &[], &[("VK_INSTANCE_LAYERS", "E1")]).unwrap(), ["I1", "I2", "E1"]);
        assert_eq!(run(&cat, &[], &[("VK_INSTANCE_LAYERS", "E1:I1")]).unwrap(), ["I2", "E1", "I1"]);
    }

    #[test]
    fn a_misspelt_name_is_told_from_another() {
        assert!(misspelt("VK_LAYER_KHRONOS_validaton", "VK_LAYER_KHRONOS_validation"));
        assert!(misspelt("vk_layer_khronos_validation", "VK_LAYER_KHRONOS_validation"));
        assert!(misspelt("VK_LAYER_KHRONOS_valdiation", "VK_LAYER_KHRONOS_validation"));
        assert!(!misspelt("VK_LAYER_MESA_overlay", "VK_LAYER_KHRONOS_validation"));
        assert!(!misspelt("VK_LAYER_KHRONOS_synchronization2", "VK_LAYER_KHRONOS_validation"));
    }

    #[test]
    fn missing_app_layer_is_an_error_missing_env_layer_is_not() {
        let cat = vec![layer("E1", false)];
        assert!(run(&cat, &["NOPE"], &[]).unwrap_err().0.contains("NOPE"));
        assert_eq!(run(&cat, &[], &[("VK_INSTANCE_LAYERS", "NOPE:E1")]).unwrap(), ["E1"]);
    }

    #[test]
    fn implicit_enable_and_disable_environment() {
        let mut gated = layer("G", true);
        gated.enable_environment = Some(EnvCondition { var: "ENABLE_G".into(), value: "yes".into() });
        let cat = vec![gated, layer("I", true)];
        assert_eq!(run(&cat, &[], &[]).unwrap(), ["I"]);
        assert_eq!(run(&cat, &[], &[("ENABLE_G", "no")]).unwrap(), ["I"]);
        assert_eq!(run(&cat, &[], &[("ENABLE_G", "yes")]).unwrap(), ["G", "I"]);
        assert_eq!(run(&cat, &[], &[("ENABLE_G", "yes"), ("DISABLE_G", "1"), ("DISABLE_I", "0")]).unwrap(), Vec::<String>::new());
        // VK_LOADER_LAYERS_ENABLE turns an implicit layer on whatever its enable_environment says,
        // but its disable_environment wins over everything (as with the Khronos loader).
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_ENABLE", "G")]).unwrap(), ["G", "I"]);
        assert_eq!(run(&cat, &[], &[("DISABLE_I", "1"), ("VK_LOADER_LAYERS_ENABLE", "*I")]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn disable_filters_and_allow() {
        let cat = vec![layer("VK_LAYER_imp", true), layer("VK_LAYER_a", false), layer("VK_LAYER_b", false)];
        let app = ["VK_LAYER_a", "VK_LAYER_b"];
        let all = ["VK_LAYER_imp", "VK_LAYER_a", "VK_LAYER_b"];
        let cases: &[(Env, &[&str])] = &[
            (&[], &all),
            (&[("VK_LOADER_LAYERS_DISABLE", "~all~")], &[]),
            (&[("VK_LOADER_LAYERS_DISABLE", "~implicit~")], &["VK_LAYER_a", "VK_LAYER_b"]),
            (&[("VK_LOADER_LAYERS_DISABLE", "~explicit~")], &["VK_LAYER_imp"]),
            (&[("VK_LOADER_LAYERS_DISABLE", "*_a")], &["VK_LAYER_imp", "VK_LAYER_b"]),
            (&[("VK_LOADER_LAYERS_DISABLE", "VK_LAYER_*,~implicit~")], &[]),
            (&[("VK_LOADER_LAYERS_DISABLE", "~all~"), ("VK_LOADER_LAYERS_ALLOW", "*_b")], &["VK_LAYER_b"]),
            (&[("VK_LOADER_LAYERS_DISABLE", "~all~"), ("VK_LOADER_LAYERS_ENABLE", "*_a")], &["VK_LAYER_a"]),
            // Filters match whatever the case; `~all~` is every layer in the enable and allow filters too.
            (&[("VK_LOADER_LAYERS_DISABLE", "*_A")], &["VK_LAYER_imp", "VK_LAYER_b"]),
            (&[("VK_LOADER_LAYERS_DISABLE", "~all~"), ("VK_LOADER_LAYERS_ALLOW", "~all~")], &all),
            (&[("VK_LOADER_LAYERS_DISABLE", "~all~"), ("VK_LOADER_LAYERS_ENABLE", "~all~")], &all),
        ];
        for (env, want) in cases {
            assert_eq!(run(&cat, &app, env).unwrap(), *want, "env {env:?}");
        }
    }

    #[test]
    fn lists_are_read_as_written_as_by_the_khronos_loader() {
        let cat = vec![layer("VK_LAYER_validation", false), layer("VK_LAYER_overlay", false), layer("VK_LAYER_imp", true)];
        // No entry is trimmed: " *overlay" (after the comma) is a whole name that matches nothing.
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_ENABLE", "*validation, *overlay")]).unwrap(), ["VK_LAYER_imp", "VK_LAYER_validation"]);
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_ENABLE", "*validation,*overlay")]).unwrap(), ["VK_LAYER_imp", "VK_LAYER_validation", "VK_LAYER_overlay"]);
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_DISABLE", "~all~, ~implicit~")]).unwrap(), Vec::<String>::new());
        assert_eq!(run(&cat, &["VK_LAYER_overlay"], &[("VK_LOADER_LAYERS_DISABLE", " ~implicit~")]).unwrap(), ["VK_LAYER_imp", "VK_LAYER_overlay"]);
        let (allow_spaced, allow) = ((" *imp", "*imp"), [("VK_LOADER_LAYERS_DISABLE", "~all~")]);
        assert_eq!(run(&cat, &[], &[allow[0], ("VK_LOADER_LAYERS_ALLOW", allow_spaced.0)]).unwrap(), Vec::<String>::new());
        assert_eq!(run(&cat, &[], &[allow[0], ("VK_LOADER_LAYERS_ALLOW", allow_spaced.1)]).unwrap(), ["VK_LAYER_imp"]);
        // VK_INSTANCE_LAYERS' names too (a colon list): " VK_LAYER_overlay" names no layer.
        assert_eq!(run(&cat, &[], &[("VK_INSTANCE_LAYERS", "VK_LAYER_validation: VK_LAYER_overlay")]).unwrap(), ["VK_LAYER_imp", "VK_LAYER_validation"]);
        // A star inside an entry is a plain character; `?` too.
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_ENABLE", "VK_*_overlay,VK_LAYER_validatio?")]).unwrap(), ["VK_LAYER_imp"]);
        // Only sixteen entries are read; the log says so.
        let many: Vec<String> = (0..16).map(|i| format!("VK_LAYER_none{i}")).chain(["VK_LAYER_overlay".to_string()]).collect();
        let many = many.join(",");
        assert_eq!(run(&cat, &[], &[("VK_LOADER_LAYERS_ENABLE", many.as_str())]).unwrap(), ["VK_LAYER_imp"]);
        let getenv = |k: &str| (k == "VK_LOADER_LAYERS_ENABLE").then(|| many.clone());
        let activation = activate(&cat, &[], &getenv, None).unwrap();
        assert!(activation.log.iter().any(|(level, l)| *level == Level::WarnLayer && l.contains("only the first 16 entries are read")), "{:?}", activation.log);
    }

    #[test]
    fn meta_layers_expand_in_place() {
        let cat = vec![layer("A", false), layer("B", false), layer("C", false), meta("M", false, &["B", "A"])];
        assert_eq!(run(&cat, &["C", "M", "A"], &[]).unwrap(), ["C", "B", "A"]);
        let reasons = {
            let getenv = |_: &str| None;
            activate(&cat, &["M"], &getenv, None).unwrap().layers
        };
        assert_eq!(reasons[0].1, Reason::Component("M".into(), Box::new(Reason::Application)));
        // Listed after its components (two layers before it), once.
        let getenv = |_: &str| None;
        assert_eq!(activate(&cat, &["C", "M", "M"], &getenv, None).unwrap().meta_layers, [(3, 3)]);
    }

    #[test]
    fn invalid_meta_layers_are_dropped_with_a_reason() {
        let mut old = layer("OLD", false);
        old.api_version = vk_generated::make_api_version(0, 1, 0, 0);
        let cat = vec![
            layer("A", false),
            meta("CYCLE1", false, &["A", "CYCLE2"]),
            meta("CYCLE2", false, &["CYCLE1"]),
            meta("MISSING", false, &["NOPE"]),
            meta("USES_MISSING", false, &["MISSING"]),
            old,
            meta("NEWER", false, &["OLD"]),
            meta("GOOD", false, &["A"]),
        ];
        let (kept, log) = validate_catalog(cat, &[]);
        let names: Vec<&str> = kept.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["A", "OLD", "GOOD"]);
        let log: Vec<String> = log.into_iter().map(|(_, line)| line).collect();
        let log = log.join("\n");
        for line in [
            "Adding meta-layer CYCLE1 which also contains meta-layer CYCLE2",
            "Recursive dependency between Meta-layer CYCLE2 and  Meta-layer CYCLE1.  Skipping this layer.",
            "Meta-layer CYCLE1 component layer CYCLE2 can not find all component layers.  Skipping this layer.",
            "Removing meta-layer CYCLE1 from instance layer list since it appears invalid.",
            "Meta-layer CYCLE2 can't find component layer CYCLE1 at index 0.  Skipping this layer.",
            "Meta-layer MISSING can't find component layer NOPE at index 0.  Skipping this layer.",
            "Meta-layer USES_MISSING can't find component layer MISSING at index 0.  Skipping this layer.",
            "Meta-layer uses API version 1.3, but component layer 0 has API version 1.0 that is lower.  Skipping this layer.",
            "Meta-layer \"GOOD\" all 1 component layers appear to be valid.",
        ] {
            assert!(log.contains(line), "{line}\nnot in\n{log}");
        }
    }

    #[test]
    fn first_of_a_name_wins_and_blacklist_removes() {
        let mut second = layer("A", false);
        second.manifest_path = "/other/A.json".into();
        let (kept, log) = validate_catalog(vec![layer("A", false), second, layer("B", false)], &["B".into()]);
        let names: Vec<&str> = kept.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["A", "B"], "no override layer, no blacklist");
        assert_eq!(kept[0].manifest_path, "/m/A.json");
        // Enumeration lists the name once; the Khronos loader's warning says which file went.
        assert_eq!(log.len(), 1);
        assert!(log[0].0 == Level::Warn && log[0].1 == "Removing layer A (/other/A.json) because it is a duplicate of A (/m/A.json)", "{}", log[0].1);
        let over = meta(OVERRIDE_LAYER_NAME, true, &["A"]);
        let (kept, log) = validate_catalog(vec![layer("A", false), over.clone(), layer("B", false)], &["B".into()]);
        assert_eq!(kept.len(), 2);
        assert!(log.iter().any(|(_, l)| l.contains("layer B is in the blacklist inside of it. Removing that layer")), "{:?}", log.iter().map(|(_, l)| l).collect::<Vec<_>>());
        // An invalid override layer blacklists nothing.
        let (kept, _) = validate_catalog(vec![meta(OVERRIDE_LAYER_NAME, true, &["NOPE"]), layer("B", false)], &["B".into()]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name, "B");
    }

    #[test]
    fn override_layer_components_and_app_keys() {
        let mut o = meta(OVERRIDE_LAYER_NAME, true, &["A"]);
        o.app_keys = vec!["/usr/bin/other".into()];
        let cat = vec![layer("A", false), o.clone()];
        assert_eq!(run(&cat, &[], &[]).unwrap(), Vec::<String>::new());
        o.app_keys = vec!["/usr/bin/app".into()];
        let cat = vec![layer("A", false), o];
        assert_eq!(run(&cat, &[], &[]).unwrap(), ["A"]);
    }

    /// Every source combined with every filter: a layer is in the chain exactly when some source
    /// names it and no filter removes it (ENABLE and ALLOW beating DISABLE).
    #[test]
    fn activation_matrix() {
        let cat = vec![layer("VK_LAYER_imp", true), layer("VK_LAYER_exp", false)];
        let sources: &[(&str, Env, &[&str])] = &[
            ("none", &[], &[]),
            ("instance_layers", &[("VK_INSTANCE_LAYERS", "VK_LAYER_exp")], &[]),
            ("enable", &[("VK_LOADER_LAYERS_ENABLE", "*exp")], &[]),
            ("app", &[], &["VK_LAYER_exp"]),
        ];
        let filters: &[(&str, Env)] = &[
            ("none", &[]),
            ("disable_all", &[("VK_LOADER_LAYERS_DISABLE", "~all~")]),
            ("disable_implicit", &[("VK_LOADER_LAYERS_DISABLE", "~implicit~")]),
            ("disable_explicit", &[("VK_LOADER_LAYERS_DISABLE", "~explicit~")]),
            ("disable_glob", &[("VK_LOADER_LAYERS_DISABLE", "VK_LAYER_e*")]),
            ("disable_all_allow", &[("VK_LOADER_LAYERS_DISABLE", "~all~"), ("VK_LOADER_LAYERS_ALLOW", "*exp")]),
            ("implicit_env_off", &[("DISABLE_VK_LAYER_imp", "1")]),
        ];
        for (sname, senv, app) in sources {
            for (fname, fenv) in filters {
                let env: Vec<(&str, &str)> = senv.iter().chain(fenv.iter()).copied().collect();
                let got = run(&cat, app, &env).unwrap();
                let imp_on = !matches!(*fname, "disable_all" | "disable_implicit" | "disable_all_allow" | "implicit_env_off");
                let exp_named = *sname != "none";
                let exp_on = exp_named
                    && (*sname == "enable" || !matches!(*fname, "disable_all" | "disable_explicit" | "disable_glob"));
                let mut want = Vec::new();
                if imp_on {
                    want.push("VK_LAYER_imp");
                }
                if exp_on {
                    want.push("VK_LAYER_exp");
                }
                assert_eq!(got, want, "source {sname}, filter {fname}");
            }
        }
    }
}
