//! Opening libraries and negotiating with them: drivers from their manifests (`driver`) or handed
//! over by the application (`direct`), and layers (`layer`, and their pre-instance chains:
//! `pre_instance`).

pub mod calls;
pub mod direct;
pub mod driver;
pub mod fixed_queries;
pub mod instance;
pub mod layer;
pub mod pre_instance;
