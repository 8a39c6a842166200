//! Entry points for the fuzz targets in `fuzz/` (`cargo xtask fuzz`): the parsers that read what
//! anyone can drop into a search path or set in the environment, fed arbitrary bytes. Each one
//! returns normally for any input; a panic, a hang or an out-of-bounds access is a bug. Not part
//! of the Vulkan API.

use crate::manifest::{self, settings};
use crate::plan;
use crate::platform::elf;

/// A driver manifest (every `file_format_version`, `library_path` resolution, `api_version`).
pub fn driver_manifest(data: &[u8]) {
    let _ = manifest::driver::parse_driver(data, "/fuzz/icd.d/driver.json");
}

/// A library's first bytes as the ELF pre-check reads them: the first 8 bytes of `data` give the
/// file's size, the rest its header; then `data` as a `library_path` for the token check.
pub fn elf_header(data: &[u8]) {
    let (size, header) = data.split_at(data.len().min(8));
    let mut size_bytes = [0u8; 8];
    size_bytes[..size.len()].copy_from_slice(size);
    let _ = elf::check_bytes(header, u64::from_le_bytes(size_bytes));
    let _ = elf::names_the_file(&String::from_utf8_lossy(data));
}

/// Layer selection end to end, without the file system: `data` is a layer manifest, then after a
/// NUL byte the environment as `NAME=VALUE` lines (`VK_INSTANCE_LAYERS`, the
/// `VK_LOADER_LAYERS_*` filters, the layers' enable and disable variables), where the line
/// `APP=a,b` lists the application's layers and `EXE=path` names the executable (override layer
/// `app_keys`). The manifest is read as explicit and as implicit; the catalog is validated (meta
/// layers, duplicates, the override layer's blacklist), the layers `VK_LOADER_LAYERS_DISABLE`
/// turns off removed, and the layers activated.
pub fn layer_activation(data: &[u8]) {
    let (manifest_text, environment) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], String::from_utf8_lossy(&data[i + 1..]).into_owned()),
        None => (data, String::new()),
    };
    let vars: Vec<(&str, &str)> = environment.lines().filter_map(|l| l.split_once('=')).collect();
    let var = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    let mut layers = Vec::new();
    for implicit in [false, true] {
        if let Ok(parsed) = manifest::layer::parse_layers(manifest_text, "/fuzz/layer.json", implicit) {
            layers.extend(parsed.layers);
        }
    }
    let blacklist: Vec<String> = layers.iter().flat_map(|l| l.blacklisted_layers.iter().cloned()).collect();
    let (catalog, _log) = plan::layers::validate_catalog(layers, &blacklist);
    let (catalog, _log) = plan::layers::remove_disabled(catalog, &var);
    let app_list = var("APP").unwrap_or_default();
    let app: Vec<&str> = app_list.split(',').filter(|n| !n.is_empty()).collect();
    let exe = var("EXE");
    let _ = plan::layers::activate(&catalog, &app, &var, exe.as_deref());
}

/// A loader settings file (`vk_loader_settings.json`): the entry `app_keys` choose (the
/// executable is `/fuzz/app`), its layers, log filters, drivers and device configurations.
pub fn settings_file(data: &[u8]) {
    if let Ok(Some(parsed)) = settings::parse(data, "/fuzz/vk_loader_settings.json", Some("/fuzz/app")) {
        let _ = parsed.with_additional_drivers(vec!["/fuzz/icd.d/driver.json".to_string()]);
    }
}

/// A driver cache file (`cache::record`): refused or decoded, never a panic; what decodes
/// encodes back to the same entries.
pub fn driver_cache(data: &[u8]) {
    if let Ok(entries) = crate::cache::record::decode(data) {
        let again = crate::cache::record::decode(&crate::cache::record::encode(&entries));
        assert!(again.is_ok_and(|e| e.len() == entries.len()), "a decoded cache file does not survive a round trip");
    }
}

/// A valid driver cache file with two entries (one with a recorded physical device), a seed for the fuzzer and the corpus test.
pub fn driver_cache_seed() -> Vec<u8> {
    let entry = |path: &str, devices: Vec<(u64, u32, String)>| crate::cache::record::Entry {
        manifest_path: path.into(),
        key: [1, 2, 3, 4, 5, 6],
        written: 1_764_000_000,
        library_resolved: "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so".into(),
        interface_version: 5,
        instance_version: Some(vk_generated::make_api_version(0, 1, 3, 230)),
        extensions: crate::cache::extension_list::ExtensionList::from_pairs([(&b"VK_KHR_surface"[..], 25), (b"VK_KHR_xcb_surface", 6)]),
        inputs: vec![("$HOME".into(), 7), ("/etc/drirc".into(), 0)],
        profiles: crate::cache::profile::Profiles::from_list(
            devices
                .iter()
                .filter(|&&(_, n, _)| n > 0)
                .map(|&(application, n, _)| crate::cache::profile::Profile {
                    application,
                    devices: (0..n).map(|i| crate::cache::profile::DeviceAnswers::from_pairs([(i as u64, vec![1, 2, 3]), (9, vec![])])).collect(),
                    groups: Some(vec![(vec![0], 0)]),
                })
                .collect(),
        ),
        devices,
    };
    crate::cache::record::encode(&[entry("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json", vec![(7, 1, "/usr/bin/vulkaninfo".into())]), entry("/usr/share/vulkan/icd.d/radeon_icd.x86_64.json", vec![(7, 0, "/usr/bin/vulkaninfo".into())])])
}
