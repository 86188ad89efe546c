//! [`FileRegion`]: a range of a file written to a channel without passing through user space
//! (Netty's `DefaultFileRegion`): a socket channel hands it to the kernel with `sendfile(2)`.
//!
//! Ground rules:
//! - A region is a message like bytes: it queues in the outbound buffer behind the writes before
//!   it and completes its promise once its last byte was handed to the socket. It counts 0
//!   bytes towards the water marks (Netty's size estimator): it holds no memory, only a file.
//! - The file is shared (`Arc<File>`): one opened file can be sent, whole or in parts, to many
//!   channels at once; each region keeps its own position. `sendfile` reads at an explicit offset
//!   and never moves the file's own cursor.
//! - The file must hold the region's bytes when they are sent. A file found shorter (truncated
//!   after the region was made) fails the write with [`FileRegion::truncated`] and the channel
//!   closes: the peer would wait for bytes that never come.
//! - Handlers that transform bytes (TLS) read the region into memory piece by piece with
//!   [`FileRegion::read_chunk`]; the file is read at the region's position, so a partly sent
//!   region goes on where it stopped.
//! - Reading the file happens on the loop thread (`sendfile` or `pread` from the page cache);
//!   a file on slow storage stalls the loop while the kernel reads it, as in Netty.

use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

/// Bytes one `sendfile` call is asked for at most: the kernel moves at most about 2 GiB per
/// call anyway, and a bounded ask keeps one channel's turn bounded.
const MAX_SENDFILE: usize = 1 << 30;

/// A range of a file to write to a channel (Netty's `FileRegion`). A clone shares the file and
/// starts where the original stands; two regions are equal when they share the file and stand
/// at the same place of the same range.
#[derive(Clone)]
pub struct FileRegion {
    file: Arc<File>,
    position: u64,
    count: u64,
    transferred: u64,
}

impl FileRegion {
    /// `count` bytes of `file` from `position`. The file is not looked at until the region is
    /// sent: a file shorter than `position + count` then fails the write.
    pub fn new(file: Arc<File>, position: u64, count: u64) -> Self {
        FileRegion {
            file,
            position,
            count,
            transferred: 0,
        }
    }

    /// Opens `path` for reading: the bytes from `position` to `position + count`, or to the end
    /// of the file when `count` is `None`. Fails with the open's error, with `EISDIR` for a
    /// directory, or with `InvalidInput` when `position` is past the end of the file or the
    /// range goes beyond it.
    pub fn open(path: impl AsRef<Path>, position: u64, count: Option<u64>) -> io::Result<Self> {
        let file = File::open(path)?;
        Self::of_file(Arc::new(file), position, count)
    }

    /// As [`open`](Self::open), for a file already opened: its length is read now.
    pub fn of_file(file: Arc<File>, position: u64, count: Option<u64>) -> io::Result<Self> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        let len = meta.len();
        if position > len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("position {position} is past the end of the file ({len} bytes)"),
            ));
        }
        let count = match count {
            None => len - position,
            Some(c) if c <= len - position => c,
            Some(c) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                    "{c} bytes from position {position} go past the end of the file ({len} bytes)"
                ),
                ))
            }
        };
        Ok(Self::new(file, position, count))
    }

    /// Where the region starts in the file.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The region's length in bytes.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Bytes already written (sent to the socket, or read out by [`read_chunk`](Self::read_chunk)).
    pub fn transferred(&self) -> u64 {
        self.transferred
    }

    /// Bytes still to write.
    pub fn remaining(&self) -> u64 {
        self.count - self.transferred
    }

    /// The file.
    pub fn file(&self) -> &Arc<File> {
        &self.file
    }

    /// Counts `n` more bytes written (at most what remains).
    pub(crate) fn advance(&mut self, n: u64) {
        self.transferred += n.min(self.remaining());
    }

    /// The error of a region whose file ended before its last byte.
    pub fn truncated(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the file ended after {} of the region's {} bytes (from position {}): it was truncated",
                self.transferred, self.count, self.position
            ),
        )
    }

    /// Hands up to `max` of the remaining bytes to the socket `fd` with `sendfile(2)`; returns
    /// how many the kernel took (the caller counts them with `advance`). `Ok(0)` with bytes
    /// remaining means the file ended early; `WouldBlock` that the socket is full.
    pub(crate) fn send_to(&self, socket: &impl AsRawFd, max: usize) -> io::Result<usize> {
        let want = usize::try_from(self.remaining())
            .unwrap_or(usize::MAX)
            .min(max)
            .min(MAX_SENDFILE);
        if want == 0 {
            return Ok(0);
        }
        let mut offset = libc::off_t::try_from(self.position + self.transferred)
            .map_err(|_| io::Error::from_raw_os_error(libc::EOVERFLOW))?;
        let (out_fd, in_fd) = (socket.as_raw_fd(), self.file.as_raw_fd());
        // SAFETY: both descriptors are open for the call (the socket is borrowed, the file is
        // held by `self.file`); `offset` is a valid, exclusively borrowed off_t that sendfile
        // updates, and the file's own cursor is left alone.
        let n = unsafe { libc::sendfile(out_fd, in_fd, &mut offset, want) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }

    /// Reads up to `max` of the remaining bytes into memory and counts them written: for
    /// handlers that must see the bytes (TLS). An empty result with bytes remaining is an
    /// error ([`truncated`](Self::truncated)).
    pub fn read_chunk(&mut self, max: usize) -> io::Result<Bytes> {
        let want = usize::try_from(self.remaining())
            .unwrap_or(usize::MAX)
            .min(max);
        if want == 0 {
            return Ok(Bytes::new());
        }
        let mut buf = BytesMut::zeroed(want);
        let mut got = 0;
        while got < want {
            match self.file.read_at(
                &mut buf[got..],
                self.position + self.transferred + got as u64,
            ) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if got == 0 {
            return Err(self.truncated());
        }
        buf.truncate(got);
        self.advance(got as u64);
        Ok(buf.freeze())
    }
}

impl PartialEq for FileRegion {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.file, &other.file)
            && (self.position, self.count, self.transferred)
                == (other.position, other.count, other.transferred)
    }
}

impl Eq for FileRegion {}

impl fmt::Debug for FileRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileRegion")
            .field("fd", &self.file.as_raw_fd())
            .field("position", &self.position)
            .field("count", &self.count)
            .field("transferred", &self.transferred)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp_file(bytes: &[u8]) -> (std::path::PathBuf, Arc<File>) {
        let path = std::env::temp_dir().join(format!(
            "netloop-region-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::File::create(&path)
            .unwrap()
            .write_all(bytes)
            .unwrap();
        let f = Arc::new(File::open(&path).unwrap());
        (path, f)
    }

    fn rand_suffix() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        N.fetch_add(1, Ordering::Relaxed)
    }

    #[test]
    fn a_region_to_the_end_counts_the_rest_of_the_file() {
        let (path, f) = temp_file(b"0123456789");
        let r = FileRegion::of_file(f, 3, None).unwrap();
        assert_eq!((r.position(), r.count(), r.remaining()), (3, 7, 7));
        let r = FileRegion::open(&path, 10, None).unwrap();
        assert_eq!(r.count(), 0);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_range_beyond_the_file_or_a_directory_is_refused() {
        let (path, f) = temp_file(b"0123456789");
        let e = FileRegion::of_file(f.clone(), 11, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let e = FileRegion::of_file(f, 5, Some(6)).unwrap_err();
        assert!(e.to_string().contains("past the end"), "{e}");
        let e = FileRegion::open(std::env::temp_dir(), 0, None).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EISDIR));
        let e = FileRegion::open(path.with_extension("missing"), 0, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn read_chunk_reads_the_range_in_pieces_from_where_it_stopped() {
        let (path, f) = temp_file(b"0123456789");
        let mut r = FileRegion::new(f, 2, 6);
        assert_eq!(&r.read_chunk(4).unwrap()[..], b"2345");
        assert_eq!(r.transferred(), 4);
        assert_eq!(&r.read_chunk(4).unwrap()[..], b"67");
        assert_eq!(r.remaining(), 0);
        assert!(r.read_chunk(4).unwrap().is_empty());
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_truncated_file_is_an_error_not_an_endless_wait() {
        let (path, f) = temp_file(b"0123456789");
        let mut r = FileRegion::new(f, 0, 10);
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4)
            .unwrap();
        assert_eq!(&r.read_chunk(16).unwrap()[..], b"0123");
        let e = r.read_chunk(16).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert!(e.to_string().contains("4 of the region's 10 bytes"), "{e}");
        std::fs::remove_file(path).unwrap();
    }
}
