//! Gives the shared library the SONAME applications link against, packed relocations, and a
//! fixed SYSCONFDIR.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvulkan.so.1");
    // Relative relocations packed (DT_RELR, glibc 2.36+): the generated tables are thousands of
    // pointers, and RELR stores their fixups in a few hundred bytes instead of 24 bytes each.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
    let sysconfdir = std::env::var("VK_LOADER_SYSCONFDIR").unwrap_or_else(|_| "/etc".into());
    println!("cargo:rustc-env=VK_LOADER_SYSCONFDIR={sysconfdir}");
    println!("cargo:rerun-if-env-changed=VK_LOADER_SYSCONFDIR");
}
