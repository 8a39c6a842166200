//! Gives the shared library the SONAME applications link against, and a fixed SYSCONFDIR.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libvulkan.so.1");
    let sysconfdir = std::env::var("VK_LOADER_SYSCONFDIR").unwrap_or_else(|_| "/etc".into());
    println!("cargo:rustc-env=VK_LOADER_SYSCONFDIR={sysconfdir}");
    println!("cargo:rerun-if-env-changed=VK_LOADER_SYSCONFDIR");
}
