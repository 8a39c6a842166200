//! The crates layer and tool authors reuse, `vk-generated`, `vk-layer-macros`, `vk-layer`,
//! `vk-layer-harness` and its test driver `vk-test-driver`, are ready for crates.io: `cargo package` accepts their manifests (the
//! metadata a registry needs, a version beside every path dependency) and their file lists, and
//! makes the `.crate` files and builds them as crates.io would, with nothing uploaded. A failure
//! shows cargo's own message.
//!
//! The five are packaged in one command, so that the dependencies among them resolve against the
//! packages being made (they are not on crates.io yet); verifying them (building each from its
//! `.crate` file, so a file the package leaves out but needs fails here) takes about a minute on
//! two cores. `--offline`: the packages' lockfiles resolve from
//! the registry index cargo already holds.

use std::path::{Path, PathBuf};
use std::process::Command;

const CRATES: [&str; 5] = ["vk-generated", "vk-layer-macros", "vk-layer", "vk-test-driver", "vk-layer-harness"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `cargo package --allow-dirty --offline` with `args`, in a target directory of its own; its
/// output, cargo's message when it fails.
fn cargo_package(target: &str, args: &[&str]) -> String {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join(target);
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .args(["package", "--allow-dirty", "--offline", "--target-dir"])
        .arg(&target)
        .args(args)
        .output()
        .expect("cargo runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "cargo package {args:?} failed:\n{text}");
    text
}

/// `-p` for each package.
fn packages<'a>(names: &[&'a str]) -> Vec<&'a str> {
    names.iter().flat_map(|name| ["-p", name]).collect()
}

/// A file of a `.crate` (a gzipped tar of `<name>-<version>/...`).
fn crate_file(archive: &Path, path: &str) -> String {
    let out = Command::new("tar").arg("-xzOf").arg(archive).arg(path).output().expect("tar runs");
    assert!(out.status.success(), "no {path} in {}: {}", archive.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_crates_package_and_build_for_crates_io() {
    let output = cargo_package("publish-sdk", &packages(&CRATES));
    // Description, license, documentation or repository: cargo warns when one is missing.
    assert!(!output.contains("warning: manifest has no"), "{output}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("publish-sdk/package");
    for name in CRATES {
        let archive = dir.join(format!("{name}-0.1.0.crate"));
        assert!(archive.exists(), "no {}:\n{output}", archive.display());
        // The manifest as crates.io gets it.
        let manifest = crate_file(&archive, &format!("{name}-0.1.0/Cargo.toml"));
        for field in ["description = ", "license = ", "readme = \"README.md\"", "keywords = ", "categories = "] {
            assert!(manifest.contains(field), "{name}: no `{field}` in the packaged manifest:\n{manifest}");
        }
        assert!(!manifest.contains("publish = false"), "{name}:\n{manifest}");
        assert!(crate_file(&archive, &format!("{name}-0.1.0/README.md")).contains("## Example"), "{name}'s README");
        // The texts of the licenses the manifest names.
        assert!(crate_file(&archive, &format!("{name}-0.1.0/LICENSE-MIT")).contains("Permission is hereby granted"), "{name}");
        assert!(crate_file(&archive, &format!("{name}-0.1.0/LICENSE-APACHE")).contains("Apache License"), "{name}");
    }
}

#[test]
fn the_generated_crate_leaves_out_the_loader_s_trampolines_and_the_repository_s_tests() {
    let files = cargo_package("publish-list", &["--list", "-p", "vk-generated"]);
    assert!(files.lines().any(|l| l == "src/gen/types.rs"), "{files}");
    for left_out in ["src/gen/trampolines.rs", "tests/", "abi/"] {
        assert!(!files.lines().any(|l| l.starts_with(left_out)), "{left_out} is packaged:\n{files}");
    }
}

/// The harness's file list.
#[test]
fn the_harness_manifest_and_files_are_accepted() {
    let files = cargo_package("publish-harness-list", &["--list", "-p", "vk-layer-harness"]);
    for file in ["Cargo.toml", "README.md", "src/lib.rs", "src/child.rs"] {
        assert!(files.lines().any(|l| l == file), "{file} is not packaged:\n{files}");
    }
}

/// The crates' API documentation builds without a warning (a broken intra-doc link, an unclosed
/// HTML tag, an undocumented public item where `missing_docs` is warned).
#[test]
fn the_crates_documentation_builds_without_warnings() {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("publish-doc");
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(root())
        .env("RUSTDOCFLAGS", "-D warnings")
        .args(["doc", "--no-deps", "--offline", "--target-dir"])
        .arg(&target)
        .args(packages(&CRATES))
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "cargo doc failed:\n{}", String::from_utf8_lossy(&out.stderr));
}
