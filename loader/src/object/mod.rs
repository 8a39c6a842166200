//! The loader's objects behind the handles it gives out: instances, physical devices, devices and
//! an instance's layer chain. Only their layout and what every stage needs of them are here.

pub mod device;
pub mod device_creation;
pub mod handed_out;
pub mod instance;
pub mod layers;
pub mod pending_instance;
pub mod surface;
