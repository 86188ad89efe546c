//! Channel options (Netty's names, in snake case): socket options applied through socket2 and
//! the channel settings that the channel reads on every operation.
//!
//! `ChannelOptions` is plain `Send` data: bootstraps carry it across threads and each new
//! channel takes a copy. A live channel changes its copy with `Channel::set_option`.

use std::time::Duration;

use socket2::SockRef;

use crate::error::TransportError;
use crate::recv_allocator::RecvSizing;

/// Write-buffer water marks: above `high` pending bytes a channel is unwritable, below `low`
/// it is writable again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaterMark {
    /// Below this many pending bytes the channel becomes writable again.
    pub low: usize,
    /// Above this many pending bytes the channel becomes unwritable.
    pub high: usize,
}

impl WaterMark {
    /// # Errors
    /// `InvalidOption` if `low > high`.
    pub fn new(low: usize, high: usize) -> Result<Self, TransportError> {
        if low > high {
            return Err(TransportError::InvalidOption(format!(
                "writeBufferLowWaterMark ({low}) must not exceed writeBufferHighWaterMark ({high})"
            )));
        }
        Ok(WaterMark { low, high })
    }
}

impl Default for WaterMark {
    fn default() -> Self {
        WaterMark {
            low: 32 * 1024,
            high: 64 * 1024,
        }
    }
}

/// Every option of a channel, with Netty's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelOptions {
    /// TCP_NODELAY (Nagle off).
    pub tcp_no_delay: bool,
    /// SO_KEEPALIVE.
    pub so_keep_alive: bool,
    /// SO_RCVBUF (`None`: the system default).
    pub so_rcvbuf: Option<usize>,
    /// SO_SNDBUF (`None`: the system default).
    pub so_sndbuf: Option<usize>,
    /// `Some(d)`: close lingers up to `d` (zero: reset on close).
    pub so_linger: Option<Duration>,
    /// Server channels: SO_REUSEADDR before bind.
    pub so_reuseaddr: bool,
    /// Server channels: SO_REUSEPORT before bind, so that several listeners (one per loop)
    /// share a port and the kernel spreads connections over them.
    pub so_reuseport: bool,
    /// Server channels: the listen backlog.
    pub so_backlog: i32,
    /// The water marks of the outbound buffer.
    pub write_buffer_water_mark: WaterMark,
    /// Read whenever data arrives.
    pub auto_read: bool,
    /// Most write system calls per flush before yielding to other channels.
    pub write_spin_count: u32,
    /// `None`: no connect timeout.
    pub connect_timeout: Option<Duration>,
    /// Most reads (or accepts) per readiness event.
    pub max_messages_per_read: u32,
    /// Stream channels: a read batch ends once it holds this many bytes (0: no limit; Netty's
    /// `DefaultMaxBytesRecvByteBufAllocator.maxBytesPerRead`). The socket is read again in a
    /// later task, after other channels had their turn.
    pub max_bytes_per_read: usize,
    /// Keep the channel open (output side) after the peer shut its output down.
    pub allow_half_closure: bool,
    /// Server channels: most accepted connections open at once (0: no limit). Beyond it an
    /// accepted socket is closed at once and counted as refused.
    pub max_connections: usize,
    /// How the receive buffer is sized.
    pub recv_sizing: RecvSizing,
}

impl Default for ChannelOptions {
    fn default() -> Self {
        ChannelOptions {
            tcp_no_delay: true,
            so_keep_alive: false,
            so_rcvbuf: None,
            so_sndbuf: None,
            so_linger: None,
            so_reuseaddr: true,
            so_reuseport: false,
            so_backlog: 1024,
            write_buffer_water_mark: WaterMark::default(),
            auto_read: true,
            write_spin_count: 16,
            connect_timeout: Some(Duration::from_millis(30_000)),
            max_messages_per_read: 16,
            max_bytes_per_read: 0,
            allow_half_closure: false,
            max_connections: 0,
            recv_sizing: RecvSizing::default(),
        }
    }
}

/// One option, for setting options one at a time (bootstraps, live channels, the JS binding).
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelOption {
    /// See [`ChannelOptions::tcp_no_delay`].
    TcpNoDelay(bool),
    /// See [`ChannelOptions::so_keep_alive`].
    SoKeepAlive(bool),
    /// See [`ChannelOptions::so_rcvbuf`].
    SoRcvbuf(usize),
    /// See [`ChannelOptions::so_sndbuf`].
    SoSndbuf(usize),
    /// SO_LINGER.
    SoLinger(Option<Duration>),
    /// SO_REUSEADDR.
    SoReuseaddr(bool),
    /// SO_REUSEPORT of a server channel (set before bind).
    SoReuseport(bool),
    /// The listen backlog of a server channel.
    SoBacklog(i32),
    /// The high water mark alone.
    WriteBufferHighWaterMark(usize),
    /// The low water mark alone.
    WriteBufferLowWaterMark(usize),
    /// Both water marks.
    WriteBufferWaterMark(WaterMark),
    /// See [`ChannelOptions::auto_read`].
    AutoRead(bool),
    /// See [`ChannelOptions::write_spin_count`].
    WriteSpinCount(u32),
    /// How long a connect may take (`None`: no limit).
    ConnectTimeout(Option<Duration>),
    /// See [`ChannelOptions::max_messages_per_read`].
    MaxMessagesPerRead(u32),
    /// See [`ChannelOptions::max_bytes_per_read`].
    MaxBytesPerRead(usize),
    /// Keep the channel open when the peer shuts its output down.
    AllowHalfClosure(bool),
    /// See [`ChannelOptions::max_connections`] (0: no limit).
    MaxConnections(usize),
    /// See [`ChannelOptions::recv_sizing`].
    RecvSizing(RecvSizing),
}

impl ChannelOptions {
    /// Sets one option, checking its value.
    ///
    /// # Errors
    /// `InvalidOption` for a value out of range (low water mark above high, zero spin count,
    /// zero messages per read, inconsistent receive sizes).
    pub fn set(&mut self, opt: ChannelOption) -> Result<(), TransportError> {
        match opt {
            ChannelOption::TcpNoDelay(v) => self.tcp_no_delay = v,
            ChannelOption::SoKeepAlive(v) => self.so_keep_alive = v,
            ChannelOption::SoRcvbuf(v) => self.so_rcvbuf = Some(v),
            ChannelOption::SoSndbuf(v) => self.so_sndbuf = Some(v),
            ChannelOption::SoLinger(v) => self.so_linger = v,
            ChannelOption::SoReuseaddr(v) => self.so_reuseaddr = v,
            ChannelOption::SoReuseport(v) => self.so_reuseport = v,
            ChannelOption::SoBacklog(v) => self.so_backlog = v,
            ChannelOption::WriteBufferHighWaterMark(high) => {
                self.write_buffer_water_mark =
                    WaterMark::new(self.write_buffer_water_mark.low, high)?
            }
            ChannelOption::WriteBufferLowWaterMark(low) => {
                self.write_buffer_water_mark =
                    WaterMark::new(low, self.write_buffer_water_mark.high)?
            }
            ChannelOption::WriteBufferWaterMark(w) => {
                self.write_buffer_water_mark = WaterMark::new(w.low, w.high)?
            }
            ChannelOption::AutoRead(v) => self.auto_read = v,
            ChannelOption::WriteSpinCount(v) => {
                if v == 0 {
                    return Err(TransportError::InvalidOption(
                        "writeSpinCount must be at least 1".into(),
                    ));
                }
                self.write_spin_count = v
            }
            ChannelOption::ConnectTimeout(v) => self.connect_timeout = v,
            ChannelOption::MaxMessagesPerRead(v) => {
                if v == 0 {
                    return Err(TransportError::InvalidOption(
                        "maxMessagesPerRead must be at least 1".into(),
                    ));
                }
                self.max_messages_per_read = v
            }
            ChannelOption::MaxBytesPerRead(v) => self.max_bytes_per_read = v,
            ChannelOption::AllowHalfClosure(v) => self.allow_half_closure = v,
            ChannelOption::MaxConnections(v) => self.max_connections = v,
            ChannelOption::RecvSizing(s) => {
                if s.minimum == 0 || s.minimum > s.initial || s.initial > s.maximum {
                    return Err(TransportError::InvalidOption(format!(
                        "receive sizing needs 0 < minimum <= initial <= maximum, got {s:?}"
                    )));
                }
                self.recv_sizing = s
            }
        }
        Ok(())
    }

    /// Checks every value (for options built by hand).
    ///
    /// # Errors
    /// As [`ChannelOptions::set`].
    pub fn validate(&self) -> Result<(), TransportError> {
        let mut copy = self.clone();
        copy.set(ChannelOption::WriteBufferWaterMark(
            self.write_buffer_water_mark,
        ))?;
        copy.set(ChannelOption::WriteSpinCount(self.write_spin_count))?;
        copy.set(ChannelOption::MaxMessagesPerRead(
            self.max_messages_per_read,
        ))?;
        copy.set(ChannelOption::RecvSizing(self.recv_sizing))
    }

    /// Builder style: `ChannelOptions::default().with(ChannelOption::TcpNoDelay(false))?`.
    ///
    /// # Errors
    /// As [`ChannelOptions::set`].
    pub fn with(mut self, opt: ChannelOption) -> Result<Self, TransportError> {
        self.set(opt)?;
        Ok(self)
    }

    /// Applies the options of a connected stream socket.
    pub(crate) fn apply_to_stream(&self, sock: SockRef<'_>) -> std::io::Result<()> {
        sock.set_nodelay(self.tcp_no_delay)?;
        if self.so_keep_alive {
            sock.set_keepalive(true)?;
        }
        self.apply_buffers(&sock)?;
        if self.so_linger.is_some() {
            sock.set_linger(self.so_linger)?;
        }
        Ok(())
    }

    pub(crate) fn apply_buffers(&self, sock: &SockRef<'_>) -> std::io::Result<()> {
        if let Some(n) = self.so_rcvbuf {
            sock.set_recv_buffer_size(n)?;
        }
        if let Some(n) = self.so_sndbuf {
            sock.set_send_buffer_size(n)?;
        }
        Ok(())
    }
}

/// Applies one socket-level option to a live socket (other options need no socket call).
pub(crate) fn apply_socket_option(sock: SockRef<'_>, opt: &ChannelOption) -> std::io::Result<()> {
    match opt {
        ChannelOption::TcpNoDelay(v) => sock.set_nodelay(*v),
        ChannelOption::SoKeepAlive(v) => sock.set_keepalive(*v),
        ChannelOption::SoRcvbuf(n) => sock.set_recv_buffer_size(*n),
        ChannelOption::SoSndbuf(n) => sock.set_send_buffer_size(*n),
        ChannelOption::SoLinger(d) => sock.set_linger(*d),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_netty() {
        let o = ChannelOptions::default();
        assert_eq!(
            o.write_buffer_water_mark,
            WaterMark {
                low: 32 * 1024,
                high: 64 * 1024
            }
        );
        assert_eq!(o.write_spin_count, 16);
        assert!(o.auto_read && o.tcp_no_delay);
        assert_eq!(o.connect_timeout, Some(Duration::from_secs(30)));
    }

    #[test]
    fn low_water_mark_above_high_is_rejected() {
        let mut o = ChannelOptions::default();
        let err = o
            .set(ChannelOption::WriteBufferLowWaterMark(128 * 1024))
            .unwrap_err();
        assert_eq!(err.code(), "ERR_INVALID_OPTION");
        assert!(WaterMark::new(2, 1).is_err());
        o.set(ChannelOption::WriteBufferHighWaterMark(8))
            .unwrap_err();
        o.set(ChannelOption::WriteBufferWaterMark(WaterMark {
            low: 4,
            high: 8,
        }))
        .unwrap();
    }

    #[test]
    fn zero_write_spin_count_is_rejected() {
        assert!(ChannelOptions::default()
            .with(ChannelOption::WriteSpinCount(0))
            .is_err());
    }
}
