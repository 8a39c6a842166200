//! Whether an application the cache holds no record for gets, from a driver, what every other
//! application no profile names gets: then the driver's physical-device count recorded for those
//! applications is this one's too, and a driver that has no device for them is not loaded for it.
//!
//! What can make a driver's device count differ between two applications on one machine, under
//! one key (the same files, GPUs, environment), and how each is met (the architecture page has the
//! table and how it was found):
//! - an application profile that names one of them: Mesa's driconf (`<application>` and
//!   `<engine>` rules, matched on the executable's name and the `VkApplicationInfo`), NVIDIA's
//!   profiles. Mesa's are read here ([`configured_apart`]) and every rule that may name the
//!   application counts, whatever it sets; NVIDIA's rules also match libraries loaded in the
//!   process and files beside the executable, which cannot be told before the driver is loaded:
//!   NVIDIA's driver, and every driver that is not Mesa's (whose profiles, compiled in or read
//!   from files of their own, are unknown), is loaded for every application it has no record for;
//! - what the process may open: its groups, a sandbox or device cgroup (the machine component
//!   has whether each GPU node may be opened);
//! - what the instance is created with (enabled extensions, API version): taken as not changing
//!   which hardware a driver drives, as for the records of a known application.
//!
//! The count for applications no profile names is recorded under a digest of its own
//! ([`super::key::unnamed_applications`]) beside each application's, by every such application.

use std::cell::RefCell;

use super::record::Entry;
use crate::platform;

/// What driconf matches an application by.
pub struct Application {
    /// The names Mesa's versions take for the executable (`program_invocation_name` whole, after
    /// its last `/` or `\`, the executable file's name, and `MESA_PROCESS_NAME` and
    /// `MESA_DRICONF_EXECUTABLE_OVERRIDE` where set): a rule that matches any of them may name it.
    pub executable_names: Vec<String>,
    /// `VkApplicationInfo`'s `pApplicationName` and `pEngineName`, empty where not given.
    pub name: String,
    pub engine: String,
}

impl Application {
    /// This process, with what it gave `vkCreateInstance`.
    pub fn of_this_process(name: &str, engine: &str) -> Application {
        let invoked = platform::invocation_name();
        let mut names = vec![invoked.clone()];
        names.extend(invoked.rsplit_once('/').map(|(_, n)| n.to_string()));
        names.extend(invoked.rsplit_once('\\').map(|(_, n)| n.to_string()));
        let file = platform::executable_path().unwrap_or_default();
        names.push(file.rsplit('/').next().unwrap_or_default().to_string());
        use crate::reference::variables::{MESA_DRICONF_EXECUTABLE_OVERRIDE, MESA_PROCESS_NAME};
        names.extend(MESA_PROCESS_NAME.get());
        names.extend(MESA_DRICONF_EXECUTABLE_OVERRIDE.get());
        crate::sort::sort(&mut names);
        names.dedup();
        Application { executable_names: names, name: name.to_string(), engine: engine.to_string() }
    }
}

/// An application the cache may hold no record for, and what tells whether a driver configures it
/// apart from the applications no profile names (each driver's answer kept: one instance creation
/// asks for several drivers, and again when it records).
pub struct NewApplication {
    /// `pApplicationName` and `pEngineName`, until the application's names are first needed.
    given: (String, String),
    application: std::cell::OnceCell<Application>,
    driconf: Driconf,
    answers: RefCell<Vec<(String, Option<String>)>>,
}

impl NewApplication {
    /// This process, with the names it gave `vkCreateInstance` (empty where not given).
    pub fn new(name: &str, engine: &str) -> NewApplication {
        let given = (name.to_string(), engine.to_string());
        NewApplication { given, application: Default::default(), driconf: Driconf::default(), answers: RefCell::new(Vec::new()) }
    }

    /// Why the driver whose library is `library` may configure this application apart from the
    /// applications no profile names; `None`: it does not.
    pub fn configured_apart(&self, library: &str) -> Option<String> {
        if let Some((_, why)) = self.answers.borrow().iter().find(|(l, _)| l == library) {
            return why.clone();
        }
        let application = self.application.get_or_init(|| Application::of_this_process(&self.given.0, &self.given.1));
        let why = self.driconf.configured_apart(library, application);
        self.answers.borrow_mut().push((library.to_string(), why.clone()));
        why
    }

    /// `Ok` where `entry`'s driver has no physical device for this application, which it holds no
    /// record for: every application it recorded has none, the applications no profile names
    /// among them, and this one is not configured apart. Else why that is not known.
    pub fn has_no_device(&self, entry: &Entry) -> Result<(), String> {
        match entry.device_count(super::key::unnamed_applications()) {
            None => return Err("no application that no profile names is recorded".into()),
            Some(0) => {}
            Some(_) => return Err("the applications no profile names have physical devices".into()),
        }
        if entry.devices.iter().any(|&(_, count, _)| count > 0) {
            return Err("an application recorded has physical devices".into());
        }
        match self.configured_apart(&entry.library_resolved) {
            Some(why) => Err(format!("this application may be configured apart: {why}")),
            None => Ok(()),
        }
    }
}

/// The driconf driver names a Mesa driver library parses its configuration under (`<device
/// driver="...">` applies to it only when named so); `None` for a Mesa library not listed here,
/// to which every `<device>` is taken to apply. HasVK is taken to answer to both names.
fn driconf_names(library_file: &str) -> Option<&'static [&'static str]> {
    let stem = library_file.strip_prefix("libvulkan_")?.split(".so").next()?;
    match stem {
        "radeon" => Some(&["radv"]),
        "intel" => Some(&["anv"]),
        "intel_hasvk" => Some(&["anv", "hasvk"]),
        _ => None,
    }
}

/// Whether the library is one of Mesa's Vulkan drivers (`libvulkan_<name>.so`).
fn is_mesa(library_file: &str) -> bool {
    library_file.starts_with("libvulkan_") && library_file.contains(".so")
}

/// The files and directories Mesa reads driconf from, for the driver library at `library`: its
/// data directory's `drirc.d` (`/usr/share`, `/usr/local/share`, and the share directory beside
/// the `lib` directory the library is in), `$DRIRC_CONFIGDIR`, `/etc/drirc` and `~/.drirc`. More
/// places than one Mesa reads: a rule read here that the driver does not read costs a load only.
fn driconf_paths(library: &str) -> Vec<String> {
    let mut directories = vec!["/usr/share/drirc.d".to_string(), "/usr/local/share/drirc.d".to_string()];
    if let Some(at) = library.find("/lib/").or_else(|| library.find("/lib64/")).or_else(|| library.find("/lib32/")) {
        directories.push(format!("{}/share/drirc.d", &library[..at]));
    }
    directories.extend(crate::reference::variables::DRIRC_CONFIGDIR.get());
    let mut paths = vec!["/etc/drirc".to_string()];
    paths.extend(crate::reference::variables::HOME.get().map(|home| format!("{home}/.drirc")));
    for dir in directories {
        let mut names = platform::list_dir(&dir).unwrap_or_default();
        crate::sort::sort(&mut names);
        paths.extend(names.into_iter().map(|name| format!("{dir}/{name}")));
    }
    crate::sort::sort(&mut paths);
    paths.dedup();
    paths
}

/// The driconf files read so far (by path: their text, or why it could not be read), shared by
/// the drivers of one instance creation.
#[derive(Default)]
pub struct Driconf {
    files: RefCell<Vec<(String, FileText)>>,
}

/// A file's bytes, or why they could not be read.
type FileText = Result<Vec<u8>, String>;

/// Files past this size are not read (Mesa's own defaults are some 50 KB): such a file may name
/// any application.
const MAX_FILE_BYTES: usize = 4 << 20;

impl Driconf {
    /// Why `application` may be configured apart from the applications no profile names by the
    /// driver whose library is `library` (a rule that may name it, or why that cannot be told);
    /// `None`: it is not.
    pub fn configured_apart(&self, library: &str, application: &Application) -> Option<String> {
        let file = library.rsplit('/').next().unwrap_or(library);
        if !is_mesa(file) {
            return Some(format!("{file} is not one of Mesa's drivers, whose application profiles are known"));
        }
        let names = driconf_names(file);
        for path in driconf_paths(library) {
            let why = self.with_file(&path, |text| match text {
                Ok(text) => naming_rule(text, names, application).map_err(|why| format!("{path}: {why}")),
                Err(why) => Err(why.clone()),
            });
            if let Err(why) = why {
                return Some(why);
            }
        }
        None
    }

    fn with_file<R>(&self, path: &str, f: impl FnOnce(&FileText) -> R) -> R {
        let mut files = self.files.borrow_mut();
        if let Some((_, text)) = files.iter().find(|(p, _)| p == path) {
            return f(text);
        }
        let text = match platform::file_identity(path) {
            // Not there: nothing to read.
            None => Ok(Vec::new()),
            Some(_) if platform::is_directory(path) => Ok(Vec::new()),
            Some(_) => match platform::read_file(path, MAX_FILE_BYTES + 1) {
                Some(text) if text.len() <= MAX_FILE_BYTES => Ok(text),
                Some(_) => Err(format!("{path}: larger than {MAX_FILE_BYTES} bytes, not read")),
                None => Err(format!("{path}: there but not readable")),
            },
        };
        let result = f(&text);
        files.push((path.to_string(), text));
        result
    }
}

/// `Ok` where no rule of the driconf document `text` that applies to a driver of the driconf
/// `names` (`None`: every `<device>` applies) may name `application`; else the first such rule,
/// or why the document cannot be read. A rule without a selector (one that names every
/// application alike) is not one that names it.
fn naming_rule(text: &[u8], names: Option<&[&str]>, application: &Application) -> Result<(), String> {
    let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_string())?;
    // Whether each open <device> applies, innermost last.
    let mut devices: Vec<bool> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        rest = &rest[at..];
        let skipped = [("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>")].into_iter().find(|(open, _)| rest.starts_with(open));
        if let Some((open, close)) = skipped {
            let end = rest[open.len()..].find(close).ok_or_else(|| format!("an unterminated {open}"))?;
            rest = &rest[open.len() + end + close.len()..];
            continue;
        }
        if rest.starts_with("<!") {
            rest = skip_declaration(rest)?;
            continue;
        }
        let end = tag_end(rest).ok_or("an unterminated tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if name.trim() == "device" {
                devices.pop();
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let element = tag.split(|c: char| c.is_ascii_whitespace()).next().unwrap_or_default();
        let attributes = attributes(&tag[element.len()..])?;
        let get = |name: &str| attributes.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let applies = devices.last().copied().unwrap_or(true);
        match element {
            "device" => {
                let own = match (get("driver"), names) {
                    (Some(driver), Some(names)) => names.contains(&driver),
                    _ => true,
                };
                if !self_closing {
                    devices.push(applies && own);
                }
            }
            "application" if applies => {
                if let Some(why) = application_rule_names(&get, application) {
                    return Err(format!("<application {}> {why}", describe(&attributes)));
                }
            }
            "engine" if applies => {
                if let Some(why) = engine_rule_names(&get, application) {
                    return Err(format!("<engine {}> {why}", describe(&attributes)));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether an `<application>` rule may name `application`, as Mesa's driconf tests its
/// attributes (the first of `executable`, `executable_regexp`, `sha1`, `application_name_match`
/// given decides; `application_versions` narrows): why, or `None`. Taken to name it wherever
/// Mesa would test what is not known here (the executable's SHA-1, the versions).
fn application_rule_names<'a>(get: &dyn Fn(&str) -> Option<&'a str>, application: &Application) -> Option<String> {
    if let Some(executable) = get("executable") {
        // Mesa ignores the rule for another executable, whatever follows.
        return application.executable_names.iter().any(|n| n == executable).then(|| "names this executable".to_string());
    }
    if let Some(pattern) = get("executable_regexp") {
        return matches_any(pattern, &application.executable_names).then(|| "matches this executable".to_string());
    }
    if get("sha1").is_some() {
        return Some("matches executables by content".into());
    }
    if let Some(pattern) = get("application_name_match") {
        return matches_any(pattern, std::slice::from_ref(&application.name)).then(|| "matches this application's name".to_string());
    }
    get("application_versions").is_some().then(|| "matches applications by version".to_string())
}

/// Whether an `<engine>` rule may name `application` (`engine_name_match`, then
/// `engine_versions`, taken to match): why, or `None`.
fn engine_rule_names<'a>(get: &dyn Fn(&str) -> Option<&'a str>, application: &Application) -> Option<String> {
    if let Some(pattern) = get("engine_name_match") {
        return matches_any(pattern, std::slice::from_ref(&application.engine)).then(|| "matches this application's engine".to_string());
    }
    get("engine_versions").is_some().then(|| "matches engines by version".to_string())
}

/// Whether the extended regular expression matches any of `texts`; a pattern that does not
/// compile matches (Mesa then applies the rule).
fn matches_any(pattern: &str, texts: &[String]) -> bool {
    texts.iter().any(|text| platform::regex_matches(pattern, text).unwrap_or(true))
}

fn describe(attributes: &[(String, String)]) -> String {
    attributes.iter().map(|(n, v)| format!("{n}=\"{v}\"")).collect::<Vec<_>>().join(" ")
}

/// The end (`>`) of the tag at the start of `text`, outside quoted attribute values.
fn tag_end(text: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in text.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// `text` after the declaration (`<!DOCTYPE ...>`, with its internal subset in brackets) it
/// starts with.
fn skip_declaration(text: &str) -> Result<&str, String> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in text.char_indices().skip(2) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '[') => depth += 1,
            (None, ']') => depth = depth.saturating_sub(1),
            (None, '>') if depth == 0 => return Ok(&text[i + 1..]),
            _ => {}
        }
    }
    Err("an unterminated declaration".into())
}

/// A start tag's attributes (after its name), their values' references decoded.
fn attributes(mut text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    loop {
        text = text.trim_start();
        if text.is_empty() {
            return Ok(out);
        }
        let (name, rest) = text.split_once('=').ok_or("an attribute without a value")?;
        let rest = rest.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'').ok_or("an unquoted attribute value")?;
        let end = rest[1..].find(quote).ok_or("an unterminated attribute value")?;
        out.push((name.trim().to_string(), decode(&rest[1..1 + end])?));
        text = &rest[end + 2..];
    }
}

/// An attribute value with its character and entity references replaced.
fn decode(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(';').ok_or("an unterminated reference")?;
        let reference = &rest[at + 1..at + end];
        let c = match reference {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let number = match reference.strip_prefix("#x").or_else(|| reference.strip_prefix("#X")) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => reference.strip_prefix('#').and_then(|d| d.parse().ok()),
                };
                number.and_then(char::from_u32).ok_or_else(|| format!("an unknown reference &{reference};"))?
            }
        };
        out.push(c);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(executable: &str, name: &str, engine: &str) -> Application {
        Application { executable_names: vec![executable.to_string()], name: name.to_string(), engine: engine.to_string() }
    }

    const DOCUMENT: &str = r#"<?xml version="1.0" standalone="yes"?>
<!-- <application executable="commented"> -->
<!DOCTYPE driconf [
   <!ELEMENT driconf (device+)>
   <!ATTLIST application name CDATA #REQUIRED executable CDATA #IMPLIED>
]>
<driconf>
    <device>
        <application name="Everyone">
            <option name="vk_x11_strict_image_count" value="true" />
        </application>
        <application name="Game" executable="game.exe">
            <option name="vk_x11_strict_image_count" value="true" />
        </application>
        <application name="Runner" executable="runner" sha1="0c40d509a74e357f0280cb1bd882e9cd94b91bdf">
            <option name="x" value="y" />
        </application>
        <application name="Regex" executable_regexp="^tool-[0-9]+$"/>
        <engine engine_name_match="^UnrealEngine"/>
    </device>
    <device driver="radv">
        <application name="Only RADV" application_name_match="Doom &amp; co"/>
    </device>
    <device driver="iris">
        <application name="GL" executable="glxgears"/>
    </device>
</driconf>
"#;

    fn names(application: &Application, driver: Option<&[&str]>) -> Result<(), String> {
        naming_rule(DOCUMENT.as_bytes(), driver, application)
    }

    #[test]
    fn an_application_no_rule_names_gets_the_default() {
        assert_eq!(names(&app("vkcube", "vkcube", ""), Some(&["radv"])), Ok(()), "a rule without a selector names every application alike");
        assert_eq!(names(&app("commented", "", ""), None), Ok(()));
        assert_eq!(names(&app("tool-x", "", ""), None), Ok(()));
        assert_eq!(names(&app("glxgears", "", ""), Some(&["radv"])), Ok(()), "another driver's rule");
    }

    #[test]
    fn each_kind_of_rule_that_may_name_the_application_says_so() {
        let named = |a: &Application, driver: Option<&[&str]>| names(a, driver).expect_err("named");
        assert!(named(&app("game.exe", "", ""), Some(&["anv"])).contains("executable=\"game.exe\""));
        assert!(named(&app("runner", "", ""), None).contains("sha1"), "an executable named, its content not checked here");
        assert!(named(&app("tool-12", "", ""), None).contains("executable_regexp"));
        assert!(named(&app("x", "", "UnrealEngine5"), None).contains("engine_name_match"));
        assert!(named(&app("x", "Doom & co", ""), Some(&["radv"])).contains("Only RADV"), "references decoded");
        assert_eq!(names(&app("x", "Doom & co", ""), Some(&["anv"])), Ok(()), "RADV's rule is not ANV's");
        assert!(named(&app("glxgears", "", ""), None).contains("GL"), "an unknown Mesa driver takes every device's rules");
    }

    #[test]
    fn a_document_that_cannot_be_read_names_every_application() {
        for broken in ["<driconf><device><application name=\"x\" executable=\"y\"", "<!-- open", "<application name=x>", "<a b=\"&unknown;\">"] {
            assert!(naming_rule(broken.as_bytes(), None, &app("z", "", "")).is_err(), "{broken}");
        }
        assert!(naming_rule(b"\xff", None, &app("z", "", "")).is_err());
        // A pattern that does not compile: Mesa applies the rule.
        assert!(naming_rule(br#"<device><application name="x" executable_regexp="(("/></device>"#, None, &app("z", "", "")).is_err());
    }

    #[test]
    fn only_mesa_drivers_are_known() {
        let driconf = Driconf::default();
        let a = app("vkcube", "", "");
        assert!(driconf.configured_apart("/usr/lib/x86_64-linux-gnu/libGLX_nvidia.so.0", &a).is_some());
        assert!(driconf.configured_apart("/opt/amdvlk/amdvlk64.so", &a).is_some());
        assert_eq!(driconf_names("libvulkan_radeon.so"), Some(&["radv"][..]));
        assert_eq!(driconf_names("libvulkan_lvp.so"), None);
        assert!(is_mesa("libvulkan_lvp.so") && !is_mesa("libvk_test_driver_a.so"));
    }

    #[test]
    fn regular_expressions_are_posix_extended() {
        assert_eq!(platform::regex_matches("^UnrealEngine4.*", "UnrealEngine4.27"), Some(true));
        assert_eq!(platform::regex_matches("^(a|b)+$", "abba"), Some(true));
        assert_eq!(platform::regex_matches("^(a|b)+$", "abc"), Some(false));
        assert_eq!(platform::regex_matches("((", "x"), None);
    }
}
