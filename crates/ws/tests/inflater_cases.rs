//! The inflater fuzz target's checks on stable (crates/ws/fuzz/src/inflater.rs), with its
//! counting allocator installed so the memory bound is checked: generated inputs (bombs of
//! repeated data under every limit, compressed data cut into frames and spoiled, garbage),
//! then every committed seed.

#[path = "../fuzz/src/inflater.rs"]
#[allow(dead_code)]
mod inflater;

#[global_allocator]
static ALLOCATOR: inflater::Counting = inflater::Counting;

#[path = "support/stable_fuzz.rs"]
mod stable_fuzz;
use stable_fuzz::{replay_seeds, XorShift};

#[test]
fn generated_inputs_inflate_within_the_limit_and_the_memory_bound() {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    for case in 0..400 {
        let selector = rng.next() as u8;
        let k = (rng.next() % 8) as u8;
        let mut input = vec![selector, k];
        input.extend((0..k).map(|_| rng.next() as u8));
        let len = [0usize, 1, 10, 300, 3000][(rng.next() % 5) as usize];
        match rng.next() % 3 {
            0 => input.extend((0..len).map(|_| rng.next() as u8)),
            1 => input.extend((0..len).map(|i| b"abcab"[i % 5])),
            _ => input.extend(std::iter::repeat(0u8).take(len)),
        }
        let outcome = std::panic::catch_unwind(|| inflater::check(&input));
        assert!(
            outcome.is_ok(),
            "case {case} failed; input {:?}",
            &input[..input.len().min(64)]
        );
    }
}

#[test]
fn committed_seeds_pass_the_checks() {
    replay_seeds("inflater", inflater::check);
}
