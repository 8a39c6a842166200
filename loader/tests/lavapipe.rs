//! A C program linked with `-lvulkan` against our library runs on Mesa's lavapipe (a real driver,
//! package mesa-vulkan-drivers): the drop-in claim, end to end.

mod common;

use std::process::Command;

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

#[test]
fn c_program_linked_against_us_runs_on_lavapipe() {
    assert!(std::path::Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let dir = common::scratch("c-hello");
    // The program links `-lvulkan` from this directory and finds `libvulkan.so.1` there at run time.
    std::os::unix::fs::symlink(common::libvulkan(), dir.join("libvulkan.so")).unwrap();
    std::os::unix::fs::symlink(common::libvulkan(), dir.join("libvulkan.so.1")).unwrap();
    let exe = dir.join("hello");
    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c/hello.c");
    let cc = Command::new("cc").arg("-o").arg(&exe).arg(source).arg("-L").arg(&dir).arg("-lvulkan").output().unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let run = Command::new(&exe)
        .env("LD_LIBRARY_PATH", &dir)
        .env("VK_DRIVER_FILES", LAVAPIPE)
        .env_remove("VK_ICD_FILENAMES")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", String::from_utf8_lossy(&run.stderr));
    assert!(out.contains("0: llvmpipe"), "{out}");
    let ldd = Command::new("ldd").arg(&exe).env("LD_LIBRARY_PATH", &dir).output().unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.contains(&format!("libvulkan.so.1 => {}", dir.join("libvulkan.so.1").display())), "{ldd}");
}
