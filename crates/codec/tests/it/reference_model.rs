//! The fuzz targets' checks on stable, for a fixed set of generated inputs: each decoder,
//! fed a generated stream cut into generated reads, must yield exactly its reference model's
//! frames and errors read by read, keep no more than its limit buffered, and not grow the
//! heap beyond it (see crates/codec/fuzz/src/harness.rs). The inputs come from a seeded
//! xorshift generator read as fuzz inputs, so a failure here is replayed by
//! `targets::<decoder>(&XorShift::new(seed).bytes(len))`. The fuzz targets' committed seeds
//! run here too: a crash input found by the fuzzer, copied into
//! `crates/codec/fuzz/seeds/<target>/`, becomes a regression case on stable.

use crate::fuzz;

use fuzz::harness::Tally;
use fuzz::pipeline::check_in_pipeline;
use fuzz::source::XorShift;
use fuzz::targets;

/// A fuzz target's entry point.
type Target = fn(&[u8]) -> Tally;

/// The generated input of `seed`: 0 to `max_len` bytes.
fn input(seed: u64, max_len: usize) -> Vec<u8> {
    let mut rng = XorShift::new(seed);
    let len = (rng.next_u64() % (max_len as u64 + 1)) as usize;
    rng.bytes(len)
}

/// Runs `target` on `cases` generated inputs of 0 to `max_len` bytes; what they exercised.
fn generated(target: Target, cases: u64, max_len: usize) -> Tally {
    let mut tally = Tally::default();
    for seed in 0..cases {
        let input = input(seed, max_len);
        match std::panic::catch_unwind(|| target(&input)) {
            Ok(one) => tally.add(one),
            Err(panic) => {
                eprintln!("failing input (seed {seed}): {input:?}");
                std::panic::resume_unwind(panic);
            }
        }
    }
    eprintln!("{tally:?}");
    tally
}

#[test]
fn line_decoder_matches_its_reference_model_on_generated_inputs() {
    let tally = generated(targets::line, 2000, 400);
    assert!(tally.frames > 0 && tally.too_long > 0 && tally.too_long_early > 0);
    assert!(
        tally.reads > 2 * tally.cases,
        "streams cut into several reads"
    );
}

#[test]
fn delimiter_decoder_matches_its_reference_model_on_generated_inputs() {
    let tally = generated(targets::delimiter, 2000, 400);
    assert!(tally.frames > 0 && tally.too_long > 0 && tally.too_long_early > 0);
    assert!(tally.at_end > 0, "some frames decided only at end of input");
}

#[test]
fn fixed_length_decoder_matches_its_reference_model_on_generated_inputs() {
    let tally = generated(targets::fixed_length, 1000, 400);
    assert!(tally.frames > 0);
}

#[test]
fn length_field_decoder_matches_its_reference_model_on_generated_inputs() {
    let tally = generated(targets::length_field, 3000, 400);
    assert!(tally.frames > 0 && tally.too_long > 0 && tally.corrupted > 0);
    assert!(tally.refused > 0, "invalid configurations generated too");
}

#[test]
fn prepender_output_decodes_to_the_same_messages_on_generated_inputs() {
    let tally = generated(targets::prepender_round_trip, 1000, 200);
    assert!(tally.frames > 0);
}

#[test]
fn the_proxy_protocol_parser_and_decoder_pass_their_checks_on_generated_inputs() {
    let tally = generated(fuzz::haproxy::haproxy, 3000, 300);
    assert!(tally.frames > 500, "headers decoded: {tally:?}");
    assert!(tally.corrupted > 500, "headers refused: {tally:?}");
}

#[test]
fn decoders_in_a_pipeline_fire_what_their_reference_model_says_read_by_read() {
    // ByteToMessageDecoder over an EmbeddedChannel: frames as reads, errors as exceptions,
    // the final decode at close.
    for seed in 0..150 {
        let input = input(seed, 300);
        check_in_pipeline(targets::line_case(&input));
        check_in_pipeline(targets::delimiter_case(&input));
        check_in_pipeline(targets::fixed_length_case(&input));
        if let Some(case) = targets::length_field_case(&input) {
            check_in_pipeline(case);
        }
    }
}

#[test]
fn fuzz_seed_inputs_pass_every_check_on_stable() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let all: [(&str, Target); 6] = [
        ("haproxy", fuzz::haproxy::haproxy),
        ("line", targets::line),
        ("delimiter", targets::delimiter),
        ("fixed_length", targets::fixed_length),
        ("length_field", targets::length_field),
        ("prepender_round_trip", targets::prepender_round_trip),
    ];
    for (name, target) in all {
        let dir = seeds.join(name);
        let mut ran = 0;
        for entry in std::fs::read_dir(&dir).expect("the seeds of every target") {
            let path = entry.expect("a seed").path();
            let input = std::fs::read(&path).expect("a readable seed");
            let outcome = std::panic::catch_unwind(|| target(&input));
            if let Err(panic) = outcome {
                eprintln!("failing seed: {}", path.display());
                std::panic::resume_unwind(panic);
            }
            ran += 1;
        }
        assert!(ran > 0, "no seeds in {}", dir.display());
    }
}
