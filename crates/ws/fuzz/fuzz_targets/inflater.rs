//! Fuzz target: see `netloop_ws_fuzz::inflater::check` for what an input is and what is
//! checked; the counting allocator makes the memory bound checked too.
#![no_main]

#[global_allocator]
static ALLOCATOR: netloop_ws_fuzz::inflater::Counting = netloop_ws_fuzz::inflater::Counting;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netloop_ws_fuzz::inflater::check(data);
});
