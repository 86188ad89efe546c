//! The records of the shared buffers: their fields, their kinds (events native → JS and ops
//! JS → native share one code space), and what their fields carry (outcomes, promise and
//! error ids, user events).

#[cfg(feature = "napi")]
use napi_derive::napi;

/// Fields of one record in the shared `Float64Array`s, and a record's length.
/// Events (native → JS): `[kind, channel, ctx, a, b, c] × n`; ops (JS → native):
/// `[count, (kind, channel, ctx, a, b, c) × n]`.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordField {
    /// The record's [`WireKind`].
    Kind = 0,
    /// The channel's id (0: none, hub-wide records).
    Channel = 1,
    /// The id of the JS context the record is for (or comes from); 0 is the pipeline's head
    /// (inbound) or tail (outbound).
    Ctx = 2,
    /// First payload field (per kind).
    A = 3,
    /// Second payload field (per kind).
    B = 4,
    /// Third payload field (per kind; a promise id on outbound ops).
    C = 5,
    /// f64 fields per record.
    Length = 6,
}

/// The kind of a record (its `kind` field). Events and ops share one code space.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireKind {
    // ---- inbound events (native → JS at a JS context; JS → native fired from one) ----
    /// `channelRegistered`.
    Registered = 1,
    /// `channelUnregistered`.
    Unregistered = 2,
    /// `channelActive`.
    Active = 3,
    /// `channelInactive`.
    Inactive = 4,
    /// `a` = offset, `b` = length in the byte arena.
    ReadBytes = 5,
    /// `a` = value token.
    ReadValue = 6,
    /// `channelReadComplete`.
    ReadComplete = 7,
    /// `b` = a [`UserEventKind`]; `a` its payload.
    UserEvent = 8,
    /// `b` = an [`Outcome`] error kind: native error at string index `a`, or JS error token `a`.
    Exception = 9,
    /// `channelWritabilityChanged`.
    WritabilityChanged = 10,
    /// JS → native only: `a` = index into the big-chunk array of the `applyOps` call.
    ReadBig = 11,
    /// Decoded RESP values, back to back (one, or a read's run of commands): `a` = offset,
    /// `b` = length of their tag forms ([`RespTag`]); `c` = 1 when JS may give them back.
    ReadResp = 12,
    /// A decoded HTTP request or body piece: `a` = offset, `b` = length of its layout
    /// (http_wire.rs, an [`HttpIn`] byte first) in the arena. Also JS → native, a request or
    /// body piece of an `HttpServerCodec` a JS handler fires on, in the same layout (`b` < 0:
    /// big-chunk index `a`).
    ReadHttp = 13,
    /// A WebSocket message or control frame: `a` = offset, `b` = length of its layout
    /// (ws_wire.rs: a [`WsFrameKind`] byte, then the payload) in the arena. Also JS → native,
    /// a frame a JS handler fires on, in [`WireKind::WriteWs`]'s layout (`b` < 0: big-chunk
    /// index `a`).
    ReadWs = 14,

    // ---- outbound operations (native → JS at a JS context; JS → native passed on) ----
    /// `a` = offset, `b` = length, `c` = promise.
    WriteBytes = 20,
    /// `a` = value token, `c` = promise.
    WriteValue = 21,
    /// `flush`.
    Flush = 22,
    /// `read` (a read request, outbound).
    Read = 23,
    /// `c` = promise.
    Close = 24,
    /// JS → native only: `a` = big-chunk index, `c` = promise.
    WriteBig = 25,
    /// JS → native only: RESP replies in tag form at `a`, `b` bytes in the op arena;
    /// `c` = promise.
    WriteResp = 26,
    /// JS → native only: an HTTP response or body chunk (http_wire.rs) at `a`, `b` bytes in
    /// the op arena (`b` < 0: big-chunk index `a`); `c` = promise.
    WriteHttp = 27,
    /// JS → native only: a file region (file_wire.rs) at `a`, `b` bytes in the op arena; its
    /// descriptor is handed over with it; `c` = promise.
    WriteFile = 28,
    /// JS → native only: a WebSocket frame (ws_wire.rs) at `a`, `b` bytes in the op arena
    /// (`b` < 0: big-chunk index `a`); `c` = promise.
    WriteWs = 29,

    // ---- hub events (native → JS) ----
    /// `a` = promise id, `b` = an [`Outcome`], `c` = its error (string index or JS token).
    PromiseDone = 30,
    /// `channel` = the new channel, `a` = its server channel or [`ServerId::Remote`].
    NewChannel = 31,
    /// The channel closed (its close future completed); `b` = an [`Outcome`] (the cause),
    /// `a` its error.
    Closed = 32,
    /// `a` = a token native code dropped without handing it back.
    Release = 33,
    /// The channel is closed and unregistered: it left the hub (JS tears its pipeline down).
    Forget = 34,
    /// An exception reached the native tail of the channel's pipeline (`b`/`a` as `Exception`).
    Unhandled = 35,
    /// The channel's `SslHandler` finished its handshake: `a` = [`ErrorIndex::None`] on
    /// success, else the string index of the error (whatever handlers sit behind it).
    TlsHandshake = 36,
    /// The channel's `SslHandler` (of a context with an `SNICallback` or an `ALPNCallback`)
    /// read a ClientHello to ask about and waits for JS's answer (`tlsAnswerClientHello`):
    /// `a` = the string index of the server name (-1: none), `b` = the string index of the
    /// first ALPN protocol the client offered (each byte one char), `c` = how many.
    TlsClientHello = 37,
    /// The channel's client `SslHandler` (of a context with a `checkServerIdentity`) finished
    /// its handshake with a verified chain and waits for JS's verdict on the server's identity
    /// (`tlsAnswerServerIdentity`): `a` = the string index of the name to judge.
    TlsServerIdentity = 38,

    // ---- hub ops (JS → native) ----
    /// `a` = a native promise id, `b` = an [`Outcome`] (success or JS error token in `c`).
    CompletePromise = 40,
    /// Registers the channel on its loop (after JS ran its initializer).
    Register = 41,

    // ---- outbound operations, continued ----
    /// JS → native only: a `WriteBytes` (same fields) and then a `Flush`, both from the same
    /// context (`writeAndFlush`, or a flush right after a write in the same batch).
    WriteBytesFlush = 42,
}

impl TryFrom<u32> for WireKind {
    type Error = u32;

    /// The kind of code `code` (a record's `kind` field), or the code back if it names none.
    fn try_from(code: u32) -> Result<Self, u32> {
        Ok(match code {
            1 => WireKind::Registered,
            2 => WireKind::Unregistered,
            3 => WireKind::Active,
            4 => WireKind::Inactive,
            5 => WireKind::ReadBytes,
            6 => WireKind::ReadValue,
            7 => WireKind::ReadComplete,
            8 => WireKind::UserEvent,
            9 => WireKind::Exception,
            10 => WireKind::WritabilityChanged,
            11 => WireKind::ReadBig,
            12 => WireKind::ReadResp,
            13 => WireKind::ReadHttp,
            14 => WireKind::ReadWs,
            20 => WireKind::WriteBytes,
            21 => WireKind::WriteValue,
            22 => WireKind::Flush,
            23 => WireKind::Read,
            24 => WireKind::Close,
            25 => WireKind::WriteBig,
            26 => WireKind::WriteResp,
            27 => WireKind::WriteHttp,
            28 => WireKind::WriteFile,
            29 => WireKind::WriteWs,
            30 => WireKind::PromiseDone,
            31 => WireKind::NewChannel,
            32 => WireKind::Closed,
            33 => WireKind::Release,
            34 => WireKind::Forget,
            35 => WireKind::Unhandled,
            36 => WireKind::TlsHandshake,
            37 => WireKind::TlsClientHello,
            38 => WireKind::TlsServerIdentity,
            40 => WireKind::CompletePromise,
            41 => WireKind::Register,
            42 => WireKind::WriteBytesFlush,
            other => return Err(other),
        })
    }
}

/// The enums whose values travel in a record's `f64` fields (`a`, `b`, `c`).
pub trait RecordValue: Copy {
    /// The value as a record field.
    fn value(self) -> f64;
}

macro_rules! record_value {
    ($($t:ty),*) => {$(
        impl RecordValue for $t {
            fn value(self) -> f64 {
                self as i32 as f64
            }
        }
    )*};
}
record_value!(UserEventKind, Outcome, PromiseId, ErrorIndex, ServerId);

/// What a `UserEvent` record carries (its `b` field).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserEventKind {
    /// A JS value: its token in `a`.
    Token = 0,
    /// An `IdleStateEvent`: `a` = state * 2 + first.
    Idle = 1,
    /// `ChannelInputShutdownEvent`.
    InputShutdown = 2,
    /// `SslHandshakeCompletionEvent`: `a` = [`ErrorIndex::None`] or the error's string index.
    TlsHandshake = 3,
    /// `SslCloseCompletionEvent` (the peer's close_notify).
    TlsClose = 4,
    /// An `HAProxyMessage` (a PROXY protocol header): `a` = the index of its first of
    /// [`HAPROXY_STRINGS`] strings (version, command, protocol, source address, source port,
    /// destination address, destination port, TLVs as `type:hex` joined by `,`; absent ends
    /// and ports empty).
    HAProxy = 5,
    /// A WebSocket handshake completed (`HandshakeComplete` of a server's channel,
    /// `ClientHandshakeComplete` of a client's): `a` = the index of its first of
    /// [`WS_HANDSHAKE_STRINGS`] strings (the request target, the subprotocol chosen or empty,
    /// the header fields as `name: value` lines joined by `\n`: the request's on a server,
    /// the answer's on a client).
    WebSocketHandshake = 6,
}

/// How many strings an [`UserEventKind::HAProxy`] event takes.
pub const HAPROXY_STRINGS: usize = 8;

/// How many strings an [`UserEventKind::WebSocketHandshake`] event takes.
pub const WS_HANDSHAKE_STRINGS: usize = 3;

/// How something ended, and where its error is (the `b` field of `Exception`, `Unhandled`,
/// `Closed`, `PromiseDone`, `CompletePromise`).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No error.
    Success = 0,
    /// A native error: four strings (code, message, cause code, cause message) from the
    /// record's string index.
    NativeError = 1,
    /// A JS error: its token.
    JsError = 2,
}

/// Promise ids on the wire. Positive ids are JS promises; ids below `VoidFiring` name native
/// promises the hub lends to JS.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromiseId {
    /// The silent void promise (a write made without one: its failure is not reported,
    /// Netty's `write(msg)`).
    Silent = 0,
    /// The channel's `voidPromise()`: a failure goes to `exceptionCaught`.
    VoidFiring = -1,
}

/// A string index that names no error (a TLS handshake that succeeded).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorIndex {
    /// No error.
    None = -1,
}

/// `NewChannel`'s server id for a channel handed over from another thread: JS runs the
/// child initializer it registered for this loop.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerId {
    /// Handed over from another thread.
    Remote = -1,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_wire_code_converts_to_the_kind_with_that_value_and_no_other_does() {
        let mut kinds = 0;
        for code in 0..=255u32 {
            if let Ok(kind) = WireKind::try_from(code) {
                assert_eq!(kind as u32, code);
                kinds += 1;
            }
        }
        // One per variant (the count napi-rs exports to JS: __test__/protocol.spec.ts).
        assert_eq!(kinds, 36);
    }
}
