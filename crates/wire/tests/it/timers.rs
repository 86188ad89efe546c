//! The native side of JS timers without Node: one loop timer armed from the shared
//! `[dirty, deadline, stamp]` buffer, on a hand-driven attached loop.

use std::cell::Cell;
use std::rc::Rc;

use netloop_eventloop::{EventLoop, LoopConfig, LoopDriver};
use netloop_wire::protocol::TimerArmSlot;
use netloop_wire::timers::{JsTimers, BUFFER_LEN};

struct Setup {
    timers: Rc<JsTimers>,
    fired: Rc<Cell<u32>>,
    buffer: Box<[f64; BUFFER_LEN]>,
    driver: LoopDriver,
    _handle: EventLoop,
}

fn setup() -> Setup {
    let (handle, driver) = EventLoop::attached(LoopConfig::default()).expect("a loop");
    let fired = Rc::new(Cell::new(0));
    let count = fired.clone();
    let timers = JsTimers::new(
        Rc::downgrade(driver.local()),
        Box::new(move || count.set(count.get() + 1)),
    );
    let mut buffer = Box::new([0.0; BUFFER_LEN]);
    // SAFETY: the box's memory does not move and outlives the timers (both live in `Setup`,
    // the timers first), and only `drain` touches it while the test is not writing it.
    unsafe { timers.set_buffer(buffer.as_mut_ptr(), BUFFER_LEN) };
    // JS's clock reads 0 now: loop time = JS time + the loop's current time.
    timers.calibrate(0.0);
    Setup {
        timers,
        fired,
        buffer,
        driver,
        _handle: handle,
    }
}

impl Setup {
    /// What JS writes: a request for `deadline` (JS ms), stamped at JS time 0.
    fn request(&mut self, deadline: f64) {
        self.buffer[TimerArmSlot::Deadline as usize] = deadline;
        self.buffer[TimerArmSlot::Stamp as usize] = 0.0;
        self.buffer[TimerArmSlot::Dirty as usize] = 1.0;
    }
}

#[test]
fn a_due_deadline_fires_once_in_the_next_iteration() {
    let mut s = setup();
    s.request(0.0);
    s.timers.drain();
    assert_eq!(
        s.buffer[TimerArmSlot::Dirty as usize],
        0.0,
        "the request is read"
    );
    assert_eq!(s.fired.get(), 0, "nothing runs inside drain");
    s.driver.run_once();
    assert_eq!(s.fired.get(), 1, "fired in the iteration");
    s.driver.run_once();
    assert_eq!(s.fired.get(), 1, "once: the timer forgot itself");
}

#[test]
fn without_a_new_request_drain_changes_nothing() {
    let s = setup();
    s.timers.drain();
    s.driver.run_once();
    assert_eq!(s.fired.get(), 0);
    assert_eq!(s.driver.next_timeout(), None, "no timer armed");
}

#[test]
fn a_far_deadline_arms_the_loop_timer_and_a_negative_one_disarms_it() {
    let mut s = setup();
    s.request(60_000.0);
    s.timers.drain();
    let planned = s.driver.next_timeout().expect("the loop plans a wake-up");
    assert!(
        planned.as_secs_f64() > 50.0 && planned.as_secs_f64() <= 60.0,
        "about a minute: {planned:?}"
    );
    s.request(-1.0);
    s.timers.drain();
    assert_eq!(s.driver.next_timeout(), None, "disarmed");
    s.driver.run_once();
    assert_eq!(s.fired.get(), 0);
}
