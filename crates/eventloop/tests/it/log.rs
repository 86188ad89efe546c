//! Reporting goes to the `log` crate (target `netloop`). Its own binary because a logger is
//! process-wide.

use std::sync::Mutex;

use log::{Level, Log, Metadata, Record};
use netloop_eventloop::{EventLoop, LoopConfig};

static SEEN: Mutex<Vec<(Level, String, String)>> = Mutex::new(Vec::new());

struct Capture;

impl Log for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &Record<'_>) {
        SEEN.lock()
            .unwrap()
            .push((r.level(), r.target().to_string(), r.args().to_string()));
    }
    fn flush(&self) {}
}

#[test]
fn messages_go_to_the_applications_logger_under_the_netloop_target_and_respect_its_level() {
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Debug);
    let (el, driver) = EventLoop::attached(LoopConfig {
        name: "logged".into(),
        ..LoopConfig::default()
    })
    .unwrap();
    el.execute(|| panic!("boom")).unwrap();
    driver.run_until_idle();
    assert_eq!(
        SEEN.lock().unwrap().as_slice(),
        [(
            Level::Error,
            "netloop".to_string(),
            "netloop: a task on loop logged failed: boom".to_string()
        )]
    );
    log::set_max_level(log::LevelFilter::Error);
    netloop_eventloop::log::warn("filtered");
    netloop_eventloop::log::error("kept");
    log::set_max_level(log::LevelFilter::Off);
    netloop_eventloop::log::error("silenced");
    let seen = SEEN.lock().unwrap();
    assert_eq!(seen.last().unwrap().2, "kept");
    assert_eq!(seen.len(), 2);
}
