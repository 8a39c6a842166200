//! Driver manifests (file_format_version 1.0.0 and 1.0.1; newer ones are read the same way, with a
//! warning): read as the Khronos loader reads them (`manifest::json`: cJSON's tolerances, the first
//! of a key given twice) and validated field by field as its `loader_parse_icd_manifest` does;
//! every rejection names the field.

use std::ffi::OsStr;

use crate::debug::log::Level;
use crate::manifest::json::{self, Json};
use crate::platform::file_cache::ParseCache;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DriverManifest {
    /// The path as it should be handed to dlopen: absolute, relative to the manifest resolved, or a
    /// bare name for the dynamic linker's search.
    pub library_path: String,
    /// `None` where the manifest's `api_version` is not a string: a 1.0 driver, as for the
    /// Khronos loader (a manifest without one is refused).
    pub api_version: Option<u32>,
    /// `32` or `64` where the manifest's `library_arch` starts so (see [`library_arch`]).
    pub library_arch: Option<String>,
    pub is_portability_driver: bool,
    /// The `file_format_version`, when it is newer than the 1.0.1 this loader knows.
    pub newer_file_format: Option<String>,
}

/// The newest driver manifest format this loader knows.
const KNOWN_FILE_FORMAT: (u32, u32, u32) = (1, 0, 1);

/// Driver manifests as last parsed (see file_cache).
static PARSED: ParseCache<Result<DriverManifest, String>> = ParseCache::new();

/// Reads and parses a driver manifest, or reuses its last parse when the file is unchanged.
pub fn read_driver(path: &str) -> Result<DriverManifest, String> {
    read_driver_file(OsStr::new(path), path)
}

/// [`read_driver`] of the file `file`, named `path` in logs and relative library paths: the two
/// differ where a name in the path is not UTF-8 (see `discover::search::Found`).
pub fn read_driver_file(file: &OsStr, path: &str) -> Result<DriverManifest, String> {
    let parsed = PARSED.get_manifest(path, file, |text| parse_driver(text, path))?;
    let manifest = (*parsed).clone()?;
    // The Khronos loader's words, at its level.
    log!(Level::Debug, "Searching for ICD drivers named {}", manifest.library_path);
    Ok(manifest)
}

/// Parses a driver manifest's text; `manifest_path` resolves relative library paths.
pub fn parse_driver(text: &[u8], manifest_path: &str) -> Result<DriverManifest, String> {
    let json = json::parse(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let version = json.get("file_format_version").ok_or("missing \"file_format_version\"")?;
    let version = version.as_str().ok_or("\"file_format_version\" is not a string")?;
    let format = parse_file_format(version).ok_or_else(|| format!("unsupported \"file_format_version\" {version}"))?;
    let newer_file_format = (format > KNOWN_FILE_FORMAT).then(|| format!("{}.{}.{}", format.0, format.1, format.2));
    let icd = json.get("ICD").ok_or("missing \"ICD\" object")?;
    let library = icd.get("library_path").ok_or("missing \"ICD.library_path\"")?;
    // The Khronos loader prints any other value as text and asks dlopen for that (`7`, `true`):
    // no library is found either way.
    let library = library.as_str().ok_or("\"ICD.library_path\" is not a string")?;
    if library.is_empty() {
        return Err("empty \"ICD.library_path\"".into());
    }
    let api_version = match icd.get("api_version") {
        // The Khronos loader's words (1.3.239 and 1.4.360 alike skip such a driver).
        None => {
            return Err(format!(
                "loader_parse_icd_manifest: ICD JSON {manifest_path} does not have an 'api_version' field. Skipping ICD JSON."
            ))
        }
        Some(Json::String(text)) => Some(api_version(text, manifest_path)?),
        Some(_) => {
            // The Khronos loader (1.4.360) fails to read it and goes on with the driver, as
            // version 0: a 1.0 driver.
            log!(Level::WarnDriver, "{manifest_path}: \"ICD.api_version\" is not a string: the driver is taken for a Vulkan 1.0 driver");
            None
        }
    };
    let library_arch = library_arch(icd);
    let is_portability_driver = icd.get("is_portability_driver").is_some_and(Json::is_true);
    Ok(DriverManifest {
        library_path: resolve_library(library, manifest_path),
        api_version,
        library_arch,
        is_portability_driver,
        newer_file_format,
    })
}

/// A manifest's `library_arch` as the Khronos loader reads it: any string is accepted, and only
/// one starting with `32` or `64` names an architecture (`strncmp(arch, "64", 2)`).
pub(crate) fn library_arch(object: &Json) -> Option<String> {
    let arch = object.get("library_arch")?.as_str()?;
    ["32", "64"].into_iter().find(|bits| arch.starts_with(bits)).map(str::to_string)
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
        let bare = parse_driver(br#"{"file_format_version":"1.0.0","ICD":{"library_path":"libx.so","api_version":"1.0"}}"#, "/a/b.json").unwrap();
        assert_eq!(bare.library_path, "libx.so");
        assert_eq!(bare.newer_file_format, None);
    }

    #[test]
    fn newer_formats_are_read_and_other_api_variants_rejected() {
        let newer = parse_driver(br#"{"file_format_version":"3.2.1","ICD":{"library_path":"libx.so","api_version":"1.0"}}"#, "/m.json").unwrap();
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
            (br#"{"file_format_version":"1.0.0","ICD":{"library_path":"x.so"}}"#, "does not have an 'api_version' field. Skipping ICD JSON."),
            (br#"{"file_format_version":"1.0.0","ICD":{"library_path":7,"api_version":"1.0"}}"#, "\"ICD.library_path\" is not a string"),
            (br#"{"file_format_version":1,"ICD":{"library_path":"x.so","api_version":"1.0"}}"#, "\"file_format_version\" is not a string"),
            (b"\xEF\xBB\xBF", "invalid JSON"),
        ];
        for (text, needle) in cases {
            let e = parse_driver(text, "/m.json").unwrap_err();
            assert!(e.contains(needle), "{e} should mention {needle}");
        }
    }

    const GOOD: &str = r#"{"file_format_version":"1.0.1","ICD":{"library_path":"/d/libx.so","api_version":"1.3.0"}}"#;

    #[test]
    fn read_as_the_khronos_loader_reads_json() {
        let expected = parse_driver(GOOD.as_bytes(), "/m.json").unwrap();
        let bom = [b"\xEF\xBB\xBF".as_slice(), GOOD.as_bytes()].concat();
        let trailing_text = format!("{GOOD}\nthis is not JSON");
        let trailing_nul = [GOOD.as_bytes(), b"\0"].concat();
        let second_value = format!("{GOOD}{GOOD}");
        for text in [&bom[..], trailing_text.as_bytes(), &trailing_nul, second_value.as_bytes()] {
            assert_eq!(parse_driver(text, "/m.json").as_ref(), Ok(&expected), "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn the_first_of_a_key_given_twice_is_taken() {
        let twice = r#"{"file_format_version":"1.0.1","ICD":{"library_path":"/d/first.so","LIBRARY_PATH":"/d/second.so","api_version":"1.3.0"},
            "ICD":{"library_path":"/d/third.so","api_version":"1.0.0"}}"#;
        let m = parse_driver(twice.as_bytes(), "/m.json").unwrap();
        assert_eq!(m.library_path, "/d/first.so");
        assert_eq!(m.api_version, Some(vk_generated::make_api_version(0, 1, 3, 0)));
        // Keys match whatever their case, as cJSON's lookup.
        let cased = r#"{"File_Format_Version":"1.0.0","icd":{"Library_Path":"libx.so","API_VERSION":"1.2"}}"#;
        assert_eq!(parse_driver(cased.as_bytes(), "/m.json").unwrap().library_path, "libx.so");
    }

    #[test]
    fn fields_are_read_with_the_khronos_loaders_types() {
        let icd = |fields: &str| parse_driver(format!(r#"{{"file_format_version":"1.0.0","ICD":{{"library_path":"libx.so"{fields}}}}}"#).as_bytes(), "/m.json");
        // api_version not a string: the driver is used, as a 1.0 driver (version 0 there).
        assert_eq!(icd(r#","api_version":13"#).unwrap().api_version, None);
        // is_portability_driver: only JSON true.
        assert!(icd(r#","api_version":"1.0","is_portability_driver":true"#).unwrap().is_portability_driver);
        for other in ["\"true\"", "1"] {
            assert!(!icd(&format!(r#","api_version":"1.0","is_portability_driver":{other}"#)).unwrap().is_portability_driver);
        }
        // library_arch: any string; only a leading 32 or 64 names an architecture.
        for (arch, read) in [("\"64\"", Some("64")), ("\"32\"", Some("32")), ("\"64-bit\"", Some("64")), ("\"x86\"", None), ("64", None)] {
            assert_eq!(icd(&format!(r#","api_version":"1.0","library_arch":{arch}"#)).unwrap().library_arch.as_deref(), read, "{arch}");
        }
    }
}
