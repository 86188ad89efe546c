//! `HAProxyMessageDecoder` on an `EmbeddedChannel`: the header becomes an event, the stream
//! after it passes through in order, a bad header closes the channel and passes nothing.

use bytes::Bytes;

use super::recorder::{channel_with, exception, read, Ev, Recorder};
use crate::{HAProxyMessage, HAProxyMessageDecoder};

const V1: &[u8] = b"PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n";

/// What reached the recorder, read completions left out.
fn events_of(rec: &Recorder) -> Vec<Ev> {
    rec.take()
        .into_iter()
        .filter(|e| *e != Ev::ReadComplete)
        .collect()
}

fn event() -> Ev {
    Ev::Event("haproxy TCP4 192.0.2.1:56324 198.51.100.2:443".into())
}

#[test]
fn the_header_is_an_event_and_the_bytes_after_it_in_the_same_read_follow() {
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::new(), &rec);
    ch.write_inbound(Bytes::from([V1, b"GET / HTTP/1.1\r\n"].concat()));
    ch.write_inbound(Bytes::from_static(b"Host: x\r\n"));
    let events = events_of(&rec);
    assert_eq!(
        events,
        vec![event(), read(b"GET / HTTP/1.1\r\n"), read(b"Host: x\r\n")]
    );
}

#[test]
fn a_header_split_over_reads_byte_by_byte_is_decoded_once_whole() {
    let rec = Recorder::new();
    let header = HAProxyMessage::tcp(
        "[2001:db8::1]:40000".parse().unwrap(),
        "[2001:db8::2]:443".parse().unwrap(),
    )
    .encode_v2()
    .unwrap();
    let decoder = HAProxyMessageDecoder::new();
    let ch = channel_with(decoder, &rec);
    for b in header.iter() {
        assert!(rec.take_reads().is_empty());
        ch.write_inbound(Bytes::copy_from_slice(&[*b]));
    }
    ch.write_inbound(Bytes::from_static(b"data"));
    let events = events_of(&rec);
    assert_eq!(
        events,
        vec![
            Ev::Event("haproxy TCP6 [2001:db8::1]:40000 [2001:db8::2]:443".into()),
            read(b"data")
        ]
    );
}

#[test]
fn a_stream_that_is_not_a_header_fails_closes_the_channel_and_passes_nothing_on() {
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::new(), &rec);
    ch.write_inbound(Bytes::from_static(b"GET / HTTP/1.1\r\n"));
    ch.write_inbound(Bytes::from_static(b"more"));
    let events = events_of(&rec);
    assert_eq!(events[0], exception("ERR_HAPROXY_PROTOCOL"));
    assert!(events.contains(&Ev::Inactive), "{events:?}");
    assert!(
        !events.iter().any(|e| matches!(e, Ev::Read(_))),
        "{events:?}"
    );
    assert!(!ch.channel().is_open());
}

#[test]
fn a_version_1_header_without_its_line_end_in_107_bytes_fails_without_waiting_for_more() {
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::new(), &rec);
    let mut long = b"PROXY TCP4 ".to_vec();
    long.resize(107, b'1');
    ch.write_inbound(Bytes::from(long));
    assert_eq!(rec.take()[0], exception("ERR_HAPROXY_PROTOCOL"));
}

#[test]
fn the_decoded_message_stays_readable_from_the_handler() {
    let rec = Recorder::new();
    let decoder = std::rc::Rc::new(HAProxyMessageDecoder::new());
    let ch = netloop_transport::EmbeddedChannel::new(vec![
        ("proxy", decoder.clone()),
        ("recorder", rec.clone()),
    ]);
    assert!(decoder.message().is_none());
    ch.write_inbound(Bytes::from_static(V1));
    let m = decoder.message().unwrap();
    assert_eq!(m.source_addr(), Some("192.0.2.1:56324".parse().unwrap()));
}

#[test]
fn without_auto_read_the_decoder_asks_for_reads_until_the_header_is_whole() {
    use netloop_transport::{ChannelOptions, EmbeddedChannel, ReadCounter};
    let ch = EmbeddedChannel::unregistered(ChannelOptions {
        auto_read: false,
        ..ChannelOptions::default()
    });
    let counter = std::rc::Rc::new(ReadCounter::default());
    let rec = Recorder::new();
    let pipeline = ch.pipeline();
    pipeline.add_last("reads", counter.clone()).unwrap();
    pipeline
        .add_last("proxy", HAProxyMessageDecoder::new())
        .unwrap();
    pipeline.add_last("recorder", rec.clone()).unwrap();
    ch.register();
    let before = counter.reads();
    ch.write_inbound(Bytes::from_static(&V1[..10]));
    assert_eq!(counter.reads(), before + 1, "half a header: read more");
    ch.write_inbound(Bytes::from_static(&V1[10..]));
    assert_eq!(
        counter.reads(),
        before + 1,
        "the header is whole: reading is the application's to ask"
    );
    assert_eq!(events_of(&rec), vec![event()]);
}

#[test]
fn optional_a_stream_without_a_header_passes_through_whole_and_fires_no_event() {
    // "P" could start "PROXY ": held; "OST" decides, and everything goes on in one read.
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::optional(), &rec);
    ch.write_inbound(Bytes::from_static(b"P"));
    assert!(events_of(&rec).is_empty(), "undecided: held");
    ch.write_inbound(Bytes::from_static(b"OST / HTTP/1.1\r\n"));
    ch.write_inbound(Bytes::from_static(b"Host: x\r\n"));
    assert_eq!(
        events_of(&rec),
        vec![read(b"POST / HTTP/1.1\r\n"), read(b"Host: x\r\n")]
    );
    assert!(ch.channel().is_open());
    // A TLS ClientHello starts with 0x16: no header at once.
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::optional(), &rec);
    ch.write_inbound(Bytes::from_static(&[0x16, 0x03, 0x01]));
    assert_eq!(events_of(&rec), vec![read(&[0x16, 0x03, 0x01])]);
}

#[test]
fn optional_a_stream_that_starts_a_header_is_held_to_it() {
    // A header: as in strict mode.
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::optional(), &rec);
    ch.write_inbound(Bytes::from([V1, b"GET /"].concat()));
    assert_eq!(events_of(&rec), vec![event(), read(b"GET /")]);
    // A version 2 signature split over reads, then a broken header: refused and closed.
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::optional(), &rec);
    ch.write_inbound(Bytes::from_static(b"\r\n\r\n\0\r\n"));
    assert!(events_of(&rec).is_empty());
    ch.write_inbound(Bytes::from_static(b"QUIT\n\x2f\x11\0\0"));
    assert_eq!(rec.take()[0], exception("ERR_HAPROXY_PROTOCOL"));
    assert!(!ch.channel().is_open());
    // "PROXY " and then garbage: a header that starts and breaks.
    let rec = Recorder::new();
    let ch = channel_with(HAProxyMessageDecoder::optional(), &rec);
    ch.write_inbound(Bytes::from_static(b"PROXY NONSENSE\r\n"));
    assert_eq!(rec.take()[0], exception("ERR_HAPROXY_PROTOCOL"));
}

#[test]
fn starts_header_decides_within_the_longest_signature() {
    assert_eq!(HAProxyMessage::starts_header(b""), None);
    assert_eq!(HAProxyMessage::starts_header(b"PROX"), None);
    assert_eq!(HAProxyMessage::starts_header(b"PROXY "), Some(true));
    assert_eq!(HAProxyMessage::starts_header(b"PROXZ"), Some(false));
    assert_eq!(HAProxyMessage::starts_header(b"\r\n\r\n\0\r\nQUIT"), None);
    assert_eq!(
        HAProxyMessage::starts_header(b"\r\n\r\n\0\r\nQUIT\n"),
        Some(true)
    );
    assert_eq!(HAProxyMessage::starts_header(b"\r\n\r\nX"), Some(false));
    assert_eq!(HAProxyMessage::starts_header(b"GET"), Some(false));
}
