//! Accepting under file-descriptor exhaustion. Its own test binary (one process) because it
//! exhausts the process's descriptors.

mod common;

use std::time::Duration;

use common::net::*;
use netloop_transport::*;

#[test]
fn emfile_keeps_the_listener_open_backs_off_and_accepts_later() {
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
    // The client socket exists before descriptors run out; connecting needs no new one.
    let client = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
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
    client.connect(&addr.into()).unwrap();
    let before = ServerSocketChannel::accept_calls(&server).unwrap();
    net.run_until("EMFILE reported", || {
        errors.borrow().iter().any(|e| e == "EMFILE")
    });
    net.run_for(Duration::from_millis(400));
    let calls = ServerSocketChannel::accept_calls(&server).unwrap() - before;
    assert!(server.is_open(), "EMFILE must not close the listener");
    assert!(
        calls <= 8,
        "accept was called {calls} times in 400 ms: the loop spins"
    );
    assert_eq!(accepted_count(), 0);
    drop(hog);
    net.run_until("accepted after the back-off", || accepted_count() == 1);
    assert!(accepted(0).unwrap().is_active());
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
