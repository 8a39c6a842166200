//! What a driver's recorded answers depend on, reduced to digests: one per component of the key,
//! so that a miss can say which one changed. Pure functions of their inputs; the inputs are
//! gathered by `cache::inputs`.

pub use crate::platform::digest::Digest;

/// The components of a driver entry's key, in the order they are stored and checked.
pub const COMPONENTS: [&str; 6] = ["manifest", "library", "loader", "machine", "configuration", "environment"];

/// A driver entry's key: one digest per component of [`COMPONENTS`].
pub type Key = [u64; 6];

/// The first component of `current` that differs from `recorded`, by name.
pub fn changed(recorded: &Key, current: &Key) -> Option<&'static str> {
    (0..COMPONENTS.len()).find(|&i| recorded[i] != current[i]).map(|i| COMPONENTS[i])
}

/// The environment's component: every `NAME=VALUE` entry but those that identify a launch
/// (`launch::identifies_a_launch`), in any order
/// (each entry digested alone, the digests mixed and summed: no sort, no allocation).
pub fn environment<'a>(entries: impl Iterator<Item = &'a [u8]>) -> u64 {
    entries
        .filter(|entry| {
            let name = entry.split(|&b| b == b'=').next().unwrap_or_default();
            !super::launch::identifies_a_launch(name)
        })
        .map(|entry| mix(Digest::default().bytes(entry).value()))
        .fold(0u64, u64::wrapping_add)
}

/// The environment's entries that count (see [`environment`]) by name, each with the digest of
/// its value, sorted by name: recorded with an entry so that a miss can name the variables that
/// changed, never their values.
pub fn environment_by_name<'a>(entries: impl Iterator<Item = &'a [u8]>) -> Vec<(String, u64)> {
    let mut named: Vec<(String, u64)> = entries
        .filter_map(|entry| {
            let at = entry.iter().position(|&b| b == b'=')?;
            let (name, value) = (&entry[..at], &entry[at + 1..]);
            (!super::launch::identifies_a_launch(name)).then(|| (format!("${}", String::from_utf8_lossy(name)), Digest::default().bytes(value).value()))
        })
        .collect();
    crate::sort::sort(&mut named);
    named
}

/// The configuration component: each file drivers read for options (see
/// `inputs::configuration_files`) by path, with the digest of its identity (0: not there).
pub fn configuration(files: &[(String, u64)]) -> u64 {
    files.iter().fold(Digest::default(), |d, (path, identity)| d.text(path).number(*identity)).value()
}

/// What differs between two named lists (sorted by name): each name added, gone or changed,
/// for the log. Names only: a variable's value never reaches a file or a message.
pub fn differences(recorded: &[(String, u64)], current: &[(String, u64)]) -> Vec<String> {
    let mut out = Vec::new();
    let (mut r, mut c) = (recorded.iter().peekable(), current.iter().peekable());
    loop {
        match (r.peek(), c.peek()) {
            (None, None) => return out,
            (Some((name, _)), None) => {
                out.push(format!("{name} gone"));
                r.next();
            }
            (None, Some((name, _))) => {
                out.push(format!("{name} new"));
                c.next();
            }
            (Some((rn, rv)), Some((cn, cv))) => match rn.cmp(cn) {
                std::cmp::Ordering::Less => {
                    out.push(format!("{rn} gone"));
                    r.next();
                }
                std::cmp::Ordering::Greater => {
                    out.push(format!("{cn} new"));
                    c.next();
                }
                std::cmp::Ordering::Equal => {
                    if rv != cv {
                        out.push(format!("{rn} changed"));
                    }
                    r.next();
                    c.next();
                }
            },
        }
    }
}

/// A 64-bit finalizer (splitmix64's), so that summed digests do not cancel out.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The manifest's component: its path and the identity of its file.
pub fn manifest(path: &str, identity: [u64; 7]) -> u64 {
    Digest::default().text(path).numbers(&identity).value()
}

/// The library's component: the path the manifest gives, the file the dynamic linker resolved it
/// to, that file's identity, and for a bare name (searched by the dynamic linker) what the search
/// depends on beyond the environment: the linker's cache and the executable (its `DT_RPATH`).
pub fn library(manifest_path: &str, resolved: &str, identity: [u64; 7], search: Option<([u64; 7], &str)>) -> u64 {
    let d = Digest::default().text(manifest_path).text(resolved).numbers(&identity);
    match search {
        Some((linker_cache, executable)) => d.number(1).numbers(&linker_cache).text(executable),
        None => d.number(0),
    }
    .value()
}

/// Whether the manifest's library path is a bare name the dynamic linker searches for.
pub fn is_bare_name(library_path: &str) -> bool {
    !library_path.contains('/')
}

/// The application's digest, for answers that application profiles can change (Mesa's drirc,
/// NVIDIA's profiles match the executable and the application and engine names): the executable
/// (the path it was started by, `platform::started_as`), the names it was invoked by (`argv[0]`,
/// which driconf's `executable=` matches) and that the kernel keeps for it (`comm`, which NVIDIA's
/// `commname` rules match), and the whole `VkApplicationInfo` as given.
pub fn application(executable: &str, names: &str, info: Option<(&str, u32, &str, u32, u32)>) -> u64 {
    let d = Digest::default().text(executable).text(names);
    match info {
        Some((name, version, engine, engine_version, api)) => d.number(1).text(name).number(version as u64).text(engine).numbers(&[engine_version as u64, api as u64]),
        None => d.number(0),
    }
    .value()
}

/// The digest the physical-device counts of the applications no application profile names are
/// recorded under (see `application_rules`): what a driver has for an application it was never
/// asked for. No application's digest: [`application`]'s always starts otherwise.
pub fn unnamed_applications() -> u64 {
    Digest::default().text("the applications no application profile names").value()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment_of(list: &[(&str, &str)]) -> u64 {
        let entries: Vec<String> = list.iter().map(|(n, v)| format!("{n}={v}")).collect();
        environment(entries.iter().map(|e| e.as_bytes()))
    }

    #[test]
    fn environment_ignores_order_and_launch_variables_only() {
        let base = environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("PWD", "/a")]);
        assert_eq!(base, environment_of(&[("PWD", "/b"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("HOME", "/h"), ("SHLVL", "3")]));
        // A launcher's token, a unit's invocation, a terminal's tab, a pane, a login.
        let launched = [("DESKTOP_STARTUP_ID", "x"), ("INVOCATION_ID", "1"), ("GNOME_TERMINAL_SCREEN", "/t/2"), ("TMUX_PANE", "%3"), ("XDG_SESSION_ID", "4")];
        assert_eq!(base, environment_of(&[&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "x")][..], &launched].concat()));
        assert_ne!(base, environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "y")]));
        assert_ne!(base, environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("__NV_PRIME_RENDER_OFFLOAD", "1")]));
        assert_ne!(base, environment_of(&[("HOME", "/h")]));
        // Name and value boundaries matter.
        assert_ne!(environment_of(&[("AB", "C")]), environment_of(&[("A", "BC")]));
    }

    #[test]
    fn files_are_keyed_on_path_and_identity() {
        let id = [1, 2, 3, 4, 5, 6, 7];
        assert_eq!(manifest("/m.json", id), manifest("/m.json", id));
        assert_ne!(manifest("/m.json", id), manifest("/m.json", [1, 2, 4, 4, 5, 6, 7]), "size changed");
        assert_ne!(manifest("/m.json", id), manifest("/m.json", [1, 2, 3, 4, 5, 8, 7]), "rewritten, modification time put back");
        assert_ne!(manifest("/m.json", id), manifest("/n.json", id));
        let absolute = library("/lib/a.so", "/lib/a.so", id, None);
        assert_eq!(absolute, library("/lib/a.so", "/lib/a.so", id, None));
        assert_ne!(absolute, library("/lib/a.so", "/lib/b.so", id, None), "resolved elsewhere");
        let bare = |exe, cache| library("a.so", "/lib/a.so", id, Some((cache, exe)));
        assert_eq!(bare("/bin/x", [9; 7]), bare("/bin/x", [9; 7]));
        assert_ne!(bare("/bin/x", [9; 7]), bare("/bin/y", [9; 7]), "the executable's RPATH may find another");
        assert_ne!(bare("/bin/x", [9; 7]), bare("/bin/x", [8; 7]), "ldconfig ran");
        assert!(is_bare_name("libGLX_nvidia.so.0") && !is_bare_name("/usr/lib/a.so") && !is_bare_name("./a.so"));
    }

    #[test]
    fn changed_names_the_first_component_that_differs() {
        let recorded = [1, 2, 3, 4, 5, 6];
        assert_eq!(changed(&recorded, &recorded), None);
        assert_eq!(changed(&recorded, &[1, 2, 3, 9, 9, 9]), Some("machine"));
        assert_eq!(changed(&recorded, &[1, 2, 3, 4, 9, 6]), Some("configuration"));
        assert_eq!(changed(&recorded, &[0, 2, 3, 4, 5, 6]), Some("manifest"));
    }

    #[test]
    fn the_variables_that_changed_are_named_without_their_values() {
        let by_name = |list: &[&str]| environment_by_name(list.iter().map(|e| e.as_bytes()));
        let recorded = by_name(&["MESA_DEBUG=1", "HOME=/h", "DRI_PRIME=0", "TMUX_PANE=%1"]);
        assert_eq!(recorded.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["$DRI_PRIME", "$HOME", "$MESA_DEBUG"], "a launch's variables are not recorded");
        let current = by_name(&["HOME=/h", "DRI_PRIME=1", "RADV_PERFTEST=gpl", "TMUX_PANE=%2"]);
        let said = differences(&recorded, &current);
        assert_eq!(said, ["$DRI_PRIME changed", "$MESA_DEBUG gone", "$RADV_PERFTEST new"]);
        assert!(said.iter().all(|s| !s.contains("gpl") && !s.contains('=')), "{said:?}");
        assert!(differences(&current, &current).is_empty());
        let files = |drirc: u64| vec![("/etc/drirc".to_string(), 0), ("/home/u/.drirc".to_string(), drirc)];
        assert_eq!(differences(&files(0), &files(7)), ["/home/u/.drirc changed"]);
        assert_ne!(configuration(&files(0)), configuration(&files(7)));
    }

    #[test]
    fn application_digest_covers_executable_and_application_info() {
        let a = application("/bin/x", "x", Some(("app", 1, "engine", 2, 3)));
        assert_eq!(a, application("/bin/x", "x", Some(("app", 1, "engine", 2, 3))));
        assert_ne!(a, application("/bin/y", "x", Some(("app", 1, "engine", 2, 3))));
        assert_ne!(a, application("/bin/x", "game.exe", Some(("app", 1, "engine", 2, 3))));
        assert_ne!(a, application("/bin/x", "x", Some(("app", 1, "engine", 2, 4))));
        assert_ne!(a, application("/bin/x", "x", None));
    }
}
