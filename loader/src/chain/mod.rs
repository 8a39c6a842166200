//! Carrying the decisions out: the drivers' instances (`drivers`), physical devices in the
//! loader's order (`physical_devices`) and as the id filters leave them (`filtered_devices`), devices (`device`, with a device group's handles mapped in copies by `given`), the instance and device chains through
//! layers (`instance_layers`, `device_layers`), the pre-instance chains and layer extensions.

pub mod device;
pub mod device_layers;
pub mod drivers;
pub mod filtered_devices;
pub mod instance_layers;
pub mod layer_extensions;
pub mod physical_devices;
pub mod pre_instance;
