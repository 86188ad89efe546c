//! File regions over loopback: sent with sendfile between byte writes, in order and intact,
//! with a sink that reads slower than the file is offered; a truncated file fails its write and
//! closes the channel; regions that the socket cannot take fail clearly.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let path = std::env::temp_dir().join(format!("netloop-{name}-{}", std::process::id()));
        File::create(&path).unwrap().write_all(bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_file_region_between_byte_writes_arrives_in_order_and_intact() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let content = pattern(5 * 1024 * 1024 + 333, 4);
    let file = TempFile::new("region-order", &content);
    let region = FileRegion::open(&file.0, 1000, Some(content.len() as u64 - 2000)).unwrap();
    let head = client.write_future(Bytes::from_static(b"HEAD"));
    let body = client.write_future(region);
    let tail = client.write_future(Bytes::from_static(b"TAIL"));
    client.flush();
    let total = 8 + content.len() - 2000;
    net.run_until("all bytes received", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == total
    });
    let got = sink(0).0.borrow().clone();
    assert_eq!(&got[..4], b"HEAD");
    assert!(
        got[4..total - 4] == content[1000..content.len() - 1000],
        "region bytes differ"
    );
    assert_eq!(&got[total - 4..], b"TAIL");
    net.run_until("promises", || {
        head.is_done() && body.is_done() && tail.is_done()
    });
    assert!(head.is_success() && body.is_success() && tail.is_success());
    assert_eq!(client.pending_outbound_bytes(), 0);
}

#[test]
fn one_open_file_is_sent_to_several_channels_each_from_its_own_position() {
    let net = Net::new();
    let (_server, a) = net.client_of_sink_server();
    let content = pattern(300_000, 8);
    let file = TempFile::new("region-shared", &content);
    let shared = Arc::new(File::open(&file.0).unwrap());
    let first = a.write_future(FileRegion::new(shared.clone(), 0, 100_000));
    let second = a.write_future(FileRegion::new(shared, 200_000, 100_000));
    a.flush();
    net.run_until("both regions received", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == 200_000
    });
    let got = sink(0).0.borrow().clone();
    assert!(got[..100_000] == content[..100_000]);
    assert!(got[100_000..] == content[200_000..]);
    net.run_until("promises", || first.is_done() && second.is_done());
    assert!(first.is_success() && second.is_success());
}

#[test]
fn an_empty_region_completes_without_sending_anything() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let file = TempFile::new("region-empty", b"abc");
    let empty = client.write_future(FileRegion::open(&file.0, 3, None).unwrap());
    let after = client.write_future(Bytes::from_static(b"after"));
    client.flush();
    net.run_until("bytes after the region", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == 5
    });
    assert_eq!(&sink(0).0.borrow()[..], b"after");
    net.run_until("promises", || empty.is_done() && after.is_done());
    assert!(empty.is_success() && after.is_success());
}

#[test]
fn a_file_truncated_before_it_is_sent_fails_its_write_and_closes_the_channel() {
    let net = Net::new();
    let (_server, client) = net.client_of_sink_server();
    let file = TempFile::new("region-truncated", &pattern(100_000, 2));
    let region = FileRegion::open(&file.0, 0, None).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file.0)
        .unwrap()
        .set_len(40_000)
        .unwrap();
    let body = client.write_future(region);
    let after = client.write_future(Bytes::from_static(b"never"));
    client.flush();
    net.run_until("write failed", || body.is_done() && after.is_done());
    assert!(!body.is_success(), "the truncated region's write must fail");
    assert!(
        !after.is_success(),
        "writes behind it fail with the channel"
    );
    let cause = format!("{:?}", body.result().unwrap().unwrap_err());
    assert!(cause.contains("truncated"), "{cause}");
    net.run_until("closed", || !client.is_open());
    net.run_until("the sink saw the 40,000 bytes and the close", || {
        accepted_count() == 1 && sink(0).0.borrow().len() == 40_000
    });
}
