//! The built-in native handlers, made from the kind and Netty-named parameters JS sends.
//! Parameters are checked in TS first; the codec constructors check them again and their
//! errors come back as `ERR_INVALID_ARG_VALUE`.

use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use netloop_codec::{
    ByteOrder, ByteToMessageDecoder, DelimiterBasedFrameDecoder, FixedLengthFrameDecoder,
    IdleConfig, IdleStateHandler, LengthFieldBasedFrameDecoder, LengthFieldConfig,
    LengthFieldPrepender, LineBasedFrameDecoder,
};
use netloop_transport::ChannelHandler;

use crate::error::{invalid_arg, WireResult};
use crate::protocol::NativeHandlerKind;

// The kinds JS names handlers by, from the boundary protocol (parameters documented there).
pub const LINE: u32 = NativeHandlerKind::Line as u32;
pub const DELIMITER: u32 = NativeHandlerKind::Delimiter as u32;
pub const FIXED_LENGTH: u32 = NativeHandlerKind::FixedLength as u32;
pub const LENGTH_FIELD: u32 = NativeHandlerKind::LengthField as u32;
pub const PREPENDER: u32 = NativeHandlerKind::Prepender as u32;
pub const IDLE: u32 = NativeHandlerKind::Idle as u32;
pub const TLS: u32 = NativeHandlerKind::Tls as u32;
pub const RESP: u32 = NativeHandlerKind::Resp as u32;
pub const HTTP: u32 = NativeHandlerKind::Http as u32;
pub const FLUSH_CONSOLIDATION: u32 = NativeHandlerKind::FlushConsolidation as u32;
pub const HTTP_CLIENT: u32 = NativeHandlerKind::HttpClient as u32;
pub const HAPROXY: u32 = NativeHandlerKind::HAProxy as u32;
pub const WEBSOCKET: u32 = NativeHandlerKind::WebSocket as u32;
pub const WEBSOCKET_ECHO: u32 = NativeHandlerKind::WebSocketEcho as u32;
pub const WEBSOCKET_CLIENT: u32 = NativeHandlerKind::WebSocketClient as u32;
pub const WEBSOCKET_FRAMES: u32 = NativeHandlerKind::WebSocketFrames as u32;

fn param(p: &[f64], i: usize) -> f64 {
    p.get(i).copied().unwrap_or(0.0)
}

fn size(p: &[f64], i: usize) -> usize {
    let v = param(p, i);
    if v.is_finite() && v >= 0.0 {
        v as usize
    } else {
        0
    }
}

fn flag(p: &[f64], i: usize) -> bool {
    param(p, i) != 0.0
}

fn order(p: &[f64], i: usize) -> ByteOrder {
    if flag(p, i) {
        ByteOrder::LittleEndian
    } else {
        ByteOrder::BigEndian
    }
}

fn millis(p: &[f64], i: usize) -> Option<Duration> {
    let v = param(p, i);
    (v.is_finite() && v > 0.0).then(|| Duration::from_secs_f64(v / 1000.0))
}

/// A native handler of `kind` with parameters `p` (and `delimiters` for the delimiter decoder).
pub fn make(kind: u32, p: &[f64], delimiters: Vec<Bytes>) -> WireResult<Rc<dyn ChannelHandler>> {
    let bad = |e: netloop_codec::ConfigError| invalid_arg(e.to_string());
    Ok(match kind {
        LINE => Rc::new(ByteToMessageDecoder::new(
            LineBasedFrameDecoder::with_options(size(p, 0), flag(p, 1), flag(p, 2)),
        )),
        DELIMITER => Rc::new(ByteToMessageDecoder::new(
            DelimiterBasedFrameDecoder::with_options(
                size(p, 0),
                flag(p, 1),
                flag(p, 2),
                delimiters,
            )
            .map_err(bad)?,
        )),
        FIXED_LENGTH => Rc::new(ByteToMessageDecoder::new(
            FixedLengthFrameDecoder::new(size(p, 0)).map_err(bad)?,
        )),
        LENGTH_FIELD => {
            let cfg = LengthFieldConfig {
                max_frame_length: size(p, 0),
                length_field_offset: size(p, 1),
                length_field_length: size(p, 2),
                length_adjustment: param(p, 3) as i64,
                initial_bytes_to_strip: size(p, 4),
                fail_fast: flag(p, 5),
                byte_order: order(p, 6),
            };
            Rc::new(ByteToMessageDecoder::new(
                LengthFieldBasedFrameDecoder::new(cfg).map_err(bad)?,
            ))
        }
        PREPENDER => Rc::new(
            LengthFieldPrepender::with_options(
                size(p, 0),
                flag(p, 1),
                param(p, 2) as i64,
                order(p, 3),
            )
            .map_err(bad)?,
        ),
        IDLE => Rc::new(
            IdleStateHandler::new(IdleConfig {
                reader: millis(p, 0),
                writer: millis(p, 1),
                all: millis(p, 2),
            })
            .observe_output(flag(p, 3)),
        ),
        TLS => {
            let id = param(p, 0) as u64;
            let ctx = crate::registry::tls_context(id)
                .ok_or_else(|| invalid_arg(format!("no TLS context with id {id}")))?;
            let name = delimiters
                .first()
                .map(|b| String::from_utf8_lossy(b).into_owned());
            let handler = ctx
                .new_handler(name.as_deref())
                .map_err(|e| crate::error::WireError::new(e.code(), e.to_string()))?;
            Rc::new(handler)
        }
        RESP => {
            let cfg = netloop_resp::RespConfig {
                max_bulk_length: size(p, 0),
                max_array_length: size(p, 1),
                max_nesting_depth: size(p, 2),
                max_inline_length: size(p, 3),
                inline_commands: flag(p, 4),
                resp3: flag(p, 5),
            };
            let decoder = netloop_resp::RespDecoderHandler::new(cfg)
                .map_err(|e| invalid_arg(e.to_string()))?;
            // 2: by the channel (on for a server's channels), the decoder's default.
            let decoder = if param(p, 6) == 2.0 {
                decoder
            } else {
                decoder.pause_while_unwritable(flag(p, 6))
            };
            Rc::new(
                decoder
                    // JS gets commands in the tag format either way (resp_wire.rs), a
                    // read's commands in one record (adapter.rs, held.rs).
                    .command_runs(true),
            )
        }
        HTTP => {
            let cfg = netloop_http::HttpServerConfig {
                max_head_size: size(p, 0),
                max_uri_length: size(p, 1),
                max_header_count: size(p, 2),
                max_body_size: size(p, 3) as u64,
                aggregate_limit: size(p, 4),
                require_host: flag(p, 5),
                // milliseconds; 0: no request-head timeout
                header_timeout: match size(p, 6) {
                    0 => None,
                    ms => Some(std::time::Duration::from_millis(ms as u64)),
                },
                // 0: no limit
                max_pipelined_requests: match size(p, 7) {
                    0 => None,
                    n => Some(n),
                },
                // milliseconds; 0: no whole-request timeout
                request_timeout: match size(p, 8) {
                    0 => None,
                    ms => Some(std::time::Duration::from_millis(ms as u64)),
                },
                // milliseconds; 0: close at once
                linger_timeout: match size(p, 9) {
                    0 => None,
                    ms => Some(std::time::Duration::from_millis(ms as u64)),
                },
                ..Default::default()
            };
            Rc::new(
                netloop_http::HttpServerCodec::new(cfg).map_err(|e| invalid_arg(e.to_string()))?,
            )
        }
        HTTP_CLIENT => {
            let cfg = netloop_http::HttpClientConfig {
                max_head_size: size(p, 0),
                max_header_count: size(p, 1),
                // Beyond 2^53 JS passes no exact integer: no limit.
                max_body_size: match param(p, 2) {
                    v if (0.0..9_007_199_254_740_992.0).contains(&v) => v as u64,
                    _ => u64::MAX,
                },
                aggregate_limit: size(p, 3),
                host: delimiters.into_iter().next(),
            };
            Rc::new(
                netloop_http::HttpClientCodec::new(cfg).map_err(|e| invalid_arg(e.to_string()))?,
            )
        }
        FLUSH_CONSOLIDATION => Rc::new(
            netloop_codec::FlushConsolidationHandler::new(size(p, 0), flag(p, 1)).map_err(bad)?,
        ),
        // 1: optional (streams without a header pass through)
        HAPROXY if flag(p, 0) => Rc::new(netloop_codec::HAProxyMessageDecoder::optional()),
        HAPROXY => Rc::new(netloop_codec::HAProxyMessageDecoder::new()),
        WEBSOCKET => Rc::new(websocket(p, &delimiters)?),
        WEBSOCKET_ECHO => Rc::new(netloop_ws::WebSocketEchoHandler::new()),
        WEBSOCKET_CLIENT => Rc::new(websocket_client(p, &delimiters)?),
        WEBSOCKET_FRAMES => {
            // 5..=10: permessage-deflate agreed (0/1), threshold, then the agreement: server
            // and client no context takeover (0/1), server and client window bits.
            let agreed = flag(p, 5).then(|| netloop_ws::PerMessageDeflate {
                server_no_context_takeover: flag(p, 7),
                client_no_context_takeover: flag(p, 8),
                server_max_window_bits: size(p, 9).clamp(8, 15) as u8,
                client_max_window_bits: size(p, 10).clamp(8, 15) as u8,
            });
            let config = netloop_ws::WsConfig {
                max_frame_size: size(p, 0),
                max_message_size: size(p, 1),
                close_timeout: millis(p, 2).unwrap_or(netloop_ws::DEFAULT_CLOSE_TIMEOUT),
                auto_pong: flag(p, 3),
                forward_control_frames: flag(p, 4),
                permessage_deflate: agreed.map(|_| netloop_ws::DeflateConfig {
                    threshold: size(p, 6),
                    ..netloop_ws::DeflateConfig::default()
                }),
                ..netloop_ws::WsConfig::default()
            };
            Rc::new(
                netloop_ws::WebSocketHandler::with_deflate(config, agreed)
                    .map_err(|e| invalid_arg(e.to_string()))?,
            )
        }
        other => return Err(invalid_arg(format!("unknown native handler kind {other}"))),
    })
}

/// `WebSocketServerProtocolHandler` from its parameters (see `NativeHandlerKind::WebSocket`).
fn websocket(
    p: &[f64],
    strings: &[Bytes],
) -> WireResult<netloop_ws_upgrade::WebSocketServerProtocolHandler> {
    let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
    let permessage_deflate = deflate_config(p, 5);
    let config = netloop_ws::WsConfig {
        max_frame_size: size(p, 0),
        max_message_size: size(p, 1),
        close_timeout: millis(p, 2).unwrap_or(netloop_ws::DEFAULT_CLOSE_TIMEOUT),
        auto_pong: flag(p, 3),
        permessage_deflate,
        forward_control_frames: flag(p, 11),
        ..netloop_ws::WsConfig::default()
    };
    config.validate().map_err(|e| invalid_arg(e.to_string()))?;
    let options = netloop_ws::handshake::HandshakeOptions {
        subprotocols: strings.iter().skip(1).map(text).collect(),
        origin_check: None,
        ..netloop_ws::handshake::HandshakeOptions::default()
    };
    let path = strings.first().map_or_else(|| "/".to_string(), text);
    Ok(
        netloop_ws_upgrade::WebSocketServerProtocolHandler::new(path)
            .path_prefix(flag(p, 4))
            .handshake_options(options)
            .config(config),
    )
}

/// permessage-deflate's six parameters from `p[at..]`: on (0/1), threshold, server and
/// client no context takeover (0/1), server and client max window bits; `None` when off.
fn deflate_config(p: &[f64], at: usize) -> Option<netloop_ws::DeflateConfig> {
    flag(p, at).then(|| netloop_ws::DeflateConfig {
        threshold: size(p, at + 1),
        server_no_context_takeover: flag(p, at + 2),
        client_no_context_takeover: flag(p, at + 3),
        server_max_window_bits: size(p, at + 4).min(255) as u8,
        client_max_window_bits: size(p, at + 5).min(255) as u8,
        ..netloop_ws::DeflateConfig::default()
    })
}

/// `WebSocketClientProtocolHandler` from its parameters (see `NativeHandlerKind::WebSocketClient`).
fn websocket_client(
    p: &[f64],
    strings: &[Bytes],
) -> WireResult<netloop_ws_upgrade::WebSocketClientProtocolHandler> {
    let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
    let config = netloop_ws::WsConfig {
        role: netloop_ws::Role::Client,
        max_frame_size: size(p, 0),
        max_message_size: size(p, 1),
        close_timeout: millis(p, 2).unwrap_or(netloop_ws::DEFAULT_CLOSE_TIMEOUT),
        auto_pong: flag(p, 3),
        forward_control_frames: flag(p, 4),
        pause_while_unwritable: false,
        // 6..=11: permessage-deflate offered (0/1) and its settings.
        permessage_deflate: deflate_config(p, 6),
        ..netloop_ws::WsConfig::default()
    };
    config.validate().map_err(|e| invalid_arg(e.to_string()))?;
    let target = strings.first().map_or_else(|| "/".to_string(), text);
    let count = size(p, 5).min(strings.len().saturating_sub(2));
    let protocols = strings.iter().skip(2).take(count).map(text).collect();
    let mut handler = netloop_ws_upgrade::WebSocketClientProtocolHandler::new(target)
        .subprotocols(protocols)
        .config(config);
    if let Some(host) = strings.get(1).filter(|h| !h.is_empty()) {
        handler = handler.host(text(host));
    }
    for pair in strings[(2 + count).min(strings.len())..].chunks_exact(2) {
        handler = handler.header(text(&pair[0]), text(&pair[1]));
    }
    Ok(handler)
}
