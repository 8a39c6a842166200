//! Every environment variable and settings-file key the loader reads, declared once: its name, its
//! values, its default, what it does and whether elevated processes read it. The runtime reads
//! variables only through these declarations ([`Variable::get`], in `platform`), and the
//! documentation's tables (`docs/user-guide/environment.md`, written by `cargo xtask regen`) and
//! `vk-loader --help` are made from them, so a variable cannot exist undocumented.
//!
//! Variables a manifest names (an implicit layer's `enable_environment` and
//! `disable_environment`) are the one exception: their names come from the files.

pub mod commands;
pub mod settings_keys;
pub mod variables;

/// Who defines a variable or key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The Khronos loader, with the same meaning.
    Khronos,
    /// The XDG Base Directory specification (also read by the Khronos loader).
    Xdg,
    /// This loader alone.
    Ours,
    /// Another program whose files this loader reads (Mesa's driconf).
    Mesa,
    /// The project's own tests.
    Test,
}

/// How a variable is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// `secure_getenv`: unset in elevated (setuid, setgid, capability-raised) processes; empty is
    /// unset. Every variable that can make the loader load code or write a file.
    Secure,
    /// As [`Read::Secure`], but set and empty means something (an empty list of drivers).
    SecureEvenEmpty,
    /// `getenv`, elevated processes included, as the Khronos loader reads it: logging, and the
    /// choices among what the secure search found. Empty is unset.
    Plain,
}

/// The part of the documentation a variable belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Search,
    Drivers,
    Layers,
    Devices,
    Logging,
    Cache,
    Testing,
}

impl Group {
    pub const ALL: [Group; 7] = [Group::Search, Group::Drivers, Group::Layers, Group::Devices, Group::Logging, Group::Cache, Group::Testing];

    pub fn title(self) -> &'static str {
        match self {
            Group::Search => "Where manifests and settings are searched",
            Group::Drivers => "Drivers",
            Group::Layers => "Layers",
            Group::Devices => "Physical devices",
            Group::Logging => "Logging and explaining",
            Group::Cache => "The driver cache",
            Group::Testing => "For the project's tests",
        }
    }
}

/// One environment variable.
#[derive(Debug)]
pub struct Variable {
    pub name: &'static str,
    pub group: Group,
    pub origin: Origin,
    pub read: Read,
    /// What it may hold.
    pub values: &'static str,
    /// What holds while it is unset.
    pub default: &'static str,
    /// What it does.
    pub what: &'static str,
}

impl Variable {
    /// Whether an elevated process reads it.
    pub fn read_when_elevated(&self) -> bool {
        self.read == Read::Plain
    }

    /// The value of a variable that takes one of a few words (compared ignoring ASCII case): what
    /// its word means, `None` while unset. A value it does not take counts as unset and is warned
    /// about once per process through `warn` (the caller's log: the reference uses no other module
    /// but the platform), naming the words it takes.
    pub fn word<T: Copy>(&self, words: &[(&str, T)], warn: impl FnOnce(&str)) -> Option<T> {
        let value = self.get()?;
        if let Some(&(_, meaning)) = words.iter().find(|(word, _)| word.eq_ignore_ascii_case(&value)) {
            return Some(meaning);
        }
        if first_warning(self) {
            let accepted: Vec<&str> = words.iter().map(|(word, _)| *word).collect();
            let message = format!("{}={value}: not a value it takes ({}); ignored", self.name, accepted.join(", "));
            warn(&message);
        }
        None
    }
}

/// Whether `variable` is warned about for the first time in this process (one bit a declared
/// variable).
fn first_warning(variable: &Variable) -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WARNED: AtomicU64 = AtomicU64::new(0);
    // By name: the declarations are constants, each use of one a copy of its own.
    let Some(index) = variables::ALL.iter().position(|v| v.name == variable.name) else { return true };
    let bit = 1u64 << (index % 64);
    WARNED.fetch_or(bit, Ordering::Relaxed) & bit == 0
}

/// One key of the loader settings file (`vk_loader_settings.json`).
#[derive(Debug)]
pub struct SettingsKey {
    /// The key as it appears in the file.
    pub name: &'static str,
    /// Where it appears: `top`, `entry` (an element of `settings_array`, or `settings`), or the
    /// key whose objects hold it.
    pub within: &'static str,
    pub origin: Origin,
    pub values: &'static str,
    pub default: &'static str,
    pub what: &'static str,
}

/// The declaration of `name`, if the loader declares it.
pub fn variable(name: &str) -> Option<&'static Variable> {
    variables::ALL.iter().copied().find(|v| v.name == name)
}

/// The Markdown tables of every variable and settings key, as `docs/user-guide/environment.md`
/// holds them between its generated-section markers.
pub fn markdown() -> String {
    let mut out = String::new();
    for group in Group::ALL {
        out += &format!("### {}\n\n| variable | values | unset | what | elevated |\n| --- | --- | --- | --- | --- |\n", group.title());
        for v in variables::ALL.iter().filter(|v| v.group == group) {
            let elevated = if v.read_when_elevated() { "read" } else { "ignored" };
            out += &format!("| `{}`{} | {} | {} | {} | {elevated} |\n", v.name, mark(v.origin), cell(v.values), cell(v.default), cell(v.what));
        }
        out += "\n";
    }
    out += "### Settings file keys\n\n| key | in | values | absent | what |\n| --- | --- | --- | --- | --- |\n";
    for k in settings_keys::ALL {
        out += &format!("| `{}`{} | {} | {} | {} | {} |\n", k.name, mark(k.origin), cell(k.within), cell(k.values), cell(k.default), cell(k.what));
    }
    out
}

/// `vk-loader --help`'s list of variables: name and what, wrapped to 100 columns.
pub fn help() -> String {
    let mut out = String::from("ENVIRONMENT (\"ours\": this loader only; \"elevated\": read by setuid processes too)\n");
    for group in Group::ALL {
        out += &format!("\n  {}:\n", group.title());
        for v in variables::ALL.iter().filter(|v| v.group == group) {
            let mut notes = Vec::new();
            if v.origin == Origin::Ours {
                notes.push("ours");
            }
            if v.read_when_elevated() {
                notes.push("elevated");
            }
            let notes = if notes.is_empty() { String::new() } else { format!(" [{}]", notes.join(", ")) };
            out += &format!("  {}{notes}\n", v.name);
            out += &wrap(&plain(v.what), 6, 100);
        }
    }
    let more = format!(
        "The settings file's keys, and each variable's values and default: man vk-loader, and the user guide in {}/ \
         (environment.md; docs/user-guide/ in the source)",
        commands::INSTALLED_GUIDE
    );
    out + "\n" + &wrap(&more, 0, 100)
}

/// `vk-loader --help`'s usage: each command with its options, then what each does.
pub fn usage() -> String {
    let mut out = String::new();
    for (i, c) in commands::ALL.iter().enumerate() {
        let options: Vec<String> = c.options.iter().map(|o| format!("[{}]", o.flag)).collect();
        let lead = if i == 0 { "usage: " } else { "       " };
        out += &format!("{lead}vk-loader {} {}\n", c.name, options.join(" "));
    }
    out += "       vk-loader --man\n\n";
    for c in commands::ALL {
        out += &format!("  {:<14} {}\n", c.name, c.summary);
        for o in c.options {
            let text = wrap(o.what, 17, 100);
            out += &format!("  {:<14} {}", o.flag, text.trim_start());
        }
    }
    out += &format!("  {:<14} {}\n", "--man", "the manual page, as roff");
    out
}

/// The manual page `vk-loader(1)`, in roff: every command and option, every variable.
pub fn man_page() -> String {
    let mut out = String::from(".\\\" Generated by `cargo xtask regen` from loader/src/reference: edit there.\n");
    out += ".TH VK-LOADER 1 \"\" \"vulkan-loader-rs\" \"User Commands\"\n.SH NAME\nvk-loader \\- explain the decisions of the Rust Vulkan loader\n.SH SYNOPSIS\n";
    for c in commands::ALL {
        out += &format!(".B vk-loader {}\n", c.name);
        for o in c.options {
            out += &format!(".RB [ \"{}\" ]\n", roff(o.flag));
        }
        out += ".br\n";
    }
    out += ".SH COMMANDS\n";
    for c in commands::ALL {
        out += &format!(".TP\n.B {}\n{}\n", c.name, roff(&plain(c.what)));
        for o in c.options {
            out += &format!(".RS\n.TP\n.B {}\n{}\n.RE\n", roff(o.flag), roff(&plain(o.what)));
        }
    }
    out += ".SH ENVIRONMENT\nThe variables the loader reads, as in any Vulkan application (\\fIours\\fR: this loader only; \\fIelevated\\fR: read by setuid processes too).\n";
    for group in Group::ALL {
        out += &format!(".SS {}\n", roff(group.title()));
        for v in variables::ALL.iter().filter(|v| v.group == group) {
            let mut notes = Vec::new();
            if v.origin == Origin::Ours {
                notes.push("ours");
            }
            if v.read_when_elevated() {
                notes.push("elevated");
            }
            let notes = if notes.is_empty() { String::new() } else { format!(" [{}]", notes.join(", ")) };
            out += &format!(".TP\n.B {}{}\n", v.name, notes);
            out += &format!("{}.\nValues: {}. Unset: {}.\n", roff(&plain(v.what)), roff(&plain(v.values)), roff(&plain(v.default)));
        }
    }
    out += ".SH FILES\n.TP\n.I vulkan/loader_settings.d/vk_loader_settings.json\nThe loader settings file, searched under \\fB$XDG_CONFIG_HOME\\fR, \\fB$XDG_DATA_HOME\\fR, \\fB$XDG_CONFIG_DIRS\\fR, the system configuration directory and \\fB$XDG_DATA_DIRS\\fR.\n";
    out += ".TP\n.I $XDG_CACHE_HOME/vulkan\\-loader\\-rs/\nThe driver cache (default \\fI~/.cache/vulkan\\-loader\\-rs/\\fR).\n";
    out += &format!(".SH SEE ALSO\nThe user guide, in \\fI{}/\\fR (docs/user\\-guide/ in the source).\n", roff(commands::INSTALLED_GUIDE));
    out
}

/// Text for roff: backslashes and hyphens escaped, a line never starting with a control character.
fn roff(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    match escaped.starts_with(['.', '\'']) {
        true => format!("\\&{escaped}"),
        false => escaped,
    }
}

fn mark(origin: Origin) -> &'static str {
    match origin {
        Origin::Ours => " *ours*",
        Origin::Mesa => " *Mesa's*",
        _ => "",
    }
}

/// Text for a table cell: a `|` would end it.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// Markdown's backticks and link syntax taken out, for the terminal.
fn plain(text: &str) -> String {
    text.replace('`', "")
}

fn wrap(text: &str, indent: usize, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > width {
            out += &format!("{}{line}\n", " ".repeat(indent));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    if !line.is_empty() {
        out += &format!("{}{line}\n", " ".repeat(indent));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_declared_once() {
        let mut names: Vec<&str> = variables::ALL.iter().map(|v| v.name).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before, "a variable declared twice");
        let mut keys: Vec<(&str, &str)> = settings_keys::ALL.iter().map(|k| (k.within, k.name)).collect();
        keys.sort();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "a settings key declared twice");
    }

    #[test]
    fn every_declaration_says_what_it_does() {
        for v in variables::ALL {
            assert!(!v.values.is_empty() && !v.default.is_empty() && !v.what.is_empty(), "{} is not described", v.name);
        }
        for k in settings_keys::ALL {
            assert!(!k.values.is_empty() && !k.default.is_empty() && !k.what.is_empty(), "{} is not described", k.name);
        }
    }

    /// The loader's source names no variable outside this module except through a declaration:
    /// a string literal that looks like one of the loader's own variables and is not declared
    /// fails here.
    #[test]
    fn the_loader_reads_no_undeclared_variable() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut undeclared = Vec::new();
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Tests name variables of their own; the launch list names other programs'.
                let text = text.split("#[cfg(test)]").next().unwrap();
                if path.ends_with("cache/launch.rs") || path.starts_with(env!("CARGO_MANIFEST_DIR").to_string() + "/src/reference") {
                    continue;
                }
                let pieces: Vec<&str> = text.split('"').collect();
                for (i, literal) in pieces.iter().enumerate().skip(1).step_by(2) {
                    // `env!("...")`: a variable of the build, not of the process.
                    if pieces[i - 1].ends_with("env!(") {
                        continue;
                    }
                    let ours = ["VK_LOADER_", "VK_DRIVER_", "VK_ICD_", "VK_ADD_", "VK_LAYER_PATH", "VK_IMPLICIT_", "VK_INSTANCE_LAYERS", "XDG_"];
                    let looks_like_one = ours.iter().any(|p| literal.starts_with(p)) && literal.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
                    if looks_like_one && variable(literal).is_none() && !literal.ends_with('_') {
                        undeclared.push(format!("{}: \"{literal}\"", path.display()));
                    }
                }
            }
        }
        assert!(undeclared.is_empty(), "variables named but not declared in loader/src/reference/variables.rs:\n{}", undeclared.join("\n"));
    }

    /// The page that holds [`markdown`]'s tables, from the repository's root, between two marker
    /// lines (`cargo xtask regen` writes them there).
    const PAGE: &str = "docs/user-guide/environment.md";
    const BEGIN: &str = "<!-- generated by `cargo xtask regen` from loader/src/reference: edit there -->\n";
    const END: &str = "<!-- end of generated section -->\n";

    #[test]
    fn the_documentation_page_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(PAGE);
        let page = std::fs::read_to_string(&path).unwrap();
        let generated = format!("{BEGIN}\n{}{END}", markdown());
        assert!(page.contains(&generated), "{PAGE} is not what loader/src/reference declares: run `cargo xtask regen`");
    }

    /// The manual page the `vk-loader` package installs, from the repository's root (`cargo
    /// xtask regen` writes it).
    const MAN_PAGE: &str = "debian/vk-loader.1";

    #[test]
    fn the_manual_page_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(MAN_PAGE);
        let page = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(page == man_page(), "{MAN_PAGE} is not what loader/src/reference declares: run `cargo xtask regen`");
        for c in commands::ALL {
            assert!(page.contains(&format!(".B vk-loader {}\n", c.name)), "{} missing from the manual page", c.name);
        }
        for v in variables::ALL {
            assert!(page.contains(&format!(".B {}", v.name)), "{} missing from the manual page", v.name);
        }
    }

    #[test]
    fn usage_names_every_command_and_option() {
        let usage = usage();
        for c in commands::ALL {
            assert!(usage.contains(&format!("vk-loader {}", c.name)), "{usage}");
            for o in c.options {
                assert!(usage.contains(&format!("[{}]", o.flag)) && usage.contains(&format!("  {:<14} ", o.flag)), "{} {}: {usage}", c.name, o.flag);
            }
        }
        assert!(usage.lines().all(|l| l.len() <= 100), "{usage}");
    }

    #[test]
    fn help_names_every_variable() {
        let help = help();
        for v in variables::ALL {
            assert!(help.contains(&format!("  {}", v.name)), "{} missing from --help", v.name);
        }
        assert!(help.lines().all(|l| l.len() <= 100 || !l.contains(' ')), "{help}");
    }
}
