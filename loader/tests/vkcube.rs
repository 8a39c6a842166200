//! Real WSI: Khronos' `vkcube` (package vulkan-tools) renders through our library on Mesa's
//! lavapipe into an Xvfb window (xcb surface, swapchain, present). A screenshot taken while it
//! runs must show the textured cube in the middle of the window, and the process must have mapped
//! our library, not the system loader. vulkaninfo reports the same surfaces through both loaders.

mod common;

use common::xvfb::{on_path, Xvfb, HEIGHT, WIDTH};

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LAVAPIPE: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// `program` on `x`'s display with lavapipe as the only driver and no other Vulkan settings.
fn on_lavapipe(program: &Path, x: &Xvfb) -> Command {
    let mut cmd = Command::new(program);
    for (var, _) in std::env::vars() {
        if var.starts_with("VK_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("DISPLAY", &x.display).env("VK_DRIVER_FILES", LAVAPIPE).env_remove("WAYLAND_DISPLAY");
    cmd
}

/// The leading fields of Xlib's `XImage` (the rest is never read).
#[repr(C)]
struct XImage {
    width: c_int,
    height: c_int,
    xoffset: c_int,
    format: c_int,
    data: *mut u8,
    byte_order: c_int,
    bitmap_unit: c_int,
    bitmap_bit_order: c_int,
    bitmap_pad: c_int,
    depth: c_int,
    bytes_per_line: c_int,
    bits_per_pixel: c_int,
}

/// Screenshots of the root window through libX11 (a dependency of vkcube itself).
struct Screen {
    lib: libloading::Library,
    display: *mut c_void,
    root: c_ulong,
}

const Z_PIXMAP: c_int = 2;

impl Screen {
    fn open(name: &str) -> Screen {
        // SAFETY: libX11 has no initialisers with preconditions; each symbol is read as its Xlib
        // prototype; the display name is a C string and the display is checked non-NULL before use.
        unsafe {
            let lib = libloading::Library::new("libX11.so.6").expect("libX11.so.6 (package libx11-6)");
            let open: libloading::Symbol<unsafe extern "C" fn(*const c_char) -> *mut c_void> = lib.get(b"XOpenDisplay\0").unwrap();
            let name = std::ffi::CString::new(name).unwrap();
            let display = open(name.as_ptr());
            assert!(!display.is_null(), "XOpenDisplay({name:?}) failed");
            let root_of: libloading::Symbol<unsafe extern "C" fn(*mut c_void) -> c_ulong> = lib.get(b"XDefaultRootWindow\0").unwrap();
            let root = root_of(display);
            Screen { lib, display, root }
        }
    }

    /// The RGB pixels of a `w` x `h` rectangle at (`x`, `y`).
    fn grab(&self, x: i32, y: i32, w: u32, h: u32) -> Vec<[u8; 3]> {
        // SAFETY: each symbol is read as its Xlib prototype, and `display` is open. XGetImage
        // returned a `w` x `h` image (or NULL, checked) of 32-bit pixels (asserted), rows
        // `bytes_per_line` apart, so every byte read lies in its data; data and image are freed
        // once, after the last read.
        unsafe {
            type GetImage = unsafe extern "C" fn(*mut c_void, c_ulong, c_int, c_int, c_uint, c_uint, c_ulong, c_int) -> *mut XImage;
            let get: libloading::Symbol<GetImage> = self.lib.get(b"XGetImage\0").unwrap();
            let image = get(self.display, self.root, x, y, w, h, !0, Z_PIXMAP);
            let image = image.as_ref().expect("XGetImage");
            assert_eq!(image.bits_per_pixel, 32, "a 24-bit Xvfb screen has 32-bit pixels");
            let mut pixels = Vec::new();
            for row in 0..h as usize {
                for col in 0..w as usize {
                    let p = image.data.add(row * image.bytes_per_line as usize + col * 4);
                    pixels.push([*p.add(2), *p.add(1), *p]); // BGRX in memory (LSBFirst)
                }
            }
            let free: libloading::Symbol<unsafe extern "C" fn(*mut c_void) -> c_int> = self.lib.get(b"XFree\0").unwrap();
            free(image.data as *mut c_void);
            free(image as *const XImage as *mut c_void);
            pixels
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        // SAFETY: XCloseDisplay read as its prototype, on the display `open` opened, closed once.
        unsafe {
            if let Ok(close) = self.lib.get::<unsafe extern "C" fn(*mut c_void) -> c_int>(b"XCloseDisplay\0") {
                close(self.display);
            }
        }
    }
}

/// The distinct colours of a region, ignoring `background`.
fn colours_besides(pixels: &[[u8; 3]], background: [u8; 3]) -> usize {
    let mut seen: Vec<[u8; 3]> = pixels.iter().copied().filter(|p| *p != background).collect();
    seen.sort();
    seen.dedup();
    seen.len()
}

/// The shared objects a process has mapped.
fn mapped_libraries(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default()
}

/// What one run of vkcube showed: the most colours counted in the middle of its window, the
/// libraries it had mapped, and its standard error.
struct CubeRun {
    best: usize,
    maps: String,
    stderr: String,
}

/// Runs vkcube through our library on the stage's display until the cube shows (or a minute
/// passes), with `env` set; fails the test if vkcube fails.
fn run_vkcube(stage: &Stage, env: &[(&str, &Path)]) -> CubeRun {
    let mut cube = on_lavapipe(&stage.vkcube, &stage.x)
        .args(["--c", "20000", "--width", &WIDTH.to_string(), "--height", &HEIGHT.to_string()])
        .env("LD_LIBRARY_PATH", &stage.dir)
        .env("VK_LOADER_DEBUG", "driver")
        .envs(env.iter().map(|(k, v)| (k, v.as_os_str())))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The background: the root window outside vkcube's window is black (-br); inside it, vkcube
    // clears to a flat grey. The cube is the many-coloured part in the middle.
    let (side, cx, cy) = (120u32, (WIDTH / 2) as i32, (HEIGHT / 2) as i32);
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut best = 0;
    let mut maps = String::new();
    while Instant::now() < deadline && cube.try_wait().unwrap().is_none() {
        maps = mapped_libraries(cube.id());
        let middle = stage.screen.grab(cx - side as i32 / 2, cy - side as i32 / 2, side, side);
        best = best.max(colours_besides(&middle, [0, 0, 0]));
        if best >= 50 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let still_running = cube.try_wait().unwrap().is_none();
    if still_running {
        let _ = cube.kill();
    }
    let out = cube.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(still_running || out.status.success(), "vkcube failed: {:?}\n{stdout}\n{stderr}", out.status);
    assert!(best >= 50, "the middle of vkcube's window shows {best} colours besides black: no cube drawn\n{stdout}\n{stderr}");
    CubeRun { best, maps, stderr }
}

/// What a vkcube test runs in: vkcube, an Xvfb display with a way to take screenshots of it, and a
/// folder where `libvulkan.so.1` is our shipped library.
struct Stage {
    vkcube: std::path::PathBuf,
    // Before `x`: the connection closes before the server stops.
    screen: Screen,
    x: Xvfb,
    dir: std::path::PathBuf,
}

/// The stage for `test`, or `None` (the test skipped, saying why) without Xvfb or vkcube.
fn stage(test: &str) -> Option<Stage> {
    let (Some(_), Some(vkcube)) = (on_path("Xvfb"), on_path("vkcube")) else {
        eprintln!("SKIPPED: {test} needs Xvfb (package xvfb) and vkcube (package vulkan-tools)");
        return None;
    };
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let x = Xvfb::start();
    let dir = common::scratch(test);
    std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join("libvulkan.so.1")).unwrap();
    let screen = Screen::open(&x.display);
    Some(Stage { vkcube, screen, x, dir })
}

#[test]
fn vkcube_draws_the_cube_through_our_library_on_lavapipe() {
    let Some(stage) = stage("vkcube_draws_the_cube_through_our_library_on_lavapipe") else { return };
    let ours = std::fs::canonicalize(common::shipped_libvulkan()).unwrap();
    let run = run_vkcube(&stage, &[]);

    // Our library, not the system's, served it.
    let (maps, stderr) = (&run.maps, &run.stderr);
    assert!(maps.contains(&ours.display().to_string()), "vkcube did not map {}:\n{maps}", ours.display());
    assert!(!maps.contains("/usr/lib/x86_64-linux-gnu/libvulkan.so.1"), "the system loader was mapped too:\n{maps}");
    assert!(stderr.contains("[Vulkan Loader] DRIVER:") && stderr.contains("libvulkan_lvp.so, driver interface version"), "{stderr}");
    assert!(stderr.contains("Selected GPU 0: llvmpipe"), "{stderr}");
    eprintln!("the middle of the window showed {} colours besides black", run.best);
}

/// With a warm driver cache, lavapipe is left unloaded at `vkCreateInstance` (lazy drivers):
/// vkcube makes its xcb surface and picks its GPU before the driver is loaded, which happens at
/// the first query that needs it; the surface made earlier gets the driver's own then, and the
/// cube is drawn as on a cold cache.
#[test]
fn vkcube_draws_the_cube_on_a_warm_cache_with_lavapipe_loaded_late() {
    let Some(stage) = stage("vkcube_draws_the_cube_on_a_warm_cache_with_lavapipe_loaded_late") else { return };
    let cache = stage.dir.join("cache");
    // The first run records the driver; the second, its physical devices (a record is made for a
    // driver used again); the third may leave it unloaded. The first two end by themselves (a
    // process killed before it destroys its instance may not have written its records).
    for run in ["cold", "recording"] {
        let mut cmd = on_lavapipe(&stage.vkcube, &stage.x);
        cmd.args(["--c", "30"]).env("LD_LIBRARY_PATH", &stage.dir).env("XDG_CACHE_HOME", &cache);
        let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
        assert!(out.status.success(), "vkcube's {run} run failed: {:?}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    let warm = run_vkcube(&stage, &[("XDG_CACHE_HOME", &cache)]);
    let stderr = &warm.stderr;
    assert!(stderr.contains("lvp_icd.x86_64.json: not loaded: its 1 physical devices answered from the driver cache until first needed"), "{stderr}");
    assert!(stderr.contains("loaded at vkGetPhysicalDevice"), "the driver is loaded at a physical-device query vkcube makes:\n{stderr}");
    assert!(stderr.contains("Selected GPU 0: llvmpipe"), "{stderr}");
    eprintln!("warm: the middle of the window showed {} colours besides black", warm.best);
}

/// vulkaninfo's "Presentable Surfaces" section: everything between its heading and the next one.
fn presentable_surfaces(report: &str) -> String {
    let start = report.find("Presentable Surfaces:").unwrap_or(report.len());
    let rest = &report[start..];
    let end = rest.find("\nGroups:").or_else(|| rest.find("\nDevice Properties and Extensions:")).unwrap_or(rest.len());
    rest[..end].to_string()
}

/// vulkaninfo creates an xcb and an xlib surface for every GPU and reports its support, formats,
/// present modes and capabilities (the 2KHR queries included): through our library it must say
/// exactly what it says through the system's Khronos loader.
#[test]
fn vulkaninfo_presentable_surfaces_match_the_system_loader() {
    let (Some(_), Some(vulkaninfo)) = (on_path("Xvfb"), on_path("vulkaninfo")) else {
        eprintln!("SKIPPED: vulkaninfo_presentable_surfaces_match_the_system_loader needs Xvfb (package xvfb) and vulkaninfo (package vulkan-tools)");
        return;
    };
    assert!(Path::new(LAVAPIPE).exists(), "{LAVAPIPE} missing: install mesa-vulkan-drivers");
    let x = Xvfb::start();
    let dir = common::scratch("vulkaninfo-wsi");
    std::os::unix::fs::symlink(common::shipped_libvulkan(), dir.join("libvulkan.so.1")).unwrap();
    let run = |library_path: Option<&Path>| {
        let mut cmd = on_lavapipe(&vulkaninfo, &x);
        match library_path {
            Some(dir) => cmd.env("LD_LIBRARY_PATH", dir),
            None => cmd.env_remove("LD_LIBRARY_PATH"),
        };
        let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
        assert!(out.status.success(), "vulkaninfo failed: {}", String::from_utf8_lossy(&out.stderr));
        presentable_surfaces(&String::from_utf8_lossy(&out.stdout))
    };
    let ours = run(Some(&dir));
    let system = run(None);
    assert!(ours.contains("VK_KHR_xcb_surface") && ours.contains("VK_KHR_xlib_surface"), "{ours}");
    assert!(ours.contains("PRESENT_MODE_FIFO_KHR") && ours.contains("VkSurfaceCapabilitiesKHR"), "{ours}");
    assert_eq!(ours, system, "vulkaninfo's surfaces differ between our library and the system loader");
}

/// vkcube `--validate`: the Khronos validation layer (and Mesa's device-select implicit layer) in
/// our chain while it renders and presents 30 frames; no validation message, a clean exit.
#[test]
fn vkcube_with_the_validation_layer_through_our_library() {
    let validation = "/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json";
    let Some(stage) = stage("vkcube_with_the_validation_layer_through_our_library") else { return };
    assert!(Path::new(validation).exists(), "{validation} missing: install vulkan-validationlayers");
    let mut cmd = on_lavapipe(&stage.vkcube, &stage.x);
    cmd.args(["--c", "30", "--validate"]).env("LD_LIBRARY_PATH", &stage.dir).env("VK_LOADER_DEBUG", "layer");
    let out = common::output_within(&mut cmd, common::CHILD_WATCHDOG);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "vkcube --validate failed: {:?}\n{stdout}\n{stderr}", out.status);
    let chain: Vec<&str> = stderr.lines().filter(|l| l.contains("[Vulkan Loader] LAYER:") && l.contains(": VK_LAYER_")).collect();
    assert!(chain.iter().any(|l| l.contains("VK_LAYER_KHRONOS_validation") && l.contains("ppEnabledLayerNames")), "{stderr}");
    assert!(!stdout.contains("VUID") && !stderr.contains("VUID"), "validation reported:\n{stdout}\n{stderr}");
    assert!(stderr.contains("Selected GPU 0: llvmpipe") || stdout.contains("Selected GPU 0: llvmpipe"), "{stdout}\n{stderr}");
}
