//! A hand-driven loop on the test thread plus helpers for loopback tests.
#![allow(dead_code)]

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use netloop_transport::eventloop::{EventLoop, LocalLoop, LoopConfig, LoopDriver};
use netloop_transport::*;

pub const LIMIT: Duration = Duration::from_secs(20);

pub type Data = Rc<RefCell<Vec<u8>>>;
pub type Events = Rc<RefCell<Vec<String>>>;

pub struct Net {
    pub driver: LoopDriver,
    pub lp: Rc<LocalLoop>,
}

impl Net {
    pub fn new() -> Self {
        Self::with_config(LoopConfig::default())
    }

    pub fn with_config(cfg: LoopConfig) -> Self {
        let (_, driver) = EventLoop::attached(cfg).unwrap();
        let lp = driver.local().clone();
        Net { driver, lp }
    }

    pub fn handle(&self) -> EventLoop {
        self.driver.handle()
    }

    /// Drives the loop until `cond` holds; panics after a generous limit.
    pub fn run_until(&self, what: &str, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + LIMIT;
        loop {
            self.driver.run_once();
            if cond() {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for: {what}");
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Drives the loop for `d` (for "nothing happens" checks).
    pub fn run_for(&self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            self.driver.run_once();
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    /// A bound server on 127.0.0.1 whose accepted channels are set up by `child`.
    pub fn server(
        &self,
        options: ChannelOptions,
        child_options: ChannelOptions,
        child: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static,
    ) -> (Channel, SocketAddr) {
        let mut b = ServerBootstrap::new()
            .group(self.handle(), self.handle())
            .child_handler(child);
        b = apply(b, options, child_options);
        let f = b.bind("127.0.0.1:0".parse().unwrap());
        self.run_until("bind", || f.is_done());
        let h = f.result().unwrap().unwrap();
        let addr = h.local_addr().unwrap();
        let slot = Rc::new(RefCell::new(None));
        let s2 = slot.clone();
        with_channel(&h, move |c| *s2.borrow_mut() = Some(c.clone()));
        let ch = slot
            .borrow_mut()
            .take()
            .expect("server channel on this thread");
        (ch, addr)
    }

    /// A server whose children sink what they read, and a client connected to it (the
    /// connect has succeeded). Returns the server channel (keep it alive) and the client.
    pub fn client_of_sink_server(&self) -> (Channel, Channel) {
        let (server, addr) = self.server(
            ChannelOptions::default(),
            ChannelOptions::default(),
            sink_child,
        );
        let (client, connected) = self.client(ChannelOptions::default(), no_child, addr);
        self.run_until("connect", || connected.is_done());
        connected
            .result()
            .expect("connect completed")
            .expect("connected");
        (server, client)
    }

    pub fn client(
        &self,
        options: ChannelOptions,
        init: impl Fn(&Channel) -> HandlerResult + Send + Sync + 'static,
        remote: SocketAddr,
    ) -> (Channel, ChannelFuture) {
        let mut b = Bootstrap::new().group(self.handle()).handler(init);
        b = apply_client(b, options);
        b.connect_on(&self.lp, remote)
    }
}

thread_local! {
    static FOUND: RefCell<Option<Channel>> = const { RefCell::new(None) };
}

/// Runs `f` with the channel of a handle living on this thread.
pub fn with_channel(h: &ChannelHandle, f: impl FnOnce(&Channel) + 'static) {
    h.run(|c| FOUND.with(|s| *s.borrow_mut() = Some(c.clone())))
        .unwrap();
    let c = FOUND
        .with(|s| s.borrow_mut().take())
        .expect("channel lives on this thread");
    f(&c);
}

fn apply(mut b: ServerBootstrap, o: ChannelOptions, c: ChannelOptions) -> ServerBootstrap {
    b = b
        .option(ChannelOption::SoBacklog(o.so_backlog))
        .option(ChannelOption::AutoRead(o.auto_read))
        .option(ChannelOption::MaxConnections(o.max_connections));
    b = b
        .child_option(ChannelOption::AutoRead(c.auto_read))
        .child_option(ChannelOption::WriteBufferWaterMark(
            c.write_buffer_water_mark,
        ))
        .child_option(ChannelOption::WriteSpinCount(c.write_spin_count))
        .child_option(ChannelOption::MaxMessagesPerRead(c.max_messages_per_read))
        .child_option(ChannelOption::MaxBytesPerRead(c.max_bytes_per_read))
        .child_option(ChannelOption::AllowHalfClosure(c.allow_half_closure))
        .child_option(ChannelOption::RecvSizing(c.recv_sizing))
        .child_option(ChannelOption::TcpNoDelay(c.tcp_no_delay))
        .child_option(ChannelOption::SoKeepAlive(c.so_keep_alive))
        .child_option(ChannelOption::SoLinger(c.so_linger));
    if let Some(n) = c.so_sndbuf {
        b = b.child_option(ChannelOption::SoSndbuf(n));
    }
    if let Some(n) = c.so_rcvbuf {
        b = b.child_option(ChannelOption::SoRcvbuf(n));
    }
    b
}

fn apply_client(b: Bootstrap, o: ChannelOptions) -> Bootstrap {
    let mut b = b
        .option(ChannelOption::AutoRead(o.auto_read))
        .option(ChannelOption::ConnectTimeout(o.connect_timeout))
        .option(ChannelOption::WriteBufferWaterMark(
            o.write_buffer_water_mark,
        ))
        .option(ChannelOption::AllowHalfClosure(o.allow_half_closure))
        .option(ChannelOption::TcpNoDelay(o.tcp_no_delay));
    if let Some(n) = o.so_rcvbuf {
        b = b.option(ChannelOption::SoRcvbuf(n));
    }
    b
}

/// Deterministic test data.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    let mut x = seed as u32 | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Collects every byte read, and records the event names.
pub struct Sink {
    pub data: Rc<RefCell<Vec<u8>>>,
    pub events: Rc<RefCell<Vec<String>>>,
}

impl ChannelHandler for Sink {
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.events.borrow_mut().push("active".into());
        ctx.fire_channel_active();
        Ok(())
    }
    fn channel_inactive(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.events.borrow_mut().push("inactive".into());
        ctx.fire_channel_inactive();
        Ok(())
    }
    fn channel_unregistered(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.events.borrow_mut().push("unregistered".into());
        ctx.fire_channel_unregistered();
        Ok(())
    }
    fn channel_read(&self, _: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let b = msg
            .into_bytes()
            .map_err(|_| TransportError::UnsupportedMessage("test"))?;
        self.events.borrow_mut().push(format!("read {}", b.len()));
        self.data.borrow_mut().extend_from_slice(&b);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.events.borrow_mut().push("readComplete".into());
        ctx.fire_channel_read_complete();
        Ok(())
    }
    fn user_event_triggered(&self, _: &ChannelHandlerContext, e: UserEvent) -> HandlerResult {
        if e.is::<ChannelInputShutdown>() {
            self.events.borrow_mut().push("inputShutdown".into());
        }
        Ok(())
    }
    fn channel_writability_changed(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        self.events
            .borrow_mut()
            .push(format!("writable={}", ctx.channel().is_writable()));
        Ok(())
    }
    fn exception_caught(&self, _: &ChannelHandlerContext, e: TransportError) -> HandlerResult {
        self.events
            .borrow_mut()
            .push(format!("exception {}", e.code()));
        Ok(())
    }
}

thread_local! {
    /// Channels accepted on this thread's loop, for tests to reach them.
    pub static ACCEPTED: RefCell<Vec<Channel>> = const { RefCell::new(Vec::new()) };
    pub static SINKS: RefCell<Vec<(Data, Events)>> = const { RefCell::new(Vec::new()) };
}

/// A child initializer that installs a `Sink` and remembers the channel and its sink.
/// Child options that read 64 bytes at a time, with `opt` set too.
pub fn reads_of_64(opt: ChannelOption) -> ChannelOptions {
    ChannelOptions::default()
        .with(opt)
        .unwrap()
        .with(ChannelOption::RecvSizing(RecvSizing {
            minimum: 64,
            initial: 64,
            maximum: 64,
        }))
        .unwrap()
}

pub fn sink_child(ch: &Channel) -> HandlerResult {
    let data = Rc::new(RefCell::new(Vec::new()));
    let events = Rc::new(RefCell::new(Vec::new()));
    ch.pipeline().add_last(
        "sink",
        Sink {
            data: data.clone(),
            events: events.clone(),
        },
    )?;
    ACCEPTED.with(|a| a.borrow_mut().push(ch.clone()));
    SINKS.with(|s| s.borrow_mut().push((data, events)));
    Ok(())
}

pub fn accepted(i: usize) -> Option<Channel> {
    ACCEPTED.with(|a| a.borrow().get(i).cloned())
}

pub fn accepted_count() -> usize {
    ACCEPTED.with(|a| a.borrow().len())
}

pub fn sink(i: usize) -> (Data, Events) {
    SINKS.with(|s| s.borrow()[i].clone())
}

pub fn has(events: &Rc<RefCell<Vec<String>>>, e: &str) -> bool {
    events.borrow().iter().any(|x| x == e)
}

/// A client initializer that adds nothing.
pub fn no_child(_: &Channel) -> HandlerResult {
    Ok(())
}

/// A listener whose backlog is full: connects to it stay pending (SYNs are dropped).
pub fn black_hole() -> (std::net::TcpListener, Vec<socket2::Socket>, SocketAddr) {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.listen(0).unwrap();
    let l: std::net::TcpListener = s.into();
    let addr = l.local_addr().unwrap();
    let mut fillers = Vec::new();
    for _ in 0..2 {
        let c = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        c.set_nonblocking(true).unwrap();
        let _ = c.connect(&addr.into());
        fillers.push(c);
    }
    std::thread::sleep(Duration::from_millis(50));
    (l, fillers, addr)
}

/// Writes back what it reads, flushing once per read batch.
pub struct Echo;
impl ChannelHandler for Echo {
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        ctx.write(msg);
        Ok(())
    }
    fn channel_read_complete(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.flush();
        Ok(())
    }
}
