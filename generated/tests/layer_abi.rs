//! ABI of the hand-written `layer_abi` module: every struct, union, enum and constant it defines
//! from `vk_layer.h` / `vk_icd.h` has the size, alignment, member offsets and values of Debian's C
//! headers (`/usr/include/vulkan`, package libvulkan-dev).
//!
//! A C program printing `sizeof` / `_Alignof` / `offsetof` and values is written from the same
//! table the Rust side is computed from, compiled with `cc` and run. The headers' text is also
//! scanned, so a type, enumerator, function pointer or constant they add and this test does not
//! cover is reported too.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use vk_generated::layer_abi::*;

/// One compared fact: a key, the C expression giving it, and the Rust value.
struct Fact {
    key: String,
    c_expr: String,
    rust: i128,
}

#[derive(Default)]
struct Probe {
    facts: Vec<Fact>,
    /// C typedef names of the structs, unions and enums compared.
    types: BTreeSet<String>,
    /// C enum typedef name -> the enumerators compared for it.
    enumerators: BTreeMap<String, BTreeSet<String>>,
    /// Function pointer typedef names checked.
    pfns: BTreeSet<String>,
    /// `#define`d constants compared.
    constants: BTreeSet<String>,
}

impl Probe {
    fn fact(&mut self, key: String, c_expr: String, rust: impl TryInto<i128>) {
        let rust = rust
            .try_into()
            .unwrap_or_else(|_| panic!("{key}: value out of range"));
        self.facts.push(Fact { key, c_expr, rust });
    }
}

fn c_member(field: &str) -> &str {
    field.strip_prefix("r#").unwrap_or(field)
}

/// Size, alignment and the offset of each listed member. `$c` is the C type: the Rust name by
/// default, or an expression for C's anonymous members.
macro_rules! layout {
    ($p:ident, $ty:ident $(= $c:expr)?, [$($field:ident),* $(,)?]) => {{
        let name = stringify!($ty);
        #[allow(unused_variables)]
        let c_ty: String = name.to_string();
        $(let c_ty: String = $c.to_string();)?
        $p.types.insert(name.to_string());
        $p.fact(format!("sizeof {name}"), format!("sizeof({c_ty})"), size_of::<$ty>());
        $p.fact(format!("alignof {name}"), format!("_Alignof({c_ty})"), align_of::<$ty>());
        $(
            let member = c_member(stringify!($field));
            $p.fact(
                format!("offsetof {name}.{member}"),
                format!("offsetof({c_ty}, {member})"),
                offset_of!($ty, $field),
            );
        )*
    }};
}

/// Size and alignment of a C enum, and the value of each listed associated constant under the C
/// name its `name()` gives.
macro_rules! c_enum {
    ($p:ident, $ty:ident, [$($variant:ident),* $(,)?]) => {{
        layout!($p, $ty, []);
        let set = $p.enumerators.entry(stringify!($ty).to_string()).or_default();
        let mut values = Vec::new();
        $(
            let c_name = $ty::$variant
                .name()
                .unwrap_or_else(|| panic!("{}::{} has no C name", stringify!($ty), stringify!($variant)));
            set.insert(c_name.to_string());
            values.push((c_name, $ty::$variant.0));
        )*
        for (c_name, value) in values {
            $p.fact(format!("value {c_name}"), c_name.to_string(), value);
        }
    }};
}

/// `#define`d constants (and enumerators Rust keeps as plain constants).
macro_rules! constants {
    ($p:ident, [$($name:ident),* $(,)?]) => {{
        $(
            $p.constants.insert(stringify!($name).to_string());
            $p.fact(format!("value {}", stringify!($name)), stringify!($name).to_string(), $name);
        )*
    }};
}

/// Function pointer typedefs: their size, and that both sides name them.
macro_rules! pfns {
    ($p:ident, [$($name:ident),* $(,)?]) => {{
        $(
            $p.pfns.insert(stringify!($name).to_string());
            $p.fact(
                format!("sizeof {}", stringify!($name)),
                format!("sizeof({})", stringify!($name)),
                size_of::<$name>(),
            );
        )*
    }};
}

fn probe() -> Probe {
    let mut p = Probe::default();

    // vk_layer.h
    constants!(
        p,
        [
            CURRENT_LOADER_LAYER_INTERFACE_VERSION,
            MIN_SUPPORTED_LOADER_LAYER_INTERFACE_VERSION,
            VK_CURRENT_CHAIN_VERSION,
            MAX_NUM_UNKNOWN_EXTS,
        ]
    );
    pfns!(
        p,
        [
            PFN_GetPhysicalDeviceProcAddr,
            PFN_vkNegotiateLoaderLayerInterfaceVersion,
            PFN_PhysDevExt,
            PFN_vkSetInstanceLoaderData,
            PFN_vkSetDeviceLoaderData,
            PFN_vkLayerCreateDevice,
            PFN_vkLayerDestroyDevice,
        ]
    );
    c_enum!(
        p,
        VkNegotiateLayerStructType,
        [
            LAYER_NEGOTIATE_UNINTIALIZED,
            LAYER_NEGOTIATE_INTERFACE_STRUCT
        ]
    );
    layout!(
        p,
        VkNegotiateLayerInterface,
        [
            sType,
            pNext,
            loaderLayerInterfaceVersion,
            pfnGetInstanceProcAddr,
            pfnGetDeviceProcAddr,
            pfnGetPhysicalDeviceProcAddr,
        ]
    );
    c_enum!(
        p,
        VkLayerFunction,
        [
            LAYER_LINK_INFO,
            LOADER_DATA_CALLBACK,
            LOADER_LAYER_CREATE_DEVICE_CALLBACK,
            LOADER_FEATURES,
        ]
    );
    layout!(
        p,
        VkLayerInstanceLink,
        [
            pNext,
            pfnNextGetInstanceProcAddr,
            pfnNextGetPhysicalDeviceProcAddr
        ]
    );
    layout!(
        p,
        VkLayerDeviceInfo,
        [device_info, pfnNextGetInstanceProcAddr]
    );
    layout!(p, VkLoaderFeatureFlags, []);
    // `VkLoaderFlagBits` is a C enum whose one value Rust keeps as a `VkLoaderFeatureFlags` constant.
    p.types.insert("VkLoaderFlagBits".into());
    p.enumerators
        .entry("VkLoaderFlagBits".into())
        .or_default()
        .insert("VK_LOADER_FEATURE_PHYSICAL_DEVICE_SORTING".into());
    constants!(p, [VK_LOADER_FEATURE_PHYSICAL_DEVICE_SORTING]);
    layout!(p, VkLayerInstanceCreateInfo, [sType, pNext, function, u]);
    layout!(
        p,
        VkLayerInstanceCreateInfoUnion = "__typeof__(((VkLayerInstanceCreateInfo *)0)->u)",
        [
            pLayerInfo,
            pfnSetInstanceLoaderData,
            layerDevice,
            loaderFeatures
        ]
    );
    layout!(
        p,
        VkLayerInstanceCreateInfoLayerDevice =
            "__typeof__(((VkLayerInstanceCreateInfo *)0)->u.layerDevice)",
        [pfnLayerCreateDevice, pfnLayerDestroyDevice]
    );
    layout!(
        p,
        VkLayerDeviceLink,
        [pNext, pfnNextGetInstanceProcAddr, pfnNextGetDeviceProcAddr]
    );
    layout!(p, VkLayerDeviceCreateInfo, [sType, pNext, function, u]);
    layout!(
        p,
        VkLayerDeviceCreateInfoUnion = "__typeof__(((VkLayerDeviceCreateInfo *)0)->u)",
        [pLayerInfo, pfnSetDeviceLoaderData]
    );
    c_enum!(
        p,
        VkChainType,
        [
            UNKNOWN,
            ENUMERATE_INSTANCE_EXTENSION_PROPERTIES,
            ENUMERATE_INSTANCE_LAYER_PROPERTIES,
            ENUMERATE_INSTANCE_VERSION,
        ]
    );
    layout!(p, VkChainHeader, [r#type, version, size]);
    layout!(
        p,
        VkEnumerateInstanceExtensionPropertiesChain,
        [header, pfnNextLayer, pNextLink]
    );
    layout!(
        p,
        VkEnumerateInstanceLayerPropertiesChain,
        [header, pfnNextLayer, pNextLink]
    );
    layout!(
        p,
        VkEnumerateInstanceVersionChain,
        [header, pfnNextLayer, pNextLink]
    );

    // vk_icd.h
    constants!(
        p,
        [
            CURRENT_LOADER_ICD_INTERFACE_VERSION,
            MIN_SUPPORTED_LOADER_ICD_INTERFACE_VERSION,
            MIN_PHYS_DEV_EXTENSION_ICD_INTERFACE_VERSION,
            ICD_LOADER_MAGIC,
        ]
    );
    pfns!(
        p,
        [
            PFN_vkNegotiateLoaderICDInterfaceVersion,
            PFN_vk_icdNegotiateLoaderICDInterfaceVersion,
            PFN_vk_icdGetInstanceProcAddr,
            PFN_vk_icdGetPhysicalDeviceProcAddr,
        ]
    );
    layout!(p, VK_LOADER_DATA, [loaderMagic, loaderData]);
    c_enum!(
        p,
        VkIcdWsiPlatform,
        [
            MIR, WAYLAND, WIN32, XCB, XLIB, ANDROID, MACOS, IOS, DISPLAY, HEADLESS, METAL,
            DIRECTFB, VI, GGP, SCREEN, FUCHSIA,
        ]
    );
    layout!(p, VkIcdSurfaceBase, [platform]);
    layout!(p, VkIcdSurfaceWayland, [base, display, surface]);
    layout!(p, VkIcdSurfaceXcb, [base, connection, window]);
    layout!(p, VkIcdSurfaceXlib, [base, dpy, window]);
    layout!(
        p,
        VkIcdSurfaceDisplay,
        [
            base,
            displayMode,
            planeIndex,
            planeStackIndex,
            transform,
            globalAlpha,
            alphaMode,
            imageExtent,
        ]
    );
    layout!(p, VkIcdSurfaceHeadless, [base]);
    p
}

/// What the headers define that this crate deliberately leaves out.
const NOT_DEFINED: &[&str] = &[
    // Surfaces of platforms other than Linux's (each behind its `VK_USE_PLATFORM_*` in vk_icd.h).
    "VkIcdSurfaceMir",
    "VkIcdSurfaceWin32",
    "VkIcdSurfaceDirectFB",
    "VkIcdSurfaceAndroid",
    "VkIcdSurfaceMacOS",
    "VkIcdSurfaceIOS",
    "VkIcdSurfaceGgp",
    "VkIcdSurfaceMetal",
    "VkIcdSurfaceVi",
    "VkIcdSurfaceScreen",
    "VkIcdSurfaceImagePipe",
    // Windows only.
    "PFN_vk_icdEnumerateAdapterPhysicalDevices",
    // Not a value: the export attribute.
    "VK_LAYER_EXPORT",
];

const PRELUDE: &str = "\
#define VK_USE_PLATFORM_XCB_KHR 1
#define VK_USE_PLATFORM_XLIB_KHR 1
#define VK_USE_PLATFORM_WAYLAND_KHR 1
#include <stdio.h>
#include <stddef.h>
#include <vulkan/vulkan.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vk_icd.h>
";

fn c_source(probe: &Probe) -> String {
    let mut c = format!("{PRELUDE}int main(void) {{\n");
    for fact in &probe.facts {
        writeln!(
            c,
            "  printf(\"%s\\t%lld\\n\", \"{}\", (long long)({}));",
            fact.key, fact.c_expr
        )
        .unwrap();
    }
    c += "  return 0;\n}\n";
    c
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e} (the test needs a C compiler as `cc`)"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compiles and runs the probe; returns its facts and the paths of the two headers it included.
fn c_facts(source: &str) -> (BTreeMap<String, i128>, Vec<PathBuf>) {
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("layer-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join("layer_abi.c");
    let exe = dir.join("layer_abi");
    std::fs::write(&c_file, source).unwrap();
    let deps = run(
        Command::new("cc").args(cfg!(target_arch = "x86").then_some("-m32")).arg("-std=gnu11").arg("-M").arg(&c_file),
        "cc -M (are libvulkan-dev, libx11-dev and libxcb1-dev installed?)",
    );
    let headers: Vec<PathBuf> = ["vk_layer.h", "vk_icd.h"]
        .iter()
        .map(|h| {
            deps.split_whitespace()
                .find(|d| d.ends_with(&format!("/vulkan/{h}")))
                .map(PathBuf::from)
                .unwrap_or_else(|| panic!("cc -M does not list vulkan/{h}"))
        })
        .collect();
    run(
        Command::new("cc")
            .args(cfg!(target_arch = "x86").then_some("-m32"))
            .args(["-std=gnu11", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&c_file),
        &format!("cc on {}", c_file.display()),
    );
    let out = run(&mut Command::new(&exe), "the C probe");
    std::fs::remove_dir_all(&dir).ok();
    let facts = out
        .lines()
        .map(|line| {
            let (key, value) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("bad probe line {line:?}"));
            (
                key.to_string(),
                value
                    .parse()
                    .unwrap_or_else(|_| panic!("bad probe line {line:?}")),
            )
        })
        .collect();
    (facts, headers)
}

/// What a header's text defines: top-level typedef names (closing `} Name;` in column 0), each
/// enum's enumerators, function pointer typedefs and numeric `#define`s.
#[derive(Default)]
struct HeaderNames {
    types: BTreeSet<String>,
    enumerators: BTreeMap<String, BTreeSet<String>>,
    pfns: BTreeSet<String>,
    constants: BTreeSet<String>,
}

fn scan_header(text: &str, names: &mut HeaderNames) {
    let text: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("} ") {
            names.types.insert(ident(rest.trim()));
        }
        if let Some(rest) = line.trim().strip_prefix("#define ") {
            let mut parts = rest.split_whitespace();
            let (name, value) = (parts.next().unwrap_or(""), parts.next());
            if value.is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                || name == "VK_LAYER_EXPORT"
            {
                names.constants.insert(name.to_string());
            }
        }
    }
    for (i, _) in text.match_indices("*PFN_") {
        names.pfns.insert(ident(&text[i + 1..]));
    }
    for (i, _) in text.match_indices("typedef enum") {
        let body = &text[i..];
        let (open, close) = (body.find('{').unwrap(), body.find('}').unwrap());
        let name = ident(body[close + 1..].trim());
        let values = body[open + 1..close]
            .split(',')
            .map(|v| ident(v.split('=').next().unwrap().trim()))
            .filter(|v| !v.is_empty());
        names.enumerators.entry(name).or_default().extend(values);
    }
}

#[test]
fn layer_and_icd_structures_match_the_c_headers() {
    let probe = probe();
    let (c, headers) = c_facts(&c_source(&probe));

    let mut problems = Vec::new();
    for fact in &probe.facts {
        match c.get(&fact.key) {
            None => problems.push(format!("{}: the C probe printed nothing", fact.key)),
            Some(&c_value) if c_value != fact.rust => {
                problems.push(format!("{}: C {c_value}, Rust {}", fact.key, fact.rust))
            }
            Some(_) => {}
        }
    }

    // Completeness: what the headers define is compared here or deliberately left out.
    let mut header = HeaderNames::default();
    for path in &headers {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        scan_header(&text, &mut header);
    }
    let skipped = |name: &String| NOT_DEFINED.contains(&name.as_str());
    for name in header
        .types
        .iter()
        .filter(|n| !skipped(n) && !probe.types.contains(*n))
    {
        problems.push(format!(
            "{name}: defined by the headers, not compared (missing from layer_abi?)"
        ));
    }
    for (name, values) in &header.enumerators {
        let ours = probe.enumerators.get(name).cloned().unwrap_or_default();
        for value in values.difference(&ours) {
            problems.push(format!(
                "{name}::{value}: in the headers, missing from layer_abi"
            ));
        }
    }
    for name in header
        .pfns
        .iter()
        .filter(|n| !skipped(n) && !probe.pfns.contains(*n))
    {
        problems.push(format!(
            "{name}: function pointer in the headers, missing from layer_abi"
        ));
    }
    for name in header
        .constants
        .iter()
        .filter(|n| !skipped(n) && !probe.constants.contains(*n))
    {
        problems.push(format!(
            "{name}: constant in the headers, missing from layer_abi"
        ));
    }

    let count = |prefix: &str| {
        probe
            .facts
            .iter()
            .filter(|f| f.key.starts_with(prefix))
            .count()
    };
    println!(
        "compared {} facts: {} types and function pointers (size), {} alignments, {} member offsets, \
         {} values; headers scanned: {}",
        probe.facts.len(),
        count("sizeof "),
        count("alignof "),
        count("offsetof "),
        count("value "),
        headers.iter().map(|h| h.display().to_string()).collect::<Vec<_>>().join(", ")
    );
    assert!(
        problems.is_empty(),
        "{} layer ABI mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
