//! Maps keyed by the hub's own integer ids (channels, contexts, promises): looked up for every
//! op and record, so they hash with one multiply instead of SipHash. The ids are made by this
//! process (counters), not chosen by a peer, so a flooding-resistant hash buys nothing here.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by a hub id.
pub type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// Hashes one `u64` id: a xor-shift and an odd multiply spread it over the low bits (bucket
/// index) and the high bits (control byte) alike.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys other than u64; fold them in byte by byte.
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, id: u64) {
        let x = (id ^ (id >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ids_land_in_distinct_low_bits() {
        let mut seen = std::collections::HashSet::new();
        for id in 0..1024u64 {
            let mut h = IdHasher::default();
            h.write_u64(id);
            seen.insert(h.finish() & 1023);
        }
        // A bijection would give 1024; anything close means no clustering.
        assert!(seen.len() > 600, "only {} distinct buckets", seen.len());
    }

    #[test]
    fn a_map_finds_what_it_holds() {
        let mut m: IdMap<u64> = IdMap::default();
        for id in 1..=10_000u64 {
            m.insert(id, id * 2);
        }
        assert!((1..=10_000u64).all(|id| m.get(&id) == Some(&(id * 2))));
        assert!(!m.contains_key(&0));
    }
}
