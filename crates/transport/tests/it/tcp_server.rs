//! Server channels and loops over loopback: child options, accept storms, accept errors, selector rebuilds, cross-thread handles.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[test]
fn options_are_applied_to_accepted_sockets() {
    let net = Net::new();
    let child = ChannelOptions::default()
        .with(ChannelOption::TcpNoDelay(false))
        .unwrap()
        .with(ChannelOption::SoKeepAlive(true))
        .unwrap()
        .with(ChannelOption::SoLinger(Some(Duration::from_secs(3))))
        .unwrap()
        .with(ChannelOption::SoRcvbuf(32 * 1024))
        .unwrap();
    let (_server, addr) = net.server(ChannelOptions::default(), child, sink_child);
    let _s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let fd = ch.raw_fd().unwrap();
    // SAFETY: the fd belongs to the open channel, which outlives this borrow.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let sock = socket2::SockRef::from(&borrowed);
    assert!(!sock.nodelay().unwrap());
    assert!(sock.keepalive().unwrap());
    assert_eq!(sock.linger().unwrap(), Some(Duration::from_secs(3)));
    assert!(sock.recv_buffer_size().unwrap() >= 32 * 1024);
    ch.set_option(ChannelOption::TcpNoDelay(true)).unwrap();
    assert!(
        sock.nodelay().unwrap(),
        "a live channel applies socket options at once"
    );
}

#[test]
fn accept_storm_of_two_hundred_connections_is_fully_served() {
    let net = Net::new();
    let (server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    const N: usize = 200;
    let clients = std::thread::spawn(move || {
        let socks: Vec<TcpStream> = (0..N).map(|_| TcpStream::connect(addr).unwrap()).collect();
        for (i, mut s) in socks.iter().enumerate() {
            s.write_all(&(i as u32).to_be_bytes()).unwrap();
        }
        socks.into_iter().enumerate().all(|(i, mut s)| {
            let mut b = [0u8; 4];
            s.set_read_timeout(Some(LIMIT)).unwrap();
            s.read_exact(&mut b).is_ok() && u32::from_be_bytes(b) == i as u32
        })
    });
    net.run_until("all echoed", || clients.is_finished());
    assert!(clients.join().unwrap());
    let calls = ServerSocketChannel::accept_calls(&server).unwrap();
    assert!(calls >= N as u64);
}

#[test]
fn programming_error_on_accept_closes_the_listener() {
    let net = Net::new();
    let (server, _addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let fd = server.raw_fd().unwrap();
    // SAFETY: the fd is the server channel's open listener.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    // Shutting a listening socket down makes accept fail with EINVAL.
    socket2::SockRef::from(&borrowed)
        .shutdown(std::net::Shutdown::Read)
        .unwrap();
    net.run_until("listener closed", || !server.is_open());
}

#[test]
fn channels_keep_working_after_a_selector_rebuild() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let fail_next = Arc::new(AtomicBool::new(false));
    let f2 = fail_next.clone();
    let cfg = netloop_transport::eventloop::LoopConfig {
        fault_injector: Some(Arc::new(move || {
            if f2.swap(false, Ordering::SeqCst) {
                netloop_transport::eventloop::SelectorFault::Error
            } else {
                netloop_transport::eventloop::SelectorFault::None
            }
        })),
        ..Default::default()
    };
    let net = Net::with_config(cfg);
    let (_server, addr) = net.server(ChannelOptions::default(), ChannelOptions::default(), |ch| {
        ch.pipeline().add_last("echo", Echo)?;
        Ok(())
    });
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(b"one").unwrap();
    let mut b = [0u8; 3];
    let peer = std::thread::spawn(move || {
        s.read_exact(&mut b).unwrap();
        (s, b)
    });
    net.run_until("first echo", || peer.is_finished());
    let (mut s, b) = peer.join().unwrap();
    assert_eq!(&b, b"one");
    let rebuilds = net.handle().selector_rebuilds();
    fail_next.store(true, Ordering::SeqCst);
    net.run_until("rebuild", || net.handle().selector_rebuilds() > rebuilds);
    s.write_all(b"two").unwrap();
    let peer = std::thread::spawn(move || {
        let mut b = [0u8; 3];
        s.read_exact(&mut b).unwrap();
        (s, b)
    });
    net.run_until("echo after rebuild", || peer.is_finished());
    let (_s, b) = peer.join().unwrap();
    assert_eq!(&b, b"two");
    // The listener was re-registered too.
    let _c = TcpStream::connect(addr).unwrap();
    net.run_until("accept after rebuild", || net.lp.registered_count() == 3);
}

#[test]
fn handle_writes_and_closes_from_another_thread() {
    let net = Net::new();
    let (_server, addr) = net.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut s = TcpStream::connect(addr).unwrap();
    net.run_until("accepted", || accepted_count() == 1);
    let handle = accepted(0).unwrap().handle();
    let other = std::thread::spawn(move || {
        let w = handle.write_and_flush(Bytes::from_static(b"from afar"));
        let r = w.wait_timeout(LIMIT).expect("write done");
        let c = handle.close().wait_timeout(LIMIT).expect("closed");
        (r.is_ok(), c.is_ok())
    });
    net.run_until("other thread done", || other.is_finished());
    assert_eq!(other.join().unwrap(), (true, true));
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"from afar");
}

/// What the hook was handed: the child options and the parent's handle, per socket.
type Seen = std::rc::Rc<
    std::cell::RefCell<
        Vec<(
            std::sync::Arc<ChannelOptions>,
            std::sync::Arc<ChannelHandle>,
        )>,
    >,
>;

/// Records what a `ServerBootstrapAcceptor` hands its hook.
struct Recorder(Seen);

impl AcceptedChildren for Recorder {
    fn accept(
        &self,
        socket: AcceptedSocket,
        options: std::sync::Arc<ChannelOptions>,
        parent: std::sync::Arc<ChannelHandle>,
    ) -> HandlerResult {
        drop(socket);
        self.0.borrow_mut().push((options, parent));
        Ok(())
    }
}

#[test]
fn the_acceptor_hands_each_socket_to_its_hook_with_the_shared_child_options_and_one_shared_parent_handle(
) {
    let net = Net::new();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let child_options = std::sync::Arc::new(
        ChannelOptions::default()
            .with(ChannelOption::TcpNoDelay(false))
            .unwrap(),
    );
    let server = ServerSocketChannel::open(&net.lp, ChannelOptions::default());
    server
        .pipeline()
        .add_last(
            ACCEPTOR_NAME,
            ServerBootstrapAcceptor::new(Recorder(seen.clone()), child_options.clone()),
        )
        .unwrap();
    server.register();
    let bound = server.bind("127.0.0.1:0".parse().unwrap());
    net.run_until("bind", || bound.is_done());
    let addr = server.local_addr().unwrap();
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(TcpStream::connect(addr).unwrap());
    }
    net.run_until("three accepted", || seen.borrow().len() == 3);
    for (opts, parent) in seen.borrow().iter() {
        assert!(
            std::sync::Arc::ptr_eq(opts, &child_options),
            "one shared options value"
        );
        assert_eq!(parent.id(), server.id());
        assert!(
            std::sync::Arc::ptr_eq(parent, &seen.borrow()[0].1),
            "one shared parent handle, not a copy per child"
        );
    }
    // A socket the hook drops is closed: each client reads EOF.
    for mut c in clients {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 1];
        assert_eq!(c.read(&mut buf).unwrap_or(0), 0);
    }
}
