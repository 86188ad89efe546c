//! ws-load: the WebSocket load client of benches/node/ws.mjs. One thread, mio (edge-triggered),
//! N connections to one server, RFC 6455 client frames (masked text frames of SIZE bytes).
//!
//!   ws-load --port P [--host 127.0.0.1] [--path /] [--conns N] [--size 64] [--seconds S]
//!           [--warmup S] [--mode echo|fanout|idle] [--rate MSG_PER_S] [--depth D]
//!           [--window W] [--server-pid PID] [--sources K] [--clk-tck 100] [--settle S]
//!           [--gc-signal] [--deflate]
//!
//! Modes:
//!   echo    every connection keeps D messages in flight (default 1) and sends the next when one
//!           comes back; with --rate R (messages/s over all connections) a connection that got
//!           its answer waits for the next slot of the schedule (a fixed rate: the server's CPU
//!           per message at that rate is what the harness reports beside the saturated one).
//!   fanout  every connection first sends `sub` and waits for one message back (the server
//!           subscribed it to the topic); then connection 0 publishes SIZE-byte messages, at
//!           most W (default 16) ahead of what every connection received on average; the
//!           figure is the messages delivered to all connections per second.
//!   idle    opens N connections (after the handshake nothing is sent) and reports the server's
//!           RSS before and after, settled for --settle seconds (default 2); with --gc-signal
//!           the server gets SIGUSR2 (the bench servers collect garbage on it) 0.5 s before
//!           each reading. With --deflate every connection first sends one compressed
//!           message and waits for its answer, so the server holds what permessage-deflate
//!           keeps per connection once it was used.
//!
//! --deflate offers permessage-deflate (RFC 7692, with client_max_window_bits) and fails when
//! the server does not accept it; the messages this client sends stay uncompressed (RSV1 clear,
//! which the extension allows) except the idle mode's one compressed message.
//!
//! Connections are made at most 128 handshakes at a time (the server's accept backlog never
//! overflows); with --sources K they are bound round-robin to 127.0.0.1 ... 127.0.0.K (more
//! than one source address when N exceeds the ephemeral port range).
//!
//! Prints one JSON object on stdout: messages and rate in the measured window, round-trip
//! percentiles (echo), the server's utime+stime ticks over the window (/proc/PID/stat, all its
//! threads), the client's own CPU share (so the harness can tell when the client is the
//! bottleneck), the server's RSS (idle), errors. Exits 1 when a connection fails.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::exit;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
/// The Sec-WebSocket-Accept of KEY (RFC 6455, section 1.3).
const ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";
const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];
const MAX_PENDING_HANDSHAKES: usize = 128;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Echo,
    Fanout,
    Idle,
}

struct Opts {
    host: Ipv4Addr,
    port: u16,
    path: String,
    conns: usize,
    size: usize,
    seconds: f64,
    warmup: f64,
    mode: Mode,
    rate: f64,
    depth: usize,
    window: u64,
    server_pid: Option<u32>,
    sources: u8,
    clk_tck: f64,
    settle: f64,
    /// Idle: send the server SIGUSR2 (a full collection in the bench servers) before each
    /// RSS reading, so the figure is what it keeps, not garbage not yet collected.
    gc_signal: bool,
    /// Offer permessage-deflate (idle: send one compressed message per connection).
    deflate: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("ws-load: {msg}");
    exit(2)
}

fn parse() -> Opts {
    let mut o = Opts {
        host: Ipv4Addr::LOCALHOST,
        port: 0,
        path: "/".into(),
        conns: 50,
        size: 64,
        seconds: 3.0,
        warmup: 1.0,
        mode: Mode::Echo,
        rate: 0.0,
        depth: 1,
        window: 16,
        server_pid: None,
        sources: 1,
        clk_tck: 100.0,
        settle: 2.0,
        gc_signal: false,
        deflate: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--gc-signal" || args[i] == "--deflate" {
            if args[i] == "--deflate" {
                o.deflate = true;
            } else {
                o.gc_signal = true;
            }
            i += 1;
            continue;
        }
        let v = args
            .get(i + 1)
            .cloned()
            .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])));
        let num = |s: &str| -> f64 {
            s.parse()
                .unwrap_or_else(|_| usage(&format!("not a number: {s}")))
        };
        match args[i].as_str() {
            "--host" => {
                o.host = v
                    .parse()
                    .unwrap_or_else(|_| usage("--host: an IPv4 address"))
            }
            "--port" => o.port = num(&v) as u16,
            "--path" => o.path = v,
            "--conns" => o.conns = num(&v) as usize,
            "--size" => o.size = num(&v) as usize,
            "--seconds" => o.seconds = num(&v),
            "--warmup" => o.warmup = num(&v),
            "--rate" => o.rate = num(&v),
            "--depth" => o.depth = (num(&v) as usize).max(1),
            "--window" => o.window = (num(&v) as u64).max(1),
            "--server-pid" => o.server_pid = Some(num(&v) as u32),
            "--sources" => o.sources = (num(&v) as u8).max(1),
            "--clk-tck" => o.clk_tck = num(&v),
            "--settle" => o.settle = num(&v),
            "--mode" => {
                o.mode = match v.as_str() {
                    "echo" => Mode::Echo,
                    "fanout" => Mode::Fanout,
                    "idle" => Mode::Idle,
                    _ => usage("--mode: echo, fanout or idle"),
                }
            }
            other => usage(&format!("unknown option {other}")),
        }
        i += 2;
    }
    if o.port == 0 {
        usage("--port is required");
    }
    o
}

/// A masked client text frame carrying `payload`.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 14);
    f.push(0x81);
    let n = payload.len();
    if n < 126 {
        f.push(0x80 | n as u8);
    } else if n < 65536 {
        f.push(0x80 | 126);
        f.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        f.push(0x80 | 127);
        f.extend_from_slice(&(n as u64).to_be_bytes());
    }
    f.extend_from_slice(&MASK);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ MASK[i % 4]));
    f
}

/// Bytes of the idle mode's one compressed message once inflated: above the usual 1,024-byte
/// threshold, so a server that echoes it compresses the answer (and keeps a compressor).
const DEFLATE_MESSAGE: usize = 2000;

/// A masked client text frame of one compressed message (RSV1 set): DEFLATE_MESSAGE letters as
/// a non-final stored DEFLATE block (BFINAL 0, BTYPE 00, LEN, NLEN), which is what RFC 7692
/// sends once the empty stored block's 00 00 ff ff tail is taken off; any inflater accepts it,
/// with or without context takeover.
fn compressed_frame() -> Vec<u8> {
    let len = DEFLATE_MESSAGE as u16;
    let mut block = vec![0x00];
    block.extend_from_slice(&len.to_le_bytes());
    block.extend_from_slice(&(!len).to_le_bytes());
    block.extend((0..DEFLATE_MESSAGE).map(|i| b'a' + (i % 26) as u8));
    let mut f = frame(&block);
    f[0] = 0xc1;
    f
}

/// utime + stime of a process (all its threads), in clock ticks.
fn proc_ticks(pid: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

/// Asks server `pid` for a full collection (SIGUSR2, through kill(1)) and gives it 0.5 s.
fn collect(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-USR2", &pid.to_string()])
        .status();
    std::thread::sleep(Duration::from_millis(500));
}

/// VmRSS of a process in KiB.
fn rss_kib(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[derive(PartialEq)]
enum State {
    Handshake,
    Open,
}

struct Conn {
    sock: TcpStream,
    state: State,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    /// Send times of the messages in flight (echo).
    sent: VecDeque<Instant>,
    /// Messages received (data frames with FIN).
    received: u64,
}

/// What a batch of frames held.
#[derive(Default)]
struct Got {
    messages: u64,
    pings: Vec<Vec<u8>>,
    close: bool,
}

/// Parses the server frames at the start of `buf` (unmasked); returns the bytes consumed.
fn parse_frames(buf: &[u8], got: &mut Got) -> Result<usize, String> {
    let mut at = 0;
    loop {
        let b = &buf[at..];
        if b.len() < 2 {
            return Ok(at);
        }
        if b[1] & 0x80 != 0 {
            return Err("the server sent a masked frame".into());
        }
        let (len, hdr) = match b[1] & 0x7f {
            126 if b.len() >= 4 => (u16::from_be_bytes([b[2], b[3]]) as usize, 4),
            127 if b.len() >= 10 => (
                u64::from_be_bytes(b[2..10].try_into().unwrap()) as usize,
                10,
            ),
            126 | 127 => return Ok(at),
            n => (n as usize, 2),
        };
        if b.len() < hdr + len {
            return Ok(at);
        }
        let fin = b[0] & 0x80 != 0;
        match b[0] & 0x0f {
            0..=2 => {
                if fin {
                    got.messages += 1;
                }
            }
            8 => got.close = true,
            9 => got.pings.push(b[hdr..hdr + len].to_vec()),
            10 => {}
            op => return Err(format!("reserved opcode {op}")),
        }
        at += hdr + len;
    }
}

struct Load {
    o: Opts,
    poll: Poll,
    conns: Vec<Conn>,
    pending_handshakes: usize,
    errors: Vec<String>,
    /// Round trips in µs during the measured window (echo).
    rtts: Vec<u32>,
    measuring: bool,
    msg: Vec<u8>,
    /// Messages received by all connections since the load started (fan-out: deliveries).
    delivered: u64,
    /// Fan-out: messages published; connections that saw their `sub` answered.
    published: u64,
    subscribed: usize,
    /// Echo at a fixed rate: connections waiting for a slot, and the slots owed.
    idle: VecDeque<usize>,
    credit: f64,
    running: bool,
}

impl Load {
    fn connect(&mut self, i: usize) -> io::Result<()> {
        use socket2::{Domain, Socket, Type};
        let addr = SocketAddr::V4(SocketAddrV4::new(self.o.host, self.o.port));
        let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
        if self.o.sources > 1 {
            let src = Ipv4Addr::new(127, 0, 0, 1 + (i % self.o.sources as usize) as u8);
            s.bind(&SocketAddr::V4(SocketAddrV4::new(src, 0)).into())?;
        }
        s.connect(&addr.into())?;
        s.set_nodelay(true)?;
        s.set_nonblocking(true)?;
        let mut sock = TcpStream::from_std(s.into());
        self.poll.registry().register(
            &mut sock,
            Token(i),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        let ext = if self.o.deflate {
            "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
        } else {
            ""
        };
        let req = format!(
            "GET {} HTTP/1.1\r\nHost: {}:{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {KEY}\r\nSec-WebSocket-Version: 13\r\n{ext}\r\n",
            self.o.path, self.o.host, self.o.port
        );
        self.conns.push(Conn {
            sock,
            state: State::Handshake,
            inbuf: Vec::with_capacity(256),
            out: req.into_bytes(),
            sent: VecDeque::new(),
            received: 0,
        });
        self.pending_handshakes += 1;
        self.flush(i);
        Ok(())
    }

    fn fail(&mut self, i: usize, why: String) {
        if self.errors.len() < 5 {
            self.errors.push(format!("connection {i}: {why}"));
        } else if self.errors.len() == 5 {
            self.errors.push("...".into());
        }
    }

    fn flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let mut at = 0;
        while at < c.out.len() {
            match c.sock.write(&c.out[at..]) {
                Ok(0) => break,
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    c.out.clear();
                    let why = format!("write: {e}");
                    self.fail(i, why);
                    return;
                }
            }
        }
        c.out.drain(..at);
    }

    fn send(&mut self, i: usize) {
        let c = &mut self.conns[i];
        c.out.extend_from_slice(&self.msg);
        c.sent.push_back(Instant::now());
        self.flush(i);
    }

    fn readable(&mut self, i: usize) {
        let mut buf = [0u8; 65536];
        loop {
            let c = &mut self.conns[i];
            match c.sock.read(&mut buf) {
                Ok(0) => {
                    if self.running || c.state == State::Handshake {
                        self.fail(i, "closed by the server".into());
                    }
                    let _ = self.poll.registry().deregister(&mut self.conns[i].sock);
                    return;
                }
                Ok(n) => c.inbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.fail(i, format!("read: {e}"));
                    let _ = self.poll.registry().deregister(&mut self.conns[i].sock);
                    return;
                }
            }
        }
        let c = &mut self.conns[i];
        if c.state == State::Handshake {
            let Some(end) = c.inbuf.windows(4).position(|w| w == b"\r\n\r\n") else {
                return;
            };
            let head = String::from_utf8_lossy(&c.inbuf[..end]).to_string();
            c.inbuf.drain(..end + 4);
            self.pending_handshakes -= 1;
            if !head.starts_with("HTTP/1.1 101") || !head.contains(ACCEPT) {
                let first = head.lines().next().unwrap_or("").to_string();
                self.fail(i, format!("handshake refused: {first}"));
                return;
            }
            if self.o.deflate && !head.to_ascii_lowercase().contains("permessage-deflate") {
                self.fail(i, "the server did not accept permessage-deflate".into());
                return;
            }
            let c = &mut self.conns[i];
            c.state = State::Open;
            if self.o.mode == Mode::Fanout {
                c.out.extend_from_slice(&frame(b"sub"));
                self.flush(i);
            } else if self.o.mode == Mode::Idle && self.o.deflate {
                c.out.extend_from_slice(&compressed_frame());
                self.flush(i);
            }
        }
        let mut got = Got::default();
        let c = &mut self.conns[i];
        match parse_frames(&c.inbuf, &mut got) {
            Ok(n) => {
                c.inbuf.drain(..n);
            }
            Err(e) => {
                self.fail(i, e);
                return;
            }
        }
        for p in got.pings {
            // A pong with the ping's payload, masked.
            let mut f = frame(&p);
            f[0] = 0x8a;
            c.out.extend_from_slice(&f);
        }
        if got.close && self.running {
            self.fail(i, "the server sent a close frame".into());
        }
        let c = &mut self.conns[i];
        if got.messages == 0 {
            self.flush(i);
            return;
        }
        let before = c.received;
        c.received += got.messages;
        match self.o.mode {
            Mode::Fanout => {
                if before == 0 {
                    self.subscribed += 1; // its first message answers `sub`
                    self.delivered += got.messages - 1;
                } else {
                    self.delivered += got.messages;
                }
                self.flush(i);
            }
            Mode::Echo => {
                let now = Instant::now();
                for _ in 0..got.messages {
                    if let Some(t) = c.sent.pop_front() {
                        if self.measuring {
                            self.rtts.push(
                                now.duration_since(t).as_micros().min(u32::MAX as u128) as u32
                            );
                        }
                    }
                }
                self.delivered += got.messages;
                if !self.running {
                    self.flush(i);
                    return;
                }
                if self.o.rate > 0.0 {
                    for _ in 0..got.messages {
                        self.idle.push_back(i);
                    }
                    self.flush(i);
                } else {
                    for _ in 0..got.messages {
                        let c = &mut self.conns[i];
                        c.out.extend_from_slice(&self.msg);
                        c.sent.push_back(now);
                    }
                    self.flush(i);
                }
            }
            Mode::Idle => {
                if before == 0 {
                    self.subscribed += 1; // the answer to its compressed message
                }
                self.flush(i)
            }
        }
    }

    /// One turn of the poll loop, waiting at most `timeout`.
    fn turn(&mut self, events: &mut Events, timeout: Duration) {
        if let Err(e) = self.poll.poll(events, Some(timeout)) {
            if e.kind() != io::ErrorKind::Interrupted {
                usage(&format!("poll: {e}"));
            }
        }
        for ev in events.iter() {
            let i = ev.token().0;
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                self.readable(i);
            }
            if ev.is_writable() && !self.conns[i].out.is_empty() {
                self.flush(i);
            }
        }
    }

    /// Publishes while fewer than `window` messages are ahead of the average delivery.
    fn publish(&mut self) {
        let n = self.conns.len() as u64;
        while self.published < self.o.window + self.delivered / n {
            self.published += 1;
            let c = &mut self.conns[0];
            c.out.extend_from_slice(&self.msg);
            if c.out.len() > 1 << 20 {
                break;
            }
        }
        self.flush(0);
    }

    /// Echo at a fixed rate: hands the slots owed since `last` to waiting connections.
    fn paced(&mut self, last: &mut Instant) {
        let now = Instant::now();
        self.credit += self.o.rate * now.duration_since(*last).as_secs_f64();
        *last = now;
        // No bursts after a stall: at most one slot per connection is owed.
        self.credit = self.credit.min(self.conns.len() as f64);
        while self.credit >= 1.0 {
            let Some(i) = self.idle.pop_front() else {
                break;
            };
            self.credit -= 1.0;
            self.send(i);
        }
    }

    fn run_for(&mut self, events: &mut Events, secs: f64) {
        let end = Instant::now() + Duration::from_secs_f64(secs);
        let mut last = Instant::now();
        loop {
            let now = Instant::now();
            if now >= end || self.errors.len() > 5 {
                return;
            }
            let mut timeout = end - now;
            if self.o.mode == Mode::Echo && self.o.rate > 0.0 {
                timeout = timeout.min(Duration::from_micros(200));
            }
            self.turn(events, timeout);
            match self.o.mode {
                Mode::Fanout => self.publish(),
                Mode::Echo if self.o.rate > 0.0 => self.paced(&mut last),
                _ => {}
            }
        }
    }
}

fn cpu_self() -> u64 {
    proc_ticks("self")
}

fn main() {
    let o = parse();
    let poll = Poll::new().unwrap_or_else(|e| usage(&format!("poll: {e}")));
    let payload: Vec<u8> = (0..o.size).map(|i| b'a' + (i % 26) as u8).collect();
    let msg = frame(&payload);
    let mut l = Load {
        poll,
        conns: Vec::with_capacity(o.conns),
        pending_handshakes: 0,
        errors: Vec::new(),
        rtts: Vec::new(),
        measuring: false,
        msg,
        delivered: 0,
        published: 0,
        subscribed: 0,
        idle: VecDeque::new(),
        credit: 0.0,
        running: false,
        o,
    };
    let mut events = Events::with_capacity(1024);
    let pid = l.o.server_pid;
    let gc = |p: u32| {
        if l.o.gc_signal {
            collect(p)
        }
        rss_kib(p)
    };
    let rss_before = pid.map(gc).unwrap_or(0);

    // Connect, at most MAX_PENDING_HANDSHAKES at a time.
    let t_connect = Instant::now();
    for i in 0..l.o.conns {
        while l.pending_handshakes >= MAX_PENDING_HANDSHAKES && l.errors.is_empty() {
            l.turn(&mut events, Duration::from_millis(100));
        }
        if let Err(e) = l.connect(i) {
            l.fail(i, format!("connect: {e}"));
            break;
        }
        if !l.errors.is_empty() {
            break;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while l.pending_handshakes > 0 && l.errors.is_empty() && Instant::now() < deadline {
        l.turn(&mut events, Duration::from_millis(100));
    }
    let answers = l.o.mode == Mode::Fanout || (l.o.mode == Mode::Idle && l.o.deflate);
    if answers {
        while l.subscribed < l.conns.len() && l.errors.is_empty() && Instant::now() < deadline {
            l.turn(&mut events, Duration::from_millis(100));
        }
    }
    let connect_s = t_connect.elapsed().as_secs_f64();
    if l.pending_handshakes > 0 || (answers && l.subscribed < l.conns.len()) {
        l.errors.push(format!(
            "{} handshakes, {} first messages of {} connections unanswered after 30 s",
            l.pending_handshakes,
            l.conns.len() - l.subscribed,
            l.conns.len()
        ));
    }
    if !l.errors.is_empty() {
        eprintln!("ws-load: {}", l.errors.join("; "));
        exit(1);
    }

    if l.o.mode == Mode::Idle {
        l.run_for(&mut events, l.o.settle);
        let rss_after = pid
            .map(|p| {
                if l.o.gc_signal {
                    collect(p)
                }
                rss_kib(p)
            })
            .unwrap_or(0);
        let n = l.conns.len() as f64;
        println!(
            "{{\"mode\":\"idle\",\"connections\":{},\"connect_s\":{connect_s:.3},\"rss_before_kib\":{rss_before},\"rss_after_kib\":{rss_after},\"bytes_per_connection\":{:.1},\"errors\":{}}}",
            l.conns.len(),
            (rss_after as f64 - rss_before as f64) * 1024.0 / n,
            l.errors.len()
        );
        return;
    }

    // Start the load, warm up, then measure.
    l.running = true;
    match l.o.mode {
        Mode::Echo if l.o.rate > 0.0 => {
            for _ in 0..l.o.depth {
                l.idle.extend(0..l.conns.len());
            }
        }
        Mode::Echo => {
            for _ in 0..l.o.depth {
                for i in 0..l.conns.len() {
                    l.send(i);
                }
            }
        }
        Mode::Fanout => l.publish(),
        Mode::Idle => {}
    }
    l.run_for(&mut events, l.o.warmup);
    let pid_s = pid.map(|p| p.to_string());
    let s0 = pid_s.as_deref().map(proc_ticks).unwrap_or(0);
    let c0 = cpu_self();
    let d0 = l.delivered;
    let t0 = Instant::now();
    l.measuring = true;
    let seconds = l.o.seconds;
    l.run_for(&mut events, seconds);
    let elapsed = t0.elapsed().as_secs_f64();
    let s1 = pid_s.as_deref().map(proc_ticks).unwrap_or(0);
    let c1 = cpu_self();
    let messages = l.delivered - d0;
    l.measuring = false;
    l.running = false;
    let mut rtts = std::mem::take(&mut l.rtts);
    rtts.sort_unstable();
    let pct = |p: f64| -> u32 {
        if rtts.is_empty() {
            0
        } else {
            rtts[((rtts.len() - 1) as f64 * p).round() as usize]
        }
    };
    let errors: Vec<String> = l.errors.iter().map(|e| format!("{e:?}")).collect();
    println!(
        "{{\"mode\":\"{}\",\"connections\":{},\"size\":{},\"rate_target\":{},\"seconds\":{elapsed:.4},\"messages\":{messages},\"total_messages\":{},\"msg_per_s\":{:.1},\"published\":{},\"p50_us\":{},\"p99_us\":{},\"server_cpu_ticks\":{},\"clock_ticks_per_s\":{},\"client_cpu_share\":{:.4},\"connect_s\":{connect_s:.3},\"errors\":[{}]}}",
        if l.o.mode == Mode::Echo { "echo" } else { "fanout" },
        l.conns.len(),
        l.o.size,
        l.o.rate,
        l.delivered,
        messages as f64 / elapsed,
        l.published,
        pct(0.5),
        pct(0.99),
        s1 - s0,
        l.o.clk_tck,
        (c1 - c0) as f64 / l.o.clk_tck / elapsed,
        errors.join(",")
    );
    if !l.errors.is_empty() {
        exit(1);
    }
}
