//! Opening libraries and negotiating with them: drivers from their manifests (`driver`) or handed
//! over by the application (`direct`), and layers (`layer`, their pre-instance chains:
//! `pre_instance`, and an instance's chain through them: `instance_chain`).

pub mod calls;
pub mod direct;
pub mod driver;
pub mod fixed_queries;
pub mod instance;
pub mod instance_chain;
pub mod layer;
pub mod pre_instance;
