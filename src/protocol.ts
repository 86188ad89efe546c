/**
 * The boundary protocol's codes, defined once in Rust (crates/wire/src/protocol/) and
 * generated into src/generated/ by scripts/gen-protocol.mjs (docs/decisions/0011): this
 * hand-written front door is the path the other modules import them from.
 */
export * from './generated/protocol'
