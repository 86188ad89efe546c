//! napi-rs binding (work in progress).
