//! Decoding an input in one read, in pseudo-random pieces and byte by byte gives the same
//! values and the same error; nothing panics; decoded values survive an encode round trip.
//!
//! Input layout: byte 0 picks the configuration (tight limits, RESP2 only, no inline
//! commands), byte 1 seeds the split points, the rest is the stream.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/split_check.rs"]
mod split_check;

fuzz_target!(|data: &[u8]| {
    let [selector, seed, stream @ ..] = data else {
        return;
    };
    let config = split_check::config_for(*selector);
    split_check::check(&config, stream, u64::from(*seed));
});
