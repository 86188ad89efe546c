// Autobahn groups 1–4 in our own words: 1 framing (text and binary messages across the three
// length encodings, one of them written in 997-byte pieces), 2 pings and pongs (answers with
// the exact payload, unsolicited pongs ignored, a 126-byte ping refused), 3 reserved bits and
// 4 reserved opcodes (the connection fails with 1002; a good message sent before the bad frame
// may come back first, or not, NON-STRICT).
import { type Case, type FrameSpec, type Step, binary, echoThenClose, failWith, PROTOCOL_ERROR, pong, text } from './types'

const LENGTHS = [0, 125, 126, 127, 128, 65535, 65536]
const HELLO = 'Hello, world!'
const BYTES = Buffer.from([0x00, 0xff, 0xfe, 0xfd, 0xfc, 0xfb, 0x00, 0xff])
const f = (frame: FrameSpec): Step => ({ frame })

const framing: Case[] = [false, true].flatMap((isBinary, g) => {
  const payloadOf = (n: number) => (isBinary ? Buffer.alloc(n, 0xfe) : Buffer.alloc(n, '*'))
  const sized = [...LENGTHS.map((n) => ({ n, chop: undefined as number | undefined })), { n: 65536, chop: 997 }]
  return sized.map(({ n, chop }, i): Case => ({
    id: `1.${g + 1}.${i + 1}`,
    what: `${isBinary ? 'binary' : 'text'} message of ${n} bytes${chop ? `, written in ${chop}-byte pieces` : ''}`,
    steps: [f({ opcode: isBinary ? 2 : 1, payload: payloadOf(n), chop })],
    ok: [isBinary ? binary(payloadOf(n)) : text(payloadOf(n))],
    close: echoThenClose,
  }))
})

const tenPings = (chop?: number): Case => ({
  id: chop ? '2.11' : '2.10',
  what: `ten pings${chop ? ' written a byte at a time' : ''}: ten pongs in order`,
  steps: Array.from({ length: 10 }, (_, i) => f({ opcode: 9, payload: `payload-${i}`, chop })),
  ok: Array.from({ length: 10 }, (_, i) => pong(`payload-${i}`)),
  close: echoThenClose,
})

const pings: Case[] = [
  { id: '2.1', what: 'ping without payload', steps: [f({ opcode: 9 })], ok: [pong()], close: echoThenClose },
  { id: '2.2', what: 'ping with a text payload', steps: [f({ opcode: 9, payload: HELLO })], ok: [pong(HELLO)], close: echoThenClose },
  { id: '2.3', what: 'ping with a binary payload', steps: [f({ opcode: 9, payload: BYTES })], ok: [pong(BYTES)], close: echoThenClose },
  { id: '2.4', what: 'ping with 125 bytes (the most a control frame holds)', steps: [f({ opcode: 9, payload: Buffer.alloc(125, 0xfe) })], ok: [pong(Buffer.alloc(125, 0xfe))], close: echoThenClose },
  { id: '2.5', what: 'ping with 126 bytes: a protocol error', steps: [f({ opcode: 9, payload: Buffer.alloc(126, 0xfe) })], ok: [], close: failWith(PROTOCOL_ERROR) },
  { id: '2.6', what: 'ping with 125 bytes written a byte at a time', steps: [f({ opcode: 9, payload: Buffer.alloc(125, 0xfe), chop: 1 })], ok: [pong(Buffer.alloc(125, 0xfe))], close: echoThenClose },
  { id: '2.7', what: 'unsolicited pong without payload, then close: nothing comes back', steps: [f({ opcode: 10 }), { close: 1000 }], ok: [], close: echoThenClose },
  { id: '2.8', what: 'unsolicited pong with payload, then close', steps: [f({ opcode: 10, payload: 'unsolicited pong payload' }), { close: 1000 }], ok: [], close: echoThenClose },
  { id: '2.9', what: 'unsolicited pong, then a ping: only the ping is answered', steps: [f({ opcode: 10, payload: 'unsolicited pong payload' }), f({ opcode: 9, payload: 'ping payload' })], ok: [pong('ping payload')], close: echoThenClose },
  tenPings(),
  tenPings(1),
]

/** A good message, a bad frame, a ping: the message may come back first (OK) or not (NON-STRICT). */
function goodThenBad(id: string, what: string, bad: FrameSpec, mode: { sync?: boolean; chop?: number }): Case {
  return {
    id,
    what,
    steps: [f({ opcode: 1, payload: HELLO, ...mode }), f({ ...bad, ...mode }), f({ opcode: 9, ...mode })],
    ok: [text(HELLO)],
    nonStrict: [],
    close: failWith(PROTOCOL_ERROR),
  }
}

const reservedBits: Case[] = [
  { id: '3.1', what: 'text frame with RSV3', steps: [f({ opcode: 1, payload: HELLO, rsv: 1 })], ok: [], close: failWith(PROTOCOL_ERROR) },
  goodThenBad('3.2', 'good text, then a text frame with RSV2, then a ping', { opcode: 1, payload: HELLO, rsv: 2 }, {}),
  goodThenBad('3.3', 'the same with RSV2+RSV3, each frame written alone', { opcode: 1, payload: HELLO, rsv: 3 }, { sync: true }),
  goodThenBad('3.4', 'the same with RSV1 (no extension agreed), a byte at a time', { opcode: 1, payload: HELLO, rsv: 4 }, { chop: 1 }),
  { id: '3.5', what: 'binary frame with RSV1+RSV3', steps: [f({ opcode: 2, payload: BYTES, rsv: 5 })], ok: [], close: failWith(PROTOCOL_ERROR) },
  { id: '3.6', what: 'ping with RSV1+RSV2', steps: [f({ opcode: 9, payload: HELLO, rsv: 6 })], ok: [], close: failWith(PROTOCOL_ERROR) },
  { id: '3.7', what: 'close with all three RSV bits', steps: [f({ opcode: 8, rsv: 7 })], ok: [], close: failWith(PROTOCOL_ERROR) },
]

/** 4.1.x: reserved data opcodes 3..7; 4.2.x: reserved control opcodes 11..15. */
function reservedOpcodes(group: 1 | 2, [a, b, c, d, e]: number[]): Case[] {
  const bad = (op: number): Case => ({ id: '', what: '', steps: [f({ opcode: op })], ok: [], close: failWith(PROTOCOL_ERROR) })
  return [
    { ...bad(a), id: `4.${group}.1`, what: `opcode ${a} without payload` },
    { ...bad(b), id: `4.${group}.2`, what: `opcode ${b} with payload`, steps: [f({ opcode: b, payload: 'reserved opcode payload' })] },
    goodThenBad(`4.${group}.3`, `good text, opcode ${c}, a ping`, { opcode: c }, {}),
    goodThenBad(`4.${group}.4`, `good text, opcode ${d} with payload, a ping`, { opcode: d, payload: HELLO }, {}),
    goodThenBad(`4.${group}.5`, `good text, opcode ${e} with payload, a ping, a byte at a time`, { opcode: e, payload: HELLO }, { chop: 1 }),
  ]
}

export const group1 = framing
export const group2 = pings
export const group3 = reservedBits
export const group4 = [...reservedOpcodes(1, [3, 4, 5, 6, 7]), ...reservedOpcodes(2, [11, 12, 13, 14, 15])]
