//! The test layer over the test driver through our loader, with the layer-author harness: a
//! message the layer reports while the instance is created reaches the application's messenger
//! chained at `vkCreateInstance`.

use vk_layer_harness::{built_library, Harness};

vk_layer_harness::child_entry!();

#[test]
fn a_report_reaches_the_messenger_chained_at_instance_creation() {
    let harness = Harness::new(concat!(
        env!("CARGO_TARGET_TMPDIR"),
        "/harness-test-layer-report"
    ));
    let installed = harness.dir().join("test-layer");
    std::fs::create_dir_all(&installed).unwrap();
    let layer = vk_test_layer::install::install(
        &built_library("libvk_test_layer.so"),
        &installed,
        "report",
        "",
    )
    .unwrap();
    let run = harness
        .installed(&installed, &layer.name)
        .messenger()
        .env("VK_TEST_LAYER_REPORT", "1")
        .run();
    assert!(
        run.did("instance VK_SUCCESS") && run.did("done"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.messages()
            .contains(&"warning TEST-LAYER-report: the test layer reports"),
        "{:?}\n{}",
        run.messages(),
        run.stderr
    );
}

#[test]
fn no_report_without_the_flag() {
    let harness = Harness::new(concat!(
        env!("CARGO_TARGET_TMPDIR"),
        "/harness-test-layer-quiet"
    ));
    let installed = harness.dir().join("test-layer");
    std::fs::create_dir_all(&installed).unwrap();
    let layer = vk_test_layer::install::install(
        &built_library("libvk_test_layer.so"),
        &installed,
        "quiet",
        "",
    )
    .unwrap();
    let run = harness.installed(&installed, &layer.name).messenger().run();
    assert!(run.did("done"), "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.messages()
            .iter()
            .any(|m| m.contains("TEST-LAYER-report")),
        "{:?}",
        run.messages()
    );
}
