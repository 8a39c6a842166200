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
