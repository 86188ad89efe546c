//! Layer 2: WebSocket as `netloop-transport` pipeline handlers.
//!
//! - [`WebSocketHandler`] (after the handshake): bytes in, [`WebSocketFrame`](crate::WebSocketFrame)
//!   messages out to the next handler; [`WebSocketFrame`](crate::WebSocketFrame)s (and plain
//!   `Bytes` as binary messages, `String`s as text messages) written by the application go
//!   out as frames. Pings are answered natively; the close handshake runs natively.
//! - [`WebSocketEchoHandler`]: sends every message back, natively (no JS).
//!
//! Ground rules shared by both:
//! - Loop thread only: state in `Cell`/`RefCell`, and no borrow held while an event is fired
//!   or an operation passed on (the pipeline is re-entrant).
//! - A protocol violation fails the connection: the error reaches `exception_caught` as
//!   `TransportError::Foreign` with its `ERR_WS_*` code, a close frame with its close code
//!   (1002, 1007, 1009) is written, and the channel closes once it is written; every byte
//!   after the bad frame is dropped.

mod closing;
mod compression;
mod connection;
mod echo;
mod pause;
mod reading;

pub use connection::WebSocketHandler;
pub use echo::WebSocketEchoHandler;
