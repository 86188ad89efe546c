//! [`RespCommands`]: the whole commands of one read, back to back, kept as the one frame they
//! arrived in (a run of [`RespCommand`]s without a message per command).
//!
//! A pipelining client sends many commands in one write; a consumer that takes them all at
//! once (the JS binding: a read's commands reach JS in one delivery anyway) needs neither a
//! message nor a pipeline event per command. [`RespDecoder::decode_commands`] checks each
//! command exactly as [`RespDecoder::decode_command`] does and returns the run as one `Bytes`
//! view; the commands are found again by walking the frame, which was already checked.
//!
//! Invariant (made by `decode_commands`, the only constructor besides [`RespCommands::split_at`]):
//! `frame` is exactly `count` (at least one) frames of the form `RespCommand` keeps. The
//! walk relies on it and, should it be broken, ends early instead of panicking.
//!
//! [`RespDecoder::decode_commands`]: crate::RespDecoder::decode_commands
//! [`RespDecoder::decode_command`]: crate::RespDecoder::decode_command

use bytes::Bytes;

use crate::command::{Args, RespCommand};
use crate::decoder::plain_length;

/// Whole commands decoded back to back as one frame.
///
/// ```
/// use netloop_resp::{bytes::BytesMut, RespConfig, RespDecoder};
/// let mut decoder = RespDecoder::new(RespConfig::default()).unwrap();
/// let mut buf = BytesMut::from(&b"*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$1"[..]);
/// let run = decoder.decode_commands(&mut buf).unwrap();
/// assert_eq!(run.len(), 2);
/// let names: Vec<Vec<&[u8]>> = run.iter().map(|c| c.collect()).collect();
/// assert_eq!(names, [vec![&b"PING"[..]], vec![&b"GET"[..], b"k"]]);
/// assert_eq!(&buf[..], b"*1\r\n$1"); // the partial command stays
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RespCommands {
    frame: Bytes,
    count: usize,
}

impl RespCommands {
    /// Made by the decoder only, from bytes it checked (see the module's invariant).
    pub(crate) fn from_checked_frame(frame: Bytes, count: usize) -> Self {
        RespCommands { frame, count }
    }

    /// The number of commands (at least 1).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Always false: a run has at least one command.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The commands' bytes as they arrived.
    pub fn frame(&self) -> &Bytes {
        &self.frame
    }

    /// Each command's arguments, in order (one walk of the frame).
    pub fn iter(&self) -> Commands<'_> {
        Commands {
            rest: &self.frame,
            left: self.count,
        }
    }

    /// Calls `f` with each command's arguments, in order, in one walk of the frame (cheaper
    /// than [`iter`](Self::iter), which walks each command's headers twice to find where the
    /// next one starts). The arguments `f` leaves unwalked are skipped.
    pub fn for_each(&self, mut f: impl FnMut(&mut Args<'_>)) {
        let mut rest: &[u8] = &self.frame;
        for _ in 0..self.count {
            let Some((argc, header)) = plain_length(rest) else {
                return;
            };
            let (Ok(argc), Some(body)) = (usize::try_from(argc), rest.get(header..)) else {
                return;
            };
            let mut args = Args::new(body, argc);
            f(&mut args);
            for _ in args.by_ref() {}
            rest = args.rest();
        }
    }

    /// The commands as separate [`RespCommand`]s (views of the frame, no copy).
    pub fn to_commands(&self) -> Vec<RespCommand> {
        let mut out = Vec::with_capacity(self.count);
        let mut it = self.iter();
        let mut at = 0;
        while let Some(args) = it.next() {
            let argc = args.len();
            let end = self.frame.len() - it.rest.len();
            let frame = self.frame.slice(at..end);
            out.push(RespCommand::from_checked_frame(frame, argc));
            at = end;
        }
        out
    }

    /// Splits the run before its command `k` (0 < `k` < `len()`): `self` keeps the first `k`
    /// commands, the rest is returned. `None` (and `self` unchanged) when `k` is out of range.
    pub fn split_at(&mut self, k: usize) -> Option<RespCommands> {
        if k == 0 || k >= self.count {
            return None;
        }
        let mut it = self.iter();
        for _ in 0..k {
            it.next()?;
        }
        let at = self.frame.len() - it.rest.len();
        let rest = self.frame.split_off(at);
        let tail = RespCommands {
            frame: rest,
            count: self.count - k,
        };
        self.count = k;
        Some(tail)
    }
}

/// The commands of a [`RespCommands`], each as its arguments (the name first).
#[derive(Debug, Clone)]
pub struct Commands<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for Commands<'a> {
    type Item = Args<'a>;

    fn next(&mut self) -> Option<Args<'a>> {
        if self.left == 0 {
            return None;
        }
        let (argc, header) = plain_length(self.rest)?;
        let argc = usize::try_from(argc).ok()?;
        let body = self.rest.get(header..)?;
        let args = Args::new(body, argc);
        // The command's end: past its arguments (a second walk of the headers only).
        let mut end = header;
        for _ in 0..argc {
            let part = self.rest.get(end..)?;
            let (len, h) = plain_length(part)?;
            end = end
                .checked_add(h)?
                .checked_add(usize::try_from(len).ok()?)?
                .checked_add(2)?;
        }
        self.rest = self.rest.get(end..)?;
        self.left -= 1;
        Some(args)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}
