//! `cargo xtask unsafe-count [--crate DIR] [--files]`: where a crate's `unsafe` is, per top-level
//! module (issue 48's measure): `unsafe` blocks outside and inside `extern "system"` functions
//! (the C entry points, those written in `macro_rules!` bodies included), `unsafe fn`s of the Rust
//! ABI, `extern "system"` ones, and `unsafe impl`s. Test modules (`#[cfg(test)]`) are left out.
//!
//! The scan works on tokens (proc-macro2), so comments and string literals never count, and
//! function-pointer types (`unsafe extern "system" fn(...)`) are not functions. The unsafe
//! operations inside the blocks need types to count: clippy's
//! `clippy::multiple_unsafe_ops_per_block` names each block that holds several.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// What one file or folder holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// `unsafe { }` blocks outside `extern "system"` functions.
    pub blocks: usize,
    /// `unsafe { }` blocks inside them.
    pub entry_blocks: usize,
    /// `unsafe fn` of the Rust ABI (or another ABI than "system").
    pub unsafe_fns: usize,
    /// `unsafe extern "system" fn` items.
    pub entry_fns: usize,
    pub unsafe_impls: usize,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.blocks += other.blocks;
        self.entry_blocks += other.entry_blocks;
        self.unsafe_fns += other.unsafe_fns;
        self.entry_fns += other.entry_fns;
        self.unsafe_impls += other.unsafe_impls;
    }
}

pub fn main(args: &[String]) -> Result<(), String> {
    let mut dir = crate::repo_root().join("loader/src");
    let mut per_file = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--crate" => dir = PathBuf::from(args.next().ok_or("--crate needs a folder")?),
            "--files" => per_file = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let mut rows: BTreeMap<String, Counts> = BTreeMap::new();
    for file in rs_files(&dir)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let counts = count_source(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let relative = file.strip_prefix(&dir).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let key = match relative.split_once('/') {
            Some((folder, _)) if !per_file => format!("{folder}/"),
            _ => relative,
        };
        rows.entry(key).or_default().add(counts);
    }
    println!("{:<40} {:>6} {:>8} {:>9} {:>9} {:>5}", "module", "blocks", "in entry", "unsafe fn", "extern fn", "impl");
    let mut total = Counts::default();
    for (name, c) in &rows {
        if per_file && *c == Counts::default() {
            continue;
        }
        println!("{name:<40} {:>6} {:>8} {:>9} {:>9} {:>5}", c.blocks, c.entry_blocks, c.unsafe_fns, c.entry_fns, c.unsafe_impls);
        total.add(*c);
    }
    println!("{:<40} {:>6} {:>8} {:>9} {:>9} {:>5}", "total", total.blocks, total.entry_blocks, total.unsafe_fns, total.entry_fns, total.unsafe_impls);
    Ok(())
}

/// The counts of one source file.
pub fn count_source(source: &str) -> Result<Counts, String> {
    let tokens = TokenStream::from_str(source).map_err(|e| format!("cannot tokenize: {e}"))?;
    let mut counts = Counts::default();
    walk(tokens, false, &mut counts);
    Ok(counts)
}

fn walk(tokens: TokenStream, in_entry: bool, counts: &mut Counts) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let ident = |i: usize, name: &str| matches!(tokens.get(i), Some(TokenTree::Ident(id)) if id == name);
    let is_system = |i: usize| matches!(tokens.get(i), Some(TokenTree::Literal(l)) if l.to_string() == "\"system\"");
    // `fn` at `i` names an item (`fn name` or, in a macro, `fn $name`), not a pointer type.
    let names_item = |i: usize| ident(i, "fn") && matches!(tokens.get(i + 1), Some(TokenTree::Ident(_)) | Some(TokenTree::Punct(_)));
    // The next brace group at this level is an entry point's body, or a test module to skip.
    let (mut entry_body_next, mut skip_next) = (false, false);
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = tokens.get(i + 1) {
                    let attribute: String = g.stream().to_string().chars().filter(|c| !c.is_whitespace()).collect();
                    if g.delimiter() == Delimiter::Bracket && attribute == "cfg(test)" {
                        skip_next = true;
                    }
                }
            }
            TokenTree::Punct(p) if p.as_char() == ';' && skip_next => skip_next = false,
            TokenTree::Ident(id) if id == "unsafe" => match tokens.get(i + 1) {
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace && !skip_next => {
                    if in_entry {
                        counts.entry_blocks += 1;
                    } else {
                        counts.blocks += 1;
                    }
                }
                _ if skip_next => {}
                _ if names_item(i + 1) => counts.unsafe_fns += 1,
                _ if ident(i + 1, "extern") && is_system(i + 2) && names_item(i + 3) => counts.entry_fns += 1,
                _ if ident(i + 1, "extern") && names_item(i + 3) => counts.unsafe_fns += 1,
                _ if ident(i + 1, "impl") => counts.unsafe_impls += 1,
                _ => {}
            },
            TokenTree::Ident(id) if id == "extern" && is_system(i + 1) && names_item(i + 2) => entry_body_next = true,
            TokenTree::Group(g) => {
                let body_of_entry = entry_body_next && g.delimiter() == Delimiter::Brace;
                if g.delimiter() == Delimiter::Brace {
                    entry_body_next = false;
                }
                if skip_next && g.delimiter() == Delimiter::Brace {
                    skip_next = false;
                } else if !skip_next {
                    walk(g.stream(), in_entry || body_of_entry, counts);
                }
            }
            _ => {}
        }
        i += 1;
    }
}

fn rs_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", folder.display()))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_in_and_out_of_entry_points_functions_impls_and_no_tests() {
        let source = r#"
            type Pfn = unsafe extern "system" fn(u32) -> u32;
            /// Docs: unsafe { not code }
            unsafe fn rust_abi() { unsafe { a() } }
            pub unsafe extern "system" fn vkEntry(f: unsafe extern "system" fn()) {
                let _ = "unsafe { in a string }";
                unsafe { b() };
                let c = || unsafe { c() };
            }
            unsafe extern "C" fn c_abi() {}
            macro_rules! entries {
                ($name:ident) => { unsafe extern "system" fn $name() { unsafe { d() } } };
            }
            unsafe impl Send for S {}
            fn safe() { unsafe { e() } }
            #[cfg(test)]
            mod tests { unsafe fn t() { unsafe { f() } } }
        "#;
        let counts = count_source(source).unwrap();
        assert_eq!(counts, Counts { blocks: 2, entry_blocks: 3, unsafe_fns: 2, entry_fns: 2, unsafe_impls: 1 });
    }
}
