//! Netty's event loop on mio.
//!
//! An [`EventLoop`] is one mio `Poll`, one lock-free MPSC task queue, one timer heap and the
//! table of sources registered on it. A loop is driven either *standalone* (its own OS thread
//! blocks in the poll) or *attached* (an outside loop such as libuv watches [`LoopDriver::raw_fd`]
//! and calls [`LoopDriver::run_io_ready`] / [`LoopDriver::run_once`]); both run the same
//! iteration function. Everything registered on a loop is touched only on its thread; other
//! threads talk to it through [`EventLoop::execute`] and [`EventLoop::schedule`].
//!
//! ```
//! use netloop_eventloop::{EventLoop, LoopConfig};
//! use std::time::Duration;
//!
//! let el = EventLoop::standalone(LoopConfig::default()).unwrap();
//! let (tx, rx) = std::sync::mpsc::channel();
//! el.schedule(Duration::from_millis(1), move || tx.send(42).unwrap()).unwrap();
//! assert_eq!(rx.recv().unwrap(), 42);
//! el.shutdown_gracefully(Duration::ZERO, Duration::from_secs(1)).wait().unwrap();
//! ```

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod batch;
mod clock;
mod combiner;
mod config;
mod driver;
mod error;
mod event_loop;
mod group;
mod io;
mod io_driver;
mod local;
pub mod log;
mod promise;
mod schedule;
mod scheduler;
mod selector;
mod shared;
mod shutdown;
mod spin;
mod submit;
mod thread_context;
mod timer;

pub use clock::{system_ticker, ManualTicker, SystemTicker, Ticker};
pub use combiner::PromiseCombiner;
pub use config::{
    FaultInjector, LoopConfig, PanicReporter, SelectorFault, DEFAULT_SPIN_BEFORE_SLEEP,
};
pub use driver::LoopDriver;
pub use error::{LoopError, RejectReason};
pub use event_loop::{EventLoop, LoopState};
pub use group::{default_loop_count, Chooser, EventLoopGroup};
pub use io::{move_source, IoHandler, Readiness};
pub use local::{Iteration, LocalLoop, TailTaskKey};
pub use mio;
pub use promise::{Future, Promise};
pub use spin::SpinGovernor;
pub use timer::ScheduledHandle;
