//! The malformed-request corpus (tests/corpus/requests.txt): each entry, sent alone, gets the
//! expected status; a refusal closes the connection.

mod common;

use common::*;

/// One corpus entry.
struct Entry {
    name: String,
    expected: u16,
    bytes: Vec<u8>,
}

fn expand_repeats(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("}}").expect("closing }}") + start;
        let (n, text) = rest[start + 2..end].split_once('*').expect("{{N*text}}");
        out.push_str(&text.repeat(n.parse().expect("a count")));
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b[i + 1] {
            b'r' => out.push(b'\r'),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'\\' => out.push(b'\\'),
            b'x' => {
                let hex = std::str::from_utf8(&b[i + 2..i + 4]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            other => panic!("unknown escape \\{}", other as char),
        }
        i += 2;
    }
    out
}

fn corpus() -> Vec<Entry> {
    let text = include_str!("corpus/requests.txt");
    let mut entries: Vec<Entry> = Vec::new();
    for line in text.lines() {
        if let Some(head) = line.strip_prefix("=== ") {
            let (expected, name) = head.split_once(' ').expect("=== <status> <name>");
            entries.push(Entry {
                name: name.to_string(),
                expected: expected.parse().expect("a status"),
                bytes: Vec::new(),
            });
        } else if line.starts_with('#') || line.is_empty() {
            continue;
        } else {
            let e = entries.last_mut().expect("an entry header first");
            e.bytes.extend(unescape(&expand_repeats(line)));
        }
    }
    entries
}

#[test]
fn every_corpus_entry_gets_its_expected_status_and_refusals_close() {
    let entries = corpus();
    assert!(entries.len() >= 70, "corpus has {} entries", entries.len());
    let mut wrong = Vec::new();
    for e in &entries {
        let h = harness(Answer::Ok);
        h.feed(&e.bytes);
        let got = statuses(&h.output())
            .into_iter()
            .find(|s| *s >= 200)
            .unwrap_or(0);
        let closed_ok = got < 400 || !h.is_open();
        if got != e.expected || !closed_ok {
            wrong.push(format!(
                "{}: expected {}, got {got}{}",
                e.name,
                e.expected,
                if closed_ok { "" } else { " (left open)" }
            ));
        }
        if got >= 400 {
            assert_eq!(
                h.error_codes().len(),
                1,
                "{}: one error reaches the pipeline",
                e.name
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_corpus_entry_fed_byte_by_byte_gets_the_same_status() {
    for e in corpus() {
        let h = harness(Answer::Ok);
        for b in &e.bytes {
            h.feed(&[*b]);
        }
        let got = statuses(&h.output()).into_iter().find(|s| *s >= 200);
        assert_eq!(got, Some(e.expected), "{}", e.name);
    }
}
