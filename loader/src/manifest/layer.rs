//! Layer manifests (file_format_version 1.0.0 to 1.2.1): one `layer` object or a `layers` array.
//! Parsed and validated with serde_json; every rejection names the file and the field. A bad layer
//! in a `layers` array is rejected alone; the others of the file are kept.

use serde_json::{Map, Value};

use crate::manifest::driver::{parse_version, resolve_library};

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
    /// `32` or `64` where the manifest says.
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
    pub rejected: Vec<String>,
    /// Fields used although the file's format predates them (the layers are kept).
    pub warnings: Vec<String>,
}

/// Whether a layer manifest `file_format_version` is one this loader knows: 1.0.0-1.0.1,
/// 1.1.0-1.1.2, 1.2.0-1.2.1. A newer one is read the same way, as the Khronos loader does.
fn known_file_format(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().ok());
    let mut next = || parts.next().flatten().unwrap_or(0);
    let (major, minor, patch) = (next(), next(), next());
    major == 1 && matches!((minor, patch), (0, 0..=1) | (1, 0..=2) | (2, 0..=1))
}

/// Parses a layer manifest's text. `Err` when the whole file is unusable.
pub fn parse_layers(text: &[u8], manifest_path: &str, implicit: bool) -> Result<ParsedFile, String> {
    let json: Value = serde_json::from_slice(text).map_err(|e| format!("{manifest_path}: invalid JSON: {e}"))?;
    let version = json
        .get("file_format_version")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{manifest_path}: missing \"file_format_version\""))?;
    if !version.split('.').all(|p| p.trim().parse::<u32>().is_ok()) {
        return Err(format!("{manifest_path}: bad \"file_format_version\" {version:?}"));
    }
    let entries: Vec<(String, &Value)> = match (json.get("layers"), json.get("layer")) {
        (Some(Value::Array(list)), _) => list.iter().enumerate().map(|(i, v)| (format!("layers[{i}]"), v)).collect(),
        (Some(_), _) => return Err(format!("{manifest_path}: \"layers\" is not an array")),
        (None, Some(one)) => vec![("layer".to_string(), one)],
        (None, None) => return Err(format!("{manifest_path}: neither \"layer\" nor \"layers\"")),
    };
    let mut parsed = ParsedFile {
        file_format_version: version.to_string(),
        unknown_file_format: !known_file_format(version),
        ..ParsedFile::default()
    };
    for (field, value) in entries {
        match parse_layer(value, manifest_path, implicit) {
            Ok(Some(layer)) => {
                parsed.warnings.extend(naming_policy(&layer));
                parsed.warnings.extend(fields_newer_than_format(&layer, version));
                parsed.layers.push(layer);
            }
            Ok(None) => {}
            Err(e) => parsed.rejected.push(format!("{manifest_path}: {field}: {e}")),
        }
    }
    Ok(parsed)
}

/// The layer naming rule (layer names start with `VK_LAYER_`), warned about in the Khronos
/// loader's words and not enforced.
fn naming_policy(layer: &LayerManifest) -> Option<String> {
    (!layer.name.starts_with("VK_LAYER_"))
        .then(|| format!("Layer name {} does not conform to naming standard (Policy #LLP_LAYER_3)", layer.name))
}

/// The Khronos loader's warnings for meta-layer fields in a file older than format 1.1.0, which
/// introduced them.
fn fields_newer_than_format(layer: &LayerManifest, version: &str) -> Vec<String> {
    let mut parts = version.split('.').map(|p| p.trim().parse::<u32>().unwrap_or(0));
    if (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (1, 1) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    if layer.is_meta() {
        warnings.push(format!("Layer \"{}\" contains meta-layer-specific component_layers, but using older JSON file version.", layer.name));
    }
    if !layer.override_paths.is_empty() {
        warnings.push(format!("Layer \"{}\" contains meta-layer-specific override paths, but using older JSON file version.", layer.name));
    }
    warnings
}

/// One `layer` object; `Ok(None)` for a DEVICE layer (no longer supported, skipped).
fn parse_layer(value: &Value, manifest_path: &str, implicit: bool) -> Result<Option<LayerManifest>, String> {
    let obj = value.as_object().ok_or("not an object")?;
    let name = required_str(obj, "name")?;
    match required_str(obj, "type")?.as_str() {
        "INSTANCE" | "GLOBAL" => {}
        "DEVICE" => return Ok(None),
        other => return Err(format!("\"type\" {other:?} is not INSTANCE or GLOBAL")),
    }
    let library = optional_str(obj, "library_path")?;
    let component_layers = string_list(obj, "component_layers")?;
    let library_path = match (library, component_layers.is_empty()) {
        (Some(_), false) => return Err("has both \"library_path\" and \"component_layers\"".into()),
        (Some(l), true) if l.is_empty() => return Err("empty \"library_path\"".into()),
        (Some(l), true) => Some(resolve_library(&l, manifest_path)),
        (None, false) => None,
        (None, true) => {
            // The override layer may stand for nothing but its blacklist or search paths, with
            // an empty list of components.
            if name != OVERRIDE_LAYER_NAME || !obj.contains_key("component_layers") {
                // The Khronos loader's words.
                return Err(format!(
                    "Layer \"{name}\" is missing both library_path and component_layers fields.  One or the other MUST be \
                     defined.  Skipping this layer"
                ));
            }
            None
        }
    };
    // Both required; the Khronos loader's words (it skips such layers since 1.4.3xx too).
    let missing = |key: &str| {
        format!("Layer located at {manifest_path} didn't find required layer value \"{key}\" in manifest JSON file, skipping this layer")
    };
    let api_text = optional_str(obj, "api_version")?.ok_or_else(|| missing("api_version"))?;
    let api_version = layer_api_version(&api_text, &name)?;
    let implementation_version = number(obj.get("implementation_version").ok_or_else(|| missing("implementation_version"))?)
        .ok_or("\"implementation_version\" is not a number")?;
    let description = required_str(obj, "description")?;
    let functions = match obj.get("functions") {
        None => LayerFunctions::default(),
        Some(f) => {
            let f = f.as_object().ok_or("\"functions\" is not an object")?;
            LayerFunctions {
                get_instance_proc_addr: optional_str(f, "vkGetInstanceProcAddr").map_err(|e| format!("functions: {e}"))?,
                get_device_proc_addr: optional_str(f, "vkGetDeviceProcAddr").map_err(|e| format!("functions: {e}"))?,
                negotiate: optional_str(f, "vkNegotiateLoaderLayerInterfaceVersion").map_err(|e| format!("functions: {e}"))?,
            }
        }
    };
    let instance_extensions = extensions(obj, "instance_extensions")?;
    let device_extensions = extensions(obj, "device_extensions")?;
    let enable_environment = env_condition(obj, "enable_environment")?;
    let disable_environment = env_condition(obj, "disable_environment")?;
    if implicit && disable_environment.is_none() {
        return Err("implicit layer without \"disable_environment\"".into());
    }
    let pre_instance_functions = match obj.get("pre_instance_functions") {
        None => PreInstanceFunctions::default(),
        Some(p) => {
            let p = p.as_object().ok_or("\"pre_instance_functions\" is not an object")?;
            let get = |k| optional_str(p, k).map_err(|e| format!("pre_instance_functions: {e}"));
            PreInstanceFunctions {
                enumerate_instance_extension_properties: get("vkEnumerateInstanceExtensionProperties")?,
                enumerate_instance_layer_properties: get("vkEnumerateInstanceLayerProperties")?,
                enumerate_instance_version: get("vkEnumerateInstanceVersion")?,
            }
        }
    };
    let library_arch = optional_str(obj, "library_arch")?;
    if let Some(arch) = &library_arch {
        if arch != "32" && arch != "64" {
            return Err(format!("\"library_arch\" {arch:?} is not \"32\" or \"64\""));
        }
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
        library_arch,
        app_keys: string_list(obj, "app_keys")?,
        blacklisted_layers: string_list(obj, "blacklisted_layers")?,
        override_paths: string_list(obj, "override_paths")?,
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

fn optional_str(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("\"{key}\" is not a string")),
    }
}

fn required_str(obj: &Map<String, Value>, key: &str) -> Result<String, String> {
    optional_str(obj, key)?.ok_or_else(|| format!("missing \"{key}\""))
}

/// A number written as a JSON string (the usual form) or a JSON number.
fn number(value: &Value) -> Option<u32> {
    match value {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    }
}

fn string_list(obj: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| v.as_str().map(str::to_string).ok_or_else(|| format!("\"{key}[{i}]\" is not a string")))
            .collect(),
        Some(_) => Err(format!("\"{key}\" is not an array")),
    }
}

fn extensions(obj: &Map<String, Value>, key: &str) -> Result<Vec<LayerExtension>, String> {
    let Some(list) = obj.get(key) else { return Ok(Vec::new()) };
    let list = list.as_array().ok_or_else(|| format!("\"{key}\" is not an array"))?;
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            let e = e.as_object().ok_or_else(|| format!("\"{key}[{i}]\" is not an object"))?;
            let name = required_str(e, "name").map_err(|m| format!("{key}[{i}]: {m}"))?;
            let spec_version = match e.get("spec_version") {
                None => return Err(format!("{key}[{i}]: missing \"spec_version\"")),
                Some(v) => number(v).ok_or_else(|| format!("{key}[{i}]: \"spec_version\" is not a number"))?,
            };
            let entrypoints = string_list(e, "entrypoints").map_err(|m| format!("{key}[{i}]: {m}"))?;
            Ok(LayerExtension { name, spec_version, entrypoints })
        })
        .collect()
}

fn env_condition(obj: &Map<String, Value>, key: &str) -> Result<Option<EnvCondition>, String> {
    let Some(value) = obj.get(key) else { return Ok(None) };
    let map = value.as_object().ok_or_else(|| format!("\"{key}\" is not an object"))?;
    let Some((var, value)) = map.iter().next() else { return Err(format!("\"{key}\" is empty")) };
    let value = value.as_str().ok_or_else(|| format!("\"{key}.{var}\" is not a string"))?;
    Ok(Some(EnvCondition { var: var.clone(), value: value.to_string() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_names_outside_the_naming_policy_are_warned_about() {
        let text = |name: &str| format!(r#"{{"file_format_version":"1.0.0","layer":{{"name":"{name}","type":"GLOBAL","library_path":"libx.so","api_version":"1.3.0","implementation_version":"1","description":"d"}}}}"#);
        let odd = parse_layers(text("Odd_Layer").as_bytes(), "/l/m.json", false).unwrap();
        assert_eq!(odd.layers.len(), 1, "warned about, not rejected");
        assert_eq!(odd.warnings, ["Layer name Odd_Layer does not conform to naming standard (Policy #LLP_LAYER_3)"]);
        assert!(parse_layers(text("VK_LAYER_good").as_bytes(), "/l/m.json", false).unwrap().warnings.is_empty());
    }

    fn one(text: &str, implicit: bool) -> Result<LayerManifest, String> {
        let mut file = parse_layers(text.as_bytes(), "/l/m.json", implicit)?;
        if let Some(e) = file.rejected.pop() {
            return Err(e);
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
            "device_extensions":[{"name":"VK_EXT_debug_marker","spec_version":4,"entrypoints":["vkCmdDebugMarkerEndEXT"]}],
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
        assert!(file.rejected[0].contains("/l/m.json: layers[1]: Layer \"B\" is missing both library_path and component_layers"), "{:?}", file.rejected);
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
                "Layer \"VK_LAYER_M\" contains meta-layer-specific component_layers, but using older JSON file version.",
                "Layer \"VK_LAYER_M\" contains meta-layer-specific override paths, but using older JSON file version."
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
            (base(r#","library_path":"x.so","component_layers":["A"]"#), false, "both"),
            (base(r#","library_path":"x.so""#), true, "disable_environment"),
            (base(r#","library_path":"x.so","library_arch":"16""#), false, "library_arch"),
            (base(r#","library_path":"x.so","instance_extensions":[{"name":"E"}]"#), false, "spec_version"),
            (base(r#","library_path":"x.so","enable_environment":"X""#), false, "enable_environment"),
            (base(r#","library_path":"x.so","functions":{"vkGetInstanceProcAddr":1}"#), false, "vkGetInstanceProcAddr"),
            (r#"{"file_format_version":"1.0.0","layer":{"name":"X","type":"GLOBAL","library_path":"x.so","implementation_version":"1","description":""}}"#.into(), false, "didn't find required layer value \"api_version\""),
            (base(r#","library_path":"x.so""#).replace(r#""implementation_version":"1","#, ""), false, "didn't find required layer value \"implementation_version\""),
            (r#"{"file_format_version":"1.0.0","layer":{"name":"X","type":"WEIRD","library_path":"x.so"}}"#.into(), false, "type"),
        ];
        for (text, implicit, needle) in cases {
            let e = one(&text, implicit).unwrap_err();
            assert!(e.contains(needle) && e.contains("/l/m.json"), "{e:?} should name the file and {needle}");
        }
    }
}
