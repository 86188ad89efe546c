//! Typed errors of the event-loop crate, each with a stable code for the JS binding.

use std::fmt;

/// Why a task was not accepted by a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// The loop has passed its quiet period and no longer accepts work.
    Shutdown,
    /// `max_pending_tasks` tasks are already waiting.
    QueueFull,
}

/// Errors raised by loops, groups, schedules and promises of this crate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopError {
    /// The task was rejected; it was not and will not be run.
    Rejected(RejectReason),
    /// An argument was out of range (a non-positive period, an ioRatio outside 1..=100, ...).
    InvalidArgument(String),
    /// The operation was cancelled before it completed.
    Cancelled,
    /// An operating-system error (creating the selector, the waker, a thread).
    Io {
        /// The kind of the underlying `std::io::Error`.
        kind: std::io::ErrorKind,
        /// Its message.
        message: String,
    },
    /// A `wait` ran out of time.
    Timeout,
    /// Blocking on a future from a thread that runs an event-loop iteration (Netty's
    /// `BlockingOperationException`): it could wait for itself forever.
    BlockingOperation,
    /// A panic escaped the loop's body; the loop terminated (its termination future fails
    /// with this error).
    Panicked(String),
}

impl LoopError {
    /// The stable error code exposed to JavaScript.
    pub fn code(&self) -> &'static str {
        match self {
            LoopError::Rejected(_) => "ERR_REJECTED_EXECUTION",
            LoopError::InvalidArgument(_) => "ERR_INVALID_ARG_VALUE",
            LoopError::Cancelled => "ERR_CANCELLED",
            LoopError::Io { .. } => "ERR_IO",
            LoopError::Timeout => "ETIMEDOUT",
            LoopError::BlockingOperation => "ERR_BLOCKING_OPERATION",
            LoopError::Panicked(_) => "ERR_LOOP_PANICKED",
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        LoopError::InvalidArgument(msg.into())
    }
}

impl From<std::io::Error> for LoopError {
    fn from(e: std::io::Error) -> Self {
        LoopError::Io {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for LoopError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoopError::Rejected(RejectReason::Shutdown) => {
                write!(f, "task rejected: the event loop is shut down")
            }
            LoopError::Rejected(RejectReason::QueueFull) => {
                write!(
                    f,
                    "task rejected: the event loop's task queue is full (maxPendingTasks)"
                )
            }
            LoopError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            LoopError::Cancelled => write!(f, "cancelled"),
            LoopError::Io { message, .. } => write!(f, "I/O error: {message}"),
            LoopError::Timeout => write!(f, "timed out"),
            LoopError::BlockingOperation => write!(
                f,
                "blocking on an incomplete future from an event loop's thread would deadlock"
            ),
            LoopError::Panicked(m) => write!(f, "the event loop panicked: {m}"),
        }
    }
}

impl std::error::Error for LoopError {}

/// Lets promises whose error type is a plain message report loop errors (cancellation,
/// blocking from a loop's thread).
impl From<LoopError> for String {
    fn from(e: LoopError) -> Self {
        e.to_string()
    }
}
