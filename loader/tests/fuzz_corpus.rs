//! Every seed of the fuzz targets (`fuzz/corpus/<target>/`) and every input a fuzzer once failed
//! on (`fuzz/regressions/<target>/`) goes through the same entry points as `cargo xtask fuzz`:
//! none may panic. The fuzzing itself (coverage-guided, libFuzzer) is `cargo xtask fuzz`.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut replayed = 0;
    for kind in ["corpus", "regressions"] {
        let Ok(dir) = std::fs::read_dir(root.join(kind).join(target)) else { continue };
        for file in dir.flatten() {
            let data = std::fs::read(file.path()).unwrap();
            if std::panic::catch_unwind(|| entry(&data)).is_err() {
                panic!("{target} panicked on {}", file.path().display());
            }
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no seeds for {target} under {}", root.display());
}

#[test]
fn driver_manifest_seeds_and_regressions() {
    replay("driver_manifest", vulkan::fuzzing::driver_manifest);
}

#[test]
fn layer_activation_seeds_and_regressions() {
    replay("layer_activation", vulkan::fuzzing::layer_activation);
}

#[test]
fn elf_header_seeds_and_regressions() {
    replay("elf_header", vulkan::fuzzing::elf_header);
}

#[test]
fn settings_file_seeds_and_regressions() {
    replay("settings_file", vulkan::fuzzing::settings_file);
}

#[test]
fn driver_cache_seeds_and_regressions() {
    replay("driver_cache", vulkan::fuzzing::driver_cache);
}

/// The checked-in seed `fuzz/corpus/<file>` is `expected`, the file the current format writes: a
/// format change updates it (`UPDATE_SEEDS=1` rewrites it).
fn assert_seed_is_current(file: &str, expected: Vec<u8>) {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus").join(file);
    if std::env::var_os("UPDATE_SEEDS").is_some() {
        std::fs::create_dir_all(seed.parent().unwrap()).unwrap();
        std::fs::write(&seed, &expected).unwrap();
    }
    assert_eq!(std::fs::read(&seed).unwrap_or_default(), expected, "run with UPDATE_SEEDS=1 to rewrite {}", seed.display());
}

#[test]
fn driver_cache_seed_is_current() {
    assert_seed_is_current("driver_cache/two_entries", vulkan::fuzzing::driver_cache_seed());
}
