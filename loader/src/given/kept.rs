//! What a driver instance must be created with, kept from `vkCreateInstance` until the driver is
//! loaded: a deep copy of the `VkInstanceCreateInfo` as it reached the terminator (application
//! info, layer and extension names, the `pNext` chain), made by the code generated from vk.xml
//! (`vk_generated::deep_copy`). The loader's own `VkLayerInstanceCreateInfo` structures at the
//! head of the chain (layer links, meaningful only during the call) are left out; a structure the
//! registry does not know as extending `VkInstanceCreateInfo` makes the copy fail, and the
//! instance's drivers are then loaded at once, as without the cache.

use std::sync::Arc;

use vk_generated::deep_copy::DeepCopy;
use vk_generated::types::*;

use crate::given::instance_create_info::InstanceCreateInfo;

pub struct KeptCreateInfo {
    /// Owns everything `info` points to.
    _copy: DeepCopy,
    info: *const VkInstanceCreateInfo,
    /// The instance's API version as the terminator decided it.
    pub api_version: u32,
}

// SAFETY: the copy is immutable once made and owned by this value; its pointers point into it.
unsafe impl Send for KeptCreateInfo {}
// SAFETY: as for `Send`: nothing writes to the copy after it is made.
unsafe impl Sync for KeptCreateInfo {}

impl KeptCreateInfo {
    /// A deep copy of `info`; why not, when its chain holds a structure the loader cannot copy.
    pub fn new(info: InstanceCreateInfo<'_>, api_version: u32) -> Result<Arc<KeptCreateInfo>, String> {
        let mut shallow = *info.raw();
        // SAFETY: a valid chain (`InstanceCreateInfo`).
        shallow.pNext = unsafe { crate::ffi::skip_loader_structs(shallow.pNext, VkStructureType::LOADER_INSTANCE_CREATE_INFO) };
        let mut copy = DeepCopy::new();
        // SAFETY: the valid create info (`InstanceCreateInfo`), its chain without the loader's own
        // structures at its head.
        let copied = unsafe { copy.instance_create_info(&shallow) }
            .map_err(|s_type| format!("its create info chains a structure the loader cannot keep (sType {})", s_type.0))?;
        Ok(Arc::new(KeptCreateInfo { _copy: copy, info: copied, api_version }))
    }

    /// The copy, as valid as the create info it was made from.
    pub fn info(&self) -> InstanceCreateInfo<'_> {
        // SAFETY: owned by `_copy`, which lives as long as `self`: a deep copy of a valid create
        // info, whose arrays, names and chain it holds too.
        unsafe { InstanceCreateInfo::new(&*self.info) }
    }

    /// The extensions the application enabled.
    pub fn requested(&self) -> Vec<&std::ffi::CStr> {
        self.info().extension_names()
    }
}
