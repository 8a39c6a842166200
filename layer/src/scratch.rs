//! The copies one call of a wrapping layer makes on the way down ([`Scratch`]): the structures,
//! arrays and chain nodes whose handles the walk unwraps, alive until the entry point returns.
//!
//! They are plain values (`Copy`, no destructor) bumped into 8-byte words of a chunk that never
//! moves, so that a copy's address holds while later copies are made; a chunk of the usual size is
//! handed back to the thread when the call ends and reused by its next call, so a call whose copies
//! fit makes no allocation at all (`vkQueueSubmit` with its submit infos and command buffers, say).
//! A call made from inside another (a hook calling down another command) finds no spare chunk and
//! takes its own.

use std::cell::Cell;
use std::mem::{align_of, size_of};

use crate::unwrap::Refused;

/// The words of a chunk: 2 KiB, some thirty submit infos.
const CHUNK_WORDS: usize = 256;

thread_local! {
    /// The chunk the thread's last call handed back, empty, for its next one.
    static SPARE: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// The copies one call makes, and the first handle the layer did not know that went down as it
/// was (a member the command may ignore: [`lenient`](crate::unwrap::lenient)), for the report.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The chunk being filled: `len` words used of a capacity it never grows past.
    chunk: Vec<u64>,
    /// Chunks filled before it, kept until the call ends.
    full: Vec<Vec<u64>>,
    pub(crate) passed_unknown: Option<Refused>,
}

impl Scratch {
    pub(crate) const fn new() -> Self {
        Scratch {
            chunk: Vec::new(),
            full: Vec::new(),
            passed_unknown: None,
        }
    }

    /// `words` zeroed words that stay where they are until the call ends.
    fn words(&mut self, words: usize) -> *mut u64 {
        if self.chunk.capacity() == 0 {
            // None while the thread's locals are being destroyed: a fresh chunk then.
            self.chunk = SPARE.try_with(Cell::take).unwrap_or_default();
        }
        if self.chunk.capacity() - self.chunk.len() < words {
            let fresh = Vec::with_capacity(words.max(CHUNK_WORDS));
            let filled = std::mem::replace(&mut self.chunk, fresh);
            if filled.capacity() != 0 {
                self.full.push(filled);
            }
        }
        let start = self.chunk.len();
        // Within the capacity: the chunk's buffer does not move, nor do the copies already in it.
        self.chunk.resize(start + words, 0);
        // SAFETY: `start + words` words are initialized; the pointer is to the first new one.
        unsafe { self.chunk.as_mut_ptr().add(start) }
    }

    /// A copy of `given`, alive until the call ends, for the walk to change.
    pub(crate) fn copy_of<T: Copy>(&mut self, given: &[T]) -> *mut T {
        const { assert!(align_of::<T>() <= align_of::<u64>()) };
        let p = self.words(size_of_val(given).div_ceil(8)) as *mut T;
        // SAFETY: `p` is aligned for `T` (the assertion) and has room for `given.len()` of them,
        // in words of its own that `given` does not overlap.
        unsafe { std::ptr::copy_nonoverlapping(given.as_ptr(), p, given.len()) };
        p
    }

    /// A copy of the `bytes` bytes at `src`, 8-byte aligned, alive until the call ends.
    ///
    /// # Safety
    /// `src` is readable for `bytes` bytes.
    pub(crate) unsafe fn copy_bytes(&mut self, src: *const u8, bytes: usize) -> *mut u8 {
        let p = self.words(bytes.div_ceil(8)) as *mut u8;
        // SAFETY: `src` is readable for `bytes` (the contract); `p` has room for them in words of
        // its own.
        unsafe { std::ptr::copy_nonoverlapping(src, p, bytes) };
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let mut chunk = std::mem::take(&mut self.chunk);
        if chunk.capacity() == CHUNK_WORDS {
            chunk.clear();
            // Dropped instead while the thread's locals are being destroyed.
            let _ = SPARE.try_with(|spare| spare.set(chunk));
        }
    }
}

const _: () = assert!(size_of::<u64>() == 8);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_stay_where_they_are_while_more_are_made_and_the_chunk_is_reused() {
        let mut scratch = Scratch::new();
        let first = scratch.copy_of(&[7u32, 8, 9]);
        // Past one chunk: the first copy stays put.
        let big = scratch.copy_of(&[1u64; CHUNK_WORDS]);
        let small = scratch.copy_of(&[5u16]);
        // SAFETY: the copies live until `scratch` is dropped.
        unsafe {
            assert_eq!(std::slice::from_raw_parts(first, 3), &[7, 8, 9]);
            assert_eq!(
                std::slice::from_raw_parts(big, CHUNK_WORDS),
                &[1; CHUNK_WORDS]
            );
            assert_eq!(*small, 5);
        }
        assert_eq!((first as usize % 8, small as usize % 8), (0, 0));
        drop(scratch);
        let mut again = Scratch::new();
        let reused = again.copy_of(&[1u8]);
        assert_eq!(
            reused as usize, small as usize,
            "the chunk the last call ended with"
        );
    }
}
