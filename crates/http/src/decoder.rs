//! [`RequestDecoder`]: the request side of the codec without a pipeline (Netty's
//! `HttpRequestDecoder` and `HttpObjectAggregator` in one state machine).
//!
//! For each request it yields, in order: [`Decoded::Start`] (the head was accepted: what the
//! response side needs to know), then either one [`Decoded::Request`] holding the whole body,
//! or a `Request` with `streaming` set followed by [`Decoded::Content`] pieces, the last one
//! with `last` set. A body is streamed when its `Content-Length` exceeds the aggregation limit,
//! or when a chunked body grows past it (the head and the bytes so far are then delivered).
//!
//! Ground rules:
//! - No input panics; an error leaves the decoder failed (it ignores all later input), as the
//!   connection closes after the answer.
//! - After a request that does not keep the connection alive, later input is ignored.
//! - After an upgrade request (`HttpRequest::upgrade`) the decoder waits, input untouched,
//!   until [`RequestDecoder::decline_upgrade`] (HTTP goes on) or [`RequestDecoder::stop`]
//!   (the connection switched protocols: the codec takes the bytes left over).
//! - What it yields depends only on the bytes, not on how they were split into reads, except
//!   that a streamed body may come in differently sized pieces (the fuzz target checks this).

use bytes::Bytes;

use crate::body::{Body, Carrier};
use crate::chunked::ChunkedBody;
use crate::config::HttpServerConfig;
use crate::error::HttpError;
use crate::head::{parse_head, plain_head, Framing, RequestHead};
use crate::input::Input;
use crate::message::{HeaderList, HttpContent, HttpRequest, Version};
use crate::plain_head::{parse_plain, PlainHead, PlainLimits};
use crate::scan::{LineScanner, ScanLimits};

/// What the response side learns when a head is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestStart {
    /// The request's number on the connection.
    pub id: u64,
    /// A `HEAD` request.
    pub head: bool,
    /// The request's version.
    pub version: Version,
    /// The request allows keeping the connection alive.
    pub keep_alive: bool,
    /// The request waits for 100 Continue before sending its body.
    pub expect_continue: bool,
    /// A body follows the head.
    pub has_body: bool,
    /// The request asks to leave HTTP (see [`HttpRequest::upgrade`]).
    pub upgrade: bool,
    /// A `CONNECT` request.
    pub connect: bool,
}

/// One result of decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A head was accepted (not a pipeline message: the codec's response side uses it).
    Start(RequestStart),
    /// A request, whole or (with `streaming`) its head. Boxed where it is made (in memory
    /// the codec's reader gave back, `spare.rs`): the events move as a pointer, and the codec
    /// fires the box as it is.
    Request(Box<HttpRequest>),
    /// A piece of a streamed body.
    Content(HttpContent),
}

/// How a body that follows a head is framed ([`Framing`] without its `None`).
enum BodyFraming {
    Length(u64),
    Chunked,
}

// One per connection, and inline: a request with a body costs no allocation for its state.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum State {
    Head,
    /// A request's body (`Content-Length` or chunked). Boxed: inline, its request would make
    /// every connection's decoder ~300 bytes bigger for as long as it lives, body or not (an
    /// upgraded WebSocket connection keeps its codec).
    Body(Box<Body<HttpRequest>>),
    /// After an upgrade request: waiting for its response to say what follows; what the
    /// connection does after a declined upgrade.
    Upgrade {
        keep_alive: bool,
    },
    /// After a request that closes the connection.
    Closed,
    /// After an error.
    Failed,
}

/// Decodes the requests of one connection.
#[derive(Debug)]
pub struct RequestDecoder {
    cfg: HttpServerConfig,
    state: State,
    scanner: LineScanner,
    next_id: u64,
    failed_in: Option<u64>,
    /// Heads the decoder may still accept before it stops at the next one (`None`: no limit).
    head_budget: Option<usize>,
    /// The request being read asks to leave HTTP: the decoder waits after it.
    upgrading: bool,
}

impl RequestDecoder {
    /// A decoder with `cfg`'s limits (assumed valid, see [`HttpServerConfig::validate`]).
    pub fn new(cfg: HttpServerConfig) -> Self {
        RequestDecoder {
            cfg,
            state: State::Head,
            scanner: LineScanner::default(),
            next_id: 0,
            failed_in: None,
            head_budget: None,
            upgrading: false,
        }
    }

    /// Accept at most `budget` more request heads (`None`: any number); at the next head the
    /// decoder stops and leaves it in the input, for a later `decode` once the budget allows.
    pub fn set_head_budget(&mut self, budget: Option<usize>) {
        self.head_budget = budget;
    }

    /// True when a head budget is set and used up.
    pub fn head_budget_spent(&self) -> bool {
        self.head_budget == Some(0)
    }

    /// The id the next request will get.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The id of the request whose body is being received, if any.
    pub fn request_in_body(&self) -> Option<u64> {
        match &self.state {
            State::Body(body) => Some(body.id()),
            _ => None,
        }
    }

    /// After an error: the request whose body failed (`None`: a head failed).
    pub fn failed_request(&self) -> Option<u64> {
        self.failed_in
    }

    /// True when the decoder reads no more requests (closed or failed).
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Closed | State::Failed)
    }

    /// True while an upgrade request waits for its response (input is left untouched).
    pub fn awaits_upgrade(&self) -> bool {
        matches!(self.state, State::Upgrade { .. })
    }

    /// The upgrade request's response declined it: decoding goes on as the request asked
    /// (the next head, or nothing if it did not keep the connection alive).
    pub fn decline_upgrade(&mut self) {
        if let State::Upgrade { keep_alive } = self.state {
            self.state = if keep_alive {
                State::Head
            } else {
                State::Closed
            };
        }
    }

    /// Stops decoding: later input is ignored (the connection is closing).
    pub fn stop(&mut self) {
        if !matches!(self.state, State::Failed) {
            self.state = State::Closed;
        }
    }

    /// True when some bytes of a request were consumed but the request is not complete
    /// (a head being received, or a body).
    pub fn is_mid_request(&self, input: &[u8]) -> bool {
        match self.state {
            State::Head => !input.is_empty(),
            State::Body(_) => true,
            State::Upgrade { .. } | State::Closed | State::Failed => false,
        }
    }

    /// Decodes everything `input` holds, pushing results to `out`; what is left in `input`
    /// is the start of an incomplete head or body. After an error the decoder is failed.
    pub fn decode(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Decoded>,
    ) -> Result<(), HttpError> {
        let r = self.decode_inner(input, out);
        if r.is_err() {
            self.failed_in = self.request_in_body();
            self.state = State::Failed;
        }
        if self.is_finished() {
            let n = input.bytes().len();
            input.skip(n);
        }
        r
    }

    fn decode_inner(
        &mut self,
        input: &mut impl Input,
        out: &mut Vec<Decoded>,
    ) -> Result<(), HttpError> {
        loop {
            match &mut self.state {
                State::Upgrade { .. } | State::Closed | State::Failed => return Ok(()),
                State::Head => {
                    if self.head_budget == Some(0) {
                        return Ok(());
                    }
                    if !self.head(input, out)? {
                        return Ok(());
                    }
                    if let Some(b) = self.head_budget.as_mut() {
                        *b -= 1;
                    }
                }
                State::Body(body) => {
                    if !body.read(input, out)? {
                        return Ok(());
                    }
                    let keep_alive = body.keep_alive();
                    self.end_message(keep_alive);
                }
            }
        }
    }

    /// Reads a head if one is complete; true when it did.
    fn head(&mut self, input: &mut impl Input, out: &mut Vec<Decoded>) -> Result<bool, HttpError> {
        if self.scanner.at_start() {
            // RFC 9112 §2.2: empty lines before a request line are ignored.
            while input.bytes().starts_with(b"\r\n") {
                input.skip(2);
            }
            if input.bytes().is_empty() || input.bytes() == b"\r" {
                return Ok(false);
            }
        }
        let head = match self.plain(input.bytes()) {
            // The common shape, whole: one pass (plain_head.rs).
            Some(plain) => plain_head(input.take(plain.len), plain, &self.cfg)?,
            None => match self.scanned(input)? {
                Some(head) => head,
                None => return Ok(false),
            },
        };
        let id = self.next_id;
        self.next_id += 1;
        let keep_alive = head.keep_alive;
        let connect = &head.method[..] == b"CONNECT";
        let upgrade = head.upgrade || connect;
        self.upgrading = upgrade;
        let req = HttpRequest {
            id,
            method: head.method,
            target: head.target,
            version: head.version,
            headers: head.headers,
            body: Bytes::new(),
            streaming: false,
            trailers: Vec::new(),
            keep_alive,
            expect_continue: head.expect_continue,
            upgrade,
        };
        out.push(Decoded::Start(RequestStart {
            id,
            head: req.is_head(),
            version: req.version,
            keep_alive,
            expect_continue: req.expect_continue,
            has_body: head.framing != Framing::None,
            upgrade,
            connect,
        }));
        match head.framing {
            Framing::None => {
                out.push(Decoded::Request(crate::spare::boxed_request(req)));
                self.end_message(keep_alive);
            }
            Framing::Length(n) => self.start_body(BodyFraming::Length(n), req, out),
            Framing::Chunked => self.start_body(BodyFraming::Chunked, req, out),
        }
        Ok(true)
    }

    /// A head the plain parser did not take (split across reads, or of another shape): the
    /// line scanner and httparse; `None` while it is not complete. Out of line, as
    /// `start_body`: the plain request's path stays short.
    #[inline(never)]
    fn scanned(&mut self, input: &mut impl Input) -> Result<Option<RequestHead>, HttpError> {
        let limits = ScanLimits {
            max_head: self.cfg.max_head_size,
            max_first_line: Some(self.cfg.max_request_line()),
        };
        let Some(len) = self.scanner.scan(input.bytes(), limits)? else {
            return Ok(None);
        };
        self.scanner = LineScanner::default();
        parse_head(input.take(len), &self.cfg).map(Some)
    }

    /// Starts reading the body of `req`.
    #[inline(never)]
    fn start_body(&mut self, framing: BodyFraming, req: HttpRequest, out: &mut Vec<Decoded>) {
        let (id, keep_alive) = (req.id, req.keep_alive);
        let aggregate = self.cfg.aggregate_limit;
        let body = match framing {
            BodyFraming::Chunked => {
                let chunked = ChunkedBody::new(self.cfg.max_body_size, self.cfg.max_head_size);
                Body::chunked(id, keep_alive, chunked, req, aggregate, out)
            }
            BodyFraming::Length(n) => Body::with_length(id, keep_alive, n, req, aggregate, out),
        };
        self.state = State::Body(Box::new(body));
    }

    /// The head at the start of `bytes` when it is whole there and of the plain shape, and
    /// the scanner has not begun on it (a head split across reads goes the scanner's way).
    fn plain(&self, bytes: &[u8]) -> Option<PlainHead> {
        if !self.scanner.at_start() {
            return None;
        }
        let limits = PlainLimits {
            max_head: self.cfg.max_head_size,
            max_first_line: self.cfg.max_request_line(),
            max_fields: self.cfg.max_header_count,
        };
        parse_plain(bytes, limits)
    }

    fn end_message(&mut self, keep_alive: bool) {
        self.state = if std::mem::take(&mut self.upgrading) {
            State::Upgrade { keep_alive }
        } else if keep_alive {
            State::Head
        } else {
            State::Closed
        };
    }
}

impl Carrier for HttpRequest {
    type Decoded = Decoded;

    fn into_decoded(self) -> Decoded {
        Decoded::Request(crate::spare::boxed_request(self))
    }

    fn piece(content: HttpContent) -> Decoded {
        Decoded::Content(content)
    }

    fn set_body(&mut self, body: Bytes, trailers: HeaderList) {
        self.body = body;
        self.trailers = trailers;
    }

    fn set_streaming(&mut self) {
        self.streaming = true;
    }
}
