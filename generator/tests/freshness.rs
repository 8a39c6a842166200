//! A stale generated file fails `cargo test`: the committed output must be exactly what the
//! generator produces from the committed registry. Fix a failure with `cargo xtask regen`.

use std::path::Path;

use generator::output::{self, Mode};

#[test]
fn generated_files_are_fresh() {
    let repo_root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let files = generator::generate(&repo_root.join("registry"))
        .unwrap_or_else(|e| panic!("generate: {e}"));
    if let Err(report) = output::apply(&files, repo_root, Mode::Check) {
        panic!("{report}");
    }
}
