//! Test harness of the client codec: an `EmbeddedChannel` with the codec and an application
//! handler that records what reaches it.
#![allow(dead_code)]

#[path = "../embedded/mod.rs"]
mod embedded;

use std::cell::RefCell;
use std::rc::Rc;

use netloop_http::{
    HttpClientCodec, HttpClientConfig, HttpClientRequest, HttpClientResponse, HttpContent,
};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message, TransportError,
};

/// One thing that reached the application, in order.
#[derive(Debug, Clone)]
pub enum Got {
    Response(HttpClientResponse),
    Content(HttpContent),
    Raw(Vec<u8>),
}

#[derive(Default)]
pub struct Seen {
    pub got: Vec<Got>,
    pub errors: Vec<TransportError>,
}

pub struct App {
    pub seen: Rc<RefCell<Seen>>,
}

impl ChannelHandler for App {
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let got = match msg.downcast::<HttpClientResponse>() {
            Ok(r) => Got::Response(r),
            Err(msg) => match msg.downcast::<HttpContent>() {
                Ok(c) => Got::Content(c),
                Err(msg) => Got::Raw(msg.into_bytes().expect("bytes").to_vec()),
            },
        };
        self.seen.borrow_mut().got.push(got);
        Ok(())
    }

    fn exception_caught(&self, _: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.seen.borrow_mut().errors.push(e);
        Ok(())
    }
}

pub struct Client {
    pub ch: EmbeddedChannel,
    pub seen: Rc<RefCell<Seen>>,
}

pub fn client() -> Client {
    client_with(HttpClientConfig::default())
}

pub fn client_with(cfg: HttpClientConfig) -> Client {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let codec = HttpClientCodec::new(cfg).expect("valid config");
    let app = App { seen: seen.clone() };
    let ch = EmbeddedChannel::new(vec![("http", Rc::new(codec)), ("app", Rc::new(app))]);
    Client { ch, seen }
}

impl Client {
    /// Writes and flushes `msg`; the write's outcome.
    pub fn send(&self, msg: Message) -> Option<Result<(), TransportError>> {
        embedded::send(&self.ch, msg)
    }

    /// Writes `msg` and asserts the write succeeded.
    pub fn send_ok(&self, msg: Message) {
        match self.send(msg) {
            Some(Ok(())) => {}
            other => panic!("write not completed successfully: {other:?}"),
        }
    }

    /// Writes `req` and asserts the write succeeded.
    pub fn request(&self, req: HttpClientRequest) {
        match self.send(Message::user(req)) {
            Some(Ok(())) => {}
            other => panic!("request write not completed successfully: {other:?}"),
        }
    }

    /// Writes a `GET /` with a Host, and drops its bytes.
    pub fn get(&self) {
        self.request(HttpClientRequest::new("GET", "/").header("Host", "x"));
        self.output();
    }

    pub fn feed(&self, bytes: &[u8]) {
        self.ch.write_inbound(bytes.to_vec());
    }

    /// Everything written so far, as text.
    pub fn output(&self) -> String {
        embedded::output(&self.ch)
    }

    /// What `pick` takes from each thing received, in order.
    fn picked<T>(&self, pick: impl Fn(&Got) -> Option<T>) -> Vec<T> {
        self.seen.borrow().got.iter().filter_map(pick).collect()
    }

    /// The responses received.
    pub fn responses(&self) -> Vec<HttpClientResponse> {
        self.picked(|g| match g {
            Got::Response(r) => Some(r.clone()),
            _ => None,
        })
    }

    /// The body pieces received, joined.
    pub fn content(&self) -> Vec<u8> {
        self.contents()
            .iter()
            .flat_map(|c| c.data.to_vec())
            .collect()
    }

    pub fn contents(&self) -> Vec<HttpContent> {
        self.picked(|g| match g {
            Got::Content(c) => Some(c.clone()),
            _ => None,
        })
    }

    /// The raw bytes received (after a switch).
    pub fn raw(&self) -> Vec<u8> {
        self.picked(|g| match g {
            Got::Raw(b) => Some(b.clone()),
            _ => None,
        })
        .concat()
    }

    pub fn error_codes(&self) -> Vec<String> {
        embedded::error_codes(&self.seen.borrow().errors)
    }

    pub fn is_open(&self) -> bool {
        self.ch.channel().is_open()
    }
}
