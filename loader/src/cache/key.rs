//! What a driver's recorded answers depend on, reduced to digests: one per component of the key,
//! so that a miss can say which one changed. Pure functions of their inputs; the inputs are
//! gathered by `cache::inputs`.

pub use crate::platform::digest::Digest;

/// The components of a driver entry's key, in the order they are stored and checked.
pub const COMPONENTS: [&str; 5] = ["manifest", "library", "loader", "machine", "environment"];

/// A driver entry's key: one digest per component of [`COMPONENTS`].
pub type Key = [u64; 5];

/// The first component of `current` that differs from `recorded`, by name.
pub fn changed(recorded: &Key, current: &Key) -> Option<&'static str> {
    (0..COMPONENTS.len()).find(|&i| recorded[i] != current[i]).map(|i| COMPONENTS[i])
}

/// Environment variables left out of the key: they change from one launch to the next, and no
/// driver decides anything on them (the shell's bookkeeping, session and terminal identities,
/// the loader's own logging and cache switches). Every other variable is in the key, a driver's
/// own switches (`MESA_*`, `RADV_*`, `__NV_*`, `__GLX_*`, `DRI_PRIME`...) included.
pub const VOLATILE_VARIABLES: &[&str] = &[
    "_",
    "OLDPWD",
    "PWD",
    "SHLVL",
    "COLUMNS",
    "LINES",
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "SYSTEMD_EXEC_PID",
    "TERM_SESSION_ID",
    "WINDOWID",
    // The X authority file: a per-session (with xvfb-run, per-launch) path that X clients read
    // when they connect, which for a driver is at surface creation, where it is loaded anyway.
    "XAUTHORITY",
    "KONSOLE_DBUS_SESSION",
    "KONSOLE_DBUS_WINDOW",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "GPG_AGENT_INFO",
    "VK_LOADER_DEBUG",
    "VK_LOADER_EXPLAIN",
    "VK_LOADER_DRIVER_CACHE",
    "VK_LOADER_LAZY_DRIVERS",
];

/// The environment's component: every `NAME=VALUE` entry but the volatile ones, in any order
/// (each entry digested alone, the digests mixed and summed: no sort, no allocation).
pub fn environment<'a>(entries: impl Iterator<Item = &'a [u8]>) -> u64 {
    entries
        .filter(|entry| {
            let name = entry.split(|&b| b == b'=').next().unwrap_or_default();
            !VOLATILE_VARIABLES.iter().any(|v| v.as_bytes() == name)
        })
        .map(|entry| mix(Digest::default().bytes(entry).value()))
        .fold(0u64, u64::wrapping_add)
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
pub fn manifest(path: &str, identity: [u64; 5]) -> u64 {
    Digest::default().text(path).numbers(&identity).value()
}

/// The library's component: the path the manifest gives, the file the dynamic linker resolved it
/// to, that file's identity, and for a bare name (searched by the dynamic linker) what the search
/// depends on beyond the environment: the linker's cache and the executable (its `DT_RPATH`).
pub fn library(manifest_path: &str, resolved: &str, identity: [u64; 5], search: Option<([u64; 5], &str)>) -> u64 {
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
/// (the path it was started by, `platform::started_as`) and the whole `VkApplicationInfo` as given.
pub fn application(executable: &str, info: Option<(&str, u32, &str, u32, u32)>) -> u64 {
    let d = Digest::default().text(executable);
    match info {
        Some((name, version, engine, engine_version, api)) => d.number(1).text(name).number(version as u64).text(engine).numbers(&[engine_version as u64, api as u64]),
        None => d.number(0),
    }
    .value()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn environment_of(list: &[(&str, &str)]) -> u64 {
        let entries: Vec<String> = list.iter().map(|(n, v)| format!("{n}={v}")).collect();
        environment(entries.iter().map(|e| e.as_bytes()))
    }

    #[test]
    fn environment_ignores_order_and_volatile_variables_only() {
        let base = environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("PWD", "/a")]);
        assert_eq!(base, environment_of(&[("PWD", "/b"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("HOME", "/h"), ("SHLVL", "3")]));
        assert_ne!(base, environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "y")]));
        assert_ne!(base, environment_of(&[("HOME", "/h"), ("MESA_LOADER_DRIVER_OVERRIDE", "x"), ("__NV_PRIME_RENDER_OFFLOAD", "1")]));
        assert_ne!(base, environment_of(&[("HOME", "/h")]));
        // Name and value boundaries matter.
        assert_ne!(environment_of(&[("AB", "C")]), environment_of(&[("A", "BC")]));
    }

    #[test]
    fn files_are_keyed_on_path_and_identity() {
        let id = [1, 2, 3, 4, 5];
        assert_eq!(manifest("/m.json", id), manifest("/m.json", id));
        assert_ne!(manifest("/m.json", id), manifest("/m.json", [1, 2, 4, 4, 5]), "size changed");
        assert_ne!(manifest("/m.json", id), manifest("/n.json", id));
        let absolute = library("/lib/a.so", "/lib/a.so", id, None);
        assert_eq!(absolute, library("/lib/a.so", "/lib/a.so", id, None));
        assert_ne!(absolute, library("/lib/a.so", "/lib/b.so", id, None), "resolved elsewhere");
        let bare = |exe, cache| library("a.so", "/lib/a.so", id, Some((cache, exe)));
        assert_eq!(bare("/bin/x", [9; 5]), bare("/bin/x", [9; 5]));
        assert_ne!(bare("/bin/x", [9; 5]), bare("/bin/y", [9; 5]), "the executable's RPATH may find another");
        assert_ne!(bare("/bin/x", [9; 5]), bare("/bin/x", [8; 5]), "ldconfig ran");
        assert!(is_bare_name("libGLX_nvidia.so.0") && !is_bare_name("/usr/lib/a.so") && !is_bare_name("./a.so"));
    }

    #[test]
    fn changed_names_the_first_component_that_differs() {
        let recorded = [1, 2, 3, 4, 5];
        assert_eq!(changed(&recorded, &recorded), None);
        assert_eq!(changed(&recorded, &[1, 2, 3, 9, 9]), Some("machine"));
        assert_eq!(changed(&recorded, &[0, 2, 3, 4, 5]), Some("manifest"));
    }

    #[test]
    fn application_digest_covers_executable_and_application_info() {
        let a = application("/bin/x", Some(("app", 1, "engine", 2, 3)));
        assert_eq!(a, application("/bin/x", Some(("app", 1, "engine", 2, 3))));
        assert_ne!(a, application("/bin/y", Some(("app", 1, "engine", 2, 3))));
        assert_ne!(a, application("/bin/x", Some(("app", 1, "engine", 2, 4))));
        assert_ne!(a, application("/bin/x", None));
    }
}
