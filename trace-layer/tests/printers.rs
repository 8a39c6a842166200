//! The generated printers on structures built here: a `pNext` chain followed by `sType` (an
//! unknown structure included), arrays by their counts, strings, enums and flags by name; and
//! the line of a call written to `VK_LAYER_RUST_TRACE_FILE`, whole lines from many threads, the
//! outputs of a failed call not followed.

use std::ffi::c_void;

use serde_json::{json, Value};
use vk_layer::vk::types::*;
use VkLayer_rust_trace::json::Json;
use VkLayer_rust_trace::print::Print;

fn printed<T: Print>(value: &T) -> Value {
    let mut w = Json::new(String::new());
    // SAFETY: every pointer in the values below points to live locals.
    unsafe { value.print(&mut w) };
    serde_json::from_str(w.as_str()).unwrap_or_else(|e| panic!("{e}: {}", w.as_str()))
}

#[test]
fn a_device_create_info_with_its_chain_queues_and_extensions() {
    // The chain: Vulkan 1.2 features -> a structure the registry does not know -> end.
    let unknown = VkBaseInStructure { sType: VkStructureType(1_000_999_000), pNext: std::ptr::null() };
    let features12 = VkPhysicalDeviceVulkan12Features {
        pNext: &unknown as *const _ as *mut c_void,
        timelineSemaphore: 1,
        ..Default::default()
    };
    let priorities = [1.0f32, 0.5];
    let queue = VkDeviceQueueCreateInfo {
        queueFamilyIndex: 2,
        queueCount: 2,
        pQueuePriorities: priorities.as_ptr(),
        flags: VkDeviceQueueCreateFlags(1),
        ..Default::default()
    };
    let extensions = [c"VK_KHR_swapchain".as_ptr()];
    let info = VkDeviceCreateInfo {
        pNext: &features12 as *const _ as *const c_void,
        queueCreateInfoCount: 1,
        pQueueCreateInfos: &queue,
        enabledExtensionCount: 1,
        ppEnabledExtensionNames: extensions.as_ptr(),
        ..Default::default()
    };
    let value = printed(&info);

    assert_eq!(value["sType"], "VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO");
    let chained = &value["pNext"];
    assert_eq!(chained["sType"], "VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES");
    assert_eq!(chained["timelineSemaphore"], 1);
    assert_eq!(chained["pNext"], json!({"sType": 1_000_999_000, "pNext": null}));
    assert_eq!(
        value["pQueueCreateInfos"],
        json!([{"sType": "VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO", "pNext": null,
                "flags": "VK_DEVICE_QUEUE_CREATE_PROTECTED_BIT", "queueFamilyIndex": 2,
                "queueCount": 2, "pQueuePriorities": [1.0, 0.5]}])
    );
    assert_eq!(value["ppEnabledExtensionNames"], json!(["VK_KHR_swapchain"]));
    assert_eq!(value["ppEnabledLayerNames"], Value::Null);
    assert_eq!(value["pEnabledFeatures"], Value::Null);
    assert_eq!(value["flags"], "0");
}

#[test]
fn a_chain_that_loops_is_cut_short() {
    let mut a = VkBaseOutStructure { sType: VkStructureType(1_000_999_001), pNext: std::ptr::null_mut() };
    a.pNext = &mut a;
    let info = VkDeviceCreateInfo { pNext: &a as *const _ as *const c_void, ..Default::default() };
    let text = serde_json::to_string(&printed(&info)).unwrap();
    assert!(text.contains("\"...\""), "{text}");
}

#[test]
fn fixed_arrays_strings_handles_and_unions() {
    let mut properties = VkPhysicalDeviceProperties { deviceType: VkPhysicalDeviceType::CPU, ..Default::default() };
    for (slot, byte) in properties.deviceName.iter_mut().zip(b"llvmpipe \"x\"") {
        *slot = *byte as _;
    }
    let value = printed(&properties);
    assert_eq!(value["deviceName"], "llvmpipe \"x\"");
    assert_eq!(value["deviceType"], "VK_PHYSICAL_DEVICE_TYPE_CPU");
    assert_eq!(value["pipelineCacheUUID"].as_array().unwrap().len(), 16);
    assert_eq!(value["limits"]["maxViewportDimensions"], json!([0, 0]));

    let clear = VkClearValue { color: VkClearColorValue { uint32: [1, 2, 3, 4] } };
    assert_eq!(printed(&clear)["color"]["uint32"], json!([1, 2, 3, 4]));
    let handle = VkBuffer(0xabc);
    assert_eq!(printed(&handle), "0xabc");
}

#[test]
fn pointers_that_may_dangle_are_not_followed() {
    // `pViewportState` is `noautovalidity`: ignored with rasterization off, so it may dangle.
    let info = VkGraphicsPipelineCreateInfo {
        stageCount: 1,
        pViewportState: 0x18 as *const VkPipelineViewportStateCreateInfo,
        ..Default::default()
    };
    let value = printed(&info);
    assert_eq!(value["pViewportState"], "0x18");
    assert_eq!(value["stageCount"], 1);
    // A `noautovalidity` chain is still a chain (the flag only relaxes what it may hold).
    let validation = VkValidationFeaturesEXT::default();
    let module = VkShaderModuleCreateInfo { pNext: &validation as *const _ as *const c_void, ..Default::default() };
    assert_eq!(printed(&module)["pNext"]["sType"], "VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT");
    // In a union, which member is live is not known: a pointer member is only an address.
    let address = VkDeviceOrHostAddressConstKHR { deviceAddress: 0x28 };
    assert_eq!(printed(&address), json!({"deviceAddress": 0x28, "hostAddress": "0x28"}));
}
