//! Test harness: an `EmbeddedChannel` with the codec and an application handler that records
//! what reaches it and answers as the test says.
#![allow(dead_code)]

#[path = "../embedded/mod.rs"]
mod embedded;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use netloop_http::{HttpContent, HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message, TransportError,
};

/// What the application does with each request.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Nothing (the test answers).
    Never,
    /// `200 ok` with body "ok" once the request (and its streamed body) is complete.
    Ok,
}

/// What reached the application.
#[derive(Default)]
pub struct Seen {
    pub requests: Vec<HttpRequest>,
    pub contents: Vec<HttpContent>,
    pub errors: Vec<TransportError>,
    /// Bytes that reached the application as they came (after a protocol switch).
    pub raw: Vec<u8>,
}

pub struct App {
    pub seen: Rc<RefCell<Seen>>,
    answer: Answer,
}

impl ChannelHandler for App {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let msg = match msg.downcast::<HttpRequest>() {
            Ok(req) => {
                let (id, done) = (req.id, !req.streaming);
                self.seen.borrow_mut().requests.push(req);
                if done && self.answer == Answer::Ok {
                    ok(ctx, id);
                }
                return Ok(());
            }
            Err(msg) => msg,
        };
        let msg = match msg.into_bytes() {
            Ok(bytes) => {
                self.seen.borrow_mut().raw.extend_from_slice(&bytes);
                return Ok(());
            }
            Err(msg) => msg,
        };
        if let Ok(c) = msg.downcast::<HttpContent>() {
            let (id, last) = (c.request_id, c.last);
            self.seen.borrow_mut().contents.push(c);
            if last && self.answer == Answer::Ok {
                ok(ctx, id.unwrap());
            }
        }
        Ok(())
    }

    fn exception_caught(&self, _: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.seen.borrow_mut().errors.push(e);
        Ok(())
    }
}

fn ok(ctx: &ChannelHandlerContext, id: u64) {
    let res = HttpResponse::new(200).body("ok").for_request(id);
    ctx.write_and_flush(Message::user(res));
}

/// A fixed wall clock (2024-03-01 00:00:00 GMT) so `Date` is predictable.
pub fn fixed_clock() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_709_251_200)
}

pub const FIXED_DATE: &str = "Fri, 01 Mar 2024 00:00:00 GMT";

pub struct Harness {
    pub ch: EmbeddedChannel,
    pub seen: Rc<RefCell<Seen>>,
}

pub fn config() -> HttpServerConfig {
    HttpServerConfig {
        wall_clock: fixed_clock,
        ..HttpServerConfig::default()
    }
}

pub fn harness(answer: Answer) -> Harness {
    harness_with(config(), answer)
}

pub fn harness_with(cfg: HttpServerConfig, answer: Answer) -> Harness {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let app = App {
        seen: seen.clone(),
        answer,
    };
    let codec = HttpServerCodec::new(cfg).expect("valid config");
    let ch = EmbeddedChannel::new(vec![("http", Rc::new(codec)), ("app", Rc::new(app))]);
    Harness { ch, seen }
}

impl Harness {
    /// Feeds bytes as one read.
    pub fn feed(&self, bytes: &[u8]) {
        self.ch.write_inbound(bytes.to_vec());
    }

    /// Everything written so far, as text.
    pub fn output(&self) -> String {
        embedded::output(&self.ch)
    }

    /// Writes and flushes `msg` from the application's side; the write's outcome.
    pub fn respond(&self, res: HttpResponse) -> Option<Result<(), TransportError>> {
        self.send(Message::user(res))
    }

    pub fn send(&self, msg: Message) -> Option<Result<(), TransportError>> {
        embedded::send(&self.ch, msg)
    }

    /// Writes `res` and asserts the write succeeded at once.
    pub fn respond_ok(&self, res: HttpResponse) {
        match self.respond(res) {
            Some(Ok(())) => {}
            other => panic!("write not completed successfully: {other:?}"),
        }
    }

    pub fn is_open(&self) -> bool {
        self.ch.channel().is_open()
    }

    pub fn requests(&self) -> usize {
        self.seen.borrow().requests.len()
    }

    pub fn error_codes(&self) -> Vec<String> {
        embedded::error_codes(&self.seen.borrow().errors)
    }
}

/// A response as the client parsed it.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Parsed {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the responses in `text` (bodies by Content-Length or chunked; none for 1xx, 204,
/// 304 and when `no_body` says so for the n-th final response).
pub fn parse_responses(mut text: &str, no_body: &[bool]) -> Vec<Parsed> {
    let mut out = Vec::new();
    let mut finals = 0;
    while !text.is_empty() {
        let end = text.find("\r\n\r\n").expect("a complete head");
        let head = &text[..end];
        text = &text[end + 4..];
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        assert!(status_line.starts_with("HTTP/1.1 "), "{status_line:?}");
        let status: u16 = status_line[9..12].parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (n, v) = l.split_once(':').expect("a field");
                (n.to_string(), v.trim().to_string())
            })
            .collect();
        let mut p = Parsed {
            status,
            headers,
            body: String::new(),
        };
        let interim = (100..200).contains(&status);
        let skip = interim
            || status == 204
            || status == 304
            || no_body.get(finals).copied().unwrap_or(false);
        if !interim {
            finals += 1;
        }
        if !skip {
            if let Some(n) = p.header("content-length") {
                let n: usize = n.parse().unwrap();
                p.body = text[..n].to_string();
                text = &text[n..];
            } else if p.header("transfer-encoding") == Some("chunked") {
                loop {
                    let line_end = text.find("\r\n").unwrap();
                    let size = usize::from_str_radix(&text[..line_end], 16).unwrap();
                    text = &text[line_end + 2..];
                    if size == 0 {
                        let t = text.find("\r\n").unwrap();
                        text = &text[t + 2..]; // no trailers in these tests unless asserted
                        break;
                    }
                    p.body.push_str(&text[..size]);
                    text = &text[size + 2..];
                }
            } else {
                p.body = text.to_string();
                text = "";
            }
        }
        out.push(p);
    }
    out
}

/// Status codes of the responses in `text`.
pub fn statuses(text: &str) -> Vec<u16> {
    parse_responses(text, &[])
        .iter()
        .map(|p| p.status)
        .collect()
}

/// A GET for `path` on HTTP/1.1.
pub fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: example\r\n\r\n")
}
