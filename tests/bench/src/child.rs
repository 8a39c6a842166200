//! `loader-bench child <group> <libvulkan>`: one group of measurements in a fresh process with one
//! loader in it. A loader keeps what it dlopens and reads the environment, so every loader and
//! scenario gets its own process; the parent sets the environment (see `sandbox`) and reads the
//! `result <key> <value>` lines printed here.
//!
//! The parent passes through the environment the layers to enable (`LOADER_BENCH_LAYERS`, a
//! comma list) and the driver library (`LOADER_BENCH_DRIVER_LIB`, for the floor of per-call costs).

use std::ffi::{c_char, CStr, CString};
use std::hint::black_box;
use std::ptr;
use std::time::Instant;

use vk_generated::types::*;
use vk_generated::COMMANDS;

use crate::ns_per_item;
use crate::vk::{CmdDraw, EnumerateExtensions, Loader, Recording};

pub const LAYERS_VAR: &str = "LOADER_BENCH_LAYERS";
pub const DRIVER_LIB_VAR: &str = "LOADER_BENCH_DRIVER_LIB";
/// A path no loader opens: the child opens it (and fails) around the calls `trace` counts, so the
/// parent finds that window in strace's log.
pub const MARKER_DIR: &str = "/nonexistent-loader-bench-marker";

fn emit(key: &str, value: f64) {
    println!("result {key} {value}");
}

pub fn main(args: &[String]) -> Result<(), String> {
    let [group, loader_path] = args else {
        return Err("usage: loader-bench child <group> <libvulkan>".into());
    };
    let layer_names: Vec<CString> = std::env::var(LAYERS_VAR)
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(|n| CString::new(n).expect("no NUL in layer names"))
        .collect();
    let layers: Vec<*const c_char> = layer_names.iter().map(|n| n.as_ptr()).collect();
    if group == "memory" {
        return memory(loader_path, &layers);
    }
    let start = Instant::now();
    let loader = Loader::open(loader_path)?;
    let dlopen_ns = start.elapsed().as_nanos() as f64;
    match group.as_str() {
        "cold" => {
            emit("dlopen_ns", dlopen_ns);
            emit("cold_ns", create_destroy(&loader, &layers)?);
            Ok(())
        }
        "create" => create(&loader, &layers),
        "calls" => calls(&loader, &layers),
        "trace" => trace(&loader, &layers),
        "layer-count" => layer_count(&loader),
        "record" => crate::real_driver::record(&loader, &layers),
        other => Err(format!("unknown child group {other}")),
    }
}

/// How many layers `vkEnumerateInstanceLayerProperties` lists.
fn layer_count(loader: &Loader) -> Result<(), String> {
    type Enumerate = unsafe extern "system" fn(*mut u32, *mut VkLayerProperties) -> VkResult;
    // SAFETY: the exported command's signature; the count-only call.
    let enumerate: Enumerate = unsafe { loader.export(c"vkEnumerateInstanceLayerProperties")? };
    let mut count = 0;
    crate::vk::check(unsafe { enumerate(&mut count, ptr::null_mut()) }, "vkEnumerateInstanceLayerProperties")?;
    emit("layers_listed", count as f64);
    Ok(())
}

/// Times one `vkCreateInstance` + `vkDestroyInstance`.
fn create_destroy(loader: &Loader, layers: &[*const c_char]) -> Result<f64, String> {
    let start = Instant::now();
    let instance = loader.create(layers)?;
    loader.destroy(instance);
    Ok(start.elapsed().as_nanos() as f64)
}

/// `warm_ns`: creations after the first, best of rounds (the first is `cold`'s).
fn create(loader: &Loader, layers: &[*const c_char]) -> Result<(), String> {
    create_destroy(loader, layers)?;
    let mut failed = None;
    let warm = ns_per_item(&[()], |()| {
        if let Err(e) = create_destroy(loader, layers) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    emit("warm_ns", warm);
    Ok(())
}

/// Per-call costs: enumeration, name lookup, and `vkCmdDraw` three ways.
fn calls(loader: &Loader, layers: &[*const c_char]) -> Result<(), String> {
    // SAFETY: the exported command's signature.
    let enumerate: EnumerateExtensions = unsafe { loader.export(c"vkEnumerateInstanceExtensionProperties")? };
    let mut props = vec![VkExtensionProperties::default(); 64];
    emit(
        "enumerate_ns",
        ns_per_item(&[()], |()| {
            let mut count = 0;
            // SAFETY: the two-call idiom with a buffer of the size passed.
            unsafe {
                enumerate(ptr::null(), &mut count, ptr::null_mut());
                count = count.min(props.len() as u32);
                enumerate(ptr::null(), &mut count, props.as_mut_ptr())
            }
        }),
    );

    let recording = Recording::new(loader, layers)?;
    let (instance, device) = (recording.instance, recording.device);
    for (set, names) in name_sets() {
        let ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY (both): live handles and NUL-terminated names.
        let gipa = ns_per_item(&ptrs, |p| unsafe { (loader.gipa)(instance, p) });
        let gdpa = ns_per_item(&ptrs, |p| unsafe { (recording.gdpa)(device, p) });
        emit(&format!("gipa_{set}_ns"), gipa);
        emit(&format!("gdpa_{set}_ns"), gdpa);
    }

    // SAFETY: the exported vkCmdDraw.
    let trampoline: CmdDraw = unsafe { loader.export(c"vkCmdDraw")? };
    let from_gdpa: CmdDraw = match recording.device_proc(c"vkCmdDraw") {
        // SAFETY: vkGetDeviceProcAddr returned vkCmdDraw.
        Some(f) => unsafe { std::mem::transmute::<unsafe extern "system" fn(), CmdDraw>(f) },
        None => return Err("vkGetDeviceProcAddr(vkCmdDraw) is NULL".into()),
    };
    let floor = driver_cmd_draw()?;
    emit("gdpa_is_driver_own", (from_gdpa as usize == floor as usize) as u8 as f64);
    let before = recording.draws_recorded();
    let (best, calls) = per_call_interleaved(recording.cmd, [floor, from_gdpa, trampoline]);
    emit("draw_floor_ns", best[0]);
    emit("draw_gdpa_ns", best[1]);
    emit("draw_trampoline_ns", best[2]);
    // The driver must have seen every call (its counter is a u32).
    if let (Some(before), Some(after)) = (before, recording.draws_recorded()) {
        let expected = before.wrapping_add(calls as u32);
        if after != expected {
            return Err(format!("the driver counted {after} draws, expected {expected}"));
        }
        emit("draws_verified", 1.0);
    }
    Ok(())
}

/// Nanoseconds per `vkCmdDraw` call for each function: the best of many short rounds that take
/// turns, so that the three see the same machine (a sub-nanosecond difference is otherwise lost
/// in other processes' noise). Also returns how many calls were made in all.
fn per_call_interleaved(cmd: VkCommandBuffer, fns: [CmdDraw; 3]) -> ([f64; 3], u64) {
    const ROUNDS: usize = 400;
    const CALLS: u64 = 20_000;
    let mut best = [f64::INFINITY; 3];
    let mut calls = 0;
    for round in 0..=ROUNDS {
        for (i, &f) in fns.iter().enumerate() {
            let f = black_box(f);
            let start = Instant::now();
            for _ in 0..CALLS {
                // SAFETY: a command buffer in the recording state.
                unsafe { f(black_box(cmd), 3, 1, 0, 0) }
            }
            let ns = start.elapsed().as_nanos() as f64 / CALLS as f64;
            calls += CALLS;
            // Round 0 warms up.
            if round > 0 {
                best[i] = best[i].min(ns);
            }
        }
    }
    (best, calls)
}

/// Every command name (aliases included) and two sets of misses: the last character changed, and
/// an `x` in front.
fn name_sets() -> Vec<(&'static str, Vec<CString>)> {
    let hits: Vec<CString> = COMMANDS.iter().flat_map(|c| c.names()).map(CStr::to_owned).collect();
    let changed_end = hits
        .iter()
        .map(|n| {
            let mut bytes = n.as_bytes().to_vec();
            let last = bytes.last_mut().expect("names are not empty");
            *last = if *last == b'X' { b'Y' } else { b'X' };
            CString::new(bytes).expect("no NUL")
        })
        .collect();
    let prefixed = hits.iter().map(|n| CString::new([b"x", n.as_bytes()].concat()).expect("no NUL")).collect();
    vec![("hits", hits), ("misses", changed_end), ("prefix_misses", prefixed)]
}

/// The test driver's own `vkCmdDraw`, from the library the loader already opened.
fn driver_cmd_draw() -> Result<CmdDraw, String> {
    let path = std::env::var(DRIVER_LIB_VAR).map_err(|_| format!("{DRIVER_LIB_VAR} not set"))?;
    let flags = libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_LOCAL;
    // SAFETY: RTLD_NOLOAD only finds the library the loader already has; nothing is initialised.
    let lib = unsafe { libloading::os::unix::Library::open(Some(&path), flags) }
        .map_err(|e| format!("the driver {path} is not loaded: {e}"))?;
    type IcdGipa = unsafe extern "system" fn(VkInstance, *const c_char) -> PFN_vkVoidFunction;
    // SAFETY: the test driver's exported entry point; with any non-NULL instance it returns its
    // functions, which do not depend on the instance.
    let f = unsafe {
        let gipa: IcdGipa = *lib.get::<IcdGipa>(b"vk_icdGetInstanceProcAddr\0").map_err(|e| e.to_string())?;
        gipa(VkInstance(ptr::dangling_mut()), c"vkCmdDraw".as_ptr())
    };
    // The loader holds its own reference: this one may go.
    drop(lib);
    // SAFETY: the driver's vkCmdDraw.
    f.map(|f| unsafe { std::mem::transmute::<unsafe extern "system" fn(), CmdDraw>(f) })
        .ok_or_else(|| "the driver has no vkCmdDraw".into())
}

/// Resident memory (KiB): before the loader is loaded, after, with an instance, and with a device
/// and a command buffer too.
fn memory(loader_path: &str, layers: &[*const c_char]) -> Result<(), String> {
    emit("rss_base_kib", rss_kib());
    let loader = Loader::open(loader_path)?;
    emit("rss_loaded_kib", rss_kib());
    let instance = loader.create(layers)?;
    emit("rss_instance_kib", rss_kib());
    loader.destroy(instance);
    let recording = Recording::new(&loader, layers)?;
    emit("rss_device_kib", rss_kib());
    drop(recording);
    Ok(())
}

fn rss_kib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(f64::NAN);
    // SAFETY: plain libc query.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as f64 / 1024.0
}

/// Two creations, each between markers, for strace's log (see `trace`).
fn trace(loader: &Loader, layers: &[*const c_char]) -> Result<(), String> {
    for i in 1..=2 {
        let _ = std::fs::File::open(format!("{MARKER_DIR}/begin-{i}"));
        let instance = loader.create(layers)?;
        loader.destroy(instance);
        let _ = std::fs::File::open(format!("{MARKER_DIR}/end-{i}"));
    }
    Ok(())
}
