//! Layer settings by the Khronos conventions (the layer-settings library of
//! Vulkan-Utility-Libraries, LunarG's guide to configuring layers): a layer declares its settings
//! once ([`Layer::SETTINGS`]: key, type, default, description) and reads
//! typed values ([`Settings::of`]) from three channels, the first that has a value winning:
//!
//! 1. the environment: `VK_<LAYER NAME WITHOUT VK_LAYER_>_<SETTING>`, then the vendor-trimmed
//!    `VK_<NAME WITHOUT VENDOR>_<SETTING>`, then the setting's own aliases ([`names`]);
//! 2. `vk_layer_settings.txt` ([`file`](mod@file)): `<layer name without VK_LAYER_, lower case>.<setting>`;
//! 3. the application's `VkLayerSettingsCreateInfoEXT` at `vkCreateInstance` ([`api`]);
//!
//! and the declared default otherwise. A value that does not parse as the setting's type is
//! logged (naming the layer, the setting, the channel and the value) and the default used.

pub mod api;
pub mod file;
pub mod names;
mod parse;

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::io::Write;

use vk_generated::types::VkInstanceCreateInfo;

use crate::state::Layer;

/// A setting a layer declares.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// The setting's key (`file`), as in `vk_layer_settings.txt` after the layer's part.
    pub key: &'static str,
    /// A short name for the Vulkan Configurator.
    pub label: &'static str,
    /// What the setting does, for the Vulkan Configurator.
    pub description: &'static str,
    /// The type, with the default value.
    pub default: SettingType,
    /// More environment variables read after the conventional two (an older name).
    pub env_aliases: &'static [&'static str],
}

/// A setting's type and its default value.
#[derive(Clone, Copy, Debug)]
pub enum SettingType {
    /// `true`/`false`, `on`/`off` or a number (non-zero is true); `VK_LAYER_SETTING_TYPE_BOOL32_EXT`.
    Bool(bool),
    /// Decimal or `0x` hexadecimal; the API's 32- and 64-bit integer types.
    Int(i64),
    /// Any text; `VK_LAYER_SETTING_TYPE_STRING_EXT`.
    String(&'static str),
    /// A path the layer writes (the Configurator offers a save dialog); as `String`.
    SaveFile(&'static str),
    /// Items separated by `,` (or `:` when there is no `,`); the API's array of strings.
    List(&'static [&'static str]),
}

/// A setting's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A `Bool` setting.
    Bool(bool),
    /// An `Int` setting.
    Int(i64),
    /// `String` and `SaveFile` settings.
    String(String),
    /// A `List` setting.
    List(Vec<String>),
}

/// Where a value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The declared default (no channel had a value, or the one that had could not be read).
    Default,
    /// `VkLayerSettingsCreateInfoEXT`.
    Api,
    /// `vk_layer_settings.txt`.
    File,
    /// This environment variable.
    Environment(String),
}

/// A value as a channel gives it, before it is read as the setting's type.
#[derive(Clone, Debug)]
pub enum Raw {
    /// The environment's and the settings file's text.
    Text(String),
    /// `VK_LAYER_SETTING_TYPE_BOOL32_EXT` values.
    Bools(Vec<bool>),
    /// The API's integer types' values (`INT32`, `INT64`, `UINT32`, `UINT64`).
    Ints(Vec<i128>),
    /// `VK_LAYER_SETTING_TYPE_STRING_EXT` values.
    Strings(Vec<String>),
}

/// A layer's settings, resolved.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    values: Vec<(&'static str, Value, Source)>,
}

impl Settings {
    /// The settings of layer `L` ([`Layer::SETTINGS`], under the name of
    /// its [`Layer::PROPERTIES`]) for an instance created with `info`:
    /// the process's environment, the settings file found from it, and `info`'s `pNext` chain.
    pub fn of<L: Layer>(info: &VkInstanceCreateInfo) -> Settings {
        let Some(properties) = L::PROPERTIES else {
            if !L::SETTINGS.is_empty() {
                log(
                    "a layer",
                    "settings need Layer::PROPERTIES (the layer's name); using the defaults",
                );
            }
            return Settings::read(
                "",
                L::SETTINGS,
                std::ptr::null(),
                &|_| None,
                &BTreeMap::new(),
            );
        };
        let layer = properties.name;
        let file = if L::SETTINGS.is_empty() {
            None
        } else {
            file::find_here()
        };
        let values = match file.as_ref().map(|path| (path, std::fs::read(path))) {
            Some((path, Ok(bytes))) => {
                let (values, malformed) = file::parse(&String::from_utf8_lossy(&bytes));
                for line in malformed {
                    log(
                        layer,
                        &format!("{}:{line}: not `key = value`; line ignored", path.display()),
                    );
                }
                values
            }
            Some((path, Err(e))) => {
                log(layer, &format!("cannot read {}: {e}", path.display()));
                BTreeMap::new()
            }
            None => BTreeMap::new(),
        };
        let env = |name: &str| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned());
        Settings::read(layer, L::SETTINGS, info.pNext, &env, &values)
    }

    /// The settings `declared` of `layer` from the environment (`env`), the settings file's pairs
    /// (`file`) and a `vkCreateInstance` `pNext` chain (`p_next`, may be null).
    pub fn read(
        layer: &str,
        declared: &[Setting],
        p_next: *const c_void,
        env: &dyn Fn(&str) -> Option<String>,
        file: &BTreeMap<String, String>,
    ) -> Settings {
        let values = declared
            .iter()
            .map(|setting| {
                let (value, source) = resolve(layer, setting, p_next, env, file);
                (setting.key, value, source)
            })
            .collect();
        Settings { values }
    }

    /// A setting's value and where it came from; `None` for a key the layer did not declare.
    pub fn get(&self, key: &str) -> Option<(&Value, &Source)> {
        self.values
            .iter()
            .find(|(k, ..)| *k == key)
            .map(|(_, v, s)| (v, s))
    }

    /// A `Bool` setting's value (false for an undeclared key or another type).
    pub fn bool(&self, key: &str) -> bool {
        matches!(self.get(key), Some((Value::Bool(true), _)))
    }

    /// An `Int` setting's value (0 for an undeclared key or another type).
    pub fn int(&self, key: &str) -> i64 {
        match self.get(key) {
            Some((Value::Int(v), _)) => *v,
            _ => 0,
        }
    }

    /// A `String` or `SaveFile` setting's value ("" for an undeclared key or another type).
    pub fn string(&self, key: &str) -> &str {
        match self.get(key) {
            Some((Value::String(v), _)) => v,
            _ => "",
        }
    }

    /// A `List` setting's items (none for an undeclared key or another type).
    pub fn list(&self, key: &str) -> &[String] {
        match self.get(key) {
            Some((Value::List(v), _)) => v,
            _ => &[],
        }
    }
}

/// One setting's value: the environment, the file, the API, the default, in that order.
fn resolve(
    layer: &str,
    setting: &Setting,
    p_next: *const c_void,
    env: &dyn Fn(&str) -> Option<String>,
    file: &BTreeMap<String, String>,
) -> (Value, Source) {
    let default = || (parse::default_value(setting.default), Source::Default);
    let from_env = names::env_names(layer, setting.key)
        .into_iter()
        .chain(setting.env_aliases.iter().map(|a| a.to_string()))
        .find_map(|name| {
            env(&name)
                .filter(|v| !v.is_empty())
                .map(|v| (Raw::Text(v), Source::Environment(name)))
        });
    let found = from_env
        .or_else(|| {
            file.get(&names::file_key(layer, setting.key))
                .map(|v| (Raw::Text(v.clone()), Source::File))
        })
        .map(Ok)
        .or_else(|| {
            // SAFETY: the application's chain, per the API (`Settings::read`'s caller's).
            unsafe { api::find(p_next, layer, setting.key) }
                .map(|found| found.map(|raw| (raw, Source::Api)))
        });
    match found {
        None => default(),
        Some(Err(why)) => {
            log(
                layer,
                &format!(
                    "setting {}: VkLayerSettingsCreateInfoEXT: {why}; using the default",
                    setting.key
                ),
            );
            default()
        }
        Some(Ok((raw, source))) => match parse::value(setting.default, &raw) {
            Ok(value) => (value, source),
            Err(why) => {
                log(
                    layer,
                    &format!(
                        "setting {} from {}: {why}; using the default",
                        setting.key,
                        describe(&source)
                    ),
                );
                default()
            }
        },
    }
}

fn describe(source: &Source) -> String {
    match source {
        Source::Default => "the default".into(),
        Source::Api => "VkLayerSettingsCreateInfoEXT".into(),
        Source::File => file::FILE_NAME.into(),
        Source::Environment(name) => name.clone(),
    }
}

/// A line on stderr about `layer`'s settings (never a panic: a closed stderr loses the line).
fn log(layer: &str, message: &str) {
    let _ = writeln!(std::io::stderr(), "[vk-layer] {layer}: {message}");
}

#[cfg(test)]
mod tests;
