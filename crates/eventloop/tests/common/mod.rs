#![allow(dead_code)]
use std::sync::Arc;

use netloop_eventloop::{EventLoop, LoopConfig, LoopDriver, ManualTicker};

/// An attached loop on the test thread with a fake clock, driven by hand.
pub fn manual_loop(
    configure: impl FnOnce(&mut LoopConfig),
) -> (EventLoop, LoopDriver, Arc<ManualTicker>) {
    let ticker = ManualTicker::new();
    let mut cfg = LoopConfig {
        ticker: ticker.clone(),
        ..LoopConfig::default()
    };
    configure(&mut cfg);
    let (el, driver) = EventLoop::attached(cfg).expect("attached loop");
    (el, driver, ticker)
}

/// A shared log of labels, to assert ordering.
#[derive(Clone, Default)]
pub struct Log(Arc<std::sync::Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, s: impl Into<String>) {
        self.0.lock().unwrap().push(s.into());
    }
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}
