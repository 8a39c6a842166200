//! Driver manifests (file_format_version 1.0.0 and 1.0.1): parsed and validated with serde_json;
//! every rejection names the field.

use serde_json::Value;

use crate::file_cache::ParseCache;

#[derive(Debug, Clone, PartialEq)]
pub struct DriverManifest {
    /// The path as it should be handed to dlopen: absolute, relative to the manifest resolved, or a
    /// bare name for the dynamic linker's search.
    pub library_path: String,
    pub api_version: Option<u32>,
    /// `32` or `64` where the manifest says.
    pub library_arch: Option<String>,
    pub is_portability_driver: bool,
}

/// Driver manifests as last parsed (see file_cache).
static PARSED: ParseCache<String, Result<DriverManifest, String>> = ParseCache::new();

/// Reads and parses a driver manifest, or reuses its last parse when the file is unchanged.
pub fn read_driver(path: &str) -> Result<DriverManifest, String> {
    let parsed = PARSED.get(&path.to_string(), path, |text| parse_driver(text, path))?;
    (*parsed).clone()
}

/// Parses a driver manifest's text; `manifest_path` resolves relative library paths.
pub fn parse_driver(text: &[u8], manifest_path: &str) -> Result<DriverManifest, String> {
    let json: Value = serde_json::from_slice(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let version = json
        .get("file_format_version")
        .and_then(Value::as_str)
        .ok_or("missing \"file_format_version\"")?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(1)), Some(Ok(0))) => {}
        (Some(Ok(1)), Some(Ok(_))) => {} // newer minor versions stay compatible
        _ => return Err(format!("unsupported \"file_format_version\" {version}")),
    }
    let icd = json.get("ICD").ok_or("missing \"ICD\" object")?;
    let library = icd.get("library_path").and_then(Value::as_str).ok_or("missing \"ICD.library_path\"")?;
    if library.is_empty() {
        return Err("empty \"ICD.library_path\"".into());
    }
    let api_version = match icd.get("api_version") {
        None => None,
        Some(v) => Some(parse_version(v.as_str().ok_or("\"ICD.api_version\" is not a string")?)
            .ok_or_else(|| format!("bad \"ICD.api_version\" {v}"))?),
    };
    let library_arch = icd.get("library_arch").and_then(Value::as_str).map(str::to_string);
    let is_portability_driver = icd.get("is_portability_driver").and_then(Value::as_bool).unwrap_or(false);
    Ok(DriverManifest { library_path: resolve_library(library, manifest_path), api_version, library_arch, is_portability_driver })
}

/// `"1.3.250"` -> `VK_MAKE_API_VERSION(0, 1, 3, 250)`.
pub fn parse_version(text: &str) -> Option<u32> {
    let mut parts = text.split('.').map(|p| p.trim().parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().flatten().unwrap_or(0);
    let patch = parts.next().flatten().unwrap_or(0);
    Some(vk_generated::make_api_version(0, major, minor, patch))
}

/// Absolute paths stay; paths with a `/` are relative to the manifest's directory; bare names go to
/// the dynamic linker's search.
pub(crate) fn resolve_library(library: &str, manifest_path: &str) -> String {
    if library.starts_with('/') || !library.contains('/') {
        return library.to_string();
    }
    let dir = manifest_path.rsplit_once('/').map(|(d, _)| d).unwrap_or(".");
    format!("{dir}/{library}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_resolves() {
        let text = br#"{"file_format_version":"1.0.1","ICD":{"library_path":"./libx.so","api_version":"1.3.200","library_arch":"64","is_portability_driver":true}}"#;
        let m = parse_driver(text, "/etc/vulkan/icd.d/x.json").unwrap();
        assert_eq!(m.library_path, "/etc/vulkan/icd.d/./libx.so");
        assert_eq!(m.api_version, Some(vk_generated::make_api_version(0, 1, 3, 200)));
        assert!(m.is_portability_driver);
        let bare = parse_driver(br#"{"file_format_version":"1.0.0","ICD":{"library_path":"libx.so"}}"#, "/a/b.json").unwrap();
        assert_eq!(bare.library_path, "libx.so");
    }

    #[test]
    fn rejections_name_the_field() {
        let cases: &[(&[u8], &str)] = &[
            (b"{", "invalid JSON"),
            (br#"{"ICD":{}}"#, "file_format_version"),
            (br#"{"file_format_version":"2.0.0","ICD":{}}"#, "unsupported"),
            (br#"{"file_format_version":"1.0.0"}"#, "\"ICD\""),
            (br#"{"file_format_version":"1.0.0","ICD":{"api_version":"1.0"}}"#, "library_path"),
            (br#"{"file_format_version":"1.0.0","ICD":{"library_path":"x.so","api_version":"x"}}"#, "api_version"),
        ];
        for (text, needle) in cases {
            let e = parse_driver(text, "/m.json").unwrap_err();
            assert!(e.contains(needle), "{e} should mention {needle}");
        }
    }
}
