//! Accepting when descriptors run out, with the reserve descriptor (the default): pending
//! clients are refused at once instead of hanging in the backlog, and the first connection
//! after descriptors free up is accepted at once. Its own test binary (one process) because it
//! exhausts the process's descriptors.

mod common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::net::*;
use netloop_transport::*;

#[test]
fn emfile_refuses_pending_clients_at_once_and_accepts_as_soon_as_descriptors_free_up() {
    let net = Net::new();
    let (server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let errors = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let e2 = errors.clone();
    server.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::Exception(e) = u {
            e2.borrow_mut().push(e.code().to_string());
        }
    });
    // Client sockets exist before descriptors run out; connecting needs no new one.
    let clients: Vec<socket2::Socket> = (0..3)
        .map(|_| socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap())
        .collect();
    lower_descriptor_limit(4096);
    let mut hog = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => hog.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::EMFILE));
                break;
            }
        }
        assert!(
            hog.len() < 100_000,
            "descriptor limit too high for this test"
        );
    }
    for c in &clients[..2] {
        c.connect(&addr.into()).unwrap();
    }
    net.run_until("both pending clients refused", || {
        ServerSocketChannel::refused_connections(&server) == Some(2)
    });
    assert!(errors.borrow().iter().any(|e| e == "EMFILE"));
    assert!(server.is_open(), "EMFILE must not close the listener");
    assert_eq!(accepted_count(), 0);
    for c in &clients[..2] {
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 1];
        let mut s: &socket2::Socket = c;
        match s.read(&mut buf) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("a refused client must see its connection closed: {other:?}"),
        }
    }
    // Nothing spins meanwhile.
    let calls = ServerSocketChannel::accept_calls(&server).unwrap();
    net.run_for(Duration::from_millis(200));
    assert_eq!(ServerSocketChannel::accept_calls(&server).unwrap(), calls);

    drop(hog);
    let started = Instant::now();
    clients[2].connect(&addr.into()).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    assert!(
        started.elapsed() < Duration::from_millis(500),
        "the first connection after descriptors free up waited {:?}",
        started.elapsed()
    );
    assert!(accepted(0).unwrap().is_active());
    assert_eq!(ServerSocketChannel::refused_connections(&server), Some(2));
}

/// Lowers the soft RLIMIT_NOFILE so exhausting descriptors is quick.
fn lower_descriptor_limit(max: libc::rlim_t) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for getrlimit to fill.
    let got = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(got, 0);
    if lim.rlim_cur > max {
        lim.rlim_cur = max;
        // SAFETY: `lim` is a valid rlimit; lowering the soft limit only affects this process.
        let set = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
        assert_eq!(set, 0);
    }
}
