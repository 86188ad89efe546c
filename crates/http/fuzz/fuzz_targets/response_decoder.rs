//! Fuzz target: see `response.rs` (`check`) for what an input is and what is checked.
#![no_main]

#[path = "../src/response.rs"]
mod response;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    response::check(data);
});
