//! RESP values across the JS boundary in a compact tag format that both sides walk without
//! parsing text (src/resp.ts reads and writes the same format):
//!
//! ```text
//! value  := tag:u8 body
//! bytes  := len:u32le data[len]                 simple, error, bulk, big number, bulk error
//! int    := i64le                               integer
//! double := f64le                               double
//! bool   := u8                                  boolean
//! verb   := format[3] bytes                     verbatim string
//! agg    := count:u32le value[count]            array, set, push (map: 2*count values)
//! attr   := count:u32le value[2*count] value    attribute pairs, then the annotated value
//! ```
//!
//! Reads: a decoded `RespValue` is written into the delivery's byte arena, so JS makes each
//! bulk string a view of that one arena (no copy per argument). Writes: JS writes replies in
//! this format into the op arena; [`to_wire`] makes the RESP bytes natively.

use bytes::{Bytes, BytesMut};
use netloop_resp::{encode, RespCommand, RespCommands, RespValue};

use crate::protocol::RespTag;

const SIMPLE: u8 = RespTag::Simple as u8;
const ERROR: u8 = RespTag::Error as u8;
const INTEGER: u8 = RespTag::Integer as u8;
const BULK: u8 = RespTag::Bulk as u8;
const NULL_BULK: u8 = RespTag::NullBulk as u8;
const ARRAY: u8 = RespTag::Array as u8;
const NULL_ARRAY: u8 = RespTag::NullArray as u8;
const NULL: u8 = RespTag::Null as u8;
const BOOLEAN: u8 = RespTag::Boolean as u8;
const DOUBLE: u8 = RespTag::Double as u8;
const BIG_NUMBER: u8 = RespTag::BigNumber as u8;
const BULK_ERROR: u8 = RespTag::BulkError as u8;
const VERBATIM: u8 = RespTag::Verbatim as u8;
const MAP: u8 = RespTag::Map as u8;
const SET: u8 = RespTag::Set as u8;
const ATTRIBUTE: u8 = RespTag::Attribute as u8;
const PUSH: u8 = RespTag::Push as u8;

fn bytes(out: &mut Vec<u8>, tag: u8, b: &[u8]) {
    out.push(tag);
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn count(out: &mut Vec<u8>, tag: u8, n: usize) {
    out.push(tag);
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

/// Appends a command frame in the tag format: the array of bulk strings `put` would write for
/// its value, straight from the frame.
pub fn put_command(out: &mut Vec<u8>, command: &RespCommand) {
    // The tag form is never longer than the frame (see `put_commands`).
    out.reserve(command.frame().len());
    count(out, ARRAY, command.len());
    for arg in command.args() {
        bytes(out, BULK, arg);
    }
}

/// Appends the commands of a run in the tag format, back to back: what `put_command` writes
/// for each, with one reservation for all. The tag form is never longer than the wire form
/// (a command's header is 5 bytes against at least 4, an argument's 5 against at least 6),
/// so the frame's length is enough.
pub fn put_commands(out: &mut Vec<u8>, run: &RespCommands) {
    out.reserve(run.frame().len());
    run.for_each(|args| {
        count(out, ARRAY, args.len());
        for arg in args {
            bytes(out, BULK, arg);
        }
    });
}

/// The length of the tag form of each command of `run`, in order (what `put_commands`
/// writes for it).
pub fn command_tag_lengths(run: &RespCommands) -> impl Iterator<Item = usize> + '_ {
    run.iter()
        .map(|args| 5 + args.map(|a| 5 + a.len()).sum::<usize>())
}

/// Appends `v` in the tag format.
pub fn put(out: &mut Vec<u8>, v: &RespValue) {
    match v {
        RespValue::SimpleString(b) => bytes(out, SIMPLE, b),
        RespValue::Error(b) => bytes(out, ERROR, b),
        RespValue::Integer(i) => {
            out.push(INTEGER);
            out.extend_from_slice(&i.to_le_bytes());
        }
        RespValue::BulkString(b) => bytes(out, BULK, b),
        RespValue::NullBulkString => out.push(NULL_BULK),
        RespValue::Array(items) => {
            count(out, ARRAY, items.len());
            items.iter().for_each(|i| put(out, i));
        }
        RespValue::NullArray => out.push(NULL_ARRAY),
        RespValue::Null => out.push(NULL),
        RespValue::Boolean(b) => out.extend_from_slice(&[BOOLEAN, u8::from(*b)]),
        RespValue::Double(d) => {
            out.push(DOUBLE);
            out.extend_from_slice(&d.to_le_bytes());
        }
        RespValue::BigNumber(b) => bytes(out, BIG_NUMBER, b),
        RespValue::BulkError(b) => bytes(out, BULK_ERROR, b),
        RespValue::VerbatimString { format, text } => {
            out.push(VERBATIM);
            out.extend_from_slice(format);
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text);
        }
        RespValue::Map(pairs) => {
            count(out, MAP, pairs.len());
            for (k, v) in pairs {
                put(out, k);
                put(out, v);
            }
        }
        RespValue::Set(items) => {
            count(out, SET, items.len());
            items.iter().for_each(|i| put(out, i));
        }
        RespValue::Attribute { attributes, value } => {
            count(out, ATTRIBUTE, attributes.len());
            for (k, v) in attributes {
                put(out, k);
                put(out, v);
            }
            put(out, value);
        }
        RespValue::Push(items) => {
            count(out, PUSH, items.len());
            items.iter().for_each(|i| put(out, i));
        }
    }
}

/// Reads tag-format values (what JS wrote) back into `RespValue`s.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
    depth: usize,
}

/// JS writes nest replies at most this deep (a cycle or a runaway builder stops here).
const MAX_DEPTH: usize = 128;

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| "truncated RESP reply".to_string())?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn bytes(&mut self) -> Result<Bytes, String> {
        let n = self.u32()?;
        Ok(Bytes::copy_from_slice(self.take(n)?))
    }

    fn eight(&mut self) -> Result<[u8; 8], String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(a)
    }

    fn list(&mut self) -> Result<Vec<RespValue>, String> {
        let n = self.u32()?;
        (0..n).map(|_| self.value()).collect()
    }

    fn pairs(&mut self) -> Result<Vec<(RespValue, RespValue)>, String> {
        let n = self.u32()?;
        (0..n).map(|_| Ok((self.value()?, self.value()?))).collect()
    }

    fn value(&mut self) -> Result<RespValue, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("RESP reply nested deeper than {MAX_DEPTH}"));
        }
        let tag = self.take(1)?[0];
        let v = match tag {
            SIMPLE => RespValue::SimpleString(self.bytes()?),
            ERROR => RespValue::Error(self.bytes()?),
            INTEGER => RespValue::Integer(i64::from_le_bytes(self.eight()?)),
            BULK => RespValue::BulkString(self.bytes()?),
            NULL_BULK => RespValue::NullBulkString,
            ARRAY => RespValue::Array(self.list()?),
            NULL_ARRAY => RespValue::NullArray,
            NULL => RespValue::Null,
            BOOLEAN => RespValue::Boolean(self.take(1)?[0] != 0),
            DOUBLE => RespValue::Double(f64::from_le_bytes(self.eight()?)),
            BIG_NUMBER => RespValue::BigNumber(self.bytes()?),
            BULK_ERROR => RespValue::BulkError(self.bytes()?),
            VERBATIM => {
                let f = self.take(3)?;
                let format = [f[0], f[1], f[2]];
                RespValue::VerbatimString {
                    format,
                    text: self.bytes()?,
                }
            }
            MAP => RespValue::Map(self.pairs()?),
            SET => RespValue::Set(self.list()?),
            ATTRIBUTE => {
                let attributes = self.pairs()?;
                RespValue::Attribute {
                    attributes,
                    value: Box::new(self.value()?),
                }
            }
            PUSH => RespValue::Push(self.list()?),
            other => return Err(format!("unknown RESP reply tag {other}")),
        };
        self.depth -= 1;
        Ok(v)
    }
}

impl Reader<'_> {
    /// Encodes the value at the cursor straight from the tag form: the common reply shapes
    /// (line, bulk, integer, null, array) without building a `RespValue` or copying payloads
    /// twice; the rarer RESP3 shapes go through [`Reader::value`].
    fn encode(&mut self, out: &mut BytesMut) -> Result<(), String> {
        let Some(&tag) = self.data.get(self.at) else {
            return Err("truncated RESP reply".to_string());
        };
        match tag {
            SIMPLE | ERROR | BULK => {
                self.at += 1;
                let n = self.u32()?;
                let b = self.take(n)?;
                match tag {
                    SIMPLE => encode::write_simple(out, b),
                    ERROR => encode::write_error(out, b),
                    _ => encode::write_bulk(out, b),
                }
            }
            INTEGER => {
                self.at += 1;
                encode::write_integer(out, i64::from_le_bytes(self.eight()?));
            }
            NULL_BULK => {
                self.at += 1;
                encode::write_null_bulk(out);
            }
            NULL_ARRAY => {
                self.at += 1;
                encode::write_null_array(out);
            }
            ARRAY => {
                self.at += 1;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(format!("RESP reply nested deeper than {MAX_DEPTH}"));
                }
                let n = self.u32()?;
                encode::write_array_header(out, n);
                for _ in 0..n {
                    self.encode(out)?;
                }
                self.depth -= 1;
            }
            _ => self.value()?.encode(out),
        }
        Ok(())
    }
}

/// The wire bytes of the most common single replies, from their whole tag form: `+OK`,
/// `+PONG`, `$-1`, `*-1`, `_`, `:0`, `:1` and the empty array, as static bytes (no
/// allocation, nothing to encode).
fn constant(data: &[u8]) -> Option<&'static [u8]> {
    Some(match data {
        [SIMPLE, 2, 0, 0, 0, b'O', b'K'] => b"+OK\r\n",
        [SIMPLE, 4, 0, 0, 0, b'P', b'O', b'N', b'G'] => b"+PONG\r\n",
        [NULL_BULK] => b"$-1\r\n",
        [NULL_ARRAY] => b"*-1\r\n",
        [NULL] => b"_\r\n",
        [INTEGER, 0, 0, 0, 0, 0, 0, 0, 0] => b":0\r\n",
        [INTEGER, 1, 0, 0, 0, 0, 0, 0, 0] => b":1\r\n",
        [ARRAY, 0, 0, 0, 0] => b"*0\r\n",
        _ => return None,
    })
}

/// The RESP bytes of the tag-format replies in `data` (one or more, back to back).
pub fn to_wire(data: &[u8]) -> Result<Bytes, String> {
    if let Some(wire) = constant(data) {
        return Ok(Bytes::from_static(wire));
    }
    let mut r = Reader {
        data,
        at: 0,
        depth: 0,
    };
    // A bulk reply's header takes its tag form's 5 bytes and a few more: room for most batches.
    let mut out = BytesMut::with_capacity(data.len() + data.len() / 4 + 16);
    while r.at < data.len() {
        r.encode(&mut out)?;
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_survives_the_tag_format_and_encodes_as_resp() {
        let v = RespValue::Array(vec![
            RespValue::simple("OK"),
            RespValue::Integer(-42),
            RespValue::bulk(&b"a\r\nb"[..]),
            RespValue::NullBulkString,
            RespValue::Map(vec![(RespValue::simple("k"), RespValue::Boolean(true))]),
            RespValue::Double(1.5),
            RespValue::Array(vec![RespValue::bulk(&b"x"[..]), RespValue::NullBulkString]),
            RespValue::error("ERR a\r\nb"),
            RespValue::NullArray,
            RespValue::Integer(i64::MIN),
        ]);
        let mut tags = Vec::new();
        put(&mut tags, &v);
        let wire = to_wire(&tags).unwrap();
        let mut direct = BytesMut::new();
        v.encode(&mut direct);
        assert_eq!(wire, direct.freeze());
    }

    #[test]
    fn constant_replies_encode_as_the_general_path_does() {
        let replies = [
            RespValue::simple("OK"),
            RespValue::simple("PONG"),
            RespValue::NullBulkString,
            RespValue::NullArray,
            RespValue::Null,
            RespValue::Integer(0),
            RespValue::Integer(1),
            RespValue::Array(vec![]),
        ];
        for v in replies {
            let mut tags = Vec::new();
            put(&mut tags, &v);
            assert!(constant(&tags).is_some(), "{v:?} has a constant");
            let mut direct = BytesMut::new();
            v.encode(&mut direct);
            assert_eq!(to_wire(&tags).unwrap(), direct.freeze(), "{v:?}");
        }
        // Not constants: a longer simple string, another integer, two replies back to back.
        let mut two = Vec::new();
        put(&mut two, &RespValue::simple("OK"));
        put(&mut two, &RespValue::simple("OK"));
        assert!(constant(&two).is_none());
        assert_eq!(to_wire(&two).unwrap(), &b"+OK\r\n+OK\r\n"[..]);
        let mut n = Vec::new();
        put(&mut n, &RespValue::Integer(2));
        assert_eq!(to_wire(&n).unwrap(), &b":2\r\n"[..]);
    }

    #[test]
    fn truncated_or_unknown_input_is_an_error_not_a_panic() {
        assert!(to_wire(&[BULK, 10, 0, 0, 0, b'x']).is_err());
        assert!(to_wire(&[99]).is_err());
        let deep: Vec<u8> = std::iter::repeat_n([ARRAY, 1, 0, 0, 0], 200)
            .flatten()
            .collect();
        assert!(to_wire(&deep).is_err());
    }
}
