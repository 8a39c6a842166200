//! Every command name of the registry, aliases included, finds its command; non-names miss.

use std::ffi::{CStr, CString};
use std::path::Path;

use vk_generated::lookup::{self, ExtensionSet};
use vk_generated::{make_api_version, CommandLevel, DispatchTable, COMMANDS, EXTENSIONS};

fn registry() -> generator::ir::Registry {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../registry");
    generator::load_registry(&dir).expect("registry parses")
}

#[test]
fn every_name_finds_its_command() {
    let reg = registry();
    let mut checked = 0;
    for command in reg.commands.values() {
        for name in std::iter::once(&command.name).chain(&command.aliases) {
            let found = lookup::command(name.as_bytes()).unwrap_or_else(|| panic!("{name} not found"));
            assert_eq!(found.info().name().to_str().unwrap(), command.name, "{name}");
            let c_name = CString::new(name.as_str()).unwrap();
            // SAFETY: a CString: non-null and NUL-terminated.
            let found_c = unsafe { lookup::command_c(c_name.as_ptr()) }.expect("C lookup");
            assert!(std::ptr::eq(found, found_c));
            checked += 1;
        }
    }
    assert_eq!(checked, lookup::COMMAND_NAME_TABLE.len());
    println!("{checked} command names looked up");
    for e in &reg.extensions {
        let id = lookup::extension(e.0.as_bytes()).unwrap_or_else(|| panic!("{} not found", e.0));
        assert_eq!(EXTENSIONS[id as usize].name().to_str().unwrap(), e.0);
    }
}

#[test]
fn tables_match_the_registry() {
    let reg = registry();
    assert_eq!(COMMANDS.len(), reg.commands.len());
    for (info, command) in COMMANDS.iter().zip(reg.commands.values()) {
        assert_eq!(info.name().to_str().unwrap(), command.name);
        let aliases: Vec<&str> = info.aliases().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(aliases, command.aliases, "{}", command.name);
        assert_eq!(info.names().count(), 1 + command.aliases.len());
    }
    assert_eq!(EXTENSIONS.len(), reg.extensions.len());
    for (id, (info, e)) in EXTENSIONS.iter().zip(reg.extensions.values()).enumerate() {
        assert_eq!(info.id() as usize, id);
        assert_eq!(info.name().to_str().unwrap(), e.name);
        assert_eq!(info.promoted_to(), e.promoted_to.as_deref(), "{}", e.name);
        assert_eq!(info.deprecated_by(), e.deprecated_by.as_deref(), "{}", e.name);
        assert_eq!(info.obsoleted_by(), e.obsoleted_by.as_deref(), "{}", e.name);
        assert_eq!(info.platform(), e.platform.as_deref(), "{}", e.name);
        assert_eq!(info.depends().map(str::to_owned), e.depends.as_ref().map(generator::depends::to_string));
        let commands: Vec<&CStr> = info.commands().iter().map(|&c| COMMANDS[c as usize].name()).collect();
        let expected: Vec<&CStr> =
            e.commands().iter().filter_map(|c| lookup::command(c.as_bytes())).map(|n| n.info().name()).collect();
        assert_eq!(commands, expected, "{}", e.name);
    }
    // `deprecatedby=""` is deprecated with no replacement, not "not deprecated".
    assert_eq!(lookup::extension_info(c"VK_IMG_format_pvrtc").unwrap().deprecated_by(), Some(""));
    assert_eq!(lookup::extension_info(c"VK_KHR_surface").unwrap().deprecated_by(), None);
    let model = generator::model::Model::new(&reg);
    assert_eq!(lookup::COMMAND_NAMES.len(), model.names.len());
    for (name, expected) in lookup::COMMAND_NAMES.iter().zip(&model.names) {
        assert_eq!(name.command, expected.command);
        let rows: Vec<(u32, &[u16])> = name.available_with().iter().map(|r| (r.version, r.extensions())).collect();
        let want: Vec<(u32, &[u16])> = expected
            .availability
            .iter()
            .map(|a| (make_api_version(0, a.version.0, a.version.1, 0), a.extensions.as_slice()))
            .collect();
        assert_eq!(rows, want, "{}", expected.name);
    }
    for table in [&lookup::COMMAND_NAME_TABLE, &lookup::EXTENSION_NAME_TABLE] {
        for id in 0..table.len() {
            let c_name = table.c_name_of(id);
            assert_eq!(c_name.to_bytes(), table.name_of(id).as_bytes());
            assert_eq!(CStr::from_bytes_with_nul(c_name.to_bytes_with_nul()), Ok(c_name));
        }
    }
}

#[test]
fn non_names_miss() {
    let misses: &[&[u8]] = &[
        b"", b"vk", b"vkCreateInstanceX", b"vkcreateinstance", b"xkCreateInstance", b"vkCreateInstanc",
        b"vkGetDeviceProcAddr ", b"VK_KHR_surface", b"vkCmdDraw\0", b"vkFooBarKHR", b"vkQueueSubmit3",
    ];
    for name in misses {
        assert!(lookup::command(name).is_none(), "{:?} should miss", String::from_utf8_lossy(name));
    }
    assert!(lookup::extension(b"VK_KHR_surfac").is_none());
    assert!(lookup::extension(b"vkCmdDraw").is_none());
}

#[test]
fn availability_follows_versions_and_extensions() {
    let none = ExtensionSet::new();
    let v10 = make_api_version(0, 1, 0, 0);
    let v11 = make_api_version(0, 1, 1, 0);
    let props2 = lookup::command(b"vkGetPhysicalDeviceProperties2").unwrap();
    assert!(!props2.is_available(v10, &none));
    assert!(props2.is_available(v11, &none));
    assert!(props2.is_available(make_api_version(0, 1, 1, 250), &none), "patch level is ignored");
    let props2_khr = lookup::command(b"vkGetPhysicalDeviceProperties2KHR").unwrap();
    assert!(!props2_khr.is_available(v11, &none), "the KHR name needs its extension");
    let mut with_ext = ExtensionSet::new();
    assert!(with_ext.insert_name(b"VK_KHR_get_physical_device_properties2"));
    assert!(props2_khr.is_available(v10, &with_ext));
    assert!(lookup::command(b"vkCreateInstance").unwrap().is_available(v10, &none));
    assert!(props2.is_core() && !props2_khr.is_core());
    // A block with its own dependency: vkGetDeviceGroupPresentCapabilitiesKHR comes with
    // VK_KHR_swapchain only on Vulkan 1.1.
    let mut swapchain = ExtensionSet::new();
    swapchain.insert_name(b"VK_KHR_swapchain");
    let group = lookup::command(b"vkGetDeviceGroupPresentCapabilitiesKHR").unwrap();
    assert!(!group.is_available(v10, &swapchain));
    assert!(group.is_available(v11, &swapchain));
}

#[test]
fn tables_load_through_aliases() {
    // A 1.0 driver that only knows the KHR name still fills the canonical slot.
    /// A function whose address marks the slot it fills.
    ///
    /// # Safety
    /// None: it does nothing.
    unsafe extern "system" fn marker() {}
    let table = vk_generated::InstanceDispatchTable::load(|name| {
        (name.to_bytes() == b"vkGetPhysicalDeviceProperties2KHR").then_some(marker as unsafe extern "system" fn())
    });
    assert!(table.vkGetPhysicalDeviceProperties2.is_some());
    assert!(table.vkCreateInstance.is_none());
    let filled = table.slots().iter().filter(|s| s.is_some()).count();
    assert_eq!(filled, 1);
    for (slot, &id) in vk_generated::DeviceDispatchTable::COMMANDS.iter().enumerate() {
        assert_eq!(COMMANDS[id as usize].level, CommandLevel::Device);
        assert_eq!(COMMANDS[id as usize].slot as usize, slot);
    }
}
