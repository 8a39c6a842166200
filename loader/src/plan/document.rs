//! A plan as the JSON document `VK_LOADER_EXPLAIN` and `vk-loader explain` give, with what the
//! writer knows beyond the plan: the loader, the process and the variables that steer it.

use serde_json::{json, Map, Value};
use vk_generated::types::VK_HEADER_VERSION_COMPLETE;

use crate::plan::{self, Plan};
use crate::platform;

/// The variables that steer the loader's choices, listed in the document when set.
const VARIABLES: &[&str] = &[
    "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",
    "VK_ADD_DRIVER_FILES",
    "VK_LOADER_DRIVERS_SELECT",
    "VK_LOADER_DRIVERS_DISABLE",
    "VK_LAYER_PATH",
    "VK_ADD_LAYER_PATH",
    "VK_IMPLICIT_LAYER_PATH",
    "VK_ADD_IMPLICIT_LAYER_PATH",
    "VK_INSTANCE_LAYERS",
    "VK_LOADER_LAYERS_ENABLE",
    "VK_LOADER_LAYERS_DISABLE",
    "VK_LOADER_LAYERS_ALLOW",
    "VK_LOADER_DEVICE_SELECT",
    "VK_LOADER_DISABLE_SELECT",
    "VK_LOADER_DEVICE_ID_FILTER",
    "VK_LOADER_VENDOR_ID_FILTER",
    "VK_LOADER_DRIVER_ID_FILTER",
    "VK_LOADER_DISABLE_INST_EXT_FILTER",
    "VK_LOADER_DEBUG",
    "XDG_CONFIG_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_HOME",
    "XDG_DATA_DIRS",
];

/// What the document says beyond the plan: the loader, the process, the variables set.
fn context() -> Value {
    let environment: Map<String, Value> =
        VARIABLES.iter().filter_map(|&name| platform::plain_env(name).map(|value| (name.to_string(), Value::String(value)))).collect();
    json!({
        "loader": env!("CARGO_PKG_VERSION"),
        "vulkan_header": plan::version_text(VK_HEADER_VERSION_COMPLETE),
        "process": crate::platform::executable_path(),
        "pid": std::process::id(),
        "environment": environment,
    })
}

/// The document of one plan.
pub fn document(plan: &Plan) -> Value {
    plan.to_json(context())
}

/// The file `VK_LOADER_EXPLAIN` names (`%p` stands for the process id), unless the process is
/// elevated.
pub fn requested_file() -> Option<String> {
    platform::env("VK_LOADER_EXPLAIN").map(|path| path.replace("%p", &std::process::id().to_string()))
}

/// Appends `plan`'s document to `file` as one line.
pub fn append(file: &str, plan: &Plan) {
    let line = format!("{}\n", document(plan));
    if let Err(why) = platform::append_to_file(file, &line) {
        log!(crate::debug::log::Level::Error, "VK_LOADER_EXPLAIN: {why}");
    }
}
