//! The messages and events the ops carry: a write's or inbound read's message made from its
//! op (bytes in the op arena or a big chunk, a protocol message in its JS layout, a JS value's
//! token), a JS error's transport error, and an inbound event fired from where JS left it.
//! Split from [`crate::ops`], which applies the ops in order.

use bytes::Bytes;
use netloop_transport::{Message, TransportError};

use crate::big::BigChunks;
use crate::hub::{From, Hub};
use crate::protocol::WireKind;
use crate::token::{JsError, JsValue};

/// A record's offset or length field (a negative one counts as 0), through `i64` (one
/// instruction on x86; the saturating conversion takes a dozen).
pub(crate) fn whole(v: f64) -> usize {
    (v as i64).max(0) as usize
}

impl Hub {
    pub(crate) fn js_error(&self, token: f64, strings: &[String], at: f64) -> TransportError {
        let i = at as usize;
        let code = strings.get(i).cloned().unwrap_or_else(|| "ERR_JS".into());
        let message = strings.get(i + 1).cloned().unwrap_or_default();
        TransportError::foreign(
            std::borrow::Cow::Owned(code.clone()),
            JsError::new(self.id, token, code, message),
        )
    }

    /// A protocol message or file region in its JS layout: in the op arena, or a big chunk
    /// (`b` < 0); the error code for a write that fails on it, and why.
    pub(crate) fn framed<C: crate::big::Chunk>(
        &self,
        kind: WireKind,
        a: f64,
        b: f64,
        big: &mut BigChunks<C>,
    ) -> Result<Message, (&'static str, String)> {
        let data = if b < 0.0 {
            Bytes::copy_from_slice(big.view(a as usize))
        } else {
            self.shared.arena_bytes(a as usize, b as usize)
        };
        match kind {
            WireKind::WriteResp => crate::resp_wire::to_wire(&data)
                .map(Message::Bytes)
                .map_err(|e| ("ERR_RESP_REPLY", e)),
            WireKind::WriteFile => crate::file_wire::from_js(&data)
                .map(Message::File)
                .map_err(|e| ("ERR_FILE_REGION", e)),
            WireKind::WriteWs => crate::ws_wire::from_js(&data)
                .map(Message::user)
                .map_err(|e| ("ERR_WS_FRAME", e)),
            WireKind::ReadHttp => {
                crate::http_wire::inbound_from_js(&data, big).map_err(|e| ("ERR_HTTP_REQUEST", e))
            }
            _ => crate::http_wire::from_js(&data, big).map_err(|e| ("ERR_HTTP_RESPONSE", e)),
        }
    }

    pub(crate) fn message<C: crate::big::Chunk>(
        &self,
        kind: WireKind,
        a: f64,
        b: f64,
        big: &mut BigChunks<C>,
    ) -> Message {
        match kind {
            WireKind::ReadBytes | WireKind::WriteBytes => {
                let data = self.shared.arena_bytes(whole(a), whole(b));
                let m = &self.metrics.bytes_from_js;
                m.set(m.get() + data.len() as f64);
                Message::Bytes(data)
            }
            WireKind::ReadBig | WireKind::WriteBig => {
                // Each index is used by one op: the Buffer moves into the message.
                let (data, lent) = big.take(a as usize);
                let m = &self.metrics;
                m.bytes_from_js
                    .set(m.bytes_from_js.get() + data.len() as f64);
                if lent {
                    m.bytes_from_reads
                        .set(m.bytes_from_reads.get() + data.len() as f64);
                }
                Message::Bytes(data)
            }
            _ => Message::user(JsValue::new(self.id, a)),
        }
    }

    pub(crate) fn fire_inbound<C: crate::big::Chunk>(
        &self,
        from: From,
        kind: WireKind,
        a: f64,
        b: f64,
        big: &mut BigChunks<C>,
        strings: &[String],
    ) {
        macro_rules! fire {
            ($m:ident $(, $arg:expr)*) => {
                match &from {
                    From::Ctx(x) => x.$m($($arg),*),
                    From::Head(p) => p.$m($($arg),*),
                }
            };
        }
        match kind {
            WireKind::Registered => fire!(fire_channel_registered),
            WireKind::Unregistered => fire!(fire_channel_unregistered),
            WireKind::Active => fire!(fire_channel_active),
            WireKind::Inactive => fire!(fire_channel_inactive),
            WireKind::ReadComplete => fire!(fire_channel_read_complete),
            WireKind::WritabilityChanged => fire!(fire_channel_writability_changed),
            WireKind::ReadBytes | WireKind::ReadValue | WireKind::ReadBig => {
                let msg = self.message(kind, a, b, big);
                fire!(fire_channel_read, msg)
            }
            // A WebSocket frame (in WriteWs's layout), or an HTTP request or body piece (in
            // the layout the codec's reads reach JS in), that a JS handler passes on to a
            // native one: the native handler gets the message the codec would have fired, with
            // what JS changed in it.
            WireKind::ReadWs | WireKind::ReadHttp => {
                let layout = if kind == WireKind::ReadWs {
                    WireKind::WriteWs
                } else {
                    kind
                };
                match self.framed(layout, a, b, big) {
                    Ok(msg) => fire!(fire_channel_read, msg),
                    Err((code, e)) => fire!(
                        fire_exception_caught,
                        TransportError::foreign(
                            std::borrow::Cow::Borrowed(code),
                            std::io::Error::other(e)
                        )
                    ),
                }
            }
            WireKind::UserEvent => {
                let ev: Box<dyn std::any::Any> = Box::new(JsValue::new(self.id, a));
                fire!(fire_user_event_triggered, ev)
            }
            WireKind::Exception => {
                let e = self.js_error(a, strings, b);
                fire!(fire_exception_caught, e)
            }
            _ => {}
        }
    }
}
