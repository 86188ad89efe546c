//! The response corpus (tests/corpus/responses.txt): each entry, the whole reply to one `GET`
//! followed by the end of input, gets the expected verdict from the response decoder, whole and
//! cut at every byte.

use crate::corpus_file;

use netloop_http::bytes::Bytes;
use netloop_http::{DecodedResponse, HttpClientConfig, ResponseDecoder, SentRequest};

/// `STATUS:LENGTH` of the final response delivered, else the error's code, else `none`.
fn verdict(reads: &[&[u8]]) -> String {
    let mut decoder = ResponseDecoder::new(HttpClientConfig::default());
    decoder.push_request(SentRequest {
        id: 0,
        head: false,
        connect: false,
        upgrade: false,
    });
    let mut out = Vec::new();
    let mut pending = Bytes::new();
    let mut error = None;
    for read in reads {
        let mut input = Bytes::from([&pending[..], read].concat());
        if let Err(e) = decoder.decode(&mut input, &mut out) {
            error = Some(e);
            break;
        }
        pending = input;
    }
    if error.is_none() {
        if let Err(e) = decoder.finish(&mut pending, &mut out) {
            error = Some(e);
        }
    }
    let mut status = None;
    let mut length = 0usize;
    let mut complete = false;
    for m in out {
        match m {
            DecodedResponse::Response(r) if r.is_informational() => {}
            DecodedResponse::Response(r) => {
                status = Some(r.status);
                length = r.body.len();
                complete = !r.streaming;
            }
            DecodedResponse::Content(c) => {
                length += c.data.len();
                complete = c.last;
            }
        }
    }
    match (status, complete, error) {
        (Some(s), true, _) => format!("{s}:{length}"),
        (_, _, Some(e)) => e.code().to_string(),
        _ => "none".to_string(),
    }
}

#[test]
fn every_response_corpus_entry_gets_its_expected_verdict_however_it_is_cut() {
    let entries = corpus_file::entries(include_str!("../corpus/responses.txt"));
    assert!(entries.len() >= 50, "corpus has {} entries", entries.len());
    let mut wrong = Vec::new();
    for e in &entries {
        let whole = verdict(&[&e.bytes]);
        if whole != e.expected {
            wrong.push(format!("{}: expected {}, got {whole}", e.name, e.expected));
            continue;
        }
        for cut in 0..=e.bytes.len() {
            let split = verdict(&[&e.bytes[..cut], &e.bytes[cut..]]);
            if split != whole {
                wrong.push(format!("{} cut at {cut}: {split} (whole: {whole})", e.name));
                break;
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
