//! Each file the loader reads is read at most once per API call, and a settled file that has not
//! changed is not read again by later calls: counted from the kernel's side with `strace` (every
//! `openat` and `stat` of a manifest or of the driver cache), around each call of a child
//! process. Skipped, saying so, where strace is not installed.

mod common;

use std::ffi::{c_char, CStr};
use std::path::Path;

use vk_generated::types::*;

type Gipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;

/// Opened around each call, so the trace shows where one ends and the next begins.
const MARKER_DIR: &str = "/nonexistent-loader-file-reads-marker";

fn mark(what: &str) {
    let _ = std::fs::File::open(format!("{MARKER_DIR}/{what}"));
}

/// The child side: three rounds of a pre-instance query and an instance created and destroyed.
#[test]
fn scenario_entry() {
    if std::env::var("SCENARIO").as_deref() != Ok("calls") {
        return;
    }
    // SAFETY: loading our libvulkan runs only its own initialisers, which ask nothing of us.
    let lib = unsafe { libloading::Library::new(common::libvulkan()).unwrap() };
    // SAFETY: the symbol is vkGetInstanceProcAddr, of type `Gipa`; `lib` stays loaded to the end.
    let gipa: Gipa = unsafe { *lib.get::<Gipa>(b"vkGetInstanceProcAddr\0").unwrap() };
    // SAFETY: the name is a C string; the instance is NULL or the live one created below.
    let get = |instance: VkInstance, name: &CStr| unsafe { gipa(instance, name.as_ptr()) };
    // SAFETY: each command is the loader's answer for the name beside it, so it has that PFN type;
    // `instance` is live from its creation to vkDestroyInstance; the other pointers are locals.
    unsafe {
        let extensions: PFN_vkEnumerateInstanceExtensionProperties = std::mem::transmute(get(VkInstance::NULL, c"vkEnumerateInstanceExtensionProperties"));
        let create: PFN_vkCreateInstance = std::mem::transmute(get(VkInstance::NULL, c"vkCreateInstance"));
        for round in 0..3 {
            let mut count = 0;
            mark(&format!("query-{round}"));
            assert_eq!(extensions.unwrap()(std::ptr::null(), &mut count, std::ptr::null_mut()), VkResult::SUCCESS);
            mark(&format!("create-{round}"));
            let mut instance = VkInstance::NULL;
            assert_eq!(create.unwrap()(&VkInstanceCreateInfo::default(), std::ptr::null(), &mut instance), VkResult::SUCCESS);
            mark(&format!("destroy-{round}"));
            let destroy: PFN_vkDestroyInstance = std::mem::transmute(get(instance, c"vkDestroyInstance"));
            destroy.unwrap()(instance, std::ptr::null());
            mark(&format!("done-{round}"));
        }
    }
}

/// The calls of the trace in `log`: (name, the lines between its marker and the next).
fn calls(log: &str) -> Vec<(String, Vec<&str>)> {
    let mut calls: Vec<(String, Vec<&str>)> = Vec::new();
    for line in log.lines() {
        if let Some(at) = line.find(&format!("\"{MARKER_DIR}/")) {
            let name = &line[at + MARKER_DIR.len() + 2..];
            calls.push((name[..name.find('"').unwrap_or(name.len())].to_string(), Vec::new()));
        } else if let Some((_, lines)) = calls.last_mut() {
            lines.push(line);
        }
    }
    calls
}

/// How many of `lines` (strace's, `PID call(args) = result`) are an open (`open`) or a `stat`
/// of any kind (`stat`: `newfstatat`, `statx`...) of the file `path`.
fn count(lines: &[&str], call: &str, path: &Path) -> usize {
    let quoted = format!("\"{}\"", path.display());
    let syscall = |line: &str| line.split_once(' ').map_or("", |(_, rest)| rest.trim_start()).split('(').next().unwrap_or_default().to_string();
    let wanted = |name: &str| match call {
        "open" => name == "open" || name == "openat",
        _ => name.contains("stat"),
    };
    lines.iter().filter(|l| l.contains(&quoted) && wanted(&syscall(l))).count()
}

fn date_back(path: &Path) {
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(an_hour_ago).unwrap();
}

#[test]
fn each_file_is_read_once_per_call_and_an_unchanged_one_not_again() {
    if !std::process::Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: strace not installed");
        return;
    }
    let dir = common::scratch("file-reads");
    let driver = common::tagged_driver(&dir, "reads");
    let manifest = common::driver_manifest(&dir, "reads.json", &driver);
    let layers = dir.join("implicit");
    std::fs::create_dir_all(&layers).unwrap();
    let extra = r#", "enable_environment": {"ENABLE_FILE_READS_LAYER": "1"}, "disable_environment": {"DISABLE_FILE_READS_LAYER": "1"}"#;
    let layer = common::layer_manifest(&layers, "reads_layer.json", "VK_LAYER_TEST_reads", &common::test_layer(), extra);
    // Settled, as installed files are: the driver cache may answer for the driver.
    for file in [&driver, &manifest, &layer] {
        date_back(file);
    }
    let cache_home = dir.join("cache");
    let log = dir.join("strace.log");
    let runner = format!("strace -f -qq -e trace=%file -o {}", log.display());
    let env = [
        ("VK_DRIVER_FILES", manifest.display().to_string()),
        ("VK_IMPLICIT_LAYER_PATH", layers.display().to_string()),
        ("XDG_CACHE_HOME", cache_home.display().to_string()),
        ("HOME", dir.display().to_string()),
    ];
    // Twice: the first process records the driver, the second finds its record.
    for process in ["recording", "warm"] {
        let run = common::run_scenario_under(&runner, "scenario_entry", "calls", &env);
        assert!(run.status.success(), "{process}: {}{}", run.stdout, run.stderr);
        let text = std::fs::read_to_string(&log).unwrap();
        let calls = calls(&text);
        assert_eq!(calls.len(), 12, "{process}: the markers of 3 rounds of 4 in the trace");
        let cache_file = cache_home.join("vulkan-loader-rs/drivers");
        for (name, lines) in &calls {
            for file in [&manifest, &layer, &cache_file] {
                for call in ["open", "stat"] {
                    let n = count(lines, call, file);
                    assert!(n <= 1, "{process}: {name}: {call} of {} {n} times in one call:\n{}", file.display(), lines.join("\n"));
                }
            }
        }
        // After the first call has read them, the manifests are not opened again: a `stat` per
        // call tells they have not changed.
        for (name, lines) in &calls[1..] {
            for file in [&manifest, &layer] {
                assert_eq!(count(lines, "open", file), 0, "{process}: {name}: {} opened again:\n{}", file.display(), lines.join("\n"));
            }
        }
    }
}
