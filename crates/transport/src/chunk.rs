//! The thread's byte chunk: every stream channel on a loop thread reads into one shared chunk
//! and keeps only the bytes a read returned, as Node's and Netty's pooled allocators do, and
//! small copies (bytes a binding hands over for a write) are carved from it too. An idle
//! connection therefore holds no receive memory between reads, whatever it read before (a
//! per-channel chunk kept 64 KiB reserved, and pages touched, per connection after its first
//! read), and a copy costs no allocation of its own. A chunk is never zeroed: the kernel's
//! receive writes the bytes a read keeps, and nothing else of the chunk is ever read.
//!
//!
//! Chunks are recycled, as the thread caches of Netty's pooled allocator recycle their pages: a
//! chunk that runs out is retired to a short per-thread list, and the next chunk is the first
//! retired one whose bytes have all been dropped (`BytesMut::try_reclaim`), a new allocation
//! only when none has. Without this, a bulk stream (16 reads of 64 KiB per connection and read
//! batch, written back at the batch's end) allocated and freed megabytes per round; the
//! allocator gave the freed pages back to the system and faulted them in again (up to 250 page
//! faults per MB echoed, twice the C epoll server's CPU per MB).
//!
//! Ground rules: used only from the thread that runs the channel (the thread context's
//! `chunks`, so one chunk per loop thread); the borrow lasts for one `recv` system call or one copy, never
//! across user code. A chunk is freed when the last `Bytes` carved from it is dropped and it is
//! not in the retired list (which holds at most `MAX_RETIRED` chunks, so at most
//! `MAX_RETIRED * READ_CHUNK` bytes a thread keeps after a burst).

use std::collections::VecDeque;
use std::io;
use std::mem::MaybeUninit;

use bytes::{Bytes, BytesMut};
use socket2::SockRef;

use crate::thread_context;

/// Receive memory is carved from chunks of this size, so most reads need no allocation: room
/// for a read of the default maximum (64 KiB) and the reader's drain probe.
pub(crate) const READ_CHUNK: usize = 64 * 1024 + crate::socket_channel::DRAIN_PROBE;

/// Largest copy carved from the chunk; bigger ones get their own allocation.
const MAX_CARVED_COPY: usize = 4096;

/// Chunks kept for reuse per thread: enough for the bytes 4 connections keep in flight in one
/// read batch each (16 reads of 64 KiB), at most 4 MiB per loop thread after such a burst.
const MAX_RETIRED: usize = 64;

/// A thread's chunks: the one being carved and the retired ones waiting to be reused (the
/// thread context's `chunks`).
#[derive(Default)]
pub(crate) struct Chunks {
    current: BytesMut,
    retired: VecDeque<BytesMut>,
}

impl Chunks {
    /// Makes `current` a chunk with room for `len` bytes: a retired chunk whose bytes were
    /// all dropped if one is big enough, else a new one. The old `current` is retired (its
    /// bytes keep it alive until they are dropped).
    fn renew(&mut self, len: usize) {
        // A chunk carved to its end has no capacity left but still holds its allocation, so
        // every old chunk is retired (the thread's first, empty one costs a slot once).
        if self.retired.len() == MAX_RETIRED {
            // The oldest is freed when its last bytes are (or now, if they are gone).
            self.retired.pop_front();
        }
        self.retired.push_back(std::mem::take(&mut self.current));
        let reusable = self.retired.iter_mut().position(|c| c.try_reclaim(len));
        self.current = match reusable {
            Some(i) => self.retired.swap_remove_back(i).unwrap_or_default(),
            None => {
                // Chunks this thread allocated (not reused): what the recycling saves shows here.
                thread_context::with(|c| c.chunks_allocated.set(c.chunks_allocated.get() + 1));
                BytesMut::with_capacity(READ_CHUNK.max(len))
            }
        };
    }
}

/// Chunks the calling thread has allocated so far (reused ones are not counted).
pub fn chunks_allocated() -> u64 {
    thread_context::with(|c| c.chunks_allocated.get())
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
    // SAFETY: forwarded: this function's contract is `carve_up_to`'s with `max == len`.
    unsafe { carve_up_to(len, len, fill) }.map(|(bytes, _)| bytes)
}

/// As `carve`, but offers `fill` all of the chunk's free space up to `max` when that is more
/// than `len`; returns the bytes and how many were offered.
///
/// # Safety
/// As `carve`.
unsafe fn carve_up_to(
    len: usize,
    max: usize,
    fill: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<usize>,
) -> io::Result<(Bytes, usize)> {
    thread_context::with(|c| {
        // After the thread's teardown nothing is kept: a carve gets a chunk of its own.
        // (Made only then: an unused one still cost its drop on every carve.)
        let mut own;
        let mut kept = c.chunks();
        let chunks = match kept.as_deref_mut() {
            Some(kept) => kept,
            None => {
                own = Chunks::default();
                &mut own
            }
        };
        if chunks.current.capacity() - chunks.current.len() < len {
            chunks.renew(len);
        }
        let buf = &mut chunks.current;
        let len = (buf.capacity() - buf.len()).min(max).max(len);
        let n = fill(&mut buf.spare_capacity_mut()[..len])?.min(len);
        // SAFETY: `buf` was empty (every carve splits off what it wrote) and, per this
        // function's contract, `fill` initialised its first `n` bytes of spare capacity.
        unsafe { buf.set_len(n) };
        Ok((buf.split().freeze(), len))
    })
}

/// Receives up to `len` bytes from `socket` into the thread's chunk (empty `Bytes`: end of
/// input). Errors are the socket's (`WouldBlock`, `Interrupted`, ...).
#[cfg(test)]
pub(crate) fn recv(socket: SockRef<'_>, len: usize) -> io::Result<Bytes> {
    // SAFETY: `recv` initialises the first `n` bytes of the buffer when it returns `Ok(n)`.
    unsafe { carve(len, |buf| socket.recv(buf)) }
}

/// Receives at least `len` bytes' room from `socket` into the thread's chunk, and all the
/// chunk's free space up to `max` when it has more: asking for more costs no memory (only
/// what the read returns is kept), and a read that fills exactly what it asked for looks as if
/// more is waiting, so the larger the ask, the fewer reads end in a wasted `WouldBlock` (a
/// 16 KiB message read with a 16 KiB ask took two system calls). Returns the bytes (empty:
/// end of input) and the size asked for.
pub(crate) fn recv_up_to(
    socket: SockRef<'_>,
    len: usize,
    max: usize,
) -> io::Result<(Bytes, usize)> {
    // SAFETY: `recv` initialises the first `n` bytes of the buffer when it returns `Ok(n)`.
    unsafe { carve_up_to(len, max, |buf| socket.recv(buf)) }
}

/// A copy of `data` as `Bytes`: carved from the thread's chunk when small (no allocation of
/// its own), else allocated.
pub fn copy(data: &[u8]) -> Bytes {
    if data.len() > MAX_CARVED_COPY || data.is_empty() {
        return Bytes::copy_from_slice(data);
    }
    let fill = |buf: &mut [MaybeUninit<u8>]| {
        let dst = &mut buf[..data.len()];
        // SAFETY: `dst` is exactly `data.len()` writable bytes, and a fresh `&mut` borrow of
        // the chunk's spare capacity cannot overlap `data` (a shared borrow). (A plain copy:
        // the per-byte loop it replaces cost ~90 instructions for 64 bytes.)
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), dst.as_mut_ptr().cast::<u8>(), data.len())
        };
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
    fn a_receive_is_offered_the_chunks_free_space_up_to_the_maximum() {
        let (mut tx, rx) = pair();
        tx.write_all(&[1u8; 3000]).unwrap();
        // Asked for at least 1 KiB, offered up to 2 KiB: the read takes 2 KiB and says so.
        let (a, asked) = recv_up_to(SockRef::from(&rx), 1024, 2048).unwrap();
        assert_eq!((a.len(), asked), (2048, 2048));
        // The rest is shorter than what was offered: a short read, the socket drained.
        let (b, asked) = recv_up_to(SockRef::from(&rx), 1024, READ_CHUNK).unwrap();
        assert_eq!(b.len(), 952);
        assert!(asked > b.len() && asked <= READ_CHUNK, "asked {asked}");
        assert!(a.iter().chain(b.iter()).all(|&x| x == 1));
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
    fn a_stream_whose_bytes_are_dropped_reuses_one_chunk() {
        let before = chunks_allocated();
        for _ in 0..(100 * READ_CHUNK / MAX_CARVED_COPY) {
            drop(copy(&[5u8; MAX_CARVED_COPY]));
        }
        assert!(
            chunks_allocated() - before <= 1,
            "100 chunks' worth streamed"
        );
    }

    #[test]
    fn chunks_freed_by_a_burst_serve_the_next_burst_without_allocating() {
        // A read batch keeps 16 chunks' worth of bytes until its write completes (a bulk echo).
        let burst = || -> Vec<Bytes> {
            (0..(16 * READ_CHUNK / MAX_CARVED_COPY))
                .map(|_| copy(&[6u8; MAX_CARVED_COPY]))
                .collect()
        };
        drop(burst());
        let before = chunks_allocated();
        for _ in 0..10 {
            let held = burst();
            assert!(held.iter().all(|b| b.iter().all(|&x| x == 6)));
        }
        assert!(
            chunks_allocated() - before <= 1,
            "{} chunks allocated for 10 bursts",
            chunks_allocated() - before
        );
    }

    #[test]
    fn a_chunk_still_referenced_is_not_reused() {
        let kept: Vec<Bytes> = (0..(2 * READ_CHUNK / MAX_CARVED_COPY))
            .map(|i| copy(&[i as u8; MAX_CARVED_COPY]))
            .collect();
        for _ in 0..(4 * READ_CHUNK / MAX_CARVED_COPY) {
            drop(copy(&[0xEEu8; MAX_CARVED_COPY]));
        }
        for (i, b) in kept.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8), "copy {i} was overwritten");
        }
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
