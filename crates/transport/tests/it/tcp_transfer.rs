//! Transfers and the write path over loopback: large payloads with content checked, water marks under a slow reader, writeSpinCount.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn echo_of_more_than_one_mib_arrives_intact() {
    let net = Net::new();
    let (_server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    let data = pattern(3 * 1024 * 1024 + 17, 3);
    let expected = data.clone();
    let peer = std::thread::spawn(move || {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut r = s.try_clone().unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = vec![0u8; expected.len()];
            r.read_exact(&mut got).unwrap();
            got == expected
        });
        s.write_all(&data).unwrap();
        reader.join().unwrap()
    });
    net.run_until("echo finished", || peer.is_finished());
    assert!(peer.join().unwrap(), "echoed bytes differ");
}

#[test]
fn client_channel_sends_large_payload_with_content_checked() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let data = pattern(2 * 1024 * 1024 + 5, 9);
    let mut futures = Vec::new();
    for chunk in data.chunks(100_000) {
        futures.push(client.write_future(Bytes::copy_from_slice(chunk)));
    }
    client.flush();
    net.run_until("all data received", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == data.len()
    });
    assert!(*sink(0).0.borrow() == data);
    net.run_until("write promises", || futures.iter().all(|f| f.is_done()));
    assert!(futures.iter().all(|f| f.is_success()));
    // Adaptive sizing grew the receive buffer past its initial 2 KiB during the bulk transfer.
    let max_read = sink(0)
        .1
        .borrow()
        .iter()
        .filter_map(|e| e.strip_prefix("read ").map(|n| n.parse::<usize>().unwrap()))
        .max()
        .unwrap();
    assert!(max_read > 2048, "largest read {max_read}");
}

#[test]
fn slow_reader_never_exceeds_high_water_mark_by_more_than_one_write() {
    let net = Net::new();
    const WRITE: usize = 4096;
    const TOTAL: usize = 2 * 1024 * 1024;
    let water = WaterMark::new(8 * 1024, 32 * 1024).unwrap();
    let child = ChannelOptions::default()
        .with(ChannelOption::WriteBufferWaterMark(water))
        .unwrap()
        .with(ChannelOption::SoSndbuf(32 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let s = TcpStream::connect(addr).unwrap();
    socket2::SockRef::from(&s)
        .set_recv_buffer_size(64 * 1024)
        .unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = s;
        let mut got = Vec::with_capacity(TOTAL);
        let mut buf = [0u8; 8192];
        while got.len() < TOTAL {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "eof");
            got.extend_from_slice(&buf[..n]);
            if got.len() % (256 * 1024) < 8192 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        got
    });
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let data = pattern(TOTAL, 5);
    let (mut sent, mut max_pending, mut saw_pending_flush) = (0, 0, false);
    let mut unwritable_seen = 0;
    while sent < TOTAL {
        while sent < TOTAL && ch.is_writable() {
            ch.write_and_flush(Bytes::copy_from_slice(&data[sent..sent + WRITE]));
            sent += WRITE;
            max_pending = max_pending.max(ch.pending_outbound_bytes());
            saw_pending_flush |= ch.is_flush_pending();
        }
        if !ch.is_writable() {
            unwritable_seen += 1;
        }
        net.run_until("writable again", || ch.is_writable());
    }
    net.run_until("drained", || ch.pending_outbound_bytes() == 0);
    assert!(
        max_pending <= water.high + WRITE,
        "pending peaked at {max_pending}"
    );
    assert!(
        max_pending > water.high,
        "the test must actually hit the high water mark"
    );
    assert!(
        saw_pending_flush,
        "write interest was set while bytes remained"
    );
    assert!(
        !ch.is_flush_pending(),
        "write interest cleared once drained"
    );
    let got = loop {
        net.run_for(Duration::from_millis(5));
        if reader.is_finished() {
            break reader.join().unwrap();
        }
    };
    assert!(got == data, "content differs");
    let (_, events) = sink(0);
    let changes: Vec<String> = events
        .borrow()
        .iter()
        .filter(|e| e.starts_with("writable="))
        .cloned()
        .collect();
    assert_eq!(changes.len(), 2 * unwritable_seen, "one event per change");
    for pair in changes.chunks(2) {
        assert_eq!(pair, ["writable=false", "writable=true"]);
    }
}

#[test]
fn write_spin_count_bounds_writes_per_flush_and_the_rest_follows_in_a_task() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::WriteSpinCount(2))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    // 64 slices per writev: 1000 messages need 16 writes; spin count 2 allows 2 per flush.
    for i in 0..1000u32 {
        ch.write(Bytes::copy_from_slice(&i.to_be_bytes()));
    }
    let before = SocketChannel::write_calls(&ch).unwrap();
    ch.flush();
    assert_eq!(SocketChannel::write_calls(&ch).unwrap() - before, 2);
    assert!(
        !ch.is_flush_pending(),
        "not waiting for writability: a task continues"
    );
    net.run_until("all written", || ch.pending_outbound_bytes() == 0);
    let mut got = vec![0u8; 4000];
    s.read_exact(&mut got).unwrap();
    for (i, c) in got.chunks(4).enumerate() {
        assert_eq!(u32::from_be_bytes(c.try_into().unwrap()), i as u32);
    }
}
