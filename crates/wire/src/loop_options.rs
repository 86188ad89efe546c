//! [`LoopOptions`]: the options of a loop attached to a JS thread (src/loop.ts checks them),
//! read into the core's [`LoopConfig`] with the binding's defaults: the name `netloop-js`, no
//! spin before sleeping (unlike the core's standalone loops; docs/decisions/0010 has the
//! measurements), task panics logged.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use netloop_eventloop::{LoopConfig, SelectorFault};

use crate::error::{invalid_arg, WireResult};

/// Longest `spinBeforeSleepMicros`: a libuv callback holds its thread for at most one
/// iteration, the spin window and one more iteration (crates/node's bridge/spin.rs).
pub const MAX_SPIN_MICROS: u32 = 1000;

/// The default `spinBeforeSleepMicros` of a loop attached to a JS thread: none.
pub const DEFAULT_SPIN_MICROS: u64 = 0;

/// The options src/loop.ts hands over (`None`: the default).
#[derive(Debug, Default)]
pub struct LoopOptions {
    /// The loop's (and its thread's) name.
    pub name: Option<String>,
    /// `ioRatio`.
    pub io_ratio: Option<u32>,
    /// `maxPendingTasks`.
    pub max_pending_tasks: Option<u32>,
    /// `spinBeforeSleepMicros` (0..=`MAX_SPIN_MICROS`).
    pub spin_before_sleep_micros: Option<u32>,
}

impl LoopOptions {
    /// The loop's configuration. With `faults` (the test hooks), the next `faults` polls return
    /// empty at once, as a buggy epoll would.
    pub fn config(self, faults: Option<Arc<AtomicU32>>) -> WireResult<LoopConfig> {
        let mut cfg = LoopConfig {
            name: "netloop-js".into(),
            spin_before_sleep: Duration::from_micros(DEFAULT_SPIN_MICROS),
            ..LoopConfig::default()
        };
        if let Some(n) = self.name {
            cfg.name = n;
        }
        if let Some(r) = self.io_ratio {
            cfg.io_ratio = r;
        }
        if let Some(m) = self.max_pending_tasks {
            cfg.max_pending_tasks = m as usize;
        }
        if let Some(us) = self.spin_before_sleep_micros {
            if us > MAX_SPIN_MICROS {
                return Err(invalid_arg(format!(
                    "spinBeforeSleepMicros must be at most {MAX_SPIN_MICROS}, got {us}"
                )));
            }
            cfg.spin_before_sleep = Duration::from_micros(u64::from(us));
        }
        let loop_name = cfg.name.clone();
        cfg.on_task_panic = Some(Arc::new(move |msg: &str| {
            crate::logging::debug(format_args!("a task on loop {loop_name} panicked: {msg}"));
        }));
        if let Some(f) = faults {
            cfg.fault_injector = Some(Arc::new(move || {
                let left = f.load(Ordering::Relaxed);
                if left > 0 {
                    f.store(left - 1, Ordering::Relaxed);
                    SelectorFault::PrematureEmpty
                } else {
                    SelectorFault::None
                }
            }));
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_attached_to_js_is_named_netloop_js_and_does_not_spin() {
        let cfg = LoopOptions::default().config(None).unwrap();
        assert_eq!(cfg.name, "netloop-js");
        assert_eq!(cfg.spin_before_sleep, Duration::ZERO);
        assert!(cfg.on_task_panic.is_some() && cfg.fault_injector.is_none());
    }

    #[test]
    fn a_spin_past_the_limit_is_refused() {
        let spin = |us| LoopOptions {
            spin_before_sleep_micros: Some(us),
            ..LoopOptions::default()
        };
        let cfg = spin(MAX_SPIN_MICROS).config(None).unwrap();
        assert_eq!(cfg.spin_before_sleep, Duration::from_micros(1000));
        let e = spin(MAX_SPIN_MICROS + 1).config(None).unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_ARG_VALUE");
        assert_eq!(
            e.message,
            "spinBeforeSleepMicros must be at most 1000, got 1001"
        );
    }

    #[test]
    fn injected_faults_make_that_many_polls_return_empty() {
        let faults = Arc::new(AtomicU32::new(2));
        let cfg = LoopOptions::default().config(Some(faults.clone())).unwrap();
        let inject = cfg.fault_injector.unwrap();
        assert!(matches!(inject(), SelectorFault::PrematureEmpty));
        assert!(matches!(inject(), SelectorFault::PrematureEmpty));
        assert!(matches!(inject(), SelectorFault::None));
        assert_eq!(faults.load(Ordering::Relaxed), 0);
    }
}
