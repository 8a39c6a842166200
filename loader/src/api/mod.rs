//! The hand-written entry points `lib.rs` exports: instance, physical-device and device commands,
//! `vkGet*ProcAddr`, and the explanation of the loader's decisions.

pub mod cache;
pub mod device;
pub mod explain;
pub mod gpa;
pub mod instance;
pub mod physical_device;
mod process;
