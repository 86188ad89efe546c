//! A thread that exits with a live loop (never shut down): the thread context's teardown
//! drops the loop and what it still holds, and code run by those drops (a promise completed,
//! its listeners notified on the exiting thread) still finds the context.

use std::sync::mpsc;
use std::time::Duration;

use netloop_eventloop::{EventLoop, LoopConfig, LoopError, Promise};

/// Completes its promise when dropped.
struct CompleteOnDrop(Promise<(), LoopError>);

impl Drop for CompleteOnDrop {
    fn drop(&mut self) {
        self.0.try_success(());
    }
}

#[test]
fn a_loop_left_alive_at_thread_exit_is_dropped_and_its_drops_may_complete_promises() {
    let (tx, rx) = mpsc::channel();
    let outer = Promise::<(), LoopError>::new();
    let inner = Promise::<(), LoopError>::new();
    // The inner promise is completed by a listener of the outer one: a nested notification,
    // queued behind the running one in the exiting thread's context.
    let inner_done = inner.clone();
    outer.future().add_listener(move |_| {
        inner_done.try_success(());
    });
    let tx2 = tx.clone();
    inner
        .future()
        .add_listener(move |r| tx2.send(("inner", r.is_ok())).unwrap());
    let handle = std::thread::spawn(move || {
        let (el, driver) = EventLoop::attached(LoopConfig::default()).unwrap();
        let guard = CompleteOnDrop(outer);
        // Owned by the loop's timer heap until the loop drops.
        el.schedule(Duration::from_secs(3600), move || drop(guard))
            .unwrap();
        driver.run_once();
        tx.send(("thread", true)).unwrap();
        // Neither shut down nor terminated: the loop lives in the thread's context.
        el
    });
    let el = handle.join().expect("the thread exits cleanly");
    let mut seen: Vec<_> = rx.iter().take(2).collect();
    seen.sort_unstable();
    assert_eq!(seen, [("inner", true), ("thread", true)]);
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    drop(el);
}
