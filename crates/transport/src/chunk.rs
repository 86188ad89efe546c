//! The thread's byte chunk: every stream channel on a loop thread reads into one shared chunk
//! and keeps only the bytes a read returned, as Node's and Netty's pooled allocators do, and
//! small copies (bytes a binding hands over for a write) are carved from it too. An idle
//! connection therefore holds no receive memory between reads, whatever it read before (a
//! per-channel chunk kept 64 KiB reserved, and pages touched, per connection after its first
//! read), and a copy costs no allocation of its own. A chunk is never zeroed: the kernel's
//! receive writes the bytes a read keeps, and nothing else of the chunk is ever read.
//!
//! Ground rules: used only from the thread that runs the channel (a thread-local, so one
//! chunk per loop thread); the borrow lasts for one `recv` system call or one copy, never
//! across user code. A chunk is freed when the last `Bytes` carved from it is dropped.

use std::cell::RefCell;
use std::io;
use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use socket2::SockRef;

/// Receive memory is carved from chunks of this size, so most reads need no allocation.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// Largest copy carved from the chunk; bigger ones get their own allocation.
const MAX_CARVED_COPY: usize = 4096;

thread_local! {
    static CHUNK: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// Runs `fill` on `len` bytes of the chunk's free space (a new chunk if too little is left)
/// and returns the `n` bytes it reports as written, split off the chunk.
///
/// # Safety
/// `fill` must have initialised the first `n` bytes it was given when it returns `Ok(n)`.
unsafe fn carve(
    len: usize,
    fill: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<usize>,
) -> io::Result<Bytes> {
    CHUNK.with(|chunk| {
        let mut buf = chunk.borrow_mut();
        if buf.capacity() - buf.len() < len {
            // The bytes already handed out keep the old chunk alive.
            *buf = BytesMut::with_capacity(READ_CHUNK.max(len));
        }
        let n = fill(&mut buf.spare_capacity_mut()[..len])?.min(len);
        // SAFETY: `buf` was empty (every carve splits off what it wrote) and, per this
        // function's contract, `fill` initialised its first `n` bytes of spare capacity.
        unsafe { buf.set_len(n) };
        Ok(buf.split().freeze())
    })
}

/// Receives up to `len` bytes from `socket` into the thread's chunk (empty `Bytes`: end of
/// input). Errors are the socket's (`WouldBlock`, `Interrupted`, ...).
pub(crate) fn recv(socket: SockRef<'_>, len: usize) -> io::Result<Bytes> {
    // SAFETY: `recv` initialises the first `n` bytes of the buffer when it returns `Ok(n)`.
    unsafe { carve(len, |buf| socket.recv(buf)) }
}

/// A copy of `data` as `Bytes`: carved from the thread's chunk when small (no allocation of
/// its own), else allocated.
pub fn copy(data: &[u8]) -> Bytes {
    if data.len() > MAX_CARVED_COPY || data.is_empty() {
        return Bytes::copy_from_slice(data);
    }
    let fill = |buf: &mut [MaybeUninit<u8>]| {
        for (slot, &b) in buf.iter_mut().zip(data) {
            slot.write(b);
        }
        Ok(data.len())
    };
    // SAFETY: `fill` writes all `data.len()` bytes it reports.
    unsafe { carve(data.len(), fill) }.unwrap_or_else(|_| Bytes::copy_from_slice(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn receives_are_carved_from_one_chunk_until_it_runs_out() {
        let (mut tx, rx) = pair();
        tx.write_all(b"abc").unwrap();
        let a = recv(SockRef::from(&rx), 100).unwrap();
        tx.write_all(b"de").unwrap();
        let b = recv(SockRef::from(&rx), 100).unwrap();
        assert_eq!((&a[..], &b[..]), (&b"abc"[..], &b"de"[..]));
        // Adjacent in one allocation: the second read starts where the first ended.
        assert_eq!(a.as_ptr().wrapping_add(3), b.as_ptr());
    }

    #[test]
    fn end_of_input_is_empty_and_a_failed_receive_keeps_the_chunk() {
        let (tx, rx) = pair();
        rx.set_nonblocking(true).unwrap();
        let err = recv(SockRef::from(&rx), 64).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(tx);
        rx.set_nonblocking(false).unwrap();
        assert!(recv(SockRef::from(&rx), 64).unwrap().is_empty());
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
    fn bytes_kept_from_an_old_chunk_stay_intact_when_a_new_one_starts() {
        let kept = copy(b"keep");
        for _ in 0..(2 * READ_CHUNK / MAX_CARVED_COPY) {
            let filler = copy(&[9u8; MAX_CARVED_COPY]);
            assert!(filler.iter().all(|&b| b == 9));
        }
        assert_eq!(&kept[..], b"keep");
    }
}
