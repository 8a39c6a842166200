//! Layer manifests (file_format_version 1.0.0 to 1.2.1): one `layer` object or a `layers` array.
//! Read as the Khronos loader reads them (`manifest::json`: cJSON's tolerances, the first of a key
//! given twice) and validated field by field as its `loader_add_layer_properties` and
//! `loader_read_layer_json` (1.4.360) do: a field of the wrong type is refused where it refuses
//! it and read as absent where it reads it so; every rejection names the file and the field. A
//! bad layer in a `layers` array is rejected alone; the others of the file are kept.

use crate::debug::log::Level;
use crate::manifest::driver::{self, parse_version, resolve_library};
use crate::manifest::json::{self, Json};

/// An extension a layer provides, with the entry points of a device extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerExtension {
    pub name: String,
    pub spec_version: u32,
    pub entrypoints: Vec<String>,
}

/// An environment variable and the value the manifest names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvCondition {
    pub var: String,
    pub value: String,
}

/// The names of a layer's entry points (`functions`), where they differ from the standard ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LayerFunctions {
    pub get_instance_proc_addr: Option<String>,
    pub get_device_proc_addr: Option<String>,
    pub negotiate: Option<String>,
}

/// An implicit layer's interceptors of the pre-instance commands (`pre_instance_functions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreInstanceFunctions {
    pub enumerate_instance_extension_properties: Option<String>,
    pub enumerate_instance_layer_properties: Option<String>,
    pub enumerate_instance_version: Option<String>,
}

/// One layer as its manifest describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerManifest {
    pub manifest_path: String,
    pub implicit: bool,
    pub name: String,
    /// Resolved for dlopen like a driver's; `None` for a meta layer.
    pub library_path: Option<String>,
    /// The layers a meta layer stands for, in order (empty for an ordinary layer).
    pub component_layers: Vec<String>,
    pub api_version: u32,
    pub implementation_version: u32,
    pub description: String,
    pub functions: LayerFunctions,
    pub instance_extensions: Vec<LayerExtension>,
    pub device_extensions: Vec<LayerExtension>,
    pub enable_environment: Option<EnvCondition>,
    pub disable_environment: Option<EnvCondition>,
    pub pre_instance_functions: PreInstanceFunctions,
    /// `32` or `64` where the manifest's `library_arch` starts so (`driver::library_arch`).
    pub library_arch: Option<String>,
    /// Override layer: the executables it applies to (all when empty).
    pub app_keys: Vec<String>,
    /// Override layer: layers that must not be loaded.
    pub blacklisted_layers: Vec<String>,
    /// Override layer: the only directories searched for explicit layers, when given.
    pub override_paths: Vec<String>,
    /// Set when a loader settings file decides the layers: what it says about this one (`Auto`
    /// for a layer it does not name). See `settings`.
    pub settings_control: Option<crate::manifest::settings::Control>,
}

impl LayerManifest {
    pub fn is_meta(&self) -> bool {
        !self.component_layers.is_empty()
    }
}

/// The name of the override meta layer (written by tools such as vkconfig).
pub const OVERRIDE_LAYER_NAME: &str = "VK_LAYER_LUNARG_override";

/// What one manifest file gave: its layers, and the rejected entries with their reasons.
#[derive(Debug, Default, Clone)]
pub struct ParsedFile {
    /// The `file_format_version` as written.
    pub file_format_version: String,
    /// Whether that version is one this loader does not know (the file is read all the same).
    pub unknown_file_format: bool,
    pub layers: Vec<LayerManifest>,
    pub rejected: Vec<Rejected>,
    /// Fields used although the file's format predates them, and the like (the layers are kept):
    /// warnings, each with the kind (layer or none) the Khronos loader gives its message.
    pub warnings: Vec<(Level, String)>,
}

/// An entry of a manifest that gives no layer, and why.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// The `name` the entry gives, where it gives one as a string (empty otherwise, or when no
    /// entry could be read at all).
    pub name: String,
    pub why: String,
}

impl Rejected {
    fn file(why: String) -> Rejected {
        Rejected { name: String::new(), why }
    }
}

/// A `file_format_version` as numbers, missing parts 0 (only called on one made of numbers).
fn file_format(version: &str) -> (u32, u32, u32) {
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// Whether a layer manifest `file_format_version` is one this loader knows: 1.0.0-1.0.1,
/// 1.1.0-1.1.2, 1.2.0-1.2.1. A newer one is read the same way, as the Khronos loader does.
fn known_file_format(version: &str) -> bool {
    let (major, minor, patch) = file_format(version);
    major == 1 && matches!((minor, patch), (0, 0..=1) | (1, 0..=2) | (2, 0..=1))
}

/// Parses a layer manifest's text. `Err` when the whole file is unusable.
pub fn parse_layers(text: &[u8], manifest_path: &str, implicit: bool) -> Result<ParsedFile, String> {
    let json = json::parse(text).map_err(|e| format!("{manifest_path}: invalid JSON: {e}"))?;
    if !json.is_object() {
        return Err(format!("{manifest_path}: not a JSON object"));
    }
    let version = match json.get("file_format_version") {
        None => return Err(format!("{manifest_path}: missing \"file_format_version\"")),
        Some(v) => v.as_str().ok_or_else(|| format!("{manifest_path}: \"file_format_version\" is not a string"))?,
    };
    if !version.split('.').all(|p| p.trim().parse::<u32>().is_ok()) {
        return Err(format!("{manifest_path}: bad \"file_format_version\" {version:?}"));
    }
    let format = file_format(version);
    let mut parsed = ParsedFile {
        file_format_version: version.to_string(),
        unknown_file_format: !known_file_format(version),
        ..ParsedFile::default()
    };
    let mut nodes: Vec<(String, &Json)> = Vec::new();
    if let Some(list) = json.get("layers") {
        if format < (1, 0, 1) {
            // The Khronos loader's words.
            parsed.warnings.push((
                Level::WarnLayer,
                format!(
                    "loader_add_layer_properties: 'layers' tag not supported until file version 1.0.1, but {manifest_path} is reporting version {version}"
                ),
            ));
        }
        match list {
            Json::Array(_) => {}
            // cJSON walks an object's members as it walks an array's elements.
            Json::Object(_) => parsed.warnings.push((
                Level::WarnLayer,
                format!("{manifest_path}: \"layers\" is not an array: its members are read as layers, as the Khronos loader reads them"),
            )),
            _ => parsed.rejected.push(Rejected::file(format!("{manifest_path}: \"layers\" is not an array: no layer is read from this file"))),
        }
        for (i, node) in list.children().enumerate() {
            if !node.is_object() {
                // As the Khronos loader: the layers before it are kept, none after it is read.
                parsed.rejected.push(Rejected::file(format!(
                    "{manifest_path}: layers[{i}] is not an object: it and the rest of the file are skipped (the Khronos \
                     loader's words: Array element in \"layers\" field in manifest JSON file {manifest_path} is not an object.  \
                     Skipping this file)"
                )));
                break;
            }
            nodes.push((format!("layers[{i}]"), node));
        }
    } else if json.get("layer").is_some() {
        // The Khronos loader reads the first `layer` member and every member after it, whatever its
        // key, as layers: a second `layer` (format 1.0.0 only), but also any member that follows.
        let members = json.members();
        let first = members.iter().position(|(key, _)| key.eq_ignore_ascii_case("layer")).unwrap_or(0);
        let following = &members[first..];
        if following.len() > 1 && format >= (1, 0, 1) {
            // The Khronos loader's words (an error), then ours.
            parsed.warnings.push((
                Level::ErrorLayer,
                format!(
                    "loader_add_layer_properties: Multiple 'layer' nodes are deprecated starting in file version \"1.0.1\".  \
                     Please use 'layers' : [] array instead in {manifest_path}."
                ),
            ));
            parsed.rejected.push(Rejected::file(format!(
                "{manifest_path}: no layer is read from this file: a member follows \"layer\" (\"{}\"), which the Khronos loader \
                 counts as another \"layer\" object",
                following[1].0
            )));
        } else {
            nodes.extend(following.iter().map(|(key, node)| (key.clone(), node)));
        }
    } else {
        return Err(format!("{manifest_path}: neither \"layer\" nor \"layers\""));
    }
    for (field, value) in nodes {
        match parse_layer(value, manifest_path, implicit, format, &mut parsed.warnings) {
            Ok(Some(layer)) => {
                parsed.warnings.extend(naming_policy(&layer));
                parsed.warnings.extend(fields_newer_than_format(&layer, format));
                parsed.layers.push(layer);
            }
            Ok(None) => {}
            Err(e) => {
                // The name is kept where the entry gives one, so that a search for the layer finds it.
                let name = value.get("name").and_then(Json::as_str).unwrap_or_default().to_string();
                parsed.rejected.push(Rejected { name, why: format!("{manifest_path}: {field}: {e}") });
            }
        }
    }
    Ok(parsed)
}

/// The layer naming rule (layer names start with `VK_LAYER_`), warned about in the Khronos
/// loader's words and not enforced.
fn naming_policy(layer: &LayerManifest) -> Option<(Level, String)> {
    (!layer.name.starts_with("VK_LAYER_"))
        .then(|| (Level::Warn, format!("Layer name {} does not conform to naming standard (Policy #LLP_LAYER_3)", layer.name)))
}

/// The Khronos loader's warnings for meta-layer fields in a file older than format 1.1.0, which
/// introduced them.
fn fields_newer_than_format(layer: &LayerManifest, format: (u32, u32, u32)) -> Vec<(Level, String)> {
    if format >= (1, 1, 0) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    if layer.library_path.is_none() {
        warnings.push((Level::Warn, format!("Layer \"{}\" contains meta-layer-specific component_layers, but using older JSON file version.", layer.name)));
    }
    if !layer.override_paths.is_empty() {
        warnings.push((Level::Warn, format!("Layer \"{}\" contains meta-layer-specific override paths, but using older JSON file version.", layer.name)));
    }
    warnings
}

/// The size of the Khronos loader's buffers for a layer's name and description and an
/// extension's name (`VK_MAX_EXTENSION_NAME_SIZE`, `VK_MAX_DESCRIPTION_SIZE`).
const NAME_SIZE: usize = 256;

/// A string field the Khronos loader copies into a buffer of `NAME_SIZE` bytes
/// (`loader_parse_json_string_to_existing_str`): `Ok(None)` when absent or not a string; `Err` when
/// it does not fit (what cJSON's printing of it needs: its bytes, one more for each character it
/// would escape, five more for other control characters, and two), which the Khronos loader
/// treats as absent too.
fn fixed_str(object: &Json, key: &str) -> Result<Option<String>, String> {
    let Some(text) = object.get(key).and_then(Json::as_str) else { return Ok(None) };
    let escapes: usize =
        text.bytes().map(|b| match b { b'"' | b'\\' | 8 | 12 | b'\n' | b'\r' | b'\t' => 1, 0..=31 => 5, _ => 0 }).sum();
    if text.len() + escapes + 2 > NAME_SIZE {
        return Err(format!("\"{key}\" is longer than the Khronos loader reads ({} bytes at most)", NAME_SIZE - 2));
    }
    Ok(Some(text.to_string()))
}

/// A string field that is read only when it is a string (`loader_parse_json_string`,
/// `loader_cJSON_GetStringValue`): anything else counts as absent.
fn string_field(object: &Json, key: &str) -> Option<String> {
    object.get(key).and_then(Json::as_str).map(str::to_string)
}

/// A list of strings as the Khronos loader reads one it does not require
/// (`loader_parse_json_array_of_strings`, its error ignored): the elements (or an object's
/// members) up to the first that is not a string.
fn leading_strings(object: &Json, key: &str) -> Vec<String> {
    let Some(list) = object.get(key) else { return Vec::new() };
    list.children().map_while(Json::as_str).map(str::to_string).collect()
}

/// C's `atoi`, as the Khronos loader reads an extension's `spec_version`: leading whitespace, a
/// sign, the digits that follow (none: 0), the result cut to 32 bits.
fn atoi(text: &str) -> u32 {
    let text = text.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let value = digits.bytes().take_while(u8::is_ascii_digit).fold(0i64, |n, d| n.saturating_mul(10).saturating_add(i64::from(d - b'0')));
    (if negative { value.saturating_neg() } else { value }) as i32 as u32
}

/// The environment variable an implicit layer's `enable_environment` or `disable_environment`
/// names: its first member, which must be a string (`layer_node->child`).
fn env_condition(object: &Json, key: &str) -> Option<EnvCondition> {
    let (var, value) = object.get(key)?.members().first()?;
    Some(EnvCondition { var: var.clone(), value: value.as_str()?.to_string() })
}

/// A `layers` entry or the `layer` object (any value: the Khronos loader reads what is there and
/// finds no fields in a value that is not an object); `Ok(None)` for a DEVICE layer (no longer
/// supported, skipped). `format` is the file's `file_format_version`, which gates some fields.
fn parse_layer(
    value: &Json,
    manifest_path: &str,
    implicit: bool,
    format: (u32, u32, u32),
    warnings: &mut Vec<(Level, String)>,
) -> Result<Option<LayerManifest>, String> {
    // Required; the Khronos loader's words (it skips such layers since 1.4.3xx too).
    let missing = |key: &str| {
        format!("Layer located at {manifest_path} didn't find required layer value \"{key}\" in manifest JSON file, skipping this layer")
    };
    let name = fixed_str(value, "name")?.ok_or_else(|| missing("name"))?;
    match value.get("type").and_then(Json::as_str).ok_or_else(|| missing("type"))? {
        "INSTANCE" | "GLOBAL" => {}
        "DEVICE" => return Ok(None),
        other => return Err(format!("\"type\" {other:?} is not INSTANCE or GLOBAL")),
    }
    let api_text = string_field(value, "api_version").ok_or_else(|| missing("api_version"))?;
    let api_version = layer_api_version(&api_text, &name)?;
    // A string, as for the Khronos loader (a JSON number is refused there too); one that is not a
    // number is refused here, where its `atoi` reads 0 (docs/compatibility.md).
    let implementation_text = string_field(value, "implementation_version").ok_or_else(|| missing("implementation_version"))?;
    let implementation_version = implementation_text.trim().parse().map_err(|_| "\"implementation_version\" is not a number")?;
    let description = fixed_str(value, "description")?.ok_or_else(|| missing("description"))?;
    let library_path = match string_field(value, "library_path") {
        Some(_) if value.get("component_layers").is_some() => {
            // The Khronos loader's words.
            return Err(format!(
                "Layer \"{name}\" contains meta-layer-specific component_layers, but also defining layer library path.  Both \
                 are not compatible, so skipping this layer"
            ));
        }
        Some(l) if l.is_empty() => return Err("empty \"library_path\"".into()),
        Some(l) => Some(resolve_library(&l, manifest_path)),
        None => None,
    };
    let mut component_layers = Vec::new();
    if library_path.is_none() {
        // Every element a string; an empty list (or a value with no elements) makes a meta layer
        // of no components, as for the Khronos loader.
        let components = value.get("component_layers").map(|list| list.children().map(|c| c.as_str().map(str::to_string)).collect());
        component_layers = match components {
            Some(Some(list)) => list,
            // The Khronos loader's words.
            _ => {
                return Err(format!(
                    "Layer \"{name}\" is missing both library_path and component_layers fields.  One or the other MUST be \
                     defined.  Skipping this layer"
                ))
            }
        };
    }
    let is_override = name == OVERRIDE_LAYER_NAME;
    let blacklisted_layers = if is_override { leading_strings(value, "blacklisted_layers") } else { Vec::new() };
    let override_paths = leading_strings(value, "override_paths");
    // Only an implicit layer's switches are read, as by the Khronos loader.
    let disable_environment = match implicit {
        false => None,
        true if value.get("disable_environment").is_none() => {
            // The Khronos loader's words.
            return Err(format!(
                "Layer \"{name}\" doesn't contain required layer object disable_environment in the manifest JSON file, skipping this layer"
            ));
        }
        true => Some(env_condition(value, "disable_environment").ok_or_else(|| {
            format!(
                "Layer \"{name}\" doesn't contain required child value in object disable_environment in the manifest JSON file, \
                 skipping this layer (Policy #LLP_LAYER_9)"
            )
        })?),
    };
    let functions = match value.get("functions") {
        None => LayerFunctions::default(),
        Some(f) => LayerFunctions {
            get_instance_proc_addr: string_field(f, "vkGetInstanceProcAddr"),
            get_device_proc_addr: string_field(f, "vkGetDeviceProcAddr"),
            // Read from file format 1.1.0, which introduced it (the library's own
            // vkNegotiateLoaderLayerInterfaceVersion is looked for otherwise).
            negotiate: (format >= (1, 1, 0)).then(|| string_field(f, "vkNegotiateLoaderLayerInterfaceVersion")).flatten(),
        },
    };
    let instance_extensions = extensions(value, "instance_extensions", false);
    let device_extensions = extensions(value, "device_extensions", true);
    let enable_environment = if implicit { env_condition(value, "enable_environment") } else { None };
    let pre_instance_functions = match value.get("pre_instance_functions") {
        None => PreInstanceFunctions::default(),
        // The Khronos loader's words.
        Some(_) if format < (1, 1, 2) => {
            warnings.push((
                Level::Warn,
                format!(
                    "Found pre_instance_functions section in layer from \"{manifest_path}\". This section is only valid in manifest \
                     version 1.1.2 or later. The section will be ignored"
                ),
            ));
            PreInstanceFunctions::default()
        }
        Some(_) if !implicit => {
            warnings.push((
                Level::Warn,
                format!(
                    "Found pre_instance_functions section in explicit layer from \"{manifest_path}\". This section is only valid in \
                     implicit layers. The section will be ignored"
                ),
            ));
            PreInstanceFunctions::default()
        }
        Some(p) => PreInstanceFunctions {
            enumerate_instance_extension_properties: string_field(p, "vkEnumerateInstanceExtensionProperties"),
            enumerate_instance_layer_properties: string_field(p, "vkEnumerateInstanceLayerProperties"),
            enumerate_instance_version: string_field(p, "vkEnumerateInstanceVersion"),
        },
    };
    let app_keys = leading_strings(value, "app_keys");
    if value.get("app_keys").is_some() && !is_override {
        // The Khronos loader's words.
        warnings.push((
            Level::WarnLayer,
            format!("Layer {name} contains app_keys, but any app_keys can only be provided by the override meta layer. These will be ignored."),
        ));
    }
    Ok(Some(LayerManifest {
        manifest_path: manifest_path.to_string(),
        implicit,
        name,
        library_path,
        component_layers,
        api_version,
        implementation_version,
        description,
        functions,
        instance_extensions,
        device_extensions,
        enable_environment,
        disable_environment,
        pre_instance_functions,
        library_arch: driver::library_arch(value),
        app_keys,
        blacklisted_layers,
        override_paths,
        settings_control: None,
    }))
}

/// A layer's `api_version`: `"1.3.250"`, or with the API variant first (`"0.1.3.250"`); a layer
/// for another variant of the API (Vulkan SC) is not for this loader.
fn layer_api_version(text: &str, name: &str) -> Result<u32, String> {
    let bad = || format!("bad \"api_version\" {text:?}");
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() >= 4 {
        let variant: u32 = parts[0].trim().parse().map_err(|_| bad())?;
        if variant != 0 {
            // The Khronos loader's words.
            return Err(format!(
                "Layer \"{name}\" has an 'api_version' field which contains a non-zero variant value of {variant}.  Skipping Layer."
            ));
        }
        return parse_version(&parts[1..].join(".")).ok_or_else(bad);
    }
    parse_version(text).ok_or_else(bad)
}

/// `instance_extensions` or `device_extensions` as the Khronos loader reads them: an array (else
/// none); an element that is not an object, or has no `name` string, is skipped alone; its
/// `spec_version` is a string read with `atoi` (absent or not a string: 0); a device extension's
/// `entrypoints` are its leading strings.
fn extensions(layer: &Json, key: &str, device: bool) -> Vec<LayerExtension> {
    let Some(list) = layer.get(key).and_then(Json::as_array) else { return Vec::new() };
    list.iter()
        .filter(|e| e.is_object())
        .filter_map(|e| {
            let name = fixed_str(e, "name").ok().flatten()?;
            let spec_version = e.get("spec_version").and_then(Json::as_str).map_or(0, atoi);
            let entrypoints = if device { leading_strings(e, "entrypoints") } else { Vec::new() };
            Some(LayerExtension { name, spec_version, entrypoints })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_names_outside_the_naming_policy_are_warned_about() {
        let text = |name: &str| format!(r#"{{"file_format_version":"1.0.0","layer":{{"name":"{name}","type":"GLOBAL","library_path":"libx.so","api_version":"1.3.0","implementation_version":"1","description":"d"}}}}"#);
        let odd = parse_layers(text("Odd_Layer").as_bytes(), "/l/m.json", false).unwrap();
        assert_eq!(odd.layers.len(), 1, "warned about, not rejected");
        assert_eq!(odd.warnings, [(Level::Warn, "Layer name Odd_Layer does not conform to naming standard (Policy #LLP_LAYER_3)".to_string())]);
        assert!(parse_layers(text("VK_LAYER_good").as_bytes(), "/l/m.json", false).unwrap().warnings.is_empty());
    }

    fn one(text: &str, implicit: bool) -> Result<LayerManifest, String> {
        let mut file = parse_layers(text.as_bytes(), "/l/m.json", implicit)?;
        if let Some(e) = file.rejected.pop() {
            return Err(e.why);
        }
        file.layers.pop().ok_or_else(|| "no layer".into())
    }

    #[test]
    fn parses_every_field() {
        let text = r#"{"file_format_version":"1.2.1","layer":{
            "name":"VK_LAYER_x","type":"GLOBAL","library_path":"./libx.so","api_version":"1.3.250",
            "implementation_version":"2","description":"d","library_arch":"64",
            "functions":{"vkGetInstanceProcAddr":"xGIPA","vkGetDeviceProcAddr":"xGDPA","vkNegotiateLoaderLayerInterfaceVersion":"xNeg"},
            "instance_extensions":[{"name":"VK_EXT_debug_utils","spec_version":"1"}],
            "device_extensions":[{"name":"VK_EXT_debug_marker","spec_version":"4","entrypoints":["vkCmdDebugMarkerEndEXT"]}],
            "enable_environment":{"ENABLE_X":"1"},"disable_environment":{"DISABLE_X":"1"},
            "pre_instance_functions":{"vkEnumerateInstanceVersion":"xEIV"}}}"#;
        let m = one(text, true).unwrap();
        assert_eq!(m.library_path.as_deref(), Some("/l/./libx.so"));
        assert_eq!(m.api_version, vk_generated::make_api_version(0, 1, 3, 250));
        assert_eq!(m.implementation_version, 2);
        assert_eq!(m.functions.get_instance_proc_addr.as_deref(), Some("xGIPA"));
        assert_eq!(m.functions.negotiate.as_deref(), Some("xNeg"));
        assert_eq!(m.instance_extensions[0].name, "VK_EXT_debug_utils");
        assert_eq!(m.device_extensions[0].spec_version, 4);
        assert_eq!(m.device_extensions[0].entrypoints, ["vkCmdDebugMarkerEndEXT"]);
        assert_eq!(m.enable_environment, Some(EnvCondition { var: "ENABLE_X".into(), value: "1".into() }));
        assert_eq!(m.pre_instance_functions.enumerate_instance_version.as_deref(), Some("xEIV"));
        assert_eq!(m.library_arch.as_deref(), Some("64"));
        assert!(!m.is_meta());
    }

    #[test]
    fn layers_array_keeps_the_good_entries() {
        let text = r#"{"file_format_version":"1.0.1","layers":[
            {"name":"A","type":"INSTANCE","library_path":"a.so","api_version":"1.0","implementation_version":"1","description":""},
            {"name":"B","type":"INSTANCE","api_version":"1.0","implementation_version":"1","description":""},
            {"name":"C","type":"DEVICE","library_path":"c.so","api_version":"1.0","implementation_version":"1","description":""},
            {"name":"M","type":"GLOBAL","component_layers":["A"],"api_version":"1.1","implementation_version":"1","description":""}]}"#;
        let file = parse_layers(text.as_bytes(), "/l/m.json", false).unwrap();
        let names: Vec<&str> = file.layers.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["A", "M"]);
        assert!(file.layers[1].is_meta());
        assert_eq!(file.rejected.len(), 1);
        assert!(file.rejected[0].why.contains("/l/m.json: layers[1]: Layer \"B\" is missing both library_path and component_layers"), "{:?}", file.rejected);
    }

    #[test]
    fn unknown_file_formats_are_read_and_flagged() {
        let text = |v: &str| {
            format!(r#"{{"file_format_version":"{v}","layer":{{"name":"X","type":"GLOBAL","library_path":"x.so","api_version":"1.0","implementation_version":"1","description":""}}}}"#)
        };
        for (version, known) in [("1.0.1", true), ("1.1.2", true), ("1.2.1", true), ("1.2.2", false), ("3.2.1", false), ("100.222.111", false)] {
            let file = parse_layers(text(version).as_bytes(), "/l/m.json", false).unwrap();
            assert_eq!(file.layers.len(), 1, "{version}");
            assert_eq!((file.file_format_version.as_str(), file.unknown_file_format), (version, !known));
        }
    }

    #[test]
    fn override_layer_needs_a_component_list_even_an_empty_one() {
        let text = |components: &str| {
            format!(r#"{{"file_format_version":"1.2.0","layer":{{"name":"{OVERRIDE_LAYER_NAME}","type":"GLOBAL","api_version":"1.0",
                "implementation_version":"1","description":"","disable_environment":{{"D":"1"}},"blacklisted_layers":["B"]{components}}}}}"#)
        };
        let e = one(&text(""), true).unwrap_err();
        assert!(e.contains("is missing both library_path and component_layers fields.  One or the other MUST be defined."), "{e}");
        let o = one(&text(r#","component_layers":[]"#), true).unwrap();
        assert_eq!((o.library_path, o.blacklisted_layers), (None, vec!["B".to_string()]));
    }

    #[test]
    fn meta_layer_fields_in_an_old_format_are_kept_with_a_warning() {
        let text = |v: &str| {
            format!(r#"{{"file_format_version":"{v}","layer":{{"name":"VK_LAYER_M","type":"GLOBAL","component_layers":["A"],"override_paths":["/p"],"api_version":"1.0","implementation_version":"1","description":""}}}}"#)
        };
        let old = parse_layers(text("1.0.0").as_bytes(), "/l/m.json", false).unwrap();
        assert_eq!(old.layers[0].override_paths, ["/p"]);
        assert_eq!(
            old.warnings,
            [
                (Level::Warn, "Layer \"VK_LAYER_M\" contains meta-layer-specific component_layers, but using older JSON file version.".to_string()),
                (Level::Warn, "Layer \"VK_LAYER_M\" contains meta-layer-specific override paths, but using older JSON file version.".to_string())
            ]
        );
        assert!(parse_layers(text("1.1.0").as_bytes(), "/l/m.json", false).unwrap().warnings.is_empty());
    }

    #[test]
    fn rejections_name_file_and_field() {
        let base = |extra: &str| {
            format!(r#"{{"file_format_version":"1.1.0","layer":{{"name":"X","type":"GLOBAL","api_version":"1.0","implementation_version":"1","description":"" {extra}}}}}"#)
        };
        let cases: Vec<(String, bool, &str)> = vec![
            ("{".into(), false, "invalid JSON"),
            (r#"{"layer":{}}"#.into(), false, "file_format_version"),
            (r#"{"file_format_version":"one","layer":{}}"#.into(), false, "bad \"file_format_version\""),
            (base(r#","library_path":"x.so","api_version":"1.1.3.0""#).replace(r#""api_version":"1.0","#, ""), false, "non-zero variant value of 1"),
            (r#"{"file_format_version":"1.0.0"}"#.into(), false, "neither \"layer\""),
            (base(""), false, "library_path"),
            (base(r#","library_path":"x.so","component_layers":["A"]"#), false, "but also defining layer library path"),
            (base(r#","library_path":"x.so","component_layers":"A""#), false, "but also defining layer library path"),
            (base(r#","component_layers":["A", 7]"#), false, "is missing both library_path and component_layers"),
            (base(r#","library_path":"x.so""#), true, "disable_environment"),
            (base(r#","library_path":"x.so","disable_environment":{"D":1}"#), true, "(Policy #LLP_LAYER_9)"),
            (base(r#","library_path":"x.so","disable_environment":["D"]"#), true, "(Policy #LLP_LAYER_9)"),
            (base(r#","library_path":"x.so""#).replace(r#""implementation_version":"1""#, r#""implementation_version":1"#), false, "didn't find required layer value \"implementation_version\""),
            (base(r#","library_path":"x.so""#).replace(r#""implementation_version":"1""#, r#""implementation_version":"one""#), false, "\"implementation_version\" is not a number"),
            (base(r#","library_path":"x.so""#).replace(r#""api_version":"1.0""#, r#""api_version":1.0"#), false, "didn't find required layer value \"api_version\""),
            (base(r#","library_path":"x.so""#).replace(r#""description":"""#, r#""description":["d"]"#), false, "didn't find required layer value \"description\""),
            (base(r#","library_path":"x.so""#).replace(r#""name":"X""#, &format!(r#""name":"{}""#, "N".repeat(255))), false, "\"name\" is longer than the Khronos loader reads"),
            (base(r#","library_path":"x.so""#).replace(r#""name":"X""#, r#""name":7"#), false, "didn't find required layer value \"name\""),
            (r#"{"file_format_version":"1.0.0","layer":{"name":"X","type":"GLOBAL","library_path":"x.so","implementation_version":"1","description":""}}"#.into(), false, "didn't find required layer value \"api_version\""),
            (base(r#","library_path":"x.so""#).replace(r#""implementation_version":"1","#, ""), false, "didn't find required layer value \"implementation_version\""),
            (r#"{"file_format_version":"1.0.0","layer":{"name":"X","type":"WEIRD","library_path":"x.so"}}"#.into(), false, "type"),
        ];
        for (text, implicit, needle) in cases {
            let e = one(&text, implicit).unwrap_err();
            assert!(e.contains(needle) && e.contains("/l/m.json"), "{e:?} should name the file and {needle}");
        }
    }

    const LAYER: &str = r#"{"file_format_version":"1.2.0","layer":{"name":"VK_LAYER_x","type":"GLOBAL","library_path":"/l/libx.so",
        "api_version":"1.3.0","implementation_version":"1","description":"d"}}"#;

    #[test]
    fn read_as_the_khronos_loader_reads_json() {
        let expected = one(LAYER, false).unwrap();
        let bom = [b"\xEF\xBB\xBF".as_slice(), LAYER.as_bytes()].concat();
        let trailing_text = format!("{LAYER}\ntrailing text");
        let trailing_nul = [LAYER.as_bytes(), b"\0"].concat();
        let second_value = format!("{LAYER}{}", LAYER.replace("VK_LAYER_x", "VK_LAYER_y"));
        for text in [&bom[..], trailing_text.as_bytes(), &trailing_nul, second_value.as_bytes()] {
            let file = parse_layers(text, "/l/m.json", false).unwrap();
            assert_eq!((file.layers, file.rejected), (vec![expected.clone()], Vec::<Rejected>::new()), "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn the_first_of_a_key_given_twice_is_taken() {
        let twice = LAYER.replace(r#""library_path":"/l/libx.so","#, r#""library_path":"/l/libx.so","library_path":"/l/other.so","Library_Path":7,"#);
        assert_eq!(one(&twice, false).unwrap().library_path.as_deref(), Some("/l/libx.so"));
        let env = r#","disable_environment":{"FIRST":"1","SECOND":"1"},"disable_environment":{"THIRD":"1"}"#;
        let implicit = one(&LAYER.replace(r#""description":"d""#, &format!(r#""description":"d"{env}"#)), true).unwrap();
        assert_eq!(implicit.disable_environment, Some(EnvCondition { var: "FIRST".into(), value: "1".into() }), "the first member, in the file's order");
    }

    #[test]
    fn every_member_from_the_first_layer_on_is_a_layer_as_for_the_khronos_loader() {
        let layer = |name: &str| format!(r#"{{"name":"{name}","type":"GLOBAL","library_path":"x.so","api_version":"1.0","implementation_version":"1","description":""}}"#);
        // Format 1.0.0: every member from `layer` on is read as a layer.
        let two = format!(r#"{{"file_format_version":"1.0.0","layer":{},"layer":{}}}"#, layer("VK_LAYER_a"), layer("VK_LAYER_b"));
        let names: Vec<String> = parse_layers(two.as_bytes(), "/l/m.json", false).unwrap().layers.into_iter().map(|l| l.name).collect();
        assert_eq!(names, ["VK_LAYER_a", "VK_LAYER_b"]);
        // From 1.0.1, a member after `layer` (another `layer`, or anything) means no layer at all.
        for after in [format!(r#","layer":{}"#, layer("VK_LAYER_b")), r#","comment":"x""#.to_string()] {
            let text = format!(r#"{{"file_format_version":"1.0.1","layer":{}{after}}}"#, layer("VK_LAYER_a"));
            let file = parse_layers(text.as_bytes(), "/l/m.json", false).unwrap();
            assert!(file.layers.is_empty(), "{text}");
            assert!(file.rejected[0].why.contains("no layer is read from this file"), "{:?}", file.rejected);
            let khronos = "loader_add_layer_properties: Multiple 'layer' nodes are deprecated starting in file version \"1.0.1\".  \
                           Please use 'layers' : [] array instead in /l/m.json.";
            assert!(file.warnings.contains(&(Level::ErrorLayer, khronos.to_string())), "{:?}", file.warnings);
        }
        // Members before `layer` do not count.
        let before = format!(r#"{{"comment":"x","file_format_version":"1.2.0","layer":{}}}"#, layer("VK_LAYER_a"));
        assert_eq!(parse_layers(before.as_bytes(), "/l/m.json", false).unwrap().layers.len(), 1);
    }

    #[test]
    fn layers_lists_as_cjson_walks_them() {
        let layer = |name: &str| format!(r#"{{"name":"{name}","type":"GLOBAL","library_path":"x.so","api_version":"1.0","implementation_version":"1","description":""}}"#);
        // An element that is not an object ends the file's reading; the layers before it stay.
        let text = format!(r#"{{"file_format_version":"1.0.1","layers":[{},"oops",{}]}}"#, layer("VK_LAYER_a"), layer("VK_LAYER_b"));
        let file = parse_layers(text.as_bytes(), "/l/m.json", false).unwrap();
        assert_eq!(file.layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), ["VK_LAYER_a"]);
        assert!(file.rejected[0].why.contains("layers[1] is not an object"), "{:?}", file.rejected);
        // An object's members are walked as an array's elements; a string has none.
        let object = format!(r#"{{"file_format_version":"1.0.1","layers":{{"one":{},"two":{}}}}}"#, layer("VK_LAYER_a"), layer("VK_LAYER_b"));
        assert_eq!(parse_layers(object.as_bytes(), "/l/m.json", false).unwrap().layers.len(), 2);
        let string = parse_layers(br#"{"file_format_version":"1.0.1","layers":"x"}"#, "/l/m.json", false).unwrap();
        assert!(string.layers.is_empty() && string.rejected[0].why.contains("\"layers\" is not an array"), "{:?}", string.rejected);
    }

    #[test]
    fn optional_fields_of_another_type_are_read_as_absent() {
        let with = |extra: &str, implicit: bool| {
            let env = if implicit { r#","disable_environment":{"D":"1"}"# } else { "" };
            one(&LAYER.replace(r#""description":"d""#, &format!(r#""description":"d"{env}{extra}"#)), implicit).unwrap()
        };
        let l = with(r#","library_arch":"x86","functions":{"vkGetInstanceProcAddr":1,"vkGetDeviceProcAddr":"gdpa"},"enable_environment":"X","app_keys":["/a",2,"/b"],"override_paths":"/p""#, true);
        assert_eq!(l.library_arch, None, "only a leading 32 or 64 names an architecture");
        assert_eq!((l.functions.get_instance_proc_addr, l.functions.get_device_proc_addr.as_deref()), (None, Some("gdpa")));
        assert_eq!(l.enable_environment, None);
        assert_eq!(l.app_keys, ["/a"], "the strings before the first that is not one");
        assert!(l.override_paths.is_empty());
        assert_eq!(with(r#","library_arch":"32-bit""#, false).library_arch.as_deref(), Some("32"));
        // A non-string library_path is no library path: with component_layers, a meta layer.
        let meta = one(&LAYER.replace(r#""library_path":"/l/libx.so","#, r#""library_path":7,"component_layers":["VK_LAYER_a"],"#), false).unwrap();
        assert_eq!((meta.library_path, meta.component_layers), (None, vec!["VK_LAYER_a".to_string()]));
        // An explicit layer's switches are not read, well formed or not.
        let explicit = with(r#","enable_environment":{"E":"1"},"disable_environment":7"#, false);
        assert_eq!((explicit.enable_environment, explicit.disable_environment), (None, None));
        // component_layers with no elements: a meta layer of no components, any layer.
        let empty = one(&LAYER.replace(r#""library_path":"/l/libx.so","#, r#""component_layers":"VK_LAYER_a","#), false).unwrap();
        assert_eq!((empty.library_path, empty.component_layers), (None, Vec::<String>::new()));
    }

    #[test]
    fn extensions_as_the_khronos_loader_reads_them() {
        let text = LAYER.replace(
            r#""description":"d""#,
            r#""description":"d","instance_extensions":[{"name":"VK_A","spec_version":"3"},{"name":"VK_B","spec_version":3},{"name":"VK_C"},
                {"spec_version":"1"},"oops",{"name":"VK_D","spec_version":" 12abc"},{"name":"VK_E","spec_version":"-1"}],
                "device_extensions":[{"name":"VK_F","spec_version":"2","entrypoints":["vkA",1,"vkB"]}]"#,
        );
        let l = one(&text, false).unwrap();
        let got: Vec<(&str, u32)> = l.instance_extensions.iter().map(|e| (e.name.as_str(), e.spec_version)).collect();
        // A number or no spec_version is 0; a string is read with atoi; an entry without a name or
        // not an object is skipped alone.
        assert_eq!(got, [("VK_A", 3), ("VK_B", 0), ("VK_C", 0), ("VK_D", 12), ("VK_E", u32::MAX)]);
        assert_eq!(l.device_extensions[0].entrypoints, ["vkA"]);
        let not_a_list = one(&LAYER.replace(r#""description":"d""#, r#""description":"d","instance_extensions":{"name":"VK_A"}"#), false).unwrap();
        assert!(not_a_list.instance_extensions.is_empty());
    }

    #[test]
    fn fields_gated_by_the_file_format() {
        let text = |version: &str, implicit: bool| {
            let layer = LAYER.replace("1.2.0", version).replace(
                r#""description":"d""#,
                r#""description":"d","disable_environment":{"D":"1"},"functions":{"vkNegotiateLoaderLayerInterfaceVersion":"neg"},
                    "pre_instance_functions":{"vkEnumerateInstanceVersion":"eiv"}"#,
            );
            parse_layers(layer.as_bytes(), "/l/m.json", implicit).unwrap()
        };
        // Format 1.0.0: the negotiation function's name and the pre-instance functions are not read.
        let old = text("1.0.0", true);
        assert_eq!((old.layers[0].functions.negotiate.as_ref(), old.layers[0].pre_instance_functions.enumerate_instance_version.as_ref()), (None, None));
        assert!(old.warnings.iter().any(|(l, w)| *l == Level::Warn && w.contains("only valid in manifest version 1.1.2 or later")), "{:?}", old.warnings);
        let new = text("1.1.2", true);
        assert_eq!(new.layers[0].functions.negotiate.as_deref(), Some("neg"));
        assert_eq!(new.layers[0].pre_instance_functions.enumerate_instance_version.as_deref(), Some("eiv"));
        // An explicit layer's pre-instance functions are not read.
        let explicit = text("1.1.2", false);
        assert_eq!(explicit.layers[0].pre_instance_functions.enumerate_instance_version, None);
        assert!(explicit.warnings.iter().any(|(l, w)| *l == Level::Warn && w.contains("only valid in implicit layers")), "{:?}", explicit.warnings);
    }
}
