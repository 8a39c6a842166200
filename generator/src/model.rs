//! Indices derived from the IR that several emitters must agree on: command and extension
//! numbering, dispatch-table slots, and per-name availability.

use std::collections::BTreeMap;

use crate::depends;
use crate::ir::*;

/// Commands the runtime implements by hand: the generator emits their table slots and metadata but
/// no trampoline or default terminator.
pub const HAND_WRITTEN: &[&str] = &[
    "vkCreateInstance",
    "vkDestroyInstance",
    "vkEnumerateInstanceVersion",
    "vkEnumerateInstanceExtensionProperties",
    "vkEnumerateInstanceLayerProperties",
    "vkGetInstanceProcAddr",
    "vkGetDeviceProcAddr",
    "vkEnumeratePhysicalDevices",
    "vkEnumeratePhysicalDeviceGroups",
    "vkEnumerateDeviceExtensionProperties",
    "vkEnumerateDeviceLayerProperties",
    "vkCreateDevice",
    "vkDestroyDevice",
];

/// Extensions whose commands `libvulkan.so.1` exports on Linux besides core 1.0-1.4: the WSI
/// commands the Khronos loader exports.
pub const EXPORTED_EXTENSIONS: &[&str] = &[
    "VK_KHR_surface",
    "VK_KHR_swapchain",
    "VK_KHR_display",
    "VK_KHR_display_swapchain",
    "VK_KHR_xlib_surface",
    "VK_KHR_xcb_surface",
    "VK_KHR_wayland_surface",
    "VK_EXT_headless_surface",
    "VK_KHR_get_surface_capabilities2",
    "VK_KHR_get_display_properties2",
];

/// One way for a command name to be available: this API version and all of these extensions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Alternative {
    pub version: (u32, u32),
    pub extensions: Vec<u16>,
}

pub struct CommandName<'a> {
    pub name: &'a str,
    pub command: u16,
    pub availability: Vec<Alternative>,
}

pub struct Model<'a> {
    /// Canonical commands, sorted by name; the index is the command id.
    pub commands: Vec<&'a Command>,
    /// Command ids in instance-table slot order (global, instance and physical-device commands).
    pub instance_slots: Vec<u16>,
    /// Command ids in device-table slot order.
    pub device_slots: Vec<u16>,
    /// Slot of each command in its table, by command id.
    pub slot: Vec<u16>,
    /// Every command name, aliases included, sorted.
    pub names: Vec<CommandName<'a>>,
    /// Extensions sorted by name; the index is the extension id.
    pub extensions: Vec<&'a Extension>,
}

impl<'a> Model<'a> {
    pub fn new(reg: &'a Registry) -> Self {
        let commands: Vec<&Command> = reg.commands.values().collect();
        let command_id: BTreeMap<&str, u16> =
            commands.iter().enumerate().map(|(i, c)| (c.name.as_str(), i as u16)).collect();
        let mut instance_slots = Vec::new();
        let mut device_slots = Vec::new();
        let mut slot = Vec::new();
        for (i, c) in commands.iter().enumerate() {
            let table = if c.level == Level::Device { &mut device_slots } else { &mut instance_slots };
            slot.push(table.len() as u16);
            table.push(i as u16);
        }
        let extensions: Vec<&Extension> = reg.extensions.values().collect();
        let ext_id: BTreeMap<&str, u16> =
            extensions.iter().enumerate().map(|(i, e)| (e.name.as_str(), i as u16)).collect();

        let mut availability: BTreeMap<&str, Vec<Alternative>> = BTreeMap::new();
        for f in &reg.features {
            for r in &f.requires {
                for c in &r.commands {
                    availability.entry(c).or_default().push(Alternative { version: f.version, extensions: vec![] });
                }
            }
        }
        for (i, e) in extensions.iter().enumerate() {
            for r in &e.requires {
                let conjunctions = r.depends.as_ref().map(depends::to_dnf).unwrap_or_else(|| vec![vec![]]);
                for conj in conjunctions {
                    let Some(mut alt) = alternative(&conj, &ext_id) else { continue };
                    alt.extensions.push(i as u16);
                    alt.extensions.sort_unstable();
                    alt.extensions.dedup();
                    for c in &r.commands {
                        availability.entry(c).or_default().push(alt.clone());
                    }
                }
            }
        }
        let mut names = Vec::new();
        for c in &commands {
            for name in std::iter::once(&c.name).chain(&c.aliases) {
                let mut alts = availability.remove(name.as_str()).unwrap_or_default();
                alts.sort();
                alts.dedup();
                names.push(CommandName { name, command: command_id[c.name.as_str()], availability: alts });
            }
        }
        names.sort_by_key(|n| n.name);
        Model { commands, instance_slots, device_slots, slot, names, extensions }
    }

    /// The name id of a command name (its index in `names`, and in the lookup's name table).
    pub fn name_id(&self, name: &str) -> Option<u16> {
        self.names.binary_search_by(|n| n.name.cmp(name)).ok().map(|i| i as u16)
    }
}

/// A conjunction of dependency names as an alternative; `None` if it names something this
/// registry does not support (a disabled extension), which makes the alternative impossible.
fn alternative(conj: &[String], ext_id: &BTreeMap<&str, u16>) -> Option<Alternative> {
    let mut alt = Alternative { version: (1, 0), extensions: vec![] };
    for name in conj {
        if let Some(v) = version_of(name) {
            alt.version = alt.version.max(v);
        } else {
            alt.extensions.push(*ext_id.get(name.as_str())?);
        }
    }
    Some(alt)
}

/// `VK_VERSION_1_2` or an internal split such as `VK_BASE_VERSION_1_2` -> (1, 2).
pub fn version_of(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("VK_")?;
    let (_, numbers) = rest.split_once("VERSION_")?;
    let (major, minor) = numbers.split_once('_')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The parameters through which a command hands back new dispatchable objects (a non-const
/// pointer to a dispatchable handle: `vkGetDeviceQueue`, `vkAllocateCommandBuffers`). The loader
/// must give those objects their dispatch table, so it always answers such a command with its own
/// trampoline.
pub fn dispatchable_outputs<'a>(reg: &Registry, command: &'a Command) -> Vec<&'a Field> {
    command
        .params
        .iter()
        .skip(1)
        .filter(|p| {
            p.ty.pointers == [false]
                && matches!(
                    reg.types.get(crate::parse::resolve_alias(reg, &p.ty.base)),
                    Some(TypeDef::Handle { dispatchable: true, .. })
                )
        })
        .collect()
}
