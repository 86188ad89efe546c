//! permessage-deflate's memory per connection, measured with a counting allocator: the
//! compressor's and decompressor's state (the figures docs/decisions/0017-websocket.md
//! gives), and the peak while a deflate bomb is refused (the limit plus the state, never the
//! bomb's inflated size). Counters are per thread, so tests running in parallel do not mix.
//!
//! `cargo test -p netloop-ws --test deflate_memory -- --nocapture` prints the figures.

use netloop_ws::deflate::{Deflater, Inflater};
use netloop_ws::extension::Direction;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{live, peak_during, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn direction(bits: u8) -> Direction {
    Direction {
        no_context_takeover: false,
        window_bits: bits,
    }
}

fn sample() -> Vec<u8> {
    (0..8192u32).map(|i| (i * 31 % 97) as u8).collect()
}

#[test]
fn a_compressor_holds_under_400_kib_and_less_at_smaller_windows() {
    let data = sample();
    let mut figures = Vec::new();
    for bits in [15u8, 12, 9] {
        let before = live();
        let mut d = Deflater::new(direction(bits), 6);
        let out = d.compress(&data).unwrap();
        drop(out);
        let held = (live() - before) as usize;
        figures.push((bits, held));
        drop(d);
        // (A few bytes may stay: one-time initialisation of the backend, not per connection.)
        assert!(
            live() - before < 1024,
            "dropping the compressor frees its state"
        );
    }
    eprintln!("compressor state by window bits: {figures:?}");
    let at = |b| figures.iter().find(|f| f.0 == b).unwrap().1;
    // Measured with zlib-rs 0.6 (memLevel 8): 371 KiB at 15, 259 KiB at 12, 245 KiB at 9.
    assert!(at(15) <= 400 << 10, "window 15: {} bytes", at(15));
    assert!(
        at(15) >= 200 << 10,
        "window 15: {} bytes (the figure documented)",
        at(15)
    );
    assert!(at(9) < at(15), "window 9: {} bytes", at(9));
}

#[test]
fn a_decompressor_holds_under_64_kib() {
    let data = sample();
    let compressed = Deflater::new(direction(15), 6).compress(&data).unwrap();
    let before = live();
    let mut i = Inflater::new(direction(15));
    let out = i.inflate(&compressed, true, 1 << 20).unwrap();
    assert_eq!(&out[..], &data[..]);
    drop(out);
    let held = (live() - before) as usize;
    eprintln!("decompressor state: {held} bytes");
    assert!(held <= 64 << 10, "{held} bytes");
    assert!(held >= 32 << 10, "{held} bytes: at least the 32 KiB window");
}

#[test]
fn refusing_a_bomb_takes_the_limit_plus_the_state_never_the_inflated_size() {
    let bomb = Deflater::new(direction(15), 9)
        .compress(&vec![0u8; 4 << 20])
        .unwrap();
    for limit in [64usize << 10, 1 << 20] {
        let mut i = Inflater::new(direction(15));
        let (result, peak) = peak_during(|| i.inflate(&bomb, true, limit).map(|b| b.len()));
        assert!(result.is_err(), "{result:?}");
        eprintln!("bomb of 4 MiB refused at a {limit}-byte limit: peak {peak} bytes");
        assert!(
            peak <= limit + (64 << 10),
            "peak {peak} bytes for a {limit}-byte limit"
        );
    }
}

#[test]
fn without_context_takeover_connections_hold_nothing_and_the_thread_lends_one_state() {
    let data = sample();
    let shared = Direction {
        no_context_takeover: true,
        window_bits: 15,
    };
    // Warm: the thread's spare compressor and decompressor exist after one message each.
    let first = Deflater::new(shared, 6).compress(&data).unwrap();
    Inflater::new(shared)
        .inflate(&first, true, 1 << 20)
        .unwrap();
    let spares = netloop_ws::deflate::spare_counts();
    assert_eq!(
        spares,
        (1, 1),
        "one spare of each kind after one message each way"
    );

    // A thousand connections' directions, each after one message each way, hold no state:
    // the messages borrowed the thread's spares.
    let before = live();
    let mut deflaters: Vec<Deflater> = (0..1000).map(|_| Deflater::new(shared, 6)).collect();
    let mut inflaters: Vec<Inflater> = (0..1000).map(|_| Inflater::new(shared)).collect();
    let structs = (live() - before) as usize;
    let ((), peak) = peak_during(|| {
        for (d, i) in deflaters.iter_mut().zip(inflaters.iter_mut()) {
            let out = d.compress(&data).unwrap();
            // A reset state compresses as a new one does.
            assert_eq!(out, first);
            let back = i.inflate(&out, true, 1 << 20).unwrap();
            assert_eq!(&back[..], &data[..]);
            assert!(!d.has_state() && !i.has_state());
        }
    });
    let held = (live() - before) as usize - structs;
    eprintln!("1,000 directions without context takeover: {held} bytes held after, peak {peak} above the start");
    assert!(
        held < 1024,
        "{held} bytes held by 1,000 connections between messages"
    );
    assert_eq!(
        netloop_ws::deflate::spare_counts(),
        spares,
        "the same spares, reused"
    );
    // No message allocated a state: the peak is one message's buffers, not 371 KiB.
    assert!(peak < 64 << 10, "peak {peak} bytes");
}
