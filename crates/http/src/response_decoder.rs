//! [`ResponseDecoder`]: decodes the responses of one client connection from bytes, without a
//! pipeline (Netty's `HttpResponseDecoder` and `HttpObjectAggregator` in one state machine).
//!
//! The decoder is told, in order, what each request sent asked ([`SentRequest`]: `HEAD`,
//! `CONNECT`, `Upgrade`); a response answers the oldest request still waiting. For each
//! response it yields either one [`DecodedResponse::Response`] holding the whole body, or a
//! `Response` with `streaming` set followed by [`DecodedResponse::Content`] pieces, the last
//! with `last` set. Interim responses (1xx other than 101) come first, without a body, with
//! the id of the request, which goes on waiting for its final response.
//!
//! Aggregation follows the request decoder's rules (framed bodies are read by the same
//! [`Body`](crate::body::Body)): a `Content-Length` body is streamed when its length exceeds
//! the aggregation limit; a chunked or close-delimited body when it grows past it (the head
//! and the bytes so far are then delivered). A close-delimited body waits in the input (no
//! copy) until it ends or passes the limit.
//!
//! Ground rules:
//! - No input panics; an error leaves the decoder failed (it ignores all later input), as the
//!   connection closes.
//! - Response bytes with no request waiting: [`HttpError::UnexpectedResponse`].
//! - After a response that does not keep the connection alive, later input is ignored.
//! - After a response that switches protocols (`upgraded`) the decoder stops, input untouched:
//!   the codec passes the bytes left over, and all later ones, through.
//! - The end of input ([`ResponseDecoder::finish`]) ends a close-delimited body; inside a
//!   head or a framed body it is [`HttpError::Aborted`].
//! - What it yields depends only on the bytes, not on how they were split into reads, except
//!   that a streamed body may come in differently sized pieces (the fuzz target checks this).
//! - Buffering is bounded: a head by `max_head_size`, a body held for aggregation by
//!   `aggregate_limit` (a chunk-size line by [`MAX_CHUNK_LINE`](crate::MAX_CHUNK_LINE)).

use std::collections::VecDeque;

use bytes::Bytes;

use crate::body::{piece, streamed, Body, Carrier};
use crate::chunked::ChunkedBody;
use crate::client_config::HttpClientConfig;
use crate::client_message::HttpClientResponse;
use crate::error::HttpError;
use crate::input::Input;
use crate::message::{HeaderList, HttpContent};
use crate::response_head::{parse_response_head, ResponseFraming, SentRequest};
use crate::scan::{LineScanner, ScanLimits};

/// One result of decoding responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodedResponse {
    /// A response, whole or (with `streaming`) its head.
    Response(HttpClientResponse),
    /// A piece of a streamed body.
    Content(HttpContent),
}

#[derive(Debug)]
enum State {
    Head,
    /// A framed body (`Content-Length` or chunked).
    Body(Body<HttpClientResponse>),
    /// A body delimited by the end of input: bytes so far (streaming); the response while it
    /// is being aggregated (its bytes wait in the input).
    UntilClose {
        id: u64,
        received: u64,
        pending: Option<HttpClientResponse>,
    },
    /// After a response that switched protocols.
    Switched,
    /// After a response that closes the connection, or the end of input.
    Closed,
    /// After an error.
    Failed,
}

/// Decodes the responses of one client connection.
#[derive(Debug)]
pub struct ResponseDecoder {
    cfg: HttpClientConfig,
    state: State,
    scanner: LineScanner,
    waiting: VecDeque<SentRequest>,
}

impl ResponseDecoder {
    /// A decoder with `cfg`'s limits (assumed valid, see [`HttpClientConfig::validate`]).
    pub fn new(cfg: HttpClientConfig) -> Self {
        ResponseDecoder {
            cfg,
            state: State::Head,
            scanner: LineScanner::default(),
            waiting: VecDeque::new(),
        }
    }

    /// A request was sent: its response comes after those of the requests before it.
    pub fn push_request(&mut self, req: SentRequest) {
        self.waiting.push_back(req);
    }

    /// Requests sent whose final response has not started yet.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// True once a response switched protocols (the input left over is not HTTP).
    pub fn is_switched(&self) -> bool {
        matches!(self.state, State::Switched)
    }

    /// True when the decoder reads no more responses (closed, switched or failed).
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Closed | State::Failed | State::Switched)
    }

    /// True when the decoder failed.
    pub fn is_failed(&self) -> bool {
        matches!(self.state, State::Failed)
    }

    /// The id of the response whose body is being received, if any.
    pub fn response_in_body(&self) -> Option<u64> {
        match &self.state {
            State::Body(body) => Some(body.id()),
            State::UntilClose { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// Decodes everything `input` holds, pushing results to `out`; what is left in `input`
    /// is the start of an incomplete head or body (or, once switched, the bytes that follow
    /// the switch). After an error the decoder is failed and `input` emptied.
    pub fn decode(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<DecodedResponse>,
    ) -> Result<(), HttpError> {
        let r = self.decode_inner(input, out).map_err(HttpError::for_client);
        if r.is_err() {
            self.state = State::Failed;
        }
        if matches!(self.state, State::Closed | State::Failed) {
            let n = input.bytes().len();
            input.skip(n);
        }
        r
    }

    /// The end of input: ends a close-delimited body (its response or last piece is pushed to
    /// `out`); inside a head or a framed body, [`HttpError::Aborted`]. Later input is ignored.
    pub fn finish(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<DecodedResponse>,
    ) -> Result<(), HttpError> {
        let r = match std::mem::replace(&mut self.state, State::Closed) {
            State::Head if input.bytes().is_empty() => Ok(()),
            State::Head | State::Body(_) => Err(HttpError::Aborted),
            State::UntilClose { id, pending, .. } => {
                let data = input.take(input.bytes().len());
                out.push(match pending {
                    Some(mut res) => {
                        res.body = data;
                        DecodedResponse::Response(res)
                    }
                    None => piece::<HttpClientResponse>(id, data, true, Vec::new()),
                });
                Ok(())
            }
            State::Switched => {
                self.state = State::Switched;
                return Ok(());
            }
            failed @ State::Failed => {
                self.state = failed;
                Ok(())
            }
            State::Closed => Ok(()),
        };
        let n = input.bytes().len();
        input.skip(n);
        r
    }

    fn decode_inner(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<DecodedResponse>,
    ) -> Result<(), HttpError> {
        loop {
            match &mut self.state {
                State::Switched | State::Closed | State::Failed => return Ok(()),
                State::Head => {
                    if !self.head(input, out)? {
                        return Ok(());
                    }
                }
                State::Body(body) => {
                    if !body.read(input, out)? {
                        return Ok(());
                    }
                    let keep_alive = body.keep_alive();
                    self.end_message(keep_alive);
                }
                State::UntilClose {
                    id,
                    received,
                    pending,
                } => {
                    let available = input.bytes().len();
                    if let Some(res) = pending.take() {
                        if available <= self.cfg.aggregate_limit {
                            if available as u64 > self.cfg.max_body_size {
                                return Err(HttpError::BodyTooLarge {
                                    limit: self.cfg.max_body_size,
                                });
                            }
                            *pending = Some(res);
                            return Ok(()); // the bytes wait in the input
                        }
                        out.push(streamed(res));
                    }
                    // Streaming: deliver up to the size limit, then refuse what passes it.
                    let room = self.cfg.max_body_size - *received;
                    let n = (available as u64).min(room) as usize;
                    if n > 0 {
                        *received += n as u64;
                        let data = input.take(n);
                        out.push(piece::<HttpClientResponse>(*id, data, false, Vec::new()));
                    }
                    if available > n {
                        return Err(HttpError::BodyTooLarge {
                            limit: self.cfg.max_body_size,
                        });
                    }
                    return Ok(());
                }
            }
        }
    }

    /// Reads a head if one is complete; true when it did.
    fn head(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<DecodedResponse>,
    ) -> Result<bool, HttpError> {
        let buf = input.bytes();
        if buf.is_empty() {
            return Ok(false);
        }
        let Some(&req) = self.waiting.front() else {
            return Err(HttpError::UnexpectedResponse);
        };
        // The status line starts with `HTTP/` (llhttp's "Expected HTTP/"): checked on every
        // call, as the prefix may arrive a byte at a time.
        let n = buf.len().min(5);
        if buf[..n] != b"HTTP/"[..n] {
            return Err(HttpError::BadResponse {
                code: "HPE_INVALID_CONSTANT",
                reason: "a response starts with HTTP/",
            });
        }
        let limits = ScanLimits {
            max_head: self.cfg.max_head_size,
            max_first_line: None,
        };
        let Some(len) = self.scanner.scan(buf, limits)? else {
            return Ok(false);
        };
        self.scanner = LineScanner::default();
        let head = parse_response_head(input.take(len), req, &self.cfg)?;
        let mut res = HttpClientResponse {
            id: req.id,
            status: head.status,
            reason: head.reason,
            version: head.version,
            headers: head.headers,
            body: Bytes::new(),
            streaming: false,
            trailers: Vec::new(),
            keep_alive: head.keep_alive,
            upgraded: false,
        };
        if res.is_informational() {
            out.push(DecodedResponse::Response(res));
            return Ok(true); // the request waits on for its final response
        }
        self.waiting.pop_front();
        let (id, keep_alive) = (req.id, head.keep_alive);
        let aggregate = self.cfg.aggregate_limit;
        match head.framing {
            ResponseFraming::None | ResponseFraming::Length(0) => {
                out.push(DecodedResponse::Response(res));
                self.end_message(keep_alive);
            }
            ResponseFraming::Switch => {
                res.upgraded = true;
                out.push(DecodedResponse::Response(res));
                self.state = State::Switched;
            }
            ResponseFraming::Length(n) => {
                if n > self.cfg.max_body_size {
                    return Err(HttpError::BodyTooLarge {
                        limit: self.cfg.max_body_size,
                    });
                }
                let body = Body::with_length(id, keep_alive, n, res, aggregate, out);
                self.state = State::Body(body);
            }
            ResponseFraming::Chunked => {
                let chunked = ChunkedBody::new(self.cfg.max_body_size, self.cfg.max_head_size);
                let body = Body::chunked(id, keep_alive, chunked, res, aggregate, out);
                self.state = State::Body(body);
            }
            ResponseFraming::UntilClose => {
                let pending = if aggregate == 0 {
                    out.push(streamed(res));
                    None
                } else {
                    Some(res)
                };
                self.state = State::UntilClose {
                    id,
                    received: 0,
                    pending,
                };
            }
        }
        Ok(true)
    }

    fn end_message(&mut self, keep_alive: bool) {
        self.state = if keep_alive {
            State::Head
        } else {
            State::Closed
        };
    }
}

impl Carrier for HttpClientResponse {
    type Decoded = DecodedResponse;

    fn into_decoded(self) -> DecodedResponse {
        DecodedResponse::Response(self)
    }

    fn piece(content: HttpContent) -> DecodedResponse {
        DecodedResponse::Content(content)
    }

    fn set_body(&mut self, body: Bytes, trailers: HeaderList) {
        self.body = body;
        self.trailers = trailers;
    }

    fn set_streaming(&mut self) {
        self.streaming = true;
    }
}
