// Autobahn group 5, fragmentation in our own words: fragmented control frames (1002), text in
// fragments (whole, frame by frame, a byte at a time), pings between fragments answered before
// the message completes, and continuations out of place (a continuation without a message, a
// new data frame inside one: 1002). Each layout is tried three ways where Autobahn does: in one
// write, each frame alone (`sync`), and a byte at a time (`chop: 1`).
import { type Case, type FrameSpec, type Step, echoThenClose, failWith, PROTOCOL_ERROR, pong, text } from './types'

type Mode = { sync?: boolean; chop?: number }
const MODES: Mode[] = [{}, { sync: true }, { chop: 1 }]
const frames = (list: FrameSpec[], mode: Mode): Step[] => list.map((frame) => ({ frame: { ...frame, ...mode } }))
const HELLO = 'Hello, world!'

function threeWays(first: number, what: string, list: FrameSpec[], rest: Omit<Case, 'id' | 'what' | 'steps'>): Case[] {
  const how = ['in one write', 'each frame alone', 'a byte at a time']
  return MODES.map((mode, i) => ({ id: `5.${first + i}`, what: `${what}, ${how[i]}`, steps: frames(list, mode), ...rest }))
}

const twoFragments: FrameSpec[] = [
  { opcode: 1, fin: false, payload: 'fragment1' },
  { opcode: 0, fin: true, payload: 'fragment2' },
]
const pingBetween: FrameSpec[] = [twoFragments[0], { opcode: 9, payload: 'ping payload' }, twoFragments[1]]

/** 5.19/5.20: five fragments, a ping after the second and the fourth; the rest waits for the first pong. */
function longMessage(id: string, mode: Mode): Case {
  const frag = (i: number, fin = false): FrameSpec => ({ opcode: i === 1 ? 1 : 0, fin, payload: `fragment${i}` })
  return {
    id,
    what: `five fragments with two pings between them, the second half sent after the first pong${mode.sync ? ', each frame alone' : ''}`,
    steps: [
      ...frames([frag(1), frag(2), { opcode: 9, payload: 'pongme 1!' }], mode),
      { awaitEvents: 1 },
      ...frames([frag(3), frag(4), { opcode: 9, payload: 'pongme 2!' }, frag(5, true)], mode),
    ],
    ok: [pong('pongme 1!'), pong('pongme 2!'), text('fragment1fragment2fragment3fragment4fragment5')],
    close: echoThenClose,
  }
}

export const group5: Case[] = [
  { id: '5.1', what: 'a ping in two fragments', steps: frames([{ opcode: 9, fin: false, payload: 'fragment1' }, { opcode: 0, payload: 'fragment2' }], {}), ok: [], close: failWith(PROTOCOL_ERROR) },
  { id: '5.2', what: 'a pong in two fragments', steps: frames([{ opcode: 10, fin: false, payload: 'fragment1' }, { opcode: 0, payload: 'fragment2' }], {}), ok: [], close: failWith(PROTOCOL_ERROR) },
  ...threeWays(3, 'text in two fragments', twoFragments, { ok: [text('fragment1fragment2')], close: echoThenClose }),
  ...threeWays(6, 'text in two fragments with a ping between', pingBetween, { ok: [pong('ping payload'), text('fragment1fragment2')], close: echoThenClose }),
  ...threeWays(9, 'a final continuation without a message, then text', [{ opcode: 0, payload: 'non-continuation payload' }, { opcode: 1, payload: HELLO }], { ok: [], close: failWith(PROTOCOL_ERROR) }),
  ...threeWays(12, 'a non-final continuation without a message, then text', [{ opcode: 0, fin: false, payload: 'non-continuation payload' }, { opcode: 1, payload: HELLO }], { ok: [], close: failWith(PROTOCOL_ERROR) }),
  {
    id: '5.15',
    what: 'a good fragmented message, then a continuation without a message',
    steps: frames([...twoFragments, { opcode: 0, fin: false, payload: 'fragment3' }, { opcode: 1, payload: 'fragment4' }], {}),
    ok: [text('fragment1fragment2')],
    nonStrict: [],
    close: failWith(PROTOCOL_ERROR),
  },
  {
    id: '5.16',
    what: 'continuation, text, continuation (twice): the first frame is already wrong',
    steps: frames([0, 1].flatMap((): FrameSpec[] => [{ opcode: 0, fin: false, payload: 'fragment1' }, { opcode: 1, fin: false, payload: 'fragment2' }, { opcode: 0, payload: 'fragment3' }]), {}),
    ok: [],
    close: failWith(PROTOCOL_ERROR),
  },
  {
    id: '5.17',
    what: 'a final continuation, text, continuation (twice)',
    steps: frames([0, 1].flatMap((): FrameSpec[] => [{ opcode: 0, payload: 'fragment1' }, { opcode: 1, fin: false, payload: 'fragment2' }, { opcode: 0, payload: 'fragment3' }]), {}),
    ok: [],
    close: failWith(PROTOCOL_ERROR),
  },
  { id: '5.18', what: 'a text fragment followed by a new text frame', steps: frames([{ opcode: 1, fin: false, payload: 'fragment1' }, { opcode: 1, payload: 'fragment2' }], {}), ok: [], close: failWith(PROTOCOL_ERROR) },
  longMessage('5.19', {}),
  longMessage('5.20', { sync: true }),
]
