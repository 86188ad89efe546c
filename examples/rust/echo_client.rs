//! Echo client on the netloop core: N connections each send a message and wait for its echo,
//! again and again, for a few seconds; prints round trips per second and mean latency.
//!
//! `cargo run --release -p netloop-transport --example echo_client -- [addr] [connections] [size] [seconds]`
//! (defaults: 127.0.0.1:8007, 1, 64, 3). Start `echo_server` first.

use std::cell::Cell;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

/// Sends `payload`, waits until as many bytes came back, sends again.
struct PingPong {
    payload: Bytes,
    received: Cell<usize>,
    round_trips: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl ChannelHandler for PingPong {
    fn channel_active(&self, ctx: &ChannelHandlerContext) -> HandlerResult {
        ctx.write_and_flush(self.payload.clone());
        ctx.fire_channel_active();
        Ok(())
    }
    fn channel_read(&self, ctx: &ChannelHandlerContext, msg: Message) -> HandlerResult {
        let n = msg.as_bytes().map_or(0, |b| b.len());
        let mut got = self.received.get() + n;
        while got >= self.payload.len() {
            got -= self.payload.len();
            self.round_trips.fetch_add(1, Ordering::Relaxed);
            if self.stop.load(Ordering::Relaxed) {
                ctx.close();
                return Ok(());
            }
            ctx.write_and_flush(self.payload.clone());
        }
        self.received.set(got);
        Ok(())
    }
    fn exception_caught(
        &self,
        ctx: &ChannelHandlerContext,
        error: TransportError,
    ) -> HandlerResult {
        eprintln!("echo_client: {}: {error}", error.code());
        ctx.close();
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:8007".into())
        .parse()?;
    let connections: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1);
    let size: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(64);
    let seconds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);

    let group = EventLoopGroup::new(
        1,
        LoopConfig {
            name: "client".into(),
            ..LoopConfig::default()
        },
    )?;
    let round_trips = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let payload = Bytes::from(vec![b'x'; size]);
    let (rt, st) = (round_trips.clone(), stop.clone());
    let bootstrap = Bootstrap::new().group(group.clone()).handler(move |ch| {
        ch.pipeline().add_last(
            "ping-pong",
            PingPong {
                payload: payload.clone(),
                received: Cell::new(0),
                round_trips: rt.clone(),
                stop: st.clone(),
            },
        )?;
        Ok(())
    });
    let start = Instant::now();
    let channels = (0..connections)
        .map(|_| bootstrap.connect(addr).wait())
        .collect::<Result<Vec<_>, _>>()?;
    std::thread::sleep(Duration::from_secs(seconds));
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    for ch in &channels {
        let _ = ch.close_future().wait_timeout(Duration::from_secs(2));
    }
    let n = round_trips.load(Ordering::Relaxed);
    println!(
        "{connections} connection(s), {size}-byte messages: {n} round trips in {elapsed:.2} s = {:.0}/s, mean latency {:.1} µs",
        n as f64 / elapsed,
        elapsed * 1e6 * connections as f64 / n.max(1) as f64
    );
    group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait()?;
    Ok(())
}
