//! Half-closure and queued output: a client sends everything, half-closes, then reads the
//! reply. With `allow_half_closure` the channel stays open and `shutdown_output` sends the FIN
//! only after the queued output, so the whole backed-up reply arrives; without it the peer's
//! FIN closes the channel at once and what was still queued is dropped (as in Netty).

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::net::*;
use netloop_transport::*;

/// Echo that shuts its output down once the peer's input ended (with allow_half_closure).
struct EchoThenHalfClose;
impl ChannelHandler for EchoThenHalfClose {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.write(msg);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, e: UserEvent) -> HandlerResult {
        if e.is::<ChannelInputShutdown>() {
            ctx.channel().shutdown_output();
        }
        Ok(())
    }
}

const SENT: usize = 4 * 1024 * 1024;

/// Sends `SENT` bytes without reading, half-closes, then reads until the server closes.
fn send_half_close_read_all(addr: std::net::SocketAddr) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(&pattern(SENT, 7)).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got); // EOF (or a reset, without half-closure)
        got
    })
}

fn echo_server(net: &Net, allow_half_closure: bool) -> (Channel, std::net::SocketAddr) {
    let child = ChannelOptions::default()
        .with(ChannelOption::AllowHalfClosure(allow_half_closure))
        .unwrap()
        .with(ChannelOption::SoSndbuf(16 * 1024))
        .unwrap();
    net.server(ChannelOptions::default(), child, |ch| {
        ch.pipeline().add_last("echo", EchoThenHalfClose)?;
        ACCEPTED.with(|a| a.borrow_mut().push(ch.clone()));
        Ok(())
    })
}

#[test]
fn with_half_closure_a_half_closing_client_reads_the_whole_backed_up_reply() {
    let net = Net::new();
    let (_server, addr) = echo_server(&net, true);
    let client = send_half_close_read_all(addr);
    net.run_until("the client read to the end", || client.is_finished());
    let got = client.join().unwrap();
    assert_eq!(got.len(), SENT, "every byte came back before the FIN");
    assert!(got == pattern(SENT, 7));
    let ch = accepted(0).unwrap();
    net.run_until("closed once both sides are shut", || !ch.is_open());
}

#[test]
fn without_half_closure_the_peers_fin_closes_the_channel_and_drops_the_queued_reply() {
    let net = Net::new();
    let (_server, addr) = echo_server(&net, false);
    let client = send_half_close_read_all(addr);
    net.run_until("the client read to the end", || client.is_finished());
    let got = client.join().unwrap();
    assert!(
        got.len() < SENT,
        "the reply still queued when the FIN came was dropped (got {} of {SENT})",
        got.len()
    );
    assert!(!accepted(0).unwrap().is_open());
}

#[test]
fn shutdown_output_completes_once_the_flushed_output_is_written_and_later_writes_fail() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::SoSndbuf(8 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut peer = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&peer)
        .set_recv_buffer_size(8 * 1024)
        .unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let big = ch.write_future(Bytes::from(pattern(1024 * 1024, 3)));
    ch.flush();
    assert!(ch.is_flush_pending(), "the peer does not read yet");
    let unflushed = ch.write_future(Bytes::from_static(b"written, never flushed"));
    let shut = ch.shutdown_output();
    let late = ch.write_future(Bytes::from_static(b"after shutdownOutput"));
    net.run_until("the late write failed", || late.is_done());
    assert_eq!(
        late.result().unwrap().unwrap_err().code(),
        "ERR_OUTPUT_SHUTDOWN"
    );
    assert!(!shut.is_done(), "the FIN waits for the flushed output");
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        (got, peer) // the peer stays open: the channel is only half-closed
    });
    net.run_until("output shut down", || shut.is_done());
    assert!(shut.is_success());
    assert!(big.is_success());
    assert_eq!(
        unflushed.result().unwrap().unwrap_err().code(),
        "ERR_OUTPUT_SHUTDOWN",
        "a write still unflushed when the FIN went out"
    );
    net.run_until("the peer saw EOF", || reader.is_finished());
    let (got, _peer) = reader.join().unwrap();
    assert_eq!(got, pattern(1024 * 1024, 3));
    assert!(ch.is_open(), "input still open: a half-closed channel");
}
