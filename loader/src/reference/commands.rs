//! The `vk-loader` tool's commands and options, declared once: `vk-loader --help`'s usage and the
//! manual page (`debian/vk-loader.1`, written by `cargo xtask regen`) are made from them.

/// One option of a command.
#[derive(Debug)]
pub struct Option {
    /// As typed, with its argument (`--as PATH`).
    pub flag: &'static str,
    pub what: &'static str,
}

/// One command of `vk-loader`.
#[derive(Debug)]
pub struct Command {
    pub name: &'static str,
    pub options: &'static [Option],
    /// One line, for `--help`.
    pub summary: &'static str,
    /// What it does, for the manual page.
    pub what: &'static str,
}

pub const EXPLAIN: Command = Command {
    name: "explain",
    options: &[
        Option { flag: "--json", what: "one JSON document (schema \"vk-loader-explain\", version 1) instead of a table" },
        Option { flag: "--no-devices", what: "create no instance: drivers are loaded and layers chosen, no device is listed" },
        Option {
            flag: "--as PATH",
            what: "decide as the executable PATH would where the executable decides (the settings file's app_keys, driconf and NVIDIA \
                   profiles) and list its driver cache records; nothing is recorded in its name",
        },
    ],
    summary: "what the Vulkan loader decides in this environment, and why",
    what: "reports what the Vulkan loader decides in this environment, and why: every driver and layer manifest it considered \
           with its decision and the reason (the environment variable and its value, the manifest field, the loader settings \
           file, the filter pattern, the library that cannot be opened), the layer order, the physical devices in the order \
           applications see them, whether a settings file exists and why no entry of it applies, and the driver cache's \
           records of the executable. It runs the loader's own logic in-process and creates one Vulkan instance. What \
           depends on an application's own VkApplicationInfo only the application shows: run it with VK_LOADER_EXPLAIN set.",
};

pub const CACHE: Command = Command {
    name: "cache",
    options: &[Option { flag: "--clear", what: "remove the driver cache file and the applications' records beside it, naming each file removed" }],
    summary: "the driver cache: each driver's record, its age, and whether it is current here",
    what: "lists the driver cache's entries: each driver's manifest, whether its record is current for this process (or \
           why not), its age, its library, what it answered, the physical devices recorded per application (named by its \
           executable and digest) and its key.",
};

pub const VARIABLES: Command = Command {
    name: "variables",
    options: &[Option { flag: "--markdown", what: "with their values and defaults, and the settings file's keys, as Markdown tables" }],
    summary: "every environment variable the loader reads (as below)",
    what: "lists every environment variable the loader reads and what it does.",
};

/// Every command, in the order `--help` lists them.
pub const ALL: &[&Command] = &[&EXPLAIN, &CACHE, &VARIABLES];

/// Where the documentation is installed (the `vk-loader` package's user guide).
pub const INSTALLED_GUIDE: &str = "/usr/share/doc/vk-loader";
