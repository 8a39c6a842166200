//! The inputs of the key read from the system: the machine's GPUs as the kernel shows them
//! (without opening a GPU device file), the kernel and GPU module versions, the CPU, our own
//! library, and the identities of files. The only part of the cache stage that reads the system.

use super::key::Digest;
use crate::platform;

/// Kernel modules of GPU drivers whose version a driver's answers can follow.
const GPU_MODULES: &[&str] = &[
    "nvidia", "nvidia_drm", "nvidia_modeset", "nvidia_uvm", "nouveau", "amdgpu", "radeon", "i915", "xe", "virtio_gpu", "vmwgfx", "msm", "panfrost", "panthor", "lima",
    "v3d", "vc4", "etnaviv", "asahi", "powervr",
];

/// The root under which `/proc/bus/pci`, `/sys` and `/dev` are read: `VK_LOADER_TEST_SYSFS_ROOT`
/// lets the tests show the loader a GPU appearing or disappearing. (The cache is off in elevated
/// processes, so this is never read there.)
fn system_root() -> String {
    crate::reference::variables::VK_LOADER_TEST_SYSFS_ROOT.get().unwrap_or_default()
}

fn read_text(path: &str, limit: usize) -> String {
    platform::read_file(path, limit).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

/// The machine's component: the `/dev/dri` nodes, NVIDIA's control node and the GPUs its kernel
/// module lists; where there is any such node, every PCI function with its vendor and device ids
/// and the kernel driver bound to it (`/proc/bus/pci/devices`: one small file, where sysfs takes
/// a read per attribute per device); the kernel release and the loaded GPU modules
/// (`/proc/modules`) with their versions; the CPU's identity and features (a software driver such
/// as lavapipe answers from them). No GPU device file is opened. Read once per process: a GPU
/// that appears while a process runs is seen by the next one (the drivers this process loaded
/// answer it live anyway).
pub fn machine() -> u64 {
    static MACHINE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MACHINE.get_or_init(read_machine)
}

fn read_machine() -> u64 {
    let root = system_root();
    let mut d = Digest::default();
    let nodes = platform::list_dir(&format!("{root}/dev/dri")).unwrap_or_default();
    // With whether this process may open each node: its groups, a sandbox or a device cgroup
    // (which `access` answers for) may deny one process what another of the same user has.
    for node in &nodes {
        d = d.text("dri").text(node).number(platform::read_writable(&format!("{root}/dev/dri/{node}")) as u64);
    }
    // The GPUs NVIDIA's module lists matter only where its control node is there to be opened
    // (without it the driver finds no device): a machine without it is spared a look in /proc.
    let nvidia = platform::readable(&format!("{root}/dev/nvidiactl"));
    d = d.number(nvidia as u64);
    if nvidia {
        for gpu in platform::list_dir(&format!("{root}/proc/driver/nvidia/gpus")).unwrap_or_default() {
            d = d.text("nvidia").text(&gpu);
        }
        // The kernel module's parameters (resizable BAR, registry settings), which the driver
        // reads before it opens a node.
        d = d.text(&read_text(&format!("{root}/proc/driver/nvidia/params"), 64 * 1024));
    }
    // Which GPU is behind a node (one replaced by another of the same kind keeps the node's
    // name). Without any node no driver reaches a GPU, and the list is not read: its first read
    // in a process costs some 50-100 us, a twentieth of a warm start-up (a GPU without a node
    // changes the key when its node appears).
    if !nodes.is_empty() || nvidia {
        d = d.text(&pci_functions(&read_text(&format!("{root}/proc/bus/pci/devices"), 256 * 1024)));
    }
    d = d.text(&platform::kernel_release());
    // The GPU modules loaded, from one read of /proc/modules; then each one's version.
    let modules = read_text(&format!("{root}/proc/modules"), 1 << 20);
    let loaded: Vec<&str> = modules.lines().filter_map(|line| line.split_whitespace().next()).collect();
    for module in GPU_MODULES.iter().filter(|m| loaded.contains(m)) {
        let base = format!("{root}/sys/module/{module}");
        d = d.text(module).text(&read_text(&format!("{base}/version"), 256)).text(&read_text(&format!("{base}/srcversion"), 256));
    }
    // A software driver's answers follow the memory (lavapipe's heap is the machine's memory)
    // and whether it may export dma-bufs through udmabuf (lavapipe's DRM format modifiers).
    d = d.number(platform::total_memory()).number(platform::read_writable(&format!("{root}/dev/udmabuf")) as u64);
    d.text(&cpu()).value()
}

/// `/proc/bus/pci/devices` without what may change from one boot to the next: per function, its
/// bus and device-function number, its vendor and device ids, the sizes of its memory regions
/// (a board of the same ids with more memory, or resizable BAR turned on, has larger ones), and
/// its bound driver. Left out: the IRQ and the regions' addresses.
fn pci_functions(listing: &str) -> String {
    let mut out = String::new();
    for line in listing.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(function), Some(ids)) = (fields.first(), fields.get(1)) else { continue };
        // After the IRQ: 7 region addresses (6 BARs and the ROM), then their 7 sizes, then the
        // bound driver when there is one (the 18th field).
        let sizes = fields.get(10..17).map(|s| s.join(" ")).unwrap_or_default();
        let driver = fields.get(17).copied().unwrap_or_default();
        out.push_str(&format!("{function} {ids} {sizes} {driver}\n"));
    }
    out
}

/// The CPU: its signature (family, model, stepping) and feature bits, `cpuid`'s leaves 1 and 7.
/// Taken from glibc's copy where it offers one (`__x86_get_cpuid_feature_leaf`, glibc 2.33): a
/// virtual machine traps every `cpuid` instruction (some 8 us each on this project's machines,
/// a twentieth of a warm start-up). The vendor, in leaf 0 only, is left out: the signature tells
/// Intel's family 6 from AMD's and Hygon's extended families.
#[cfg(target_arch = "x86_64")]
fn cpu() -> String {
    let [leaf1, leaf7] = platform::glibc_cpuid().unwrap_or_else(|| {
        use std::arch::x86_64::__cpuid_count;
        // cpuid exists on every x86_64 processor; leaves beyond the maximum are not asked.
        let max = __cpuid_count(0, 0).eax;
        [1, 7].map(|leaf| match leaf <= max {
            true => {
                let r = __cpuid_count(leaf, 0);
                [r.eax, r.ebx, r.ecx, r.edx]
            }
            false => [0; 4],
        })
    });
    // Leaf 1's EBX holds the APIC id of the CPU this runs on: left out.
    format!("{:08x}{:08x}{:08x} {:08x}{:08x}{:08x}{:08x}", leaf1[0], leaf1[2], leaf1[3], leaf7[0], leaf7[1], leaf7[2], leaf7[3])
}

/// The CPU: the first processor's block of `/proc/cpuinfo`.
#[cfg(not(target_arch = "x86_64"))]
fn cpu() -> String {
    first_cpu(&read_text("/proc/cpuinfo", 16 * 1024))
}

/// The first processor's block of `/proc/cpuinfo`, without the lines that change while the
/// machine runs (the clock, the processor and core numbers).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn first_cpu(cpuinfo: &str) -> String {
    let volatile = ["cpu MHz", "processor", "core id", "apicid", "initial apicid", "bogomips"];
    cpuinfo
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .lines()
        .filter(|line| !volatile.iter().any(|v| line.starts_with(v)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Our own component: the loader's version, the cache format and a digest of the runtime's
/// source (see build.rs): another build of the loader starts afresh, and the library and
/// `vk-loader` (the same source) share the records. `VK_LOADER_TEST_BUILD_ID` stands for another
/// build in the tests.
pub fn loader() -> u64 {
    let d = Digest::default().text(env!("CARGO_PKG_VERSION")).number(super::record::FORMAT_VERSION as u64).text(env!("VK_LOADER_SOURCE_DIGEST"));
    d.text(&crate::reference::variables::VK_LOADER_TEST_BUILD_ID.get().unwrap_or_default()).value()
}

/// A file's identity as numbers; why not (naming the file) where it cannot be read, or was
/// modified in the last two seconds and could change again without its identity changing (see
/// `FileIdentity::is_settled`): a key that matches nothing.
pub fn identity(path: &str) -> Result<[u64; 7], String> {
    match platform::file_identity(path) {
        None => Err(format!("{path} cannot be read")),
        Some(identity) if !identity.is_settled() => Err(too_new(path)),
        Some(identity) => Ok(identity.words()),
    }
}

/// Why a file modified in the last two seconds is not trusted yet.
fn too_new(path: &str) -> String {
    format!("{path} changed in the last two seconds: too new to trust until it settles")
}

/// The files drivers read for options when their instance is created, whose options change what
/// they report (a device's name, its vendor, the formats it claims, its memory size): each with
/// the digest of its identity, 0 where it is not there; while one was modified in the last two
/// seconds (see `FileIdentity::is_settled`), that one and why. Found by tracing real drivers' instance creation
/// and enumeration (`strace -f -e trace=file`, see the cache's documentation):
///
/// - Mesa's driconf (RADV, ANV, NVK, lavapipe, Turnip...): the directory `$DRIRC_CONFIGDIR`
///   names, else `/usr/share/drirc.d`, each file in it; `/etc/drirc`; `$HOME/.drirc`. Keyed on
///   all of them, whichever the variable picks: a change where it does not look costs a miss only.
/// - NVIDIA's application profiles: `/etc/nvidia/nvidia-application-profiles-rc` and its `.d`
///   directory, `$HOME/.nv/nvidia-application-profiles-rc` and its `.d` (either `-rc` may be a
///   directory too, whose files the driver reads), `$HOME/.nv/nvidia-application-profile-globals-rc`
///   (every profile on or off), and the driver's own
///   `/usr/share/nvidia/nvidia-application-profiles-*-rc`.
/// - libdrm's `/usr/share/libdrm/amdgpu.ids`, from which RADV names AMD GPUs.
///
/// A directory's files are listed with their identities; a directory's subdirectories are not
/// followed (neither driver reads them).
pub fn configuration_files() -> Result<Vec<(String, u64)>, String> {
    let home = crate::reference::variables::HOME.get();
    let mut directories = vec!["/usr/share/drirc.d".to_string(), "/etc/nvidia/nvidia-application-profiles-rc.d".to_string()];
    let mut files = vec!["/etc/drirc".to_string(), "/etc/nvidia/nvidia-application-profiles-rc".to_string(), "/usr/share/libdrm/amdgpu.ids".to_string()];
    if let Some(dir) = crate::reference::variables::DRIRC_CONFIGDIR.get() {
        directories.push(dir);
    }
    if let Some(home) = &home {
        files.push(format!("{home}/.drirc"));
        files.push(format!("{home}/.nv/nvidia-application-profiles-rc"));
        // Turns every profile on or off.
        files.push(format!("{home}/.nv/nvidia-application-profile-globals-rc"));
        directories.push(format!("{home}/.nv/nvidia-application-profiles-rc.d"));
    }
    // NVIDIA's driver reads the files of a profiles "file" that is a directory.
    let profile_dirs: Vec<String> = files.iter().filter(|f| f.ends_with("/nvidia-application-profiles-rc") && platform::is_directory(f)).cloned().collect();
    directories.extend(profile_dirs);
    let nvidia_share = platform::list_dir("/usr/share/nvidia").unwrap_or_default();
    let profiles = nvidia_share.iter().filter(|n| n.starts_with("nvidia-application-profiles-") && n.ends_with("-rc"));
    files.extend(profiles.map(|n| format!("/usr/share/nvidia/{n}")));
    for dir in &directories {
        files.extend(platform::list_dir(dir).unwrap_or_default().into_iter().map(|name| format!("{dir}/{name}")));
    }
    let mut found = Vec::with_capacity(files.len());
    for path in files {
        let identity = match platform::file_identity(&path) {
            Some(id) if !id.is_settled() => return Err(too_new(&path)),
            Some(id) => super::key::Digest::default().numbers(&id.words()).value(),
            None => 0,
        };
        found.push((path, identity));
    }
    crate::sort::sort(&mut found);
    found.dedup();
    Ok(found)
}

/// The dynamic linker's cache (`/etc/ld.so.cache`): where a bare library name resolves.
pub fn linker_cache() -> Result<[u64; 7], String> {
    identity("/etc/ld.so.cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_functions_keep_ids_and_driver_and_leave_addresses_out() {
        let line = |irq: &str, address: &str, size: &str| {
            format!("0100\t10de2330\t{irq}\t{address}\t0\t0\t0\t0\t0\t0\t{size}\t0\t0\t0\t0\t0\t0\tnvidia\n0000\t80861237\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n")
        };
        let base = pci_functions(&line("10", "fb000000", "1000000"));
        assert_eq!(base, "0100 10de2330 1000000 0 0 0 0 0 0 nvidia\n0000 80861237 0 0 0 0 0 0 0 \n");
        assert_eq!(base, pci_functions(&line("11", "fb000000", "1000000")), "an IRQ is not the hardware");
        assert_eq!(base, pci_functions(&line("10", "fc000000", "1000000")), "nor an address");
        assert_ne!(base, pci_functions(&line("10", "fb000000", "4000000")), "a larger region is");
    }

    /// glibc's copy of `cpuid` (glibc 2.33 and later: Debian 12 has 2.36) is what the
    /// instruction says.
    #[test]
    #[cfg(all(target_arch = "x86_64", target_env = "gnu"))]
    fn glibc_copy_of_cpuid_is_the_instructions_answer() {
        use std::arch::x86_64::__cpuid_count;
        let [leaf1, leaf7] = platform::glibc_cpuid().expect("glibc 2.33 or later");
        let (one, seven) = (__cpuid_count(1, 0), __cpuid_count(7, 0));
        assert_eq!([leaf1[0], leaf1[2], leaf1[3]], [one.eax, one.ecx, one.edx]);
        assert_eq!(leaf7, [seven.eax, seven.ebx, seven.ecx, seven.edx]);
    }

    #[test]
    fn the_first_cpu_is_read_without_its_clock() {
        let info = "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2000.1\nflags\t\t: sse avx\n\nprocessor\t: 1\nmodel name\t: X\n";
        assert_eq!(first_cpu(info), "model name\t: X\nflags\t\t: sse avx");
        let later = info.replace("2000.1", "3400.0");
        assert_eq!(first_cpu(info), first_cpu(&later));
    }
}
