//! Maps keyed by the hub's own integer ids (channels, contexts, promises): looked up for every
//! op and record, so they hash with one multiply instead of SipHash. The ids are made by this
//! process (counters), not chosen by a peer, so a flooding-resistant hash buys nothing here.
//! (The binding crate has no Rust test target, as it links against node; the maps are
//! exercised by every channel spec of the ava suite.)

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
