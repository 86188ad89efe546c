//! The boundary protocol: every number that crosses between this binding and the TypeScript
//! side, defined once.
//!
//! Each concept is one `#[napi]` enum, in a module by theme (records, dispatch, pipeline,
//! formats, tls). napi-rs writes them into `native.d.ts` as
//! `const enum`s, `scripts/gen-protocol.mjs` copies those into `src/protocol.ts` (the TS side
//! imports them from there; `npm run check:types` fails when the copy is stale), and tsc
//! inlines each member into the compiled JS: a record's kind is still compared with a small
//! integer literal, never loaded from an object. At load time the TS side compares its copy
//! with the enum objects the addon exports (`checkProtocol` in `src/protocol-check.ts`), so a
//! binary from another build is refused instead of misread.
//!
//! Adding a channel event: a variant in [`WireKind`] (and its payload documented on it), the
//! native code that pushes it, and the TS code that handles it (docs/decisions/0011).
//!
//! The Rust side uses the enums directly: `WireKind::Active as u32` where a record is pushed,
//! `WireKind::try_from(code)` where one is read (the ops), `Outcome::Success.value()`
//! ([`RecordValue`]) for the enums that travel in a record's `f64` fields. There are no
//! aliases (decision 0018).

mod dispatch;
mod formats;
mod pipeline;
mod records;
mod tls;

pub use dispatch::*;
pub use formats::*;
pub use pipeline::*;
pub use records::*;
pub use tls::*;
