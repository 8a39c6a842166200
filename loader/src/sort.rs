//! Sorting the loader's short lists (directory entries, environment variables, configuration
//! files, the driver cache's records) in little code. std's `sort_unstable` compiles some 5 KB for
//! each element type (a pattern-defeating quicksort, small-sort networks and a heapsort fallback);
//! this heapsort is a few hundred bytes per type, and these lists hold tens of items, rarely
//! hundreds, sorted once per call at most.

/// Sorts `v` ascending: O(n log n) comparisons, no allocation. Not stable: only for items whose
/// equal ones cannot be told apart (the whole value is the key), so that any order of them is the
/// stable one.
pub fn sort<T: Ord>(v: &mut [T]) {
    for node in (0..v.len() / 2).rev() {
        sift_down(v, node);
    }
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift_down(&mut v[..end], 0);
    }
}

/// Moves `v[node]` down its max-heap until neither child is greater.
fn sift_down<T: Ord>(v: &mut [T], mut node: usize) {
    loop {
        let mut child = 2 * node + 1;
        if child >= v.len() {
            return;
        }
        if child + 1 < v.len() && v[child] < v[child + 1] {
            child += 1;
        }
        if v[node] >= v[child] {
            return;
        }
        v.swap(node, child);
        node = child;
    }
}

#[cfg(test)]
mod tests {
    /// Every arrangement of up to 7 items with repeats, and longer runs: std's order.
    #[test]
    fn sorts_as_std_does() {
        for len in 0..=7u32 {
            for seed in 0..4u32.pow(len) {
                let mut v: Vec<u32> = (0..len).map(|i| seed / 4u32.pow(i) % 4).collect();
                let mut expected = v.clone();
                expected.sort();
                super::sort(&mut v);
                assert_eq!(v, expected);
            }
        }
        let mut names: Vec<String> = (0..500u32).map(|i| format!("{}", i.wrapping_mul(2_654_435_761) % 1000)).collect();
        let mut expected = names.clone();
        expected.sort();
        super::sort(&mut names);
        assert_eq!(names, expected);
    }
}
