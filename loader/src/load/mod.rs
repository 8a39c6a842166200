//! Opening libraries and negotiating with them: drivers from their manifests (`driver`) or handed
//! over by the application (`direct`), and layers (`layer`, their pre-instance chains:
//! `pre_instance`, an instance's chain through them: `instance_chain`, and a device's:
//! `device_chain`).

pub mod calls;
pub mod device_chain;
pub mod direct;
pub mod driver;
pub mod fixed_queries;
pub mod instance;
pub mod instance_chain;
pub mod layer;
pub mod pre_instance;
