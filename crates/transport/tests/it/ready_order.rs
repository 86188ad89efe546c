//! Netty's ready-key order in `SocketChannel::ready`: finish connect → flush (if writable and
//! write interest is set) → read. Proven on a loop driven by hand on the test thread, so that
//! nothing polls between arranging the two readiness edges and the one `run_once` that sees
//! them in a single epoll event for the channel's fd.

use std::cell::{Cell, RefCell};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_transport::eventloop::{EventLoop, LoopConfig};
use netloop_transport::*;

const LIMIT: Duration = Duration::from_secs(20);

/// Records the channel's pending outbound bytes at every `channel_read`.
struct Probe {
    pending_at_read: Rc<RefCell<Vec<usize>>>,
    read_bytes: Rc<Cell<usize>>,
}

impl ChannelHandler for Probe {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.pending_at_read
            .borrow_mut()
            .push(ctx.channel().pending_outbound_bytes());
        let b = msg
            .into_bytes()
            .map_err(|_| TransportError::UnsupportedMessage("test"))?;
        self.read_bytes.set(self.read_bytes.get() + b.len());
        Ok(())
    }
}

/// Reads everything the peer socket holds right now (non-blocking); returns the byte count.
fn drain(peer: &mut TcpStream) -> usize {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match peer.read(&mut buf) {
            Ok(0) => return total,
            Ok(n) => total += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return total,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => panic!("peer read failed: {e}"),
        }
    }
}

#[test]
fn one_event_with_write_and_read_readiness_flushes_before_reading() {
    let (el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
    let local = el.local().unwrap();
    let run_until = |what: &str, cond: &mut dyn FnMut() -> bool| {
        let deadline = Instant::now() + LIMIT;
        loop {
            driver.run_once();
            if cond() {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for: {what}");
            std::thread::sleep(Duration::from_micros(200));
        }
    };

    // A plain peer with a small receive buffer (set on the listener, inherited by the accepted
    // socket) so that the client's bytes back up into its own send buffer.
    let ls = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    ls.set_recv_buffer_size(4096).unwrap();
    ls.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    ls.listen(8).unwrap();
    let listener: TcpListener = ls.into();
    let addr = listener.local_addr().unwrap();

    let (ch, connected) = Bootstrap::new()
        .group(el.clone())
        .option(ChannelOption::SoSndbuf(4096))
        .connect_on(&local, addr);
    run_until("connect", &mut || connected.is_done());
    connected.result().unwrap().unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.set_nonblocking(true).unwrap();

    let pending_at_read = Rc::new(RefCell::new(Vec::new()));
    let read_bytes = Rc::new(Cell::new(0));
    ch.pipeline()
        .add_last(
            "probe",
            Probe {
                pending_at_read: pending_at_read.clone(),
                read_bytes: read_bytes.clone(),
            },
        )
        .unwrap();

    // Write far more than the kernel buffers can hold; the peer does not read yet, so bytes
    // stay pending in the outbound buffer and write interest is set.
    let payload = vec![0x5a_u8; 4 * 1024 * 1024];
    ch.write_and_flush(Bytes::from(payload));
    // Let any scheduled flush task and any write readiness already due play out, so the
    // state below is settled before the two edges are arranged.
    run_until("write interest set", &mut || ch.is_flush_pending());
    for _ in 0..20 {
        driver.run_once();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(ch.is_flush_pending(), "write interest must be set");
    let pending_before = ch.pending_outbound_bytes();
    assert!(pending_before > 0, "bytes must stay pending");
    assert!(pending_at_read.borrow().is_empty(), "nothing read yet");

    // Now, without running the loop: the peer drains what it has (frees its window, the
    // client's send buffer empties → writable edge) and sends a few bytes (→ readable edge).
    // Both edges sit on the same epoll item, so the next poll reports them in ONE event.
    let mut drained = 0;
    let deadline = Instant::now() + Duration::from_millis(200);
    while Instant::now() < deadline {
        drained += drain(&mut peer);
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(drained > 0, "peer received the client's bytes");
    peer.write_all(b"ping!").unwrap();
    // Only lets the bytes reach the client's kernel buffer; no assertion relies on it.
    std::thread::sleep(Duration::from_millis(50));

    run_until("client read the peer's bytes", &mut || {
        !pending_at_read.borrow().is_empty()
    });

    // Flush-before-read: the writable part of the event is handled first, so when the first
    // `channel_read` runs the flush has already handed more bytes to the socket and pending
    // dropped. Were the order read-then-flush, the first read would still see exactly
    // `pending_before` (nothing else writes between the settled state and this event, and
    // `pending_outbound_bytes` only shrinks when bytes go to the socket).
    let first = pending_at_read.borrow()[0];
    assert!(
        first < pending_before,
        "pending at first read {first} must be below {pending_before}: flush must run before read"
    );
    assert!(read_bytes.get() > 0);

    ch.close();
    driver.run_until_idle();
}
