//! What an explain document says of the process beyond the loader's decisions, for both ways a
//! document is made (`vk-loader explain` and `VK_LOADER_EXPLAIN` at `vkCreateInstance`).

use crate::plan::Plan;

/// What a plan's document says beyond the decisions: the settings file in force, or the one that
/// exists and why it gives nothing; the executable decided for and its driver cache records.
pub(crate) fn describe_process(plan: &mut Plan) {
    plan.settings_file = crate::manifest::settings::current().map(|s| s.path.clone());
    if plan.settings_file.is_none() {
        plan.settings_file_unused = crate::manifest::settings::why_unused();
    }
    plan.executable = crate::cache::executable_name();
    plan.cache_records = plan.executable.as_deref().map(crate::cache::recorded_for).unwrap_or_default();
}
