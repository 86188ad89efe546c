//! Drives a decoder through the public [`Cumulator`] (the cumulation half of
//! `ByteToMessageDecoder`, which the pipeline handler uses) one read at a time, and checks
//! after every read:
//! - the events that came out are exactly the model's events due by the end of that read
//!   (and the final decode at end of input yields exactly the rest);
//! - the bytes left in the cumulation are at most the decoder's `retained` bound, which the
//!   caller derives from the configured limit (e.g. `max + longest delimiter - 1`);
//! - memory: the cumulation's capacity stays below `4 * (retained + largest read)`, and the
//!   heap of this thread never grows during one read by more than
//!   `6 * (retained + read length)`, plus twice the output vector and error messages it
//!   produced, plus 1 KiB.
//!
//! Why those memory bounds: after a read the buffer holds at most `retained` bytes, and a
//! read appends `n` bytes. `BytesMut` only reallocates when the unread bytes plus the read
//! do not fit, and then to at most twice its old capacity or the bytes needed, whichever is
//! larger; the old capacity was under `2 * (retained + n)` when it did not fit, so the new
//! one is under `4 * (retained + n)`, and the old and new blocks together (a copying
//! reallocation) under `6 * (retained + n)`. Frames are views into that buffer; the harness
//! drops them after each read, so each read starts from a uniquely owned buffer. The output
//! vector and the error messages are the caller's and are allowed for at twice their size (a
//! growing vector holds its old and new block for a moment); their number is bounded by the
//! bytes consumed, since each output consumes at least one. What is left for the constant is
//! `Bytes`' shared header. A decoder that allocated for a length it
//! was announced but rejected, or kept an oversize frame, fails these checks, whatever the
//! allocation site.

use netloop_codec::bytes::Bytes;
use netloop_codec::{CodecError, Cumulator, FrameDecoder};

use super::alloc;
use super::model::{Due, Ev};

/// What a checked case exercised (so a fixed set of cases can show it reached each outcome).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Cases run.
    pub cases: usize,
    /// Reads fed.
    pub reads: usize,
    /// Frames decoded.
    pub frames: usize,
    /// `TooLongFrame` errors with the whole frame's length.
    pub too_long: usize,
    /// Fail-fast `TooLongFrame` errors (a lower bound).
    pub too_long_early: usize,
    /// `CorruptedFrame` errors.
    pub corrupted: usize,
    /// Events that came out of the final decode at end of input.
    pub at_end: usize,
    /// Decoder configurations the constructor refused (as it had to).
    pub refused: usize,
}

impl Tally {
    /// Adds `other` to this tally.
    pub fn add(&mut self, other: Tally) {
        self.cases += other.cases;
        self.reads += other.reads;
        self.frames += other.frames;
        self.too_long += other.too_long;
        self.too_long_early += other.too_long_early;
        self.corrupted += other.corrupted;
        self.at_end += other.at_end;
        self.refused += other.refused;
    }

    fn count(&mut self, events: &[Ev]) {
        for ev in events {
            match ev {
                Ev::Frame(_) => self.frames += 1,
                Ev::TooLong { complete: true, .. } => self.too_long += 1,
                Ev::TooLong {
                    complete: false, ..
                } => self.too_long_early += 1,
                Ev::Corrupted => self.corrupted += 1,
                Ev::Other(_) => {}
            }
        }
    }
}

/// A decoder, the reads to feed it, what it must yield, and how many bytes it may keep.
pub struct Case<D> {
    /// Names the decoder in failure messages.
    pub label: &'static str,
    /// The decoder under test.
    pub decoder: D,
    /// The stream, one read per chunk.
    pub chunks: Vec<Vec<u8>>,
    /// The reference model's events, in order, with when each is due.
    pub expected: Vec<(Due, Ev)>,
    /// Most bytes the decoder may keep buffered after a read (derived from its limit).
    pub retained: usize,
}

impl<D: FrameDecoder> Case<D> {
    /// A case.
    pub fn new(
        label: &'static str,
        decoder: D,
        chunks: Vec<Vec<u8>>,
        expected: Vec<(Due, Ev)>,
        retained: usize,
    ) -> Self {
        Case {
            label,
            decoder,
            chunks,
            expected,
            retained,
        }
    }

    /// Runs the case through a [`Cumulator`] with every check of this module.
    pub fn check(self) -> Tally {
        check(
            self.label,
            self.decoder,
            &self.chunks,
            self.expected,
            self.retained,
        )
    }
}

/// Runs `decoder` over `chunks` (one read each) and checks it against `expected`.
pub fn check<D: FrameDecoder>(
    label: &str,
    decoder: D,
    chunks: &[Vec<u8>],
    expected: Vec<(Due, Ev)>,
    retained: usize,
) -> Tally {
    let mut tally = Tally {
        cases: 1,
        reads: chunks.len(),
        ..Tally::default()
    };
    let mut cumulator = Cumulator::new(decoder);
    let mut expected = expected.into_iter().peekable();
    let mut end = 0usize;
    let mut largest_read = 0usize;
    for (index, chunk) in chunks.iter().enumerate() {
        end += chunk.len();
        largest_read = largest_read.max(chunk.len());
        let mut out = Vec::new();

        let before = alloc::live();
        alloc::reset_peak();
        cumulator.feed(chunk, &mut out);
        let grown = usize::try_from(alloc::peak() - before).unwrap_or(0);

        let messages: usize = out
            .iter()
            .filter_map(|r| match r {
                Err(CodecError::CorruptedFrame { reason })
                | Err(CodecError::EncoderError { reason }) => Some(reason.capacity()),
                _ => None,
            })
            .sum();
        let output = out.capacity() * std::mem::size_of::<Result<Bytes, CodecError>>();
        let allowed = 6 * (retained + chunk.len()) + 2 * (output + messages) + 1024;
        assert!(
            grown <= allowed,
            "{label}: read {index} ({} bytes) grew the heap by {grown} bytes, over {allowed}",
            chunk.len()
        );
        let buffered = cumulator.buffered().len();
        assert!(
            buffered <= retained,
            "{label}: after read {index} (stream at {end}) {buffered} bytes stay buffered, \
             over the bound {retained}"
        );
        let capacity_bound = 4 * (retained + largest_read) + 64;
        assert!(
            cumulator.capacity() <= capacity_bound,
            "{label}: cumulation capacity {} over {capacity_bound}",
            cumulator.capacity()
        );

        let actual: Vec<Ev> = out.into_iter().map(Ev::from).collect();
        let due = take_due(&mut expected, end);
        assert_eq!(
            actual, due,
            "{label}: events of read {index} (stream at {end})"
        );
        tally.count(&actual);
    }
    let mut out = Vec::new();
    cumulator.finish(&mut out);
    let actual: Vec<Ev> = out.into_iter().map(Ev::from).collect();
    let rest: Vec<Ev> = expected.map(|(_, ev)| ev).collect();
    assert_eq!(actual, rest, "{label}: events at end of input");
    tally.count(&actual);
    tally.at_end = actual.len();
    tally
}

/// Removes from `expected` the events due once the stream has reached `end`.
pub fn take_due(
    expected: &mut std::iter::Peekable<std::vec::IntoIter<(Due, Ev)>>,
    end: usize,
) -> Vec<Ev> {
    let mut due = Vec::new();
    while let Some((_, ev)) = expected.next_if(|(at, _)| *at <= Due::At(end)) {
        due.push(ev);
    }
    due
}
