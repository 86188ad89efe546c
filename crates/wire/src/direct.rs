//! The operations JS calls on a hub directly (not through the op buffer): opening, binding
//! and connecting channels, reading their state, options and writability, and the hub's
//! counters. crates/node's `NativeChannels` applies JS's buffered ops first and re-arms libuv
//! after; these only do the work. Ground rules as in [`crate::hub`].

use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::sync::Arc;

use netloop_eventloop::Chooser;
use netloop_transport::{
    Channel, ChannelFuture, LocalListenerExt, ServerBootstrapAcceptor, ServerSocketChannel,
    SocketChannel, TransportError, ACCEPTOR_NAME,
};

use crate::acceptor::{JsChildren, Target};
use crate::error::{invalid_arg, WireError, WireResult};
use crate::hub::Hub;
use crate::options;
use crate::protocol::{ChannelStateFlag, MetricsSlot, WritabilitySlot};

/// A transport failure as JS sees it (its code).
pub fn transport_error(e: TransportError) -> WireError {
    let code: &'static str = match &e {
        TransportError::DuplicateHandlerName(_) => "ERR_DUPLICATE_HANDLER_NAME",
        TransportError::NoSuchHandler(_) => "ERR_NO_SUCH_HANDLER",
        TransportError::InvalidOption(_) => "ERR_INVALID_ARG_VALUE",
        e if e.is_channel_closed() => "ERR_CHANNEL_CLOSED",
        _ => "ERR_CHANNEL_OPERATION",
    };
    WireError::new(code, e.to_string())
}

fn no_channel(id: f64) -> WireError {
    WireError::new("ERR_CHANNEL_CLOSED", format!("channel {id} is closed"))
}

fn addr(host: &str, port: u32) -> WireResult<SocketAddr> {
    let ip: IpAddr = host
        .parse()
        .map_err(|_| invalid_arg(format!("not an IP address: {host}")))?;
    let port =
        u16::try_from(port).map_err(|_| invalid_arg(format!("port out of range: {port}")))?;
    Ok(SocketAddr::new(ip, port))
}

/// Reports a channel future to JS promise `promise` through `hub`.
fn report_to_js(f: &ChannelFuture, hub: &Rc<Hub>, promise: f64) {
    let weak = Rc::downgrade(hub);
    f.add_local_listener(move |r| {
        if let Some(h) = weak.upgrade() {
            h.report_promise(promise, r);
        }
    });
}

impl Hub {
    /// Runs `f` on channel `id` (`ERR_CHANNEL_CLOSED` if the hub does not hold it).
    pub fn with_channel<R>(
        &self,
        id: f64,
        f: impl FnOnce(&Channel) -> WireResult<R>,
    ) -> WireResult<R> {
        let ch = self.channel(id as u64).ok_or_else(|| no_channel(id))?;
        f(&ch)
    }

    /// A new channel (server or client) with the options JS named, not yet registered; its id.
    pub fn open(
        self: &Rc<Self>,
        server: bool,
        names: &[String],
        values: &[f64],
    ) -> WireResult<f64> {
        let opts = options::build(names, values)?;
        let local = self
            .local
            .upgrade()
            .ok_or_else(|| invalid_arg("the loop is terminated"))?;
        if local.handle().is_shutdown() {
            return Err(WireError::new(
                "ERR_REJECTED_EXECUTION",
                "the loop is shut down",
            ));
        }
        let ch = if server {
            ServerSocketChannel::open(&local, opts)
        } else {
            SocketChannel::open(&local, opts)
        };
        Ok(self.adopt(ch) as f64)
    }

    /// A new server channel whose acceptor hands connections to the loops `children` (loop
    /// ids: on this thread or on worker threads), with the child options JS named; its id.
    pub fn open_server(
        self: &Rc<Self>,
        options: (&[String], &[f64]),
        child_options: (&[String], &[f64]),
        children: &[f64],
    ) -> WireResult<f64> {
        let child_options = options::build(child_options.0, child_options.1)?;
        let targets: Vec<Target> = children
            .iter()
            .filter_map(|id| Target::of(*id as u64))
            .collect();
        if targets.is_empty() {
            return Err(invalid_arg("a server needs at least one child loop"));
        }
        let id = self.open(true, options.0, options.1)?;
        let ch = self.channel(id as u64).ok_or_else(|| no_channel(id))?;
        let children = JsChildren {
            server: id,
            chooser: Chooser::new(targets.len()),
            targets,
        };
        let acceptor = ServerBootstrapAcceptor::new(children, Arc::new(child_options));
        ch.pipeline()
            .add_last(ACCEPTOR_NAME, acceptor)
            .map_err(transport_error)?;
        Ok(id)
    }

    /// Binds server channel `id` (`connect`: connects client channel `id`) to `host`:`port`;
    /// JS promise `promise` learns the result.
    pub fn bind_or_connect(
        self: &Rc<Self>,
        connect: bool,
        id: f64,
        (host, port): (&str, u32),
        promise: f64,
    ) -> WireResult<()> {
        self.with_channel(id, |ch| {
            let addr = addr(host, port)?;
            let f = if connect {
                ch.connect(addr)
            } else {
                ch.bind(addr)
            };
            report_to_js(&f, self, promise);
            Ok(())
        })
    }

    /// Channel `id`'s [`ChannelStateFlag`] bits (0 once the channel is gone).
    pub fn state_flags(&self, id: f64) -> u32 {
        self.channel(id as u64).map_or(0, |ch| {
            let bit = |on: bool, flag: ChannelStateFlag| if on { flag as u32 } else { 0 };
            bit(ch.is_open(), ChannelStateFlag::Open)
                | bit(ch.is_active(), ChannelStateFlag::Active)
                | bit(ch.is_writable(), ChannelStateFlag::Writable)
                | bit(ch.is_registered(), ChannelStateFlag::Registered)
                | bit(ch.is_auto_read(), ChannelStateFlag::AutoRead)
        })
    }

    /// The names of channel `id`'s handlers, head to tail (empty once the channel is gone).
    pub fn handler_names(&self, id: f64) -> Vec<String> {
        self.channel(id as u64)
            .map_or_else(Vec::new, |ch| ch.pipeline().names())
    }

    /// Writes the [`WritabilitySlot`]s of channel `id` into the shared state array. If the
    /// pending bytes plus `queued` (what JS counted of its buffered writes) are above the high
    /// mark, the channel turns unwritable without an event and `Crossed` is 1: JS reports the
    /// crossing (see `src/writability.ts`). A channel that is gone reads as all zeros.
    pub fn put_writability(&self, id: f64, queued: f64) {
        let mut s = [0.0; WritabilitySlot::Length as usize];
        let Some(ch) = self.channel(id as u64) else {
            return self.shared.put_state(&s);
        };
        let crossed = queued > 0.0 && ch.is_open() && ch.mark_unwritable_above(queued as usize);
        let w = ch.write_buffer_water_mark();
        s[WritabilitySlot::Pending as usize] = ch.pending_outbound_bytes() as f64;
        s[WritabilitySlot::Writable as usize] = f64::from(u8::from(ch.is_writable()));
        s[WritabilitySlot::High as usize] = w.high as f64;
        s[WritabilitySlot::Low as usize] = w.low as f64;
        s[WritabilitySlot::Crossed as usize] = f64::from(u8::from(crossed));
        self.shared.put_state(&s);
    }

    /// `"address|port|family"` of channel `id`'s local (or remote) end, if known.
    pub fn address(&self, id: f64, remote: bool) -> Option<String> {
        let ch = self.channel(id as u64)?;
        let a = if remote {
            ch.remote_addr()
        } else {
            ch.local_addr()
        }?;
        let family = if a.is_ipv4() { "IPv4" } else { "IPv6" };
        Some(format!("{}|{}|{family}", a.ip(), a.port()))
    }

    /// The value of channel option `name` of channel `id` (booleans as 0/1).
    pub fn option(&self, id: f64, name: &str) -> WireResult<f64> {
        self.with_channel(id, |ch| options::value(&ch.options(), name))
    }

    /// Sets channel option `name` of channel `id`.
    pub fn set_option(&self, id: f64, name: &str, value: f64) -> WireResult<()> {
        self.with_channel(id, |ch| {
            let opt = options::option(name, value)?;
            ch.set_option(opt).map_err(|e| invalid_arg(e.to_string()))
        })
    }

    /// Netty's user-defined writability flag `index` (1..=31) of channel `id`.
    pub fn set_user_writability(&self, id: f64, index: u32, writable: bool) -> WireResult<()> {
        self.with_channel(id, |ch| {
            ch.set_user_defined_writability(index, writable)
                .map_err(|e| WireError::new("ERR_OUT_OF_RANGE", e.to_string()))
        })
    }

    /// Half-closes channel `id`: JS promise `promise` learns the result once the FIN is out
    /// (at once, failed, if the channel is gone).
    pub fn shutdown_output(self: &Rc<Self>, id: f64, promise: f64) {
        match self.channel(id as u64) {
            Some(ch) => report_to_js(&ch.shutdown_output(), self, promise),
            None => self.report_promise(promise, &Err(TransportError::ChannelClosed)),
        }
    }

    /// The hub's counters by [`MetricsSlot`], with `calls` (JS's direct calls, which the
    /// binding counts) in its slot.
    pub fn metrics_slots(&self, calls: f64) -> Vec<f64> {
        let m = &self.metrics;
        let mut s = vec![0.0; MetricsSlot::Length as usize];
        s[MetricsSlot::Iterations as usize] = m.iterations.get();
        s[MetricsSlot::Deliveries as usize] = m.deliveries.get();
        s[MetricsSlot::Records as usize] = m.records.get();
        s[MetricsSlot::JsToNative as usize] = calls;
        s[MetricsSlot::Ops as usize] = m.ops.get();
        s[MetricsSlot::BytesToJs as usize] = m.bytes_to_js.get();
        s[MetricsSlot::BytesFromJs as usize] = m.bytes_from_js.get();
        s[MetricsSlot::Channels as usize] = self.channel_count() as f64;
        s[MetricsSlot::BytesFromReads as usize] = m.bytes_from_reads.get();
        s[MetricsSlot::BytesReleased as usize] = m.bytes_released.get();
        s
    }
}
