//! Moving a channel to another loop of the same thread (Netty: `deregister()`, then
//! `otherLoop.register(channel)` from the deregistration's listener).

use crate::common;

use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::Duration;

use common::net::*;
use netloop_transport::*;

fn count(events: &Events, e: &str) -> usize {
    events.borrow().iter().filter(|x| *x == e).count()
}

#[test]
fn a_channel_deregistered_from_one_loop_and_registered_on_another_goes_on_there() {
    let a = Net::new();
    let b = Net::new();
    let (_server, addr) = a.server(
        ChannelOptions::default(),
        ChannelOptions::default(),
        sink_child,
    );
    let mut peer = TcpStream::connect(addr).unwrap();
    a.run_until("accepted on a", || accepted_count() == 1);
    let ch = accepted(0).unwrap();
    let (data, events) = sink(0);
    peer.write_all(b"one").unwrap();
    a.run_until("read on a", || data.borrow().len() == 3);

    let moved = Rc::new(RefCell::new(None));
    let (c, m, target) = (ch.clone(), moved.clone(), b.lp.clone());
    let seen_unregistered = events.clone();
    ch.deregister().add_local_listener(move |r| {
        assert!(r.is_ok());
        assert!(
            !c.is_registered(),
            "unregistered when the deregistration completes"
        );
        assert_eq!(
            count(&seen_unregistered, "unregistered"),
            1,
            "after channelUnregistered"
        );
        *m.borrow_mut() = Some(c.register_on(&target));
    });
    a.run_until("re-registered", || moved.borrow().is_some());
    let registered = moved.borrow_mut().take().unwrap();
    assert!(registered.is_success());
    assert!(ch.is_registered() && ch.is_open() && ch.is_active());
    assert!(
        ch.event_loop() == b.handle(),
        "the channel lives on loop b now"
    );

    peer.write_all(b"two").unwrap();
    a.run_for(Duration::from_millis(30));
    assert_eq!(data.borrow().len(), 3, "loop a no longer serves it");
    b.run_until("read on b", || data.borrow().len() == 6);
    assert_eq!(&*data.borrow(), b"onetwo");
    assert_eq!(
        count(&events, "active"),
        1,
        "channelActive fires on the first registration only"
    );

    ch.write_and_flush(Bytes::from_static(b"reply"));
    b.run_for(Duration::from_millis(20));
    peer.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 5];
    peer.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"reply");

    ch.close();
    b.run_until("inactive and unregistered on b", || {
        count(&events, "unregistered") == 2
    });
    assert_eq!(count(&events, "inactive"), 1);
}

#[test]
fn register_on_a_registered_channel_fails() {
    let a = Net::new();
    let b = Net::new();
    let ch = SocketChannel::open(&a.lp, ChannelOptions::default());
    ch.register();
    let f = ch.register_on(&b.lp);
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_UNSUPPORTED_OPERATION"
    );
    assert!(ch.event_loop() == a.handle());
}
