//! Fuzzing harness of netloop-codec's frame decoders: reference models, the checks, and one
//! entry point per decoder taking raw bytes. Used by the cargo-fuzz targets in
//! `fuzz_targets/` and, on stable, by `crates/codec/tests/it/reference_model.rs`, which includes
//! this file as a module (so every `mod` below names its file with `#[path]`, relative to
//! this directory either way).
//!
//! The counting allocator is installed here, for whichever binary includes this code.

#[path = "alloc.rs"]
pub mod alloc;
#[path = "haproxy.rs"]
pub mod haproxy;
#[path = "harness.rs"]
pub mod harness;
#[path = "model.rs"]
pub mod model;
#[path = "pipeline.rs"]
pub mod pipeline;
#[path = "reads.rs"]
pub mod reads;
#[path = "source.rs"]
pub mod source;
#[path = "targets.rs"]
pub mod targets;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;
