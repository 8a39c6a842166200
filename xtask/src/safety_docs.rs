//! `cargo xtask safety-docs [DIR...]`: every `unsafe fn` of the shipped crates states its contract
//! in a `# Safety` section of its documentation.
//!
//! `clippy::missing_safety_doc` sees only functions other crates can call; this check also covers
//! the crate-private ones, the `extern "system"` entry points and the functions of inherent impls
//! and of traits (a trait's implementations keep the trait's contract, as clippy has it). It parses each file with syn, so comments, strings and `cfg`'d-out code count as they
//! read; functions written inside `macro_rules!` bodies are not seen (their expansions are, by
//! clippy, where public).

use std::path::{Path, PathBuf};

use syn::{Attribute, Block, ImplItem, Item, Signature, Stmt, TraitItem};

/// The source folders of the crates we ship, relative to the repository root.
pub const SHIPPED_SOURCES: &[&str] = &[
    "loader/src",
    "generated/src",
    "layer/src",
    "layer/macros/src",
    "layer/harness/src",
    "tests/driver/src",
    "trace-layer/src",
];

/// An `unsafe fn` without a `# Safety` section: where it is and its name.
#[derive(Debug, PartialEq, Eq)]
pub struct Undocumented {
    pub file: PathBuf,
    pub line: usize,
    pub name: String,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let root = crate::repo_root();
    let dirs: Vec<PathBuf> = if args.is_empty() {
        SHIPPED_SOURCES.iter().map(|dir| root.join(dir)).collect()
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    let mut missing = Vec::new();
    for dir in &dirs {
        missing.extend(scan_dir(dir)?);
    }
    for m in &missing {
        let shown = m.file.strip_prefix(&root).unwrap_or(&m.file);
        println!("{}:{}: unsafe fn `{}` has no `# Safety` section", shown.display(), m.line, m.name);
    }
    match missing.len() {
        0 => Ok(()),
        n => Err(format!("{n} unsafe fn without a `# Safety` section")),
    }
}

/// Every undocumented `unsafe fn` in the `.rs` files under `dir`, in path order.
pub fn scan_dir(dir: &Path) -> Result<Vec<Undocumented>, String> {
    let mut files = Vec::new();
    rs_files(dir, &mut files)?;
    files.sort();
    let mut missing = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        for (line, name) in scan_source(&text).map_err(|e| format!("{}: {e}", file.display()))? {
            missing.push(Undocumented { file: file.clone(), line, name });
        }
    }
    Ok(missing)
}

/// The (line, name) of every `unsafe fn` in `source` whose documentation has no `# Safety` heading.
pub fn scan_source(source: &str) -> Result<Vec<(usize, String)>, String> {
    let file = syn::parse_file(source).map_err(|e| format!("cannot parse: {e}"))?;
    let mut missing = Vec::new();
    items(&file.items, &mut missing);
    Ok(missing)
}

fn items<'a>(list: impl IntoIterator<Item = &'a Item>, missing: &mut Vec<(usize, String)>) {
    for item in list {
        match item {
            Item::Fn(f) => {
                function(&f.attrs, &f.sig, missing);
                block(&f.block, missing);
            }
            Item::Impl(imp) => {
                for member in &imp.items {
                    if let ImplItem::Fn(f) = member {
                        // A trait's method states its contract once, in the trait.
                        if imp.trait_.is_none() {
                            function(&f.attrs, &f.sig, missing);
                        }
                        block(&f.block, missing);
                    }
                }
            }
            Item::Trait(t) => {
                for member in &t.items {
                    if let TraitItem::Fn(f) = member {
                        function(&f.attrs, &f.sig, missing);
                        if let Some(body) = &f.default {
                            block(body, missing);
                        }
                    }
                }
            }
            Item::Mod(m) => {
                if let Some((_, content)) = &m.content {
                    items(content, missing);
                }
            }
            _ => {}
        }
    }
}

/// Functions declared inside a function's body.
fn block(body: &Block, missing: &mut Vec<(usize, String)>) {
    items(body.stmts.iter().filter_map(|s| if let Stmt::Item(i) = s { Some(i) } else { None }), missing);
}

fn function(attrs: &[Attribute], sig: &Signature, missing: &mut Vec<(usize, String)>) {
    if sig.unsafety.is_some() && !has_safety_section(attrs) {
        missing.push((sig.ident.span().start().line, sig.ident.to_string()));
    }
}

/// Whether the doc comments hold a `# Safety` heading (any heading level).
fn has_safety_section(attrs: &[Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("doc")).any(|a| {
        let syn::Meta::NameValue(nv) = &a.meta else { return false };
        let syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(text), .. }) = &nv.value else { return false };
        text.value().lines().any(|line| {
            let line = line.trim();
            line.starts_with('#') && line.trim_start_matches('#').trim() == "Safety"
        })
    })
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            rs_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_private_impl_trait_and_nested_unsafe_fns_without_a_safety_section() {
        let source = r#"
            /// Reads.
            unsafe fn bare() {}
            /// # Safety
            /// `p` is valid.
            pub(crate) unsafe fn documented(p: *const u8) {}
            struct S;
            impl S {
                /// Some words, then a heading that is not Safety.
                /// # Panics
                unsafe fn method(&self) {}
            }
            trait T {
                unsafe fn required(&self);
            }
            impl T for S {
                unsafe fn required(&self) {
                    unsafe fn inside_an_implementation() {}
                }
            }
            mod inner {
                /// ## Safety
                /// Deeper heading, still a section.
                pub unsafe extern "system" fn entry() {}
                pub unsafe extern "system" fn other() {
                    unsafe fn nested() {}
                }
            }
            // `unsafe fn in_comment()` does not count, nor "unsafe fn in_string()".
            fn safe() { let _ = "unsafe fn in_string()"; }
        "#;
        let names: Vec<String> = scan_source(source).unwrap().into_iter().map(|(_, name)| name).collect();
        assert_eq!(names, ["bare", "method", "required", "inside_an_implementation", "other", "nested"]);
    }

    #[test]
    fn reports_the_line_of_the_function_name() {
        let found = scan_source("\n\nunsafe fn third_line() {}\n").unwrap();
        assert_eq!(found, [(3, "third_line".to_string())]);
    }

    /// The repository's shipped crates: every `unsafe fn` states its contract.
    #[test]
    fn every_unsafe_fn_of_the_shipped_crates_has_a_safety_section() {
        let root = crate::repo_root();
        let mut missing = Vec::new();
        for dir in SHIPPED_SOURCES {
            missing.extend(scan_dir(&root.join(dir)).unwrap());
        }
        let listed: Vec<String> = missing.iter().map(|m| format!("{}:{} {}", m.file.display(), m.line, m.name)).collect();
        assert!(listed.is_empty(), "unsafe fn without `# Safety` (cargo xtask safety-docs):\n{}", listed.join("\n"));
    }
}
