//! permessage-deflate inside [`WebSocketHandler`](super::WebSocketHandler): which half of the
//! agreement each direction follows for a role, and the outbound side (whole text and binary
//! messages of at least the threshold are compressed; their frame gets RSV1). The inbound
//! side is [`Decompression`](crate::deflate::Decompression), next to the decoder.
//!
//! Ground rules: see the parent module.

use std::cell::RefCell;

use crate::decoder::Role;
use crate::deflate::Deflater;
use crate::extension::{DeflateConfig, Direction, PerMessageDeflate};

/// (how this end compresses, how the peer compresses) under `agreed`, for `role`.
pub(super) fn directions(agreed: PerMessageDeflate, role: Role) -> (Direction, Direction) {
    match role {
        Role::Server => (agreed.server(), agreed.client()),
        Role::Client => (agreed.client(), agreed.server()),
    }
}

/// This end's compressor and its threshold.
pub(super) struct Outbound {
    deflater: RefCell<Deflater>,
    threshold: usize,
}

impl Outbound {
    /// Compressing as `direction` says, with the threshold and level of `settings`.
    pub(super) fn new(direction: Direction, settings: &DeflateConfig) -> Self {
        Outbound {
            deflater: RefCell::new(Deflater::new(direction, settings.level)),
            threshold: settings.threshold,
        }
    }

    /// A message's payload compressed, or `None` to send it as it is (under the threshold,
    /// or not compressible here: see [`Deflater::compress`]).
    pub(super) fn compress(&self, payload: &[u8]) -> Option<Vec<u8>> {
        if payload.len() < self.threshold {
            return None;
        }
        self.deflater.borrow_mut().compress(payload)
    }

    /// Whether compressor state is held now.
    pub(super) fn has_state(&self) -> bool {
        self.deflater.borrow().has_state()
    }
}
