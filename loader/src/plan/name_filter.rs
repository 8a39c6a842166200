//! The name filters of `VK_LOADER_LAYERS_ENABLE`, `_DISABLE`, `_ALLOW` (layer names) and
//! `VK_LOADER_DRIVERS_SELECT`, `_DISABLE` (manifest file names), read as the Khronos loader reads
//! them (`loader_environment.c`: `parse_generic_filter_environment_var`, `determine_filter_type`,
//! `check_name_matches_filter_environment_var`), so a value means the same to both loaders:
//!
//! - a comma list (`strtok`: empty entries are skipped) whose entries are taken as written:
//!   nothing is trimmed, so in `*validation, *overlay` the second entry is ` *overlay`, a whole
//!   name with a space and a star in it, which matches no layer;
//! - an entry is a whole name, `prefix*`, `*suffix` or `*substring*`; `*`, `**` and `~all~` match
//!   every name, any other entry starting with `~` none (the disable list's `~implicit~` and
//!   `~explicit~` are read by its caller); a `*` anywhere else, `?` and `[` are plain characters;
//! - names are compared ignoring ASCII case; an entry keeps its first 255 bytes;
//! - at most 16 entries are read (`MAX_ADDITIONAL_FILTERS`); the caller says so when more are
//!   left out, which the Khronos loader does not.

use std::fmt;

/// How many entries of one variable are read, as for the Khronos loader.
pub const MAX_FILTERS: usize = 16;

/// The most bytes of an entry compared (`VK_MAX_EXTENSION_NAME_SIZE - 1`).
const MAX_VALUE: usize = 255;

/// One entry of a filter variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameFilter {
    /// As written, for messages.
    text: String,
    kind: Kind,
    /// Lowercase, stars stripped, at most [`MAX_VALUE`] bytes.
    value: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `*`, `**`, `~all~`.
    All,
    /// Another `~word~`: matches nothing.
    Special,
    Whole,
    Prefix,
    Suffix,
    Substring,
}

/// The entries of a comma list as the Khronos loader splits it: empty ones skipped, none trimmed.
pub fn entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').filter(|entry| !entry.is_empty())
}

/// Whether an entry is one of the special words of the disable list (or `*`, `**`): the caller
/// reads these itself and does not count them among the filters.
pub fn is_special(entry: &str) -> bool {
    matches!(NameFilter::new(entry).kind, Kind::All | Kind::Special)
}

/// The first [`MAX_FILTERS`] entries of `list` as filters, and how many more were left out.
pub fn parse_list(list: &str) -> (Vec<NameFilter>, usize) {
    let all: Vec<NameFilter> = entries(list).map(NameFilter::new).collect();
    let left_out = all.len().saturating_sub(MAX_FILTERS);
    (all.into_iter().take(MAX_FILTERS).collect(), left_out)
}

impl NameFilter {
    /// One entry (`determine_filter_type`).
    pub fn new(entry: &str) -> NameFilter {
        let lower = entry.as_bytes().to_ascii_lowercase();
        let (kind, value): (Kind, &[u8]) = match &lower[..] {
            b"*" | b"**" | b"~all~" => (Kind::All, &lower),
            [b'~', ..] => (Kind::Special, &lower),
            [b'*', inner @ .., b'*'] => (Kind::Substring, inner),
            [b'*', suffix @ ..] => (Kind::Suffix, suffix),
            [prefix @ .., b'*'] => (Kind::Prefix, prefix),
            whole => (Kind::Whole, whole),
        };
        let value = value[..value.len().min(MAX_VALUE)].to_vec();
        NameFilter { text: entry.to_string(), kind, value }
    }

    /// Whether `name` (a layer name, a manifest's file name, which need not be UTF-8) passes
    /// (`check_name_matches_filter_environment_var`).
    pub fn matches(&self, name: impl AsRef<[u8]>) -> bool {
        let name = name.as_ref();
        let value = &self.value[..];
        // The Khronos loader's first test, for every kind.
        if value.len() > name.len() {
            return false;
        }
        let same = |part: &[u8]| part.eq_ignore_ascii_case(value);
        match self.kind {
            Kind::All => true,
            Kind::Special => false,
            Kind::Whole => same(name),
            Kind::Prefix => same(&name[..value.len()]),
            Kind::Suffix => same(&name[name.len() - value.len()..]),
            Kind::Substring => name.windows(value.len().max(1)).any(same) || value.is_empty(),
        }
    }
}

impl fmt::Display for NameFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(entry: &str, name: &str) -> bool {
        NameFilter::new(entry).matches(name)
    }

    #[test]
    fn entries_are_whole_names_prefixes_suffixes_and_substrings_ignoring_case() {
        let name = "VK_LAYER_KHRONOS_validation";
        for (entry, expected) in [
            ("VK_LAYER_KHRONOS_validation", true),
            ("vk_layer_khronos_VALIDATION", true),
            ("VK_LAYER_KHRONOS", false),
            ("VK_LAYER_*", true),
            ("*validation", true),
            ("*khronos*", true),
            ("*", true),
            ("**", true),
            ("~all~", true),
            ("~ALL~", true),
            ("~implicit~", false),
            // A star inside an entry, `?` and `[` are plain characters, as for the Khronos loader.
            ("VK_*_validation", false),
            ("VK_LAYER_KHRONOS_validatio?", false),
            ("VK_LAYER_KHRONOS_[v]alidation", false),
        ] {
            assert_eq!(matches(entry, name), expected, "{entry}");
        }
        assert!(matches("a*b", "a*b"), "a star inside is matched as itself");
        assert!(matches("***", "x*y"), "`***` is the substring `*`");
        assert!(!matches("~all~", "abc"), "an entry longer than the name matches nothing, ~all~ included");
    }

    #[test]
    fn lists_are_not_trimmed() {
        // The Khronos loader reads " *overlay" as a whole name: it matches no layer.
        let (filters, left_out) = parse_list("*validation, *overlay");
        assert_eq!(left_out, 0);
        let texts: Vec<String> = filters.iter().map(ToString::to_string).collect();
        assert_eq!(texts, ["*validation", " *overlay"]);
        assert!(!filters[1].matches("VK_LAYER_MESA_overlay"));
        assert!(filters[1].matches(" *OVERLAY"), "it is a whole name with a space and a star");
        assert!(NameFilter::new("*overlay ").matches("VK_LAYER_MESA_overlay ") && !NameFilter::new("*overlay ").matches("VK_LAYER_MESA_overlay"));
        // Empty entries are skipped.
        assert_eq!(parse_list(",,a,,").0.len(), 1);
    }

    #[test]
    fn at_most_sixteen_entries_are_read() {
        let list: Vec<String> = (0..20).map(|i| format!("L{i}")).collect();
        let (filters, left_out) = parse_list(&list.join(","));
        assert_eq!((filters.len(), left_out), (16, 4));
        assert!(filters[15].matches("L15") && !filters.iter().any(|f| f.matches("L16")));
    }

    #[test]
    fn entries_keep_their_first_255_bytes() {
        let long = "x".repeat(300);
        assert!(matches(&long, &"x".repeat(255)));
        assert!(!matches(&long, &"x".repeat(254)));
    }

    #[test]
    fn special_words() {
        assert!(is_special("~implicit~") && is_special("~all~") && is_special("*") && is_special("**") && is_special("~whatever"));
        assert!(!is_special("*x") && !is_special("x~"));
    }
}
