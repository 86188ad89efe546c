//! permessage-deflate (RFC 7692), the data path: messages compressed both ways through the
//! handler with and without context takeover, the RSV1 rules, a message compressed across
//! fragments, bombs failing with 1009, and small windows. The negotiation is in
//! deflate_negotiation.rs.

use crate::support;

use netloop_ws::bytes::BytesMut;
use netloop_ws::deflate::{Decompression, Deflater, Inflater};
use netloop_ws::extension::{
    accept_server_response, server_negotiate, DeflateConfig, Direction, PerMessageDeflate,
};
use netloop_ws::frame::{encode_frame, Frame, Opcode};
use netloop_ws::{CloseCode, WebSocketFrame, WsConfig, WsError};
use support::*;

const DEFAULT: PerMessageDeflate = PerMessageDeflate {
    server_no_context_takeover: false,
    client_no_context_takeover: false,
    server_max_window_bits: 15,
    client_max_window_bits: 15,
};

/// A masked client frame with RSV1 set as given.
fn client_frame(fin: bool, rsv1: bool, opcode: Opcode, payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(&mut out, fin, opcode, payload, Some(KEY));
    if rsv1 {
        out[0] |= 0x40;
    }
    out.to_vec()
}

/// `n` words drawn (deterministically) from a small vocabulary: compressible, not trivially.
fn compressible(n: usize) -> String {
    const WORDS: [&str; 16] = [
        "alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta ", "iota ",
        "kappa ", "lambda ", "mu ", "nu ", "xi ", "omicron ", "pi ",
    ];
    let mut x = 0x2545_f491u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            WORDS[(x % 16) as usize]
        })
        .collect()
}

fn deflate_config() -> WsConfig {
    WsConfig {
        permessage_deflate: Some(DeflateConfig::default()),
        ..WsConfig::default()
    }
}

#[test]
fn compressed_messages_from_the_client_are_inflated_with_and_without_context_takeover() {
    for no_ctx in [false, true] {
        let params = PerMessageDeflate {
            client_no_context_takeover: no_ctx,
            ..DEFAULT
        };
        let ws = Ws::deflating(deflate_config(), params);
        let mut client = Deflater::new(params.client(), 6);
        let words = compressible(500);
        let bytes = vec![7u8; 3000];
        let mut sizes = Vec::new();
        for _ in 0..2 {
            let t = client.compress(words.as_bytes()).unwrap();
            sizes.push(t.len());
            ws.feed(&client_frame(true, true, Opcode::Text, &t));
            let b = client.compress(&bytes).unwrap();
            ws.feed(&client_frame(true, true, Opcode::Binary, &b));
        }
        // An uncompressed message between compressed ones.
        ws.feed(&text("plain"));
        assert_eq!(client.has_state(), !no_ctx);
        let got = ws.received();
        assert_eq!(
            got,
            vec![
                WebSocketFrame::text(words.clone()),
                WebSocketFrame::binary(bytes.clone()),
                WebSocketFrame::text(words.clone()),
                WebSocketFrame::binary(bytes.clone()),
                WebSocketFrame::text("plain"),
            ]
        );
        if no_ctx {
            assert_eq!(sizes[0], sizes[1], "each message starts afresh");
        } else {
            assert!(sizes[1] < sizes[0] / 4, "the window is kept: {sizes:?}");
        }
        assert!(ws.is_open());
        assert_eq!(ws.error(), None);
    }
}

#[test]
fn messages_over_the_threshold_go_out_compressed_and_others_plain() {
    for no_ctx in [false, true] {
        let params = PerMessageDeflate {
            server_no_context_takeover: no_ctx,
            ..DEFAULT
        };
        let ws = Ws::deflating(deflate_config(), params);
        let long = compressible(1000);
        ws.send(WebSocketFrame::text(long.clone()));
        ws.send(WebSocketFrame::text(long.clone()));
        ws.send(WebSocketFrame::text("short"));
        ws.send(WebSocketFrame::binary(vec![1u8; 4096]));
        ws.send(netloop_transport::Message::user(WebSocketFrame::Ping(
            vec![0u8; 100].into(),
        )));
        let sent = ws.sent();
        let rsv1: Vec<bool> = sent.iter().map(|f| f.rsv1).collect();
        assert_eq!(rsv1, [true, true, false, true, false]);
        let mut peer = Inflater::new(params.server());
        let first = peer.inflate(&sent[0].payload, true, 1 << 20).unwrap();
        let second = peer.inflate(&sent[1].payload, true, 1 << 20).unwrap();
        assert_eq!(
            (&first[..], &second[..]),
            (long.as_bytes(), long.as_bytes())
        );
        assert_eq!(&sent[2].payload[..], b"short");
        let binary = peer.inflate(&sent[3].payload, true, 1 << 20).unwrap();
        assert_eq!(&binary[..], &[1u8; 4096][..]);
        assert!(sent[0].payload.len() < long.len() / 2);
        if no_ctx {
            assert_eq!(sent[0].payload, sent[1].payload, "no window kept");
        } else {
            assert!(sent[1].payload.len() < sent[0].payload.len());
        }
    }
}

#[test]
fn a_compressed_message_may_span_fragments_with_control_frames_between() {
    for aggregate in [true, false] {
        let config = WsConfig {
            aggregate,
            ..deflate_config()
        };
        let ws = Ws::deflating(config, DEFAULT);
        let words = compressible(3000);
        let data = Deflater::new(DEFAULT.client(), 6)
            .compress(words.as_bytes())
            .unwrap();
        let third = data.len() / 3;
        let mut input = client_frame(false, true, Opcode::Text, &data[..third]);
        input.extend(client_frame(true, false, Opcode::Ping, b"p"));
        input.extend(client_frame(
            false,
            false,
            Opcode::Continuation,
            &data[third..2 * third],
        ));
        input.extend(client_frame(
            true,
            false,
            Opcode::Continuation,
            &data[2 * third..],
        ));
        // Cut the stream at every 7th byte, as reads would (compressed bytes still arriving
        // are not checked as text: only the inflated message is).
        for chunk in input.chunks(7) {
            ws.feed(chunk);
        }
        let got = ws.received();
        let joined: Vec<u8> = got
            .iter()
            .flat_map(|m| match m {
                WebSocketFrame::Text(d) => d.to_vec(),
                WebSocketFrame::Fragment(f) => {
                    assert!(f.text);
                    f.data.to_vec()
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(joined, words.as_bytes(), "aggregate {aggregate}");
        assert_eq!(ws.error(), None);
        assert_eq!(
            ws.sent().iter().map(|f| f.opcode).collect::<Vec<_>>(),
            [Opcode::Pong]
        );
    }
}

fn fails(ws: &Ws, bad: &[u8], code: u16, error: &str) {
    let mut input = text("before");
    input.extend_from_slice(bad);
    input.extend_from_slice(&text("after"));
    ws.feed(&input);
    assert_eq!(ws.received(), [WebSocketFrame::text("before")], "{error}");
    assert_eq!(ws.error().as_deref(), Some(error));
    assert_eq!(ws.sent_close(), Some(CloseCode(code)), "{error}");
    assert!(!ws.is_open(), "{error}: the connection ends");
}

#[test]
fn rsv1_is_refused_where_permessage_deflate_gives_it_no_meaning() {
    let compressed = Deflater::new(DEFAULT.client(), 6)
        .compress(b"hello")
        .unwrap();
    // Not agreed: RSV1 is a reserved bit.
    fails(
        &Ws::new(WsConfig::default()),
        &client_frame(true, true, Opcode::Text, &compressed),
        1002,
        "ERR_WS_RESERVED_BITS",
    );
    let agreed = || Ws::deflating(deflate_config(), DEFAULT);
    for bad in [
        client_frame(true, true, Opcode::Ping, b""),
        client_frame(true, true, Opcode::Pong, b""),
        client_frame(true, true, Opcode::Close, &1000u16.to_be_bytes()),
        [
            client_frame(false, true, Opcode::Text, &compressed),
            client_frame(true, true, Opcode::Continuation, b""),
        ]
        .concat(),
        {
            let mut rsv2 = client_frame(true, false, Opcode::Text, b"x");
            rsv2[0] |= 0x20;
            rsv2
        },
    ] {
        fails(&agreed(), &bad, 1002, "ERR_WS_RESERVED_BITS");
    }
}

#[test]
fn data_that_does_not_inflate_fails_with_1007() {
    let ws = Ws::deflating(deflate_config(), DEFAULT);
    fails(
        &ws,
        &client_frame(true, true, Opcode::Binary, &[0xff, 0xff, 0xff, 0xff]),
        1007,
        "ERR_WS_INVALID_COMPRESSED_DATA",
    );
}

#[test]
fn a_deflate_bomb_fails_with_1009() {
    let config = WsConfig {
        max_frame_size: 1 << 20,
        max_message_size: 1 << 20,
        ..deflate_config()
    };
    // 16 MiB of zeros deflate to about 16 KiB: one frame, far under max_frame_size.
    let mut deflater = Deflater::new(DEFAULT.client(), 9);
    let zeros = vec![0u8; 16 << 20];
    let bomb = deflater.compress(&zeros).unwrap();
    assert!(bomb.len() < 32 << 10, "{}", bomb.len());
    let ws = Ws::deflating(config.clone(), DEFAULT);
    fails(
        &ws,
        &client_frame(true, true, Opcode::Binary, &bomb),
        1009,
        "ERR_WS_MESSAGE_TOO_LARGE",
    );
    // Spread over fragments (each under the limit inflated), the total counts.
    let stream = Deflater::new(DEFAULT.client(), 9)
        .compress(&vec![0u8; 1200 << 10])
        .unwrap();
    let (a, b) = stream.split_at(stream.len() / 2);
    let mut spread = client_frame(false, true, Opcode::Binary, a);
    spread.extend(client_frame(true, false, Opcode::Continuation, b));
    let ws = Ws::deflating(config, DEFAULT);
    fails(&ws, &spread, 1009, "ERR_WS_MESSAGE_TOO_LARGE");
}

#[test]
fn the_inflater_never_produces_more_than_the_limit_plus_one_byte() {
    let bomb = Deflater::new(DEFAULT.client(), 9)
        .compress(&vec![0u8; 4 << 20])
        .unwrap();
    for limit in [0usize, 1, 1000, 16 << 10, (1 << 20) + 3] {
        let mut inflater = Inflater::new(DEFAULT.client());
        match inflater.inflate(&bomb, true, limit) {
            Err(WsError::MessageTooLarge { length, max }) => {
                assert_eq!(max, limit);
                assert_eq!(length, limit as u64 + 1, "stopped at the first byte over");
            }
            other => panic!("limit {limit}: {other:?}"),
        }
        assert!(!inflater.has_state(), "a failed inflater drops its state");
    }
    // At the limit exactly, it passes.
    let exact = Deflater::new(DEFAULT.client(), 6)
        .compress(&[5u8; 5000])
        .unwrap();
    let out = Inflater::new(DEFAULT.client())
        .inflate(&exact, true, 5000)
        .unwrap();
    assert_eq!(out.len(), 5000);
}

#[test]
fn state_is_freed_between_messages_without_context_takeover() {
    let no_ctx = Direction {
        no_context_takeover: true,
        window_bits: 15,
    };
    let mut d = Deflater::new(no_ctx, 6);
    let data = d.compress(compressible(400).as_bytes()).unwrap();
    assert!(!d.has_state());
    let mut i = Decompression::new(no_ctx, 1 << 20);
    let frame = Frame {
        fin: true,
        rsv1: true,
        opcode: Opcode::Text,
        payload: data.into(),
    };
    let out = i.frame(frame, false).unwrap();
    assert_eq!(&out.payload[..], compressible(400).as_bytes());
    assert!(!out.rsv1);
    assert!(!i.has_state());
    let kept = Direction {
        no_context_takeover: false,
        window_bits: 15,
    };
    let mut d = Deflater::new(kept, 6);
    d.compress(b"x").unwrap();
    assert!(d.has_state());
}

#[test]
fn small_windows_compress_within_their_window() {
    // A stream written with a 2^9 window inflates with the same data; with matches further
    // back than 512 bytes unavailable, repeated 600-byte blocks compress worse than at 2^15.
    let block: Vec<u8> = (0..600u32).map(|i| (i * 7919 % 251) as u8).collect();
    let data = block.repeat(20);
    let size = |bits| {
        let dir = Direction {
            no_context_takeover: true,
            window_bits: bits,
        };
        let out = Deflater::new(dir, 6).compress(&data).unwrap();
        let back = Inflater::new(dir).inflate(&out, true, 1 << 20).unwrap();
        assert_eq!(&back[..], &data[..]);
        out.len()
    };
    let (small, large) = (size(9), size(15));
    assert!(small > large * 3, "2^9: {small} bytes, 2^15: {large}");
}

#[test]
fn a_window_of_2_pow_8_for_this_end_is_agreed_and_messages_go_uncompressed() {
    let agreed = server_negotiate(
        &DeflateConfig::default(),
        [&b"permessage-deflate; server_max_window_bits=8"[..]],
    )
    .unwrap();
    assert_eq!(agreed.params.server_max_window_bits, 8);
    let ws = Ws::deflating(deflate_config(), agreed.params);
    let long = compressible(1000);
    ws.send(WebSocketFrame::text(long.clone()));
    let sent = ws.sent();
    assert!(
        !sent[0].rsv1,
        "never compressed with a window zlib cannot use"
    );
    assert_eq!(&sent[0].payload[..], long.as_bytes());
    // The client's compressed messages are still inflated.
    let data = Deflater::new(agreed.params.client(), 6)
        .compress(long.as_bytes())
        .unwrap();
    ws.feed(&client_frame(true, true, Opcode::Text, &data));
    assert_eq!(ws.received(), [WebSocketFrame::text(long.clone())]);
    // A client told to use 8 does the same.
    let client = accept_server_response(
        &DeflateConfig::default(),
        [&b"permessage-deflate; client_max_window_bits=8"[..]],
    )
    .unwrap()
    .unwrap();
    assert_eq!(
        Deflater::new(client.client(), 6).compress(long.as_bytes()),
        None
    );
}

#[test]
fn an_unbounded_limit_does_not_overflow() {
    let data = Deflater::new(DEFAULT.client(), 6)
        .compress(&[1u8; 3000])
        .unwrap();
    let out = Inflater::new(DEFAULT.client())
        .inflate(&data, true, usize::MAX)
        .unwrap();
    assert_eq!(out.len(), 3000);
}
