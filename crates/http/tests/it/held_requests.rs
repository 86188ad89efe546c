//! Requests given back: a consumer that sees a read's requests at once (as the JS delivery
//! does) answers them with 64 KiB bodies until the channel is unwritable and gives the rest
//! back to the codec, which fires them again, in order, once the channel drains. What the
//! channel queues stays near the high water mark (64 KiB).

use std::cell::RefCell;
use std::rc::Rc;

use netloop_http::{HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

const BODY: usize = 64 * 1024;
const HIGH: usize = 64 * 1024;

/// Answers the requests of a read batch at `channel_read_complete`, never flushing (a client
/// that does not read), and gives back those that come after the channel turned unwritable.
#[derive(Default)]
struct Server {
    waiting: RefCell<Vec<Message>>,
    answered: RefCell<Vec<String>>,
    peak: RefCell<usize>,
}

impl ChannelHandler for Server {
    fn channel_read(&self, _ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        self.waiting.borrow_mut().push(msg);
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        let waiting = std::mem::take(&mut *self.waiting.borrow_mut());
        let codec_ctx = ctx.pipeline().context("http").expect("the codec");
        let codec = codec_ctx.handler();
        let codec = codec
            .as_any()
            .and_then(|a| a.downcast_ref::<HttpServerCodec>())
            .expect("an HttpServerCodec");
        for msg in waiting {
            if codec.holds_firing() || !ctx.channel().is_writable() {
                codec.hold_back(&codec_ctx, msg);
                continue;
            }
            let req = msg.downcast_ref::<HttpRequest>().expect("a request");
            self.answered
                .borrow_mut()
                .push(String::from_utf8_lossy(&req.target).into_owned());
            ctx.write(Message::user(HttpResponse::new(200).body(vec![b'x'; BODY])));
            let queued = ctx.channel().pending_outbound_bytes();
            let mut peak = self.peak.borrow_mut();
            *peak = (*peak).max(queued);
        }
        Ok(())
    }
}

fn gets(from: usize, to: usize) -> Vec<u8> {
    (from..to)
        .flat_map(|i| format!("GET /{i} HTTP/1.1\r\nHost: x\r\n\r\n").into_bytes())
        .collect()
}

#[test]
fn pipelined_gets_answered_with_64_kib_queue_one_response_past_the_mark_and_all_come_in_order() {
    let codec = Rc::new(HttpServerCodec::new(HttpServerConfig::default()).expect("valid"));
    let server = Rc::new(Server::default());
    let ch = EmbeddedChannel::new(vec![("http", codec.clone()), ("server", server.clone())]);
    ch.write_inbound(gets(0, 200));
    assert_eq!(*server.answered.borrow(), ["/0"]);
    assert_eq!(codec.held_len(), 199, "the others went back to the codec");
    assert!(!ch.channel().is_auto_read(), "reading stopped");
    let bound = HIGH + BODY + 1024; // a response's head and the entry's overhead
    assert!(*server.peak.borrow() <= bound);
    for _ in 0..1000 {
        if server.answered.borrow().len() == 200 {
            break;
        }
        ch.channel().flush();
        while ch.read_outbound().is_some() {}
        ch.run_pending_tasks();
    }
    let want: Vec<String> = (0..200).map(|i| format!("/{i}")).collect();
    assert_eq!(*server.answered.borrow(), want, "each once, in order");
    assert!(
        *server.peak.borrow() <= bound,
        "peak {}",
        server.peak.borrow()
    );
    assert_eq!(codec.held_len(), 0);
}
