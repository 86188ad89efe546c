//! The codec on a real socket: a hello server built with ServerBootstrap, driven by a plain
//! TCP client (keep-alive, pipelining, HTTP/1.0, chunked upload, 100-continue, a refusal).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use netloop_http::{HttpContent, HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

/// Answers each request with its method, target and body length.
struct Echo;

impl ChannelHandler for Echo {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        assert!(
            msg.downcast_ref::<HttpContent>().is_none(),
            "bodies in this test are small enough to aggregate"
        );
        if let Ok(req) = msg.downcast::<HttpRequest>() {
            let text = format!(
                "{} {} {}",
                String::from_utf8_lossy(&req.method),
                String::from_utf8_lossy(&req.target),
                req.body.len()
            );
            let res = HttpResponse::new(200).header("Content-Type", "text/plain");
            ctx.write_and_flush(Message::user(res.body(text).for_request(req.id)));
        }
        Ok(())
    }
}

/// Reads until `needle` occurs `count` times, or EOF.
fn read_until(client: &mut TcpStream, needle: &str, count: usize) -> String {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&all).into_owned();
        if text.matches(needle).count() >= count {
            return text;
        }
        match client.read(&mut buf) {
            Ok(0) => return text,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) => panic!("read failed after {text:?}: {e}"),
        }
    }
}

fn read_to_end(client: &mut TcpStream) -> String {
    let mut all = Vec::new();
    client.read_to_end(&mut all).unwrap();
    String::from_utf8_lossy(&all).into_owned()
}

#[test]
fn a_hello_server_answers_real_clients_by_the_http11_rules() {
    let boss = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let workers = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let server = ServerBootstrap::new()
        .group(boss.clone(), workers.clone())
        .child_handler(|ch| {
            let codec = HttpServerCodec::new(HttpServerConfig::default()).expect("config");
            ch.pipeline().add_last("http", codec)?;
            ch.pipeline().add_last("echo", Echo)?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .wait()
        .unwrap();
    let addr = server.local_addr().unwrap();
    let connect = || {
        let c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c
    };

    // Keep-alive and pipelining: 16 requests in one write, answered in order on one connection.
    let mut c = connect();
    let mut batch = String::new();
    for i in 0..16 {
        batch.push_str(&format!("GET /{i} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }
    c.write_all(batch.as_bytes()).unwrap();
    let text = read_until(&mut c, "GET /", 16);
    let order: Vec<_> = text
        .match_indices("GET /")
        .map(|(i, _)| &text[i..i + 8])
        .collect();
    for (i, got) in order.iter().enumerate() {
        assert!(got.starts_with(&format!("GET /{i} ")), "{i}: {got}");
    }
    assert!(text.contains("\r\nDate: "));

    // Chunked upload on the same connection, then 100-continue.
    c.write_all(
        b"POST /up HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    )
    .unwrap();
    assert!(read_until(&mut c, "POST /up 3", 1).contains("POST /up 3"));
    c.write_all(b"PUT /c HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        .unwrap();
    assert_eq!(
        read_until(&mut c, "100 Continue\r\n\r\n", 1),
        "HTTP/1.1 100 Continue\r\n\r\n"
    );
    c.write_all(b"data").unwrap();
    assert!(read_until(&mut c, "PUT /c 4", 1).contains("PUT /c 4"));

    // Connection: close ends the connection after the response.
    c.write_all(b"GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let last = read_to_end(&mut c);
    assert!(
        last.contains("Connection: close\r\n") && last.ends_with("GET /bye 0"),
        "{last}"
    );

    // HTTP/1.0 closes after one response.
    let mut c = connect();
    c.write_all(b"GET /old HTTP/1.0\r\n\r\n").unwrap();
    assert!(read_to_end(&mut c).ends_with("GET /old 0"));

    // A smuggling attempt is refused with 400 and the connection closes.
    let mut c = connect();
    c.write_all(
        b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .unwrap();
    let refused = read_to_end(&mut c);
    assert!(
        refused.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{refused}"
    );
    assert!(!refused.contains("smuggled"));

    server.close().wait().unwrap();
    let quiet = Duration::ZERO;
    workers
        .shutdown_gracefully(quiet, Duration::from_secs(5))
        .wait()
        .unwrap();
    boss.shutdown_gracefully(quiet, Duration::from_secs(5))
        .wait()
        .unwrap();
}
