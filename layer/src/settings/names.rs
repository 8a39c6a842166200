//! The names a setting goes by, after the Khronos layer-settings conventions
//! (Vulkan-Utility-Libraries' layer settings library): `vk_layer_settings.txt` keys are
//! `<layer name without VK_LAYER_, lower case>.<setting>`, environment variables
//! `VK_<LAYER NAME WITHOUT VK_LAYER_, UPPER CASE>_<SETTING>` and, vendor trimmed,
//! `VK_<LAYER NAME WITHOUT VK_LAYER_<VENDOR>_, UPPER CASE>_<SETTING>`.

/// `VK_LAYER_RUST_trace` -> `RUST_trace`.
fn without_prefix(layer: &str) -> &str {
    layer.strip_prefix("VK_LAYER_").unwrap_or(layer)
}

/// `VK_LAYER_RUST_trace` -> `trace`: the prefix and the vendor (up to the first `_`) removed.
fn without_vendor(layer: &str) -> &str {
    let rest = without_prefix(layer);
    rest.split_once('_').map_or(rest, |(_, name)| name)
}

/// The key in `vk_layer_settings.txt`: `rust_trace.file`.
pub fn file_key(layer: &str, setting: &str) -> String {
    format!("{}.{setting}", without_prefix(layer).to_ascii_lowercase())
}

/// The environment variables, in the order they are read (the first set wins):
/// `VK_RUST_TRACE_FILE`, then `VK_TRACE_FILE`.
pub fn env_names(layer: &str, setting: &str) -> [String; 2] {
    let upper = |s: &str| s.to_ascii_uppercase();
    [
        format!("VK_{}_{}", upper(without_prefix(layer)), upper(setting)),
        format!("VK_{}_{}", upper(without_vendor(layer)), upper(setting)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_khronos_conventions() {
        assert_eq!(file_key("VK_LAYER_RUST_trace", "file"), "rust_trace.file");
        assert_eq!(
            env_names("VK_LAYER_RUST_trace", "file"),
            ["VK_RUST_TRACE_FILE", "VK_TRACE_FILE"]
        );
        assert_eq!(
            env_names("VK_LAYER_KHRONOS_validation", "enables"),
            ["VK_KHRONOS_VALIDATION_ENABLES", "VK_VALIDATION_ENABLES"]
        );
        // No vendor part: both forms are the same name.
        assert_eq!(env_names("VK_LAYER_x", "a"), ["VK_X_A", "VK_X_A"]);
        assert_eq!(file_key("NotALayerName", "a_b"), "notalayername.a_b");
    }
}
