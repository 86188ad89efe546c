//! The boundary protocol: every number that crosses between this binding and the TypeScript
//! side, defined once.
//!
//! Each concept is one `#[napi]` enum. napi-rs writes them into `native.d.ts` as
//! `const enum`s, `scripts/gen-protocol.mjs` copies those into `src/protocol.ts` (the TS side
//! imports them from there; `npm run check:types` fails when the copy is stale), and tsc
//! inlines each member into the compiled JS: a record's kind is still compared with a small
//! integer literal, never loaded from an object. At load time the TS side compares its copy
//! with the enum objects the addon exports (`checkProtocol` in `src/protocol-check.ts`), so a
//! binary from another build is refused instead of misread.
//!
//! Adding a channel event: a variant in [`WireKind`] (and its payload documented on it), the
//! native code that pushes it, and the TS code that handles it (docs/decisions/0011).
//!
//! The Rust side uses the enums directly (`WireKind::Active as u32`) or through the aliases
//! in `channel::wire`, which are derived from them.

use napi_derive::napi;

/// Fields of one record in the shared `Float64Array`s, and a record's length.
/// Events (native → JS): `[kind, channel, ctx, a, b, c] × n`; ops (JS → native):
/// `[count, (kind, channel, ctx, a, b, c) × n]`.
#[napi]
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
#[napi]
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
    /// A decoded RESP value: `a` = offset, `b` = length of its tag form ([`RespTag`]).
    ReadResp = 12,
    /// A decoded HTTP request or body piece: `a` = offset, `b` = length of its layout
    /// (http_wire.rs, an [`HttpIn`] byte first) in the arena.
    ReadHttp = 13,
    /// A WebSocket message or control frame: `a` = offset, `b` = length of its layout
    /// (ws_wire.rs: a [`WsFrameKind`] byte, then the payload) in the arena.
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

/// What a `UserEvent` record carries (its `b` field).
#[napi]
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
}

/// How many strings an [`UserEventKind::HAProxy`] event takes.
pub const HAPROXY_STRINGS: usize = 8;

/// How something ended, and where its error is (the `b` field of `Exception`, `Unhandled`,
/// `Closed`, `PromiseDone`, `CompletePromise`).
#[napi]
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
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromiseId {
    /// The silent void promise (a write made without one: its failure is not reported,
    /// Netty's `write(msg)`).
    Silent = 0,
    /// The channel's `voidPromise()`: a failure goes to `exceptionCaught`.
    VoidFiring = -1,
}

/// A string index that names no error (a TLS handshake that succeeded).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorIndex {
    /// No error.
    None = -1,
}

/// `NewChannel`'s server id for a channel handed over from another thread: JS runs the
/// child initializer it registered for this loop.
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerId {
    /// Handed over from another thread.
    Remote = -1,
}

/// What the loop's JS dispatch function is asked to do. It is called with one number,
/// `arg * DispatchPacking.Multiplier + kind`.
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchKind {
    /// Run the next JS task batch of the loop's FIFO.
    Task = 0,
    /// The loop timer armed for the earliest JS timer fired: JS runs its due timers.
    Timers = 1,
    /// The loop terminated.
    Terminated = 2,
    /// A task posted from another OS thread ran; `arg` = ns from post to run (tests, benches).
    Remote = 3,
    /// The loop failed and terminates: libuv could not watch its rebuilt selector (`arg`:
    /// the libuv error number). JS reports it through `onTaskError`.
    Fault = 4,
    /// The loop's channel hub delivers `arg` event records (in the shared event buffer); the
    /// call's second and third arguments are the batch's byte arena and strings.
    Channels = 5,
}

/// How the dispatch argument is packed: `arg * Multiplier + kind` (exact below 2^53).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchPacking {
    /// The multiplier of `arg`: larger than every [`DispatchKind`].
    Multiplier = 8,
}

/// Slots of the `Float64Array` through which JS arms the loop's one timer (timers.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerArmSlot {
    /// JS sets it to 1 when it wants the timer moved.
    Dirty = 0,
    /// In `performance.now()` milliseconds; negative: disarm.
    Deadline = 1,
    /// The `performance.now()` at which JS wrote it (or NaN).
    Stamp = 2,
    /// The buffer's length.
    Length = 3,
}

/// The built-in native handlers JS can add (channel/codecs.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeHandlerKind {
    /// `LineBasedFrameDecoder`: `p` = max length, strip delimiter, fail fast.
    Line = 1,
    /// `DelimiterBasedFrameDecoder`: `p` as `Line`, the delimiters beside.
    Delimiter = 2,
    /// `FixedLengthFrameDecoder`: `p` = frame length.
    FixedLength = 3,
    /// `LengthFieldBasedFrameDecoder`: `p` = Netty's parameters in order.
    LengthField = 4,
    /// `LengthFieldPrepender`: `p` = Netty's parameters in order.
    Prepender = 5,
    /// `IdleStateHandler`: `p` = reader, writer, all idle ms, observe output.
    Idle = 6,
    /// `SslHandler`: `p[0]` = the context's id (tls.rs), `delimiters[0]` = the client's
    /// server name (UTF-8), if any.
    Tls = 7,
    /// `RespDecoder`: `p` = max bulk length, max array length, max nesting depth, max inline
    /// length, inline commands (0/1), RESP3 (0/1), pause while unwritable (0/1; 2: on for a server's channels).
    Resp = 8,
    /// `HttpServerCodec`: `p` = max head size, max URI length, max header count, max body
    /// size, aggregate limit, require Host (0/1), header timeout (ms, 0: none), max pipelined
    /// requests (0: none), request timeout (ms, 0: none).
    Http = 9,
    /// `FlushConsolidationHandler`: `p` = explicit flush after flushes, consolidate when no
    /// read in progress (0/1).
    FlushConsolidation = 10,
    /// `HttpClientCodec`: `p` = max head size, max header count, max body size, aggregate
    /// limit; `delimiters[0]` = the `Host` added to requests without one, if any.
    HttpClient = 11,
    /// `HAProxyMessageDecoder`: no parameters.
    HAProxy = 12,
    /// `WebSocketServerProtocolHandler` (netloop-ws-upgrade): `p` = max frame size, max
    /// message size, close timeout (ms), answer pings (0/1), path prefix (0/1);
    /// `delimiters[0]` = the path, `delimiters[1..]` = the subprotocols spoken.
    WebSocket = 13,
    /// `WebSocketEchoHandler`: no parameters.
    WebSocketEcho = 14,
}

/// The kind byte that starts a WebSocket frame crossing the boundary (channel/ws_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsFrameKind {
    /// A whole text message (UTF-8).
    Text = 1,
    /// A whole binary message.
    Binary = 2,
    /// A ping.
    Ping = 3,
    /// A pong.
    Pong = 4,
    /// A close frame: code (u16, big-endian; absent for none), then the reason.
    Close = 5,
}

/// The tag byte of a RESP value in its tag form (channel/resp_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespTag {
    /// Simple string.
    Simple = 1,
    /// Simple error.
    Error = 2,
    /// Integer.
    Integer = 3,
    /// Bulk string.
    Bulk = 4,
    /// Null bulk string (RESP2).
    NullBulk = 5,
    /// Array.
    Array = 6,
    /// Null array (RESP2).
    NullArray = 7,
    /// Null (RESP3).
    Null = 8,
    /// Boolean (RESP3).
    Boolean = 9,
    /// Double (RESP3).
    Double = 10,
    /// Big number (RESP3).
    BigNumber = 11,
    /// Bulk error (RESP3).
    BulkError = 12,
    /// Verbatim string (RESP3).
    Verbatim = 13,
    /// Map (RESP3).
    Map = 14,
    /// Set (RESP3).
    Set = 15,
    /// Attribute (RESP3).
    Attribute = 16,
    /// Push (RESP3).
    Push = 17,
}

/// The kind byte that starts an HTTP message the binding delivers (channel/http_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpIn {
    /// A request head (and its aggregated body).
    Request = 0,
    /// A body piece.
    Content = 1,
    /// A response head (and its aggregated body), read by an `HttpClientCodec`.
    Response = 2,
}

/// The kind byte that starts an HTTP message JS writes (channel/http_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpOut {
    /// A response head (and body).
    Response = 1,
    /// A body chunk.
    Content = 2,
    /// A frozen response, by its id (`httpFreeze`).
    Frozen = 3,
    /// A request head (and body), written through an `HttpClientCodec`.
    Request = 4,
}

/// Bits of a channel's state as `NativeChannels::state` reports it.
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelStateFlag {
    /// The channel is open.
    Open = 1,
    /// The channel is active (connected or bound).
    Active = 2,
    /// The channel is writable (its outbound buffer is below the high water mark).
    Writable = 4,
    /// The channel is registered with its loop.
    Registered = 8,
    /// The channel reads by itself (auto-read).
    AutoRead = 16,
}

/// Bits of `takes` (`addJs`, `replace`): which directions a JS handler has methods for; its
/// native stand-in passes the other direction on natively (channel/adapter.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerTakes {
    /// The handler has inbound methods.
    Inbound = 1,
    /// The handler has outbound methods.
    Outbound = 2,
    /// The handler has `channelReadComplete`. While no JS handler of a channel has it and no
    /// native handler sits behind a JS one, the stand-ins pass the event on natively instead
    /// of making a record of it (channel/handlers.rs decides per pipeline change).
    ReadComplete = 4,
    /// The handler sets `autoRelease`: the reads its stand-in hands JS as Buffers of their own
    /// are detached when the delivery's call returns (channel/delivery.rs), their memory
    /// returned at once instead of at V8's next collection.
    AutoRelease = 8,
}

/// Where `addJs`/`addNative` put a handler in the pipeline (`pos`).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerPosition {
    /// First (Netty's `addFirst`).
    First = 0,
    /// Last (`addLast`).
    Last = 1,
    /// Before the handler named `base` (`addBefore`).
    Before = 2,
    /// After the handler named `base` (`addAfter`).
    After = 3,
}

/// Bits of the flags byte of a delivered HTTP request (channel/http_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpRequestFlag {
    /// HTTP/1.1 (else 1.0).
    Http11 = 1,
    /// The connection stays open after the response.
    KeepAlive = 2,
    /// The body comes as content pieces, not aggregated.
    Streaming = 4,
    /// The request sent `Expect: 100-continue`.
    ExpectContinue = 8,
    /// The request asks to leave HTTP (`Connection: upgrade` with `Upgrade`, or `CONNECT`).
    Upgrade = 16,
}

/// Slots of the array `NativeChannels::writability` returns.
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritabilitySlot {
    /// Pending outbound bytes (without the ops JS buffered).
    Pending = 0,
    /// 1 writable, 0 not.
    Writable = 1,
    /// The high water mark.
    High = 2,
    /// The low water mark.
    Low = 3,
    /// 1: the bytes JS queued crossed the high mark now (JS fires the event).
    Crossed = 4,
    /// The array's length.
    Length = 5,
}

/// Slots of the array `NativeChannels::metrics` returns.
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsSlot {
    /// Loop iterations the hub counted.
    Iterations = 0,
    /// Deliveries (calls into JS with records).
    Deliveries = 1,
    /// Records delivered.
    Records = 2,
    /// Calls from JS into the binding.
    JsToNative = 3,
    /// Ops JS sent.
    Ops = 4,
    /// Bytes delivered to JS.
    BytesToJs = 5,
    /// Bytes JS wrote.
    BytesFromJs = 6,
    /// Live channels of the hub.
    Channels = 7,
    /// Bytes JS wrote that were Buffers it had been delivered (an echo, a proxy): sent without
    /// a copy and without keeping the JS Buffer alive (channel/big.rs).
    BytesFromReads = 8,
    /// Bytes of reads delivered to `autoRelease` handlers whose Buffers were detached when the
    /// handler returned (channel/delivery.rs).
    BytesReleased = 9,
    /// The array's length.
    Length = 10,
}

/// The flags byte of an HTTP content piece, either way (channel/http_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpContentFlag {
    /// The message's last piece.
    Last = 1,
    /// Trailer fields follow the data (a last piece of a chunked body).
    Trailers = 2,
}

/// The flags byte of an HTTP response JS writes (channel/http_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpResponseFlag {
    /// The body follows as content chunks.
    Streaming = 1,
    /// The body is a file region, whose layout (file_wire.rs) follows the flags byte.
    File = 2,
}

/// The flags byte of an HTTP request JS writes through an `HttpClientCodec`
/// (channel/http_client_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpClientRequestFlag {
    /// The body follows as content chunks.
    Streaming = 1,
    /// HTTP/1.0 (else 1.1).
    Http10 = 2,
    /// The body is a file region, whose layout (file_wire.rs) follows the flags byte.
    File = 4,
}

/// The flags byte of an HTTP response an `HttpClientCodec` read
/// (channel/http_client_wire.rs).
#[napi]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpClientResponseFlag {
    /// HTTP/1.1 (else 1.0).
    Http11 = 1,
    /// The connection can carry further requests after this response.
    KeepAlive = 2,
    /// The body comes as content pieces, not aggregated.
    Streaming = 4,
    /// The response switched protocols (101, or a 2xx to `CONNECT`).
    Upgraded = 8,
}

/// How JS answers an `SslHandler`'s question about a server name (`tlsAnswerClientHello`,
/// crates/tls `ServerNameChoice`).
#[napi]
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
#[napi]
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
