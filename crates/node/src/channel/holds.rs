//! Reads JS gives back while their batch is delivered (`netloop_wire::held` has the rules and
//! does the work): the two calls JS makes.

use napi_derive::napi;

use super::NativeChannels;

#[napi]
impl NativeChannels {
    /// JS does not start the read at offset `at` of the batch it is handed (a record marked
    /// holdable) of channel `id`'s JS context `ctx`: its message goes back to the codec in
    /// front of that context. False if it cannot (JS then handles the read itself).
    #[napi]
    pub fn hold_back(&self, id: f64, ctx: f64, at: f64) -> bool {
        self.calls.set(self.calls.get() + 1.0);
        self.hub.hold_back(id, ctx, at)
    }

    /// True once the codec in front of channel `id`'s JS context `ctx` took back a read of
    /// its latest firing: JS gives back the later reads of that firing too.
    #[napi]
    pub fn holds_firing(&self, id: f64, ctx: f64) -> bool {
        self.calls.set(self.calls.get() + 1.0);
        self.hub.holds_firing(id, ctx)
    }
}
