//! ABI: every struct, union, enum value and API constant that Debian's C headers
//! (`/usr/include/vulkan`, package libvulkan-dev) define has the same size, alignment, member
//! offsets and values as the generated Rust types.
//!
//! The C probe is generated from the IR of the registry those headers were made from
//! (`/usr/share/vulkan/registry`), so it names exactly what the headers have; the Rust side is
//! the committed `generated/abi/probe.rs`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod probe {
    #![allow(non_upper_case_globals)]
    use vk_generated::types::*;
    include!("../abi/probe.rs");
}

const DEBIAN_REGISTRY: &str = "/usr/share/vulkan/registry";

fn c_facts() -> Vec<String> {
    let reg = generator::load_registry(Path::new(DEBIAN_REGISTRY)).unwrap_or_else(|e| {
        panic!("{e}\n(the ABI test needs Debian's libvulkan-dev: apt-get install libvulkan-dev)")
    });
    let source = generator::emit::abi_probe::c_probe(&reg);
    let dir = std::env::temp_dir().join(format!("vk-abi-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join("probe.c");
    let exe = dir.join("probe");
    std::fs::write(&c_file, source).unwrap();
    let cc = Command::new("cc").args(cfg!(target_arch = "x86").then_some("-m32")).arg("-std=c11").arg("-o").arg(&exe).arg(&c_file).output().expect("run cc");
    assert!(cc.status.success(), "cc failed:\n{}", String::from_utf8_lossy(&cc.stderr));
    let out = Command::new(&exe).output().expect("run probe");
    assert!(out.status.success());
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn layouts_and_values_match_the_c_headers() {
    let mut rust: BTreeMap<String, String> = BTreeMap::new();
    for (name, size, align, members) in probe::LAYOUTS {
        rust.insert(format!("T {name}"), format!("{size} {align}"));
        for (member, offset) in *members {
            rust.insert(format!("M {name}.{member}"), offset.to_string());
        }
    }
    for (name, value) in probe::VALUES {
        rust.insert(format!("V {name}"), value.to_string());
    }
    for (name, value) in probe::CONSTANTS {
        rust.insert(format!("C {name}"), value.to_string());
    }
    let mut counts = BTreeMap::new();
    let mut problems = Vec::new();
    let mut size_differs = Vec::new();
    for line in c_facts() {
        let mut parts = line.splitn(3, ' ');
        let (kind, name, c_value) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let key = format!("{kind} {name}");
        match rust.get(&key) {
            None => problems.push(format!("{key}: in the C headers, missing from the generated types")),
            Some(ours) if ours != c_value && kind == "T" => size_differs.push(format!("{key}: C {c_value}, ours {ours}")),
            Some(ours) if ours != c_value => problems.push(format!("{key}: C {c_value}, ours {ours}")),
            Some(_) => *counts.entry(kind.to_string()).or_insert(0) += 1,
        }
    }
    // A few vendor structs gained members at their end in later registries (their spec version
    // went up). Every member the old header has was still compared above; only the total size may
    // differ, and only for types named here with the registry change that explains it.
    const GREW_LATER: &[&str] = &[
        "T VkDeviceFaultVendorBinaryHeaderVersionOneEXT",
        "T VkPhysicalDeviceClusterCullingShaderPropertiesHUAWEI",
    ];
    for entry in &size_differs {
        if !GREW_LATER.iter().any(|g| entry.starts_with(&format!("{g}:"))) {
            problems.push(entry.clone());
        }
    }
    println!("sizes that grew after Debian's registry: {size_differs:?}");
    println!(
        "compared {} types, {} members, {} enum values, {} constants",
        counts.get("T").unwrap_or(&0),
        counts.get("M").unwrap_or(&0),
        counts.get("V").unwrap_or(&0),
        counts.get("C").unwrap_or(&0)
    );
    assert!(problems.is_empty(), "{} ABI mismatches:\n{}", problems.len(), problems.join("\n"));
    assert!(counts["T"] > 800 && counts["M"] > 4000 && counts["V"] > 2000 && counts["C"] > 40, "too little compared: {counts:?}");
}
