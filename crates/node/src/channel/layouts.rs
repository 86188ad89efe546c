//! The thread's tables behind two layouts, for JS: frozen HTTP responses
//! (`netloop_wire::http_wire`) and shared files (`netloop_wire::file_wire`).

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;
use netloop_wire::{file_wire, http_wire};

use crate::error::{throw, wire_error};

/// The response in the layout of `http_wire`: checked and encoded once, filed under the id
/// returned. Throws what writing it would fail with (`ERR_INVALID_HTTP_TOKEN`, ...).
#[napi]
pub fn http_freeze(env: napi::Env, layout: Buffer) -> napi::Result<u32> {
    http_wire::freeze(&layout).map_err(|e| throw(&env, wire_error(e)))
}

/// Frees the id of a frozen response (its JS object was collected). Writes already made
/// keep their own reference.
#[napi]
pub fn http_release(id: u32) {
    http_wire::release_frozen(id);
}

/// Takes over the open descriptor `fd` (JS never uses it again) as a shared file; its id.
#[napi]
pub fn file_share(fd: u32) -> napi::Result<u32> {
    file_wire::share(fd).map_err(napi::Error::from_reason)
}

/// Frees a shared file's id; the file closes once the regions made of it are done.
#[napi]
pub fn file_release(id: u32) {
    file_wire::release(id);
}
