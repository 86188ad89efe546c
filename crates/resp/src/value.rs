//! [`RespValue`]: one RESP2 or RESP3 value (Netty's `RedisMessage` family, aggregated).
//!
//! Decoded values borrow nothing and copy no payload: every string-like payload is a `Bytes`
//! view of the decoder's read buffer, so handing an argument on (to JS, to another thread) is a
//! reference-count increment. Values built by hand may hold any `Bytes`.
//!
//! Equality is structural. Doubles compare by bit pattern, so a decoded `nan` equals itself
//! and `0.0` differs from `-0.0`: two values are equal when they encode to the same bytes.

use bytes::Bytes;

/// A RESP value: the five RESP2 types (with their two nulls) and the RESP3 additions.
// A word-sized tag: moving a value then copies whole words, which measured a quarter faster
// than the byte tag the compiler picks (its partial-word copies stall store forwarding).
#[derive(Debug, Clone)]
#[repr(u64)]
pub enum RespValue {
    /// `+OK\r\n`: a line of text without CR or LF.
    SimpleString(Bytes),
    /// `-ERR message\r\n`: an error reply, as a line.
    Error(Bytes),
    /// `:1000\r\n`: a signed 64-bit integer.
    Integer(i64),
    /// `$5\r\nhello\r\n`: binary-safe bytes.
    BulkString(Bytes),
    /// `$-1\r\n`: RESP2's null bulk string (`GET` of a missing key).
    NullBulkString,
    /// `*2\r\n...`: an ordered list of values.
    Array(Vec<RespValue>),
    /// `*-1\r\n`: RESP2's null array (`BLPOP` timing out).
    NullArray,
    /// `_\r\n`: RESP3's null.
    Null,
    /// `#t\r\n` / `#f\r\n`: RESP3 boolean.
    Boolean(bool),
    /// `,3.14\r\n` (also `inf`, `-inf`, `nan`): RESP3 double.
    Double(f64),
    /// `(3492890328409238509324850943850943825024385\r\n`: RESP3 big number, kept as its
    /// decimal text (an optional sign, then digits).
    BigNumber(Bytes),
    /// `!21\r\nSYNTAX invalid syntax\r\n`: RESP3 binary-safe error.
    BulkError(Bytes),
    /// `=15\r\ntxt:Some string\r\n`: RESP3 verbatim string with its three-byte format.
    VerbatimString {
        /// The format (`txt`, `mkd`, ...).
        format: [u8; 3],
        /// The text after `format:`.
        text: Bytes,
    },
    /// `%2\r\n...`: RESP3 map, as key-value pairs in wire order (keys may repeat or be any
    /// value, so no hashing happens here).
    Map(Vec<(RespValue, RespValue)>),
    /// `~3\r\n...`: RESP3 set, elements in wire order.
    Set(Vec<RespValue>),
    /// `|1\r\n...`: RESP3 attributes and the value they annotate. On the wire the attribute
    /// map comes first and the annotated value right after it; it is not an element of its
    /// own in an enclosing aggregate.
    Attribute {
        /// The attribute map's key-value pairs.
        attributes: Vec<(RespValue, RespValue)>,
        /// The value the attributes describe.
        value: Box<RespValue>,
    },
    /// `>3\r\n...`: RESP3 out-of-band push data (pub/sub messages, invalidations).
    Push(Vec<RespValue>),
}

impl RespValue {
    /// A bulk string holding `bytes` (no copy when given `Bytes`).
    pub fn bulk(bytes: impl Into<Bytes>) -> Self {
        RespValue::BulkString(bytes.into())
    }

    /// A simple string. CR and LF in it are written as spaces when encoded.
    pub fn simple(text: impl Into<Bytes>) -> Self {
        RespValue::SimpleString(text.into())
    }

    /// An error reply (`ERR ...`). CR and LF in it are written as spaces when encoded.
    pub fn error(text: impl Into<Bytes>) -> Self {
        RespValue::Error(text.into())
    }

    /// An array of bulk strings: the shape of a command (`["SET", "k", "v"]`).
    pub fn command<I, B>(args: I) -> Self
    where
        I: IntoIterator<Item = B>,
        B: Into<Bytes>,
    {
        RespValue::Array(args.into_iter().map(RespValue::bulk).collect())
    }

    /// The type's name as the RESP specification spells it (`"bulk string"`, `"map"`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            RespValue::SimpleString(_) => "simple string",
            RespValue::Error(_) => "simple error",
            RespValue::Integer(_) => "integer",
            RespValue::BulkString(_) => "bulk string",
            RespValue::NullBulkString => "null bulk string",
            RespValue::Array(_) => "array",
            RespValue::NullArray => "null array",
            RespValue::Null => "null",
            RespValue::Boolean(_) => "boolean",
            RespValue::Double(_) => "double",
            RespValue::BigNumber(_) => "big number",
            RespValue::BulkError(_) => "bulk error",
            RespValue::VerbatimString { .. } => "verbatim string",
            RespValue::Map(_) => "map",
            RespValue::Set(_) => "set",
            RespValue::Attribute { .. } => "attribute",
            RespValue::Push(_) => "push",
        }
    }

    /// Whether this is one of the three nulls (`$-1`, `*-1`, `_`).
    pub fn is_null(&self) -> bool {
        matches!(
            self,
            RespValue::NullBulkString | RespValue::NullArray | RespValue::Null
        )
    }

    /// Whether this is an error reply (simple or bulk).
    pub fn is_error(&self) -> bool {
        matches!(self, RespValue::Error(_) | RespValue::BulkError(_))
    }

    /// The bytes of a string-like value: bulk, simple, verbatim (its text), big number,
    /// and the two errors.
    pub fn as_bytes(&self) -> Option<&Bytes> {
        match self {
            RespValue::BulkString(b)
            | RespValue::SimpleString(b)
            | RespValue::Error(b)
            | RespValue::BulkError(b)
            | RespValue::BigNumber(b)
            | RespValue::VerbatimString { text: b, .. } => Some(b),
            _ => None,
        }
    }

    /// The integer of an `Integer`.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            RespValue::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The elements of an array, set or push.
    pub fn as_array(&self) -> Option<&[RespValue]> {
        match self {
            RespValue::Array(v) | RespValue::Set(v) | RespValue::Push(v) => Some(v),
            _ => None,
        }
    }

    /// The elements of an array, set or push, or the value back.
    pub fn into_array(self) -> Result<Vec<RespValue>, RespValue> {
        match self {
            RespValue::Array(v) | RespValue::Set(v) | RespValue::Push(v) => Ok(v),
            other => Err(other),
        }
    }

    /// A command's arguments: the bulk strings of an array made only of bulk strings (what
    /// clients send and inline commands decode to), without copying them.
    pub fn command_args(&self) -> Option<Vec<Bytes>> {
        match self {
            RespValue::Array(items) => items
                .iter()
                .map(|item| match item {
                    RespValue::BulkString(b) => Some(b.clone()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

impl PartialEq for RespValue {
    fn eq(&self, other: &Self) -> bool {
        use RespValue as V;
        match (self, other) {
            (V::SimpleString(a), V::SimpleString(b))
            | (V::Error(a), V::Error(b))
            | (V::BulkString(a), V::BulkString(b))
            | (V::BigNumber(a), V::BigNumber(b))
            | (V::BulkError(a), V::BulkError(b)) => a == b,
            (V::Integer(a), V::Integer(b)) => a == b,
            (V::NullBulkString, V::NullBulkString)
            | (V::NullArray, V::NullArray)
            | (V::Null, V::Null) => true,
            (V::Boolean(a), V::Boolean(b)) => a == b,
            (V::Double(a), V::Double(b)) => a.to_bits() == b.to_bits(),
            (
                V::VerbatimString { format, text },
                V::VerbatimString {
                    format: f2,
                    text: t2,
                },
            ) => format == f2 && text == t2,
            (V::Array(a), V::Array(b)) | (V::Set(a), V::Set(b)) | (V::Push(a), V::Push(b)) => {
                a == b
            }
            (V::Map(a), V::Map(b)) => a == b,
            (
                V::Attribute { attributes, value },
                V::Attribute {
                    attributes: a2,
                    value: v2,
                },
            ) => attributes == a2 && value == v2,
            _ => false,
        }
    }
}

impl Eq for RespValue {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_compare_by_bits_so_nan_equals_itself() {
        assert_eq!(RespValue::Double(f64::NAN), RespValue::Double(f64::NAN));
        assert_ne!(RespValue::Double(0.0), RespValue::Double(-0.0));
    }

    #[test]
    fn command_args_are_the_bulk_strings_of_an_array_without_copies() {
        let key = Bytes::from_static(b"key");
        let cmd = RespValue::Array(vec![RespValue::bulk("GET"), RespValue::bulk(key.clone())]);
        let args = cmd.command_args().expect("a command");
        assert_eq!(args, [Bytes::from_static(b"GET"), key.clone()]);
        assert_eq!(args[1].as_ptr(), key.as_ptr());
        let mixed = RespValue::Array(vec![RespValue::bulk("GET"), RespValue::Integer(1)]);
        assert_eq!(mixed.command_args(), None);
        assert_eq!(RespValue::Integer(1).command_args(), None);
    }

    #[test]
    fn accessors_see_through_the_string_like_and_list_like_types() {
        let text = RespValue::VerbatimString {
            format: *b"txt",
            text: Bytes::from_static(b"hi"),
        };
        assert_eq!(text.as_bytes().map(|b| &b[..]), Some(&b"hi"[..]));
        assert_eq!(
            RespValue::Set(vec![RespValue::Null])
                .as_array()
                .map(<[_]>::len),
            Some(1)
        );
        assert!(RespValue::NullArray.is_null() && RespValue::Null.is_null());
        assert!(RespValue::BulkError(Bytes::new()).is_error());
        assert_eq!(RespValue::Integer(3).as_integer(), Some(3));
        assert_eq!(RespValue::Map(vec![]).type_name(), "map");
    }
}
