//! Driver manifests (file_format_version 1.0.0 and 1.0.1; newer ones are read the same way, with a
//! warning): parsed and validated with serde_json; every rejection names the field.

use serde_json::Value;

use crate::platform::file_cache::ParseCache;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriverManifest {
    /// The path as it should be handed to dlopen: absolute, relative to the manifest resolved, or a
    /// bare name for the dynamic linker's search.
    pub library_path: String,
    pub api_version: Option<u32>,
    /// `32` or `64` where the manifest says.
    pub library_arch: Option<String>,
    pub is_portability_driver: bool,
    /// The `file_format_version`, when it is newer than the 1.0.1 this loader knows.
    pub newer_file_format: Option<String>,
}

/// The newest driver manifest format this loader knows.
const KNOWN_FILE_FORMAT: (u32, u32, u32) = (1, 0, 1);

/// Driver manifests as last parsed (see file_cache).
static PARSED: ParseCache<String, Result<DriverManifest, String>> = ParseCache::new();

/// Reads and parses a driver manifest, or reuses its last parse when the file is unchanged.
pub fn read_driver(path: &str) -> Result<DriverManifest, String> {
    let parsed = PARSED.get_manifest(&path.to_string(), path, |text| parse_driver(text, path))?;
    (*parsed).clone()
}

/// Parses a driver manifest's text; `manifest_path` resolves relative library paths.
pub fn parse_driver(text: &[u8], manifest_path: &str) -> Result<DriverManifest, String> {
    let json: Value = serde_json::from_slice(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let version = json
        .get("file_format_version")
        .and_then(Value::as_str)
        .ok_or("missing \"file_format_version\"")?;
    let format = parse_file_format(version).ok_or_else(|| format!("unsupported \"file_format_version\" {version}"))?;
    let newer_file_format = (format > KNOWN_FILE_FORMAT).then(|| format!("{}.{}.{}", format.0, format.1, format.2));
    let icd = json.get("ICD").ok_or("missing \"ICD\" object")?;
    let library = icd.get("library_path").and_then(Value::as_str).ok_or("missing \"ICD.library_path\"")?;
    if library.is_empty() {
        return Err("empty \"ICD.library_path\"".into());
    }
    let api_version = match icd.get("api_version") {
        None => None,
        Some(v) => Some(api_version(v.as_str().ok_or("\"ICD.api_version\" is not a string")?, manifest_path)?),
    };
    let library_arch = icd.get("library_arch").and_then(Value::as_str).map(str::to_string);
    let is_portability_driver = icd.get("is_portability_driver").and_then(Value::as_bool).unwrap_or(false);
    Ok(DriverManifest {
        library_path: resolve_library(library, manifest_path),
        api_version,
        library_arch,
        is_portability_driver,
        newer_file_format,
    })
}

/// `"1.0.1"` -> (1, 0, 1); a missing minor or patch is 0.
fn parse_file_format(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split('.').map(|p| p.trim().parse::<u32>().ok());
    let major = parts.next()??;
    let minor = parts.next().map_or(Some(0), |p| p)?;
    let patch = parts.next().map_or(Some(0), |p| p)?;
    Some((major, minor, patch))
}

/// A driver manifest's `api_version`: `"1.3.250"`, or with the API variant first (`"0.1.3.250"`);
/// a driver for another variant of the API (Vulkan SC) is not for this loader.
fn api_version(text: &str, manifest_path: &str) -> Result<u32, String> {
    let bad = || format!("bad \"ICD.api_version\" {text:?}");
    let parts: Vec<&str> = text.split('.').collect();
    let (variant, rest) = match parts.len() {
        4.. => (parts[0].trim().parse::<u32>().map_err(|_| bad())?, parts[1..].join(".")),
        _ => (0, text.to_string()),
    };
    if variant != 0 {
        // The Khronos loader's words.
        return Err(format!(
            "loader_parse_icd_manifest: Driver's ICD JSON {manifest_path} 'api_version' field contains a non-zero variant value \
             of {variant}.  Skipping ICD JSON."
        ));
    }
    parse_version(&rest).ok_or_else(bad)
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
        assert_eq!(bare.newer_file_format, None);
    }

    #[test]
    fn newer_formats_are_read_and_other_api_variants_rejected() {
        let newer = parse_driver(br#"{"file_format_version":"3.2.1","ICD":{"library_path":"libx.so"}}"#, "/m.json").unwrap();
        assert_eq!(newer.newer_file_format.as_deref(), Some("3.2.1"));
        let with_variant = parse_driver(br#"{"file_format_version":"1.0.0","ICD":{"library_path":"libx.so","api_version":"0.1.2.3"}}"#, "/m.json");
        assert_eq!(with_variant.unwrap().api_version, Some(vk_generated::make_api_version(0, 1, 2, 3)));
        let sc = parse_driver(br#"{"file_format_version":"1.0.0","ICD":{"library_path":"libx.so","api_version":"1.1.0.0"}}"#, "/m.json");
        assert!(sc.unwrap_err().contains("'api_version' field contains a non-zero variant value of 1."));
    }

    #[test]
    fn rejections_name_the_field() {
        let cases: &[(&[u8], &str)] = &[
            (b"{", "invalid JSON"),
            (br#"{"ICD":{}}"#, "file_format_version"),
            (br#"{"file_format_version":"one","ICD":{}}"#, "unsupported"),
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
