//! A look at a library's ELF header before `dlopen`: a library for another architecture is skipped
//! quietly, a truncated or corrupt one is rejected instead of crashing inside the dynamic linker.

#[derive(Debug, PartialEq, Eq)]
pub enum ElfCheck {
    Loadable,
    /// A valid ELF file for another class or machine.
    WrongArchitecture(String),
    /// Not an ELF file, or its headers point outside the file.
    Corrupt(String),
}

const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;
const EM_386: u16 = 3;
const EM_ARM: u16 = 40;

fn this_machine() -> (u8, u16) {
    let class = if cfg!(target_pointer_width = "64") { 2 } else { 1 };
    let machine = if cfg!(target_arch = "x86_64") {
        EM_X86_64
    } else if cfg!(target_arch = "aarch64") {
        EM_AARCH64
    } else if cfg!(target_arch = "x86") {
        EM_386
    } else if cfg!(target_arch = "arm") {
        EM_ARM
    } else {
        // No library is this machine's: each is skipped as another architecture's, and says so.
        0
    };
    (class, machine)
}

/// Whether `path` names the file `dlopen` will load, so that checking it first means something.
/// The dynamic linker resolves the others itself: a bare name through its search path, and the
/// dynamic string tokens (`$ORIGIN`, `$LIB`, `$PLATFORM`, also in braces) that distributions put
/// in manifests (`/usr/$LIB/mangohud/libMangoHud.so`). Those are left to `dlopen` and its error.
pub fn names_the_file(path: &str) -> bool {
    path.contains('/') && !path.contains('$')
}

/// Checks the file at `path` (its size and first 64 bytes).
pub fn check(path: &str) -> ElfCheck {
    let (header, size) = match read_header(path) {
        Ok(v) => v,
        Err(e) => return ElfCheck::Corrupt(e),
    };
    check_bytes(&header, size)
}

pub fn check_bytes(h: &[u8], file_size: u64) -> ElfCheck {
    check_for(this_machine(), h, file_size)
}

/// [`check_bytes`] for a process of `(class, machine)`.
fn check_for((want_class, want_machine): (u8, u16), h: &[u8], file_size: u64) -> ElfCheck {
    if h.len() < 20 || &h[..4] != b"\x7fELF" {
        return ElfCheck::Corrupt("not an ELF file".into());
    }
    let class = h[4];
    let little = h[5] == 1;
    let u16_at = |o: usize| if little { u16::from_le_bytes([h[o], h[o + 1]]) } else { u16::from_be_bytes([h[o], h[o + 1]]) };
    let machine = u16_at(18);
    if class != want_class {
        // The dynamic linker's words (the Khronos loader logs them from dlerror).
        let bits = if class == 1 { "32" } else { "64" };
        return ElfCheck::WrongArchitecture(format!("wrong ELF class: ELFCLASS{bits}"));
    }
    if machine != want_machine || !little {
        return ElfCheck::WrongArchitecture(format!("ELF machine {machine} is not this process's {want_machine}"));
    }
    // ELFCLASS64: a 64-byte header, 8-byte offsets; ELFCLASS32: 52 bytes, 4-byte offsets, so
    // the table sizes that follow them sit 12 bytes earlier.
    let (header_size, sizes_at) = if class == 2 { (64, 54) } else { (52, 42) };
    if h.len() < header_size {
        return ElfCheck::Corrupt("truncated ELF header".into());
    }
    let (phoff, shoff) = if class == 2 {
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        (u64_at(32), u64_at(40))
    } else {
        let u32_at = |o: usize| u64::from(u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes")));
        (u32_at(28), u32_at(32))
    };
    let (phentsize, phnum) = (u16_at(sizes_at) as u64, u16_at(sizes_at + 2) as u64);
    let (shentsize, shnum) = (u16_at(sizes_at + 4) as u64, u16_at(sizes_at + 6) as u64);
    let ph_end = phoff.saturating_add(phentsize * phnum);
    let sh_end = shoff.saturating_add(shentsize * shnum);
    if phnum == 0 || ph_end > file_size || sh_end > file_size {
        return ElfCheck::Corrupt(format!("headers end past the file ({file_size} bytes): truncated"));
    }
    ElfCheck::Loadable
}

/// The first 64 bytes of the file and its size (this runs before the first dlopen of every
/// driver and layer).
fn read_header(path: &str) -> Result<(Vec<u8>, u64), String> {
    let mut file = crate::platform::OpenFile::open(path).map_err(|e| e.to_string())?;
    let size = file.identity()?.size;
    Ok((file.read(64, Some(64))?, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_literal_paths_are_checked_before_dlopen() {
        assert!(names_the_file("/usr/lib/libVkLayer_x.so"));
        assert!(names_the_file("./relative/libx.so"));
        assert!(!names_the_file("libVkLayer_gfxreconstruct.so"), "searched by the dynamic linker");
        assert!(!names_the_file("/usr/$LIB/mangohud/libMangoHud.so"));
        assert!(!names_the_file("${ORIGIN}/libx.so"));
        assert!(!names_the_file("/opt/$PLATFORM/libx.so"));
    }

    #[test]
    fn this_test_binary_is_loadable_and_damage_is_caught() {
        let exe = std::env::current_exe().unwrap();
        let path = exe.to_str().unwrap();
        assert_eq!(check(path), ElfCheck::Loadable);
        let (mut header, size) = read_header(path).unwrap();
        assert!(matches!(check_bytes(&header, 100), ElfCheck::Corrupt(_)), "truncated file");
        assert!(matches!(check_bytes(b"#!/bin/sh\n echo hello there", size), ElfCheck::Corrupt(_)));
        header[18] = 40; // EM_ARM
        header[19] = 0;
        assert!(matches!(check_bytes(&header, size), ElfCheck::WrongArchitecture(_)));
        header[4] = if cfg!(target_pointer_width = "64") { 1 } else { 2 };
        let other_class = if cfg!(target_pointer_width = "64") { "ELFCLASS32" } else { "ELFCLASS64" };
        assert_eq!(check_bytes(&header, size), ElfCheck::WrongArchitecture(format!("wrong ELF class: {other_class}")));
    }

    /// The header of a 32-bit i386 library (52 bytes: offsets 4 bytes wide), as an i686 build
    /// of the loader sees it.
    #[test]
    fn a_32_bit_library_is_read_with_the_32_bit_layout() {
        let mut header = vec![0u8; 52];
        header[..7].copy_from_slice(b"\x7fELF\x01\x01\x01");
        header[18..20].copy_from_slice(&EM_386.to_le_bytes());
        header[28..32].copy_from_slice(&52u32.to_le_bytes()); // e_phoff
        header[32..36].copy_from_slice(&4000u32.to_le_bytes()); // e_shoff
        header[42..44].copy_from_slice(&32u16.to_le_bytes()); // e_phentsize
        header[44..46].copy_from_slice(&7u16.to_le_bytes()); // e_phnum
        header[46..48].copy_from_slice(&40u16.to_le_bytes()); // e_shentsize
        header[48..50].copy_from_slice(&25u16.to_le_bytes()); // e_shnum
        let i386 = (1, EM_386);
        assert_eq!(check_for(i386, &header, 5000), ElfCheck::Loadable);
        assert!(matches!(check_for(i386, &header, 4500), ElfCheck::Corrupt(_)), "section headers past the end");
        assert!(matches!(check_for(i386, &header[..40], 5000), ElfCheck::Corrupt(_)), "truncated header");
        assert_eq!(check_for((2, EM_X86_64), &header, 5000), ElfCheck::WrongArchitecture("wrong ELF class: ELFCLASS32".into()));
    }
}
