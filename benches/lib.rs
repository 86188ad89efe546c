//! Helpers shared by the criterion benches (see `benches/`).
