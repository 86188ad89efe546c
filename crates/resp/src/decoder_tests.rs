//! Behaviour of the pure `RespDecoder`: every type, inline commands, limits, malformed
//! input, failure, incremental decoding.

use bytes::{Bytes, BytesMut};

use crate::{RespConfig, RespDecoder, RespError, RespValue};

fn decoder(config: RespConfig) -> RespDecoder {
    RespDecoder::new(config).expect("valid config")
}

/// Decodes `input` in one read: the values, then the error if one stopped the decoder.
fn decode(config: RespConfig, input: &[u8]) -> (Vec<RespValue>, Option<RespError>) {
    let mut d = decoder(config);
    let mut buf = BytesMut::from(input);
    let mut out = Vec::new();
    let error = d.decode_into(&mut buf, &mut out).err();
    (out, error)
}

fn one(input: &[u8]) -> RespValue {
    let (values, error) = decode(RespConfig::default(), input);
    assert_eq!(error, None, "{:?}", String::from_utf8_lossy(input));
    assert_eq!(values.len(), 1, "{:?}", String::from_utf8_lossy(input));
    values.into_iter().next().unwrap()
}

fn error_of(config: RespConfig, input: &[u8]) -> &'static str {
    match decode(config, input) {
        (_, Some(error)) => error.code(),
        (values, None) => panic!("{:?} decoded to {values:?}", String::from_utf8_lossy(input)),
    }
}

fn b(s: &'static str) -> Bytes {
    Bytes::from_static(s.as_bytes())
}

#[test]
fn every_resp2_type_decodes() {
    assert_eq!(one(b"+OK\r\n"), RespValue::SimpleString(b("OK")));
    assert_eq!(one(b"+\r\n"), RespValue::SimpleString(b("")));
    assert_eq!(one(b"-ERR bad\r\n"), RespValue::Error(b("ERR bad")));
    assert_eq!(one(b":-17\r\n"), RespValue::Integer(-17));
    assert_eq!(
        one(b"$5\r\nhe\r\no\r\n"),
        RespValue::BulkString(b("he\r\no"))
    );
    assert_eq!(one(b"$0\r\n\r\n"), RespValue::BulkString(b("")));
    assert_eq!(one(b"$-1\r\n"), RespValue::NullBulkString);
    assert_eq!(one(b"*-1\r\n"), RespValue::NullArray);
    assert_eq!(one(b"*0\r\n"), RespValue::Array(vec![]));
    assert_eq!(
        one(b"*3\r\n:1\r\n*1\r\n+a\r\n$-1\r\n"),
        RespValue::Array(vec![
            RespValue::Integer(1),
            RespValue::Array(vec![RespValue::SimpleString(b("a"))]),
            RespValue::NullBulkString,
        ])
    );
}

#[test]
fn every_resp3_type_decodes() {
    assert_eq!(one(b"_\r\n"), RespValue::Null);
    assert_eq!(one(b"#t\r\n"), RespValue::Boolean(true));
    assert_eq!(one(b"#f\r\n"), RespValue::Boolean(false));
    assert_eq!(one(b",-1.25e2\r\n"), RespValue::Double(-125.0));
    assert_eq!(one(b",inf\r\n"), RespValue::Double(f64::INFINITY));
    assert_eq!(one(b",nan\r\n"), RespValue::Double(f64::NAN));
    assert_eq!(
        one(b"(-12345678901234567890123\r\n"),
        RespValue::BigNumber(b("-12345678901234567890123"))
    );
    assert_eq!(
        one(b"!8\r\nERR a\r\nb\r\n"),
        RespValue::BulkError(b("ERR a\r\nb"))
    );
    assert_eq!(
        one(b"=8\r\nmkd:# hi\r\n"),
        RespValue::VerbatimString {
            format: *b"mkd",
            text: b("# hi")
        }
    );
    assert_eq!(
        one(b"%2\r\n+a\r\n:1\r\n$1\r\nb\r\n_\r\n"),
        RespValue::Map(vec![
            (RespValue::SimpleString(b("a")), RespValue::Integer(1)),
            (RespValue::BulkString(b("b")), RespValue::Null),
        ])
    );
    assert_eq!(one(b"%0\r\n"), RespValue::Map(vec![]));
    assert_eq!(
        one(b"~2\r\n#t\r\n#f\r\n"),
        RespValue::Set(vec![RespValue::Boolean(true), RespValue::Boolean(false)])
    );
    assert_eq!(
        one(b">2\r\n+message\r\n$2\r\nhi\r\n"),
        RespValue::Push(vec![
            RespValue::SimpleString(b("message")),
            RespValue::BulkString(b("hi"))
        ])
    );
}

#[test]
fn an_attribute_wraps_the_value_after_it_and_is_not_an_element_of_its_own() {
    let value = one(b"*2\r\n|1\r\n+ttl\r\n:3600\r\n:1\r\n:2\r\n");
    assert_eq!(
        value,
        RespValue::Array(vec![
            RespValue::Attribute {
                attributes: vec![(RespValue::SimpleString(b("ttl")), RespValue::Integer(3600))],
                value: Box::new(RespValue::Integer(1)),
            },
            RespValue::Integer(2),
        ])
    );
    assert_eq!(
        one(b"|0\r\n_\r\n"),
        RespValue::Attribute {
            attributes: vec![],
            value: Box::new(RespValue::Null)
        }
    );
}

#[test]
fn values_round_trip_through_the_encoder() {
    for wire in [
        &b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"[..],
        b"%1\r\n~1\r\n,1.5\r\n>1\r\n(7\r\n",
        b"|1\r\n+a\r\n#t\r\n=6\r\ntxt:hi\r\n",
        b"!1\r\nE\r\n",
        b"*2\r\n*-1\r\n$-1\r\n",
    ] {
        assert_eq!(&one(wire).to_bytes()[..], wire);
    }
}

#[test]
fn bulk_payloads_are_views_of_the_read_buffer() {
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"[..]);
    let start = buf.as_ptr() as usize;
    let end = start + buf.len();
    let value = d.decode(&mut buf).unwrap().unwrap();
    for arg in value.command_args().unwrap() {
        let at = arg.as_ptr() as usize;
        assert!(at >= start && at < end, "argument {arg:?} was copied");
    }
}

#[test]
fn inline_commands_split_like_redis_server() {
    let (values, error) = decode(
        RespConfig::default(),
        b"PING\r\nSET a 1\n  \r\nECHO \"x y\"\r\n",
    );
    assert_eq!(error, None);
    assert_eq!(
        values,
        [
            RespValue::command(["PING"]),
            RespValue::command(["SET", "a", "1"]),
            RespValue::command(["ECHO", "x y"]),
        ]
    );
    assert_eq!(
        error_of(RespConfig::default(), b"SET \"a\r\n"),
        "ERR_RESP_BAD_INLINE"
    );
}

#[test]
fn inline_commands_are_only_top_level_and_can_be_turned_off() {
    assert_eq!(
        error_of(RespConfig::default(), b"*1\r\nPING\r\n"),
        "ERR_RESP_BAD_TYPE"
    );
    let strict = RespConfig {
        inline_commands: false,
        ..RespConfig::default()
    };
    assert_eq!(error_of(strict.clone(), b"PING\r\n"), "ERR_RESP_BAD_TYPE");
    assert_eq!(error_of(strict, b"\r\n"), "ERR_RESP_BAD_TYPE");
}

#[test]
fn without_resp3_its_type_bytes_are_rejected_or_inline() {
    let resp2 = RespConfig {
        resp3: false,
        inline_commands: false,
        ..RespConfig::default()
    };
    for wire in [
        &b"_\r\n"[..],
        b"#t\r\n",
        b",1\r\n",
        b"%0\r\n",
        b"*1\r\n~0\r\n",
    ] {
        assert_eq!(error_of(resp2.clone(), wire), "ERR_RESP_BAD_TYPE");
    }
    let resp2_inline = RespConfig {
        resp3: false,
        ..RespConfig::default()
    };
    let (values, _) = decode(resp2_inline, b"#t\r\n");
    assert_eq!(values, [RespValue::command(["#t"])]);
}

#[test]
fn pipelined_commands_in_one_read_all_decode_in_order() {
    let mut wire = BytesMut::new();
    for i in 0..16 {
        RespValue::command(["SET".to_string(), format!("k{i}"), "v".to_string()]).encode(&mut wire);
        wire.extend_from_slice(format!("GET k{i}\r\n").as_bytes());
    }
    let (values, error) = decode(RespConfig::default(), &wire);
    assert_eq!(error, None);
    assert_eq!(values.len(), 32);
    assert_eq!(values[30], RespValue::command(["SET", "k15", "v"]));
    assert_eq!(values[31], RespValue::command(["GET", "k15"]));
}

#[test]
fn limits_fail_with_their_codes() {
    let small = RespConfig {
        max_bulk_length: 4,
        max_array_length: 2,
        max_nesting_depth: 2,
        max_inline_length: 32,
        ..RespConfig::default()
    };
    let long_line = format!("+{}\r\n", "x".repeat(33));
    let long_inline = format!("GET {}\r\n", "k".repeat(29));
    let cases: &[(&[u8], &str)] = &[
        (b"$5\r\nhello\r\n", "ERR_RESP_BULK_TOO_LONG"),
        (b"!5\r\n", "ERR_RESP_BULK_TOO_LONG"),
        (b"$99999999999999999999\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"*3\r\n", "ERR_RESP_ARRAY_TOO_LONG"),
        (b"%3\r\n", "ERR_RESP_ARRAY_TOO_LONG"),
        (b"*1\r\n*1\r\n*0\r\n", "ERR_RESP_TOO_DEEP"),
        (b"*1\r\n|0\r\n*0\r\n", "ERR_RESP_TOO_DEEP"),
        (long_line.as_bytes(), "ERR_RESP_LINE_TOO_LONG"),
        (long_inline.as_bytes(), "ERR_RESP_INLINE_TOO_LONG"),
    ];
    for (wire, code) in cases {
        assert_eq!(
            error_of(small.clone(), wire),
            *code,
            "{:?}",
            String::from_utf8_lossy(wire)
        );
    }
    let scalars_only = RespConfig {
        max_nesting_depth: 0,
        ..RespConfig::default()
    };
    assert_eq!(
        error_of(scalars_only.clone(), b"*0\r\n"),
        "ERR_RESP_TOO_DEEP"
    );
    assert_eq!(
        error_of(scalars_only.clone(), b"PING\r\n"),
        "ERR_RESP_TOO_DEEP"
    );
    assert_eq!(decode(scalars_only, b":1\r\n").0, [RespValue::Integer(1)]);
    // At the limit is fine.
    let (values, error) = decode(small, b"*2\r\n*1\r\n$4\r\nabcd\r\n:1\r\n");
    assert_eq!((values.len(), error), (1, None));
}

#[test]
fn line_limits_fire_before_the_line_ends() {
    let config = RespConfig {
        max_inline_length: 32,
        ..RespConfig::default()
    };
    for (prefix, code) in [
        (&b"+"[..], "ERR_RESP_LINE_TOO_LONG"),
        (b"GET ", "ERR_RESP_INLINE_TOO_LONG"),
    ] {
        let mut d = decoder(config.clone());
        let mut buf = BytesMut::from(prefix);
        buf.extend_from_slice(&[b'a'; 40]);
        assert_eq!(d.decode(&mut buf).map_err(|e| e.code()), Err(code));
    }
}

#[test]
fn malformed_input_fails_with_its_code() {
    let cases: &[(&[u8], &str)] = &[
        (b"*1\r\n?\r\n", "ERR_RESP_BAD_TYPE"),
        (b"$x\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"$-2\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"$\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"*-2\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"%-1\r\n", "ERR_RESP_BAD_LENGTH"),
        (b"!-1\r\n", "ERR_RESP_BAD_LENGTH"),
        (b":1.5\r\n", "ERR_RESP_BAD_VALUE"),
        (b":99999999999999999999\r\n", "ERR_RESP_BAD_VALUE"),
        (b"#x\r\n", "ERR_RESP_BAD_VALUE"),
        (b"_x\r\n", "ERR_RESP_BAD_VALUE"),
        (b",one\r\n", "ERR_RESP_BAD_VALUE"),
        (b"(12a\r\n", "ERR_RESP_BAD_VALUE"),
        (b"=3\r\ntxt\r\n", "ERR_RESP_BAD_VALUE"),
        (b"=5\r\ntxt-x\r\n", "ERR_RESP_BAD_VALUE"),
        (b"+OK\n", "ERR_RESP_MISSING_CRLF"),
        (b"+OK\rX\n", "ERR_RESP_MISSING_CRLF"),
        (b"$2\r\nabc\r\n", "ERR_RESP_MISSING_CRLF"),
        (b"$2\r\nab\n\n", "ERR_RESP_MISSING_CRLF"),
    ];
    for (wire, code) in cases {
        assert_eq!(
            error_of(RespConfig::default(), wire),
            *code,
            "{:?}",
            String::from_utf8_lossy(wire)
        );
    }
}

#[test]
fn after_an_error_the_decoder_discards_everything_until_reset() {
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::from(&b"+a\r\n$x\r\n+b\r\n"[..]);
    assert_eq!(
        d.decode(&mut buf),
        Ok(Some(RespValue::SimpleString(b("a"))))
    );
    assert_eq!(
        d.decode(&mut buf).map_err(|e| e.code()),
        Err("ERR_RESP_BAD_LENGTH")
    );
    assert!(d.is_failed());
    assert!(buf.is_empty(), "the rest is dropped");
    buf.extend_from_slice(b"+c\r\n");
    assert_eq!(d.decode(&mut buf), Ok(None));
    assert!(buf.is_empty());
    d.reset();
    buf.extend_from_slice(b"+d\r\n");
    assert_eq!(
        d.decode(&mut buf),
        Ok(Some(RespValue::SimpleString(b("d"))))
    );
}

#[test]
fn huge_declared_counts_reserve_nothing_up_front() {
    // 2^31-1 entries would be 80 GiB if reserved: the decoder reserves a bounded amount.
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::from(&b"*2147483647\r\n:1\r\n%2147483647\r\n"[..]);
    assert_eq!(d.decode(&mut buf), Ok(None));
    assert!(d.is_mid_value());
    let mut buf = BytesMut::from(&b"$536870912\r\nabc"[..]);
    let mut d = decoder(RespConfig::default());
    assert_eq!(d.decode(&mut buf), Ok(None));
    assert!(
        buf.capacity() < 1024,
        "a declared bulk length reserves nothing"
    );
}

/// Samples covering every type and the inline syntax, for the split tests.
pub(crate) const SAMPLES: &[&[u8]] = &[
    b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
    b"PING\r\nSET \"a b\" 'c'\nGET x\r\n",
    b"+OK\r\n-ERR x\r\n:123\r\n$-1\r\n*-1\r\n$0\r\n\r\n",
    b"_\r\n#t\r\n,3.5\r\n(99\r\n!3\r\nERR\r\n=7\r\ntxt:abc\r\n",
    b"%1\r\n*2\r\n:1\r\n:2\r\n~1\r\n>0\r\n|1\r\n+k\r\n+v\r\n*1\r\n$2\r\n\r\n\r\n",
    b"*2\r\n$4\r\nab\r\n\r\n$2\r\nxx\r\n+tail\r\n$2\r\nabc\r\n",
    b"*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
];

#[test]
fn a_value_split_at_any_byte_boundary_decodes_the_same() {
    for sample in SAMPLES {
        let expected = decode(RespConfig::default(), sample);
        for cut in 0..=sample.len() {
            let mut d = decoder(RespConfig::default());
            let mut buf = BytesMut::new();
            let mut out = Vec::new();
            let mut error = None;
            for piece in [&sample[..cut], &sample[cut..]] {
                buf.extend_from_slice(piece);
                if let Err(e) = d.decode_into(&mut buf, &mut out) {
                    error = Some(e);
                }
            }
            assert_eq!(
                (out, error),
                expected,
                "{:?} cut at {cut}",
                String::from_utf8_lossy(sample)
            );
        }
        // And byte by byte.
        let mut d = decoder(RespConfig::default());
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        let mut error = None;
        for byte in sample.iter() {
            buf.extend_from_slice(&[*byte]);
            if let Err(e) = d.decode_into(&mut buf, &mut out) {
                error = Some(e);
            }
        }
        assert_eq!(
            (out, error),
            expected,
            "{:?} byte by byte",
            String::from_utf8_lossy(sample)
        );
    }
}

/// Feeds `wire` in pieces of `piece` bytes; returns the values and the decoder's work count.
fn feed_in_pieces(wire: &[u8], piece: usize) -> (Vec<RespValue>, usize, usize) {
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut reads = 0;
    for chunk in wire.chunks(piece) {
        buf.extend_from_slice(chunk);
        d.decode_into(&mut buf, &mut out).expect("valid input");
        reads += 1;
    }
    (out, d.work, reads)
}

#[test]
fn a_one_mib_bulk_string_in_tiny_pieces_costs_constant_work_per_read() {
    let payload = vec![b'z'; 1 << 20];
    let wire = RespValue::command([b"SET".to_vec(), b"k".to_vec(), payload.clone()]).to_bytes();
    for piece in [1, 4096] {
        let (values, work, reads) = feed_in_pieces(&wire, piece);
        assert_eq!(
            values,
            [RespValue::command([
                b"SET".to_vec(),
                b"k".to_vec(),
                payload.clone()
            ])]
        );
        // One step per read that ends inside the payload, plus the headers' few bytes.
        assert!(
            work <= 3 * reads + 64,
            "piece {piece}: work {work} for {reads} reads"
        );
    }
}

#[test]
fn long_lines_in_tiny_pieces_are_scanned_once() {
    let line = "x".repeat(60_000);
    for wire in [format!("+{line}\r\n"), format!("ECHO {line}\r\n")] {
        let (values, work, reads) = feed_in_pieces(wire.as_bytes(), 1);
        assert_eq!(values.len(), 1);
        assert!(work <= 3 * reads, "work {work} for {reads} reads");
    }
}

#[test]
fn decode_command_takes_only_what_decode_would_give_as_the_same_command() {
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"[..]);
    let command = d.decode_command(&mut buf).expect("a whole command");
    assert_eq!(command.to_value(), RespValue::command(["SET", "k", ""]));
    assert_eq!(command.frame().len(), 26);
    assert!(buf.is_empty());
    // Arguments are views of the read buffer, as decode's are.
    let frame = command.frame().as_ptr() as usize;
    let arg = command.arg_bytes().nth(1).unwrap();
    assert!((frame..frame + 26).contains(&(arg.as_ptr() as usize)));
}

#[test]
fn decode_command_declines_without_consuming_and_decode_reports_the_error() {
    let tight = RespConfig {
        max_bulk_length: 3,
        max_array_length: 2,
        ..RespConfig::default()
    };
    let flat = RespConfig {
        max_nesting_depth: 0,
        ..RespConfig::default()
    };
    let cases: [(&RespConfig, &[u8], Option<&str>); 10] = [
        (
            &tight,
            b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
            Some("ERR_RESP_ARRAY_TOO_LONG"),
        ),
        (
            &tight,
            b"*1\r\n$4\r\nPING\r\n",
            Some("ERR_RESP_BULK_TOO_LONG"),
        ),
        (&flat, b"*1\r\n$4\r\nPING\r\n", Some("ERR_RESP_TOO_DEEP")),
        (
            &RespConfig::default(),
            b"*1\r\n$4\r\nPINGxx",
            Some("ERR_RESP_MISSING_CRLF"),
        ),
        (
            &RespConfig::default(),
            b"*1\r\n$x\r\n",
            Some("ERR_RESP_BAD_LENGTH"),
        ),
        (&RespConfig::default(), b"*1\r\n$4\r\nPI", None),
        (&RespConfig::default(), b"*2\r\n$4\r\nPING\r\n:1\r\n", None),
        (&RespConfig::default(), b"*0\r\n", None),
        (&RespConfig::default(), b"*-1\r\n", None),
        (&RespConfig::default(), b"+OK\r\n", None),
    ];
    for (config, input, error) in cases {
        let mut d = decoder(config.clone());
        let mut buf = BytesMut::from(input);
        assert!(
            d.decode_command(&mut buf).is_none(),
            "{:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(&buf[..], input, "nothing consumed");
        let got = d.decode(&mut buf);
        assert_eq!(
            got.as_ref().err().map(RespError::code),
            error,
            "{:?}: {got:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn decode_command_waits_while_decode_is_inside_a_value() {
    let mut d = decoder(RespConfig::default());
    let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n"[..]);
    assert!(d.decode_command(&mut buf).is_none());
    assert_eq!(d.decode(&mut buf), Ok(None)); // the array's first part taken
    buf.extend_from_slice(b"*1\r\n$4\r\nPING\r\n"); // what follows looks like a command
    assert!(d.decode_command(&mut buf).is_none(), "inside the GET");
    let nested = RespValue::Array(vec![RespValue::bulk("GET"), RespValue::command(["PING"])]);
    assert_eq!(d.decode(&mut buf), Ok(Some(nested)));
}
