//! What the fuzz targets' stable twins (fuzz_cases.rs, inflater_cases.rs) share: a seeded
//! generator for their inputs and the replay of a target's committed seeds.
#![allow(dead_code)] // each twin uses its own part

/// A xorshift64 generator: deterministic inputs from a seed, no dependency.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Runs `check` on every committed seed of `target` (crates/ws/fuzz/seeds/<target>), and
/// asserts there is at least one.
pub fn replay_seeds(target: &str, check: impl Fn(&[u8])) {
    let dir = format!("{}/fuzz/seeds/{target}", env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("the seeds directory") {
        check(&std::fs::read(entry.unwrap().path()).unwrap());
        seen += 1;
    }
    assert!(seen > 0, "seeds are committed");
}
