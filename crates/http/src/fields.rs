//! The grammar of header fields, shared by the head parsers (requests in `head.rs`, responses
//! in `response_head.rs`), the chunked decoder and the encoders: tokens, field text, list
//! elements, transfer codings and `Content-Length` digits; and how a head's fields are handed
//! to httparse (slots on the stack, then on the heap) and kept as offsets.
//!
//! Ground rules:
//! - Plain functions of their arguments (no state); a check says what is wrong and leaves the
//!   error (its variant and code) to the caller, whose side (server or client) decides it.

use std::mem::MaybeUninit;

/// Headers parsed on the stack before falling back to a heap array of `max_header_count`.
const STACK_HEADERS: usize = 32;

/// A token character (RFC 9110 §5.6.2).
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A byte allowed in a field value the codec writes: HTAB, SP, VCHAR or obs-text.
pub(crate) fn is_field_text(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

/// Splits a list-valued field on commas, trimming whitespace and skipping empty elements.
pub(crate) fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|e| !e.is_empty())
}

/// The codings a `Transfer-Encoding` value lists, in order, once the whole value is checked:
/// an empty list element (legal, RFC 9110 §5.6.1, but refused by llhttp: parsers that
/// disagree on framing are how messages get smuggled) or a coding that is not a token is
/// `Err` with the reason (llhttp's code for both: `HPE_INVALID_TRANSFER_ENCODING`).
pub(crate) fn transfer_codings(value: &[u8]) -> Result<impl Iterator<Item = &[u8]>, &'static str> {
    if value
        .split(|&b| b == b',')
        .any(|e| e.trim_ascii().is_empty())
    {
        return Err("empty element in Transfer-Encoding");
    }
    if list(value).any(|coding| !coding.iter().all(|&b| is_tchar(b))) {
        return Err("invalid transfer coding");
    }
    Ok(list(value))
}

/// A `Content-Length` value (or one element of a list of them): 1 to 19 digits, nothing else;
/// `None` when it is not one.
pub(crate) fn content_length(value: &[u8]) -> Option<u64> {
    if value.is_empty() || value.len() > 19 || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    value.iter().try_fold(0u64, |n, &d| {
        n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Byte offset of `part` inside `base` (`part` is a subslice of `base`).
pub(crate) fn offset(base: &[u8], part: &[u8]) -> u32 {
    (part.as_ptr() as usize - base.as_ptr() as usize) as u32
}

/// Runs `parse` with slots for `max_header_count` header fields: on the stack (up to 32),
/// then, when the head holds more and the limit allows them, again with a heap array.
pub(crate) fn parse_with_slots<'b, T>(
    max_header_count: usize,
    mut parse: impl FnMut(&mut [MaybeUninit<httparse::Header<'b>>]) -> Result<T, httparse::Error>,
) -> Result<T, httparse::Error> {
    let mut stack = [MaybeUninit::<httparse::Header<'b>>::uninit(); STACK_HEADERS];
    match parse(&mut stack[..STACK_HEADERS.min(max_header_count)]) {
        Err(httparse::Error::TooManyHeaders) if max_header_count > STACK_HEADERS => {
            let mut heap = vec![MaybeUninit::<httparse::Header<'b>>::uninit(); max_header_count];
            parse(&mut heap)
        }
        other => other,
    }
}

/// Checks a field the application set: its name must be a token, its value field text. On
/// failure: node's code and what was wrong (the caller's error says whose write failed).
pub(crate) fn field_fault(name: &[u8], value: &[u8]) -> Option<(&'static str, String)> {
    if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
        return Some((
            "ERR_INVALID_HTTP_TOKEN",
            format!("header name {:?}", String::from_utf8_lossy(name)),
        ));
    }
    if !value.iter().all(|&b| is_field_text(b)) {
        return Some((
            "ERR_INVALID_CHAR",
            format!("value of header {:?}", String::from_utf8_lossy(name)),
        ));
    }
    None
}
