//! Answers of JS callbacks a TLS handshake waits for (SNI and ALPN).

#[cfg(feature = "napi")]
use napi_derive::napi;

/// How JS answers an `SslHandler`'s question about a server name (`tlsAnswerClientHello`,
/// crates/tls `ServerNameChoice`).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerNameAnswer {
    /// Serve the handler's own context (the callback answered `undefined`/`null`).
    Default = 0,
    /// Serve the context whose id is given.
    Context = 1,
    /// The callback refused the name (`cb(err)`, a rejected promise): `unrecognized_name`.
    Refuse = 2,
    /// The callback failed (threw, answered with no server context): `internal_error`.
    Fail = 3,
}

/// How JS answers an `SslHandler`'s question about the ALPN protocol (`tlsAnswerClientHello`,
/// crates/tls `ProtocolChoice`).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolAnswer {
    /// Not asked (no `ALPNCallback`, or the context was refused first).
    Default = 0,
    /// The callback chose the protocol given.
    Select = 1,
    /// The callback returned `undefined`: `no_application_protocol`.
    Refuse = 2,
    /// The callback returned something that is not one of the client's protocols.
    Invalid = 3,
    /// The callback threw: `internal_error`.
    Fail = 4,
}
