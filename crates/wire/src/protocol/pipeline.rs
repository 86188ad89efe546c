//! Pipelines and channels as the binding reports and changes them: the native handlers JS can
//! add, where and for which directions, a channel's state bits, and the writability and
//! metrics slots.

#[cfg(feature = "napi")]
use napi_derive::napi;

/// The built-in native handlers JS can add (channel/codecs.rs).
#[cfg_attr(feature = "napi", napi)]
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
    /// message size, close timeout (ms), answer pings (0/1), path prefix (0/1),
    /// permessage-deflate (0/1), its threshold, server and client no context takeover (0/1),
    /// server and client max window bits, pass pings and pongs on (0/1); `delimiters[0]` = the
    /// path, `delimiters[1..]` = the subprotocols spoken.
    WebSocket = 13,
    /// `WebSocketEchoHandler`: no parameters.
    WebSocketEcho = 14,
    /// `WebSocketClientProtocolHandler` (netloop-ws-upgrade): `p` = max frame size, max
    /// message size, close timeout (ms), answer pings (0/1), pass pings and pongs on (0/1),
    /// the number n of subprotocols offered, permessage-deflate offered (0/1), its threshold,
    /// server and client no context takeover (0/1), server and client max window bits (as
    /// the server kind's 5..=10); `delimiters[0]` = the request target,
    /// `delimiters[1]` = the `Host` field (empty: none), `delimiters[2..2+n]` = the
    /// subprotocols, then extra request fields as name, value pairs.
    WebSocketClient = 15,
    /// `WebSocketHandler` alone, server role, for a handshake JS answered (`handleUpgrade`):
    /// `p` = max frame size, max message size, close timeout (ms), answer pings (0/1), pass
    /// pings and pongs on (0/1), permessage-deflate agreed (0/1), its threshold, then what
    /// JS agreed: server and client no context takeover (0/1), server and client window bits.
    WebSocketFrames = 16,
}

/// Bits of a channel's state as `NativeChannels::state` reports it.
#[cfg_attr(feature = "napi", napi)]
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
#[cfg_attr(feature = "napi", napi)]
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
#[cfg_attr(feature = "napi", napi)]
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

/// Slots of the array `NativeChannels::writability` returns.
#[cfg_attr(feature = "napi", napi)]
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
#[cfg_attr(feature = "napi", napi)]
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
