//! The request-head timeout (`header_timeout`, node:http's `headersTimeout`): on the
//! EmbeddedChannel's fake clock, and once on a real socket.

use crate::common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::*;
use netloop_http::{HttpServerCodec, HttpServerConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::ServerBootstrap;

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";

fn with_timeout(ms: u64) -> Harness {
    let cfg = HttpServerConfig {
        header_timeout: Some(Duration::from_millis(ms)),
        ..config()
    };
    harness_with(cfg, Answer::Ok)
}

fn assert_timed_out(h: &Harness, output: &str) {
    let parsed = parse_responses(output, &[]);
    let last = parsed.last().expect("a response");
    assert_eq!(last.status, 408, "{output}");
    assert!(
        output.contains("HTTP/1.1 408 Request Timeout\r\n"),
        "{output}"
    );
    assert_eq!(last.header("connection"), Some("close"));
    assert_eq!(h.error_codes(), vec!["ERR_HTTP_REQUEST_TIMEOUT"]);
    assert!(!h.is_open(), "the connection closes after the 408");
}

#[test]
fn the_default_is_ten_seconds_and_zero_is_refused() {
    assert_eq!(
        HttpServerConfig::default().header_timeout,
        Some(Duration::from_secs(10))
    );
    let zero = HttpServerConfig {
        header_timeout: Some(Duration::ZERO),
        ..HttpServerConfig::default()
    };
    assert_eq!(zero.validate().unwrap_err().code(), "ERR_INVALID_ARG_VALUE");
}

#[test]
fn a_connection_that_sends_nothing_gets_408_when_the_clock_runs_out() {
    let h = with_timeout(1000);
    h.ch.advance_time(Duration::from_millis(999));
    assert!(h.is_open());
    assert_eq!(h.output(), "");
    h.ch.advance_time(Duration::from_millis(2));
    let out = h.output();
    assert_timed_out(&h, &out);
}

#[test]
fn a_trickled_head_is_measured_from_the_connection_start_not_from_each_byte() {
    let h = with_timeout(1000);
    for b in b"GET / HTTP/1.1\r\nHost: t\r\n" {
        h.feed(&[*b]);
        h.ch.advance_time(Duration::from_millis(60)); // 26 bytes: 1.56 s in all
    }
    let out = h.output();
    assert_timed_out(&h, &out);
    assert_eq!(
        h.requests(),
        0,
        "the partial request never reaches the application"
    );
}

#[test]
fn a_head_that_arrives_in_time_stops_the_clock() {
    let h = with_timeout(1000);
    h.ch.advance_time(Duration::from_millis(900));
    h.feed(GET);
    assert_eq!(parse_responses(&h.output(), &[])[0].status, 200);
    h.ch.advance_time(Duration::from_secs(60));
    assert!(
        h.is_open(),
        "no clock runs between requests of a kept-alive connection"
    );
    assert!(h.error_codes().is_empty());
    assert_eq!(h.output(), "");
}

#[test]
fn a_later_head_is_timed_from_its_first_byte() {
    let h = with_timeout(1000);
    h.feed(GET);
    assert_eq!(parse_responses(&h.output(), &[])[0].status, 200);
    h.ch.advance_time(Duration::from_secs(30));
    h.feed(b"GET /two HTTP/1.1\r\n");
    h.ch.advance_time(Duration::from_millis(999));
    assert!(h.is_open(), "{}", h.output());
    h.ch.advance_time(Duration::from_millis(2));
    let out = h.output();
    assert_timed_out(&h, &out);
    assert_eq!(h.requests(), 1);
}

#[test]
fn the_clock_does_not_run_while_a_body_is_read() {
    let h = with_timeout(1000);
    h.feed(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nab");
    h.ch.advance_time(Duration::from_secs(5));
    assert!(h.is_open());
    h.feed(b"cd");
    assert_eq!(parse_responses(&h.output(), &[])[0].status, 200);
    assert!(h.error_codes().is_empty());
}

#[test]
fn the_408_follows_the_response_owed_to_an_earlier_request() {
    let cfg = HttpServerConfig {
        header_timeout: Some(Duration::from_millis(1000)),
        ..config()
    };
    let h = harness_with(cfg, Answer::Never);
    h.feed(b"GET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\n");
    h.ch.advance_time(Duration::from_millis(1001));
    assert_eq!(h.output(), "", "held until /one is answered");
    assert!(h.is_open());
    let id = h.seen.borrow().requests[0].id;
    h.respond_ok(
        netloop_http::HttpResponse::new(200)
            .body("ok")
            .for_request(id),
    );
    let out = h.output();
    let parsed = parse_responses(&out, &[]);
    assert_eq!(
        parsed.iter().map(|p| p.status).collect::<Vec<_>>(),
        vec![200, 408]
    );
    assert_timed_out(&h, &out);
}

#[test]
fn none_turns_the_timeout_off() {
    let cfg = HttpServerConfig {
        header_timeout: None,
        request_timeout: None, // else its 300 s default answers the hour-long head with 408
        ..config()
    };
    let h = harness_with(cfg, Answer::Ok);
    h.feed(b"GET / HTTP/1.1\r\n");
    h.ch.advance_time(Duration::from_secs(3600));
    assert!(h.is_open());
    h.feed(b"Host: t\r\n\r\n");
    assert_eq!(parse_responses(&h.output(), &[])[0].status, 200);
}

#[test]
fn a_slow_client_on_a_real_socket_gets_408_and_the_close() {
    let boss = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let workers = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let server = ServerBootstrap::new()
        .group(boss.clone(), workers.clone())
        .child_handler(|ch| {
            let cfg = HttpServerConfig {
                header_timeout: Some(Duration::from_millis(200)),
                ..HttpServerConfig::default()
            };
            ch.pipeline()
                .add_last("http", HttpServerCodec::new(cfg).expect("config"))?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .wait()
        .unwrap();
    let mut c = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let start = Instant::now();
    c.write_all(b"GET / HTTP/1.1\r\nHost").unwrap();
    let mut all = String::new();
    c.read_to_string(&mut all).unwrap();
    assert!(
        all.starts_with("HTTP/1.1 408 Request Timeout\r\n")
            && all.contains("Connection: close\r\n"),
        "{all}"
    );
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "{:?}",
        start.elapsed()
    );
    server.close().wait().unwrap();
    for group in [workers, boss] {
        group
            .shutdown_gracefully(Duration::ZERO, Duration::from_secs(5))
            .wait()
            .unwrap();
    }
}
