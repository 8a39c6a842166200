//! A plan as the JSON document `VK_LOADER_EXPLAIN` and `vk-loader explain` give, with what the
//! writer knows beyond the plan: the loader, the process and the variables that steer it.

use vk_generated::types::VK_HEADER_VERSION_COMPLETE;

use crate::plan::{self, Plan, SCHEMA, SCHEMA_VERSION};
use crate::platform;


/// The document of one plan, schema [`SCHEMA`] version [`SCHEMA_VERSION`]: the plan and what
/// the writer knows beyond it (the loader, the process, the variables that are set).
pub fn document(plan: &Plan) -> String {
    // Every variable the loader reads that is set, as the process reads it: the driver cache's
    // and the tests' decide what the loader does as much as the others.
    let environment: Vec<(&str, String)> = crate::reference::variables::ALL.iter().filter_map(|v| v.get().map(|value| (v.name, string(&value)))).collect();
    let context = object(&[
        ("loader", string(env!("CARGO_PKG_VERSION"))),
        ("vulkan_header", string(&plan::version_text(VK_HEADER_VERSION_COMPLETE))),
        ("process", optional(platform::executable_path().as_deref())),
        ("executable", optional(plan.executable.as_deref())),
        ("application", optional(plan.application.as_deref())),
        ("pid", std::process::id().to_string()),
        ("environment", object(&environment)),
    ]);
    let drivers = plan.drivers.iter().map(|d| {
        object(&[
            ("manifest", string(&d.manifest)),
            ("library", optional(d.library.as_deref())),
            ("decision", string(d.decision.name())),
            ("reason", string(&d.reason)),
        ])
    });
    let layers = plan::ordered(&plan.layers, |l| l.position).into_iter().map(|l| {
        object(&[
            ("name", string(&l.name)),
            ("manifest", string(&l.manifest)),
            ("type", string(if l.implicit { "implicit" } else { "explicit" })),
            ("decision", string(l.decision.name())),
            ("reason", string(&l.reason)),
            ("position", number(l.position)),
        ])
    });
    let devices = plan::ordered(&plan.devices, |d| d.position).into_iter().map(|d| {
        object(&[
            ("name", string(&d.name)),
            ("type", string(&d.device_type)),
            ("vendor_id", string(&format!("{:#06x}", d.vendor_id))),
            ("device_id", string(&format!("{:#06x}", d.device_id))),
            ("api_version", string(&plan::version_text(d.api_version))),
            ("driver", string(&d.driver)),
            ("decision", string(d.decision.name())),
            ("reason", string(&d.reason)),
            ("position", number(d.position)),
        ])
    });
    let cache_records = plan.cache_records.iter().map(|r| {
        object(&[
            ("manifest", string(&r.manifest)),
            ("application", string(&r.application)),
            ("physical_devices", r.physical_devices.to_string()),
            ("device_answers", r.device_answers.to_string()),
            ("recorded", string(&r.age)),
        ])
    });
    object(&[
        ("schema", string(SCHEMA)),
        ("schema_version", SCHEMA_VERSION.to_string()),
        ("context", context),
        ("settings_file", optional(plan.settings_file.as_deref())),
        ("settings_file_unused", optional(plan.settings_file_unused.as_deref())),
        ("result", optional(plan.result.as_deref())),
        ("drivers", array(drivers)),
        ("layers", array(layers)),
        ("devices", array(devices)),
        ("cache_records", array(cache_records)),
    ])
}

// The document is written as text, not built as a `serde_json::Value`: its shape is fixed, and a
// value tree with its serializer would add some 60 KiB to the library every process maps.

/// A JSON string (escaped by serde_json).
fn string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "null".into())
}

fn optional(text: Option<&str>) -> String {
    text.map_or_else(|| "null".into(), string)
}

fn number(n: Option<usize>) -> String {
    n.map_or_else(|| "null".into(), |n| n.to_string())
}

/// A JSON object of fields whose values are JSON text already.
fn object(fields: &[(&str, String)]) -> String {
    let members: Vec<String> = fields.iter().map(|(name, value)| format!("{}:{value}", string(name))).collect();
    format!("{{{}}}", members.join(","))
}

fn array(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(","))
}

/// The file `VK_LOADER_EXPLAIN` names (`%p` stands for the process id), unless the process is
/// elevated.
pub fn requested_file() -> Option<String> {
    crate::reference::variables::VK_LOADER_EXPLAIN.get().map(|path| path.replace("%p", &std::process::id().to_string()))
}

/// Appends `plan`'s document to `file` as one line.
pub fn append(file: &str, plan: &Plan) {
    let line = format!("{}\n", document(plan));
    if let Err(why) = platform::append_to_file(file, &line) {
        log!(crate::debug::log::Level::Error, "VK_LOADER_EXPLAIN: {why}");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::plan::Decision;

    #[test]
    fn layers_are_listed_by_chain_position_then_as_recorded() {
        let mut plan = Plan::default();
        plan.layer("OFF", "/off.json", true, Decision::Off, "disable_environment DISABLE_ME=1 is set");
        plan.layer("B", "/b.json", false, Decision::Used, "named in VK_INSTANCE_LAYERS");
        plan.layer("A", "/a.json", true, Decision::Used, "implicit layer");
        plan.layer_order(&[("A", "/a.json"), ("B", "/b.json")]);
        let doc: Value = serde_json::from_str(&document(&plan)).unwrap();
        let names: Vec<&str> = doc["layers"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["A", "B", "OFF"]);
        assert_eq!(doc["layers"][0]["position"], 0);
        assert_eq!(doc["layers"][2]["position"], Value::Null);
        assert_eq!(doc["layers"][2]["decision"], "off");
        assert_eq!(doc["schema"], SCHEMA);
        assert_eq!(doc["schema_version"], SCHEMA_VERSION);
    }

    #[test]
    fn text_is_escaped_and_absent_values_are_null() {
        let mut plan = Plan::default();
        plan.driver("/odd \"name\"\n.json", None, Decision::Rejected, "invalid JSON: \\ at line 1");
        let doc: Value = serde_json::from_str(&document(&plan)).unwrap();
        assert_eq!(doc["drivers"][0]["manifest"], "/odd \"name\"\n.json");
        assert_eq!(doc["drivers"][0]["reason"], "invalid JSON: \\ at line 1");
        assert_eq!(doc["drivers"][0]["library"], Value::Null);
        assert_eq!(doc["settings_file"], Value::Null);
        assert!(doc["context"]["pid"].is_u64());
    }
}
