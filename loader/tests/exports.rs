//! `libvulkan.so.1` exports exactly the generated symbol list (the golden file), and carries the
//! SONAME applications link against.

mod common;

use std::process::Command;

#[test]
fn exported_symbols_are_the_golden_list() {
    let lib = common::libvulkan();
    let nm = Command::new("nm").args(["-D", "--defined-only"]).arg(&lib).output().expect("run nm");
    assert!(nm.status.success(), "nm failed on {}", lib.display());
    let mut ours: Vec<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect();
    ours.sort();
    let golden = include_str!("../../generator/tests/golden/exports.txt");
    let expected: Vec<String> = golden.lines().map(str::to_string).collect();
    let missing: Vec<_> = expected.iter().filter(|e| !ours.contains(e)).collect();
    let extra: Vec<_> = ours.iter().filter(|o| !expected.contains(o)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "missing exports: {missing:?}\nunexpected exports: {extra:?}");
    assert_eq!(ours.len(), expected.len());
}

#[test]
fn soname_is_libvulkan_so_1() {
    let out = Command::new("readelf").arg("-d").arg(common::libvulkan()).output().expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Library soname: [libvulkan.so.1]"), "{text}");
}

/// The shipped library's references to its own `vk*` functions bind to its own definitions
/// (`-Bsymbolic`): no dynamic relocation names one, so an executable defining a `vkCmdDraw` of its
/// own (volk's function-pointer variables) cannot become what `vkGetDeviceProcAddr` returns.
#[test]
fn own_vulkan_functions_are_bound_inside_the_library() {
    let out = Command::new("readelf").args(["-r", "-W"]).arg(common::shipped_libvulkan()).output().expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(["R_X86_64_", "R_AARCH64_", "R_386_"].iter().any(|kind| text.contains(kind)), "no relocations listed:\n{text}");
    let named: Vec<&str> = text.lines().filter(|l| l.split_whitespace().nth(4).is_some_and(|s| s.starts_with("vk"))).collect();
    assert!(named.is_empty(), "relocations against our own vk* symbols:\n{}", named.join("\n"));
}
