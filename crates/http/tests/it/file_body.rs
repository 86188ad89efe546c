//! Responses whose body is a file region, on a real socket: framed by `Content-Length`, sent
//! with sendfile between the responses around them (pipelining keeps its order), no body after
//! HEAD; a response with both a file and a body, or streamed with a file, is refused.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use netloop_http::{HttpRequest, HttpResponse, HttpServerCodec, HttpServerConfig};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

fn content() -> Vec<u8> {
    (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect()
}

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("netloop-http-{name}-{}", std::process::id()));
    File::create(&path).unwrap().write_all(&content()).unwrap();
    path
}

/// `/file` answers with the whole file, `/part` with bytes 10..20 of it, anything else with its
/// target as text; `/both` tries a file and a body and reports the write's failure as a 500.
struct Files(Arc<File>);

impl ChannelHandler for Files {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let Ok(req) = msg.downcast::<HttpRequest>() else {
            return Ok(());
        };
        let target = String::from_utf8_lossy(&req.target).into_owned();
        let res = match target.as_str() {
            "/file" => HttpResponse::new(200)
                .with_file(FileRegion::of_file(self.0.clone(), 0, None).unwrap()),
            "/part" => HttpResponse::new(206).with_file(FileRegion::new(self.0.clone(), 10, 10)),
            "/both" => {
                let bad = HttpResponse::new(200)
                    .body("text")
                    .with_file(FileRegion::new(self.0.clone(), 0, 1));
                let f = ctx.write_future(Message::user(bad.for_request(req.id)));
                let ctx2 = ctx.clone();
                let id = req.id;
                f.add_local_listener(move |r| {
                    let code = r
                        .as_ref()
                        .err()
                        .map(|e| e.code().to_string())
                        .unwrap_or_default();
                    let res = HttpResponse::new(500).body(code).for_request(id);
                    ctx2.write_and_flush(Message::user(res));
                });
                ctx.flush();
                return Ok(());
            }
            other => HttpResponse::new(200).body(other.to_string()),
        };
        ctx.write_and_flush(Message::user(res.for_request(req.id)));
        Ok(())
    }
}

fn read_exactly(c: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut buf = vec![0u8; n];
    c.read_exact(&mut buf).unwrap();
    buf
}

/// Reads one response head (through its empty line) as text.
fn read_head(c: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        c.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    String::from_utf8(head).unwrap()
}

fn content_length(head: &str) -> usize {
    head.lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .unwrap_or_else(|| panic!("no Content-Length in {head}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_file_body_is_framed_by_its_length_and_keeps_the_pipelined_order() {
    let path = temp_file("file-body");
    let file = Arc::new(File::open(&path).unwrap());
    let boss = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let workers = EventLoopGroup::new(1, LoopConfig::default()).unwrap();
    let server = ServerBootstrap::new()
        .group(boss.clone(), workers.clone())
        .child_handler(move |ch| {
            let codec = HttpServerCodec::new(HttpServerConfig::default()).expect("config");
            ch.pipeline().add_last("http", codec)?;
            ch.pipeline().add_last("files", Files(file.clone()))?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse::<SocketAddr>().unwrap())
        .wait()
        .unwrap();
    let mut c = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(
        b"GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /file HTTP/1.1\r\nHost: t\r\n\r\n\
          HEAD /file HTTP/1.1\r\nHost: t\r\n\r\nGET /part HTTP/1.1\r\nHost: t\r\n\r\n\
          GET /both HTTP/1.1\r\nHost: t\r\n\r\nGET /z HTTP/1.1\r\nHost: t\r\n\r\n",
    )
    .unwrap();
    let expected = content();

    let head = read_head(&mut c);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(read_exactly(&mut c, content_length(&head)), b"/a");

    let head = read_head(&mut c);
    assert_eq!(content_length(&head), expected.len(), "{head}");
    assert!(
        read_exactly(&mut c, expected.len()) == expected,
        "file bytes differ"
    );

    // HEAD: the file's length, no body.
    let head = read_head(&mut c);
    assert_eq!(content_length(&head), expected.len(), "{head}");

    let head = read_head(&mut c);
    assert!(head.starts_with("HTTP/1.1 206"), "{head}");
    assert_eq!(
        read_exactly(&mut c, content_length(&head)),
        &expected[10..20]
    );

    let head = read_head(&mut c);
    assert!(head.starts_with("HTTP/1.1 500"), "{head}");
    assert_eq!(
        read_exactly(&mut c, content_length(&head)),
        b"ERR_HTTP_FILE_BODY"
    );

    let head = read_head(&mut c);
    assert_eq!(read_exactly(&mut c, content_length(&head)), b"/z");
    drop(c);
    std::fs::remove_file(path).unwrap();
}
