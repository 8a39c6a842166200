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
use crate::vk::{CmdDraw, EnumerateExtensions, Loader, QueueSubmit, Recording};

pub const LAYERS_VAR: &str = "LOADER_BENCH_LAYERS";
pub const DRIVER_LIB_VAR: &str = "LOADER_BENCH_DRIVER_LIB";
/// A path no loader opens: the child opens it (and fails) around the calls `trace` counts, so the
/// parent finds that window in strace's log.
pub const MARKER_DIR: &str = "/nonexistent-loader-bench-marker";

/// The parent's side: runs a child command and returns its `result` lines as (key, value).
pub fn run(command: &mut std::process::Command, what: &str) -> Result<Vec<(String, f64)>, String> {
    run_with_stdout(command, what).map(|(results, _)| results)
}

/// [`run`], and the child's whole stdout (where the test driver prints what it was given).
pub fn run_with_stdout(command: &mut std::process::Command, what: &str) -> Result<(Vec<(String, f64)>, String), String> {
    let output = command.output().map_err(|e| format!("{what}: cannot start: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{what} failed ({}): {stdout}{stderr}", output.status));
    }
    let mut results = Vec::new();
    for line in stdout.lines() {
        let mut parts = line.split_whitespace();
        if let (Some("result"), Some(key), Some(value)) = (parts.next(), parts.next(), parts.next()) {
            let value = value.parse().map_err(|_| format!("{what}: bad output line {line}"))?;
            results.push((key.to_string(), value));
        }
    }
    Ok((results, stdout.into_owned()))
}

fn emit(key: &str, value: f64) {
    println!("result {key} {value}");
}

pub fn main(args: &[String]) -> Result<(), String> {
    if let [group, ours, system] = args {
        let layer_names = layer_list();
        let layers: Vec<*const c_char> = layer_names.iter().map(|n| n.as_ptr()).collect();
        match group.as_str() {
            "draw-pair" => return draw_pair(ours, system, &layers, false),
            "draw-pair-system-first" => return draw_pair(ours, system, &layers, true),
            "record-pair" => return crate::real_driver::record_pair(ours, system, &layers),
            _ => {}
        }
    }
    let [group, loader_path] = args else {
        return Err("usage: loader-bench child <group> <libvulkan> | child draw-pair|record-pair <ours> <system>".into());
    };
    let layer_names = layer_list();
    let layers: Vec<*const c_char> = layer_names.iter().map(|n| n.as_ptr()).collect();
    if group == "memory" {
        return memory(loader_path, &layers);
    }
    if let Some(probe) = group.strip_prefix("startup-") {
        return crate::startup::child(probe, loader_path);
    }
    if group == "record" {
        // The first creation on settled files with the cache empty: ours records the driver.
        // (Where the Khronos loader runs, there is nothing to remove.)
        if let Some(home) = std::env::var_os("HOME") {
            let _ = std::fs::remove_dir_all(std::path::Path::new(&home).join(".cache/vulkan-loader-rs"));
        }
    }
    let start = Instant::now();
    let loader = Loader::open(loader_path)?;
    let dlopen_ns = start.elapsed().as_nanos() as f64;
    match group.as_str() {
        "cold" => {
            emit("dlopen_ns", dlopen_ns);
            let faults = minor_faults();
            emit("cold_ns", create_destroy(&loader, &layers)?);
            emit("cold_faults", minor_faults() - faults);
            Ok(())
        }
        "record" => {
            emit("record_ns", create_destroy(&loader, &layers)?);
            Ok(())
        }
        "create" => create(&loader, &layers),
        "calls" => calls(&loader, &layers),
        "trace" => trace(&loader, &layers),
        "layer-count" => layer_count(&loader),
        "layer-sdk" => crate::layer_sdk::child(&loader),
        other => Err(format!("unknown child group {other}")),
    }
}

/// The layers the parent asks to enable.
fn layer_list() -> Vec<CString> {
    std::env::var(LAYERS_VAR)
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(|n| CString::new(n).expect("no NUL in layer names"))
        .collect()
}

/// How many layers `vkEnumerateInstanceLayerProperties` lists.
fn layer_count(loader: &Loader) -> Result<(), String> {
    type Enumerate = unsafe extern "system" fn(*mut u32, *mut VkLayerProperties) -> VkResult;
    // SAFETY: the exported command's signature; the count-only call.
    let enumerate: Enumerate = unsafe { loader.export(c"vkEnumerateInstanceLayerProperties")? };
    let mut count = 0;
    // SAFETY: a place for the count and no array.
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

/// Per-call costs: enumeration and name lookup (`vkCmdDraw`: see `draw_pair`).
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

    // The harness's own cost per name: the same loop around a function that does nothing.
    /// # Safety
    /// None: no argument is read (`unsafe` to be a `Gdpa`).
    unsafe extern "system" fn nothing(_: VkDevice, _: *const c_char) -> PFN_vkVoidFunction {
        None
    }
    let nothing = black_box(nothing as crate::vk::Gdpa);
    let names = [c"vkCmdDraw".as_ptr(); 64];
    // SAFETY: the function reads nothing.
    emit("harness_ns", ns_per_item(&names, |p| unsafe { nothing(VkDevice::NULL, p) }));

    let recording = Recording::new(loader, layers)?;
    let (instance, device) = (recording.instance, recording.device);
    for (set, names) in name_sets() {
        let ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        // SAFETY: the live instance and NUL-terminated names.
        let gipa = ns_per_item(&ptrs, |p| unsafe { (loader.gipa)(instance, p) });
        // SAFETY: the live device and NUL-terminated names.
        let gdpa = ns_per_item(&ptrs, |p| unsafe { (recording.gdpa)(device, p) });
        emit(&format!("gipa_{set}_ns"), gipa);
        emit(&format!("gdpa_{set}_ns"), gdpa);
    }

    Ok(())
}

/// `vkCmdDraw` per call through both loaders in this one process (RTLD_LOCAL keeps their symbols
/// apart; the driver library is shared): each loader's exported trampoline and its
/// `vkGetDeviceProcAddr` pointer on a command buffer of its own device, and the driver's own
/// function (the floor) on each command buffer, all taking turns. Per-call differences are a
/// fraction of a nanosecond: measured in separate processes they drowned in the difference
/// between two processes (heap placement, clock), which is larger.
///
/// Which loader is opened and creates its device first changes the layers' figures by a few
/// percent (their per-device lookups, where the heap puts things): the parent runs both orders
/// (`system_first`) and keeps each side's best.
fn draw_pair(ours: &str, system: &str, layers: &[*const c_char], system_first: bool) -> Result<(), String> {
    let order = if system_first { [1, 0] } else { [0, 1] };
    let paths = [ours, system];
    let mut opened = [None, None];
    for i in order {
        opened[i] = Some(Loader::open(paths[i])?);
    }
    let loaders = opened.map(|l| l.expect("both loaders opened"));
    let mut created = [None, None];
    for i in order {
        created[i] = Some(Recording::new(&loaders[i], layers)?);
    }
    let recordings = created.map(|r| r.expect("both devices created"));
    let floor = driver_cmd_draw()?;
    let mut fns = Vec::new();
    for (loader, recording) in loaders.iter().zip(&recordings) {
        // SAFETY: the exported vkCmdDraw.
        let trampoline: CmdDraw = unsafe { loader.export(c"vkCmdDraw")? };
        let from_gdpa: CmdDraw = match recording.device_proc(c"vkCmdDraw") {
            // SAFETY: vkGetDeviceProcAddr returned vkCmdDraw.
            Some(f) => unsafe { std::mem::transmute::<unsafe extern "system" fn(), CmdDraw>(f) },
            None => return Err("vkGetDeviceProcAddr(vkCmdDraw) is NULL".into()),
        };
        fns.extend([(recording.cmd, floor), (recording.cmd, from_gdpa), (recording.cmd, trampoline)]);
    }
    let before = recordings.each_ref().map(|r| r.draws_recorded());
    let (best, calls) = per_call_interleaved(&fns);
    for (side, i) in [("ours", 0), ("system", 1)] {
        emit(&format!("{side}_gdpa_is_driver_own"), (fns[3 * i + 1].1 as usize == floor as usize) as u8 as f64);
        emit(&format!("{side}_draw_floor_ns"), best[3 * i]);
        emit(&format!("{side}_draw_gdpa_ns"), best[3 * i + 1]);
        emit(&format!("{side}_draw_trampoline_ns"), best[3 * i + 2]);
        // The driver must have seen every call (its counter is a u32).
        let made: u64 = calls[3 * i..3 * i + 3].iter().sum();
        if let (Some(before), Some(after)) = (before[i], recordings[i].draws_recorded()) {
            let expected = before.wrapping_add(made as u32);
            if after != expected {
                return Err(format!("{side}: the driver counted {after} draws, expected {expected}"));
            }
        }
    }
    Ok(())
}

/// Nanoseconds per `vkCmdDraw` call for each (command buffer, function): the best of many short
/// rounds that take turns, so that all see the same machine. Also returns the calls made through
/// each. (The layer-sdk benchmark uses it too.)
pub(crate) fn per_call_interleaved(fns: &[(VkCommandBuffer, CmdDraw)]) -> (Vec<f64>, Vec<u64>) {
    interleaved(fns, |(cmd, f)| {
        // SAFETY: a command buffer in the recording state, of the device `f` belongs to.
        unsafe { f(black_box(cmd), 3, 1, 0, 0) }
    })
}

/// Nanoseconds per `vkQueueSubmit(queue, 1, info, VK_NULL_HANDLE)` for each (queue, submit info,
/// function), as [`per_call_interleaved`]; also the calls made through each. Each `info` must
/// outlive the call and name command buffers of `queue`'s device, as `f` knows them.
pub(crate) fn per_submit_interleaved(fns: &[(VkQueue, *const VkSubmitInfo, QueueSubmit)]) -> (Vec<f64>, Vec<u64>) {
    interleaved(fns, |(queue, info, f)| {
        // SAFETY: a queue of the device `f` belongs to and one valid submit info (the caller's
        // contract above); no fence.
        black_box(unsafe { f(black_box(queue), 1, info, VkFence::NULL) });
    })
}

/// The rounds of [`per_call_interleaved`] for any call: `call(item)` 20000 times a round per item.
fn interleaved<T: Copy>(items: &[T], call: impl Fn(T)) -> (Vec<f64>, Vec<u64>) {
    const ROUNDS: usize = 400;
    const CALLS: u64 = 20_000;
    let mut best = vec![f64::INFINITY; items.len()];
    let mut calls = vec![0; items.len()];
    for round in 0..=ROUNDS {
        // Each round starts with the next item, so none always follows the same one.
        for k in 0..items.len() {
            let i = (round + k) % items.len();
            let item = black_box(items[i]);
            let start = Instant::now();
            for _ in 0..CALLS {
                call(item);
            }
            let ns = start.elapsed().as_nanos() as f64 / CALLS as f64;
            calls[i] += CALLS;
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
pub fn driver_cmd_draw() -> Result<CmdDraw, String> {
    let f = driver_command(c"vkCmdDraw")?;
    // SAFETY: the driver's vkCmdDraw.
    Ok(unsafe { std::mem::transmute::<unsafe extern "system" fn(), CmdDraw>(f) })
}

/// A command of the test driver's own (its `vk_icdGetInstanceProcAddr` answer), from the library
/// the loader already opened.
pub fn driver_command(name: &CStr) -> Result<unsafe extern "system" fn(), String> {
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
        gipa(VkInstance(ptr::dangling_mut()), name.as_ptr())
    };
    // The loader holds its own reference: this one may go.
    drop(lib);
    f.ok_or_else(|| format!("the driver has no {name:?}"))
}

/// Resident memory (KiB) added to this process: by loading the loader and creating an instance,
/// and (after destroying it) by an instance, a device and a command buffer. Also the private
/// dirty part of the first (heap, relocated data: what no other process can share).
fn memory(loader_path: &str, layers: &[*const c_char]) -> Result<(), String> {
    let (base, base_private) = (rss_kib(), private_dirty_kib());
    keep_smaps("base");
    let loader = Loader::open(loader_path)?;
    let instance = loader.create(layers)?;
    emit("rss_instance_added_kib", rss_kib() - base);
    emit("private_instance_added_kib", private_dirty_kib() - base_private);
    keep_smaps("instance");
    loader.destroy(instance);
    let recording = Recording::new(&loader, layers)?;
    emit("rss_device_added_kib", rss_kib() - base);
    keep_smaps("device");
    drop(recording);
    Ok(())
}

/// With `LOADER_BENCH_SMAPS_DIR` set, a copy of /proc/self/smaps at each point of `memory`
/// (`<dir>/<pid>-<point>`): what each mapping holds resident, to see where a loader's memory is.
fn keep_smaps(point: &str) {
    if let Some(dir) = std::env::var_os("LOADER_BENCH_SMAPS_DIR") {
        let smaps = std::fs::read("/proc/self/smaps").unwrap_or_default();
        let _ = std::fs::write(std::path::Path::new(&dir).join(format!("{}-{point}", std::process::id())), smaps);
    }
}

/// `Private_Dirty` of the whole process, from /proc/self/smaps_rollup.
pub fn private_dirty_kib() -> f64 {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    rollup
        .lines()
        .find_map(|l| l.strip_prefix("Private_Dirty:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN)
}

/// Page faults this process has taken that needed no disk read (`ru_minflt`).
fn minor_faults() -> f64 {
    // SAFETY: `rusage` is integers and `timeval`s, for which all zeros is a value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_minflt as f64
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
