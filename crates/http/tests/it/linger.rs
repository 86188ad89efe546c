//! Lingering close on a real socket: a client still uploading when the codec refuses its
//! request gets the refusal, not a reset; the client's end, or the linger timeout, closes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netloop_http::{HttpServerCodec, HttpServerConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

/// Counts the channels that went inactive.
struct Closes(Arc<AtomicUsize>);

impl ChannelHandler for Closes {
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.0.fetch_add(1, Ordering::SeqCst);
        ctx.fire_channel_inactive();
        Ok(())
    }
}

/// A server whose codec refuses bodies over 1 KiB; the closes of its connections.
fn server(linger: Option<Duration>) -> (SocketAddr, Arc<AtomicUsize>, EventLoopGroup) {
    let group = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let closes = Arc::new(AtomicUsize::new(0));
    let c = closes.clone();
    let server = ServerBootstrap::new()
        .group(group.clone(), group.clone())
        .child_handler(move |ch| {
            let cfg = HttpServerConfig {
                max_body_size: 1024,
                linger_timeout: linger,
                ..HttpServerConfig::default()
            };
            ch.pipeline().add_last("closes", Closes(c.clone()))?;
            ch.pipeline()
                .add_last("http", HttpServerCodec::new(cfg).expect("config"))?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .wait()
        .unwrap();
    (server.local_addr().unwrap(), closes, group)
}

const HEAD: &[u8] = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n";

/// Writes the announced 50 MB body without reading (as a client busy with its upload), then
/// reads what came back. Returns (bytes written before a write failed, the response or the
/// read's error).
fn upload_then_read(addr: SocketAddr) -> (usize, Result<String, std::io::ErrorKind>) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(HEAD).unwrap();
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < 50_000_000 {
        match c.write(&chunk) {
            Ok(n) => sent += n,
            Err(_) => break,
        }
    }
    let mut got = Vec::new();
    let r = c.read_to_end(&mut got);
    match r {
        Ok(_) => (sent, Ok(String::from_utf8_lossy(&got).into_owned())),
        Err(_) if !got.is_empty() => (sent, Ok(String::from_utf8_lossy(&got).into_owned())),
        Err(e) => (sent, Err(e.kind())),
    }
}

#[test]
fn a_client_still_uploading_reads_the_413_instead_of_a_reset() {
    let (addr, closes, _group) = server(Some(Duration::from_secs(10)));
    for _ in 0..3 {
        let (sent, got) = upload_then_read(addr);
        let text = got.expect("the response, not a reset");
        assert!(text.starts_with("HTTP/1.1 413 "), "{text:?}");
        assert!(
            text.contains("connection: close") || text.contains("Connection: close"),
            "{text:?}"
        );
        assert!(
            sent >= 50_000_000,
            "every write succeeded: the server read and dropped the upload"
        );
    }
    let t = Instant::now();
    while closes.load(Ordering::SeqCst) < 3 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        closes.load(Ordering::SeqCst),
        3,
        "each connection closed with its client"
    );
}

#[test]
fn without_lingering_the_close_resets_a_client_still_uploading() {
    // The behaviour lingering exists for (Netty's: close at once): the close with unread input
    // sends a reset, and the client's writes fail. A client that stops at the failed write
    // (node's http client) reports that error instead of the response it had received.
    let (addr, _closes, _group) = server(None);
    let (sent, _) = upload_then_read(addr);
    assert!(sent < 50_000_000, "a write failed after {sent} bytes");
}

#[test]
fn the_clients_close_ends_the_lingering_and_the_timeout_bounds_it() {
    let (addr, closes, _group) = server(Some(Duration::from_millis(300)));
    // A client that reads the refusal and closes: the server closes long before the timeout.
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(HEAD).unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap(); // the 413, then the FIN of the half-close
    assert!(got.starts_with(b"HTTP/1.1 413 "));
    let t = Instant::now();
    drop(c);
    while closes.load(Ordering::SeqCst) < 1 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(closes.load(Ordering::SeqCst), 1);

    // A client that never closes and goes on sending: closed when the timeout runs out.
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(HEAD).unwrap();
    let t = Instant::now();
    let chunk = [b'y'; 1024];
    while closes.load(Ordering::SeqCst) < 2 && t.elapsed() < Duration::from_secs(10) {
        if c.write_all(&chunk).is_err() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let waited = t.elapsed();
    while closes.load(Ordering::SeqCst) < 2 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(closes.load(Ordering::SeqCst), 2);
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
}
