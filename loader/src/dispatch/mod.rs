//! The instance chain's end and what dispatch needs beyond the generated tables: the loader's
//! terminators (messengers, object naming, emulation for 1.0 drivers, the terminator table),
//! commands the registry does not know (`unknown`), and command-name checks.

pub mod debug_objects;
pub mod emulation;
pub mod messengers;
pub mod names;
pub mod terminators;
pub mod unknown;
