//! TLS for netloop pipelines on rustls (Netty's `SslContext` and `SslHandler`).
//!
//! An [`SslContext`] is a server's or a client's configuration (certificates and keys from PEM,
//! trusted CAs and revocation lists, ALPN, versions, cipher suites and key-exchange groups,
//! client authentication, session resumption, handshake timeout, a key log),
//! parsed once and shared by every connection and thread. [`SslContext::new_handler`] makes the
//! [`SslHandler`] of one connection: add it first in the pipeline and every handler behind it
//! reads and writes plaintext.
//!
//! ```
//! use netloop_tls::{SslContext, SslOptions};
//! let client = SslContext::client(&SslOptions::default()).unwrap(); // bundled Mozilla roots
//! let handler = client.new_handler(Some("example.com")).unwrap();
//! assert!(!handler.is_handshake_done());
//! ```
//!
//! The handshake's outcome reaches every handler as an [`SslHandshakeCompletionEvent`] user
//! event and [`SslHandler::handshake_future`]; failures are [`TlsError`]s with stable codes
//! (Node's where Node has one) through `exceptionCaught`, and close that connection only.
//!
//! Crypto: rustls with the *ring* provider; roots: the bundled Mozilla store (webpki-roots)
//! unless `ca` is given, optionally the system's. Why: docs/decisions/0007-tls.md.

#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod capture;
mod context;
mod engine;
mod error;
mod expiry;
mod exporter;
mod handler;
mod hello;
mod keylog;
mod node_options;
mod options;
mod pem;
mod pfx;
mod record;
mod rustls_parts;
mod session;
mod sigalgs;
mod small;
mod sni;
mod suites;
mod tickets;
mod verify;

pub use context::{
    ClientAuth, PemIdentity, SslContext, SslOptions, TlsVersion, DEFAULT_HANDSHAKE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT, MAX_SESSION_TIMEOUT,
};
pub use error::TlsError;
pub use handler::{
    ClientHelloAnswer, ClientHelloQuestion, ProtocolChoice, ServerNameChoice, SslHandler,
};
pub use node_options::{NodeKey, NodeSniIdentity, NodeTlsOptions};
pub use session::{SslCloseCompletionEvent, SslHandshakeCompletionEvent, TlsSession};
pub use sni::SniResolver;
pub use tickets::TICKET_KEYS_LEN;

/// The rustls crate this is built on.
pub use rustls;
