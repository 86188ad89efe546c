//! Adaptive receive-buffer sizing (Netty's `AdaptiveRecvByteBufAllocator`): the next read's
//! buffer grows quickly after reads that filled it and shrinks slowly after small ones,
//! always within `[minimum, maximum]`.
//!
//! Ground rules: one instance per channel, used on its loop thread; plain data.

/// Bounds of the adaptive receive-buffer size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvSizing {
    /// Smallest buffer size.
    pub minimum: usize,
    /// First buffer size.
    pub initial: usize,
    /// Largest buffer size.
    pub maximum: usize,
}

impl Default for RecvSizing {
    fn default() -> Self {
        RecvSizing {
            minimum: 64,
            initial: 2048,
            maximum: 65536,
        }
    }
}

const INDEX_INCREMENT: usize = 4;
const INDEX_DECREMENT: usize = 1;

/// 16, 32, …, 496, then 512, 1024, … doubling up to 2^30: Netty's size table.
fn size_table() -> &'static [usize] {
    static TABLE: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<usize> = (1..32).map(|i| i * 16).collect();
        let mut s = 512;
        while s <= 1 << 30 {
            t.push(s);
            s <<= 1;
        }
        t
    })
}

/// Index of the smallest table size ≥ `size` (the last index if none is).
fn index_of(size: usize) -> usize {
    let t = size_table();
    t.partition_point(|&s| s < size).min(t.len() - 1)
}

/// Per-channel receive-buffer sizing state.
#[derive(Debug, Clone)]
pub struct AdaptiveRecvAllocator {
    min_index: usize,
    max_index: usize,
    index: usize,
    next_size: usize,
    decrease_now: bool,
}

impl AdaptiveRecvAllocator {
    /// An allocator starting at `sizing.initial`.
    pub fn new(sizing: RecvSizing) -> Self {
        let min_index = index_of(sizing.minimum.max(1));
        let max_index = index_of(sizing.maximum.max(sizing.minimum)).max(min_index);
        let index = index_of(sizing.initial).clamp(min_index, max_index);
        AdaptiveRecvAllocator {
            min_index,
            max_index,
            index,
            next_size: size_table()[index],
            decrease_now: false,
        }
    }

    /// Size of the buffer for the next read.
    pub fn guess(&self) -> usize {
        self.next_size
    }

    /// The largest size this allocator guesses (the configured maximum).
    pub fn maximum(&self) -> usize {
        size_table()[self.max_index]
    }

    /// Records bytes read: by one read that filled its buffer, or by a whole read batch.
    pub fn record(&mut self, actual: usize) {
        let t = size_table();
        if actual
            <= t[self
                .index
                .saturating_sub(INDEX_DECREMENT)
                .max(self.min_index)]
        {
            if self.decrease_now {
                self.index = self
                    .index
                    .saturating_sub(INDEX_DECREMENT)
                    .max(self.min_index);
                self.next_size = t[self.index];
                self.decrease_now = false;
            } else {
                self.decrease_now = true;
            }
        } else if actual >= self.next_size {
            self.index = (self.index + INDEX_INCREMENT).min(self.max_index);
            self.next_size = t[self.index];
            self.decrease_now = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_at_initial_size() {
        assert_eq!(
            AdaptiveRecvAllocator::new(RecvSizing::default()).guess(),
            2048
        );
    }

    #[test]
    fn grows_after_full_reads_up_to_maximum() {
        let mut a = AdaptiveRecvAllocator::new(RecvSizing::default());
        let mut last = a.guess();
        for _ in 0..20 {
            a.record(a.guess());
            assert!(a.guess() >= last);
            last = a.guess();
        }
        assert_eq!(a.guess(), 65536);
    }

    #[test]
    fn shrinks_only_after_two_small_reads_down_to_minimum() {
        let mut a = AdaptiveRecvAllocator::new(RecvSizing::default());
        a.record(10);
        assert_eq!(a.guess(), 2048, "one small read does not shrink");
        a.record(10);
        assert!(a.guess() < 2048, "two small reads in a row shrink");
        for _ in 0..200 {
            a.record(1);
        }
        assert_eq!(a.guess(), 64);
    }

    #[test]
    fn medium_reads_keep_the_size() {
        let mut a = AdaptiveRecvAllocator::new(RecvSizing::default());
        for _ in 0..10 {
            a.record(1500);
        }
        assert_eq!(a.guess(), 2048);
    }
}
