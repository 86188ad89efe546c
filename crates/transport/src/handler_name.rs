//! A handler's name in a pipeline, kept without an allocation of its own when it is short.
//!
//! Every context holds its handler's name. Names given at run time (`"ws"`, `"echo"`, a JS
//! handler's name) used to be a `String` each: one small allocation per handler per
//! connection (32 bytes of malloc for a 2-byte name). A name of up to [`INLINE`] bytes now
//! lives inside the context; a longer one is boxed; the pipeline's ends borrow theirs.
//! Invariant: the inline bytes are always a whole UTF-8 string (they are copied from a `str`).

use std::borrow::Cow;

/// The longest name kept inline (the enum stays 24 bytes, as the `Cow<str>` it replaces).
const INLINE: usize = 22;

pub(crate) enum HandlerName {
    Static(&'static str),
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl HandlerName {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            HandlerName::Static(s) => s,
            // The bytes were copied from a `str` whole (see the invariant): never fails.
            HandlerName::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            HandlerName::Boxed(s) => s,
        }
    }
}

impl From<Cow<'static, str>> for HandlerName {
    fn from(name: Cow<'static, str>) -> Self {
        match name {
            Cow::Borrowed(s) => HandlerName::Static(s),
            Cow::Owned(s) if s.len() <= INLINE => {
                let mut bytes = [0u8; INLINE];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                HandlerName::Inline {
                    len: s.len() as u8,
                    bytes,
                }
            }
            Cow::Owned(s) => HandlerName::Boxed(s.into_boxed_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_back_the_same_whatever_its_length_or_origin() {
        assert_eq!(std::mem::size_of::<HandlerName>(), 24);
        let long = "a-handler-name-longer-than-22-bytes";
        for s in ["", "ws", "échö", "exactly-22-bytes-name!", long] {
            assert_eq!(HandlerName::from(Cow::Owned(s.to_string())).as_str(), s);
        }
        assert_eq!(HandlerName::from(Cow::Borrowed("HEAD")).as_str(), "HEAD");
        assert!(matches!(
            HandlerName::from(Cow::Owned("ws".to_string())),
            HandlerName::Inline { .. }
        ));
        assert!(matches!(
            HandlerName::from(Cow::Owned(long.to_string())),
            HandlerName::Boxed(_)
        ));
    }
}
