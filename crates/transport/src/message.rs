//! What travels through a pipeline: bytes, a file region, or any user value (decoded frames,
//! JS values).
//!
//! Messages live on their channel's loop thread, so user values need not be `Send`.

use std::any::Any;
use std::fmt;

use bytes::{Bytes, BytesMut};

use crate::file_region::FileRegion;

/// A message read from or written to a channel.
pub enum Message {
    /// Raw bytes: what sockets read and write.
    Bytes(Bytes),
    /// A range of a file: sockets send it with `sendfile(2)`, without copying it through
    /// user space (Netty's `FileRegion`).
    File(FileRegion),
    /// Any other value: a decoded frame, a JS value, an application object.
    User(Box<dyn Any>),
}

/// A user event travelling through `userEventTriggered` (idle events, input shutdown, ...).
pub type UserEvent = Box<dyn Any>;

impl Message {
    /// Wraps any value as a user message.
    pub fn user<T: Any>(value: T) -> Self {
        Message::User(Box::new(value))
    }

    /// The bytes, if this is a bytes message.
    pub fn as_bytes(&self) -> Option<&Bytes> {
        match self {
            Message::Bytes(b) => Some(b),
            Message::File(_) | Message::User(_) => None,
        }
    }

    /// The bytes, or the message back if it carries something else.
    pub fn into_bytes(self) -> Result<Bytes, Message> {
        match self {
            Message::Bytes(b) => Ok(b),
            other => Err(other),
        }
    }

    /// A reference to the user value if it is a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        match self {
            Message::User(v) => v.downcast_ref(),
            Message::Bytes(_) | Message::File(_) => None,
        }
    }

    /// The user value if it is a `T`, or the message back.
    pub fn downcast<T: Any>(self) -> Result<T, Message> {
        match self {
            Message::User(v) => v.downcast::<T>().map(|b| *b).map_err(Message::User),
            other => Err(other),
        }
    }

    /// Bytes this message adds to a channel's pending outbound total (Netty's size estimator:
    /// bytes count by length, a file region 0 (it holds no memory), other values a fixed 8).
    pub fn estimated_size(&self) -> usize {
        match self {
            Message::Bytes(b) => b.len(),
            Message::File(_) => 0,
            Message::User(_) => 8,
        }
    }

    /// A short name of the variant, for diagnostics.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Bytes(_) => "bytes",
            Message::File(_) => "file region",
            Message::User(_) => "user value",
        }
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Bytes(b) => write!(f, "Message::Bytes({} bytes)", b.len()),
            Message::File(r) => write!(f, "Message::File({r:?})"),
            Message::User(_) => write!(f, "Message::User(..)"),
        }
    }
}

impl From<FileRegion> for Message {
    fn from(r: FileRegion) -> Self {
        Message::File(r)
    }
}

impl From<Bytes> for Message {
    fn from(b: Bytes) -> Self {
        Message::Bytes(b)
    }
}

impl From<BytesMut> for Message {
    fn from(b: BytesMut) -> Self {
        Message::Bytes(b.freeze())
    }
}

impl From<Vec<u8>> for Message {
    fn from(v: Vec<u8>) -> Self {
        Message::Bytes(Bytes::from(v))
    }
}

impl From<&'static [u8]> for Message {
    fn from(s: &'static [u8]) -> Self {
        Message::Bytes(Bytes::from_static(s))
    }
}

impl From<&'static str> for Message {
    fn from(s: &'static str) -> Self {
        Message::Bytes(Bytes::from_static(s.as_bytes()))
    }
}
