// The shape of a conformance case, written as data (cases-*.ts) and run by driver.ts against a
// WebSocket server. The rules follow the Autobahn testsuite's (a client testing a server):
// a case lists what the client sends, the events it must see in order (messages echoed,
// pongs), and how the connection must end.

/** One frame the client sends. Masked unless `mask: false`; `len` overrides the declared length. */
export interface FrameSpec {
  opcode: number
  payload?: Buffer | string
  fin?: boolean
  /** RSV1..3 as a 3-bit number (4 = RSV1). */
  rsv?: number
  mask?: boolean
  /** Declared payload length when it must differ from the payload's. */
  len?: number
  /** Write the frame's bytes in pieces of this many bytes, each its own socket write. */
  chop?: number
  /** Write the frame alone and wait for it to leave before the next step (Autobahn's `sync`). */
  sync?: boolean
}

export type Step =
  | { frame: FrameSpec }
  /** A whole message, cut into frames of `fragment` bytes (compressed first when deflate is on and `compress`). */
  | { message: Buffer | string; binary?: boolean; fragment?: number; compress?: boolean; chop?: number }
  /** Bytes written as they are. */
  | { raw: Buffer; chop?: number }
  /** Waits until this many events were received (or the connection ended). */
  | { awaitEvents: number }
  /**
   * Waits `ms`; if the server has not started to close by then, records the event
   * `['timeout', mark]` and goes on, else the remaining steps are skipped (Autobahn's
   * `continueLater` of the fail-fast UTF-8 cases).
   */
  | { probe: string; ms: number }
  /** The client's close frame: this code and reason; without a code, the reason alone is the payload. */
  | { close: number | undefined; reason?: Buffer | string }
  /** Sends `count` messages of `size` bytes, each after the echo of the previous one (groups 9, 12, 13). */
  | { roundTrips: RoundTrips }

export interface RoundTrips {
  count: number
  /** The message number i (0-based) to send. */
  message: (i: number) => Buffer
  binary: boolean
  /** Frame size of each message after compression (0: one frame). */
  fragment?: number
  compress?: boolean
}

/** An event the client saw, in order: a data message or a pong. */
export type Event = ['message', Buffer, boolean] | ['pong', Buffer] | ['timeout', string]

/** How the connection must end (Autobahn's expectedClose). */
export interface CloseExpectation {
  /** The client starts the close handshake (once the events match) — else the server must fail the connection. */
  byClient: boolean
  /** The codes the server's close frame may carry (a close without a code, or no close at all where `clean` is false, is fine). */
  codes: number[]
  /** The close handshake must complete (both close frames) and the server close TCP. */
  clean: boolean
  /** The case's steps send the client's close themselves. */
  suppressClose?: boolean
  /** Closing from the wrong end fails the case itself (invalid UTF-8 must be detected). */
  wrongEndFatal?: boolean
}

export interface Case {
  id: string
  what: string
  /** The Sec-WebSocket-Extensions offer (groups 12–13), if any. */
  offer?: string
  steps: Step[]
  /** The events for OK; `nonStrict` for NON-STRICT (e.g. a failure detected only at the message's end). */
  ok?: Event[]
  nonStrict?: Event[]
  close: CloseExpectation
  /** Results are recorded but never fail (the RFC leaves the behaviour open). */
  informational?: boolean
  /** How long to wait for the server at the end, in ms (default 3000; only a failing case waits it out). */
  waitMs?: number
}

export type Verdict = 'OK' | 'NON-STRICT' | 'INFORMATIONAL' | 'FAILED'

export interface Outcome {
  id: string
  verdict: Verdict
  /** What happened when the verdict is FAILED (or for the record). */
  detail: string
}

/** Frequent expectations. */
export const echoThenClose: CloseExpectation = { byClient: true, codes: [1000], clean: true }
export const failWith = (...codes: number[]): CloseExpectation => ({ byClient: false, codes, clean: false })
export const PROTOCOL_ERROR = 1002
export const INVALID_PAYLOAD = 1007
export const TOO_BIG = 1009

export const text = (s: string | Buffer): Event => ['message', Buffer.from(s), false]
export const binary = (b: Buffer): Event => ['message', b, true]
export const pong = (s: string | Buffer = ''): Event => ['pong', Buffer.from(s)]
