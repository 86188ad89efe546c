//! Typed errors of the transport crate, each with a stable code for the JS binding.
//!
//! `TransportError` is `Clone + Send + Sync`: one close fails many write promises with the same
//! error, and promises may be waited on from other threads. Errors of other crates (codec errors
//! such as `ERR_TOO_LONG_FRAME`, JS exceptions) travel as [`TransportError::Foreign`] with
//! their own code.

use std::borrow::Cow;
use std::error::Error;
use std::fmt;
use std::io;
use std::sync::Arc;

use netloop_eventloop::LoopError;

/// Everything that can go wrong in a channel or pipeline, and what reaches `exceptionCaught`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TransportError {
    /// The channel is closed (or closing); pending and new writes fail with this.
    ChannelClosed,
    /// The channel was closed because of this error (a write failed with EPIPE, a read
    /// with ECONNRESET, ...): later operations fail with this, code `ERR_CHANNEL_CLOSED`
    /// and the original error as [`TransportError::cause`] (Netty's `initialCloseCause`).
    ClosedBy(Arc<TransportError>),
    /// An operation that needs a connected channel was asked of one not yet connected.
    NotYetConnected,
    /// A write on a channel whose output is shut down (or shutting down).
    OutputShutdown,
    /// `connect` was asked of a channel that is connected or connecting.
    AlreadyConnected,
    /// The peer refused the connection (ECONNREFUSED).
    ConnectionRefused,
    /// The peer reset the connection (ECONNRESET).
    ConnectionReset,
    /// `connectTimeoutMillis` passed before the connection was established.
    ConnectTimeout,
    /// The connect was cancelled by the caller.
    ConnectCancelled,
    /// A handler with this name is already in the pipeline.
    DuplicateHandlerName(String),
    /// No handler with this name is in the pipeline.
    NoSuchHandler(String),
    /// The channel cannot carry this kind of message (e.g. a user value written to a socket).
    UnsupportedMessage(&'static str),
    /// The operation is not supported by this kind of channel.
    UnsupportedOperation(&'static str),
    /// An option value was out of range (e.g. low water mark above high water mark).
    InvalidOption(String),
    /// A handler panicked; the pipeline caught it.
    HandlerPanic(String),
    /// The event loop rejected the task (shut down or full).
    Rejected,
    /// Any other operating-system error.
    Io(Arc<io::Error>),
    /// An error of another crate or of JavaScript, with its own stable code.
    Foreign {
        /// The stable code (e.g. `ERR_TOO_LONG_FRAME`).
        code: Cow<'static, str>,
        /// The error itself.
        error: Arc<dyn Error + Send + Sync>,
    },
}

impl TransportError {
    /// The stable error code exposed to JavaScript.
    pub fn code(&self) -> &str {
        match self {
            TransportError::ChannelClosed => "ERR_CHANNEL_CLOSED",
            TransportError::ClosedBy(_) => "ERR_CHANNEL_CLOSED",
            TransportError::NotYetConnected => "ERR_NOT_YET_CONNECTED",
            TransportError::OutputShutdown => "ERR_OUTPUT_SHUTDOWN",
            TransportError::AlreadyConnected => "ERR_ALREADY_CONNECTED",
            TransportError::ConnectionRefused => "ECONNREFUSED",
            TransportError::ConnectionReset => "ECONNRESET",
            TransportError::ConnectTimeout => "ERR_CONNECT_TIMEOUT",
            TransportError::ConnectCancelled => "ERR_CONNECT_CANCELLED",
            TransportError::DuplicateHandlerName(_) => "ERR_DUPLICATE_HANDLER_NAME",
            TransportError::NoSuchHandler(_) => "ERR_NO_SUCH_HANDLER",
            TransportError::UnsupportedMessage(_) => "ERR_UNSUPPORTED_MESSAGE",
            TransportError::UnsupportedOperation(_) => "ERR_UNSUPPORTED_OPERATION",
            TransportError::InvalidOption(_) => "ERR_INVALID_OPTION",
            TransportError::HandlerPanic(_) => "ERR_HANDLER_PANIC",
            TransportError::Rejected => "ERR_REJECTED_EXECUTION",
            TransportError::Io(e) => io_code(e),
            TransportError::Foreign { code, .. } => code,
        }
    }

    /// Wraps an error of another crate with its stable code.
    pub fn foreign(
        code: impl Into<Cow<'static, str>>,
        error: impl Error + Send + Sync + 'static,
    ) -> Self {
        TransportError::Foreign {
            code: code.into(),
            error: Arc::new(error),
        }
    }

    /// The foreign error, if this is one, for downcasting (`e.foreign_source()?.downcast_ref()`).
    pub fn foreign_source(&self) -> Option<&(dyn Error + Send + Sync + 'static)> {
        match self {
            TransportError::Foreign { error, .. } => Some(&**error),
            _ => None,
        }
    }

    /// The message of a caught panic payload.
    pub(crate) fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let msg = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "handler panicked".to_string()
        };
        TransportError::HandlerPanic(msg)
    }
}

/// errno name of an I/O error, `ERR_IO` when there is none.
fn io_code(e: &io::Error) -> &'static str {
    if let Some(name) = crate::sys::errno_name(e) {
        return name;
    }
    match e.kind() {
        io::ErrorKind::TimedOut => "ETIMEDOUT",
        io::ErrorKind::BrokenPipe => "EPIPE",
        io::ErrorKind::UnexpectedEof => "ERR_UNEXPECTED_EOF",
        _ => "ERR_IO",
    }
}

impl From<io::Error> for TransportError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::ConnectionRefused => TransportError::ConnectionRefused,
            io::ErrorKind::ConnectionReset => TransportError::ConnectionReset,
            _ => TransportError::Io(Arc::new(e)),
        }
    }
}

impl TransportError {
    /// The error that caused this one (for [`TransportError::ClosedBy`]: the error that
    /// closed the channel).
    pub fn cause(&self) -> Option<&TransportError> {
        match self {
            TransportError::ClosedBy(c) => Some(c),
            _ => None,
        }
    }

    /// True for `ERR_CHANNEL_CLOSED`, with or without a cause.
    pub fn is_channel_closed(&self) -> bool {
        matches!(
            self,
            TransportError::ChannelClosed | TransportError::ClosedBy(_)
        )
    }
}

impl From<LoopError> for TransportError {
    fn from(e: LoopError) -> Self {
        match e {
            LoopError::Rejected(_) => TransportError::Rejected,
            other => TransportError::foreign(other.code(), other),
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportError::ChannelClosed => write!(f, "channel closed"),
            TransportError::ClosedBy(c) => write!(f, "channel closed ({}: {c})", c.code()),
            TransportError::NotYetConnected => write!(f, "channel not yet connected"),
            TransportError::OutputShutdown => write!(f, "the channel's output is shut down"),
            TransportError::AlreadyConnected => {
                write!(f, "channel already connected or connecting")
            }
            TransportError::ConnectionRefused => write!(f, "connection refused"),
            TransportError::ConnectionReset => write!(f, "connection reset by peer"),
            TransportError::ConnectTimeout => {
                write!(f, "connection timed out (connectTimeoutMillis)")
            }
            TransportError::ConnectCancelled => write!(f, "connect cancelled"),
            TransportError::DuplicateHandlerName(n) => write!(f, "duplicate handler name: {n}"),
            TransportError::NoSuchHandler(n) => write!(f, "no such handler: {n}"),
            TransportError::UnsupportedMessage(m) => write!(f, "unsupported message type: {m}"),
            TransportError::UnsupportedOperation(m) => write!(f, "unsupported operation: {m}"),
            TransportError::InvalidOption(m) => write!(f, "invalid option: {m}"),
            TransportError::HandlerPanic(m) => write!(f, "handler panicked: {m}"),
            TransportError::Rejected => write!(f, "the event loop rejected the task"),
            TransportError::Io(e) => write!(f, "{e}"),
            TransportError::Foreign { error, .. } => write!(f, "{error}"),
        }
    }
}

impl Error for TransportError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            TransportError::Io(e) => Some(&**e),
            TransportError::Foreign { error, .. } => Some(&**error as &(dyn Error + 'static)),
            _ => None,
        }
    }
}

/// Result of every handler method: `Err` goes to the next handler's `exceptionCaught`.
pub type HandlerResult = Result<(), TransportError>;
