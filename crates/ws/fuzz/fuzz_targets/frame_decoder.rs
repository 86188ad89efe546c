//! Fuzz target: see `netloop_ws_fuzz::check` for what an input is and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netloop_ws_fuzz::check(data);
});
