//! `lookup`: command name -> command, ours (`vk_generated::lookup::command_c`) against the system
//! Khronos loader's `vkGetInstanceProcAddr(instance, name)` on the same names, hits and misses.

use std::ffi::{c_char, CStr, CString};
use std::path::Path;

use vk_generated::lookup::{command_c, ExtensionSet};
use vk_generated::types::*;
use vk_generated::COMMANDS;

use crate::vk::{Loader, API_VERSION};
use crate::{json_num, json_str, machine, ns_per_item, MIN_ROUND, ROUNDS};

const SYSTEM_LOADER: &str = "/usr/lib/x86_64-linux-gnu/libvulkan.so.1";
const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";
/// The target: ours takes at most a twentieth of the system loader's time.
const TARGET_RATIO: f64 = 1.0 / 20.0;

/// The system loader with an instance created through it; the instance is destroyed on drop.
struct System {
    loader: Loader,
    instance: VkInstance,
}

impl System {
    fn open() -> Result<Self, String> {
        let loader = Loader::open(SYSTEM_LOADER)?;
        let instance = loader
            .create(&[])
            .map_err(|e| format!("{e} (apiVersion 1.3, no layers or extensions)"))?;
        Ok(System { loader, instance })
    }

    fn get(&self, name: *const c_char) -> PFN_vkVoidFunction {
        // SAFETY: a live instance and a NUL-terminated name.
        unsafe { (self.loader.gipa)(self.instance, name) }
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.loader.destroy(self.instance);
    }
}

/// One set of names and its timings (ns per name).
struct Case {
    name: &'static str,
    names: usize,
    system: Option<f64>,
    system_non_null: Option<usize>,
    ours: f64,
    ours_available: f64,
}

/// Runs the benchmark, prints the table and returns the JSON report.
pub fn run() -> String {
    // Pin the driver to lavapipe unless the caller chose one, so runs are comparable.
    let chosen = ["VK_DRIVER_FILES", "VK_ICD_FILENAMES"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if !chosen && Path::new(LAVAPIPE).exists() {
        std::env::set_var("VK_DRIVER_FILES", LAVAPIPE);
        std::env::set_var("VK_ICD_FILENAMES", LAVAPIPE);
    }
    let drivers = std::env::var("VK_DRIVER_FILES")
        .or_else(|_| std::env::var("VK_ICD_FILENAMES"))
        .unwrap_or_else(|_| "the system's default search".into());
    let system = System::open();

    // Hits: every command name, aliases included. Misses: the same names, changed at the end
    // (last char -> 'X', or 'Y' where it already was 'X') and at the start ('x' prefix).
    let hits: Vec<&'static CStr> = COMMANDS.iter().flat_map(|c| c.names()).collect();
    let changed_end: Vec<CString> = hits
        .iter()
        .map(|n| {
            let mut bytes = n.to_bytes().to_vec();
            let last = bytes.last_mut().unwrap();
            *last = if *last == b'X' { b'Y' } else { b'X' };
            CString::new(bytes).unwrap()
        })
        .collect();
    let prefixed: Vec<CString> = hits
        .iter()
        .map(|n| CString::new([b"x", n.to_bytes()].concat()).unwrap())
        .collect();
    let sets: [(&str, Vec<*const c_char>, bool); 3] = [
        ("hits", hits.iter().map(|n| n.as_ptr()).collect(), true),
        (
            "misses: last char -> X",
            changed_end.iter().map(|n| n.as_ptr()).collect(),
            false,
        ),
        (
            "misses: 'x' prefix",
            prefixed.iter().map(|n| n.as_ptr()).collect(),
            false,
        ),
    ];

    // No extensions enabled, as on the instance: what our GIPA would check per name.
    let enabled = ExtensionSet::new();
    let cases: Vec<Case> = sets
        .iter()
        .map(|(name, ptrs, hit)| {
            // In every `command_c` call: the pointers are NUL-terminated names, alive here.
            assert!(
                ptrs.iter()
                    // SAFETY: see above.
                    .all(|&p| unsafe { command_c(p) }.is_some() == *hit),
                "{name}: wrong set"
            );
            let system = system.as_ref().ok();
            Case {
                name,
                names: ptrs.len(),
                system: system.map(|s| ns_per_item(ptrs, |p| s.get(p))),
                system_non_null: system
                    .map(|s| ptrs.iter().filter(|&&p| s.get(p).is_some()).count()),
                // SAFETY: see above.
                ours: ns_per_item(ptrs, |p| unsafe { command_c(p) }),
                ours_available: ns_per_item(ptrs, |p| {
                    // SAFETY: see above.
                    unsafe { command_c(p) }.is_some_and(|c| c.is_available(API_VERSION, &enabled))
                }),
            }
        })
        .collect();

    let (cpu, cpus, date) = machine();
    println!("lookup: command name -> command; ours (vk_generated::lookup::command_c) vs the system loader's vkGetInstanceProcAddr");
    println!("machine: {cpu}, {cpus} logical CPUs; date: {date}");
    println!("system loader: {SYSTEM_LOADER}; drivers: {drivers}");
    if let Err(e) = &system {
        println!("NO REFERENCE: {e}\n  -> measuring our side only");
    }
    println!(
        "{} command names ({} commands + aliases); ns per name, best of {ROUNDS} rounds of >= {} ms",
        hits.len(),
        COMMANDS.len(),
        MIN_ROUND.as_millis()
    );
    println!();
    println!(
        "{:<24} {:>6} {:>12} {:>9} {:>12} {:>12} {:>18}",
        "case", "names", "system GIPA", "ours", "ours+avail", "ours/system", "ours+avail/system"
    );
    let ns = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.1} ns"));
    let ratio = |ours: f64, system: Option<f64>| system.map(|s| ours / s);
    let ratio_text = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.3}"));
    for c in &cases {
        println!(
            "{:<24} {:>6} {:>12} {:>9} {:>12} {:>12} {:>18}",
            c.name,
            c.names,
            ns(c.system),
            ns(Some(c.ours)),
            ns(Some(c.ours_available)),
            ratio_text(ratio(c.ours, c.system)),
            ratio_text(ratio(c.ours_available, c.system)),
        );
    }
    println!();
    if system.is_err() {
        println!("target not checked: no system-loader reference");
    } else {
        let non_null: Vec<String> = cases
            .iter()
            .map(|c| format!("{} {}/{}", c.name, c.system_non_null.unwrap_or(0), c.names))
            .collect();
        println!("system GIPA returned non-NULL for: {}", non_null.join(", "));
        let met = |f: fn(&Case) -> f64| {
            cases
                .iter()
                .all(|c| ratio(f(c), c.system).is_some_and(|r| r <= TARGET_RATIO))
        };
        let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
        println!(
            "target ours/system <= {TARGET_RATIO:.3} (1/20) in every case: {} for ours, {} for ours+avail",
            verdict(met(|c| c.ours)),
            verdict(met(|c| c.ours_available)),
        );
    }

    let rows: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                "{{\"case\":{},\"names\":{},\"system_ns\":{},\"ours_ns\":{},\"ours_available_ns\":{},\"ratio\":{},\"ratio_available\":{},\"system_non_null\":{}}}",
                json_str(c.name),
                c.names,
                json_num(c.system),
                json_num(Some(c.ours)),
                json_num(Some(c.ours_available)),
                json_num(ratio(c.ours, c.system)),
                json_num(ratio(c.ours_available, c.system)),
                c.system_non_null.map_or("null".to_string(), |n| n.to_string()),
            )
        })
        .collect();
    format!(
        "{{\"benchmark\":\"lookup\",\"date\":{},\"cpu\":{},\"logical_cpus\":{cpus},\"system_loader\":{},\"drivers\":{},\"system_error\":{},\"rounds\":{ROUNDS},\"min_round_ms\":{},\"target_ratio\":{TARGET_RATIO},\"cases\":[{}]}}",
        json_str(&date),
        json_str(&cpu),
        json_str(SYSTEM_LOADER),
        json_str(&drivers),
        system.as_ref().err().map_or("null".to_string(), |e| json_str(e)),
        MIN_ROUND.as_millis(),
        rows.join(","),
    )
    // `system` drops here: the instance is destroyed, then the loader unloaded.
}
