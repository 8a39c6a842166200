//! Where the manifests are: the search paths and environment overrides for driver and layer
//! manifests (`search`), and the layers on this system (`layers`).

pub mod layers;
pub mod search;

