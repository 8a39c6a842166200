//! The lines of calls as the layer writes them to `VK_LAYER_RUST_TRACE_FILE`: one JSON object
//! per line, never interleaved between threads; outputs filled in; a failed call's outputs not
//! followed. One test, so that the variable is set before the first line opens the file.

use std::ffi::c_void;

use serde_json::{json, Value};
use vk_layer::vk::types::*;
use VkLayer_rust_trace::gen::calls;

const THREADS: usize = 4;
const DRAWS: usize = 500;

#[test]
fn lines_of_calls_in_the_trace_file() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-lines.jsonl");
    let _ = std::fs::remove_file(&path);
    std::env::set_var("VK_LAYER_RUST_TRACE_FILE", &path);
    let command_buffer = VkCommandBuffer(0x1234 as *mut c_void);
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || {
                for i in 0..DRAWS {
                    // SAFETY: scalars and a handle.
                    unsafe { calls::vkCmdDraw(command_buffer, 3, t as u32, i as u32, 0) };
                }
            });
        }
    });
    let devices = [VkPhysicalDevice(0x10 as *mut c_void), VkPhysicalDevice(0x20 as *mut c_void)];
    let mut count = 2u32;
    let instance = VkInstance(0x5 as *mut c_void);
    // SAFETY: the count and array as a successful call leaves them.
    unsafe { calls::vkEnumeratePhysicalDevices(instance, &mut count, devices.as_ptr().cast_mut(), VkResult::SUCCESS) };
    // A failed allocation: its output pointer dangles; followed, it would crash.
    let info = VkCommandBufferAllocateInfo { commandBufferCount: 1, ..Default::default() };
    let dangling = std::ptr::dangling_mut::<VkCommandBuffer>();
    let failed = VkResult::ERROR_OUT_OF_HOST_MEMORY;
    // SAFETY: the output is not read for a failed call.
    unsafe { calls::vkAllocateCommandBuffers(VkDevice(0x30 as *mut c_void), &info, dangling, failed) };

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(lines.len(), THREADS * DRAWS + 2);
    let draws: Vec<&Value> = lines.iter().filter(|l| l["command"] == "vkCmdDraw").collect();
    assert_eq!(draws.len(), THREADS * DRAWS);
    for t in 0..THREADS {
        let of_thread: Vec<&&Value> = draws.iter().filter(|l| l["args"]["instanceCount"] == t).collect();
        assert_eq!(of_thread.len(), DRAWS);
        assert!(of_thread.iter().all(|l| l["thread"] == of_thread[0]["thread"]), "one thread id per thread");
    }
    assert_eq!(
        draws[0]["args"],
        json!({"commandBuffer": "0x1234", "vertexCount": 3, "instanceCount": draws[0]["args"]["instanceCount"],
               "firstVertex": 0, "firstInstance": 0})
    );
    assert!(draws[0].get("result").is_none(), "vkCmdDraw returns nothing");
    let enumerate = &lines[THREADS * DRAWS];
    assert_eq!(enumerate["command"], "vkEnumeratePhysicalDevices");
    assert_eq!(
        enumerate["args"],
        json!({"instance": "0x5", "pPhysicalDeviceCount": 2, "pPhysicalDevices": ["0x10", "0x20"]})
    );
    assert_eq!(enumerate["result"], "VK_SUCCESS");
    let allocate = &lines[THREADS * DRAWS + 1];
    assert_eq!(allocate["args"]["pCommandBuffers"], "0x8");
    assert_eq!(allocate["args"]["pAllocateInfo"]["commandBufferCount"], 1);
    assert_eq!(allocate["result"], "VK_ERROR_OUT_OF_HOST_MEMORY");
}
