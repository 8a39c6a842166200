//! The generator: `vk.xml` -> typed IR -> Rust source for the `generated` crate.
//!
//! `parse` reads the registry (filtering by `api` once, at ingestion) into the IR of `ir`;
//! `model` derives the numbering every output agrees on; each module under `emit` writes one file;
//! `output` is the single write/check path used by `cargo xtask regen`.

pub mod depends;
pub mod emit;
pub mod ir;
pub mod model;
pub mod output;
pub mod parse;

use std::path::{Path, PathBuf};

/// One file the generator writes, with its path relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    pub path: PathBuf,
    pub contents: String,
}

/// Directories owned wholly by `cargo xtask regen`: any file in them that the generator did not
/// produce is an orphan and fails `--check`.
pub const GENERATED_DIRS: &[&str] = &["generated/src/gen", "generated/abi", "layer/src/gen", "trace-layer/src/gen"];

/// Reads `vk.xml` (and `video.xml`, where present) from a registry directory into the IR.
pub fn load_registry(registry_dir: &Path) -> Result<ir::Registry, String> {
    let read = |name: &str| {
        let path = registry_dir.join(name);
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let vk = read("vk.xml")?;
    let video = registry_dir.join("video.xml").exists().then(|| read("video.xml")).transpose()?;
    parse::parse(&vk, video.as_deref()).map_err(|e| format!("{}: {e}", registry_dir.display()))
}

/// Parses the registry directory and returns every generated file.
pub fn generate(registry_dir: &Path) -> Result<Vec<GeneratedFile>, String> {
    let reg = load_registry(registry_dir)?;
    generate_from(&reg)
}

/// Every generated file for an already parsed registry.
pub fn generate_from(reg: &ir::Registry) -> Result<Vec<GeneratedFile>, String> {
    let model = model::Model::new(reg);
    let exported = emit::exports::exported_names(reg);
    let file = |path: &str, contents: String| GeneratedFile { path: PathBuf::from(path), contents };
    Ok(vec![
        file("generated/src/gen/types.rs", emit::types::emit(reg)?),
        file("generated/src/gen/commands.rs", emit::commands::emit(reg, &model)?),
        file("generated/src/gen/dispatch.rs", emit::dispatch::emit(reg, &model)?),
        file("generated/src/gen/erase.rs", emit::erase::emit(reg, &model)?),
        file("generated/src/gen/lookup.rs", emit::lookup::emit(reg, &model)?),
        file("generated/src/gen/extensions.rs", emit::extensions::emit(reg, &model)?),
        file("generated/src/gen/exports.rs", emit::exports::emit(reg)?),
        file("generated/src/gen/deep_copy.rs", emit::deep_copy::emit(reg)?),
        file("generated/src/gen/chain_sizes.rs", emit::chain_sizes::emit(reg)?),
        file("generated/src/gen/padding.rs", emit::padding::emit(reg)?),
        file("generated/src/gen/trampolines.rs", emit::trampolines::emit(reg, &model, &exported)?),
        file("generated/abi/probe.rs", emit::abi_probe::rust_probe(reg)?),
        file("layer/src/gen/hooks.rs", emit::layer_hooks::emit_hooks(reg)?),
        file("layer/src/gen/entries.rs", emit::layer_hooks::emit_entries(reg)?),
        file("layer/src/gen/unwrap.rs", emit::layer_unwrap::emit(reg)?),
        file("layer/src/gen/wrap.rs", emit::layer_wrap::emit(reg)?),
        file("trace-layer/src/gen/print.rs", emit::trace::emit_print(reg)?),
        file("trace-layer/src/gen/calls.rs", emit::trace::emit_calls(reg)?),
    ])
}
