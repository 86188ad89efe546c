//! The decoder's one-pass path for whole commands ([`RespDecoder::decode_command`]).
//!
//! It decides nothing on its own: it returns a command only where `decode` would return the
//! same array of bulk strings from the same bytes, and otherwise consumes nothing and leaves
//! the bytes (and every error they hold) to `decode`. So it checks exactly what the general
//! path checks for these parts, with the same functions: the same plain length headers
//! (`plain_length`), `max_array_length`, `max_nesting_depth` (an array is one level),
//! `max_bulk_length` and each payload's CRLF. Anything else (another type first, a header
//! `plain_length` does not take, an empty array, a part not buffered yet) is `None`.

use bytes::BytesMut;

use super::lines::plain_length;
use super::RespDecoder;
use crate::command::RespCommand;
use crate::commands::RespCommands;

impl RespDecoder {
    /// Takes a whole command (an array of one or more bulk strings, every part buffered) from
    /// the front of `buf` in one pass, as one frame: no value tree is built. `None`, having
    /// consumed nothing, when the front of `buf` is anything else or incomplete, or when the
    /// decoder is inside a value or failed; call [`decode`](Self::decode) then, which takes
    /// it (and reports its errors). For the same bytes, `decode_command(..).to_value()`
    /// equals what `decode` returns.
    ///
    /// ```
    /// use netloop_resp::{bytes::BytesMut, RespConfig, RespDecoder, RespValue};
    /// let mut decoder = RespDecoder::new(RespConfig::default()).unwrap();
    /// let mut buf = BytesMut::from(&b"*1\r\n$4\r\nPING\r\n+OK\r\n*1\r\n$4\r\nPI"[..]);
    /// assert_eq!(decoder.decode_command(&mut buf).unwrap().to_value(), RespValue::command(["PING"]));
    /// assert!(decoder.decode_command(&mut buf).is_none()); // not a command
    /// assert_eq!(decoder.decode(&mut buf), Ok(Some(RespValue::simple("OK"))));
    /// assert!(decoder.decode_command(&mut buf).is_none()); // incomplete
    /// ```
    pub fn decode_command(&mut self, buf: &mut BytesMut) -> Option<RespCommand> {
        if !self.takes_commands(buf) {
            return None;
        }
        let (len, argc) = self.command_len(buf)?;
        self.scanned = 0;
        Some(RespCommand::from_checked_frame(
            buf.split_to(len).freeze(),
            argc,
        ))
    }

    /// Takes every whole command at the front of `buf`, back to back, as one frame: what
    /// [`decode_command`](Self::decode_command) would return one by one, in one message.
    /// `None`, having consumed nothing, where `decode_command` would return `None` for the
    /// first one. The run stops before anything `decode_command` declines (another type, a
    /// partial command), which stays in `buf`.
    ///
    /// ```
    /// use netloop_resp::{bytes::BytesMut, RespConfig, RespDecoder, RespValue};
    /// let mut decoder = RespDecoder::new(RespConfig::default()).unwrap();
    /// let mut buf = BytesMut::from(&b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n+OK\r\n"[..]);
    /// assert_eq!(decoder.decode_commands(&mut buf).unwrap().len(), 2);
    /// assert!(decoder.decode_commands(&mut buf).is_none()); // not a command
    /// assert_eq!(decoder.decode(&mut buf), Ok(Some(RespValue::simple("OK"))));
    /// ```
    pub fn decode_commands(&mut self, buf: &mut BytesMut) -> Option<RespCommands> {
        if !self.takes_commands(buf) {
            return None;
        }
        let (mut at, _) = self.command_len(buf)?;
        let mut count = 1;
        while let Some((len, _)) = buf.get(at..).and_then(|rest| self.command_len(rest)) {
            at += len;
            count += 1;
        }
        self.scanned = 0;
        Some(RespCommands::from_checked_frame(
            buf.split_to(at).freeze(),
            count,
        ))
    }

    /// Whether the one-pass path may look at `buf` at all (between values, not failed).
    fn takes_commands(&self, buf: &[u8]) -> bool {
        !self.failed
            && !self.is_mid_value()
            && buf.first() == Some(&b'*')
            && self.config.max_nesting_depth > 0
    }

    /// The length and argument count of the whole command at the front of `buf`, checked as
    /// `decode` checks it; `None` for anything else.
    fn command_len(&self, buf: &[u8]) -> Option<(usize, usize)> {
        if buf.first() != Some(&b'*') {
            return None;
        }
        let (count, mut at) = plain_length(buf)?;
        let argc = usize::try_from(count)
            .ok()
            .filter(|&n| n >= 1 && n <= self.config.max_array_length)?;
        for _ in 0..argc {
            let part = buf.get(at..)?;
            if part.first() != Some(&b'$') {
                return None;
            }
            let (len, header) = plain_length(part)?;
            let len = usize::try_from(len)
                .ok()
                .filter(|&n| n <= self.config.max_bulk_length)?;
            let end = at.checked_add(header)?.checked_add(len)?;
            if buf.get(end..end.checked_add(2)?)? != b"\r\n" {
                return None;
            }
            at = end + 2;
        }
        Some((at, argc))
    }
}
