use std::sync::{Arc, Mutex};

use netloop_eventloop::{Future, Promise};

type P = Promise<u32, String>;

#[test]
fn listeners_run_in_the_order_added_exactly_once() {
    let p = P::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    for i in 0..5 {
        let l = log.clone();
        p.future()
            .add_listener(move |r| l.lock().unwrap().push((i, r.clone())));
    }
    assert!(p.try_success(7));
    assert!(!p.try_success(8), "a promise completes once");
    assert!(!p.try_failure("late".into()));
    let got = log.lock().unwrap().clone();
    assert_eq!(got, (0..5).map(|i| (i, Ok(7))).collect::<Vec<_>>());
}

#[test]
fn a_listener_added_after_completion_runs_at_once_with_the_result() {
    let p = P::new();
    p.try_failure("nope".into());
    let log = Arc::new(Mutex::new(None));
    let l = log.clone();
    p.future()
        .add_listener(move |r| *l.lock().unwrap() = Some(r.clone()));
    assert_eq!(*log.lock().unwrap(), Some(Err("nope".to_string())));
}

#[test]
fn a_listener_added_from_a_listener_runs_after_the_current_ones() {
    let p = P::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    let f = p.future();
    let (l1, l2) = (log.clone(), log.clone());
    let f2 = f.clone();
    f.add_listener(move |_| {
        let l = l1.clone();
        f2.add_listener(move |_| l.lock().unwrap().push("nested"));
        l1.lock().unwrap().push("first");
    });
    f.add_listener(move |_| l2.lock().unwrap().push("second"));
    p.try_success(1);
    assert_eq!(*log.lock().unwrap(), ["first", "second", "nested"]);
}

#[test]
fn a_chain_of_a_million_promises_does_not_overflow_the_stack() {
    let n = 1_000_000;
    let first = P::new();
    let mut prev = first.future();
    for _ in 0..n {
        let next = P::new();
        let f = next.future();
        prev.add_listener(move |r| {
            next.try_complete(r.clone().map(|v| v + 1));
        });
        prev = f;
    }
    first.try_success(0);
    assert_eq!(prev.result(), Some(Ok(n)));
}

#[test]
fn wait_returns_the_result_completed_on_another_thread() {
    let p = P::new();
    let f = p.future();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(10));
        p.try_success(3);
    });
    assert_eq!(f.wait(), Ok(3));
}

#[test]
fn all_fails_with_the_first_failure_and_completes_when_every_future_has() {
    let (a, b) = (Promise::<(), String>::new(), Promise::<(), String>::new());
    let all = Future::all(vec![a.future(), b.future()]);
    a.try_failure("a failed".into());
    assert!(!all.is_done());
    b.try_success(());
    assert_eq!(all.result(), Some(Err("a failed".to_string())));
}

#[test]
fn a_panicking_listener_does_not_stop_the_others() {
    let p = P::new();
    let log = Arc::new(Mutex::new(Vec::new()));
    p.future().add_listener(|_| panic!("listener bug"));
    let l = log.clone();
    p.future()
        .add_listener(move |_| l.lock().unwrap().push("ran"));
    p.try_success(1);
    assert_eq!(*log.lock().unwrap(), ["ran"]);
}
