//! A global allocator that counts live bytes per thread, for the tests that bound memory
//! (deflate state, bombs, idle connections). One copy, included with `#[path]` by
//! crates/ws/tests/deflate_memory.rs, crates/ws/fuzz/src/inflater.rs (so also the fuzz
//! target and crates/ws/tests/inflater_cases.rs) and crates/ws-upgrade/tests/idle_memory.rs;
//! each binary installs it with `#[global_allocator] static A: Counting = Counting;`.
//!
//! Ground rules: counters are thread-locals without destructors, touched through `try_with`
//! (an allocation during thread teardown is passed on uncounted), so tests running in
//! parallel on other threads never mix their figures.
#![allow(dead_code)] // each includer uses its own part

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
    static INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// The counting allocator: every call goes to [`System`] unchanged.
#[derive(Debug)]
pub struct Counting;

fn add(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        let _ = INSTALLED.try_with(|i| i.set(true));
    });
}

// SAFETY: every call is passed to the system allocator unchanged; the counters are
// thread-local cells without destructors, touched through `try_with`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Bytes allocated and not freed by this thread so far.
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Whether this thread's allocations are counted (the allocator is installed).
pub fn installed() -> bool {
    INSTALLED.with(Cell::get)
}

/// `f`'s result and the peak bytes above the live count at its start while it ran.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = live();
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, (PEAK.with(Cell::get) - base) as usize)
}
