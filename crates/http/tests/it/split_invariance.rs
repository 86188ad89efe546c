//! The fuzz target's checks on stable (crates/http/fuzz/src/lib.rs): the corpus entries and
//! pipelined mixes of them, cut at many places, decode to the same requests and errors as in
//! one read, with bounded buffering. A crash input found by the fuzzer can be added below.

use crate::fuzz_lib as fuzz;

/// A small xorshift generator (deterministic cases).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn corpus_streams() -> Vec<Vec<u8>> {
    // The corpus's own parser lives in tests/corpus.rs; here the raw text's entries are
    // enough, unescaped the simple way (no repeats needed for these checks).
    let text = include_str!("../corpus/requests.txt");
    let mut out: Vec<Vec<u8>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("=== ") {
            out.push(Vec::new());
        } else if !line.starts_with('#') && !line.is_empty() && !line.contains("{{") {
            let s = line
                .replace("\\r", "\r")
                .replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\x00", "\0")
                .replace("\\x01", "\x01");
            out.last_mut().unwrap().extend_from_slice(s.as_bytes());
        }
    }
    out
}

#[test]
fn corpus_entries_and_pipelined_mixes_decode_the_same_however_they_are_cut() {
    let streams = corpus_streams();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..400 {
        // One to four entries back to back (pipelined), under varied limits and cuts.
        let mut stream = Vec::new();
        for _ in 0..=(rng.next() % 4) {
            stream.extend_from_slice(&streams[(rng.next() % streams.len() as u64) as usize]);
        }
        let k = (rng.next() % 8) as u8;
        let mut input = vec![(rng.next() % 256) as u8, k];
        input.extend((0..k).map(|_| (rng.next() % 256) as u8));
        input.extend_from_slice(&stream);
        fuzz::check(&input); // panics on any difference
    }
}

#[test]
fn every_corpus_entry_split_at_every_single_point_decodes_the_same() {
    for stream in corpus_streams() {
        for selector in [0u8, 0x41, 0x7f] {
            let cfg = fuzz::config(selector);
            let whole = fuzz::run(&cfg, &[&stream]);
            for cut in 0..=stream.len() {
                let split = fuzz::run(&cfg, &[&stream[..cut], &stream[cut..]]);
                assert_eq!(
                    whole,
                    split,
                    "cut at {cut} of {:?}",
                    String::from_utf8_lossy(&stream)
                );
            }
        }
    }
}

#[test]
fn upgrade_requests_declined_then_followed_by_more_decode_the_same_however_cut() {
    let upgrade =
        "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    let connect = "CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\nContent-Length: 2\r\n\r\nhi";
    let next = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n";
    let stream = format!("{upgrade}{connect}{next}{upgrade}\u{81}garbage");
    let stream = stream.as_bytes();
    for selector in [0u8, 0x41, 0x7f] {
        let cfg = fuzz::config(selector);
        let whole = fuzz::run(&cfg, &[stream]);
        let upgrades = whole
            .events
            .iter()
            .filter(|e| matches!(e, netloop_http::Decoded::Request(r) if r.upgrade))
            .count();
        assert_eq!(upgrades, 3, "{whole:?}");
        for cut in 0..=stream.len() {
            let split = fuzz::run(&cfg, &[&stream[..cut], &stream[cut..]]);
            assert_eq!(whole, split, "cut at {cut}");
        }
    }
}
