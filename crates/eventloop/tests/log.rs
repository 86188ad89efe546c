//! The logging facade: library code reports through one process-wide sink. Its own binary
//! because the sink is process-wide.

use std::sync::Mutex;

use netloop_eventloop::log::{self, Level};
use netloop_eventloop::{EventLoop, LoopConfig};

static SEEN: Mutex<Vec<(Level, String)>> = Mutex::new(Vec::new());

fn capture(level: Level, message: &str) {
    SEEN.lock().unwrap().push((level, message.to_string()));
}

#[test]
fn messages_go_to_the_installed_sink_and_respect_the_level() {
    let previous = log::set_log_sink(capture);
    assert_eq!(
        previous as usize,
        log::log_crate_sink as fn(Level, &str) as usize,
        "by default messages go to the log crate's logger, which the application controls"
    );
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
            "netloop: a task on loop logged failed: boom".to_string()
        )]
    );
    log::set_max_level(Some(Level::Error));
    log::warn("filtered");
    log::error("kept");
    log::set_max_level(None);
    log::error("silenced");
    log::set_max_level(Some(Level::Debug));
    assert_eq!(SEEN.lock().unwrap().last().unwrap().1, "kept");
    assert_eq!(SEEN.lock().unwrap().len(), 2);
    log::set_log_sink(previous);
}
