//! A stream being built, cut into reads.

/// Streams stop growing at this size, so a case stays fast however it is written.
pub const MAX_STREAM: usize = 1 << 16;

/// The reads of a stream, in order.
#[derive(Debug, Default)]
pub struct Reads {
    chunks: Vec<Vec<u8>>,
    len: usize,
}

impl Reads {
    /// An empty stream with one empty read open.
    pub fn new() -> Self {
        Reads {
            chunks: vec![Vec::new()],
            len: 0,
        }
    }

    /// Appends `bytes` to the open read (up to [`MAX_STREAM`] in all).
    pub fn push(&mut self, bytes: &[u8]) {
        let room = MAX_STREAM - self.len;
        let bytes = &bytes[..bytes.len().min(room)];
        self.len += bytes.len();
        self.chunks
            .last_mut()
            .expect("a read is open")
            .extend_from_slice(bytes);
    }

    /// Appends `count` copies of `byte`.
    pub fn repeat(&mut self, byte: u8, count: usize) {
        let count = count.min(MAX_STREAM - self.len);
        self.len += count;
        let chunk = self.chunks.last_mut().expect("a read is open");
        chunk.resize(chunk.len() + count, byte);
    }

    /// Ends the open read (empty reads are kept: a decoder must cope with them).
    pub fn cut(&mut self) {
        self.chunks.push(Vec::new());
    }

    /// Bytes in the stream so far.
    pub fn stream_len(&self) -> usize {
        self.len
    }

    /// The reads, and the whole stream.
    pub fn finish(self) -> (Vec<Vec<u8>>, Vec<u8>) {
        let stream = self.chunks.concat();
        (self.chunks, stream)
    }
}
