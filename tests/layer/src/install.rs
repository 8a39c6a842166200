//! Helpers for tests and benchmarks that need several distinct copies of this layer: each copy is
//! a separate file (so `dlopen` maps it separately, with its own state) with its own manifest and
//! layer name. Plain Rust functions: nothing here is exported from the cdylib.

use std::path::{Path, PathBuf};

/// One installed copy.
pub struct InstalledLayer {
    pub name: String,
    pub manifest: PathBuf,
    pub library: PathBuf,
}

/// Copies `library` (the built `libvk_test_layer.so`) into `dir` as `libvk_test_layer_<tag>.so`
/// and writes `dir/<tag>.json` naming it `VK_LAYER_TEST_<tag>`; `extra` is more JSON members for
/// the manifest's `layer` object, starting with a comma (or empty).
pub fn install(library: &Path, dir: &Path, tag: &str, extra: &str) -> std::io::Result<InstalledLayer> {
    let copy = dir.join(format!("libvk_test_layer_{tag}.so"));
    std::fs::copy(library, &copy)?;
    let name = format!("VK_LAYER_TEST_{tag}");
    let manifest = dir.join(format!("{tag}.json"));
    let text = format!(
        r#"{{"file_format_version": "1.2.0", "layer": {{"name": "{name}", "type": "GLOBAL", "library_path": "{}",
            "api_version": "1.4.0", "implementation_version": "1", "description": "test layer {name}"{extra}}}}}"#,
        copy.display()
    );
    std::fs::write(&manifest, text)?;
    Ok(InstalledLayer { name, manifest, library: copy })
}

/// `count` pass-through copies tagged `pt0`, `pt1`, ...: enable them with `VK_LAYER_PATH=dir` and
/// their names (in order, top of the chain first) in `ppEnabledLayerNames`.
pub fn install_pass_through(library: &Path, dir: &Path, count: usize) -> std::io::Result<Vec<InstalledLayer>> {
    (0..count).map(|i| install(library, dir, &format!("pt{i}"), "")).collect()
}
