//! The experimental own record layer against rustls's, on the same scripts: a rustls client
//! (driven byte by byte) and a server on either layer. Every record a server seals must open
//! in the rustls client, every record the client seals must open in the server, and both
//! layers must end each script the same way (same plaintext both ways, same alert).
//! KeyUpdates are requested by either side at every point of the script (writes held, flushed,
//! records in flight), reads are split at several sizes, handshake messages are fragmented,
//! and raw records (zero-length, padded, fragmented KeyUpdates) are sealed with the client's
//! extracted keys.

use crate::rustls_peer;

use netloop_tls::rustls::AlertDescription;
use netloop_transport::Bytes;
use rustls_peer::*;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// The client writes n bytes (not sent yet).
    CWrite(usize),
    /// The client asks for a KeyUpdate (update_requested; not sent yet).
    CKeyUpdate,
    /// The client's records go to the server.
    CSend,
    /// The server writes n bytes (held until a flush).
    SWrite(usize),
    SFlush,
    /// The server sends a KeyUpdate(update_requested) now.
    SKeyUpdate,
    /// The server's records go to the client.
    SSend,
}
use Op::*;

const BASE: &[Op] = &[
    SWrite(100),
    SWrite(20_000),
    CWrite(50),
    CSend,
    SFlush,
    SWrite(10),
    SSend,
    CWrite(40_000),
    CSend,
    SFlush,
    SSend,
];
const DRAIN: &[Op] = &[CSend, SFlush, SSend, CSend, SSend, CSend];

/// What one script did: the bytes each side received (checked against what was sent), and
/// how many KeyUpdates each side's records carried.
#[derive(Debug, PartialEq)]
struct Outcome {
    up: usize,
    down: usize,
}

/// Runs `script` on a fresh pair: reads cut at `split` bytes; `with_finished`: the client's
/// first ops run before its Finished leaves (so they share its read); `fragment`: the
/// client's record size.
fn run(
    own: bool,
    script: &[Op],
    split: usize,
    with_finished: usize,
    fragment: Option<usize>,
) -> Outcome {
    let mut c = client(fragment);
    let (s, h) = server(own);
    let ctx = s.pipeline().context("tls").expect("tls context");
    while c.is_handshaking() {
        feed_server(&s, &client_records(&mut c), split);
        feed_client(&mut c, &server_records(&s), split).expect("handshake");
    }
    let (mut sent_up, mut sent_down, mut up, mut down) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut seed = 1;
    let ops = script.iter().chain(DRAIN);
    for (i, op) in ops.enumerate() {
        if i == with_finished {
            // The client's Finished leaves now, with whatever the client queued so far.
            feed_server(&s, &client_records(&mut c), split);
        }
        match *op {
            CWrite(n) => {
                seed += 1;
                let data = pattern(n, seed);
                std::io::Write::write_all(&mut c.writer(), &data).unwrap();
                sent_up.extend_from_slice(&data);
            }
            CKeyUpdate => c.refresh_traffic_keys().expect("client KeyUpdate"),
            CSend if i >= with_finished => feed_server(&s, &client_records(&mut c), split),
            CSend => {}
            SWrite(n) => {
                seed += 1;
                let data = pattern(n, seed);
                s.pipeline().write(Bytes::copy_from_slice(&data));
                sent_down.extend_from_slice(&data);
            }
            SFlush => {
                s.pipeline().flush();
            }
            SKeyUpdate => h.request_key_update(&ctx).expect("server KeyUpdate"),
            SSend => {
                let got = feed_client(&mut c, &server_records(&s), split);
                let got = got.unwrap_or_else(|e| panic!("own {own}: the client could not read the server: {e:?} ({script:?}, split {split})"));
                down.extend_from_slice(&got);
            }
        }
        up.extend_from_slice(&plaintext(&s));
        if let Err(e) = s.check_exception() {
            panic!("own {own}: the server failed: {e} ({script:?}, split {split})");
        }
    }
    assert!(s.channel().is_active());
    assert!(
        up == sent_up,
        "own {own}: the server received other bytes ({script:?}, split {split})"
    );
    assert!(
        down == sent_down,
        "own {own}: the client received other bytes ({script:?}, split {split})"
    );
    Outcome {
        up: up.len(),
        down: down.len(),
    }
}

fn both(script: &[Op], split: usize, with_finished: usize, fragment: Option<usize>) {
    let own = run(true, script, split, with_finished, fragment);
    let rustls = run(false, script, split, with_finished, fragment);
    assert_eq!(own, rustls, "{script:?}");
}

/// Scripts with `inserted` put at every position of the base script.
fn at_every_point(inserted: &[Op]) -> Vec<Vec<Op>> {
    (0..=BASE.len())
        .map(|i| {
            let mut script = BASE[..i].to_vec();
            script.extend_from_slice(inserted);
            script.extend_from_slice(&BASE[i..]);
            script
        })
        .collect()
}

#[test]
fn client_key_updates_at_every_point_of_a_flush_open_on_both_layers() {
    for script in at_every_point(&[CKeyUpdate, CSend])
        .into_iter()
        .chain(at_every_point(&[CKeyUpdate]))
    {
        for split in [usize::MAX, 4_099, 333] {
            both(&script, split, 0, None);
        }
    }
}

#[test]
fn server_key_updates_at_every_point_of_a_flush_open_on_both_layers() {
    for script in at_every_point(&[SKeyUpdate])
        .into_iter()
        .chain(at_every_point(&[SKeyUpdate, CKeyUpdate, CSend]))
    {
        for split in [usize::MAX, 4_099, 333] {
            both(&script, split, 0, None);
        }
    }
}

#[test]
fn key_updates_and_data_in_the_same_read_as_the_client_finished_open_on_both_layers() {
    for lead in [
        vec![CKeyUpdate],
        vec![CKeyUpdate, CWrite(18)],
        vec![CWrite(18), CKeyUpdate],
        vec![CKeyUpdate, CKeyUpdate, CWrite(18)],
    ] {
        let mut script = lead.clone();
        script.extend_from_slice(BASE);
        for split in [usize::MAX, 7] {
            both(&script, split, lead.len(), None);
        }
    }
}

#[test]
fn fragmented_handshake_messages_and_small_records_open_on_both_layers() {
    let mut script = vec![CKeyUpdate];
    script.extend_from_slice(BASE);
    for fragment in [Some(32), Some(100), Some(1_000)] {
        both(&script, usize::MAX, 1, fragment);
        both(&at_every_point(&[SKeyUpdate])[4], 13, 0, fragment);
    }
}

/// What a server made of raw records sealed with the client's extracted keys: the plaintext
/// it delivered, the records it sent back (opened with the client's receive keys: inner type
/// and content) and whether the channel is still open.
fn raw(own: bool, records: impl Fn(&mut RawKeys) -> Vec<Vec<u8>>, split: usize) -> Raw {
    let (c, s, _h) = connected(own);
    let secrets = c.dangerous_extract_secrets().expect("secrets");
    let (mut tx, mut rx) = (RawKeys::new(secrets.tx), RawKeys::new(secrets.rx));
    let mut got = Vec::new();
    for record in records(&mut tx) {
        if !s.channel().is_active() {
            break; // a closed channel reads nothing more
        }
        feed_server(&s, &record, split);
        got.extend_from_slice(&plaintext(&s));
    }
    if s.channel().is_active() {
        s.pipeline()
            .write_and_flush(Bytes::from_static(b"still here"));
    }
    let back = rx.open_all(&server_records(&s));
    (got, back, s.channel().is_active())
}

/// The outcome of `records` on both layers and at two read sizes, which must agree; except
/// that where rustls (0.23) closes without an alert for a few errors (an inner plaintext
/// without a content type, a record between a handshake message's fragments: its
/// `PeerMisbehaved` errors carry none), the own layer sends the alert RFC 8446 names.
fn raw_both(name: &str, records: impl Fn(&mut RawKeys) -> Vec<Vec<u8>> + Copy) -> Raw {
    let mut outcomes = Vec::new();
    for split in [usize::MAX, 1] {
        for own in [true, false] {
            outcomes.push((own, raw(own, records, split)));
        }
    }
    let first = outcomes[0].1.clone();
    for (own, o) in &outcomes[1..] {
        let silent_rustls = !own && o.1.is_empty() && !o.2;
        assert!(
            o == &first || (silent_rustls && (&o.0, o.2) == (&first.0, first.2)),
            "{name}: the layers (or read sizes) disagree: {o:?} and {first:?}"
        );
    }
    first
}

/// Plaintext delivered, the server's records opened (inner type, content), still open.
type Raw = (Vec<u8>, Vec<(u8, Vec<u8>)>, bool);

const DATA: u8 = 23;
const HANDSHAKE: u8 = 22;
const ALERT: u8 = 21;

fn alert(description: AlertDescription) -> (u8, Vec<u8>) {
    (ALERT, vec![2, u8::from(description)])
}

#[test]
fn zero_length_and_padded_records_are_read_alike() {
    let (got, back, open) = raw_both("zero-length and padded", |k| {
        let mut max_padding = b"edge".to_vec();
        max_padding.push(DATA);
        max_padding.resize((1 << 14) + 1, 0);
        vec![
            k.seal(&[DATA]),
            k.seal(&[b'a', b'b', DATA, 0, 0, 0]),
            k.seal(&[DATA, 0]),
            k.seal(&max_padding),
            k.seal(b"end\x17"),
        ]
    });
    assert_eq!(got, b"abedgeend");
    assert_eq!(back, vec![(DATA, b"still here".to_vec())]);
    assert!(open);
}

#[test]
fn a_fragmented_key_update_is_read_alike_and_data_between_its_fragments_is_refused() {
    let (got, back, open) = raw_both("fragmented KeyUpdate", |k| {
        vec![
            k.seal(b"one\x17"),
            k.seal(&[24, 0, 0, HANDSHAKE]),
            k.seal(&[1, 0, HANDSHAKE]),
        ]
    });
    assert_eq!(got, b"one");
    assert!(open);
    // update_not_requested: nothing back but the data, under the key it had.
    assert_eq!(back, vec![(DATA, b"still here".to_vec())]);
    let (got, back, open) = raw_both("data between KeyUpdate fragments", |k| {
        vec![
            k.seal(&[24, 0, HANDSHAKE]),
            k.seal(b"x\x17"),
            k.seal(&[0, 1, 1, HANDSHAKE]),
        ]
    });
    assert!(got.is_empty() && !open);
    assert_eq!(back, vec![alert(AlertDescription::UnexpectedMessage)]);
}

#[test]
fn a_key_update_request_is_answered_by_both_layers_before_anything_else() {
    let (got, back, open) = raw_both("KeyUpdate request", |k| {
        vec![k.seal(&[24, 0, 0, 1, 1, HANDSHAKE])]
    });
    assert!(got.is_empty() && open);
    // The answer under the old key; "still here" went under the next one (not opened here).
    assert_eq!(back.len(), 2);
    assert_eq!(back[0], (HANDSHAKE, vec![24, 0, 0, 1, 0]));
    assert_eq!(back[1].0, 0, "the data after it is under the next key");
}

#[test]
fn records_without_a_content_type_close_alike() {
    let (got, back, open) = raw_both("all zero", |k| vec![k.seal(&[0, 0, 0])]);
    assert!(got.is_empty() && !open);
    assert_eq!(back, vec![alert(AlertDescription::UnexpectedMessage)]);
}

/// RFC 8446 §5: an unexpected record type is an unexpected_message; rustls (0.23) answers an
/// inner type it does not know with decode_error. Both close, each with its alert.
#[test]
fn a_record_of_an_unknown_inner_type_closes_both_layers() {
    for split in [usize::MAX, 1] {
        let own = raw(true, |k| vec![k.seal(&[1, 99])], split);
        assert_eq!(
            own,
            (
                vec![],
                vec![alert(AlertDescription::UnexpectedMessage)],
                false
            )
        );
        let rustls = raw(false, |k| vec![k.seal(&[1, 99])], split);
        assert_eq!(
            rustls,
            (vec![], vec![alert(AlertDescription::DecodeError)], false)
        );
    }
}

#[test]
fn the_client_reads_what_it_expects_on_both_layers_after_many_client_key_updates() {
    for own in [true, false] {
        let (mut c, s, _h) = connected(own);
        for round in 0..20 {
            c.refresh_traffic_keys().unwrap();
            let msg = format!("round {round}");
            std::io::Write::write_all(&mut c.writer(), msg.as_bytes()).unwrap();
            feed_server(&s, &client_records(&mut c), usize::MAX);
            assert_eq!(plaintext(&s), msg.as_bytes());
            s.pipeline()
                .write_and_flush(Bytes::from(msg.clone().into_bytes()));
            let got = feed_client(&mut c, &server_records(&s), usize::MAX);
            assert_eq!(got.expect("reply"), msg.as_bytes(), "own {own}");
        }
        let rx_seq = c.dangerous_extract_secrets().expect("secrets").rx.0;
        assert_eq!(
            rx_seq, 1,
            "own {own}: one record under the server's latest key"
        );
    }
}

/// Issue 35's check, in Rust: 1,000 rounds of KeyUpdate requests from both sides with data in
/// flight each way (the client's data queued behind its KeyUpdate, the server's written before
/// its own and flushed after, the server's records not yet read when the client asks again).
#[test]
fn a_thousand_key_update_rounds_both_ways_with_data_in_flight_pass_on_both_layers() {
    for own in [true, false] {
        let (mut c, s, h) = connected(own);
        let ctx = s.pipeline().context("tls").expect("tls context");
        let (mut up, mut down, mut sent_down) = (0usize, Vec::new(), Vec::new());
        for round in 0..1_000u32 {
            let msg = pattern(1 + (round as usize * 37) % 3_000, round);
            c.refresh_traffic_keys().expect("client KeyUpdate");
            std::io::Write::write_all(&mut c.writer(), &msg).unwrap();
            s.pipeline().write(Bytes::copy_from_slice(&msg));
            sent_down.extend_from_slice(&msg);
            if round % 2 == 0 {
                h.request_key_update(&ctx).expect("server KeyUpdate");
            }
            feed_server(&s, &client_records(&mut c), 1_000);
            s.pipeline().flush();
            up += plaintext(&s).len();
            let got = feed_client(&mut c, &server_records(&s), 999);
            down.extend_from_slice(
                &got.unwrap_or_else(|e| panic!("own {own}, round {round}: {e:?}")),
            );
        }
        feed_server(&s, &client_records(&mut c), usize::MAX);
        s.check_exception().expect("no error");
        assert!(s.channel().is_active());
        assert_eq!(up, sent_down.len(), "own {own}");
        assert!(down == sent_down, "own {own}: the client read other bytes");
    }
}

/// A KeyUpdate(update_requested) in the middle of a request is answered at once, before the
/// server has anything to send (rustls keeps its answer for its next record otherwise).
#[test]
fn a_key_update_request_is_answered_at_once_on_both_layers_when_the_server_has_nothing_to_send() {
    for own in [true, false] {
        let (mut c, s, _h) = connected(own);
        std::io::Write::write_all(&mut c.writer(), b"GET").unwrap();
        c.refresh_traffic_keys().unwrap();
        feed_server(&s, &client_records(&mut c), usize::MAX);
        assert_eq!(plaintext(&s), b"GET");
        let answer = server_records(&s);
        assert!(
            !answer.is_empty(),
            "own {own}: the server's KeyUpdate went out"
        );
        assert_eq!(feed_client(&mut c, &answer, usize::MAX).expect("read"), b"");
        let rx = c.dangerous_extract_secrets().expect("secrets").rx.0;
        assert_eq!(
            rx, 0,
            "own {own}: the client reads under the server's next key"
        );
    }
}
