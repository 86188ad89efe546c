//! Fuzz target: see `netloop_tls_fuzz::check` for what an input is and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netloop_tls_fuzz::check(data);
});
