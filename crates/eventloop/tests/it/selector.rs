use crate::common;

use std::io::{Read, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::manual_loop;
use netloop_eventloop::mio::net::TcpListener;
use netloop_eventloop::mio::{Interest, Registry, Token};
use netloop_eventloop::{IoHandler, Readiness, SelectorFault};
use std::cell::{Cell, RefCell};

struct Acceptor {
    listener: RefCell<TcpListener>,
    accepted: Cell<usize>,
}

impl IoHandler for Acceptor {
    fn ready(&self, r: Readiness) {
        if r.readable {
            while let Ok((mut s, _)) = self.listener.borrow_mut().accept() {
                let _ = s.write_all(b"hi");
                self.accepted.set(self.accepted.get() + 1);
            }
        }
    }
    fn reregister(&self, old: &Registry, new: &Registry, token: Token) -> std::io::Result<()> {
        let mut l = self.listener.borrow_mut();
        netloop_eventloop::move_source(&mut *l, old, new, token, Interest::READABLE)
    }
}

fn acceptor() -> (Rc<Acceptor>, std::net::SocketAddr) {
    let l = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = l.local_addr().unwrap();
    (
        Rc::new(Acceptor {
            listener: RefCell::new(l),
            accepted: Cell::new(0),
        }),
        addr,
    )
}

fn register(local: &netloop_eventloop::LocalLoop, a: &Rc<Acceptor>) {
    let h: Rc<dyn IoHandler> = a.clone();
    local
        .register(&mut *a.listener.borrow_mut(), Interest::READABLE, h)
        .unwrap();
}

fn connect_and_drive(
    driver: &netloop_eventloop::LoopDriver,
    a: &Acceptor,
    addr: std::net::SocketAddr,
) {
    let before = a.accepted.get();
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.accepted.get() == before && Instant::now() < deadline {
        driver.run_once();
    }
    assert_eq!(
        a.accepted.get(),
        before + 1,
        "the registered source still receives events"
    );
    let mut buf = [0u8; 2];
    c.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"hi");
}

#[test]
fn premature_empty_polls_past_the_threshold_rebuild_the_selector_and_keep_sources() {
    let faults = Arc::new(AtomicU32::new(0));
    let f = faults.clone();
    let (el, driver, _) = manual_loop(move |c| {
        c.selector_rebuild_threshold = 512;
        c.fault_injector = Some(Arc::new(move || {
            if f.load(Ordering::SeqCst) > 0 {
                f.fetch_sub(1, Ordering::SeqCst);
                SelectorFault::PrematureEmpty
            } else {
                SelectorFault::None
            }
        }));
    });
    let local = el.local().unwrap();
    let (a, addr) = acceptor();
    register(&local, &a);
    let fd_before = driver.raw_fd();
    faults.store(511, Ordering::SeqCst);
    for _ in 0..511 {
        driver.run_io_ready();
    }
    assert_eq!(
        el.selector_rebuilds(),
        0,
        "511 premature polls stay under the threshold"
    );
    faults.store(1, Ordering::SeqCst);
    let it = driver.run_io_ready();
    assert!(it.selector_rebuilt);
    assert_eq!(el.selector_rebuilds(), 1);
    assert_ne!(driver.raw_fd(), fd_before, "a new selector has a new fd");
    driver.release_retired_selectors();
    connect_and_drive(&driver, &a, addr);
}

#[test]
fn an_event_resets_the_premature_poll_count() {
    let faults = Arc::new(AtomicU32::new(0));
    let f = faults.clone();
    let (el, driver, _) = manual_loop(move |c| {
        c.selector_rebuild_threshold = 10;
        c.fault_injector = Some(Arc::new(move || {
            if f.load(Ordering::SeqCst) > 0 {
                f.fetch_sub(1, Ordering::SeqCst);
                SelectorFault::PrematureEmpty
            } else {
                SelectorFault::None
            }
        }));
    });
    let local = el.local().unwrap();
    let (a, addr) = acceptor();
    register(&local, &a);
    faults.store(9, Ordering::SeqCst);
    for _ in 0..9 {
        driver.run_io_ready();
    }
    connect_and_drive(&driver, &a, addr);
    faults.store(9, Ordering::SeqCst);
    for _ in 0..9 {
        driver.run_io_ready();
    }
    assert_eq!(el.selector_rebuilds(), 0);
}

#[test]
fn a_poll_error_rebuilds_the_selector() {
    let faults = Arc::new(AtomicU32::new(0));
    let f = faults.clone();
    let (el, driver, _) = manual_loop(move |c| {
        c.fault_injector = Some(Arc::new(move || {
            if f.swap(0, Ordering::SeqCst) > 0 {
                SelectorFault::Error
            } else {
                SelectorFault::None
            }
        }));
    });
    let local = el.local().unwrap();
    let (a, addr) = acceptor();
    register(&local, &a);
    faults.store(1, Ordering::SeqCst);
    assert!(driver.run_once().selector_rebuilt);
    assert_eq!(el.selector_rebuilds(), 1);
    connect_and_drive(&driver, &a, addr);
}

#[test]
fn a_deregistered_source_gets_no_more_events() {
    let (el, driver, _) = manual_loop(|_| {});
    let local = el.local().unwrap();
    let (a, addr) = acceptor();
    let h: Rc<dyn IoHandler> = a.clone();
    let token = local
        .register(&mut *a.listener.borrow_mut(), Interest::READABLE, h)
        .unwrap();
    assert_eq!(local.registered_count(), 1);
    local
        .deregister(&mut *a.listener.borrow_mut(), token)
        .unwrap();
    assert_eq!(local.registered_count(), 0);
    let _c = std::net::TcpStream::connect(addr).unwrap();
    for _ in 0..20 {
        driver.run_once();
    }
    assert_eq!(a.accepted.get(), 0);
}

/// A source whose move to a rebuilt selector fails; it calls back into the loop from both
/// handler methods (as a channel closing itself does).
struct Unmovable {
    listener: RefCell<TcpListener>,
    token: Cell<Option<Token>>,
    local: Rc<netloop_eventloop::LocalLoop>,
    failure: RefCell<Option<String>>,
}

impl IoHandler for Unmovable {
    fn ready(&self, _: Readiness) {}
    fn reregister(&self, _: &Registry, _: &Registry, _: Token) -> std::io::Result<()> {
        assert_eq!(self.local.registered_count(), 2);
        Err(std::io::Error::other("injected re-registration failure"))
    }
    fn reregister_failed(&self, error: std::io::Error) {
        *self.failure.borrow_mut() = Some(error.to_string());
        if let Some(t) = self.token.take() {
            let _ = self.local.deregister(&mut *self.listener.borrow_mut(), t);
        }
    }
}

#[test]
fn a_failed_re_registration_is_reported_to_its_handler_which_may_call_back_into_the_loop() {
    let faults = Arc::new(AtomicU32::new(0));
    let f = faults.clone();
    let (el, driver, _) = manual_loop(move |c| {
        c.fault_injector = Some(Arc::new(move || {
            if f.swap(0, Ordering::SeqCst) > 0 {
                SelectorFault::Error
            } else {
                SelectorFault::None
            }
        }));
    });
    let local = el.local().unwrap();
    let (a, addr) = acceptor();
    register(&local, &a);
    let bad = Rc::new(Unmovable {
        listener: RefCell::new(TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap()),
        token: Cell::new(None),
        local: local.clone(),
        failure: RefCell::new(None),
    });
    let h: Rc<dyn IoHandler> = bad.clone();
    let t = local
        .register(&mut *bad.listener.borrow_mut(), Interest::READABLE, h)
        .unwrap();
    bad.token.set(Some(t));
    faults.store(1, Ordering::SeqCst);
    assert!(driver.run_once().selector_rebuilt);
    assert_eq!(
        bad.failure.borrow().as_deref(),
        Some("injected re-registration failure"),
        "the handler is told that its source is registered nowhere"
    );
    assert_eq!(
        local.registered_count(),
        1,
        "the failed source gave itself up"
    );
    assert_eq!(
        el.task_failures(),
        0,
        "no handler call panicked on a borrow"
    );
    connect_and_drive(&driver, &a, addr);
}
