//! The HTTP codec's cost per request: a typical GET (about 200 bytes, 6 header fields),
//! pipelined 16 per read.
//!
//! - `decode`: `RequestDecoder` alone, 16 requests from one read (the handler's path when no
//!   bytes are buffered: the read is decoded in place, no copy).
//! - `codec_round_trip`: the whole handler in an `EmbeddedChannel`: the read decoded, each
//!   request fired to an application handler that answers `200` with a 12-byte body, each
//!   response encoded (Date from the loop's cache) and written. Throughput is requests.
//!
//! Run: `cargo bench -p netloop-benches --bench http`; criterion prints time per iteration
//! (16 requests) and requests per second.

use std::hint::black_box;
use std::rc::Rc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netloop_http::bytes::Bytes;
use netloop_http::{HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig, RequestDecoder};
use netloop_transport::{
    ChannelHandler, ChannelHandlerContext, EmbeddedChannel, HandlerResult, Message,
};

const PIPELINED: usize = 16;

fn request(i: usize) -> String {
    format!(
        "GET /api/v1/items/{i:04}?fields=name,price HTTP/1.1\r\n\
         Host: shop.example.com\r\n\
         User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n\
         Accept: application/json\r\n\
         Accept-Encoding: gzip, deflate\r\n\
         Connection: keep-alive\r\n\
         Cookie: session=abc123\r\n\r\n"
    )
}

fn batch() -> Bytes {
    let all: String = (0..PIPELINED).map(request).collect();
    Bytes::from(all)
}

struct Hello;

impl ChannelHandler for Hello {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        if let Ok(req) = msg.downcast::<HttpRequest>() {
            let res = HttpResponse::new(200)
                .header("Content-Type", "text/plain")
                .body("Hello World!")
                .for_request(req.id);
            ctx.write(Message::user(res));
        }
        Ok(())
    }

    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
}

fn benches(c: &mut Criterion) {
    let input = batch();
    assert!(
        (190..=230).contains(&request(0).len()),
        "{}",
        request(0).len()
    );
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Elements(PIPELINED as u64));
    group.measurement_time(Duration::from_secs(5));

    group.bench_function("decode", |b| {
        let mut decoder = RequestDecoder::new(HttpServerConfig::default());
        let mut out = Vec::with_capacity(2 * PIPELINED);
        b.iter(|| {
            let mut read = input.clone();
            decoder.decode(&mut read, &mut out).expect("valid requests");
            assert_eq!(out.len(), 2 * PIPELINED);
            black_box(out.drain(..).count())
        })
    });

    group.bench_function("codec_round_trip", |b| {
        let codec = HttpServerCodec::new(HttpServerConfig::default()).expect("config");
        let ch = EmbeddedChannel::new(vec![("http", Rc::new(codec)), ("app", Rc::new(Hello))]);
        b.iter(|| {
            ch.write_inbound(input.clone());
            let mut n = 0;
            while let Some(m) = ch.read_outbound() {
                n += black_box(m).as_bytes().map_or(0, |b| b.len());
            }
            assert!(n > PIPELINED * 100);
        })
    });
    group.finish();
}

criterion_group!(http, benches);
criterion_main!(http);
