//! `vk-loader`: the loader's logic on the command line.
//!
//! `vk-loader explain [--json] [--no-devices] [--as PATH]` prints what the loader decides in this environment
//! and why: every driver and layer manifest with its decision and reason, the layer order, and the
//! physical devices in the order applications see them (docs/user-guide/explaining-and-logging.md).
//! The same document the library writes for `VK_LOADER_EXPLAIN`.
//!
//! `vk-loader cache [--clear]` lists the driver cache's entries (docs/user-guide/driver-cache.md), or
//! removes the file.
//!
//! `vk-loader variables [--markdown]` lists the environment variables the loader reads (and with
//! `--markdown` the settings file's keys), from their declarations in `loader/src/reference`;
//! `vk-loader --man` prints the manual page made from the same declarations.

use std::process::ExitCode;

use serde_json::Value;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (command, options) = match args.split_first() {
        Some((command, options)) => (command.as_str(), options),
        None => return usage_error("no command given"),
    };
    if matches!(command, "-h" | "--help" | "help") {
        println!("{}\n{}", vulkan::reference::usage(), vulkan::reference::help());
        return ExitCode::SUCCESS;
    }
    if command == "--man" {
        print!("{}", vulkan::reference::man_page());
        return ExitCode::SUCCESS;
    }
    if command == "variables" {
        return match options {
            [] => {
                print!("{}", vulkan::reference::help());
                ExitCode::SUCCESS
            }
            [flag] if flag == "--markdown" => {
                print!("{}", vulkan::reference::markdown());
                ExitCode::SUCCESS
            }
            [other, ..] => usage_error(&format!("unknown option `{other}`")),
        };
    }
    if command == "cache" {
        return cache(options);
    }
    if command != "explain" {
        return usage_error(&format!("unknown command `{command}`"));
    }
    let (mut json, mut devices) = (false, true);
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match option.as_str() {
            "--json" => json = true,
            "--no-devices" => devices = false,
            "--as" => {
                let Some(path) = options.next() else { return usage_error("`--as` needs the path of an executable") };
                // SAFETY: on the main thread, which has started no other, before the loader's
                // first use.
                if let Err(why) = unsafe { vulkan::api::explain::explain_as(path) } {
                    eprintln!("vk-loader: --as {why}");
                    return ExitCode::from(2);
                }
            }
            other => return usage_error(&format!("unknown option `{other}`")),
        }
    }
    let text = vulkan::api::explain::explain(devices);
    let document: Value = match serde_json::from_str(&text) {
        Ok(document) => document,
        Err(e) => {
            eprintln!("vk-loader: the library wrote a document that is not JSON ({e}):\n{text}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&document).expect("a JSON value prints"));
    } else {
        print!("{}", table(&document));
    }
    ExitCode::SUCCESS
}

fn cache(options: &[String]) -> ExitCode {
    match options {
        [] => {
            print!("{}", vulkan::api::cache::report());
            ExitCode::SUCCESS
        }
        [clear] if clear == "--clear" => match vulkan::api::cache::clear() {
            Ok(done) => {
                println!("{done}");
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("vk-loader: {why}");
                ExitCode::FAILURE
            }
        },
        [other, ..] => usage_error(&format!("unknown option `{other}`")),
    }
}

fn usage_error(why: &str) -> ExitCode {
    eprintln!("vk-loader: {why}\n{}", vulkan::reference::usage());
    ExitCode::from(2)
}

/// The document as a readable report: one block per section, a line per entry with its decision,
/// the reason indented below.
fn table(doc: &Value) -> String {
    let text = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| if v.is_null() { "-".into() } else { v.to_string() });
    let mut out = String::new();
    let context = &doc["context"];
    out += &format!("vk-loader {} (Vulkan {})\n", text(&context["loader"]), text(&context["vulkan_header"]));
    match doc["settings_file_unused"].as_str() {
        Some(unused) if doc["settings_file"].is_null() => out += &format!("settings file: - ({unused})\n"),
        _ => out += &format!("settings file: {}\n", text(&doc["settings_file"])),
    }
    if let Some(executable) = context["executable"].as_str() {
        out += &format!("executable: {executable}\n");
    }
    if let Some(result) = doc["result"].as_str() {
        out += &format!("vkCreateInstance: {result}\n");
    }
    if let Some(env) = context["environment"].as_object().filter(|e| !e.is_empty()) {
        out += "\nENVIRONMENT\n";
        for (name, value) in env {
            out += &format!("  {name}={}\n", text(value));
        }
    }
    let section = |out: &mut String, title: &str, entries: &Value, line: &dyn Fn(&Value) -> String| {
        let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
        *out += &format!("\n{title} ({})\n", entries.len());
        for entry in entries {
            let position = entry["position"].as_u64().map_or("  ".to_string(), |p| format!("{p:>2}"));
            *out += &format!("{position} {:<10} {}\n", text(&entry["decision"]), line(entry));
            *out += &format!("              {}\n", text(&entry["reason"]));
        }
    };
    section(&mut out, "DRIVERS", &doc["drivers"], &|d| match d["library"].as_str() {
        Some(library) => format!("{} ({library})", text(&d["manifest"])),
        None => text(&d["manifest"]),
    });
    section(&mut out, "LAYERS, by position in the chain (0 nearest the application)", &doc["layers"], &|l| {
        match text(&l["manifest"]) {
            // A name that matches no layer has no manifest.
            manifest if manifest.is_empty() => format!("{} (no such layer)", text(&l["name"])),
            manifest => format!("{} ({}, {manifest})", text(&l["name"]), text(&l["type"])),
        }
    });
    section(&mut out, "PHYSICAL DEVICES, in the order applications see them", &doc["devices"], &|d| {
        format!(
            "{} ({}, {}:{}, Vulkan {}, {})",
            text(&d["name"]),
            text(&d["type"]),
            text(&d["vendor_id"]),
            text(&d["device_id"]),
            text(&d["api_version"]),
            text(&d["driver"])
        )
    });
    let records = doc["cache_records"].as_array().map(Vec::as_slice).unwrap_or_default();
    out += &format!("\nDRIVER CACHE RECORDS of {} ({})\n", text(&context["executable"]), records.len());
    for r in records {
        let answers = if r["device_answers"] == true { ", their answers recorded" } else { "" };
        let devices = match r["physical_devices"].as_u64() {
            Some(1) => "1 physical device".to_string(),
            n => format!("{} physical devices", n.unwrap_or(0)),
        };
        out += &format!(
            "   {} for application {}: {devices}{answers}; recorded {} ago\n",
            text(&r["manifest"]),
            text(&r["application"]),
            text(&r["recorded"])
        );
    }
    out
}
