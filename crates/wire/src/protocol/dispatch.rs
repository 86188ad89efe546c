//! The loop's calls into JS: what its dispatch function is asked to do, how the argument is
//! packed, and the slots through which JS arms the loop's timer.

#[cfg(feature = "napi")]
use napi_derive::napi;

/// What the loop's JS dispatch function is asked to do. It is called with one number,
/// `arg * DispatchPacking.Multiplier + kind`.
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchKind {
    /// Run the next JS task batch of the loop's FIFO.
    Task = 0,
    /// The loop timer armed for the earliest JS timer fired: JS runs its due timers.
    Timers = 1,
    /// The loop terminated.
    Terminated = 2,
    /// A task posted from another OS thread ran; `arg` = ns from post to run (tests, benches).
    Remote = 3,
    /// The loop failed and terminates: libuv could not watch its rebuilt selector (`arg`:
    /// the libuv error number). JS reports it through `onTaskError`.
    Fault = 4,
    /// The loop's channel hub delivers `arg` event records (in the shared event buffer); the
    /// call's second and third arguments are the batch's byte arena and strings.
    Channels = 5,
}

/// How the dispatch argument is packed: `arg * Multiplier + kind` (exact below 2^53).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchPacking {
    /// The multiplier of `arg`: larger than every [`DispatchKind`].
    Multiplier = 8,
}

/// Slots of the `Float64Array` through which JS arms the loop's one timer (timers.rs).
#[cfg_attr(feature = "napi", napi)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerArmSlot {
    /// JS sets it to 1 when it wants the timer moved.
    Dirty = 0,
    /// In `performance.now()` milliseconds; negative: disarm.
    Deadline = 1,
    /// The `performance.now()` at which JS wrote it (or NaN).
    Stamp = 2,
    /// The buffer's length.
    Length = 3,
}
