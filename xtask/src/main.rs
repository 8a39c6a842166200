//! `cargo xtask <subcommand>`: the project's automation, in Rust so it needs nothing but cargo.

mod asan;
mod bench;
mod cross;
mod fuzz;
mod install;
mod khronos_suite;
mod modules;
mod package;
mod package_install_test;
mod regen;
mod run;
mod safety_docs;
mod size;
mod test;
mod unsafe_count;

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <subcommand>

subcommands:
  regen [--check] [--registry DIR] [--out DIR]
      regenerate the committed generated files from registry/ (vk.xml, video.xml).
      --check         change nothing; fail if any generated file is stale, missing or orphaned
      --registry DIR  read another registry; output then defaults to target/regen/<name of DIR>
      --out DIR       write under DIR instead of the repository root
  run [--test-driver | --system-drivers]
      build libvulkan.so.1, the test driver, vk-hello and vk-compute; run them through our library:
      on Mesa's lavapipe when it is installed (vk-hello and vk-compute), else on the test driver
      --test-driver     only the project's test driver (vk-hello only: it runs no shaders)
      --system-drivers  every driver the machine has installed (vk-hello and vk-compute)
  test [ARGS...]
      the README's test command: installs the system packages the tests need when missing
      (apt-get, through sudo when not root; names them and fails if it cannot), then runs
      cargo test --workspace ARGS...
  test-i686
      the loader's tests that apply, built for i686-unknown-linux-gnu and run as 32-bit processes;
      installs what they need when missing (rustup target, gcc-N-multilib, the i386 architecture
      with mesa-vulkan-drivers:i386 and libvulkan1:i386, pinning the Multi-Arch: same libraries
      to one version where the i386 lists lag; vulkan-tools:i386 unpacked under the target
      directory): the C layout probes (-m32), the loader's unit tests, the unknown-command
      trampolines, handles, layers, drivers (a 64-bit driver beside skipped), the driver cache,
      and 32-bit vulkaninfo on the i386 lavapipe through ours against Debian's libvulkan1:i386
      (cache off, cold and warm)
  test-aarch64
      the unknown-command and handle tests, built for aarch64-unknown-linux-gnu and run under
      qemu-aarch64; installs the target, gcc-N-aarch64-linux-gnu (N: the default gcc's major
      version), libc6-dev-arm64-cross and qemu-user when missing
  install --prefix DIR
      build libvulkan.so.1 in release and install it with its links and vulkan.pc under DIR/lib;
      the trace layer in DIR/lib with its manifest in DIR/share/vulkan/explicit_layer.d
  package [--out DIR] [--target i686-unknown-linux-gnu]
      the Debian packages of the release build, by debhelper (debian/), into DIR (default
      target/debian): libvulkan1-rs (Multi-Arch: same; replaces libvulkan1 of its own
      architecture only), libvulkan-rs-dev (libvulkan.so, vulkan.pc), vk-loader and
      vulkan-layer-rust-trace (the trace layer VK_LAYER_RUST_trace with its manifest)
      --target i686-unknown-linux-gnu  the i386 packages, on amd64: libvulkan1-rs,
                      libvulkan-rs-dev and vulkan-layer-rust-trace (not vk-loader), built for
                      i686 and packaged under dpkg-architecture -a i386, installable beside the
                      amd64 ones; installs what is missing (rustup target, gcc-N-multilib,
                      binutils-i686-linux-gnu, libc6:i386) as root or through sudo -n
  package-install-test [--debs DIR]
      as root or through sudo -n, on a machine made for it (CI): enables i386 (armhf on arm64),
      installs libvulkan1 and libvulkan1:i386 (on amd64 also the i386 lavapipe and a 32-bit
      vulkaninfo), installs our packages (built first, for amd64 and i386 on amd64; or those in
      DIR), the files shared by the two architectures' checked identical, and checks that only
      libvulkan1 and libvulkan-dev of those architectures went, that each architecture's
      libvulkan.so.1 is ours and that a 64-bit and a 32-bit vulkaninfo each run on it (our
      instance version, a device, our trace layer); then reinstalls the system's libvulkan1 and
      libvulkan1:i386, purges ours and checks that the installed packages are those of before
  bench [loaders] [--khronos PATH] [--json FILE]
      our libvulkan.so against the system loader, back to back, each measurement in a fresh
      process on the test driver in an isolated environment: instance creation (1 and 10 drivers,
      100 layer manifests, cold), enumeration, GetProcAddr per name, vkCmdDraw per call, memory,
      library size, files opened per vkCreateInstance; a table with ratios and targets, then JSON;
      --khronos PATH adds a third column: every case measured again beside that libvulkan.so.1
      (a build of the newest Khronos loader), ratios ours/khronos from that pass
  bench real-driver [--json FILE]
      both loaders against the driver the environment names (VK_DRIVER_FILES, e.g. a GPU's):
      vkCreateInstance first and later, vkCmdDispatch recording per call
  bench lookup [--json FILE]
      name lookup, ours against the system loader's vkGetInstanceProcAddr on every command name,
      hits and misses (release build); prints a table, then JSON (or writes it to FILE)
  bench layer-sdk [--json FILE] [--baseline FILE]
      vkCmdDraw per call through a pass-through layer on the vk-layer SDK against the same layer
      hand-written on the dispatch tables (tests/handwritten-layer), side by side in one process
      on our loader and the test driver: the ratio SDK / hand-written (target <= 1.05) and its
      noise floor (two copies of the hand-written layer); --baseline FILE: an earlier run's JSON
      (the SDK before a change), and the ratio of this SDK layer to that one's (target <= 1.05)
  bench startup [--khronos PATH] [--json FILE]
      fresh processes on the machine's drivers and on 8 test drivers (one with a device): the
      pre-instance probe, create, + enumerate, + properties; ours with the driver cache off, cold
      and warm against the system loader (and PATH): time, driver libraries mapped, GPU device
      files open, resident memory; medians of 11 processes, ratios to the system loader
  bench size [--khronos PATH]
      the release libvulkan.so stripped as the package ships it (target <= 1 MiB; with PATH, the
      ratio to that library stripped the same way), its sections, and its code and named data by
      crate, the loader's own by top-level module, and its largest functions (nm on the
      unstripped build)
  bench build-time
      release build times from clean: vk-generated alone, and libvulkan.so (loader + vk-generated)
  fuzz [--seconds N] [TARGET...]
      coverage-guided fuzzing (libFuzzer, stable Rust) of the loader's parsers, N seconds per target
      (default 60): driver_manifest, layer_activation (layer manifests, meta and override layers,
      the layer environment variables), elf_header (the ELF pre-check, library_path tokens); seeds
      in fuzz/corpus/, findings written to target/fuzz-artifacts/ fail the command
  khronos-suite --src DIR [--headers DIR] [--googletest DIR] [--build DIR] [--filter REGEX]
                [--loader PATH] [--jobs N] [--json FILE] [--compare FILE] [--valgrind | --asan] [--m32]
      the Khronos Vulkan-Loader's own tests (DIR: a checkout of it, kept outside the repository),
      built with cmake and ninja if needed, run one per process by ctest against our release
      libvulkan.so (or --loader PATH); prints passed / failed / crashed by test group and the
      tests that did not pass. Exit status 0 whatever the tests do.
      --headers DIR     Vulkan-Headers install prefix (first configure only)
      --googletest DIR  googletest v1.14.0 checkout (first configure only)
      --build DIR       build directory (default DIR/build-rust-loader-suite, -m32 with --m32)
      --filter REGEX    only the tests whose names match (ctest -R)
      --loader PATH     test this library instead, e.g. the system's libvulkan.so.1
      --jobs N          build and test jobs (default: the number of CPUs)
      --json FILE       also write the results as JSON
      --compare FILE    list the tests whose outcome changed since an earlier --json FILE
      --valgrind        each test under valgrind's memcheck (10 times the timeout): its memcheck
                        errors by kind, the tests with errors listed, logs in the build directory
      --asan            each test against an AddressSanitizer build of the library (ours built
                        as cargo xtask asan builds it, unless --loader), GCC's libasan preloaded:
                        its reports by kind, the tests with reports listed
      --m32             the suite built as 32-bit programs (g++-N-multilib; build directory
                        DIR/build-rust-loader-suite-m32) against our i686 release library
  asan [--target-dir DIR]
      AddressSanitizer: cargo +nightly builds the loader, the test driver and layers and the
      integration tests that drive the FFI paths with -Zsanitizer=address (into target/asan, or
      DIR) and runs them (those that need valgrind or the release build left out); fails on a report
  modules [--crate DIR] [--check] [--edges]
      which modules of a crate (DIR, default loader/src) name which others through `crate::`, `super::` and `self::` paths:
      the number of modules and edges, the circles (strongly connected components) among the
      top-level modules and inside each folder with a shortest cycle through the largest, and
      the ten modules with the largest fan-out
      --check  fail if any circle exists
      --edges  also list every edge (user -> used)
  safety-docs [DIR...]
      every `unsafe fn` (crate-private, extern \"system\", in impls and traits included) of the
      shipped crates' sources (or of DIR...) without a `# Safety` section in its documentation,
      which clippy::missing_safety_doc checks only for public functions; fails if there is one
  unsafe-count [--crate DIR] [--files]
      where a crate's (DIR, default loader/src) `unsafe` is, per top-level module (per file with
      --files), test modules left out: blocks outside and inside `extern \"system\"` functions,
      `unsafe fn`s of other ABIs, `extern \"system\"` ones, `unsafe impl`s
";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let subcommand = args.next();
    let rest: Vec<String> = args.collect();
    let result = match subcommand.as_deref() {
        Some("regen") => regen::main(&rest),
        Some("run") => run::main(&rest),
        Some("test") => test::main(&rest),
        Some("test-i686") => cross::i686(&rest),
        Some("test-aarch64") => cross::aarch64(&rest),
        Some("install") => install::main(&rest),
        Some("package") => package::main(&rest),
        Some("package-install-test") => package_install_test::main(&rest),
        Some("bench") => bench::main(&rest),
        Some("khronos-suite") => khronos_suite::main(&rest),
        Some("asan") => asan::main(&rest),
        Some("fuzz") => fuzz::main(&rest),
        Some("modules") => modules::main(&rest),
        Some("safety-docs") => safety_docs::main(&rest),
        Some("unsafe-count") => unsafe_count::main(&rest),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Some(other) => Err(format!("unknown subcommand `{other}`\n\n{USAGE}")),
        None => {
            eprint!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {}", message.trim_end());
            ExitCode::FAILURE
        }
    }
}

/// The repository root: the parent of this crate's directory.
fn repo_root() -> PathBuf {
    let xtask_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask_dir
        .parent()
        .expect("xtask/ has a parent directory")
        .to_path_buf()
}

/// `1.4.342`: the Vulkan version of the vendored registry, from the generated constants.
fn registry_version(root: &std::path::Path) -> Result<String, String> {
    let reg = generator::load_registry(&root.join("registry"))?;
    Ok(format!("{}.{}.{}", reg.header_api.0, reg.header_api.1, reg.header_version))
}
