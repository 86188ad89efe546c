//! A counting global allocator: live heap bytes and their peak, per thread.
//!
//! The harness reads the live count before a read is fed to a decoder, resets the peak, and
//! after the read checks how far above the starting point the heap went (see `harness`).
//!
//! Ground rules: counts are per thread (thread-locals with constant initialisers and no
//! destructor, so touching them never allocates), because libtest and libFuzzer run other
//! threads whose allocations must not be charged to the decoder under test. Memory freed on
//! another thread than the one that allocated it skews both counts, so a check only looks at
//! a window in which one thread allocates and frees. A `realloc` is counted as the new block
//! appearing before the old one goes away, which is the worst case a copying reallocation has.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The allocator; installed with `#[global_allocator]` by the crate root.
pub struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(n: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(n as isize);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn sub(n: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(n as isize)));
}

/// Heap bytes allocated and not yet freed by this thread (relative; may be negative).
pub fn live() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// Highest [`live`] value since the last [`reset_peak`].
pub fn peak() -> isize {
    PEAK.try_with(Cell::get).unwrap_or(0)
}

/// Starts a new measuring window: the peak becomes the current live count.
pub fn reset_peak() {
    let now = live();
    let _ = PEAK.try_with(|peak| peak.set(now));
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is `System`'s; the counting around it neither allocates nor unwinds.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours (non-zero size layout, checked by the caller).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by this allocator (hence by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr`/`layout` come from this allocator, `new_size` is the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size);
            sub(layout.size());
        }
        p
    }
}
