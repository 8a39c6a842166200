//! `cargo xtask regen [--check] [--registry DIR] [--out DIR]`: runs the generator and writes (or
//! checks) its output through `generator::output`, the one write path.

use std::path::{Path, PathBuf};
use std::time::Instant;

use generator::output::{self, Mode};

struct Options {
    mode: Mode,
    registry: Option<PathBuf>,
    out: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        mode: Mode::Write,
        registry: None,
        out: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        // Accept both `--flag VALUE` and `--flag=VALUE`.
        let (flag, inline_value) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value = || {
            inline_value
                .clone()
                .or_else(|| args.next().cloned())
                .ok_or(format!("{flag} needs a directory"))
        };
        match flag {
            "--check" if inline_value.is_none() => options.mode = Mode::Check,
            "--registry" => options.registry = Some(PathBuf::from(value()?)),
            "--out" => options.out = Some(PathBuf::from(value()?)),
            _ => {
                return Err(format!(
                    "unknown argument `{arg}` to regen\n\n{}",
                    crate::USAGE
                ))
            }
        }
    }
    Ok(options)
}

pub fn main(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let root = crate::repo_root();
    let (registry, out) = match (options.registry, options.out) {
        (None, out) => (root.join("registry"), out.unwrap_or_else(|| root.clone())),
        (Some(registry), Some(out)) => (registry, out),
        // Another registry goes to a scratch directory so the committed tree is never touched by it.
        (Some(registry), None) => {
            let canonical = registry
                .canonicalize()
                .map_err(|e| format!("cannot open registry {}: {e}", registry.display()))?;
            let name = canonical
                .file_name()
                .unwrap_or("registry".as_ref())
                .to_os_string();
            (registry, root.join("target/regen").join(name))
        }
    };

    let start = Instant::now();
    let files = generator::generate(&registry)
        .map_err(|e| format!("generating from {}: {e}", registry.display()))?;
    let report = output::apply(&files, &out, options.mode)?;
    let elapsed = start.elapsed().as_secs_f64();

    let (registry, out) = (shown(&registry, &root), shown(&out, &root));
    match options.mode {
        Mode::Check => {
            println!("regen --check: {} files up to date ({registry} -> {out}) in {elapsed:.2}s", report.unchanged)
        }
        Mode::Write => println!(
            "regen: {} written, {} unchanged, {} orphan(s) deleted ({registry} -> {out}) in {elapsed:.2}s",
            report.written.len(),
            report.unchanged,
            report.deleted.len(),
        ),
    }
    Ok(())
}

/// `path` relative to the repository root when it is inside it (`.` for the root itself).
fn shown(path: &Path, root: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}
