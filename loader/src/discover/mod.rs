//! Where the manifests are: the search paths and environment overrides for driver and layer
//! manifests (`search`), and the layers on this system (`layers`).

pub mod layers;
pub mod search;

/// Whether what an earlier API call found may be reused (while the files and environment it was
/// found from are unchanged: `platform::watch`): not while anyone reads the loader's messages or
/// records a plan, which are given for every call.
pub(crate) fn reusable() -> bool {
    !crate::debug::log::anything_wanted() && !crate::plan::recording()
}
