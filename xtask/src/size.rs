//! `cargo xtask bench size`: what the shipped library weighs and where the weight is.
//!
//! The library measured is the one the packages ship: the release build (`cargo build --release
//! -p loader`, the workspace's release profile: fat LTO, one codegen unit) stripped as debhelper's
//! `dh_strip` strips it (`--strip-unneeded`, `.comment` and `.note` removed). The breakdown reads
//! the unstripped build's symbol table (`nm -S -C`, binutils) and groups each function and datum
//! by the crate it belongs to, the loader's own by its top-level module (`vulkan::cache`, ...). A
//! generic of std/core/alloc instantiated with a type of another crate counts for that crate
//! (`core::ptr::drop_in_place<vulkan::...>` is the loader's), where the symbol still names the
//! type (the legacy mangling that most of our symbols use drops the generic arguments: those
//! stay with std/core/alloc). std's backtrace symbolizer (its `backtrace_rs`, gimli, addr2line,
//! miniz_oxide, rustc_demangle) is one group: the default panic hook links it in. Code without a
//! name in the table (the unwinder from libgcc_eh, the exported trampolines' padding) is
//! "(no crate)". The largest functions are listed by name, where a cut would start. Section
//! sizes come from the stripped file (`size -A`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The size the package's library must stay under (issue 49: a third lighter).
const TARGET_BYTES: u64 = 1024 * 1024;

/// The crates of Rust's standard library (a root path of a symbol that is std's own).
const STD_CRATES: &[&str] = &["core", "alloc", "std", "compiler_builtins", "hashbrown", "std_detect", "panic_unwind", "unwind", "memchr"];

/// std's backtrace symbolizer and what only it uses.
const SYMBOLIZER_CRATES: &[&str] = &["gimli", "addr2line", "miniz_oxide", "rustc_demangle", "object", "adler2", "adler"];

pub fn main(args: &[String]) -> Result<(), String> {
    let mut khronos = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--khronos" => khronos = Some(PathBuf::from(it.next().ok_or("--khronos needs a path")?)),
            other => return Err(format!("`bench size` takes [--khronos PATH], got `{other}`")),
        }
    }
    let root = crate::repo_root();
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--quiet", "--release", "--package", "loader"])
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo could not build the release libvulkan.so ({status})"));
    }
    let library = root.join("target/release/libvulkan.so");
    let scratch = root.join("target/size");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    print!("{}", report(&library, khronos.as_deref(), &scratch)?);
    Ok(())
}

/// The whole report for `library` (unstripped, with its symbol table).
pub fn report(library: &Path, khronos: Option<&Path>, scratch: &Path) -> Result<String, String> {
    let stripped = strip(library, &scratch.join("libvulkan.stripped.so"))?;
    let size = file_size(&stripped)?;
    let mut out = String::new();
    out += &format!("stripped libvulkan.so (as dh_strip ships it): {size} bytes, {} KiB, {:.3} MiB\n", kib(size), size as f64 / 1048576.0);
    out += &format!("  target <= {} KiB: {}\n", kib(TARGET_BYTES), if size <= TARGET_BYTES { "met" } else { "missed" });
    if let Some(path) = khronos {
        let theirs = file_size(&strip(path, &scratch.join("khronos.stripped.so"))?)?;
        out += &format!("  Khronos loader ({}): {} KiB stripped; ours / Khronos {:.2}\n", path.display(), kib(theirs), size as f64 / theirs as f64);
    }
    out += "\nsections of the stripped library (bytes):\n";
    let mut sections = sections(&stripped)?;
    sections.sort_by_key(|s| std::cmp::Reverse(s.1));
    for (name, bytes) in sections.iter().filter(|(_, b)| *b >= 1024) {
        out += &format!("  {name:<20} {bytes:>9}\n");
    }
    let symbols = symbols(library)?;
    let groups = groups(&symbols);
    for (kind, title) in [(Kind::Code, "code (.text) by crate, the loader by module"), (Kind::Data, "named data (.rodata, .data.rel.ro, .data) by crate")] {
        let mut rows: Vec<(&String, u64)> = groups.iter().filter(|((_, k), _)| *k == kind).map(|((g, _), b)| (g, *b)).collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let total: u64 = rows.iter().map(|r| r.1).sum();
        out += &format!("\n{title} (bytes; {total} named):\n");
        let (shown, rest): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| r.1 >= 2048);
        for (group, bytes) in &shown {
            out += &format!("  {group:<28} {bytes:>9}  {:>5.1}%\n", 100.0 * *bytes as f64 / total as f64);
        }
        let rest_bytes: u64 = rest.iter().map(|r| r.1).sum();
        if rest_bytes > 0 {
            out += &format!("  {:<28} {rest_bytes:>9}  {:>5.1}%\n", format!("({} smaller groups)", rest.len()), 100.0 * rest_bytes as f64 / total as f64);
        }
    }
    let mut largest: Vec<&Symbol> = symbols.iter().filter(|s| s.kind == Kind::Code).collect();
    largest.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));
    out += &format!("\nthe {LARGEST_SHOWN} largest functions (bytes; group):\n");
    for s in largest.iter().take(LARGEST_SHOWN) {
        let name: String = s.name.chars().take(100).collect();
        out += &format!("  {:>7}  {name}  ({})\n", s.bytes, group(&s.name));
    }
    Ok(out)
}

/// How many of the largest functions the report names: where a cut would start.
const LARGEST_SHOWN: usize = 25;

fn kib(bytes: u64) -> u64 {
    bytes.div_ceil(1024)
}

fn file_size(path: &Path) -> Result<u64, String> {
    std::fs::metadata(path).map(|m| m.len()).map_err(|e| format!("{}: {e}", path.display()))
}

/// A copy of `library` stripped as `dh_strip` strips a shared library.
fn strip(library: &Path, out: &Path) -> Result<PathBuf, String> {
    let status = Command::new("strip")
        .args(["--remove-section=.comment", "--remove-section=.note", "--strip-unneeded", "-o"])
        .arg(out)
        .arg(library)
        .status()
        .map_err(|e| format!("cannot run strip (binutils): {e}"))?;
    if !status.success() {
        return Err(format!("strip {} failed ({status})", library.display()));
    }
    Ok(out.to_path_buf())
}

/// `size -A`: each allocated section's name and size.
fn sections(library: &Path) -> Result<Vec<(String, u64)>, String> {
    let out = Command::new("size").arg("-A").arg(library).output().map_err(|e| format!("cannot run size (binutils): {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let name = f.next()?;
            let bytes = f.next()?.parse().ok()?;
            name.starts_with('.').then(|| (name.to_string(), bytes))
        })
        .collect())
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Code,
    Data,
}

/// A function or datum of the symbol table.
struct Symbol {
    name: String,
    bytes: u64,
    kind: Kind,
}

/// The sized functions and data of `library`'s symbol table (`nm -S -C`), each address once:
/// identical functions merged by LLVM are one body under several names (aliases), counted in the
/// group of the first name `nm` lists.
fn symbols(library: &Path) -> Result<Vec<Symbol>, String> {
    let out = Command::new("nm").args(["-S", "-C"]).arg(library).output().map_err(|e| format!("cannot run nm (binutils): {e}"))?;
    if !out.status.success() {
        return Err(format!("nm {} failed: {}", library.display(), String::from_utf8_lossy(&out.stderr)));
    }
    let mut symbols = Vec::new();
    let mut addresses = std::collections::BTreeSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        // `address size type name`; symbols without a size have three fields.
        let mut f = line.splitn(4, ' ');
        let (Some(address), Some(size), Some(kind), Some(name)) = (f.next(), f.next(), f.next(), f.next()) else { continue };
        let Ok(bytes) = u64::from_str_radix(size, 16) else { continue };
        let kind = match kind {
            "t" | "T" | "w" | "W" => Kind::Code,
            "r" | "R" | "d" | "D" | "b" | "B" | "v" | "V" => Kind::Data,
            _ => continue,
        };
        if !addresses.insert(address.to_string()) {
            continue;
        }
        symbols.push(Symbol { name: name.to_string(), bytes, kind });
    }
    Ok(symbols)
}

/// Bytes per (group, kind).
fn groups(symbols: &[Symbol]) -> BTreeMap<(String, Kind), u64> {
    let mut groups = BTreeMap::new();
    for s in symbols {
        *groups.entry((group(&s.name), s.kind)).or_insert(0) += s.bytes;
    }
    groups
}

/// The group a demangled symbol name counts in (see the module's documentation).
fn group(name: &str) -> String {
    let roots = path_roots(name);
    let Some(first) = roots.first() else { return "(no crate)".into() };
    let is_std = |c: &&str| STD_CRATES.contains(c);
    let symbolizer = name.contains("backtrace") && is_std(first) || roots.iter().any(|c| SYMBOLIZER_CRATES.contains(c));
    if symbolizer {
        return "std's backtrace symbolizer".into();
    }
    let owner = roots.iter().find(|c| !is_std(c)).unwrap_or(first);
    if *owner == "vulkan" {
        // The loader's own: by top-level module.
        let at = name.find("vulkan::").map(|i| i + "vulkan::".len()).unwrap_or(name.len());
        let module: String = name[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        return if module.is_empty() { "vulkan".into() } else { format!("vulkan::{module}") };
    }
    owner.to_string()
}

/// The crates that paths in `name` start from: each identifier followed by `::` at the start of
/// the name or after `<`, `(`, `&`, `*`, `[`, `,`, `;` or a space.
fn path_roots(name: &str) -> Vec<&str> {
    let bytes = name.as_bytes();
    let mut roots = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_root = i == 0 || matches!(bytes[i - 1], b'<' | b'(' | b'&' | b'*' | b'[' | b',' | b';' | b' ');
        if at_root && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
            let end = i + bytes[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
            if name[end..].starts_with("::") {
                roots.push(&name[i..end]);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn symbols_are_grouped_by_crate_and_the_loader_by_module() {
        assert_eq!(group("vulkan::cache::Session::key"), "vulkan::cache");
        assert_eq!(group("core::ptr::drop_in_place<vulkan::chain::Chain>"), "vulkan::chain");
        assert_eq!(group("<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop"), "alloc");
        assert_eq!(group("<std::backtrace_rs::symbolize::gimli::Context>::new"), "std's backtrace symbolizer");
        assert_eq!(group("<core::cell::once::OnceCell<core::result::Result<addr2line::line::Lines, gimli::read::Error>>>::try_init"), "std's backtrace symbolizer");
        assert_eq!(group("<&mut serde_json::de::Deserializer<R> as serde_core::de::Deserializer>::deserialize_any"), "serde_json");
        assert_eq!(group("vk_generated::padding::zero_padding_by_type"), "vk_generated");
        assert_eq!(group("_Unwind_Resume"), "(no crate)");
    }
}
