//! The thread's byte chunk: every stream channel on a loop thread reads into one shared chunk
//! and keeps only the bytes a read returned, as Node's and Netty's pooled allocators do, and
//! small copies (bytes a binding hands over for a write) are carved from it too. An idle
//! connection therefore holds no receive memory between reads, whatever it read before (a
//! per-channel chunk kept 64 KiB reserved, and pages touched, per connection after its first
//! read), and a copy costs no allocation of its own.
//!
//! Ground rules: used only from the thread that runs the channel (a thread-local, so one
//! chunk per loop thread); the borrow lasts for one `read` system call or one copy, never
//! across user code. A chunk is freed when the last `Bytes` carved from it is dropped.

use std::cell::RefCell;
use std::io;

use bytes::{Bytes, BytesMut};

/// Receive memory is carved from chunks of this size, so most reads need no allocation.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

thread_local! {
    static CHUNK: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// Calls `read` with `len` writable bytes of the thread's chunk and returns what it filled,
/// split off the chunk (an empty `Bytes` when it read 0 bytes).
pub(crate) fn read_with(
    len: usize,
    read: impl FnOnce(&mut [u8]) -> io::Result<usize>,
) -> io::Result<Bytes> {
    CHUNK.with(|chunk| {
        let mut buf = chunk.borrow_mut();
        if buf.len() < len {
            // The bytes already handed out keep the old chunk alive; a new one is zeroed once
            // and then only carved, never cleared again.
            *buf = BytesMut::zeroed(READ_CHUNK.max(len));
        }
        let n = read(&mut buf[..len])?;
        Ok(buf.split_to(n.min(len)).freeze())
    })
}

/// Largest copy carved from the chunk; bigger ones get their own allocation.
const MAX_CARVED_COPY: usize = 4096;

/// A copy of `data` as `Bytes`: carved from the thread's chunk when small (no allocation of
/// its own), else allocated.
pub fn copy(data: &[u8]) -> Bytes {
    if data.len() > MAX_CARVED_COPY || data.is_empty() {
        return Bytes::copy_from_slice(data);
    }
    read_with(data.len(), |buf| {
        buf.copy_from_slice(data);
        Ok(data.len())
    })
    .unwrap_or_else(|_| Bytes::copy_from_slice(data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_carved_from_one_chunk_until_it_runs_out() {
        let a = read_with(100, |b| {
            b[..3].copy_from_slice(b"abc");
            Ok(3)
        })
        .unwrap();
        let b = read_with(100, |b| {
            b[..2].copy_from_slice(b"de");
            Ok(2)
        })
        .unwrap();
        assert_eq!(&a[..], b"abc");
        assert_eq!(&b[..], b"de");
        // Adjacent in one allocation: the second read starts where the first ended.
        assert_eq!(a.as_ptr().wrapping_add(3), b.as_ptr());
    }

    #[test]
    fn an_empty_read_returns_empty_bytes_and_a_failed_read_keeps_the_chunk() {
        assert!(read_with(64, |_| Ok(0)).unwrap().is_empty());
        let err = read_with(64, |_| Err(io::Error::from(io::ErrorKind::WouldBlock)));
        assert_eq!(err.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let c = read_with(64, |b| {
            b[0] = 7;
            Ok(1)
        })
        .unwrap();
        assert_eq!(&c[..], &[7]);
    }

    #[test]
    fn copies_share_the_chunk_and_big_ones_stand_alone() {
        let a = copy(b"hello");
        let b = copy(b"world");
        assert_eq!((&a[..], &b[..]), (&b"hello"[..], &b"world"[..]));
        assert_eq!(a.as_ptr().wrapping_add(5), b.as_ptr());
        let big = vec![3u8; MAX_CARVED_COPY + 1];
        assert_eq!(&copy(&big)[..], &big[..]);
        assert!(copy(b"").is_empty());
    }

    #[test]
    fn a_read_larger_than_what_is_left_gets_a_fresh_chunk_and_old_bytes_stay_intact() {
        let kept = read_with(16, |b| {
            b[..4].copy_from_slice(b"keep");
            Ok(4)
        })
        .unwrap();
        let big = read_with(READ_CHUNK + 1, |b| {
            b.fill(9);
            Ok(b.len())
        })
        .unwrap();
        assert_eq!(big.len(), READ_CHUNK + 1);
        assert_eq!(&kept[..], b"keep");
    }
}
