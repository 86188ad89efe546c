//! The layout samples of the round-trip spec (__test__/wire-layouts-*.spec.ts) for JS:
//! `netloop_wire::samples` encodes and decodes them; this makes Buffers of its bytes.

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use netloop_wire::samples;

/// The encoded samples, one field per layout (the values are stated in the spec; each field
/// is documented on `netloop_wire::samples::Samples`).
#[napi(object)]
pub struct WireSamples {
    pub http_request: Buffer,
    pub http_request_empty: Buffer,
    pub http_request_flags: Vec<Buffer>,
    pub http_content: Vec<Buffer>,
    pub http_client_response: Buffer,
    pub http_client_response_flags: Vec<Buffer>,
    pub resp: Buffer,
    pub ws: Vec<Buffer>,
}

fn buffers(v: Vec<Vec<u8>>) -> Vec<Buffer> {
    v.into_iter().map(Buffer::from).collect()
}

/// The samples' layouts, encoded by the writers the hub uses.
#[napi]
pub fn wire_samples() -> WireSamples {
    let s = samples::samples();
    WireSamples {
        http_request: s.http_request.into(),
        http_request_empty: s.http_request_empty.into(),
        http_request_flags: buffers(s.http_request_flags),
        http_content: buffers(s.http_content),
        http_client_response: s.http_client_response.into(),
        http_client_response_flags: buffers(s.http_client_response_flags),
        resp: s.resp.into(),
        ws: buffers(s.ws),
    }
}

/// Decodes `layout` (a layout JS wrote: `kind` is `http`, `http-in`, `resp`, `file` or `ws`) with the
/// reader the ops use and gives back what it read, as JSON (`netloop_wire::samples::echo`).
/// Throws the reader's error.
#[napi]
pub fn wire_echo(kind: String, layout: Buffer) -> napi::Result<String> {
    samples::echo(&kind, &layout).map_err(napi::Error::from_reason)
}
