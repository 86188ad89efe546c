//! File regions written through a TLS server over loopback sockets: the file's bytes arrive
//! encrypted, in order with the byte writes, read a piece at a time (memory stays bounded for a
//! peer that does not read), and a truncated file fails its write and cuts the connection.

use crate::common;
use crate::net;

use std::cell::{Cell, RefCell};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use common::pki::Ca;
use common::probe::{tls_and_probe, Log, Probe, Shared};
use net::Net;
use netloop_tls::{SslContext, SslOptions};
use netloop_transport::*;

const MIB: usize = 1024 * 1024;
/// The plaintext of one batch of records (a region's piece at most).
const PIECE: usize = 64 * 1024;

thread_local! {
    static CHILDREN: RefCell<Vec<Child>> = const { RefCell::new(Vec::new()) };
}

/// In front of the server's `SslHandler`: counts the record bytes it writes and the largest
/// pending outbound total seen right after one of its writes.
#[derive(Default)]
struct Counter {
    records: Cell<usize>,
    max_pending: Cell<usize>,
}

struct Counting(Rc<Counter>);

impl ChannelHandler for Counting {
    fn write(&self, ctx: &ChannelHandlerContext, msg: Message, p: ChannelPromise) -> HandlerResult {
        let c = &self.0;
        c.records
            .set(c.records.get() + msg.as_bytes().map_or(0, Bytes::len));
        ctx.write_with(msg, p);
        let pending = ctx.channel().pending_outbound_bytes();
        c.max_pending.set(c.max_pending.get().max(pending));
        Ok(())
    }
}

/// A file in the temp dir, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str) -> TempFile {
        TempFile(
            std::env::temp_dir().join(format!("netloop-tls-region-{tag}-{}", std::process::id())),
        )
    }

    fn with(tag: &str, bytes: &[u8]) -> TempFile {
        let f = TempFile::new(tag);
        File::create(&f.0).unwrap().write_all(bytes).unwrap();
        f
    }

    fn region(&self) -> FileRegion {
        FileRegion::of_file(Arc::new(File::open(&self.0).unwrap()), 0, None).unwrap()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The server's child channel, its counter, and the promises of the writes made as it was set
/// up (before its handshake could start).
type Child = (Channel, Rc<Counter>, Vec<ChannelPromise>);

struct Conn {
    net: Net,
    _server: Channel,
    client: Channel,
    log: Shared,
    child: Channel,
    counter: Rc<Counter>,
    early: Vec<ChannelPromise>,
}

fn connect(child_opts: ChannelOptions, client_opts: ChannelOptions) -> Conn {
    connect_with(child_opts, client_opts, |_| Vec::new())
}

/// A TLS server whose children are `Counting` + TLS + probe (`early` writes to each as it is
/// set up, returning the writes' promises), and a TLS client connected to it; returns once the
/// server has its child.
fn connect_with(
    child_opts: ChannelOptions,
    client_opts: ChannelOptions,
    early: impl Fn(&Channel) -> Vec<ChannelPromise> + Send + Sync + 'static,
) -> Conn {
    let net = Net::new();
    let ca = Ca::new("test CA");
    let server_ctx = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["localhost"])),
        ..Default::default()
    })
    .unwrap();
    let client_ctx = SslContext::client(&SslOptions {
        ca: Some(ca.pem.clone().into_bytes()),
        ..Default::default()
    })
    .unwrap();
    let (server, addr) = net.server(ChannelOptions::default(), child_opts, move |ch| {
        let counter = Rc::new(Counter::default());
        ch.pipeline().add_last("count", Counting(counter.clone()))?;
        let tls = server_ctx
            .new_handler(None)
            .map_err(|e| e.into_transport())?;
        ch.pipeline().add_last("tls", tls)?;
        let log: Shared = Rc::new(RefCell::new(Log::default()));
        ch.pipeline()
            .add_last("probe", Probe { log, echo: false })?;
        let promises = early(ch);
        CHILDREN.with(|c| c.borrow_mut().push((ch.clone(), counter, promises)));
        Ok(())
    });
    let (client, connected) = net.client(client_opts, net::no_child, addr);
    let log = tls_and_probe(&client, client_ctx.new_handler(Some("localhost")).unwrap());
    net.run_until("connect", || connected.is_done());
    net.run_until("accept", || CHILDREN.with(|c| !c.borrow().is_empty()));
    let (child, counter, early) = CHILDREN.with(|c| c.borrow_mut().remove(0));
    Conn {
        net,
        _server: server,
        client,
        log,
        child,
        counter,
        early,
    }
}

fn succeeded(p: &ChannelPromise) -> bool {
    p.future().is_some_and(|f| f.is_success())
}

#[test]
fn a_region_between_two_byte_writes_arrives_whole_and_in_order_and_every_write_succeeds() {
    let content = net::pattern(3 * MIB, 11);
    let file = TempFile::with("order", &content);
    let path = file.0.clone();
    // Written as the server's child is set up: held until its handshake completes.
    let c = connect_with(
        ChannelOptions::default(),
        ChannelOptions::default(),
        move |ch| {
            let promises: Vec<ChannelPromise> = (0..3).map(|_| ChannelPromise::new()).collect();
            let region = FileRegion::open(&path, 0, None).unwrap();
            ch.write_with(Bytes::from_static(b"HEAD"), promises[0].clone());
            ch.write_with(region, promises[1].clone());
            ch.write_with(Bytes::from_static(b"TAIL"), promises[2].clone());
            ch.flush();
            promises
        },
    );
    let promises = &c.early;
    let total = 4 + content.len() + 4;
    let log = c.log.clone();
    c.net.run_until("everything received", || {
        log.borrow().data.len() >= total && promises.iter().all(|p| p.is_done())
    });
    let data = std::mem::take(&mut c.log.borrow_mut().data);
    assert_eq!(data.len(), total);
    assert_eq!(&data[..4], b"HEAD");
    assert!(
        data[4..4 + content.len()] == content[..],
        "the file's bytes"
    );
    assert_eq!(&data[4 + content.len()..], b"TAIL");
    assert!(promises.iter().all(succeeded));
    assert_eq!(
        c.child.pending_outbound_bytes(),
        0,
        "nothing counted is left"
    );
}

#[test]
fn a_large_region_to_a_peer_that_does_not_read_is_read_a_piece_at_a_time() {
    let size = 64 * MIB;
    let file = TempFile::new("large");
    {
        // Sparse, with the block's number at the start of every MiB.
        let f = File::create(&file.0).unwrap();
        f.set_len(size as u64).unwrap();
        for i in 0..(size / MIB) as u64 {
            f.write_at(&i.to_le_bytes(), i * MIB as u64).unwrap();
        }
    }
    let small = |o: ChannelOptions, opt| o.with(opt).unwrap();
    let child_opts = small(
        ChannelOptions::default(),
        ChannelOption::SoSndbuf(64 * 1024),
    );
    let client_opts = small(ChannelOptions::default(), ChannelOption::AutoRead(false));
    let client_opts = small(client_opts, ChannelOption::SoRcvbuf(64 * 1024));
    let c = connect(child_opts, client_opts);
    let log = c.log.clone();
    c.net
        .run_until("handshake", || log.borrow().handshake() == Some("ok"));

    let done = ChannelPromise::new();
    c.child.write_with(file.region(), done.clone());
    c.child.flush();
    c.net.run_for(Duration::from_millis(300));
    let high = c.child.write_buffer_water_mark().high;
    let encrypted = c.counter.records.get();
    assert!(
        !done.is_done(),
        "the peer reads nothing: the region cannot be sent"
    );
    assert!(
        encrypted < 8 * MIB,
        "{encrypted} bytes of records made for a peer that reads nothing"
    );
    assert!(c.child.pending_outbound_bytes() <= high + 2 * PIECE);

    c.client.set_option(ChannelOption::AutoRead(true)).unwrap();
    c.net.run_until("everything received", || {
        log.borrow().data.len() >= size && done.is_done()
    });
    assert!(succeeded(&done));
    let data = std::mem::take(&mut c.log.borrow_mut().data);
    assert_eq!(data.len(), size);
    for (i, block) in data.chunks(MIB).enumerate() {
        assert_eq!(block[..8], (i as u64).to_le_bytes(), "block {i}");
        assert!(block[8..].iter().all(|&b| b == 0), "block {i}");
    }
    let max = c.counter.max_pending.get();
    assert!(
        max <= high + 2 * PIECE,
        "{max} bytes pending at most (high water mark {high})"
    );
    assert_eq!(c.child.pending_outbound_bytes(), 0);
}

#[test]
fn bytes_held_behind_a_region_beyond_the_high_water_mark_do_not_stall_it() {
    let c = connect(ChannelOptions::default(), ChannelOptions::default());
    let content = net::pattern(4 * MIB, 5);
    let file = TempFile::with("behind", &content);
    let tail = Bytes::from(net::pattern(256 * 1024, 9));
    let (region, after) = (ChannelPromise::new(), ChannelPromise::new());
    c.child.write_with(file.region(), region.clone());
    c.child.write_with(tail.clone(), after.clone());
    assert!(!c.child.is_writable(), "the held tail counts");
    c.child.flush();
    let total = content.len() + tail.len();
    let log = c.log.clone();
    c.net.run_until("everything received", || {
        log.borrow().data.len() >= total && after.is_done()
    });
    let data = std::mem::take(&mut c.log.borrow_mut().data);
    assert!(data[..content.len()] == content[..]);
    assert!(data[content.len()..] == tail[..]);
    assert!(succeeded(&region) && succeeded(&after));
    assert_eq!(c.child.pending_outbound_bytes(), 0);
}

#[test]
fn a_truncated_file_fails_the_region_and_cuts_the_connection_without_close_notify() {
    let c = connect(ChannelOptions::default(), ChannelOptions::default());
    let log = c.log.clone();
    c.net
        .run_until("handshake", || log.borrow().handshake() == Some("ok"));
    let content = net::pattern(MIB, 3);
    let file = TempFile::with("truncated", &content);
    let region = file.region();
    OpenOptions::new()
        .write(true)
        .open(&file.0)
        .unwrap()
        .set_len(100_000)
        .unwrap();
    let promises: Vec<ChannelPromise> = (0..3).map(|_| ChannelPromise::new()).collect();
    c.child
        .write_with(Bytes::from_static(b"HEAD"), promises[0].clone());
    c.child.write_with(region, promises[1].clone());
    c.child
        .write_with(Bytes::from_static(b"TAIL"), promises[2].clone());
    c.child.flush();
    c.net
        .run_until("the client sees the cut", || log.borrow().has("inactive"));
    assert!(succeeded(&promises[0]));
    let err = promises[1]
        .future()
        .and_then(|f| f.result())
        .and_then(|r| r.err())
        .expect("the region failed");
    match &err {
        TransportError::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof),
        other => panic!("not the read's error: {other:?}"),
    }
    assert!(promises[2].is_done() && !succeeded(&promises[2]));
    assert!(!c.child.is_open(), "the server closed the connection");
    assert!(!log.borrow().has("close_notify"), "no clean end");
    // What arrived is a prefix of the file after the head, never more than the file had.
    let data = &log.borrow().data;
    let mut want = b"HEAD".to_vec();
    want.extend_from_slice(&content[..100_000]);
    assert!(data.len() <= want.len() && data[..] == want[..data.len()]);
}

#[test]
fn a_write_held_through_the_servers_handshake_follows_its_session_tickets() {
    let c = connect_with(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        let hello = ChannelPromise::new();
        ch.write_with(Bytes::from_static(b"hello"), hello.clone());
        ch.flush();
        vec![hello]
    });
    let log = c.log.clone();
    c.net.run_until("hello", || {
        log.borrow().data.len() >= 5 || log.borrow().has("inactive")
    });
    assert_eq!(log.borrow().data, b"hello");
    assert!(!log
        .borrow()
        .events
        .iter()
        .any(|e| e.starts_with("exception")));
    c.net.run_until("written", || c.early[0].is_done());
    assert!(succeeded(&c.early[0]));
}

#[test]
fn held_writes_fail_on_a_close_before_the_handshake_regions_too_and_nothing_stays_counted() {
    let ca = Ca::new("test CA");
    let ctx = SslContext::server(&SslOptions {
        identity: Some(ca.leaf(&["localhost"])),
        ..Default::default()
    })
    .unwrap();
    let tls: Rc<dyn ChannelHandler> = Rc::new(ctx.new_handler(None).unwrap());
    let ch = EmbeddedChannel::new(vec![("tls", tls)]);
    let file = TempFile::with("close", &net::pattern(100_000, 1));
    let (bytes, region) = (ChannelPromise::new(), ChannelPromise::new());
    ch.pipeline()
        .write_with(Bytes::from_static(b"HEAD"), bytes.clone());
    ch.pipeline().write_with(file.region(), region.clone());
    ch.pipeline().flush();
    assert!(
        !bytes.is_done() && !region.is_done(),
        "held until the handshake"
    );
    assert_eq!(
        ch.channel().pending_outbound_bytes(),
        4,
        "a region counts nothing"
    );
    ch.close();
    for p in [&bytes, &region] {
        let r = p.future().and_then(|f| f.result());
        assert!(
            matches!(r, Some(Err(TransportError::ChannelClosed))),
            "{r:?}"
        );
    }
    assert_eq!(ch.channel().pending_outbound_bytes(), 0);
}
