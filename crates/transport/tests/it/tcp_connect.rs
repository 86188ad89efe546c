//! Client connects over loopback: refused, timed out, cancelled.

use crate::common;

use common::net::*;
use netloop_transport::*;
use std::cell::RefCell;
use std::net::TcpListener;
use std::rc::Rc;
use std::time::Duration;

#[test]
fn refused_connect_fails_with_econnrefused_and_never_fires_active() {
    let net = Net::new();
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let events = Rc::new(RefCell::new(Vec::new()));
    thread_local! { static EV: RefCell<Option<Rc<RefCell<Vec<String>>>>> = const { RefCell::new(None) }; }
    EV.with(|e| *e.borrow_mut() = Some(events.clone()));
    let (ch, f) = net.client(
        ChannelOptions::default(),
        |ch| {
            let events = EV.with(|e| e.borrow().clone().unwrap());
            ch.pipeline().add_last(
                "sink",
                Sink {
                    data: Rc::default(),
                    events,
                },
            )?;
            Ok(())
        },
        addr,
    );
    net.run_until("connect result", || f.is_done());
    let err = f.result().unwrap().unwrap_err();
    assert_eq!(err.code(), "ECONNREFUSED");
    net.run_until("closed", || !ch.is_open());
    net.run_for(Duration::from_millis(20));
    assert!(
        !has(&events, "active") && !has(&events, "inactive"),
        "{:?}",
        events.borrow()
    );
    assert!(has(&events, "unregistered"));
}

#[test]
fn connect_timeout_fails_with_timeout_error_and_closes() {
    let net = Net::new();
    let (_l, _fill, addr) = black_hole();
    let opts = ChannelOptions::default()
        .with(ChannelOption::ConnectTimeout(Some(Duration::from_millis(
            150,
        ))))
        .unwrap();
    let (ch, f) = net.client(opts, no_child, addr);
    net.run_until("connect result", || f.is_done());
    assert_eq!(
        f.result().unwrap().unwrap_err().code(),
        "ERR_CONNECT_TIMEOUT"
    );
    assert!(!ch.is_open());
}

#[test]
fn cancelling_a_connect_closes_the_channel() {
    let net = Net::new();
    let (_l, _fill, addr) = black_hole();
    let ch = SocketChannel::open(&net.lp, ChannelOptions::default());
    ch.register();
    let p = ChannelPromise::new();
    ch.connect_with(addr, None, p.clone());
    net.run_for(Duration::from_millis(20));
    assert!(ch.is_open() && !p.is_done(), "still connecting");
    assert!(p.try_failure(TransportError::ConnectCancelled));
    net.run_until("closed", || !ch.is_open());
}
