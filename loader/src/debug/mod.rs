//! What the loader says: `VK_LOADER_DEBUG` lines on stderr (`log`) and the application's debug
//! messengers that hear the same messages (`messengers`), at the levels of `level`.

pub mod level;
#[macro_use]
pub mod log;
pub mod messengers;
