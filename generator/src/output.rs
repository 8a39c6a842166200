//! The single write path for generated files, in the style of rust-analyzer's `ensure_file_contents`.
//!
//! [`apply`] either brings `out_root` in line with what the generator produced ([`Mode::Write`]) or
//! reports every difference without touching anything ([`Mode::Check`]). Both modes treat the
//! directories of [`crate::GENERATED_DIRS`] as owned wholly by the generator: a file there that the
//! generator did not produce is an orphan.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use crate::{GeneratedFile, GENERATED_DIRS};

/// What [`apply`] does with the differences it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write changed and missing files, delete orphans.
    Write,
    /// Change nothing; fail with a report of every stale, missing and orphaned file.
    Check,
}

/// What [`apply`] found and did. Paths are relative to `out_root`, sorted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Report {
    /// Files created or rewritten (always empty in [`Mode::Check`]).
    pub written: Vec<PathBuf>,
    /// Files whose contents were already up to date.
    pub unchanged: usize,
    /// Orphans removed (always empty in [`Mode::Check`]).
    pub deleted: Vec<PathBuf>,
}

/// At most this many lines of unified diff are shown per stale file.
const MAX_DIFF_LINES: usize = 200;

/// Files so different that Myers' algorithm takes longer than this get a coarser diff, not a hang.
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// Makes the files under `out_root` match `files` (Write) or reports how they differ (Check).
///
/// Every path in `files` must be relative, made of plain components only, and appear once.
/// Write mode only touches files whose contents changed, so timestamps and incremental builds of
/// unchanged files are left alone.
pub fn apply(files: &[GeneratedFile], out_root: &Path, mode: Mode) -> Result<Report, String> {
    let mut sorted: Vec<&GeneratedFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut produced = BTreeSet::new();
    for file in &sorted {
        if !file
            .path
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(format!(
                "generator produced a path that is not plain and relative: {}",
                file.path.display()
            ));
        }
        if !produced.insert(file.path.as_path()) {
            return Err(format!("generator produced {} twice", file.path.display()));
        }
    }

    let mut report = Report::default();
    let mut stale = Vec::new();
    let mut missing = Vec::new();
    for file in &sorted {
        let full = out_root.join(&file.path);
        let current = match std::fs::read(&full) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("cannot read {}: {e}", full.display())),
        };
        match (&current, mode) {
            (Some(bytes), _) if bytes == file.contents.as_bytes() => report.unchanged += 1,
            (Some(bytes), Mode::Check) => stale.push(stale_entry(file, bytes)),
            (None, Mode::Check) => missing.push(file.path.display().to_string()),
            (_, Mode::Write) => {
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                }
                std::fs::write(&full, &file.contents)
                    .map_err(|e| format!("cannot write {}: {e}", full.display()))?;
                report.written.push(file.path.clone());
            }
        }
    }

    let mut orphans = Vec::new();
    for dir in GENERATED_DIRS {
        collect_files(out_root, Path::new(dir), &mut orphans)?;
    }
    orphans.retain(|path| !produced.contains(path.as_path()));
    orphans.sort();

    match mode {
        Mode::Write => {
            for orphan in orphans {
                let full = out_root.join(&orphan);
                std::fs::remove_file(&full)
                    .map_err(|e| format!("cannot delete orphan {}: {e}", full.display()))?;
                report.deleted.push(orphan);
            }
            Ok(report)
        }
        Mode::Check if stale.is_empty() && missing.is_empty() && orphans.is_empty() => Ok(report),
        Mode::Check => Err(check_failure(out_root, &stale, &missing, &orphans)),
    }
}

/// The report of one stale file: its path, then a unified diff from disk to generated, capped.
fn stale_entry(file: &GeneratedFile, on_disk: &[u8]) -> String {
    let path = file.path.display();
    let mut entry = format!("stale: {path}\n");
    let Ok(old) = std::str::from_utf8(on_disk) else {
        entry.push_str("  (file on disk is not UTF-8; no diff shown)\n");
        return entry;
    };
    let diff = similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, file.contents.as_str());
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("{path} (on disk)"), &format!("{path} (generated)"))
        .to_string();
    let total = text.lines().count();
    for line in text.lines().take(MAX_DIFF_LINES) {
        entry.push_str(line);
        entry.push('\n');
    }
    if total > MAX_DIFF_LINES {
        let _ = writeln!(
            entry,
            "... ({} more lines of diff not shown)",
            total - MAX_DIFF_LINES
        );
    }
    entry
}

fn check_failure(
    out_root: &Path,
    stale: &[String],
    missing: &[String],
    orphans: &[PathBuf],
) -> String {
    let count = stale.len() + missing.len() + orphans.len();
    let mut out = format!(
        "{count} generated file(s) under {} differ from what the generator produces; \
         regenerate with `cargo xtask regen`\n",
        out_root.display()
    );
    for entry in stale {
        out.push_str(entry);
    }
    for path in missing {
        let _ = writeln!(out, "missing: {path}");
    }
    for path in orphans {
        let _ = writeln!(
            out,
            "orphaned: {} (not produced by the generator)",
            path.display()
        );
    }
    out
}

/// Appends every non-directory under `out_root/rel` to `found`, as paths relative to `out_root`.
/// A directory that does not exist has no files. Symlinks are not followed: a symlink is an entry
/// like any other, so a stray one is reported (or deleted) as an orphan.
fn collect_files(out_root: &Path, rel: &Path, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let full = out_root.join(rel);
    let entries = match std::fs::read_dir(&full) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot list {}: {e}", full.display())),
    };
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", full.display()))?;
        let child = rel.join(entry.file_name());
        let file_type = entry
            .file_type()
            .map_err(|e| format!("cannot stat {}: {e}", out_root.join(&child).display()))?;
        if file_type.is_dir() {
            collect_files(out_root, &child, found)?;
        } else {
            found.push(child);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh, empty directory under the system temp dir, removed when dropped.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let name = format!(
                "generator-output-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let path = std::env::temp_dir().join(name);
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            TempDir(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn file(path: &str, contents: &str) -> GeneratedFile {
        GeneratedFile {
            path: PathBuf::from(path),
            contents: contents.to_string(),
        }
    }

    /// A path inside the first generator-owned directory.
    fn owned(name: &str) -> String {
        format!("{}/{name}", GENERATED_DIRS[0])
    }

    #[test]
    fn write_creates_then_leaves_unchanged_files_alone() {
        let tmp = TempDir::new();
        let files = [file(&owned("a.rs"), "a\n"), file(&owned("sub/b.rs"), "b\n")];

        let first = apply(&files, &tmp.0, Mode::Write).unwrap();
        assert_eq!(
            first.written,
            vec![
                PathBuf::from(owned("a.rs")),
                PathBuf::from(owned("sub/b.rs"))
            ]
        );
        assert_eq!(
            std::fs::read_to_string(tmp.0.join(owned("sub/b.rs"))).unwrap(),
            "b\n"
        );

        let second = apply(&files, &tmp.0, Mode::Write).unwrap();
        assert_eq!(
            second,
            Report {
                written: vec![],
                unchanged: 2,
                deleted: vec![]
            }
        );
        assert_eq!(apply(&files, &tmp.0, Mode::Check).unwrap().unchanged, 2);
    }

    #[test]
    fn write_rewrites_changed_files_and_deletes_orphans() {
        let tmp = TempDir::new();
        apply(
            &[
                file(&owned("a.rs"), "old\n"),
                file(&owned("gone.rs"), "x\n"),
            ],
            &tmp.0,
            Mode::Write,
        )
        .unwrap();

        let report = apply(&[file(&owned("a.rs"), "new\n")], &tmp.0, Mode::Write).unwrap();
        assert_eq!(report.written, vec![PathBuf::from(owned("a.rs"))]);
        assert_eq!(report.deleted, vec![PathBuf::from(owned("gone.rs"))]);
        assert!(!tmp.0.join(owned("gone.rs")).exists());
        assert_eq!(
            std::fs::read_to_string(tmp.0.join(owned("a.rs"))).unwrap(),
            "new\n"
        );
    }

    #[test]
    fn files_outside_generated_dirs_are_never_orphans() {
        let tmp = TempDir::new();
        std::fs::write(tmp.0.join("README.md"), "hand-written\n").unwrap();
        apply(&[file(&owned("a.rs"), "a\n")], &tmp.0, Mode::Write).unwrap();
        assert!(tmp.0.join("README.md").exists());
        apply(&[file(&owned("a.rs"), "a\n")], &tmp.0, Mode::Check).unwrap();
    }

    #[test]
    fn check_lists_stale_missing_and_orphaned_files_and_changes_nothing() {
        let tmp = TempDir::new();
        apply(
            &[
                file(&owned("stale.rs"), "one\ntwo\nthree\n"),
                file(&owned("orphan.rs"), "o\n"),
            ],
            &tmp.0,
            Mode::Write,
        )
        .unwrap();

        let wanted = [
            file(&owned("stale.rs"), "one\nTWO\nthree\n"),
            file(&owned("missing.rs"), "m\n"),
        ];
        let err = apply(&wanted, &tmp.0, Mode::Check).unwrap_err();
        assert!(
            err.contains(&format!("stale: {}", owned("stale.rs"))),
            "{err}"
        );
        assert!(err.contains("-two\n+TWO\n"), "{err}");
        assert!(
            err.contains(&format!("missing: {}", owned("missing.rs"))),
            "{err}"
        );
        assert!(
            err.contains(&format!("orphaned: {}", owned("orphan.rs"))),
            "{err}"
        );

        assert_eq!(
            std::fs::read_to_string(tmp.0.join(owned("stale.rs"))).unwrap(),
            "one\ntwo\nthree\n"
        );
        assert!(!tmp.0.join(owned("missing.rs")).exists());
        assert!(tmp.0.join(owned("orphan.rs")).exists());
    }

    #[test]
    fn check_caps_the_diff_of_one_file() {
        let tmp = TempDir::new();
        let old: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..1000).map(|i| format!("LINE {i}\n")).collect();
        apply(&[file(&owned("big.rs"), &old)], &tmp.0, Mode::Write).unwrap();

        let err = apply(&[file(&owned("big.rs"), &new)], &tmp.0, Mode::Check).unwrap_err();
        assert!(
            err.lines().count() < MAX_DIFF_LINES + 10,
            "{} lines",
            err.lines().count()
        );
        assert!(err.contains("more lines of diff not shown"), "{err}");
    }

    #[test]
    fn rejects_paths_that_escape_or_repeat() {
        let tmp = TempDir::new();
        for bad in ["/abs.rs", "../up.rs", "generated/../../up.rs"] {
            let err = apply(&[file(bad, "")], &tmp.0, Mode::Write).unwrap_err();
            assert!(err.contains("not plain and relative"), "{bad}: {err}");
        }
        let twice = [file(&owned("a.rs"), "1"), file(&owned("a.rs"), "2")];
        assert!(apply(&twice, &tmp.0, Mode::Write)
            .unwrap_err()
            .contains("twice"));
    }
}
