//! The one-pass parser against the scanner and httparse: whatever it accepts, they accept
//! with the same head length, spans and version (heads made from parts, every prefix of
//! them, and seeded byte changes, under default and small limits).

use super::*;
use crate::fields::parse_with_slots;
use crate::head::{parse_into, Parsed};
use crate::scan::{LineScanner, ScanLimits};

/// The scanner's and httparse's reading of `buf`: the head's length and parts, or `None`.
fn slow(buf: &[u8], limits: PlainLimits) -> Option<(usize, Parsed)> {
    let scan = ScanLimits {
        max_head: limits.max_head,
        max_first_line: Some(limits.max_first_line),
    };
    let len = LineScanner::default().scan(buf, scan).ok()??;
    let head = &buf[..len];
    let parsed = parse_with_slots(limits.max_fields, |slots| parse_into(head, slots)).ok()?;
    Some((len, parsed))
}

/// Checks `buf` and each of its prefixes; the number of them the one-pass parser accepted.
fn agree(buf: &[u8], limits: PlainLimits) -> usize {
    let mut accepted = 0;
    for end in 0..=buf.len() {
        let part = &buf[..end];
        let Some(fast) = parse_plain(part, limits) else {
            continue;
        };
        accepted += 1;
        let (len, (method, target, version, spans)) = slow(part, limits).unwrap_or_else(|| {
            panic!(
                "accepted what the scanner or httparse refuse: {:?}",
                String::from_utf8_lossy(part)
            )
        });
        let want = PlainHead {
            len,
            method,
            target,
            version,
            spans,
        };
        assert_eq!(fast, want, "{:?}", String::from_utf8_lossy(part));
    }
    accepted
}

const METHODS: [&[u8]; 6] = [b"GET", b"POST", b"get", b"M-SEARCH", b"G\x01T", b""];
const TARGETS: [&[u8]; 7] = [
    b"/",
    b"/a?b=c",
    b"*",
    b"http://x/y",
    b"/\x80",
    b"/\x7f",
    b"",
];
const VERSIONS: [&[u8]; 4] = [b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"http/1.1"];
const ENDS: [&[u8]; 4] = [b"\r\n", b"\r\n", b"\n", b"\r"];
const FIELDS: [&[u8]; 18] = [
    b"Host: x",
    b"Host:x",
    b"Host:  x  ",
    b"Host:",
    b"Host: \t ",
    b"A: b\tc",
    b"A: \x80\xff",
    b"X-Long: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
    b"A: b\x01",
    b"A: b\x7f",
    b" A: b",
    b"A : b",
    b"A:\tb\t",
    b":b",
    b"Connection: close",
    b"Content-Length: 5",
    b"A: b \r c",
    b"A\x80: b",
];

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
    /// Mostly one of the first `good` parts (the plain shape), one time in eight any.
    fn part<T: Copy>(&mut self, from: &[T], good: usize) -> T {
        if self.next() % 8 == 0 {
            self.pick(from)
        } else {
            self.pick(&from[..good])
        }
    }
}

fn head(rng: &mut Rng) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(rng.part(&METHODS, 4));
    h.push(b' ');
    h.extend_from_slice(rng.part(&TARGETS, 4));
    h.push(b' ');
    h.extend_from_slice(rng.part(&VERSIONS, 2));
    h.extend_from_slice(rng.part(&ENDS, 2));
    for _ in 0..rng.next() % 7 {
        h.extend_from_slice(rng.part(&FIELDS, 8));
        h.extend_from_slice(rng.part(&ENDS, 2));
    }
    h.extend_from_slice(rng.part(&ENDS, 2));
    h
}

#[test]
fn what_the_one_pass_parser_accepts_the_scanner_and_httparse_read_the_same_way() {
    let roomy = PlainLimits {
        max_head: 16 * 1024,
        max_first_line: 8 * 1024 + 64,
        max_fields: 100,
    };
    let tight = PlainLimits {
        max_head: 60,
        max_first_line: 20,
        max_fields: 2,
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut whole, mut accepted) = (0, 0);
    for _ in 0..3000 {
        let mut h = head(&mut rng);
        if rng.next() % 4 == 0 {
            let at = (rng.next() % h.len() as u64) as usize;
            h[at] = rng.pick(&[b'\r', b'\n', b' ', b'\t', b':', 0, 0x7f, 0x80, b'a']);
        }
        for limits in [roomy, tight] {
            let n = agree(&h, limits);
            accepted += n;
            whole += usize::from(parse_plain(&h, limits).is_some());
        }
    }
    assert!(whole > 300, "only {whole} whole heads took the one pass");
    assert!(accepted >= whole);
}

#[test]
fn a_load_tools_head_takes_the_one_pass_and_a_split_one_does_not() {
    let limits = PlainLimits {
        max_head: 16 * 1024,
        max_first_line: 8 * 1024 + 64,
        max_fields: 100,
    };
    let head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\nGET";
    let plain = parse_plain(head, limits).expect("the plain shape");
    assert_eq!(plain.len, head.len() - 3);
    assert_eq!((plain.method, plain.target), ((0, 3), (4, 5)));
    assert_eq!(parse_plain(&head[..20], limits), None);
    assert_eq!(
        agree(head, limits),
        4,
        "the whole head, and with 1 to 3 bytes after it"
    );
}
