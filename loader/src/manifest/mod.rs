//! Parsing and validating what the loader reads from files: driver manifests, layer manifests and
//! the loader settings file. Every rejection names the file and the field.

pub mod driver;
pub mod json;
pub mod layer;
pub mod settings;
