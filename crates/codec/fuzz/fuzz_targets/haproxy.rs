//! Fuzz target: see `netloop_codec_fuzz::haproxy` for what a case is and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    netloop_codec_fuzz::haproxy::haproxy(data);
});
