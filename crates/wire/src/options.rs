//! Channel options by their JS (Netty camelCase) names. Values arrive as numbers: booleans
//! as 0/1, "none" (no connect timeout, no linger) as a negative number. TS validates types
//! and ranges first; the transport checks consistency (water marks) again.

use std::time::Duration;

use netloop_transport::{ChannelOption, ChannelOptions};

use crate::error::{invalid_arg, WireResult};

fn duration(v: f64) -> Option<Duration> {
    (v >= 0.0 && v.is_finite()).then(|| Duration::from_secs_f64(v / 1000.0))
}

fn count(name: &str, v: f64) -> WireResult<usize> {
    if v.is_finite() && v >= 0.0 && v.fract() == 0.0 {
        Ok(v as usize)
    } else {
        Err(invalid_arg(format!(
            "{name} must be a non-negative integer, got {v}"
        )))
    }
}

/// The option `name` set to `v`.
pub fn option(name: &str, v: f64) -> WireResult<ChannelOption> {
    let on = v != 0.0;
    Ok(match name {
        "tcpNoDelay" => ChannelOption::TcpNoDelay(on),
        "soKeepAlive" => ChannelOption::SoKeepAlive(on),
        "soReuseaddr" => ChannelOption::SoReuseaddr(on),
        "soReusePort" => ChannelOption::SoReuseport(on),
        "autoRead" => ChannelOption::AutoRead(on),
        "allowHalfClosure" => ChannelOption::AllowHalfClosure(on),
        "soRcvbuf" => ChannelOption::SoRcvbuf(count(name, v)?),
        "soSndbuf" => ChannelOption::SoSndbuf(count(name, v)?),
        "maxConnections" => ChannelOption::MaxConnections(count(name, v)?),
        "soBacklog" => ChannelOption::SoBacklog(i32::try_from(count(name, v)?).unwrap_or(i32::MAX)),
        "soLinger" => ChannelOption::SoLinger(duration(v * 1000.0)),
        "writeBufferHighWaterMark" => ChannelOption::WriteBufferHighWaterMark(count(name, v)?),
        "writeBufferLowWaterMark" => ChannelOption::WriteBufferLowWaterMark(count(name, v)?),
        "writeSpinCount" => {
            ChannelOption::WriteSpinCount(u32::try_from(count(name, v)?).unwrap_or(u32::MAX))
        }
        "maxMessagesPerRead" => {
            ChannelOption::MaxMessagesPerRead(u32::try_from(count(name, v)?).unwrap_or(u32::MAX))
        }
        "connectTimeoutMillis" => {
            ChannelOption::ConnectTimeout(if v > 0.0 { duration(v) } else { None })
        }
        "maxBytesPerRead" => ChannelOption::MaxBytesPerRead(count(name, v)?),
        other => return Err(invalid_arg(format!("unknown channel option {other}"))),
    })
}

/// The value of option `name` in `o`, as JS sends it.
pub fn value(o: &ChannelOptions, name: &str) -> WireResult<f64> {
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    Ok(match name {
        "tcpNoDelay" => b(o.tcp_no_delay),
        "soKeepAlive" => b(o.so_keep_alive),
        "soReuseaddr" => b(o.so_reuseaddr),
        "soReusePort" => b(o.so_reuseport),
        "autoRead" => b(o.auto_read),
        "allowHalfClosure" => b(o.allow_half_closure),
        "soRcvbuf" => o.so_rcvbuf.map_or(0.0, |v| v as f64),
        "soSndbuf" => o.so_sndbuf.map_or(0.0, |v| v as f64),
        "soBacklog" => f64::from(o.so_backlog),
        "maxConnections" => o.max_connections as f64,
        "soLinger" => o.so_linger.map_or(-1.0, |d| d.as_secs_f64()),
        "writeBufferHighWaterMark" => o.write_buffer_water_mark.high as f64,
        "writeBufferLowWaterMark" => o.write_buffer_water_mark.low as f64,
        "writeSpinCount" => f64::from(o.write_spin_count),
        "maxMessagesPerRead" => f64::from(o.max_messages_per_read),
        "maxBytesPerRead" => o.max_bytes_per_read as f64,
        "connectTimeoutMillis" => o.connect_timeout.map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        other => return Err(invalid_arg(format!("unknown channel option {other}"))),
    })
}

/// Options built from parallel name/value lists.
pub fn build(names: &[String], values: &[f64]) -> WireResult<ChannelOptions> {
    let mut o = js_defaults();
    for (n, v) in names.iter().zip(values) {
        o.set(option(n, *v)?)
            .map_err(|e| invalid_arg(e.to_string()))?;
    }
    Ok(o)
}

/// A JS channel's reads in one loop iteration before they are handed to JS (`maxBytesPerRead`).
pub const JS_MAX_BYTES_PER_READ: usize = 64 * 1024;

/// The options a channel made from JS starts with: the core's, except `maxBytesPerRead`. A JS
/// channel's reads reach its handlers only in the delivery at the end of the loop's iteration,
/// not one by one as a native handler gets them; with Netty's 16 reads of up to 64 KiB per
/// readiness event, a busy stream would hold up to 1 MiB per channel, read before any of it is
/// handled and written back (cache-cold for the kernel's copies). One 64 KiB read per channel
/// and iteration, what node:net hands its `'data'` handler at a time, cut the server's CPU per
/// MB by about 17% on a stream that never waits (docs/benchmarks.md, 2026-11-28).
fn js_defaults() -> ChannelOptions {
    ChannelOptions {
        max_bytes_per_read: JS_MAX_BYTES_PER_READ,
        ..ChannelOptions::default()
    }
}
