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
    } else {
        EM_ARM
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
    if h.len() < 20 || &h[..4] != b"\x7fELF" {
        return ElfCheck::Corrupt("not an ELF file".into());
    }
    let class = h[4];
    let little = h[5] == 1;
    let u16_at = |o: usize| if little { u16::from_le_bytes([h[o], h[o + 1]]) } else { u16::from_be_bytes([h[o], h[o + 1]]) };
    let machine = u16_at(18);
    let (want_class, want_machine) = this_machine();
    if class != want_class {
        // The dynamic linker's words (the Khronos loader logs them from dlerror).
        let bits = if class == 1 { "32" } else { "64" };
        return ElfCheck::WrongArchitecture(format!("wrong ELF class: ELFCLASS{bits}"));
    }
    if machine != want_machine || !little {
        return ElfCheck::WrongArchitecture(format!("ELF machine {machine} is not this process's {want_machine}"));
    }
    if h.len() < 64 {
        return ElfCheck::Corrupt("truncated ELF header".into());
    }
    let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
    let (phoff, shoff) = (u64_at(32), u64_at(40));
    let (phentsize, phnum) = (u16_at(54) as u64, u16_at(56) as u64);
    let (shentsize, shnum) = (u16_at(58) as u64, u16_at(60) as u64);
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
    let mut file = crate::platform::OpenFile::open(path)?;
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
}
