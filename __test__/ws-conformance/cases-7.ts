// Autobahn group 7, the close handshake, in our own words: after the client's close, frames
// that follow are ignored and the server answers once and ends TCP; close payloads (none,
// 1 byte: 1002, code only, code and reason, 123 bytes of reason, 124: too long for a control
// frame, a reason that is not UTF-8: 1002 or 1007); the codes a peer may send (echoed, or
// answered with 1000) and those it may not (1002). 7.1.6 and 7.13.x are informational as in
// Autobahn: the RFC leaves the outcome open.
import { type Case, type CloseExpectation, echoThenClose, INVALID_PAYLOAD, PROTOCOL_ERROR, text } from './types'

const HELLO = 'Hello World!'
const clientClose = (codes = [1000]): CloseExpectation => ({ byClient: true, codes, clean: true, suppressClose: true })
const clientCloseRefused = (codes = [PROTOCOL_ERROR]): CloseExpectation => ({ byClient: true, codes, clean: false, suppressClose: true })

const afterClose: Case[] = [
  { id: '7.1.1', what: 'a message, then the client closes', steps: [{ frame: { opcode: 1, payload: HELLO } }], ok: [text(HELLO)], close: echoThenClose },
  { id: '7.1.2', what: 'close, then a second close', steps: [{ close: 1000 }, { frame: { opcode: 8 } }], ok: [], close: clientClose() },
  { id: '7.1.3', what: 'close, then a ping (not answered)', steps: [{ close: 1000 }, { frame: { opcode: 9 } }], ok: [], close: clientClose() },
  { id: '7.1.4', what: 'close, then text (not echoed)', steps: [{ close: 1000 }, { frame: { opcode: 1, payload: HELLO } }], ok: [], close: clientClose() },
  {
    id: '7.1.5',
    what: 'a first fragment, close, then the last fragment (the message never completes)',
    steps: [{ frame: { opcode: 1, fin: false, payload: 'fragment1' } }, { close: 1000 }, { frame: { opcode: 0, payload: 'fragment2' } }],
    ok: [],
    close: clientClose(),
  },
  {
    id: '7.1.6',
    what: '256 KiB of text, a small text, close and a ping at once: the small echo may or may not come before the close',
    steps: [{ frame: { opcode: 1, payload: Buffer.alloc(256 * 1024, 'BAsd7&jh23') } }, { frame: { opcode: 1, payload: HELLO } }, { close: 1000 }, { frame: { opcode: 9 } }],
    ok: [text(Buffer.alloc(256 * 1024, 'BAsd7&jh23')), text(HELLO)],
    close: clientClose(),
    informational: true,
  },
]

const KOSME_SURROGATE = Buffer.from('cebae1bdb9cf83cebcceb5eda080656469746564', 'hex')
const payloads: Case[] = [
  { id: '7.3.1', what: 'close without payload', steps: [{ close: undefined }], ok: [], close: clientClose() },
  { id: '7.3.2', what: 'close with a 1-byte payload', steps: [{ close: undefined, reason: 'a' }], ok: [], close: clientCloseRefused() },
  { id: '7.3.3', what: 'close 1000 without reason', steps: [{ close: 1000 }], ok: [], close: clientClose() },
  { id: '7.3.4', what: 'close 1000 with a reason', steps: [{ close: 1000, reason: 'Hello World!' }], ok: [], close: clientClose() },
  { id: '7.3.5', what: 'close 1000 with a 123-byte reason (125 in all)', steps: [{ close: 1000, reason: '*'.repeat(123) }], ok: [], close: clientClose() },
  { id: '7.3.6', what: 'close 1000 with a 124-byte reason (126: too long)', steps: [{ close: 1000, reason: '*'.repeat(124) }], ok: [], close: clientCloseRefused() },
  { id: '7.5.1', what: 'close 1000 with a reason that is not UTF-8', steps: [{ close: 1000, reason: KOSME_SURROGATE }], ok: [], close: clientCloseRefused([PROTOCOL_ERROR, INVALID_PAYLOAD]) },
]

const VALID_CODES = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999]
const INVALID_CODES = [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999]
const codes: Case[] = [
  ...VALID_CODES.map((code, i): Case => ({ id: `7.7.${i + 1}`, what: `close with code ${code}: echoed or answered 1000`, steps: [{ close: code }], ok: [], close: clientClose([1000, code]) })),
  ...INVALID_CODES.map((code, i): Case => ({ id: `7.9.${i + 1}`, what: `close with code ${code}, which may not be sent: 1002`, steps: [{ close: code }], ok: [], close: clientCloseRefused() })),
  { id: '7.13.1', what: 'close with code 5000 (outside every range)', steps: [{ close: 5000 }], ok: [], close: clientCloseRefused([1000, 5000, PROTOCOL_ERROR]), informational: true },
  { id: '7.13.2', what: 'close with code 65535', steps: [{ close: 65535 }], ok: [], close: clientCloseRefused([1000, 65535, PROTOCOL_ERROR]), informational: true },
]

export const group7 = [...afterClose, ...payloads, ...codes]
