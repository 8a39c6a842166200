//! `VK_LAYER_RUST_trace`: a layer on the `vk-layer` SDK that writes every Vulkan call it sees,
//! with its arguments and result, as one JSON line (`src/line.rs`) to the file its `file` setting
//! names, or to stderr; its `commands` setting chooses the commands traced ([`config`]).
//!
//! It hooks every hookable command; its post-call hooks print the arguments after the call, so
//! outputs (`pPhysicalDeviceCount`, `pBuffer`) show what the call wrote. The printers are
//! generated from `vk.xml` (`src/gen/`, by `cargo xtask regen`): one [`print::Print`]
//! implementation per structure, union, enum, bitmask and handle type, and one function per
//! command of the registry (`gen::calls`) that names its arguments. The hand-written part is the
//! JSON writer (`json`), the pointer-following helpers (`print`) and the line output (`line`).
//!
//! `vkCreateInstance`, `vkCreateDevice` and their `vkDestroy*` are the SDK chassis's own: they
//! are traced from [`Layer::create_instance`] / [`Layer::create_device`] and the objects'
//! `Drop`, which see neither the allocator (traced as `null`) nor failed creations.

// The library is named as layers are (`libVkLayer_<name>.so`).
#![allow(non_snake_case)]

pub mod config;
pub mod json;
pub mod line;
pub mod print;

/// The generated printers.
pub mod gen {
    // Types and parameters keep their C names, as in the specification. The hook methods are
    // the SDK's safe trait methods: the chassis hands them the pointers a Vulkan caller passed,
    // which the API's valid usage makes dereferenceable.
    #[allow(non_snake_case, clippy::too_many_arguments, clippy::not_unsafe_ptr_arg_deref)]
    #[rustfmt::skip]
    pub mod calls;
    // `pNext` is cast to `*const c_void` whether the structure declares it const or mut.
    #[allow(non_snake_case, clippy::unnecessary_cast)]
    #[rustfmt::skip]
    pub mod print;
}

use std::ffi::{c_void, CStr};
use std::path::Path;

use vk_layer::vk::command_id;
use vk_layer::vk::types::*;
use vk_layer::vk::{DeviceDispatchTable, InstanceDispatchTable};
use vk_layer::{DeviceLink, InstanceLink, Layer, LayerProperties, Manifest, ManifestExtension, ProcAddr};

/// The layer's name, as applications enable it.
pub const LAYER_NAME: &str = "VK_LAYER_RUST_trace";
/// The layer library's file name.
pub const LIBRARY_FILE: &str = "libVkLayer_rust_trace.so";

/// The layer's description.
const DESCRIPTION: &str = "Every Vulkan call with its arguments and result, as JSON lines (setting file, else stderr)";

/// The layer's manifest, naming its library as `library_path`, with its settings for the Vulkan
/// Configurator.
pub fn manifest(library_path: &Path) -> Manifest<'_> {
    const EXTENSIONS: &[ManifestExtension<'static>] = &[ManifestExtension {
        name: vk_layer::LAYER_SETTINGS_EXTENSION.0,
        spec_version: vk_layer::LAYER_SETTINGS_EXTENSION.1,
        entrypoints: &[],
    }];
    const DEVICE_EXTENSIONS: &[ManifestExtension<'static>] = &[ManifestExtension {
        name: vk_layer::TOOLING_INFO_EXTENSION.0,
        spec_version: vk_layer::TOOLING_INFO_EXTENSION.1,
        entrypoints: vk_layer::TOOLING_INFO_EXTENSION.2,
    }];
    Manifest {
        name: LAYER_NAME,
        library_path,
        api_version: VK_HEADER_VERSION_COMPLETE,
        implementation_version: 1,
        description: DESCRIPTION,
        instance_extensions: EXTENSIONS,
        device_extensions: DEVICE_EXTENSIONS,
        settings: config::SETTINGS,
        ..Manifest::default()
    }
}

/// The layer.
pub struct Trace;

/// An instance being traced: its handle, for the `vkDestroyInstance` line.
pub struct Instance {
    handle: usize,
}

/// A device being traced: its handle, for the `vkDestroyDevice` line.
pub struct Device {
    handle: usize,
}

impl Layer for Trace {
    type Instance = Instance;
    type Device = Device;
    const PROPERTIES: Option<LayerProperties> = Some(LayerProperties {
        name: LAYER_NAME,
        spec_version: VK_HEADER_VERSION_COMPLETE,
        implementation_version: 1,
        description: DESCRIPTION,
        instance_extensions: &[],
        device_extensions: &[],
    });
    const SETTINGS: &'static [vk_layer::Setting] = config::SETTINGS;
    const TOOL_PURPOSES: VkToolPurposeFlags = VkToolPurposeFlags::TRACING_BIT;

    fn create_instance(
        info: &VkInstanceCreateInfo,
        instance: VkInstance,
        _: &InstanceDispatchTable,
        _: &InstanceLink,
    ) -> Result<Instance, VkResult> {
        config::configure(info);
        if config::current().traces(command_id::vkCreateInstance) {
            // SAFETY: the application's create info, valid per the API; the allocator is not known.
            unsafe { gen::calls::vkCreateInstance(info, std::ptr::null(), &instance as *const _ as *mut _, VkResult::SUCCESS) };
        }
        Ok(Instance { handle: instance.0 as usize })
    }

    /// Commands the `commands` setting leaves out go straight to the next level.
    fn instance_proc_addr(name: &CStr) -> ProcAddr {
        if config::traces_name(name.to_bytes()) { ProcAddr::Chassis } else { ProcAddr::Next }
    }

    fn device_proc_addr(name: &CStr) -> ProcAddr {
        Self::instance_proc_addr(name)
    }

    fn create_device(
        _: &Instance,
        physical_device: VkPhysicalDevice,
        info: &VkDeviceCreateInfo,
        device: VkDevice,
        _: &DeviceDispatchTable,
        _: &DeviceLink,
    ) -> Result<Device, VkResult> {
        if config::current().traces(command_id::vkCreateDevice) {
            let p_device = &device as *const VkDevice as *mut VkDevice;
            // SAFETY: as in `create_instance`.
            unsafe { gen::calls::vkCreateDevice(physical_device, info, std::ptr::null(), p_device, VkResult::SUCCESS) };
        }
        Ok(Device { handle: device.0 as usize })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if config::current().traces(command_id::vkDestroyInstance) {
            // SAFETY: a handle and a null allocator: nothing is followed.
            unsafe { gen::calls::vkDestroyInstance(VkInstance(self.handle as *mut c_void), std::ptr::null()) };
        }
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if config::current().traces(command_id::vkDestroyDevice) {
            // SAFETY: as for the instance.
            unsafe { gen::calls::vkDestroyDevice(VkDevice(self.handle as *mut c_void), std::ptr::null()) };
        }
    }
}

vk_layer::declare_layer!(Trace);
