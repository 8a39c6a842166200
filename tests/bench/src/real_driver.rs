//! `real-driver`: both loaders against whatever driver the environment names (e.g. NVIDIA's, with
//! `VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json`): `vkCreateInstance` time,
//! first and later, and command-recording throughput (`vkCmdDispatch` of a bound no-op compute
//! pipeline into a command buffer) through the exported trampoline and the
//! `vkGetDeviceProcAddr` pointer. Nothing is submitted. The environment is the caller's, not a
//! sandbox: this benchmark exists to see a real driver.

use std::ffi::c_char;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::ptr;
use std::time::Instant;

use vk_generated::types::*;

use crate::vk::{check, Loader, Recording};
use crate::{json_num, json_str, machine};

/// `void main() {}` with `local_size_x = 1`, compiled by `glslangValidator -V` (SPIR-V 1.0).
const NOOP_COMPUTE_SPIRV: [u32; 70] = [
    0x07230203, 0x00010000, 0x0008000b, 0x0000000a, 0x00000000, 0x00020011, 0x00000001, 0x0006000b,
    0x00000001, 0x4c534c47, 0x6474732e, 0x3035342e, 0x00000000, 0x0003000e, 0x00000000, 0x00000001,
    0x0005000f, 0x00000005, 0x00000004, 0x6e69616d, 0x00000000, 0x00060010, 0x00000004, 0x00000011,
    0x00000001, 0x00000001, 0x00000001, 0x00030003, 0x00000002, 0x000001c2, 0x00040005, 0x00000004,
    0x6e69616d, 0x00000000, 0x00040047, 0x00000009, 0x0000000b, 0x00000019, 0x00020013, 0x00000002,
    0x00030021, 0x00000003, 0x00000002, 0x00040015, 0x00000006, 0x00000020, 0x00000000, 0x00040017,
    0x00000007, 0x00000006, 0x00000003, 0x0004002b, 0x00000006, 0x00000008, 0x00000001, 0x0006002c,
    0x00000007, 0x00000009, 0x00000008, 0x00000008, 0x00000008, 0x00050036, 0x00000002, 0x00000004,
    0x00000000, 0x00000003, 0x000200f8, 0x00000005, 0x000100fd, 0x00010038,
];

type CmdDispatch = unsafe extern "system" fn(VkCommandBuffer, u32, u32, u32);
const COLD_PROCESSES: usize = 5;
/// Dispatches recorded per timed round, and rounds (the best is kept).
const DISPATCHES: u32 = 20_000;
const ROUNDS: usize = 30;

type Bind = unsafe extern "system" fn(VkCommandBuffer, VkPipelineBindPoint, VkPipeline);
type Begin = unsafe extern "system" fn(VkCommandBuffer, *const VkCommandBufferBeginInfo) -> VkResult;
type End = unsafe extern "system" fn(VkCommandBuffer) -> VkResult;

/// A command buffer of one loader's device with a no-op compute pipeline to bind, and that
/// loader's two ways to `vkCmdDispatch`.
struct Dispatcher<'a> {
    recording: Recording<'a>,
    module: VkShaderModule,
    layout: VkPipelineLayout,
    pipeline: VkPipeline,
    bind: Bind,
    begin: Begin,
    end: End,
    trampoline: CmdDispatch,
    from_gdpa: CmdDispatch,
}

impl<'a> Dispatcher<'a> {
    fn new(loader: &'a Loader, layers: &[*const c_char]) -> Result<Dispatcher<'a>, String> {
        let recording = Recording::new(loader, layers)?;
        let device = recording.device;
        type CreateModule =
            unsafe extern "system" fn(VkDevice, *const VkShaderModuleCreateInfo, *const VkAllocationCallbacks, *mut VkShaderModule) -> VkResult;
        type CreateLayout =
            unsafe extern "system" fn(VkDevice, *const VkPipelineLayoutCreateInfo, *const VkAllocationCallbacks, *mut VkPipelineLayout) -> VkResult;
        type CreatePipelines = unsafe extern "system" fn(
            VkDevice,
            VkPipelineCache,
            u32,
            *const VkComputePipelineCreateInfo,
            *const VkAllocationCallbacks,
            *mut VkPipeline,
        ) -> VkResult;
        // SAFETY: exported core commands with their signatures, on the recording's device.
        unsafe {
            let create_module: CreateModule = loader.export(c"vkCreateShaderModule")?;
            let create_layout: CreateLayout = loader.export(c"vkCreatePipelineLayout")?;
            let create_pipelines: CreatePipelines = loader.export(c"vkCreateComputePipelines")?;
            let module_info = VkShaderModuleCreateInfo {
                codeSize: std::mem::size_of_val(&NOOP_COMPUTE_SPIRV),
                pCode: NOOP_COMPUTE_SPIRV.as_ptr(),
                ..Default::default()
            };
            let mut module = VkShaderModule::NULL;
            check(create_module(device, &module_info, ptr::null(), &mut module), "vkCreateShaderModule")?;
            let mut layout = VkPipelineLayout::NULL;
            check(create_layout(device, &VkPipelineLayoutCreateInfo::default(), ptr::null(), &mut layout), "vkCreatePipelineLayout")?;
            let info = VkComputePipelineCreateInfo {
                stage: VkPipelineShaderStageCreateInfo {
                    stage: VkShaderStageFlagBits::COMPUTE_BIT,
                    module,
                    pName: c"main".as_ptr(),
                    ..Default::default()
                },
                layout,
                ..Default::default()
            };
            let mut pipeline = VkPipeline::NULL;
            check(create_pipelines(device, VkPipelineCache::NULL, 1, &info, ptr::null(), &mut pipeline), "vkCreateComputePipelines")?;
            let from_gdpa = match recording.device_proc(c"vkCmdDispatch") {
                Some(f) => std::mem::transmute::<unsafe extern "system" fn(), CmdDispatch>(f),
                None => return Err("vkGetDeviceProcAddr(vkCmdDispatch) is NULL".into()),
            };
            let end: End = loader.export(c"vkEndCommandBuffer")?;
            check(end(recording.cmd), "vkEndCommandBuffer")?;
            Ok(Dispatcher {
                module,
                layout,
                pipeline,
                bind: loader.export(c"vkCmdBindPipeline")?,
                begin: loader.export(c"vkBeginCommandBuffer")?,
                end,
                trampoline: loader.export(c"vkCmdDispatch")?,
                from_gdpa,
                recording,
            })
        }
    }

    /// Nanoseconds per `vkCmdDispatch` through `f` over one freshly begun command buffer.
    fn time(&self, f: CmdDispatch) -> Result<f64, String> {
        let cmd = self.recording.cmd;
        // SAFETY: the recording's command buffer; begin resets it (its pool allows that).
        unsafe {
            check((self.begin)(cmd, &VkCommandBufferBeginInfo::default()), "vkBeginCommandBuffer")?;
            (self.bind)(cmd, VkPipelineBindPoint::COMPUTE, self.pipeline);
            let start = Instant::now();
            for _ in 0..DISPATCHES {
                f(black_box(cmd), 1, 1, 1);
            }
            let ns = start.elapsed().as_nanos() as f64 / DISPATCHES as f64;
            check((self.end)(cmd), "vkEndCommandBuffer")?;
            Ok(ns)
        }
    }
}

impl Drop for Dispatcher<'_> {
    fn drop(&mut self) {
        let (loader, device) = (self.recording.loader, self.recording.device);
        type DestroyPipeline = unsafe extern "system" fn(VkDevice, VkPipeline, *const VkAllocationCallbacks);
        type DestroyLayout = unsafe extern "system" fn(VkDevice, VkPipelineLayout, *const VkAllocationCallbacks);
        type DestroyModule = unsafe extern "system" fn(VkDevice, VkShaderModule, *const VkAllocationCallbacks);
        // SAFETY: objects created in `new`, destroyed once; the command buffer is not recording.
        unsafe {
            if let Ok(f) = loader.export::<DestroyPipeline>(c"vkDestroyPipeline") {
                f(device, self.pipeline, ptr::null());
            }
            if let Ok(f) = loader.export::<DestroyLayout>(c"vkDestroyPipelineLayout") {
                f(device, self.layout, ptr::null());
            }
            if let Ok(f) = loader.export::<DestroyModule>(c"vkDestroyShaderModule") {
                f(device, self.module, ptr::null());
            }
            // Recording's drop ends the command buffer: begin it again so that is valid.
            (self.begin)(self.recording.cmd, &VkCommandBufferBeginInfo::default());
        }
    }
}

/// The child side (`child record-pair <ours> <system>`): both loaders in this one process (the
/// driver's cost per call varied more from process to process than the loaders differ), each
/// with its own device, their dispatches taking turns; prints `result <side>_<key>` lines, the
/// side named by position (the parent runs both orders).
pub fn record_pair(ours: &str, system: &str, layers: &[*const c_char]) -> Result<(), String> {
    let loaders = [Loader::open(ours)?, Loader::open(system)?];
    let dispatchers = [Dispatcher::new(&loaders[0], layers)?, Dispatcher::new(&loaders[1], layers)?];
    let ways: Vec<(usize, CmdDispatch)> =
        dispatchers.iter().enumerate().flat_map(|(i, d)| [(i, d.trampoline), (i, d.from_gdpa)]).collect();
    let mut best = vec![f64::INFINITY; ways.len()];
    for round in 0..=ROUNDS {
        for k in 0..ways.len() {
            let w = (round + k) % ways.len();
            let (i, f) = ways[w];
            let ns = dispatchers[i].time(f)?;
            // Round 0 warms up.
            if round > 0 {
                best[w] = best[w].min(ns);
            }
        }
    }
    for (i, side) in ["ours", "system"].iter().enumerate() {
        println!("result {side}_dispatch_trampoline_ns {}", best[2 * i]);
        println!("result {side}_dispatch_gdpa_ns {}", best[2 * i + 1]);
    }
    Ok(())
}

/// Runs one child in the caller's environment; returns its `result` lines as (key, value).
fn child(exe: &Path, group: &str, loader: &Path) -> Result<Vec<(String, f64)>, String> {
    let what = format!("child {group} with {}", loader.display());
    let mut command = Command::new(exe);
    crate::in_callers_environment(&mut command, exe);
    crate::child::run(command.args(["child", group]).arg(loader), &what)
}

pub fn run(exe: &Path, ours: &Path, system: &Path) -> Result<String, String> {
    let drivers = std::env::var("VK_DRIVER_FILES")
        .or_else(|_| std::env::var("VK_ICD_FILENAMES"))
        .unwrap_or_else(|_| "the system's default search".into());
    let loaders = [ours, system];
    let mut figures: Vec<Vec<(String, f64)>> = vec![Vec::new(), Vec::new()];
    for _ in 0..COLD_PROCESSES {
        for (i, l) in loaders.iter().enumerate() {
            figures[i].extend(child(exe, "cold", l)?);
        }
    }
    for (i, l) in loaders.iter().enumerate() {
        figures[i].extend(child(exe, "create", l)?);
    }
    // Both orders: a driver may record faster into the first device of a process than into the
    // second (lavapipe does, by 3x), whichever loader made it. Each loader's best counts.
    for swapped in [false, true] {
        let (first, second) = if swapped { (system, ours) } else { (ours, system) };
        let what = "child record-pair";
        let mut command = Command::new(exe);
        crate::in_callers_environment(&mut command, exe);
        for (key, value) in crate::child::run(command.args(["child", "record-pair"]).arg(first).arg(second), what)? {
            let side = match key.split_once('_') {
                Some(("ours", key)) => (usize::from(swapped), key),
                Some(("system", key)) => (usize::from(!swapped), key),
                _ => return Err(format!("{what}: key {key} names no side")),
            };
            figures[side.0].push((side.1.to_string(), value));
        }
    }
    // The median of the cold creations, the best of the rest.
    let get = |i: usize, key: &str| -> Option<f64> {
        let mut v: Vec<f64> = figures[i].iter().filter(|(k, _)| k == key).map(|(_, v)| *v).collect();
        v.sort_by(f64::total_cmp);
        v.get(if key == "cold_ns" { v.len() / 2 } else { 0 }).copied()
    };
    let (cpu, cpus, date) = machine();
    println!("real-driver: ours ({}) against the system loader ({}); drivers: {drivers}", ours.display(), system.display());
    println!("machine: {cpu}, {cpus} logical CPUs; date: {date}");
    println!();
    println!("{:<70} {:>12} {:>12} {:>8}", "case", "ours", "system", "ratio");
    let rows = [
        (format!("first vkCreateInstance+vkDestroyInstance in a fresh process (median of {COLD_PROCESSES})"), "cold_ns", 1e-3, "us"),
        ("later vkCreateInstance+vkDestroyInstance (best of 20 rounds)".to_string(), "warm_ns", 1e-3, "us"),
        (format!("vkCmdDispatch, exported trampoline (best of {ROUNDS} x {DISPATCHES}, both orders)"), "dispatch_trampoline_ns", 1.0, "ns"),
        (format!("vkCmdDispatch, vkGetDeviceProcAddr pointer (best of {ROUNDS} x {DISPATCHES}, both orders)"), "dispatch_gdpa_ns", 1.0, "ns"),
    ];
    let mut json = Vec::new();
    for (label, key, scale, unit) in rows {
        let (o, s) = (get(0, key).map(|v| v * scale), get(1, key).map(|v| v * scale));
        let ratio = o.zip(s).map(|(o, s)| o / s);
        let f = |v: Option<f64>| v.map_or("n/a".into(), |v| format!("{v:.2} {unit}"));
        println!("{label:<70} {:>12} {:>12} {:>8}", f(o), f(s), ratio.map_or(String::new(), |r| format!("{r:.3}")));
        json.push(format!(
            "{{\"case\":{},\"unit\":{},\"ours\":{},\"system\":{},\"ratio\":{}}}",
            json_str(&label),
            json_str(unit),
            json_num(o),
            json_num(s),
            json_num(ratio)
        ));
    }
    for (i, name) in ["ours", "system"].iter().enumerate() {
        if let Some(ns) = get(i, "dispatch_trampoline_ns") {
            println!("recording throughput through the trampoline, {name}: {:.1} M vkCmdDispatch/s", 1e3 / ns);
        }
    }
    Ok(format!(
        "{{\"benchmark\":\"real-driver\",\"date\":{},\"cpu\":{},\"logical_cpus\":{cpus},\"drivers\":{},\"ours\":{},\"system\":{},\"rows\":[{}]}}",
        json_str(&date),
        json_str(&cpu),
        json_str(&drivers),
        json_str(&ours.display().to_string()),
        json_str(&system.display().to_string()),
        json.join(",")
    ))
}
