//! The Buffers of large writes JS passes with a batch of ops (`OpStream.big`), as the
//! `netloop_wire::big::Chunk`s the ops take: read in place while the batch is applied, kept
//! alive past it by a napi reference (unless the hub finds them in a read it lent JS).

use std::ops::Deref;

use bytes::Bytes;
use napi::bindgen_prelude::{Buffer, BufferSlice, FromNapiValue, JsValue};
use napi::{sys, Env};
use netloop_wire::big::{BigChunks, Chunk};

/// One large write's Buffer, with the env of the call that passed it.
pub struct JsChunk<'a> {
    env: sys::napi_env,
    slice: BufferSlice<'a>,
}

/// The large writes of one batch of ops.
pub fn batch<'a>(env: &Env, chunks: Vec<BufferSlice<'a>>) -> BigChunks<JsChunk<'a>> {
    let env = env.raw();
    BigChunks::new(
        chunks
            .into_iter()
            .map(|slice| JsChunk { env, slice })
            .collect(),
    )
}

impl Deref for JsChunk<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.slice
    }
}

impl Chunk for JsChunk<'_> {
    fn keep(self) -> Bytes {
        // SAFETY: on the env's thread, inside the napi call that passed the slice (its handle
        // is valid); this makes a reference to the same Buffer.
        match unsafe { Buffer::from_napi_value(self.env, self.slice.raw()) } {
            Ok(buffer) => Bytes::from_owner(buffer),
            // No reference could be made: the bytes are copied instead.
            Err(_) => Bytes::copy_from_slice(&self.slice),
        }
    }
}
