//! Fuzz target: see `netloop_http_fuzz::check` for what an input is and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netloop_http_fuzz::check(data);
});
