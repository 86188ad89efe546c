//! `LocalLoop::io_time`: while an iteration's I/O handlers run, the loop time read once after
//! the poll (the same for every handler of the iteration, however long they take); outside
//! the I/O phase, the current loop time.

use crate::common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::manual_loop;
use netloop_eventloop::mio::net::TcpListener;
use netloop_eventloop::mio::{Interest, Registry, Token};
use netloop_eventloop::{IoHandler, LocalLoop, ManualTicker, Readiness};

/// Accepts one connection per readiness; records (io_time, now) and then takes 5 ms of the
/// fake clock, as a slow handler would.
struct SlowAcceptor {
    listener: RefCell<TcpListener>,
    ticker: Arc<ManualTicker>,
    seen: RefCell<Vec<(Duration, Duration)>>,
}

impl IoHandler for SlowAcceptor {
    fn ready(&self, r: Readiness) {
        if !r.readable {
            return;
        }
        while self.listener.borrow_mut().accept().is_ok() {
            let l = LocalLoop::current().expect("inside the loop's iteration");
            self.seen.borrow_mut().push((l.io_time(), l.now()));
            self.ticker.advance(Duration::from_millis(5));
        }
    }
    fn reregister(&self, old: &Registry, new: &Registry, token: Token) -> std::io::Result<()> {
        let mut l = self.listener.borrow_mut();
        netloop_eventloop::move_source(&mut *l, old, new, token, Interest::READABLE)
    }
}

#[test]
fn io_time_is_the_polls_time_for_every_handler_of_the_iteration_and_now_outside() {
    let (el, driver, ticker) = manual_loop(|_| {});
    let local = el.local().unwrap();
    ticker.advance(Duration::from_secs(7));
    let listener = TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    let a = Rc::new(SlowAcceptor {
        listener: RefCell::new(listener),
        ticker: ticker.clone(),
        seen: RefCell::new(Vec::new()),
    });
    let h: Rc<dyn IoHandler> = a.clone();
    local
        .register(&mut *a.listener.borrow_mut(), Interest::READABLE, h)
        .unwrap();
    // Three connections pending before one iteration: one readiness, three accepts.
    let _clients: Vec<_> = (0..3)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(50)); // (the kernel queues the three)
    let deadline = Instant::now() + Duration::from_secs(10);
    while a.seen.borrow().len() < 3 && Instant::now() < deadline {
        driver.run_once();
    }
    let seen = a.seen.borrow().clone();
    assert_eq!(seen.len(), 3, "the three connections were accepted");
    let start = seen[0].0;
    assert_eq!(
        seen[0].1, start,
        "the first handler runs at the poll's time"
    );
    for (i, (io, now)) in seen.iter().enumerate().skip(1) {
        if *io == start {
            // the same iteration: its I/O time stayed while the clock went on
            assert_eq!(*now, start + Duration::from_millis(5 * i as u64));
        } else {
            // a later iteration: its own poll's time
            assert_eq!(io, now);
        }
    }
    assert!(
        seen.iter().filter(|(io, _)| *io == start).count() >= 2,
        "at least two accepts in one iteration shared its I/O time: {seen:?}"
    );
    // Outside the I/O phase: the current time.
    assert_eq!(local.io_time(), local.now());
    ticker.advance(Duration::from_millis(1));
    assert_eq!(local.io_time(), local.now());
}
