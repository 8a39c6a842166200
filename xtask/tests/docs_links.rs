//! Every relative link of the documentation (`README.md` and every `.md` under `docs/`) leads
//! somewhere: `[text](path)` to a file or folder that exists, `[text](path#anchor)` into a `.md`
//! file also to a heading of that file (GitHub's slugs). Links with a scheme (`http:`, `https:`,
//! `mailto:`) are not followed; code blocks and code spans are not read for links.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `README.md` and every `.md` file under `docs/`, sorted.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of a Markdown text outside fenced code blocks, with their numbers (from 1).
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = if trimmed.starts_with("```") {
            Some("```")
        } else if trimmed.starts_with("~~~") {
            Some("~~~")
        } else {
            None
        };
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(f), Some(m)) if f == m => fence = None,
            (None, None) => lines.push((i + 1, line)),
            _ => {}
        }
    }
    lines
}

/// A line without its code spans (`` `...` ``), each replaced by a space.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let ticks = rest[start..].chars().take_while(|&c| c == '`').count();
        let after = &rest[start + ticks..];
        match after.find(&"`".repeat(ticks)) {
            Some(end) => {
                out.push(' ');
                rest = &after[end + ticks..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The targets of the inline links `[text](target)` of a line (images included), as written.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let bytes = line.as_bytes();
    let mut targets = Vec::new();
    let mut i = 0;
    while let Some(offset) = line[i..].find("](") {
        let open = i + offset + 2;
        // The target runs to the `)` that balances the `(`.
        let mut depth = 1;
        let mut end = open;
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        if end >= bytes.len() {
            break;
        }
        let mut target = line[open..end].trim();
        if let Some(inner) = target.strip_prefix('<').and_then(|t| t.split_once('>')) {
            target = inner.0;
        } else if let Some((path, _title)) = target.split_once(char::is_whitespace) {
            target = path;
        }
        targets.push(target.to_string());
        i = end + 1;
    }
    targets
}

/// `%XX` escapes decoded (a path written `a%20b`).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit() {
            let hex = |b: u8| (b as char).to_digit(16).unwrap() as u8;
            out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// GitHub's anchor for a heading's text: lower case, spaces to `-`, every other character that is
/// not a letter, a digit, `-` or `_` removed.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings (ATX `#` headings outside code blocks); a repeated
/// slug gets `-1`, `-2`, ... as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let heading = line[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while anchors.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        anchors.push(anchor);
    }
    anchors
}

/// Whether a link leaves the repository (a scheme such as `https:` or `mailto:`).
fn is_external(target: &str) -> bool {
    let lower = target.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:")
}

/// What is wrong with the link `target` written in `document`, if anything.
fn broken(root: &Path, document: &Path, target: &str) -> Option<String> {
    if target.is_empty() || is_external(target) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        document.to_path_buf()
    } else if let Some(from_root) = path.strip_prefix('/') {
        root.join(percent_decoded(from_root))
    } else {
        document.parent().unwrap().join(percent_decoded(path))
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let wanted = percent_decoded(anchor).to_lowercase();
    if anchors(&text).contains(&wanted) {
        None
    } else {
        Some(format!("{} has no heading with the anchor #{anchor}", file.display()))
    }
}

#[test]
fn every_relative_link_of_the_documentation_leads_somewhere() {
    let root = root();
    let documents = documents(&root);
    assert!(documents.len() > 1, "no documentation under {}", root.join("docs").display());
    let mut failures = Vec::new();
    let mut checked = 0;
    for document in &documents {
        let text = std::fs::read_to_string(document).unwrap();
        for (number, line) in prose_lines(&text) {
            for target in link_targets(line) {
                checked += 1;
                if let Some(why) = broken(&root, document, &target) {
                    let name = document.strip_prefix(&root).unwrap_or(document).display().to_string();
                    failures.push(format!("{name}:{number}: ({target}): {why}"));
                }
            }
        }
    }
    assert!(checked > 0, "no link found: the link reader is broken");
    assert!(failures.is_empty(), "{} dead link(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn slugs_are_github_s() {
    assert_eq!(slug("The driver cache"), "the-driver-cache");
    assert_eq!(slug("When a record is used: the key"), "when-a-record-is-used-the-key");
    assert_eq!(slug("What `cargo xtask regen` does"), "what-cargo-xtask-regen-does");
    assert_eq!(slug("The runtime's stages"), "the-runtimes-stages");
    assert_eq!(slug("Testing a layer: the harness"), "testing-a-layer-the-harness");
    assert_eq!(slug("snake_case and-dash"), "snake_case-and-dash");
    assert_eq!(anchors("# A\n## A\n```\n# not a heading\n```\n### B #\n"), ["a", "a-1", "b"]);
}

#[test]
fn links_are_read_outside_code_only() {
    assert_eq!(
        link_targets("see [a](x.md), ![img](i.png \"title\") and [b](<y z.md#h>) but not `[c](no.md)`"),
        ["x.md", "i.png", "y z.md#h"]
    );
    assert_eq!(link_targets("[f(x)](f_(x).md) [g]"), ["f_(x).md"]);
    let text = "[a](one.md)\n```sh\n[b](two.md)\n```\n[c](three.md)\n";
    let found: Vec<String> = prose_lines(text).into_iter().flat_map(|(_, l)| link_targets(l)).collect();
    assert_eq!(found, ["one.md", "three.md"]);
    assert!(is_external("https://example.org/a") && is_external("mailto:a@b.c") && !is_external("docs/a.md"));
}
