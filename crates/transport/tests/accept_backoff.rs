//! Accepting under file-descriptor exhaustion. Its own test binary (one process) because it
//! exhausts the process's descriptors.

mod common;

use std::time::Duration;

use common::net::*;
use netloop_transport::*;

/// Opens `/dev/null` until the process runs out of descriptors.
fn exhaust_descriptors() -> Vec<std::fs::File> {
    let mut hog = Vec::new();
    loop {
        match std::fs::File::open("/dev/null") {
            Ok(f) => hog.push(f),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::EMFILE));
                return hog;
            }
        }
        assert!(
            hog.len() < 100_000,
            "descriptor limit too high for this test"
        );
    }
}

/// Sets its flag when dropped (a handler of the server pipeline: dropped with the channel).
struct DropFlag(std::rc::Rc<std::cell::Cell<bool>>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}
impl ChannelHandler for DropFlag {}

// One test (one process) because it exhausts the process's descriptors; phases in order.
#[test]
fn emfile_without_a_reserve_backs_off_resets_after_an_accept_and_the_timer_holds_no_channel() {
    lower_descriptor_limit(4096);
    let net = Net::new();

    // Phase 1: no reserve descriptor, so EMFILE pauses accepting for a back-off.
    let (server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    ServerSocketChannel::set_fd_reserve(&server, false);
    let errors = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let e2 = errors.clone();
    server.pipeline().set_unhandled_sink(move |u| {
        if let Unhandled::Exception(e) = u {
            e2.borrow_mut().push(e.code().to_string());
        }
    });
    // The client socket exists before descriptors run out; connecting needs no new one.
    let client = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let client2 = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let mut hog = exhaust_descriptors();
    client.connect(&addr.into()).unwrap();
    client2.connect(&addr.into()).unwrap();
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
    assert!(
        ServerSocketChannel::next_backoff(&server).unwrap() > Duration::from_millis(100),
        "the back-off doubled while descriptors stayed exhausted"
    );
    // One descriptor frees up: one connection is accepted, the next accept meets EMFILE
    // again and backs off from the start, not from where the previous episode ended.
    hog.pop();
    net.run_until("accepted after the back-off", || accepted_count() == 1);
    assert!(accepted(0).unwrap().is_active());
    assert!(
        ServerSocketChannel::next_backoff(&server).unwrap() <= Duration::from_millis(100),
        "a successful accept resets the back-off: {:?}",
        ServerSocketChannel::next_backoff(&server)
    );
    drop(hog);
    let started = std::time::Instant::now();
    net.run_until("second accepted", || accepted_count() == 2);
    assert!(started.elapsed() < Duration::from_millis(500));
    drop((client, client2));
    let closed = server.close();
    net.run_until("the first server closed", || closed.is_done());
    drop(server);

    // Phase 2: a closed server whose back-off timer was cancelled is not kept alive by it.
    let (server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    ServerSocketChannel::set_fd_reserve(&server, false);
    let dropped = std::rc::Rc::new(std::cell::Cell::new(false));
    server
        .pipeline()
        .add_last("flag", DropFlag(dropped.clone()))
        .unwrap();
    server.pipeline().set_unhandled_sink(|_| {});
    let client = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let hog = exhaust_descriptors();
    client.connect(&addr.into()).unwrap();
    let calls = ServerSocketChannel::accept_calls(&server).unwrap();
    net.run_until("EMFILE met", || {
        ServerSocketChannel::accept_calls(&server).unwrap() > calls
    });
    let timers = net.lp.timer_count();
    assert!(timers >= 1, "a back-off timer waits in the heap");
    let closed = server.close();
    net.run_until("the second server closed", || closed.is_done());
    net.driver.run_until_idle(); // the loop purges the cancelled timer
    drop(server);
    assert!(
        dropped.get(),
        "the cancelled back-off timer still holds the closed server channel"
    );
    drop(hog);
    drop(client);
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
