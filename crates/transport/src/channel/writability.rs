//! A channel's writability: the water marks over its pending outbound bytes, and Netty's
//! user-defined writability flags (indices 1..=31) that traffic shaping uses.
//!
//! Ground rules: the bits live in the outbound buffer's shared `Writability` (atomics), so a
//! [`crate::ChannelHandle`] can read and set them from any thread; events
//! (`channel_writability_changed`) fire on the loop thread, once per change of the combined
//! state (writable only when below the water mark *and* every user flag is writable).

use super::Channel;
use crate::error::TransportError;

impl Channel {
    /// False while pending outbound bytes are above the high water mark (until they drop
    /// below the low one), and once the channel is closing or closed (Netty: a closed
    /// channel has no outbound buffer, so it is not writable).
    pub fn is_writable(&self) -> bool {
        !self.0.closing.get() && self.0.outbound.borrow().is_writable()
    }

    /// Netty's `setUserDefinedWritability(index, writable)`: user flag `index` (1..=31) makes
    /// the channel unwritable while it is `false`. The channel is writable only when its
    /// pending bytes are below the water mark *and* every user flag is writable;
    /// `channel_writability_changed` fires once per change of that combined state.
    ///
    /// # Errors
    /// `InvalidOption` for an index outside 1..=31.
    pub fn set_user_defined_writability(
        &self,
        index: u32,
        writable: bool,
    ) -> Result<(), TransportError> {
        check_user_index(index)?;
        let change = self
            .0
            .outbound
            .borrow()
            .writability()
            .set_bit(index, writable);
        self.fire_writability(change);
        Ok(())
    }

    /// The user-defined writability flag `index` (1..=31; `false` outside that range).
    pub fn user_defined_writability(&self, index: u32) -> bool {
        check_user_index(index).is_ok() && self.0.outbound.borrow().writability().bit(index)
    }

    /// Bytes written but not yet handed to the socket (flushed or not), each message
    /// counting [`crate::outbound_buffer::ENTRY_OVERHEAD`] more bytes (Netty).
    pub fn pending_outbound_bytes(&self) -> usize {
        self.0.outbound.borrow().pending_bytes()
    }

    /// Flush progress: grows with every byte handed to the socket (Netty's
    /// `ChannelOutboundBuffer.currentProgress`; `IdleStateHandler` observes it).
    pub fn outbound_progress(&self) -> u64 {
        self.0.outbound.borrow().progress()
    }

    /// Bytes that can still be written before the channel becomes unwritable (0 if it is).
    pub fn bytes_before_unwritable(&self) -> usize {
        self.0.outbound.borrow().bytes_before_unwritable()
    }

    /// Bytes that must drain before the channel becomes writable again (0 if it is).
    pub fn bytes_before_writable(&self) -> usize {
        self.0.outbound.borrow().bytes_before_writable()
    }
}

pub(crate) fn check_user_index(index: u32) -> Result<(), TransportError> {
    if !(1..=31).contains(&index) {
        return Err(TransportError::InvalidOption(format!(
            "user-defined writability index {index} is outside 1..=31"
        )));
    }
    Ok(())
}

impl Channel {
    /// Counts `n` bytes that a handler holds on the channel's behalf (e.g. TLS plaintext
    /// written before the handshake completed) toward the water marks, firing
    /// `channel_writability_changed` if the channel crosses the high mark (Netty's
    /// `ChannelOutboundBuffer.incrementPendingOutboundBytes`).
    pub fn add_pending_outbound_bytes(&self, n: usize) {
        let change = self.0.outbound.borrow().writability_ref().add(n);
        self.fire_writability(change);
    }

    /// Releases `n` bytes counted by [`Channel::add_pending_outbound_bytes`], firing
    /// `channel_writability_changed` if the channel falls below the low mark.
    pub fn sub_pending_outbound_bytes(&self, n: usize) {
        let change = self.0.outbound.borrow().writability_ref().sub(n);
        self.fire_writability(change);
    }
}
