//! `write_manifest_beside`: the manifest of a layer written in one call beside its built library,
//! naming the library by its file name.

use std::path::Path;

use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceLink, InstanceLink, Layer, LayerProperties};

struct Counting;
struct Objects;

#[vk_layer::hooks]
impl vk_layer::InstanceHooks for Objects {}
#[vk_layer::hooks]
impl vk_layer::DeviceHooks for Objects {}

impl Layer for Counting {
    type Instance = Objects;
    type Device = Objects;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: "VK_LAYER_TEST_counting",
        spec_version: vk_layer::vk::make_api_version(0, 1, 4, 0),
        implementation_version: 2,
        description: "counts",
        instance_extensions: &[],
        device_extensions: &[],
    });
    fn create_instance(
        _: &VkInstanceCreateInfo,
        _: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Objects, VkResult> {
        Ok(Objects)
    }
    fn create_device(
        _: &Objects,
        _: VkPhysicalDevice,
        _: &VkDeviceCreateInfo,
        _: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Objects, VkResult> {
        Ok(Objects)
    }
}

#[test]
fn the_manifest_goes_beside_the_library() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("manifest-beside");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let written = vk_layer::write_manifest_beside::<Counting>(&dir.join("libVkLayer_counting.so"))
        .unwrap();
    assert_eq!(written, dir.join("VK_LAYER_TEST_counting.json"));
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    assert_eq!(value["layer"]["library_path"], "./libVkLayer_counting.so");
    assert_eq!(value["layer"]["name"], "VK_LAYER_TEST_counting");
    assert_eq!(value["layer"]["api_version"], "1.4.0");
}
