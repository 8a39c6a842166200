//! Precedence of the channels, typed reading, and bad values falling back to the default.

use std::collections::BTreeMap;
use std::ffi::{c_void, CString};

use vk_generated::types::*;

use super::*;

const LAYER: &str = "VK_LAYER_ACME_probe";
const DECLARED: &[Setting] = &[
    Setting {
        key: "file",
        label: "File",
        description: "",
        default: SettingType::SaveFile("out.txt"),
        env_aliases: &["ACME_PROBE_FILE"],
    },
    Setting {
        key: "verbose",
        label: "Verbose",
        description: "",
        default: SettingType::Bool(false),
        env_aliases: &[],
    },
    Setting {
        key: "depth",
        label: "Depth",
        description: "",
        default: SettingType::Int(3),
        env_aliases: &[],
    },
    Setting {
        key: "commands",
        label: "Commands",
        description: "",
        default: SettingType::List(&["*"]),
        env_aliases: &[],
    },
];

/// Settings from the given environment, file pairs and API chain.
fn read(env: &[(&str, &str)], file: &[(&str, &str)], p_next: *const c_void) -> Settings {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = move |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let file: BTreeMap<String, String> = file
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Settings::read(LAYER, DECLARED, p_next, &lookup, &file)
}

/// An API setting of one string value, kept alive with its structures.
struct Api {
    _strings: Vec<CString>,
    _pointers: Box<[*const std::ffi::c_char; 1]>,
    _settings: Box<[VkLayerSettingEXT; 1]>,
    info: Box<VkLayerSettingsCreateInfoEXT>,
}

fn api_string(layer: &str, key: &str, value: &str) -> Api {
    let strings = vec![
        CString::new(layer).unwrap(),
        CString::new(key).unwrap(),
        CString::new(value).unwrap(),
    ];
    let pointers = Box::new([strings[2].as_ptr()]);
    let settings = Box::new([VkLayerSettingEXT {
        pLayerName: strings[0].as_ptr(),
        pSettingName: strings[1].as_ptr(),
        r#type: VkLayerSettingTypeEXT::STRING_EXT,
        valueCount: 1,
        pValues: pointers.as_ptr() as *const c_void,
    }]);
    let info = Box::new(VkLayerSettingsCreateInfoEXT {
        settingCount: 1,
        pSettings: settings.as_ptr(),
        ..Default::default()
    });
    Api {
        _strings: strings,
        _pointers: pointers,
        _settings: settings,
        info,
    }
}

fn chain(api: &Api) -> *const c_void {
    &*api.info as *const VkLayerSettingsCreateInfoEXT as *const c_void
}

#[test]
fn defaults_without_any_channel() {
    let s = read(&[], &[], std::ptr::null());
    assert_eq!(
        s.get("file"),
        Some((&Value::String("out.txt".into()), &Source::Default))
    );
    assert!(!s.bool("verbose"));
    assert_eq!(s.int("depth"), 3);
    assert_eq!(s.list("commands"), ["*"]);
    assert!(s.get("undeclared").is_none());
}

#[test]
fn environment_over_file_over_api() {
    let api = api_string(LAYER, "file", "api.txt");
    let file = [("acme_probe.file", "file.txt")];
    let env_full = [("VK_ACME_PROBE_FILE", "env.txt")];
    assert_eq!(
        read(&env_full, &file, chain(&api)).get("file"),
        Some((
            &Value::String("env.txt".into()),
            &Source::Environment("VK_ACME_PROBE_FILE".into())
        ))
    );
    assert_eq!(
        read(&[], &file, chain(&api)).get("file"),
        Some((&Value::String("file.txt".into()), &Source::File))
    );
    assert_eq!(
        read(&[], &[], chain(&api)).get("file"),
        Some((&Value::String("api.txt".into()), &Source::Api))
    );
    // The vendor-trimmed name, then the alias, after the full one.
    let both = [
        ("VK_PROBE_FILE", "trimmed.txt"),
        ("VK_ACME_PROBE_FILE", "full.txt"),
    ];
    assert_eq!(
        read(&both, &[], std::ptr::null()).string("file"),
        "full.txt"
    );
    let trimmed_and_alias = [
        ("VK_PROBE_FILE", "trimmed.txt"),
        ("ACME_PROBE_FILE", "alias.txt"),
    ];
    assert_eq!(
        read(&trimmed_and_alias, &[], std::ptr::null()).string("file"),
        "trimmed.txt"
    );
    let alias = [("ACME_PROBE_FILE", "alias.txt")];
    assert_eq!(
        read(&alias, &[], std::ptr::null())
            .get("file")
            .map(|(_, s)| s.clone()),
        Some(Source::Environment("ACME_PROBE_FILE".into()))
    );
    // An empty variable is no value.
    assert_eq!(
        read(&[("VK_ACME_PROBE_FILE", "")], &file, std::ptr::null()).string("file"),
        "file.txt"
    );
}

#[test]
fn another_layers_api_setting_is_not_read() {
    let api = api_string("VK_LAYER_OTHER_x", "file", "api.txt");
    assert_eq!(
        read(&[], &[], chain(&api))
            .get("file")
            .map(|(_, s)| s.clone()),
        Some(Source::Default)
    );
}

#[test]
fn typed_values_from_text() {
    let env = [
        ("VK_ACME_PROBE_VERBOSE", "On"),
        ("VK_ACME_PROBE_DEPTH", "0x10"),
        ("VK_ACME_PROBE_COMMANDS", "vkCmd*, vkQueue*,"),
    ];
    let s = read(&env, &[], std::ptr::null());
    assert!(s.bool("verbose"));
    assert_eq!(s.int("depth"), 16);
    assert_eq!(s.list("commands"), ["vkCmd*", "vkQueue*"]);
    let s = read(
        &[
            ("VK_ACME_PROBE_VERBOSE", "1"),
            ("VK_ACME_PROBE_COMMANDS", "a:b"),
        ],
        &[],
        std::ptr::null(),
    );
    assert!(s.bool("verbose"));
    assert_eq!(s.list("commands"), ["a", "b"]);
}

#[test]
fn bad_values_fall_back_to_the_default() {
    let env = [
        ("VK_ACME_PROBE_VERBOSE", "maybe"),
        ("VK_ACME_PROBE_DEPTH", "deep"),
    ];
    let s = read(&env, &[("acme_probe.depth", "7")], std::ptr::null());
    assert_eq!(
        s.get("verbose"),
        Some((&Value::Bool(false), &Source::Default))
    );
    assert_eq!(s.get("depth"), Some((&Value::Int(3), &Source::Default)));
    // An API value of the wrong type.
    let api = api_string(LAYER, "verbose", "yes");
    assert_eq!(
        read(&[], &[], chain(&api)).get("verbose"),
        Some((&Value::Bool(false), &Source::Default))
    );
}

#[test]
fn api_numbers_and_lists() {
    let layer = CString::new(LAYER).unwrap();
    let (depth, verbose, commands) = (c"depth", c"verbose", c"commands");
    let depth_value: u64 = 9;
    let verbose_value: VkBool32 = 1;
    let items = [c"vkCmdDraw".as_ptr(), c"vkQueue*".as_ptr()];
    let entry = |name: &std::ffi::CStr, ty, count, values: *const c_void| VkLayerSettingEXT {
        pLayerName: layer.as_ptr(),
        pSettingName: name.as_ptr(),
        r#type: ty,
        valueCount: count,
        pValues: values,
    };
    let second = [entry(
        commands,
        VkLayerSettingTypeEXT::STRING_EXT,
        2,
        items.as_ptr() as *const c_void,
    )];
    let second_info = VkLayerSettingsCreateInfoEXT {
        settingCount: 1,
        pSettings: second.as_ptr(),
        ..Default::default()
    };
    let first = [
        entry(
            depth,
            VkLayerSettingTypeEXT::UINT64_EXT,
            1,
            &depth_value as *const u64 as *const c_void,
        ),
        entry(
            verbose,
            VkLayerSettingTypeEXT::BOOL32_EXT,
            1,
            &verbose_value as *const u32 as *const c_void,
        ),
    ];
    // Another structure between them in the chain is skipped.
    let other = VkApplicationInfo {
        pNext: &second_info as *const _ as *const c_void,
        ..Default::default()
    };
    let first_info = VkLayerSettingsCreateInfoEXT {
        pNext: &other as *const _ as *const c_void,
        settingCount: 2,
        pSettings: first.as_ptr(),
        ..Default::default()
    };
    let s = read(&[], &[], &first_info as *const _ as *const c_void);
    assert_eq!(s.int("depth"), 9);
    assert!(s.bool("verbose"));
    assert_eq!(s.list("commands"), ["vkCmdDraw", "vkQueue*"]);
}
