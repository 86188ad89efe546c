//! [`RespCommand`]: a whole command (an array of bulk strings) kept as the one frame it
//! arrived in, without a value tree.
//!
//! Clients send nearly every command as `*N\r\n` followed by N bulk strings. A server that
//! only walks the arguments once (to hand them on, or to look a command up) does not need a
//! `RespValue::Array` of `RespValue::BulkString`s for that: [`RespDecoder::decode_command`]
//! checks such a command in one pass and returns its bytes as one `Bytes` view; the
//! arguments are found again by walking the frame, which was already checked.
//!
//! Invariant (made by `decode_command`, the only constructor): `frame` is exactly
//! `*<argc>\r\n` followed by `argc` (at least one) complete `$<len>\r\n<len bytes>\r\n`
//! parts whose headers `plain_length` accepts. The walk below relies on it and, should it be
//! broken, ends early instead of panicking.
//!
//! [`RespDecoder::decode_command`]: crate::RespDecoder::decode_command

use bytes::Bytes;

use crate::decoder::plain_length;
use crate::value::RespValue;

/// A command decoded as one frame: an array of one or more bulk strings, in wire form.
///
/// ```
/// use netloop_resp::{bytes::BytesMut, RespConfig, RespDecoder, RespValue};
/// let mut decoder = RespDecoder::new(RespConfig::default()).unwrap();
/// let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"[..]);
/// let command = decoder.decode_command(&mut buf).unwrap();
/// assert_eq!(command.len(), 2);
/// assert_eq!(command.args().collect::<Vec<_>>(), [&b"GET"[..], b"k"]);
/// assert_eq!(command.to_value(), RespValue::command(["GET", "k"]));
/// assert!(buf.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespCommand {
    frame: Bytes,
    argc: usize,
}

impl RespCommand {
    /// Made by the decoder only, from bytes it checked (see the module's invariant).
    pub(crate) fn from_checked_frame(frame: Bytes, argc: usize) -> Self {
        RespCommand { frame, argc }
    }

    /// The number of arguments, the command's name included (at least 1).
    pub fn len(&self) -> usize {
        self.argc
    }

    /// Always false: a command has at least its name.
    pub fn is_empty(&self) -> bool {
        self.argc == 0
    }

    /// The command's bytes as they arrived (`*N\r\n$...`), for relaying it unchanged.
    pub fn frame(&self) -> &Bytes {
        &self.frame
    }

    /// The arguments, the command's name first, as slices of the frame.
    pub fn args(&self) -> Args<'_> {
        let header = plain_length(&self.frame).map_or(self.frame.len(), |(_, n)| n);
        Args {
            rest: &self.frame[header..],
            left: self.argc,
        }
    }

    /// The arguments as `Bytes` views of the frame (no copy).
    pub fn arg_bytes(&self) -> impl Iterator<Item = Bytes> + '_ {
        self.args().map(|arg| self.frame.slice_ref(arg))
    }

    /// The command as the value [`RespDecoder::decode`](crate::RespDecoder::decode) gives for
    /// the same bytes: an array of bulk strings that are views of the frame.
    pub fn to_value(&self) -> RespValue {
        RespValue::Array(self.arg_bytes().map(RespValue::BulkString).collect())
    }
}

/// The arguments of a [`RespCommand`], in order.
#[derive(Debug, Clone)]
pub struct Args<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Args<'a> {
    /// The `argc` arguments at the front of `rest` (a checked frame, past its `*N` header).
    pub(crate) fn new(rest: &'a [u8], argc: usize) -> Self {
        Args { rest, left: argc }
    }

    /// What follows the arguments not walked yet (past the command once all are walked).
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl ExactSizeIterator for Args<'_> {}

impl<'a> Iterator for Args<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (len, header) = plain_length(self.rest)?;
        let len = usize::try_from(len).ok()?;
        let end = header.checked_add(len)?;
        let arg = self.rest.get(header..end)?;
        self.rest = self.rest.get(end + 2..).unwrap_or_default();
        self.left -= 1;
        Some(arg)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
