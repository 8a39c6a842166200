//! The layer authors' guide's example layer (this package) run over the test driver through our
//! loader with the layer-author harness; and the guide's code block (docs/layer-authors.md) is
//! this package's code, so the example there compiles and runs.

use std::path::Path;

use vk_layer::vk::types::*;
use vk_layer_harness::{built_library, App, Harness};

vk_layer_harness::child_entry!(five_more_draws_submitted);

/// The application's own calls: the command buffer recorded again with five draws, submitted.
fn five_more_draws_submitted(app: &App<'_>) {
    // SAFETY: each command as its own PFN type, called on the run's live device, queue and
    // command buffer (ended, its submit done: it may be recorded again).
    unsafe {
        let begin: PFN_vkBeginCommandBuffer = app.device_command(c"vkBeginCommandBuffer");
        let draw: PFN_vkCmdDraw = app.device_command(c"vkCmdDraw");
        let end: PFN_vkEndCommandBuffer = app.device_command(c"vkEndCommandBuffer");
        let submit: PFN_vkQueueSubmit = app.device_command(c"vkQueueSubmit");
        begin.unwrap()(app.command_buffer, &VkCommandBufferBeginInfo::default());
        for _ in 0..5 {
            draw.unwrap()(app.command_buffer, 3, 1, 0, 0);
        }
        end.unwrap()(app.command_buffer);
        let info = VkSubmitInfo {
            commandBufferCount: 1,
            pCommandBuffers: &app.command_buffer,
            ..Default::default()
        };
        let result = submit.unwrap()(app.queue, 1, &info, VkFence::NULL);
        println!("own submit {result:?}");
    }
}

/// Not listed in `child_entry!`.
fn unlisted(_: &App<'_>) {}

fn manifest() -> vk_layer::Manifest<'static> {
    vk_layer::Manifest {
        name: "VK_LAYER_TEST_sdk_draw_count",
        api_version: vk_layer::vk::make_api_version(0, 1, 4, 0),
        implementation_version: 1,
        description: "counts draws",
        ..vk_layer::Manifest::default()
    }
}

/// A run in `CARGO_TARGET_TMPDIR/<name>` with this package's layer installed.
fn with_the_layer(name: &str) -> Harness {
    Harness::new(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name))
        .layer(&manifest(), &built_library("libVkLayer_sdk_draw_count.so"))
}

/// The run succeeded to its end.
fn assert_done(run: &vk_layer_harness::Run) {
    assert!(run.success && run.did("done"), "{}\n{}", run.stdout, run.stderr);
}

#[test]
fn counts_the_draws_of_a_device() {
    let run = with_the_layer("harness-sdk-draw-count").device(3).run();
    assert_done(&run);
    assert!(
        run.did("device VK_SUCCESS") && run.did("draws 3"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.lines().any(|l| l == "SDK_DRAW_COUNT 3"),
        "{}",
        run.stdout
    );
}

#[test]
fn submits_reach_the_driver_through_the_layer() {
    let run = with_the_layer("harness-sdk-submits")
        .device(3)
        .submits(2)
        .run();
    assert_done(&run);
    let submitted = run
        .stdout
        .lines()
        .filter(|l| *l == "HARNESS submit VK_SUCCESS")
        .count();
    assert_eq!(submitted, 2, "{}", run.stdout);
    assert_eq!(run.submitted(), Some((2, 6)), "{}", run.stdout);
}

#[test]
fn the_applications_own_calls_go_through_the_layer() {
    let run = with_the_layer("harness-sdk-calls")
        .device(3)
        .calls(five_more_draws_submitted)
        .run();
    assert_done(&run);
    assert!(
        run.stdout.lines().any(|l| l == "own submit VK_SUCCESS"),
        "{}",
        run.stdout
    );
    // The layer counted the run's draws and the function's; the driver was given the function's.
    assert!(
        run.stdout.lines().any(|l| l == "SDK_DRAW_COUNT 8"),
        "{}",
        run.stdout
    );
    assert_eq!(run.submitted(), Some((1, 5)), "{}", run.stdout);
}

#[test]
fn calls_not_listed_in_child_entry_fail_the_run_saying_so() {
    let run = with_the_layer("harness-sdk-unlisted").calls(unlisted).run();
    assert!(!run.success && !run.did("done"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("unlisted is not listed in this test file's child_entry!"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn without_a_device_nothing_is_counted() {
    let run = with_the_layer("harness-sdk-no-device").run();
    assert!(
        run.did("instance VK_SUCCESS") && run.did("done"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stdout.contains("SDK_DRAW_COUNT"), "{}", run.stdout);
}

/// docs/layer-authors.md's "A complete layer" block is this package's `src/lib.rs` from its first
/// `use`.
#[test]
fn the_readme_example_is_this_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("docs/layer-authors.md")).unwrap();
    let after = readme
        .split("A complete layer, `tests/sdk-draw-count-layer`:")
        .nth(1)
        .expect("docs/layer-authors.md's example");
    let block = after
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its code block");
    let source =
        std::fs::read_to_string(root.join("tests/sdk-draw-count-layer/src/lib.rs")).unwrap();
    let code = &source[source.find("use ").expect("a use line")..];
    assert_eq!(
        block, code,
        "docs/layer-authors.md's example and tests/sdk-draw-count-layer/src/lib.rs differ"
    );
}

/// The loader a run goes through is the one chosen and the one reported, ours or the system's
/// (the Khronos loader, Debian 12's 1.3.239 where that is installed, which ignores
/// `VK_IMPLICIT_LAYER_PATH`): in both, no implicit layer of the host's enters the run, and the
/// messenger hears the loaders' own information but no warning or error.
#[test]
fn the_loader_is_chosen_and_the_hosts_implicit_layers_stay_out() {
    let ours = vk_layer_harness::loader_library();
    for (name, loader) in [("ours", ours.as_str()), ("system", "libvulkan.so.1")] {
        let run = Harness::new(format!(
            "{}/harness-sdk-loader-{name}",
            env!("CARGO_TARGET_TMPDIR")
        ))
        .loader(loader)
        .layer(&manifest(), &built_library("libVkLayer_sdk_draw_count.so"))
        .messenger()
        .env("VK_LOADER_DEBUG", "layer")
        .device(2)
        .run();
        assert_eq!(run.loader, loader);
        assert!(
            run.success && run.did("draws 2"),
            "{name}:\n{}\n{}",
            run.stdout,
            run.stderr
        );
        let inserted: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("Insert instance layer") || l.contains("Insert device layer"))
            .collect();
        assert!(
            !inserted.is_empty()
                && inserted
                    .iter()
                    .all(|l| l.contains("\"VK_LAYER_TEST_sdk_draw_count\"")),
            "{name}: {inserted:#?}"
        );
        // The messenger hears every severity: the loaders' information, but nothing worse.
        let messages = run.messages();
        assert!(
            messages
                .iter()
                .all(|m| m.starts_with("info ") || m.starts_with("verbose ")),
            "{name}: {messages:#?}"
        );
    }
}
