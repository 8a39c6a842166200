//! What a command name is, cheaply: a Vulkan name at all, and whether only instance extensions
//! provide a device command.

use std::ffi::c_char;

/// Whether `name` starts with "vk" (NULL does not). Every Vulkan command does; other names are
/// answered NULL by both GetProcAddr entry points at the cost of this check alone.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string.
#[inline]
pub unsafe fn is_vulkan_name(name: *const c_char) -> bool {
    // SAFETY: a non-NULL `name` is NUL-terminated, so its first byte is readable, and its second
    // is too when the first is 'v' (not the NUL).
    !name.is_null() && unsafe { *name == b'v' as c_char && *name.add(1) == b'k' as c_char }
}

// The same ABI as the entry point, so that the check above ends in a tail jump here.

/// Whether only instance extensions provide a device command (`VK_EXT_debug_utils`'s object
/// names and labels): handed out only where the instance enabled one, as the Khronos loader does.
pub(crate) fn from_instance_extensions_only(name: &vk_generated::lookup::CommandName) -> bool {
    let instance_extension = |&id: &u16| vk_generated::EXTENSIONS[id as usize].kind == vk_generated::ExtensionKind::Instance;
    name.available_with().iter().all(|r| !r.extensions().is_empty() && r.extensions().iter().all(instance_extension))
}

