//! The fuzz target's check (tests/support/split_check.rs) on a fixed set of seeded random
//! streams, so `cargo test` covers it on stable: one read, random pieces and byte-by-byte
//! feeding decode to the same values and error, with and without `decode_command` first,
//! and decoded values survive a round trip.

use crate::split_check;

use split_check::{check, config_for, decode_in_pieces, decode_with, random_stream, Mode, Rng};

const CASES: u64 = 1500;

#[test]
fn random_streams_decode_the_same_in_one_read_in_random_pieces_and_byte_by_byte() {
    let mut rng = Rng::new(0x5eed_2024);
    let (mut with_values, mut with_errors, mut with_frames) = (0, 0, 0);
    for case in 0..CASES {
        let config = config_for(rng.below(8) as u8);
        let resp3 = rng.below(4) != 0;
        let input = random_stream(&mut rng, resp3);
        check(&config, &input, case);
        let outcome = decode_in_pieces(&config, &input, &mut std::iter::empty());
        with_values += usize::from(!outcome.values.is_empty());
        with_errors += usize::from(outcome.error.is_some());
        let frames = decode_with(
            Mode::CommandFrames,
            &config,
            &input,
            &mut std::iter::empty(),
        );
        with_frames += usize::from(frames.command_frames > 0);
    }
    // The generator reaches both outcomes often, so the comparison means something.
    assert!(with_values > 500, "{with_values} cases decoded values");
    assert!(with_errors > 300, "{with_errors} cases ended in an error");
    assert!(
        with_frames > 500,
        "{with_frames} cases took commands as frames"
    );
}
