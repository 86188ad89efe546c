//! TLS echo server on the netloop core, for benches/node/tls.mjs (the Rust core against
//! tokio-rustls): one event loop both accepts and serves; each connection's pipeline is an
//! `SslHandler` then an echo handler that writes back what it reads and flushes once per read
//! batch (as examples/rust/echo_server.rs does).
//!
//! `cargo run --release -p netloop-tls --example tls_echo_server -- CERT.pem KEY.pem [ADDR]`
//! (ADDR default 127.0.0.1:0: the kernel picks the port). Prints
//! `tls_echo_server listening on ADDR` once it accepts. With `NETLOOP_TLS_OWN_RECORDS=1`
//! TLS 1.3 records go through netloop's experimental own record layer instead of rustls's
//! (A/B measurements).

use std::net::SocketAddr;
use std::time::Duration;

use netloop_tls::{PemIdentity, SslContext, SslOptions};
use netloop_transport::eventloop::{EventLoopGroup, LoopConfig};
use netloop_transport::*;

/// Writes back what it reads; flushes once per read batch.
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
    fn exception_caught(&self, ctx: &ChannelHandlerContext, _: TransportError) -> HandlerResult {
        // A load client closing at the end of a run resets connections: close quietly.
        ctx.close();
        Ok(())
    }
}

/// What the core reports (the `log` crate, target `netloop`), one line each on stderr.
struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, r: &log::Record<'_>) {
        eprintln!("{}", r.args());
    }
    fn flush(&self) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _ = log::set_logger(&Stderr);
    log::set_max_level(log::LevelFilter::Debug);
    let mut args = std::env::args().skip(1);
    let usage = "usage: tls_echo_server CERT.pem KEY.pem [ADDR]";
    let cert = std::fs::read(args.next().ok_or(usage)?)?;
    let key = std::fs::read(args.next().ok_or(usage)?)?;
    let addr: SocketAddr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:0".into())
        .parse()?;
    let tls = SslContext::server(&SslOptions {
        identity: Some(PemIdentity {
            chain: cert,
            key,
            ocsp: None,
        }),
        experimental_own_records: std::env::var("NETLOOP_TLS_OWN_RECORDS").is_ok_and(|v| v == "1"),
        ..SslOptions::default()
    })?;

    // NETLOOP_SPIN_US: the loop's spin before sleeping (default: the core's).
    let spin = std::env::var("NETLOOP_SPIN_US")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(
            LoopConfig::default().spin_before_sleep,
            Duration::from_micros,
        );
    let group = EventLoopGroup::new(
        1,
        LoopConfig {
            name: "tls-echo".into(),
            spin_before_sleep: spin,
            ..LoopConfig::default()
        },
    )?;
    let server = ServerBootstrap::new()
        .group(group.clone(), group.clone())
        .option(ChannelOption::SoBacklog(1024))
        .child_option(ChannelOption::TcpNoDelay(true))
        .child_handler(move |ch| {
            let tls = tls.new_handler(None).map_err(|e| e.into_transport())?;
            ch.pipeline().add_last("tls", tls)?;
            ch.pipeline().add_last("echo", Echo)?;
            Ok(())
        })
        .bind(addr)
        .wait()?;
    println!(
        "tls_echo_server listening on {}",
        server.local_addr().unwrap_or(addr)
    );
    server.close_future().wait()?;
    group
        .shutdown_gracefully(Duration::ZERO, Duration::from_secs(2))
        .wait()?;
    Ok(())
}
