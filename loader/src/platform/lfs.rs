//! libc's file functions under the names a C program built with `_FILE_OFFSET_BITS=64` calls,
//! as the Khronos loader is built: the plain ones where the word is 64 bits (there they are the
//! large-file ones), the `*64` ones on 32-bit targets. There the plain `stat` fails with
//! `EOVERFLOW` on a file whose inode number or size needs more than 32 bits (XFS, btrfs and
//! overlay file systems hand out such inodes), and a program that interposes the file functions
//! (sandboxes, the Khronos loader's test suite) interposes the ones C programs call:
//! `fopen64`, `readdir64`, `stat64`, not `fopen`.

#[cfg(target_pointer_width = "64")]
pub use libc::{fopen, fstat, readdir, stat, stat as Stat};

#[cfg(target_pointer_width = "32")]
pub use libc::{fopen64 as fopen, fstat64 as fstat, readdir64 as readdir, stat64 as stat, stat64 as Stat};
