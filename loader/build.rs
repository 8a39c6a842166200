//! Gives the shared library the SONAME applications link against, packed relocations, `nodelete`,
//! and a fixed SYSCONFDIR.

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvulkan.so.1");
    // The library's references to its own `vk*` functions (the tables `vkGet*ProcAddr` answer
    // from) bind to its own definitions, as the Khronos loader links: without it, an executable
    // that defines a `vkCmdDraw` of its own (volk's function-pointer variables, a static loader)
    // would be what our `vkGetDeviceProcAddr` hands out.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic");
    // Relative relocations packed (DT_RELR, glibc 2.36+): the generated tables are thousands of
    // pointers, and RELR stores their fixups in a few hundred bytes instead of 24 bytes each.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
    // Never unmapped (`dlclose` leaves it loaded, as glib does for libgobject): the loader's
    // process-lifetime state (parsed manifests, the driver cache's decoded file, the
    // unknown-command registry) stays reachable and is found again by the next `dlopen`, where an
    // unmapped library would lose it at each unload (what valgrind calls definite leaks), and no
    // destructor frees it under a thread still calling in while the process exits.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    // The unwinder (`_Unwind_*`, which `catch_unwind` at the API boundary needs) linked in from
    // libgcc_eh.a, ahead of std's `-lgcc_s`, which `--as-needed` then drops: a C application
    // loading us does not load libgcc_s.so.1 as well (about 100 us and 100 KiB resident).
    println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    let sysconfdir = std::env::var("VK_LOADER_SYSCONFDIR").unwrap_or_else(|_| "/etc".into());
    println!("cargo:rustc-env=VK_LOADER_SYSCONFDIR={sysconfdir}");
    println!("cargo:rerun-if-env-changed=VK_LOADER_SYSCONFDIR");
    source_digest();
}

/// A digest of the runtime's source (`src/`), for the driver cache's key: records made by another
/// build of the loader are not trusted. The library and `vk-loader`, compiled from the same
/// source, agree on it.
fn source_digest() {
    println!("cargo:rerun-if-changed=src");
    fn files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("loader/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut all = Vec::new();
    files(std::path::Path::new("src"), &mut all);
    all.sort();
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    for path in all {
        let bytes = std::fs::read(&path).expect("a source file");
        for &b in path.to_string_lossy().as_bytes().iter().chain(&bytes) {
            digest = (digest ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=VK_LOADER_SOURCE_DIGEST={digest:016x}");
}
