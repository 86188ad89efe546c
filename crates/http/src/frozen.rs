//! [`FrozenResponse`]: a response checked and encoded once, written many times (the same
//! status, fields and body every time, as a hello or a static answer).
//!
//! Freezing checks the status, reason and fields as a write of the response would, and
//! encodes the status line and the application's fields once. A write then only adds the
//! fields the codec owns (`Date`, `Content-Length`, `Connection`) as the request it answers
//! needs; the whole encoded response is kept per answer shape and per `Date` value, so in the
//! common case (a keep-alive request, the same second) a write is a reference to bytes encoded
//! before, not an encoding.
//!
//! Ground rules: a frozen response belongs to the thread that made it (`Rc`, not `Send`): the
//! codec of a connection writes it on its loop's thread. Its cache holds one entry per answer
//! shape (HEAD or not, HTTP/1.0 or 1.1, keep-alive or not), refreshed when the `Date` changes.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::{BufMut, Bytes, BytesMut};

use crate::date::DateValue;
use crate::encoder::{self, Answering, Encoded, Owned, Plan};
use crate::error::HttpError;
use crate::message::{HttpResponse, Version};

/// A whole response prepared by [`HttpResponse::freeze`]; cheap to clone (a reference).
/// Written like an [`HttpResponse`], answering `request_id` (`None`: the oldest unanswered).
#[derive(Clone)]
pub struct FrozenResponse {
    inner: Rc<Frozen>,
    /// The request this answers; `None`: the oldest request without a response yet.
    pub request_id: Option<u64>,
}

struct Cached {
    date: Option<DateValue>,
    head: Bytes,
}

struct Frozen {
    status: u16,
    owned: Owned,
    /// The status line and every field of the application.
    head_all: Bytes,
    /// The same without the application's `Connection` fields (when the codec closes).
    head_no_connection: Bytes,
    body: Bytes,
    /// Encoded heads (with the body when it is copied behind), by [`shape`].
    cache: RefCell<[Option<Cached>; 8]>,
}

impl std::fmt::Debug for FrozenResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrozenResponse")
            .field("status", &self.inner.status)
            .field("request_id", &self.request_id)
            .finish_non_exhaustive()
    }
}

/// The cache slot of an answer shape.
fn shape(req: &Answering<'_>) -> usize {
    usize::from(req.head)
        | usize::from(req.version == Version::Http11) << 1
        | usize::from(req.keep_alive) << 2
}

impl HttpResponse {
    /// Checks this response and encodes what does not depend on the request once (Netty:
    /// a `FullHttpResponse` retained and written again; here the encoding is kept too).
    ///
    /// # Errors
    /// What writing the response would fail with (`ERR_HTTP_INVALID_STATUS_CODE`,
    /// `ERR_INVALID_HTTP_TOKEN`, `ERR_INVALID_CHAR`, `ERR_HTTP_INVALID_HEADER_VALUE`), or
    /// `ERR_HTTP_FROZEN_STREAMING` for a streamed response (its body is not in it), or
    /// `ERR_HTTP_FROZEN_FILE` for a response with a file region (sent once).
    pub fn freeze(self) -> Result<FrozenResponse, HttpError> {
        if self.file.is_some() {
            return Err(HttpError::invalid_response(
                "ERR_HTTP_FROZEN_FILE",
                "a response with a file region cannot be frozen (a region is sent once)",
            ));
        }
        if self.streaming {
            return Err(HttpError::invalid_response(
                "ERR_HTTP_FROZEN_STREAMING",
                "a streamed response cannot be frozen",
            ));
        }
        let owned = encoder::check_head(&self)?;
        let fields: usize = self
            .headers
            .iter()
            .map(|(n, v)| n.len() + v.len() + 4)
            .sum();
        let mut all = BytesMut::with_capacity(64 + fields);
        encoder::put_status_line(&mut all, self.status, self.reason.as_deref());
        let mut no_connection = all.clone();
        for (name, value) in &self.headers {
            encoder::put_field(&mut all, name, value);
            if !name.eq_ignore_ascii_case(b"connection") {
                encoder::put_field(&mut no_connection, name, value);
            }
        }
        Ok(FrozenResponse {
            inner: Rc::new(Frozen {
                status: self.status,
                owned,
                head_all: all.freeze(),
                head_no_connection: no_connection.freeze(),
                body: self.body,
                cache: RefCell::new(Default::default()),
            }),
            request_id: self.request_id,
        })
    }
}

impl FrozenResponse {
    /// The same response answering request `id`.
    pub fn for_request(&self, id: u64) -> FrozenResponse {
        FrozenResponse {
            inner: self.inner.clone(),
            request_id: Some(id),
        }
    }

    /// The status code.
    pub fn status(&self) -> u16 {
        self.inner.status
    }

    /// The body.
    pub fn body(&self) -> &Bytes {
        &self.inner.body
    }

    /// What can only be checked against the request: a `Content-Length` the application set
    /// must match the body unless the request is HEAD.
    pub(crate) fn check(&self, head: bool) -> Result<(), HttpError> {
        let f = &self.inner;
        encoder::check_length(&f.owned, f.status, false, f.body.len(), head)
    }

    /// Encodes the response answering `req` (from the cache when it was encoded before for
    /// the same shape and `Date`).
    pub(crate) fn encode(&self, req: Answering<'_>) -> Encoded {
        let f = &*self.inner;
        let plan = Plan::new(f.status, &f.owned, false, f.body.len(), &req);
        let slot = shape(&req);
        // A response that switches protocols is encoded afresh (written once per connection).
        let cacheable = !plan.switching;
        let cached = if !cacheable {
            None
        } else {
            let cache = f.cache.borrow();
            cache[slot]
                .as_ref()
                // (Compared where they lie: a copy of the date to compare would be read back
                // before its store retired.)
                .filter(|c| c.date.as_ref().map(|d| &d[..]) == req.date)
                .map(|c| c.head.clone())
        };
        let head = cached.unwrap_or_else(|| {
            let base = if plan.drop_connection {
                &f.head_no_connection
            } else {
                &f.head_all
            };
            let body = if plan.inline_body { f.body.len() } else { 0 };
            let mut out = BytesMut::with_capacity(base.len() + 128 + body);
            out.put_slice(base);
            plan.put_tail(&mut out, f.status, &f.owned, false, f.body.len(), &req);
            if plan.inline_body {
                out.put_slice(&f.body);
            }
            let head = out.freeze();
            if cacheable {
                let date: Option<DateValue> = req.date.and_then(|d| d.try_into().ok());
                f.cache.borrow_mut()[slot] = Some(Cached {
                    date,
                    head: head.clone(),
                });
            }
            head
        });
        let body =
            (!plan.inline_body && !plan.no_body && !f.body.is_empty()).then(|| f.body.clone());
        Encoded {
            head,
            body,
            file: None,
            close: plan.close,
            mode: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answering(date: Option<&[u8]>, keep_alive: bool) -> Answering<'_> {
        Answering {
            head: false,
            version: Version::Http11,
            keep_alive,
            date,
            upgrade: false,
            connect: false,
        }
    }

    #[test]
    fn a_frozen_response_encodes_like_the_response_it_was_made_from() {
        let resp = HttpResponse::new(200)
            .header("Content-Type", "text/plain")
            .header("Connection", "keep-alive")
            .body("hi");
        let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
        for keep in [true, false] {
            let frozen = resp.clone().freeze().unwrap();
            let a = frozen.encode(answering(Some(date), keep));
            let b = encoder::encode(resp.clone(), answering(Some(date), keep)).unwrap();
            assert_eq!((a.head, a.body), (b.head, b.body));
            assert_eq!(a.close, b.close);
        }
    }

    #[test]
    fn a_second_write_in_the_same_second_reuses_the_encoded_bytes() {
        let frozen = HttpResponse::new(200).body("hi").freeze().unwrap();
        let d1 = b"Sun, 06 Nov 1994 08:49:37 GMT";
        let d2 = b"Sun, 06 Nov 1994 08:49:38 GMT";
        let first = frozen.encode(answering(Some(d1), true)).head;
        let again = frozen.encode(answering(Some(d1), true)).head;
        assert_eq!(
            first.as_ptr(),
            again.as_ptr(),
            "the same bytes, not a new encoding"
        );
        let later = frozen.encode(answering(Some(d2), true)).head;
        assert_ne!(later, first);
        assert!(
            later.windows(d2.len()).any(|w| w == d2),
            "the new date is shown"
        );
    }

    #[test]
    fn freezing_checks_what_a_write_would() {
        let bad = HttpResponse::new(200).header("Bad Name", "x").freeze();
        assert_eq!(bad.unwrap_err().code(), "ERR_INVALID_HTTP_TOKEN");
        let split = HttpResponse::new(200).header("X", "a\r\nb").freeze();
        assert_eq!(split.unwrap_err().code(), "ERR_INVALID_CHAR");
        let streamed = HttpResponse::new(200).streamed().freeze();
        assert_eq!(streamed.unwrap_err().code(), "ERR_HTTP_FROZEN_STREAMING");
    }
}
