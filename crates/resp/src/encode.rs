//! Encoding RESP into a `BytesMut`: one function per reply shape for native code that answers
//! commands (`write_bulk(&mut out, b"value")`), and [`RespValue::encode`] for whole values.
//!
//! Rules:
//! - Encoding never fails. Line types (simple string, error, big number) cannot carry CR or
//!   LF on the wire; those bytes are written as spaces, as redis-server does for error
//!   replies. Other content is written as given (a big number is not checked to be digits).
//! - Doubles are written in their shortest form that reads back to the same value
//!   (`1.5`, `1e300`, `inf`, `-inf`, `nan`).
//! - Functions append; they never clear `buf`.

use std::fmt::Write as _;

use bytes::{BufMut, Bytes, BytesMut};

use crate::value::RespValue;

/// Appends `+text\r\n` (a status reply such as `OK`).
pub fn write_simple(buf: &mut BytesMut, text: &[u8]) {
    write_line(buf, b'+', text);
}

/// Appends `-text\r\n` (an error reply such as `ERR unknown command`).
pub fn write_error(buf: &mut BytesMut, text: &[u8]) {
    write_line(buf, b'-', text);
}

/// Appends `:value\r\n`.
pub fn write_integer(buf: &mut BytesMut, value: i64) {
    buf.reserve(24);
    buf.put_u8(b':');
    if value < 0 {
        buf.put_u8(b'-');
    }
    put_unsigned(buf, value.unsigned_abs());
    buf.put_slice(b"\r\n");
}

/// Appends `$len\r\ndata\r\n`.
pub fn write_bulk(buf: &mut BytesMut, data: &[u8]) {
    write_header(buf, b'$', data.len());
    buf.reserve(data.len() + 2);
    buf.put_slice(data);
    buf.put_slice(b"\r\n");
}

/// Appends RESP2's null bulk string `$-1\r\n` (what `GET` answers for a missing key).
pub fn write_null_bulk(buf: &mut BytesMut) {
    buf.put_slice(b"$-1\r\n");
}

/// Appends RESP2's null array `*-1\r\n`.
pub fn write_null_array(buf: &mut BytesMut) {
    buf.put_slice(b"*-1\r\n");
}

/// Appends RESP3's null `_\r\n`.
pub fn write_null(buf: &mut BytesMut) {
    buf.put_slice(b"_\r\n");
}

/// Appends `*len\r\n`; the caller then writes the `len` elements.
pub fn write_array_header(buf: &mut BytesMut, len: usize) {
    write_header(buf, b'*', len);
}

/// Appends a type byte, a length and CRLF (`$5\r\n`, `%2\r\n`, ...).
pub(crate) fn write_header(buf: &mut BytesMut, type_byte: u8, len: usize) {
    buf.reserve(24);
    buf.put_u8(type_byte);
    put_unsigned(buf, len as u64);
    buf.put_slice(b"\r\n");
}

fn write_line(buf: &mut BytesMut, type_byte: u8, text: &[u8]) {
    buf.reserve(text.len() + 3);
    buf.put_u8(type_byte);
    if memchr::memchr2(b'\r', b'\n', text).is_none() {
        buf.put_slice(text);
    } else {
        buf.extend(
            text.iter()
                .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
        );
    }
    buf.put_slice(b"\r\n");
}

/// Appends `n` in decimal.
fn put_unsigned(buf: &mut BytesMut, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.put_slice(&digits[start..]);
}

fn put_double(buf: &mut BytesMut, value: f64) {
    if value.is_nan() {
        buf.put_slice(b"nan");
    } else if value.is_infinite() {
        buf.put_slice(if value > 0.0 { b"inf" } else { b"-inf" });
    } else {
        // Debug is the shortest round-trip form, with an exponent for extreme magnitudes.
        let _ = write!(buf, "{value:?}");
    }
}

/// Where encoded bytes go: one buffer, or (`segments` set) a list of messages in which
/// payloads of `gather` bytes or more stay the caller's `Bytes` instead of being copied.
pub(crate) struct Out<'a> {
    pub(crate) buf: &'a mut BytesMut,
    pub(crate) segments: Option<&'a mut Vec<Bytes>>,
    pub(crate) gather: usize,
}

impl Out<'_> {
    fn payload(&mut self, data: &Bytes) {
        match &mut self.segments {
            Some(segments) if data.len() >= self.gather => {
                if !self.buf.is_empty() {
                    segments.push(self.buf.split().freeze());
                }
                segments.push(data.clone());
            }
            _ => self.buf.put_slice(data),
        }
    }

    fn bulk(&mut self, type_byte: u8, data: &Bytes) {
        write_header(self.buf, type_byte, data.len());
        self.payload(data);
        self.buf.put_slice(b"\r\n");
    }

    fn pairs(&mut self, pairs: &[(RespValue, RespValue)]) {
        for (key, value) in pairs {
            self.value(key);
            self.value(value);
        }
    }

    pub(crate) fn value(&mut self, value: &RespValue) {
        use RespValue as V;
        match value {
            V::SimpleString(text) => write_simple(self.buf, text),
            V::Error(text) => write_error(self.buf, text),
            V::Integer(i) => write_integer(self.buf, *i),
            V::BulkString(data) => self.bulk(b'$', data),
            V::NullBulkString => write_null_bulk(self.buf),
            V::NullArray => write_null_array(self.buf),
            V::Null => write_null(self.buf),
            V::Boolean(b) => self.buf.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" }),
            V::Double(d) => {
                self.buf.put_u8(b',');
                put_double(self.buf, *d);
                self.buf.put_slice(b"\r\n");
            }
            V::BigNumber(digits) => write_line(self.buf, b'(', digits),
            V::BulkError(data) => self.bulk(b'!', data),
            V::VerbatimString { format, text } => {
                write_header(self.buf, b'=', text.len() + 4);
                self.buf.put_slice(format);
                self.buf.put_u8(b':');
                self.payload(text);
                self.buf.put_slice(b"\r\n");
            }
            V::Array(items) | V::Set(items) | V::Push(items) => {
                let type_byte = match value {
                    V::Array(_) => b'*',
                    V::Set(_) => b'~',
                    _ => b'>',
                };
                write_header(self.buf, type_byte, items.len());
                for item in items {
                    self.value(item);
                }
            }
            V::Map(pairs) => {
                write_header(self.buf, b'%', pairs.len());
                self.pairs(pairs);
            }
            V::Attribute { attributes, value } => {
                write_header(self.buf, b'|', attributes.len());
                self.pairs(attributes);
                self.value(value);
            }
        }
    }
}

impl RespValue {
    /// Appends this value's RESP encoding to `buf` (RESP3 types in RESP3 syntax).
    pub fn encode(&self, buf: &mut BytesMut) {
        Out {
            buf,
            segments: None,
            gather: usize::MAX,
        }
        .value(self);
    }

    /// This value's RESP encoding.
    pub fn to_bytes(&self) -> Bytes {
        let mut buf = BytesMut::new();
        self.encode(&mut buf);
        buf.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(f: impl FnOnce(&mut BytesMut)) -> Vec<u8> {
        let mut buf = BytesMut::new();
        f(&mut buf);
        buf.to_vec()
    }

    #[test]
    fn reply_helpers_write_the_resp2_shapes() {
        assert_eq!(encoded(|b| write_simple(b, b"OK")), b"+OK\r\n");
        assert_eq!(encoded(|b| write_error(b, b"ERR no")), b"-ERR no\r\n");
        assert_eq!(encoded(|b| write_integer(b, -42)), b":-42\r\n");
        assert_eq!(
            encoded(|b| write_integer(b, i64::MIN)),
            b":-9223372036854775808\r\n"
        );
        assert_eq!(encoded(|b| write_bulk(b, b"hi")), b"$2\r\nhi\r\n");
        assert_eq!(encoded(|b| write_bulk(b, b"")), b"$0\r\n\r\n");
        assert_eq!(encoded(write_null_bulk), b"$-1\r\n");
        assert_eq!(encoded(write_null_array), b"*-1\r\n");
        assert_eq!(encoded(write_null), b"_\r\n");
        assert_eq!(encoded(|b| write_array_header(b, 12)), b"*12\r\n");
    }

    #[test]
    fn line_types_never_carry_cr_or_lf() {
        assert_eq!(encoded(|b| write_error(b, b"ERR a\r\nb")), b"-ERR a  b\r\n");
        assert_eq!(encoded(|b| write_simple(b, b"x\ny")), b"+x y\r\n");
    }

    #[test]
    fn every_type_encodes_to_its_wire_form() {
        let cases: Vec<(RespValue, &[u8])> = vec![
            (RespValue::Null, b"_\r\n"),
            (RespValue::Boolean(true), b"#t\r\n"),
            (RespValue::Boolean(false), b"#f\r\n"),
            (RespValue::Double(1.5), b",1.5\r\n"),
            (RespValue::Double(1e300), b",1e300\r\n"),
            (RespValue::Double(f64::NEG_INFINITY), b",-inf\r\n"),
            (RespValue::Double(f64::NAN), b",nan\r\n"),
            (
                RespValue::BigNumber(Bytes::from_static(b"-123")),
                b"(-123\r\n",
            ),
            (
                RespValue::BulkError(Bytes::from_static(b"E x")),
                b"!3\r\nE x\r\n",
            ),
            (
                RespValue::VerbatimString {
                    format: *b"txt",
                    text: Bytes::from_static(b"hi"),
                },
                b"=6\r\ntxt:hi\r\n",
            ),
            (
                RespValue::Map(vec![(RespValue::simple("k"), RespValue::Integer(1))]),
                b"%1\r\n+k\r\n:1\r\n",
            ),
            (RespValue::Set(vec![RespValue::Null]), b"~1\r\n_\r\n"),
            (RespValue::Push(vec![]), b">0\r\n"),
            (
                RespValue::Attribute {
                    attributes: vec![(RespValue::simple("ttl"), RespValue::Integer(3))],
                    value: Box::new(RespValue::Integer(7)),
                },
                b"|1\r\n+ttl\r\n:3\r\n:7\r\n",
            ),
            (
                RespValue::command(["GET", "k"]),
                b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
            ),
        ];
        for (value, wire) in cases {
            assert_eq!(&value.to_bytes()[..], wire, "{value:?}");
        }
    }

    #[test]
    fn gathering_keeps_large_payloads_as_the_callers_bytes() {
        let big = Bytes::from(vec![b'x'; 10]);
        let value = RespValue::Array(vec![RespValue::Integer(1), RespValue::bulk(big.clone())]);
        let mut buf = BytesMut::new();
        let mut segments = Vec::new();
        Out {
            buf: &mut buf,
            segments: Some(&mut segments),
            gather: 10,
        }
        .value(&value);
        segments.push(buf.split().freeze());
        assert_eq!(segments.len(), 3);
        assert_eq!(&segments[0][..], b"*2\r\n:1\r\n$10\r\n");
        assert_eq!(segments[1].as_ptr(), big.as_ptr(), "payload not copied");
        assert_eq!(&segments[2][..], b"\r\n");
    }
}
