//! Issue 9: local promise listeners never leak in the adding thread's table.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use netloop_eventloop::{EventLoop, LoopConfig, Promise};
use netloop_transport::{pending_local_listeners, LocalListenerExt, TransportError};

/// Sets its flag when dropped (a listener's capture).
struct DropFlag(Rc<Cell<bool>>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

fn listener(
    ran: &Rc<Cell<bool>>,
    dropped: &Rc<Cell<bool>>,
) -> impl FnOnce(&Result<(), TransportError>) {
    let (ran, flag) = (ran.clone(), DropFlag(dropped.clone()));
    move |_| {
        let _keep = &flag;
        ran.set(true);
    }
}

#[test]
fn a_listener_whose_home_loop_rejects_it_is_removed_and_dropped_at_home() {
    let (el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
    let promise: Promise<(), TransportError> = Promise::new();
    let (ran, dropped) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let before = pending_local_listeners();
    let (fut, l) = (promise.future(), listener(&ran, &dropped));
    driver
        .local()
        .execute_local(move || fut.add_local_listener(l));
    driver.run_once();
    assert_eq!(pending_local_listeners(), before + 1);
    el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1));
    while !driver.run_once().terminated {}
    let p = promise.clone();
    std::thread::spawn(move || assert!(p.try_success(())))
        .join()
        .unwrap();
    assert_eq!(pending_local_listeners(), before, "the entry leaked");
    assert!(dropped.get(), "the listener's captures were released");
    assert!(!ran.get());
}

#[test]
fn a_listener_whose_promise_is_dropped_on_another_thread_is_removed_at_home() {
    let promise: Promise<(), TransportError> = Promise::new();
    let (ran, dropped) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let before = pending_local_listeners();
    let fut = promise.future();
    fut.add_local_listener(listener(&ran, &dropped));
    assert_eq!(pending_local_listeners(), before + 1);
    std::thread::spawn(move || drop((promise, fut)))
        .join()
        .unwrap();
    assert_eq!(pending_local_listeners(), before, "the entry leaked");
    assert!(dropped.get());
    assert!(!ran.get());
}

#[test]
fn a_listener_completed_on_another_thread_runs_at_home() {
    let (_el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
    let promise: Promise<(), TransportError> = Promise::new();
    let (ran, dropped) = (Rc::new(Cell::new(false)), Rc::new(Cell::new(false)));
    let (fut, l) = (promise.future(), listener(&ran, &dropped));
    driver
        .local()
        .execute_local(move || fut.add_local_listener(l));
    driver.run_once();
    let p = promise.clone();
    std::thread::spawn(move || assert!(p.try_success(())))
        .join()
        .unwrap();
    driver.run_until_idle();
    assert!(ran.get() && dropped.get());
    assert_eq!(pending_local_listeners(), 0);
}
