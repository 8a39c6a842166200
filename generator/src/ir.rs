//! The typed intermediate representation of the registry, already filtered to the `vulkan` API.
//!
//! Everything here is plain data in sorted collections, so the emitters see the same order on every
//! run whatever the order of the XML.

use std::collections::BTreeMap;

/// The whole registry as the emitters see it.
#[derive(Debug, Default)]
pub struct Registry {
    /// `VK_HEADER_VERSION`, the patch number of the registry.
    pub header_version: u32,
    /// Major and minor version of `VK_HEADER_VERSION_COMPLETE`.
    pub header_api: (u32, u32),
    /// Vendor tags (`KHR`, `EXT`, ...), from `<tags>`.
    pub tags: Vec<String>,
    pub types: BTreeMap<String, TypeDef>,
    /// `API Constants`, in name order.
    pub constants: BTreeMap<String, Constant>,
    /// Enum and bitmask value groups by type name, with values added by features and extensions.
    pub enums: BTreeMap<String, EnumGroup>,
    /// Enum value name -> the feature or extension that added it to its group.
    pub value_origins: BTreeMap<String, String>,
    /// Canonical commands by name.
    pub commands: BTreeMap<String, Command>,
    /// Alias name -> canonical command name.
    pub command_aliases: BTreeMap<String, String>,
    /// Core versions (public and internal), in document order.
    pub features: Vec<Feature>,
    /// Supported extensions (disabled ones are dropped at ingestion), by name.
    pub extensions: BTreeMap<String, Extension>,
}

/// A C type as written in a declaration: a base name and zero or more pointer levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CType {
    pub base: String,
    /// One entry per `*`, outermost last; `true` where the pointed-to value is `const`.
    /// `const char* const* p` is `[true, true]`; `char** p` is `[false, false]`.
    pub pointers: Vec<bool>,
}

impl CType {
    pub fn plain(base: &str) -> Self {
        CType { base: base.to_string(), pointers: Vec::new() }
    }
    pub fn is_void(&self) -> bool {
        self.base == "void" && self.pointers.is_empty()
    }
}

/// An array dimension: a literal or an API constant such as `VK_UUID_SIZE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayLen {
    Literal(u32),
    Constant(String),
}

/// A struct member or command parameter.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub ty: CType,
    /// Array dimensions, outermost first (`float matrix[3][4]` is `[3, 4]`).
    pub array: Vec<ArrayLen>,
    /// Whether the declaration starts with `const` (matters for array parameters, which are
    /// pointers in C).
    pub is_const: bool,
    /// Width of a C bitfield member (`uint32_t mask:8`).
    pub bitfield: Option<u32>,
    pub optional: bool,
    /// `noautovalidity="true"`: the value may be ignored, so a pointer may dangle (the
    /// `pViewportState` of a pipeline without rasterization).
    pub no_auto_validity: bool,
    pub len: Option<String>,
    /// Fixed value (`sType` members carry their structure type here).
    pub values: Option<String>,
    /// The declaration as written in the registry, whitespace normalised.
    pub c_decl: String,
}

#[derive(Debug, Clone)]
pub enum TypeDef {
    /// A C scalar the registry takes from `vk_platform.h` (`uint32_t`, `float`, ...).
    Builtin,
    /// A type from a platform header (`Display`, `xcb_window_t`, `StdVideo...`).
    Platform { header: String },
    /// `typedef <underlying> Name;` or, with `None`, an opaque struct or pointer.
    Base { underlying: Option<CType> },
    Handle { dispatchable: bool, parents: Vec<String>, object_type: Option<String> },
    /// A plain enum; its values live in `Registry::enums` under the same name.
    Enum,
    /// A `VkFooFlags` type; `bits` names the `VkFooFlagBits` group holding its values.
    Bitmask { width: u32, bits: Option<String> },
    Struct(Aggregate),
    Union(Aggregate),
    FuncPointer(FuncPointer),
    Alias(String),
}

#[derive(Debug, Clone)]
pub struct Aggregate {
    pub members: Vec<Field>,
    /// Structures whose `pNext` chain this one may extend.
    pub struct_extends: Vec<String>,
    pub returned_only: bool,
}

#[derive(Debug, Clone)]
pub struct FuncPointer {
    pub return_type: CType,
    pub params: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConstantValue {
    U32(u32),
    U64(u64),
    F32(f32),
    Alias(String),
}

#[derive(Debug, Clone)]
pub struct Constant {
    pub name: String,
    pub value: ConstantValue,
}

#[derive(Debug, Clone)]
pub struct EnumGroup {
    pub name: String,
    pub is_bitmask: bool,
    /// 32 or 64.
    pub width: u32,
    /// Values by name; sorted by name for determinism, emitted in value order.
    pub values: BTreeMap<String, EnumValue>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnumValue {
    Value(i64),
    Alias(String),
}

/// Where a command may be called from, which decides the dispatch table holding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Callable without an instance (`vkCreateInstance`, `vkEnumerateInstance*`).
    Global,
    /// First parameter is a `VkInstance`.
    Instance,
    /// First parameter is a `VkPhysicalDevice`.
    PhysicalDevice,
    /// First parameter is a `VkDevice`, `VkQueue` or `VkCommandBuffer`.
    Device,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Global => "global",
            Level::Instance => "instance",
            Level::PhysicalDevice => "physical-device",
            Level::Device => "device",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Command {
    pub name: String,
    pub return_type: CType,
    pub params: Vec<Field>,
    pub level: Level,
    /// Other names of this command, sorted.
    pub aliases: Vec<String>,
    pub success_codes: Vec<String>,
    pub error_codes: Vec<String>,
}

/// A `depends` expression: `A+B` is all of, `A,B` is any of, parentheses group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Depends {
    Name(String),
    All(Vec<Depends>),
    Any(Vec<Depends>),
}

/// One `<require>` block: what it adds, and what else must hold for it to apply.
#[derive(Debug, Clone, Default)]
pub struct Require {
    pub depends: Option<Depends>,
    pub commands: Vec<String>,
    pub types: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Feature {
    /// `VK_VERSION_1_1`, or an internal split such as `VK_BASE_VERSION_1_1`.
    pub name: String,
    pub version: (u32, u32),
    pub internal: bool,
    pub depends: Option<Depends>,
    pub requires: Vec<Require>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExtensionKind {
    Instance,
    Device,
}

#[derive(Debug, Clone)]
pub struct Extension {
    pub name: String,
    pub number: u32,
    pub kind: ExtensionKind,
    pub platform: Option<String>,
    pub provisional: bool,
    pub spec_version: u32,
    /// A version (`VK_VERSION_1_1`) or another extension.
    pub promoted_to: Option<String>,
    pub deprecated_by: Option<String>,
    pub obsoleted_by: Option<String>,
    pub depends: Option<Depends>,
    pub requires: Vec<Require>,
}

impl Extension {
    /// Every command this extension adds, whatever the block's extra dependencies, sorted.
    pub fn commands(&self) -> Vec<&str> {
        let mut all: Vec<&str> =
            self.requires.iter().flat_map(|r| r.commands.iter().map(String::as_str)).collect();
        all.sort_unstable();
        all.dedup();
        all
    }
}
