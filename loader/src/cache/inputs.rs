//! The inputs of the key read from the system: the machine's GPUs as the kernel shows them
//! (without opening a GPU device file), the kernel and GPU module versions, the CPU, our own
//! library, and the identities of files. The only part of the cache stage that reads the system.

use super::key::Digest;
use crate::platform;

/// Kernel modules of GPU drivers whose version a driver's answers can follow.
const GPU_MODULES: &[&str] = &[
    "nvidia", "nvidia_drm", "nvidia_uvm", "nouveau", "amdgpu", "radeon", "i915", "xe", "virtio_gpu", "vmwgfx", "msm", "panfrost", "panthor", "lima",
    "v3d", "vc4", "etnaviv", "asahi", "powervr",
];

/// The root under which `/sys` and `/dev` are read: `VK_LOADER_TEST_SYSFS_ROOT` lets the tests
/// show the loader a GPU appearing or disappearing. (The cache is off in elevated processes, so
/// this is never read there.)
fn system_root() -> String {
    platform::env("VK_LOADER_TEST_SYSFS_ROOT").unwrap_or_default()
}

fn read_text(path: &str, limit: usize) -> String {
    platform::read_file(path, limit).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

/// The machine's component: display and 3D controllers and accelerators on the PCI bus (class
/// 0x03 and 0x12) with their vendor, device, revision and subsystem ids; the `/dev/dri` and
/// `/dev/nvidia*` nodes present; the kernel release and the GPU modules' versions; the CPU (a
/// software driver such as lavapipe answers from its model and features). Read once per process:
/// a GPU that appears while a process runs is seen by the next one (the drivers this process
/// loaded answer it live anyway).
pub fn machine() -> u64 {
    static MACHINE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MACHINE.get_or_init(read_machine)
}

fn read_machine() -> u64 {
    let root = system_root();
    let mut d = Digest::default();
    let pci = format!("{root}/sys/bus/pci/devices");
    for device in platform::list_dir(&pci).unwrap_or_default() {
        let class = read_text(&format!("{pci}/{device}/class"), 64);
        if !(class.starts_with("0x03") || class.starts_with("0x12")) {
            continue;
        }
        d = d.text(&device).text(&class);
        for field in ["vendor", "device", "revision", "subsystem_vendor", "subsystem_device"] {
            d = d.text(&read_text(&format!("{pci}/{device}/{field}"), 64));
        }
    }
    for node in platform::list_dir(&format!("{root}/dev/dri")).unwrap_or_default() {
        d = d.text("dri").text(&node);
    }
    for node in platform::list_dir(&format!("{root}/dev")).unwrap_or_default().iter().filter(|n| n.starts_with("nvidia")) {
        d = d.text("dev").text(node);
    }
    d = d.text(&read_text("/proc/sys/kernel/osrelease", 256));
    // One directory listing, then only the GPU modules that are loaded.
    let loaded = platform::list_dir(&format!("{root}/sys/module")).unwrap_or_default();
    for module in GPU_MODULES.iter().filter(|m| loaded.iter().any(|l| l == *m)) {
        let base = format!("{root}/sys/module/{module}");
        d = d.text(module).text(&read_text(&format!("{base}/version"), 256)).text(&read_text(&format!("{base}/srcversion"), 256));
    }
    d.text(&first_cpu(&read_text("/proc/cpuinfo", 16 * 1024))).value()
}

/// The first processor's block of `/proc/cpuinfo`, without the lines that change while the
/// machine runs (the clock, the processor and core numbers).
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
    d.text(&platform::env("VK_LOADER_TEST_BUILD_ID").unwrap_or_default()).value()
}

/// A file's identity as numbers; `None` (a key that matches nothing) for a file modified in the
/// last two seconds, which could change again without its identity changing (see
/// `FileIdentity::is_settled`).
pub fn identity(path: &str) -> Option<[u64; 5]> {
    platform::file_identity(path).filter(|i| i.is_settled()).map(|i| i.words())
}

/// The dynamic linker's cache (`/etc/ld.so.cache`): where a bare library name resolves.
pub fn linker_cache() -> Option<[u64; 5]> {
    identity("/etc/ld.so.cache")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cpu_is_read_without_its_clock() {
        let info = "processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 2000.1\nflags\t\t: sse avx\n\nprocessor\t: 1\nmodel name\t: X\n";
        assert_eq!(first_cpu(info), "model name\t: X\nflags\t\t: sse avx");
        let later = info.replace("2000.1", "3400.0");
        assert_eq!(first_cpu(info), first_cpu(&later));
    }
}
