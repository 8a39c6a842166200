//! The generator against whole registries: the vendored one (golden files, determinism) and
//! Debian's 1.3.239, the low end of the supported range.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use generator::ir::Registry;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn vendored() -> Registry {
    generator::load_registry(&repo().join("registry")).expect("vendored registry parses")
}

/// Compares `actual` with `tests/golden/<name>`; `UPDATE_GOLDEN=1` rewrites the file instead.
fn check_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        let diff = similar::TextDiff::from_lines(&expected, actual);
        panic!(
            "{} differs from the generator's view (rerun with UPDATE_GOLDEN=1 if the change is intended):\n{}",
            path.display(),
            diff.unified_diff().context_radius(2)
        );
    }
}

#[test]
fn command_levels_match_the_golden_file() {
    let reg = vendored();
    let mut text = String::new();
    for c in reg.commands.values() {
        writeln!(text, "{} {}", c.name, c.level.as_str()).unwrap();
        for alias in &c.aliases {
            writeln!(text, "{alias} {} (alias of {})", c.level.as_str(), c.name).unwrap();
        }
    }
    check_golden("command_levels.txt", &text);
}

#[test]
fn exported_symbols_match_the_golden_file() {
    let names = generator::emit::exports::exported_names(&vendored());
    check_golden("exports.txt", &(names.join("\n") + "\n"));
}

#[test]
fn output_is_byte_identical_run_to_run() {
    let reg = vendored();
    let first = generator::generate_from(&reg).unwrap();
    let second = generator::generate(&repo().join("registry")).unwrap();
    assert_eq!(first.len(), second.len());
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.path, b.path);
        assert!(a.contents == b.contents, "{} differs between two runs", a.path.display());
    }
}

#[test]
fn debian_registry_parses_and_emits() {
    let dir = Path::new("/usr/share/vulkan/registry");
    let reg = generator::load_registry(dir)
        .unwrap_or_else(|e| panic!("{e} (needs Debian's libvulkan-dev)"));
    assert_eq!(reg.header_api, (1, 3));
    assert!(reg.header_version >= 239, "header version {}", reg.header_version);
    let files = generator::generate_from(&reg).expect("emits");
    assert_eq!(files.len(), generator::generate_from(&vendored()).unwrap().len());
    let aliases = reg.command_aliases.len();
    println!(
        "Debian registry 1.3.{}: {} types, {} commands (+{aliases} aliases), {} extensions, {} features",
        reg.header_version,
        reg.types.len(),
        reg.commands.len(),
        reg.extensions.len(),
        reg.features.len()
    );
    // 1.3.239 has about 500 canonical commands and 300 supported extensions; 1.3 core is ~220 commands.
    assert!((400..700).contains(&reg.commands.len()), "{} commands", reg.commands.len());
    assert!((250..400).contains(&reg.extensions.len()), "{} extensions", reg.extensions.len());
    assert_eq!(reg.features.len(), 4, "VK_VERSION_1_0 to 1_3");
    let newer = vendored();
    for name in reg.commands.keys() {
        let known = newer.commands.contains_key(name) || newer.command_aliases.contains_key(name);
        assert!(known, "{name} from 1.3.239 is unknown to the vendored registry");
    }
    // Old-style extension dependencies (`requires` + `requiresCore`) are read.
    let swapchain = &reg.extensions["VK_KHR_swapchain"];
    assert_eq!(swapchain.depends, Some(generator::ir::Depends::Name("VK_KHR_surface".into())));
}

#[test]
fn vendored_registry_counts_are_sane() {
    let reg = vendored();
    assert_eq!(reg.header_api, (1, 4));
    let versions: Vec<_> = reg.features.iter().filter(|f| !f.internal).map(|f| f.name.as_str()).collect();
    assert_eq!(versions, ["VK_VERSION_1_0", "VK_VERSION_1_1", "VK_VERSION_1_2", "VK_VERSION_1_3", "VK_VERSION_1_4"]);
    assert!(reg.features.iter().any(|f| f.internal), "internal split features are read");
    assert!(!reg.extensions.values().any(|e| e.name == "VK_KHR_surface" && e.kind != generator::ir::ExtensionKind::Instance));
    // vulkansc-only commands are filtered out at ingestion.
    assert!(!reg.commands.contains_key("vkGetFaultData"));
    assert!(reg.extensions.values().any(|e| e.provisional));
}
