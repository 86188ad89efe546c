//! [`WebSocketFrame`]: what the handler fires inbound and encodes outbound, and
//! [`MessageAssembler`]: the per-connection rules across frames (fragmentation and
//! continuation, control frames between fragments, UTF-8 across fragments,
//! `max_message_size`), yielding whole messages or, in streaming mode, each fragment.
//!
//! Ground rules: single-threaded value of one connection; an error is final.

use bytes::{Bytes, BytesMut};

use crate::close::CloseFrame;
use crate::decoder::PartialFrame;
use crate::error::WsError;
use crate::frame::{apply_mask, Frame, Opcode};
use crate::utf8::Utf8Validator;

/// One piece of a message in streaming mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment {
    /// The message is text (its bytes together are UTF-8; one fragment may cut a character).
    pub text: bool,
    /// The fragment's bytes.
    pub data: Bytes,
    /// The first fragment of its message.
    pub first: bool,
    /// The last fragment of its message.
    pub last: bool,
}

/// A WebSocket message or control frame, as the pipeline carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebSocketFrame {
    /// A whole text message (UTF-8, validated inbound).
    Text(Bytes),
    /// A whole binary message.
    Binary(Bytes),
    /// A fragment (streaming mode inbound; outbound, to send a message in pieces).
    Fragment(Fragment),
    /// A ping.
    Ping(Bytes),
    /// A pong.
    Pong(Bytes),
    /// A close frame.
    Close(CloseFrame),
}

impl WebSocketFrame {
    /// A text message.
    pub fn text(text: impl Into<String>) -> Self {
        WebSocketFrame::Text(Bytes::from(text.into()))
    }

    /// A binary message.
    pub fn binary(data: impl Into<Bytes>) -> Self {
        WebSocketFrame::Binary(data.into())
    }
}

impl From<WebSocketFrame> for netloop_transport::Message {
    /// A frame travels through a pipeline as a user message.
    fn from(frame: WebSocketFrame) -> Self {
        netloop_transport::Message::user(frame)
    }
}

/// The message being received.
#[derive(Debug)]
struct InProgress {
    text: bool,
    size: u64,
    parts: Vec<Bytes>,
}

/// The UTF-8 check of a text frame still arriving: the validator past its first `checked`
/// payload bytes.
#[derive(Debug)]
struct PartialText {
    utf8: Utf8Validator,
    checked: usize,
}

/// Assembles frames into messages for one connection.
#[derive(Debug)]
pub struct MessageAssembler {
    aggregate: bool,
    max_message_size: usize,
    /// Boxed: only a fragmented message has one, and an idle connection keeps a pointer, not
    /// the state's 40 bytes inline.
    current: Option<Box<InProgress>>,
    utf8: Utf8Validator,
    /// Boxed too: only a text frame still arriving has one (24 bytes inline otherwise).
    partial: Option<Box<PartialText>>,
}

impl MessageAssembler {
    /// An assembler yielding whole messages (`aggregate`) or fragments.
    pub fn new(aggregate: bool, max_message_size: usize) -> Self {
        MessageAssembler {
            aggregate,
            max_message_size,
            current: None,
            utf8: Utf8Validator::default(),
            partial: None,
        }
    }

    /// Checks the text received so far of a frame that has not fully arrived, so that invalid
    /// UTF-8 fails the connection when its byte arrives rather than when its frame ends (RFC
    /// 6455 §8.1; Autobahn 6.4.3–4). Only new bytes are checked on each call; the frame's
    /// payload is checked again as a whole when it completes ([`push`](Self::push)).
    /// `compressed`: the frame belongs to a compressed message (not text until inflated):
    /// nothing to check. Frames the assembler will refuse are left to it.
    ///
    /// # Errors
    /// [`WsError::InvalidUtf8`] as soon as the received bytes cannot continue UTF-8.
    pub fn check_partial(
        &mut self,
        frame: &PartialFrame<'_>,
        compressed: bool,
    ) -> Result<(), WsError> {
        let first = match (frame.opcode, &self.current) {
            (Opcode::Text, None) => true,
            (Opcode::Continuation, Some(current)) if current.text => false,
            _ => return Ok(()),
        };
        if compressed {
            return Ok(());
        }
        let carried = &self.utf8;
        let state = self.partial.get_or_insert_with(|| {
            Box::new(PartialText {
                utf8: if first {
                    Utf8Validator::default()
                } else {
                    carried.clone()
                },
                checked: 0,
            })
        });
        let Some(new) = frame
            .received
            .get(state.checked..)
            .filter(|n| !n.is_empty())
        else {
            return Ok(());
        };
        let mut bytes = new.to_vec();
        if let Some(key) = frame.mask {
            apply_mask(&mut bytes, key, state.checked);
        }
        state.checked = frame.received.len();
        state.utf8.feed(&bytes).map_err(|_| WsError::InvalidUtf8)
    }

    /// Whether a fragmented message is in progress.
    pub fn in_message(&self) -> bool {
        self.current.is_some()
    }

    /// Takes the next frame; yields what it completes.
    ///
    /// # Errors
    /// [`WsError`] for a continuation without a message, a new message inside one, text that
    /// is not UTF-8, a message over the limit, or a bad close payload.
    pub fn push(&mut self, frame: Frame) -> Result<Option<WebSocketFrame>, WsError> {
        self.partial = None;
        let Frame {
            fin,
            opcode,
            payload,
            ..
        } = frame;
        let text = match opcode {
            Opcode::Ping => return Ok(Some(WebSocketFrame::Ping(payload))),
            Opcode::Pong => return Ok(Some(WebSocketFrame::Pong(payload))),
            Opcode::Close => {
                return CloseFrame::parse(&payload).map(|c| Some(WebSocketFrame::Close(c)))
            }
            Opcode::Text | Opcode::Binary if self.current.is_some() => {
                return Err(WsError::ExpectedContinuation)
            }
            Opcode::Continuation => match &self.current {
                None => return Err(WsError::UnexpectedContinuation),
                Some(current) => current.text,
            },
            Opcode::Text => true,
            Opcode::Binary => false,
        };
        let first = opcode != Opcode::Continuation;
        let size = self.current.as_ref().map_or(0, |c| c.size) + payload.len() as u64;
        if size > self.max_message_size as u64 {
            return Err(WsError::MessageTooLarge {
                length: size,
                max: self.max_message_size,
            });
        }
        if text {
            if first {
                self.utf8.reset();
            }
            self.utf8.feed(&payload).map_err(|_| WsError::InvalidUtf8)?;
            if fin && !self.utf8.is_complete() {
                return Err(WsError::InvalidUtf8);
            }
        }
        if !self.aggregate {
            match (&mut self.current, fin) {
                (_, true) => self.current = None,
                // The box of the message's first fragment serves its others too.
                (Some(c), false) => {
                    c.text = text;
                    c.size = size;
                }
                (None, false) => {
                    self.current = Some(Box::new(InProgress {
                        text,
                        size,
                        parts: Vec::new(),
                    }))
                }
            }
            return Ok(Some(WebSocketFrame::Fragment(Fragment {
                text,
                data: payload,
                first,
                last: fin,
            })));
        }
        if first && fin {
            return Ok(Some(whole(text, payload)));
        }
        let current = self.current.get_or_insert_with(|| {
            Box::new(InProgress {
                text,
                size: 0,
                parts: Vec::new(),
            })
        });
        current.size = size;
        current.parts.push(payload);
        if !fin {
            return Ok(None);
        }
        let done = self.current.take().expect("in progress");
        let mut joined = BytesMut::with_capacity(done.size as usize);
        for part in &done.parts {
            joined.extend_from_slice(part);
        }
        Ok(Some(whole(done.text, joined.freeze())))
    }

    /// Drops a message in progress (end of input).
    pub fn reset(&mut self) {
        self.current = None;
        self.utf8.reset();
        self.partial = None;
    }
}

fn whole(text: bool, data: Bytes) -> WebSocketFrame {
    if text {
        WebSocketFrame::Text(data)
    } else {
        WebSocketFrame::Binary(data)
    }
}
