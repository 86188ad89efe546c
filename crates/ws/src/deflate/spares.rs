//! The thread's spare DEFLATE states, lent to the directions that agreed no context takeover.
//!
//! Without context takeover a message is compressed (or inflated) from a fresh state, so the
//! state need not belong to a connection: this thread keeps a few reset compressors and
//! decompressors and lends one for a message. A connection then holds no compression memory
//! between messages, and a message does not pay for allocating and clearing a state of
//! hundreds of KiB (a zlib-rs compressor clears a 128 KiB hash table when made; a reset clears
//! the same table but allocates nothing).
//!
//! Ground rules (one thread's values, never shared or sent):
//! - `compressors`: reset [`Compress`] states with the level and window bits they were made
//!   with. A [`Deflater`](super::Deflater) borrows one for one `compress` call and gives it
//!   back reset; one that failed is dropped, never given back.
//! - `decompressors`: reset raw [`Decompress`] states (any window: an inflater reads them all).
//!   An [`Inflater`](super::Inflater) borrows one at a compressed message's first frame and
//!   gives it back reset after its last; a message that fails or is dropped drops its state.
//! - At most [`KEEP`] of each kind are kept; more given back are dropped. One loop thread
//!   compresses one message at a time, so one compressor is enough; decompressors are held
//!   across the frames of fragmented messages, so a few more can be out at once.
//! - No borrow of the cell is held while a state is used: take, use, give back.

use std::cell::RefCell;

use flate2::{Compress, Compression, Decompress};

/// The most spare states of each kind a thread keeps.
pub const KEEP: usize = 4;

struct Spares {
    compressors: Vec<(u32, u8, Compress)>,
    decompressors: Vec<Decompress>,
}

thread_local! {
    static SPARES: RefCell<Spares> = const {
        RefCell::new(Spares { compressors: Vec::new(), decompressors: Vec::new() })
    };
}

/// A reset compressor at `level` and `window_bits`: a spare if one matches, else a new one.
pub fn take_compressor(level: u32, window_bits: u8) -> Compress {
    let spare = SPARES
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let at = s
                .compressors
                .iter()
                .position(|(l, b, _)| *l == level && *b == window_bits)?;
            Some(s.compressors.swap_remove(at).2)
        })
        .ok()
        .flatten();
    spare.unwrap_or_else(|| {
        Compress::new_with_window_bits(Compression::new(level), false, window_bits)
    })
}

/// Gives back a compressor made at `level` and `window_bits`, after its message.
pub fn give_compressor(level: u32, window_bits: u8, mut stream: Compress) {
    stream.reset();
    let _ = SPARES.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.compressors.len() < KEEP {
            s.compressors.push((level, window_bits, stream));
        }
    });
}

/// A reset raw decompressor: a spare if there is one, else a new one.
pub fn take_decompressor() -> Decompress {
    SPARES
        .try_with(|s| s.borrow_mut().decompressors.pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| Decompress::new(false))
}

/// Gives back a decompressor after its message.
pub fn give_decompressor(mut stream: Decompress) {
    stream.reset(false);
    let _ = SPARES.try_with(|s| {
        let mut s = s.borrow_mut();
        if s.decompressors.len() < KEEP {
            s.decompressors.push(stream);
        }
    });
}

/// How many spare compressors and decompressors this thread keeps now.
pub fn counts() -> (usize, usize) {
    SPARES
        .try_with(|s| {
            let s = s.borrow();
            (s.compressors.len(), s.decompressors.len())
        })
        .unwrap_or((0, 0))
}
