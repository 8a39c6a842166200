//! The record types of the generated tables, and the one `load` body every dispatch table shares.

use core::ffi::CStr;
use core::fmt;

use crate::types::{PFN_vkVoidFunction, VkStructureType};

/// Where a command may be called from, which decides the dispatch table holding it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub enum CommandLevel {
    /// Callable without an instance: `vkCreateInstance`, `vkEnumerateInstance*`.
    Global,
    /// First parameter is a `VkInstance`.
    Instance,
    /// First parameter is a `VkPhysicalDevice`.
    PhysicalDevice,
    /// First parameter is a `VkDevice`, `VkQueue` or `VkCommandBuffer`.
    Device,
}

impl CommandLevel {
    /// `global`, `instance`, `physical-device` or `device`.
    pub const fn as_str(self) -> &'static str {
        match self {
            CommandLevel::Global => "global",
            CommandLevel::Instance => "instance",
            CommandLevel::PhysicalDevice => "physical-device",
            CommandLevel::Device => "device",
        }
    }
}

/// A run of a flat generated pool: `len` items from `start`. Table entries hold spans instead of
/// references so that they are plain integers: no relocation, read-only shared memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Span {
    /// Index of the first item.
    pub start: u16,
    /// Number of items.
    pub len: u16,
}

impl Span {
    /// No string at all (`None`), where a string field is optional; distinct from the empty
    /// string, which the registry uses (`deprecatedby=""`: deprecated, with no replacement).
    pub const NONE: Span = Span { start: u16::MAX, len: 0 };

    /// The items of `pool` the span covers.
    #[inline]
    pub fn of<T>(self, pool: &'static [T]) -> &'static [T] {
        &pool[self.start as usize..][..self.len as usize]
    }

    /// The text of `blob` the span covers; `None` for [`Span::NONE`].
    #[inline]
    pub fn str_of(self, blob: &'static str) -> Option<&'static str> {
        (self != Span::NONE).then(|| &blob[self.start as usize..][..self.len as usize])
    }
}

/// One canonical command.
pub struct CommandInfo {
    /// Name id (entry in `lookup::COMMAND_NAME_TABLE`) of the canonical name.
    pub(crate) name: u16,
    /// Where the command may be called from, which decides its dispatch table.
    pub level: CommandLevel,
    /// Index of the command's slot in its dispatch table (instance table for global, instance
    /// and physical-device commands; device table for device commands).
    pub slot: u16,
    /// Name ids of the other names (promoted or renamed), in `commands::COMMAND_ALIASES`.
    pub(crate) aliases: Span,
    /// Returns a `VkResult`.
    pub returns_result: bool,
    /// Hands back new dispatchable objects (`vkGetDeviceQueue`, `vkAllocateCommandBuffers`),
    /// which the loader's trampoline must give their dispatch table.
    pub returns_dispatchable: bool,
}

impl CommandInfo {
    /// The canonical name.
    #[inline]
    pub fn name(&self) -> &'static CStr {
        crate::lookup::COMMAND_NAME_TABLE.c_name_of(self.name as usize)
    }

    /// Other names of the command (promoted or renamed), sharing its slot.
    #[inline]
    pub fn aliases(&self) -> impl ExactSizeIterator<Item = &'static CStr> + Clone {
        let ids = self.aliases.of(&crate::commands::COMMAND_ALIASES);
        ids.iter().map(|&id| crate::lookup::COMMAND_NAME_TABLE.c_name_of(id as usize))
    }

    /// The canonical name followed by the aliases.
    #[inline]
    pub fn names(&self) -> impl Iterator<Item = &'static CStr> + Clone {
        core::iter::once(self.name()).chain(self.aliases())
    }
}

impl fmt::Debug for CommandInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandInfo")
            .field("name", &self.name())
            .field("level", &self.level)
            .field("slot", &self.slot)
            .field("aliases", &DebugList(self.aliases()))
            .field("returns_result", &self.returns_result)
            .field("returns_dispatchable", &self.returns_dispatchable)
            .finish()
    }
}

/// Whether an extension is enabled on an instance or on a device.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ExtensionKind {
    /// Enabled in `VkInstanceCreateInfo`.
    Instance,
    /// Enabled in `VkDeviceCreateInfo`.
    Device,
}

/// One extension the registry supports for Vulkan.
pub struct ExtensionInfo {
    /// The extension id: index in `EXTENSIONS` and entry in `lookup::EXTENSION_NAME_TABLE`.
    pub(crate) id: u16,
    /// Instance or device extension.
    pub kind: ExtensionKind,
    /// The registry's extension number.
    pub number: u32,
    /// The `SPEC_VERSION` of the registry this crate was generated from.
    pub spec_version: u32,
    /// Spans of `extensions::EXTENSION_STRINGS`, [`Span::NONE`] for none.
    pub(crate) promoted_to: Span,
    pub(crate) deprecated_by: Span,
    pub(crate) obsoleted_by: Span,
    pub(crate) depends: Span,
    pub(crate) platform: Span,
    /// A provisional extension (`VK_ENABLE_BETA_EXTENSIONS` in C).
    pub provisional: bool,
    /// Ids of the commands it adds, in `extensions::EXTENSION_COMMANDS`.
    pub(crate) commands: Span,
}

impl ExtensionInfo {
    /// The extension id (index into `EXTENSIONS`).
    #[inline]
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The extension's name.
    #[inline]
    pub fn name(&self) -> &'static CStr {
        crate::lookup::EXTENSION_NAME_TABLE.c_name_of(self.id as usize)
    }

    /// The core version (`VK_VERSION_1_1`) or extension it was promoted to.
    pub fn promoted_to(&self) -> Option<&'static str> {
        self.promoted_to.str_of(crate::extensions::EXTENSION_STRINGS)
    }

    /// The extension or core version that deprecates it; `Some("")`: deprecated, no replacement.
    pub fn deprecated_by(&self) -> Option<&'static str> {
        self.deprecated_by.str_of(crate::extensions::EXTENSION_STRINGS)
    }

    /// The extension (or core version) that makes it obsolete.
    pub fn obsoleted_by(&self) -> Option<&'static str> {
        self.obsoleted_by.str_of(crate::extensions::EXTENSION_STRINGS)
    }

    /// What must be enabled with it, in registry syntax (`A+B` all of, `A,B` any of).
    pub fn depends(&self) -> Option<&'static str> {
        self.depends.str_of(crate::extensions::EXTENSION_STRINGS)
    }

    /// The WSI platform (`xcb`, `wayland`, ...) for platform extensions.
    pub fn platform(&self) -> Option<&'static str> {
        self.platform.str_of(crate::extensions::EXTENSION_STRINGS)
    }

    /// Ids of the commands it adds (indices into `COMMANDS`).
    pub fn commands(&self) -> &'static [u16] {
        self.commands.of(&crate::extensions::EXTENSION_COMMANDS)
    }
}

impl fmt::Debug for ExtensionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExtensionInfo")
            .field("name", &self.name())
            .field("kind", &self.kind)
            .field("number", &self.number)
            .field("spec_version", &self.spec_version)
            .field("promoted_to", &self.promoted_to())
            .field("deprecated_by", &self.deprecated_by())
            .field("obsoleted_by", &self.obsoleted_by())
            .field("depends", &self.depends())
            .field("platform", &self.platform())
            .field("provisional", &self.provisional)
            .field("commands", &self.commands())
            .finish()
    }
}

/// Formats the items of an iterator as a list, for `Debug` of fields read through accessors.
pub(crate) struct DebugList<I>(pub(crate) I);

impl<I: Iterator<Item = T> + Clone, T: fmt::Debug> fmt::Debug for DebugList<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.clone()).finish()
    }
}

/// A struct that starts with `sType`/`pNext` and has a fixed structure type.
///
/// # Safety
/// Implemented only by the generator, for `#[repr(C)]` structs whose first member is `sType`.
pub unsafe trait TaggedStruct {
    /// The `sType` value of this structure.
    const STRUCTURE_TYPE: VkStructureType;
}

/// The first struct of type `T` in a `pNext` chain, if any.
///
/// # Safety
/// `chain` must be NULL or a valid Vulkan `pNext` chain (each element starts with `sType`/`pNext`).
pub unsafe fn find_in_chain<'a, T: TaggedStruct>(chain: *const core::ffi::c_void) -> Option<&'a T> {
    // SAFETY: a valid chain (this function's contract): an element whose `sType` is `T`'s is a `T`
    // (the `TaggedStruct` contract), valid as long as the chain.
    unsafe { chain_elements(chain).find(|&(stype, _)| stype == T::STRUCTURE_TYPE).map(|(_, p)| &*(p as *const T)) }
}

/// Every element of a `pNext` chain with its structure type.
///
/// # Safety
/// As for [`find_in_chain`]; the elements must outlive the iteration.
pub unsafe fn chain_elements(
    chain: *const core::ffi::c_void,
) -> impl Iterator<Item = (VkStructureType, *const crate::types::VkBaseInStructure)> {
    let mut next = chain as *const crate::types::VkBaseInStructure;
    core::iter::from_fn(move || {
        // SAFETY: the caller's promise that the chain is valid.
        let element = unsafe { next.as_ref()? };
        let here = next;
        next = element.pNext;
        Some((element.sType, here))
    })
}

/// A `#[repr(C)]` table of `Option<fn>` slots, one per command id in `COMMANDS`.
///
/// # Safety
/// Implemented only by the generator: `Self` must be exactly `COMMANDS.len()` function-pointer
/// slots, in that order.
pub unsafe trait DispatchTable: Sized + Default {
    /// Command ids (indices into [`crate::COMMANDS`]) in slot order.
    const COMMANDS: &'static [u16];

    /// Fills every slot through `get_proc_addr`, trying the canonical name and then each alias.
    fn load(mut get_proc_addr: impl FnMut(&CStr) -> PFN_vkVoidFunction) -> Self {
        let mut table = Self::default();
        load_erased(table.slots_mut(), Self::COMMANDS, &mut get_proc_addr);
        table
    }

    /// The slots as a slice, in `COMMANDS` order.
    fn slots_mut(&mut self) -> &mut [PFN_vkVoidFunction] {
        // SAFETY: the trait's contract: `Self` is `COMMANDS.len()` pointer-sized `Option<fn>` slots.
        unsafe { core::slice::from_raw_parts_mut(self as *mut Self as *mut PFN_vkVoidFunction, Self::COMMANDS.len()) }
    }

    /// The slots as a slice, in `COMMANDS` order.
    fn slots(&self) -> &[PFN_vkVoidFunction] {
        // SAFETY: as in `slots_mut`.
        unsafe { core::slice::from_raw_parts(self as *const Self as *const PFN_vkVoidFunction, Self::COMMANDS.len()) }
    }
}

/// The one body behind every table's `load` (ash's `load_erased` funnel): not generic, so it is
/// compiled once.
fn load_erased(
    slots: &mut [PFN_vkVoidFunction],
    commands: &[u16],
    get_proc_addr: &mut dyn FnMut(&CStr) -> PFN_vkVoidFunction,
) {
    for (slot, &id) in slots.iter_mut().zip(commands) {
        *slot = crate::COMMANDS[id as usize].names().find_map(&mut *get_proc_addr);
    }
}
