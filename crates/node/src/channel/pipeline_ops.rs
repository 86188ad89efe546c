//! The pipeline methods of `NativeChannels` (adding, removing and replacing JS stand-ins and
//! built-in native handlers): `netloop_wire::pipelines` checks and makes each change; this
//! converts.

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::NativeChannels;
use crate::error::{throw, wire_error};

/// The delimiters JS passed, copied out of their Buffers.
fn copied(delimiters: Option<Vec<Buffer>>) -> Vec<Bytes> {
    delimiters
        .unwrap_or_default()
        .iter()
        .map(|b| Bytes::copy_from_slice(b))
        .collect()
}

#[napi]
impl NativeChannels {
    /// Adds the stand-in of JS context `ctx` named `name` at `HandlerPosition` `pos`
    /// (relative to `base` for before/after). `takes`: the handler's `HandlerTakes` bits.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn add_js(
        &self,
        env: Env,
        id: f64,
        pos: u32,
        base: String,
        name: String,
        ctx: f64,
        takes: u32,
    ) -> Result<()> {
        self.enter();
        let r = self.hub.add_js(id, pos, &base, &name, ctx, takes);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Adds a built-in native handler of `kind` with Netty's parameters.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn add_native(
        &self,
        env: Env,
        id: f64,
        pos: u32,
        base: String,
        name: String,
        kind: u32,
        params: Vec<f64>,
        delimiters: Option<Vec<Buffer>>,
    ) -> Result<()> {
        self.enter();
        let at = (pos, base.as_str(), name.as_str());
        let r = self
            .hub
            .add_native(id, at, kind, &params, copied(delimiters));
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Removes handler `name` from channel `id`'s pipeline.
    #[napi]
    pub fn remove(&self, env: Env, id: f64, name: String) -> Result<()> {
        self.enter();
        let r = self.hub.remove_handler(id, &name);
        r.map_err(|e| throw(&env, wire_error(e)))
    }

    /// Replaces handler `old` by JS context `ctx` (kind 0) or a native handler of `kind`.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn replace(
        &self,
        env: Env,
        id: f64,
        old: String,
        name: String,
        kind: u32,
        ctx: f64,
        params: Vec<f64>,
        delimiters: Option<Vec<Buffer>>,
        takes: u32,
    ) -> Result<()> {
        self.enter();
        let names = (old.as_str(), name.as_str());
        let r =
            self.hub
                .replace_handler(id, names, (kind, ctx, takes), &params, copied(delimiters));
        r.map_err(|e| throw(&env, wire_error(e)))
    }
}
