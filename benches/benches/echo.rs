//! Echo round trips over loopback on the netloop core: a server on one worker loop, clients on
//! another. The clients run the round trips themselves (each echo triggers the next send), so
//! the figures are loop-to-loop: no thread hop to the bench thread per round trip.
//!
//! - `echo/latency_1conn_64B`: one connection, one 64-byte message in flight.
//! - `echo/throughput_50conn_64B`: 50 connections each with one message in flight; one
//!   element = one round trip.

use std::cell::{Cell, RefCell};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig, Promise};
use netloop_transport::*;

const SIZE: usize = 64;

struct Echo;
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

/// Starts a run of `round_trips` echoes on a client channel.
struct Start {
    round_trips: u64,
    done: Promise<(), TransportError>,
}

/// Sends, waits for the whole echo, sends again, until the run's count is reached.
#[derive(Default)]
struct PingPong {
    left: Cell<u64>,
    received: Cell<usize>,
    done: RefCell<Option<Promise<(), TransportError>>>,
}

fn payload() -> Bytes {
    Bytes::from_static(&[b'x'; SIZE])
}

impl ChannelHandler for PingPong {
    fn user_event_triggered(&self, ctx: &ChannelHandlerContext, event: UserEvent) -> HandlerResult {
        if let Ok(start) = event.downcast::<Start>() {
            self.left.set(start.round_trips);
            *self.done.borrow_mut() = Some(start.done);
            ctx.write_and_flush(payload());
        }
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let mut got = self.received.get() + msg.as_bytes().map_or(0, |b| b.len());
        while got >= SIZE {
            got -= SIZE;
            let left = self.left.get().saturating_sub(1);
            self.left.set(left);
            if left == 0 {
                if let Some(p) = self.done.borrow_mut().take() {
                    p.try_success(());
                }
            } else {
                ctx.write_and_flush(payload());
            }
        }
        self.received.set(got);
        Ok(())
    }
}

struct Setup {
    server_group: EventLoopGroup,
    client_group: EventLoopGroup,
    server: ChannelHandle,
}

fn setup() -> Setup {
    let cfg = |name: &str| LoopConfig {
        name: name.into(),
        ..LoopConfig::default()
    };
    let server_group = EventLoopGroup::new(1, cfg("echo-server")).unwrap();
    let client_group = EventLoopGroup::new(1, cfg("echo-client")).unwrap();
    let server = ServerBootstrap::new()
        .group(server_group.clone(), server_group.clone())
        .child_handler(|ch| {
            ch.pipeline().add_last("echo", Echo)?;
            Ok(())
        })
        .bind("127.0.0.1:0".parse().unwrap())
        .wait()
        .unwrap();
    Setup {
        server_group,
        client_group,
        server,
    }
}

fn connect(s: &Setup, n: usize) -> Vec<ChannelHandle> {
    let addr: SocketAddr = s.server.local_addr().unwrap();
    let b = Bootstrap::new()
        .group(s.client_group.clone())
        .handler(|ch| {
            ch.pipeline().add_last("ping-pong", PingPong::default())?;
            Ok(())
        });
    (0..n).map(|_| b.connect(addr).wait().unwrap()).collect()
}

/// Runs `per_conn` round trips on every connection at once; returns the elapsed time.
fn run(conns: &[ChannelHandle], per_conn: u64) -> Duration {
    let start = Instant::now();
    let futures: Vec<_> = conns
        .iter()
        .map(|h| {
            let done = Promise::new();
            let f = done.future();
            h.run(move |ch| {
                ch.pipeline().fire_user_event(Start {
                    round_trips: per_conn,
                    done,
                })
            })
            .unwrap();
            f
        })
        .collect();
    for f in futures {
        f.wait_timeout(Duration::from_secs(60))
            .expect("echo run timed out")
            .unwrap();
    }
    start.elapsed()
}

fn echo(c: &mut Criterion) {
    let s = setup();
    let mut g = c.benchmark_group("echo");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));

    let one = connect(&s, 1);
    g.throughput(Throughput::Elements(1));
    g.bench_function("latency_1conn_64B", |b| {
        b.iter_custom(|iters| run(&one, iters.max(1)))
    });

    let fifty = connect(&s, 50);
    g.throughput(Throughput::Elements(50));
    g.sample_size(20);
    g.bench_function("throughput_50conn_64B", |b| {
        b.iter_custom(|iters| run(&fifty, iters.max(1)))
    });
    g.finish();

    for h in one.iter().chain(&fifty) {
        let _ = h.close().wait_timeout(Duration::from_secs(2));
    }
    let _ = s.server.close().wait_timeout(Duration::from_secs(2));
    let _ = s
        .client_group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait();
    let _ = s
        .server_group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait();
}

criterion_group!(benches, echo);
criterion_main!(benches);
