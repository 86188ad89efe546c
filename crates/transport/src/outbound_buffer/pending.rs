//! The part of a channel's outbound state that other threads see: the pending byte total and
//! the writability bits, as atomics.
//!
//! Ground rules: writes submitted from other threads count at submission (Netty's
//! `incrementPendingOutboundBytes` on task creation) and user-defined writability flags can be
//! set by anyone, so this lives behind an `Arc` shared by the buffer and the channel's
//! handles. Bit 0 is the water mark, bits 1..=31 are user-defined; the channel is writable
//! only when every bit is clear, and a change is reported only when the combined state flips.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::options::WaterMark;

/// The pending total and writability bits of one channel, shared with its handles.
#[derive(Debug)]
pub(crate) struct Writability {
    pending: AtomicUsize,
    /// Bit 0: above the water mark; bits 1..=31: user-defined flags set to unwritable.
    unwritable: AtomicU32,
    high: AtomicUsize,
    low: AtomicUsize,
}

impl Writability {
    pub(super) fn new(water: WaterMark) -> Arc<Self> {
        Arc::new(Writability {
            pending: AtomicUsize::new(0),
            unwritable: AtomicU32::new(0),
            high: AtomicUsize::new(water.high),
            low: AtomicUsize::new(water.low),
        })
    }

    /// Moves the water marks (the next change of the pending total is measured against them).
    pub fn set_marks(&self, water: WaterMark) {
        self.high.store(water.high, Ordering::Relaxed);
        self.low.store(water.low, Ordering::Relaxed);
    }

    /// Counts `n` more pending bytes (any thread).
    pub fn add(&self, n: usize) -> WritabilityChange {
        let total = self.pending.fetch_add(n, Ordering::AcqRel) + n;
        if total > self.high.load(Ordering::Relaxed) {
            return self.set_bit(0, false);
        }
        WritabilityChange::None
    }

    /// Counts `n` fewer pending bytes (any thread).
    pub fn sub(&self, n: usize) -> WritabilityChange {
        let mut old = self.pending.load(Ordering::Acquire);
        loop {
            let new = old.saturating_sub(n);
            match self
                .pending
                .compare_exchange(old, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if new < self.low.load(Ordering::Relaxed) {
                        return self.set_bit(0, true);
                    }
                    return WritabilityChange::None;
                }
                Err(cur) => old = cur,
            }
        }
    }

    /// Counts `n` fewer pending bytes without changing writability (see `recheck_low`).
    pub fn sub_quiet(&self, n: usize) {
        let _ = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| {
                Some(p.saturating_sub(n))
            });
    }

    /// Makes the water-mark bit writable if the pending total is below the low mark.
    pub fn recheck_low(&self) -> WritabilityChange {
        if !self.bit(0) && self.pending() < self.low.load(Ordering::Relaxed) {
            return self.set_bit(0, true);
        }
        WritabilityChange::None
    }

    /// Sets bit `bit` writable or not; reports a flip of the combined state.
    pub fn set_bit(&self, bit: u32, writable: bool) -> WritabilityChange {
        let mask = 1u32 << bit;
        // Already so: no change to report, and no read-modify-write (the pending total's
        // every fall below the low mark asks to clear a bit that is almost always clear).
        // Another thread's change racing with this one is ordered after it.
        if (self.unwritable.load(Ordering::Acquire) & mask == 0) == writable {
            return WritabilityChange::None;
        }
        let old = if writable {
            self.unwritable.fetch_and(!mask, Ordering::AcqRel)
        } else {
            self.unwritable.fetch_or(mask, Ordering::AcqRel)
        };
        let new = if writable { old & !mask } else { old | mask };
        match (old == 0, new == 0) {
            (true, false) => WritabilityChange::BecameUnwritable,
            (false, true) => WritabilityChange::BecameWritable,
            _ => WritabilityChange::None,
        }
    }

    /// True if bit `bit` is writable.
    pub fn bit(&self, bit: u32) -> bool {
        self.unwritable.load(Ordering::Acquire) & (1 << bit) == 0
    }

    /// True when every bit is writable.
    pub fn is_writable(&self) -> bool {
        self.unwritable.load(Ordering::Acquire) == 0
    }

    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}

/// A change of writability caused by an operation on the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WritabilityChange {
    /// Writability did not change.
    None,
    /// Pending bytes rose above the high water mark.
    BecameUnwritable,
    /// Pending bytes fell below the low water mark.
    BecameWritable,
}
