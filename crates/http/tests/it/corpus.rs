//! The malformed-request corpus (tests/corpus/requests.txt): each entry, sent alone, gets the
//! expected status; a refusal closes the connection.

use crate::common;
use crate::corpus_file;

use common::*;

/// One corpus entry, its expected status parsed.
struct Entry {
    name: String,
    expected: u16,
    bytes: Vec<u8>,
}

fn corpus() -> Vec<Entry> {
    corpus_file::entries(include_str!("../corpus/requests.txt"))
        .into_iter()
        .map(|e| Entry {
            expected: e.expected.parse().expect("a status"),
            name: e.name,
            bytes: e.bytes,
        })
        .collect()
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
