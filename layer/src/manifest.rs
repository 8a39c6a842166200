//! The layer's JSON manifest, the file the loader discovers a layer by.

use std::path::Path;

/// What a layer manifest says about the layer.
#[derive(Debug, Clone)]
pub struct Manifest<'a> {
    /// `VK_LAYER_<VENDOR>_<name>`.
    pub name: &'a str,
    /// The layer library: a file name (searched beside the manifest), or a path.
    pub library_path: &'a Path,
    /// The Vulkan version the layer was written against, as `VK_MAKE_API_VERSION` packs it.
    pub api_version: u32,
    /// The layer's own version.
    pub implementation_version: u32,
    pub description: &'a str,
}

impl Manifest<'_> {
    /// The manifest's text (file format 1.2.0, one global layer).
    pub fn to_json(&self) -> String {
        let v = self.api_version;
        let api_version = format!("{}.{}.{}", (v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff);
        let value = serde_json::json!({
            "file_format_version": "1.2.0",
            "layer": {
                "name": self.name,
                "type": "GLOBAL",
                "library_path": self.library_path.to_string_lossy(),
                "api_version": api_version,
                "implementation_version": self.implementation_version.to_string(),
                "description": self.description,
            }
        });
        let mut text = serde_json::to_string_pretty(&value).expect("a JSON value serializes");
        text.push('\n');
        text
    }

    /// Writes [`to_json`](Self::to_json) to `path`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names_the_layer_library_and_versions() {
        let dir = std::env::temp_dir().join(format!("vk-layer-manifest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("layer.json");
        let manifest = Manifest {
            name: "VK_LAYER_TEST_sdk",
            library_path: Path::new("/opt/lib \"x\"/libsdk.so"),
            api_version: vk_generated::make_api_version(0, 1, 4, 342),
            implementation_version: 3,
            description: "a test",
        };
        manifest.write(&path).unwrap();
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"file_format_version": "1.2.0", "layer": {
                "name": "VK_LAYER_TEST_sdk", "type": "GLOBAL", "library_path": "/opt/lib \"x\"/libsdk.so",
                "api_version": "1.4.342", "implementation_version": "3", "description": "a test"}})
        );
    }
}
