//! The layer's JSON manifest, the file the loader discovers a layer by.

use std::path::{Path, PathBuf};

use crate::settings::{names, Setting, SettingType};
use crate::state::{Layer, LayerProperties};

/// `VK_EXT_layer_settings`, which a layer with settings implements (its spec version).
pub const LAYER_SETTINGS_EXTENSION: (&str, u32) = ("VK_EXT_layer_settings", 2);

/// `VK_EXT_tooling_info`, which a layer with tool purposes implements: (name, spec version,
/// entry points).
pub const TOOLING_INFO_EXTENSION: (&str, u32, &[&str]) = (
    "VK_EXT_tooling_info",
    1,
    &["vkGetPhysicalDeviceToolPropertiesEXT"],
);

/// What a layer manifest says about the layer. The optional parts default to empty
/// (`..Manifest::default()`).
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
    /// What the layer does, for people choosing layers.
    pub description: &'a str,
    /// The instance extensions the layer implements.
    pub instance_extensions: &'a [ManifestExtension<'a>],
    /// The device extensions the layer implements, with their entry points.
    pub device_extensions: &'a [ManifestExtension<'a>],
    /// `functions`: entry points exported under other names (`vkGetInstanceProcAddr`,
    /// `vkNegotiateLoaderLayerInterfaceVersion`, ...), as (what, exported name).
    pub functions: &'a [(&'a str, &'a str)],
    /// An implicit layer: its `disable_environment` variable (required) and its
    /// `enable_environment` variable, if any. `None`: an explicit layer.
    pub implicit: Option<(&'a str, Option<&'a str>)>,
    /// `pre_instance_functions` (implicit layers): (`vkEnumerateInstance*`, exported name).
    pub pre_instance_functions: &'a [(&'a str, &'a str)],
    /// The layer's settings, written as `features.settings` for the Vulkan Configurator.
    pub settings: &'a [Setting],
}

/// An extension of a manifest.
#[derive(Debug, Clone, Copy)]
pub struct ManifestExtension<'a> {
    /// `VK_<VENDOR>_<name>`.
    pub name: &'a str,
    /// The extension's `SPEC_VERSION` as the layer implements it.
    pub spec_version: u32,
    /// Device extensions: the commands it adds, which the loader then asks the layer for.
    pub entrypoints: &'a [&'a str],
}

impl Default for Manifest<'_> {
    fn default() -> Self {
        Manifest {
            name: "",
            library_path: Path::new(""),
            api_version: 0,
            implementation_version: 0,
            description: "",
            instance_extensions: &[],
            device_extensions: &[],
            functions: &[],
            implicit: None,
            pre_instance_functions: &[],
            settings: &[],
        }
    }
}

impl<'a> Manifest<'a> {
    /// The manifest of a layer with [`Layer::PROPERTIES`] (`None` without), for its library at
    /// `library_path`, with its [`Layer::SETTINGS`] (and then `VK_EXT_layer_settings` among its
    /// instance extensions). Its extensions are borrowed into `extensions`, which the caller keeps.
    pub fn of<L: Layer>(
        library_path: &'a Path,
        extensions: &'a mut Vec<ManifestExtension<'static>>,
    ) -> Option<Manifest<'a>> {
        let LayerProperties {
            name,
            spec_version,
            implementation_version,
            description,
            instance_extensions,
            device_extensions,
        } = L::PROPERTIES?;
        extensions.clear();
        extensions.extend(instance_extensions.iter().map(|&(name, spec_version)| {
            ManifestExtension {
                name,
                spec_version,
                entrypoints: &[],
            }
        }));
        let (settings_name, settings_version) = LAYER_SETTINGS_EXTENSION;
        if !L::SETTINGS.is_empty() && !extensions.iter().any(|e| e.name == settings_name) {
            extensions.push(ManifestExtension {
                name: settings_name,
                spec_version: settings_version,
                entrypoints: &[],
            });
        }
        let split = extensions.len();
        extensions.extend(
            device_extensions
                .iter()
                .map(|&(name, spec_version, entrypoints)| ManifestExtension {
                    name,
                    spec_version,
                    entrypoints,
                }),
        );
        let (tooling, tooling_version, entrypoints) = TOOLING_INFO_EXTENSION;
        if L::TOOL_PURPOSES.0 != 0 && !extensions[split..].iter().any(|e| e.name == tooling) {
            extensions.push(ManifestExtension {
                name: tooling,
                spec_version: tooling_version,
                entrypoints,
            });
        }
        let (instance, device) = extensions.split_at(split);
        Some(Manifest {
            name,
            library_path,
            api_version: spec_version,
            implementation_version,
            description,
            instance_extensions: instance,
            device_extensions: device,
            settings: L::SETTINGS,
            ..Manifest::default()
        })
    }

    /// The manifest's text (file format 1.2.0, one global layer).
    pub fn to_json(&self) -> String {
        let v = self.api_version;
        let api_version = format!("{}.{}.{}", (v >> 22) & 0x7f, (v >> 12) & 0x3ff, v & 0xfff);
        let mut layer = serde_json::json!({
            "name": self.name,
            "type": "GLOBAL",
            "library_path": self.library_path.to_string_lossy(),
            "api_version": api_version,
            "implementation_version": self.implementation_version.to_string(),
            "description": self.description,
        });
        let extensions = |list: &[ManifestExtension], device: bool| -> serde_json::Value {
            list.iter()
                .map(|e| {
                    let mut v = serde_json::json!({
                        "name": e.name, "spec_version": e.spec_version.to_string()});
                    if device && !e.entrypoints.is_empty() {
                        v["entrypoints"] = serde_json::json!(e.entrypoints);
                    }
                    v
                })
                .collect()
        };
        let map = |pairs: &[(&str, &str)]| -> serde_json::Value {
            pairs
                .iter()
                .map(|&(k, v)| (k.to_string(), serde_json::Value::from(v)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        };
        if !self.instance_extensions.is_empty() {
            layer["instance_extensions"] = extensions(self.instance_extensions, false);
        }
        if !self.device_extensions.is_empty() {
            layer["device_extensions"] = extensions(self.device_extensions, true);
        }
        if !self.functions.is_empty() {
            layer["functions"] = map(self.functions);
        }
        if let Some((disable, enable)) = self.implicit {
            layer["disable_environment"] = serde_json::json!({ disable: "1" });
            if let Some(enable) = enable {
                layer["enable_environment"] = serde_json::json!({ enable: "1" });
            }
        }
        if !self.pre_instance_functions.is_empty() {
            layer["pre_instance_functions"] = map(self.pre_instance_functions);
        }
        if !self.settings.is_empty() {
            let settings: Vec<_> = self
                .settings
                .iter()
                .map(|s| setting_json(self.name, s))
                .collect();
            layer["features"] = serde_json::json!({ "settings": settings });
        }
        let value = serde_json::json!({"file_format_version": "1.2.0", "layer": layer});
        let mut text = serde_json::to_string_pretty(&value).expect("a JSON value serializes");
        text.push('\n');
        text
    }

    /// Writes [`to_json`](Self::to_json) to `path`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_json())
    }
}

/// Writes the manifest of `L` ([`Manifest::of`]) beside its built library `library`, as
/// `<the library's directory>/<the layer's name>.json` naming the library as `./<its file name>`,
/// relative to the manifest (so that the two can be installed together), and returns the manifest's path: that directory is
/// then what `VK_LAYER_PATH` names. An error of kind `InvalidInput` for a layer without
/// [`Layer::PROPERTIES`] or a `library` without a file name.
///
/// Call it where the layer's type can be named: from a test, an `xtask` or a build step of a
/// crate that depends on the layer's (whose `crate-type` is then `["cdylib", "rlib"]`):
///
/// ```no_run
/// # struct MyLayer;
/// # impl vk_layer::Layer for MyLayer {
/// #     type Instance = Objects;
/// #     type Device = Objects;
/// #     const PROPERTIES: Option<vk_layer::LayerProperties> = None;
/// #     fn create_instance(_: &vk_layer::vk::types::VkInstanceCreateInfo, _: vk_layer::vk::types::VkInstance, _: &vk_layer::vk::InstanceDispatchTable, _: &vk_layer::InstanceLink) -> Result<Objects, vk_layer::vk::types::VkResult> { Ok(Objects) }
/// #     fn create_device(_: &Objects, _: vk_layer::vk::types::VkPhysicalDevice, _: &vk_layer::vk::types::VkDeviceCreateInfo, _: vk_layer::vk::types::VkDevice, _: &vk_layer::vk::DeviceDispatchTable, _: &vk_layer::DeviceLink) -> Result<Objects, vk_layer::vk::types::VkResult> { Ok(Objects) }
/// # }
/// # struct Objects;
/// # #[vk_layer::hooks] impl vk_layer::InstanceHooks for Objects {}
/// # #[vk_layer::hooks] impl vk_layer::DeviceHooks for Objects {}
/// let manifest = vk_layer::write_manifest_beside::<MyLayer>(std::path::Path::new(
///     "target/release/libVkLayer_my_layer.so",
/// ))?;
/// // VK_LAYER_PATH=target/release VK_INSTANCE_LAYERS=VK_LAYER_ME_my_layer my-application
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_manifest_beside<L: Layer>(library: &Path) -> std::io::Result<PathBuf> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    let file = library
        .file_name()
        .ok_or_else(|| invalid("the layer's library path names no file"))?;
    // `./`: relative to the manifest; a bare file name is searched where `dlopen` searches.
    let file = Path::new(".").join(file);
    let mut extensions = Vec::new();
    let manifest = Manifest::of::<L>(&file, &mut extensions)
        .ok_or_else(|| invalid("a layer without Layer::PROPERTIES has no manifest to write"))?;
    let path = library
        .parent()
        .unwrap_or(Path::new(""))
        .join(format!("{}.json", manifest.name));
    manifest.write(&path)?;
    Ok(path)
}

/// One entry of `features.settings`, as the Vulkan Configurator reads it.
fn setting_json(layer: &str, setting: &Setting) -> serde_json::Value {
    let (ty, default) = match setting.default {
        SettingType::Bool(v) => ("BOOL", serde_json::json!(v)),
        SettingType::Int(v) => ("INT", serde_json::json!(v)),
        SettingType::String(v) => ("STRING", serde_json::json!(v)),
        SettingType::SaveFile(v) => ("SAVE_FILE", serde_json::json!(v)),
        SettingType::List(v) => (
            "LIST",
            v.iter()
                .map(|item| serde_json::json!({"key": item, "enabled": true}))
                .collect(),
        ),
    };
    let [env, _] = names::env_names(layer, setting.key);
    serde_json::json!({
        "key": setting.key,
        "env": env,
        "label": setting.label,
        "description": setting.description,
        "type": ty,
        "default": default,
    })
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
            ..Manifest::default()
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

#[cfg(test)]
mod optional_parts {
    use super::*;

    #[test]
    fn extensions_functions_and_implicit_environment() {
        let manifest = Manifest {
            name: "VK_LAYER_TEST_all",
            library_path: Path::new("libx.so"),
            api_version: vk_generated::make_api_version(0, 1, 3, 0),
            implementation_version: 1,
            description: "d",
            instance_extensions: &[ManifestExtension {
                name: "VK_EXT_i",
                spec_version: 2,
                entrypoints: &[],
            }],
            device_extensions: &[ManifestExtension {
                name: "VK_EXT_d",
                spec_version: 3,
                entrypoints: &["vkX"],
            }],
            functions: &[("vkGetInstanceProcAddr", "X_Gipa")],
            implicit: Some(("DISABLE_X", Some("ENABLE_X"))),
            pre_instance_functions: &[("vkEnumerateInstanceVersion", "X_Version")],
            settings: &[
                Setting {
                    key: "file",
                    label: "Output file",
                    description: "where",
                    default: SettingType::SaveFile(""),
                    env_aliases: &[],
                },
                Setting {
                    key: "commands",
                    label: "Commands",
                    description: "which",
                    default: SettingType::List(&["*"]),
                    env_aliases: &[],
                },
            ],
        };
        let value: serde_json::Value = serde_json::from_str(&manifest.to_json()).unwrap();
        let layer = &value["layer"];
        assert_eq!(
            layer["instance_extensions"],
            serde_json::json!([{"name": "VK_EXT_i", "spec_version": "2"}])
        );
        assert_eq!(
            layer["device_extensions"],
            serde_json::json!([{"name": "VK_EXT_d", "spec_version": "3", "entrypoints": ["vkX"]}])
        );
        assert_eq!(
            layer["functions"],
            serde_json::json!({"vkGetInstanceProcAddr": "X_Gipa"})
        );
        assert_eq!(
            layer["disable_environment"],
            serde_json::json!({"DISABLE_X": "1"})
        );
        assert_eq!(
            layer["enable_environment"],
            serde_json::json!({"ENABLE_X": "1"})
        );
        assert_eq!(
            layer["pre_instance_functions"],
            serde_json::json!({"vkEnumerateInstanceVersion": "X_Version"})
        );
        assert_eq!(
            layer["features"]["settings"],
            serde_json::json!([
                {"key": "file", "env": "VK_TEST_ALL_FILE", "label": "Output file", "description": "where",
                 "type": "SAVE_FILE", "default": ""},
                {"key": "commands", "env": "VK_TEST_ALL_COMMANDS", "label": "Commands", "description": "which",
                 "type": "LIST", "default": [{"key": "*", "enabled": true}]},
            ])
        );
    }
}
