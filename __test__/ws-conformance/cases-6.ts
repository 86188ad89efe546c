// Autobahn group 6, UTF-8 in text messages, in our own words: empty and fragmented messages,
// valid text cut inside code points, and the vectors of Markus Kuhn's UTF-8 decoder test
// (valid sequences, prefixes, boundaries, lonely and missing continuation bytes, overlong
// forms, surrogates, non-characters): valid ones come back, invalid ones fail the connection
// with 1007 (or a dropped TCP), from the server's end. 6.4.x check "fail fast": the server
// must fail as soon as the byte that cannot continue UTF-8 arrives, not when the message ends
// (NON-STRICT when it waits for the rest).
import { encodeFrame } from './driver'
import { type Case, type Step, echoThenClose, INVALID_PAYLOAD, text } from './types'

const failUtf8 = { byClient: false, codes: [INVALID_PAYLOAD], clean: false, wrongEndFatal: true }
const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex')
const KOSME = hex('ceba e1bdb9 cf83 cebc ceb5') // κόσμε
const BAD_TAIL = hex('65 64 69 74 65 64') // "edited"

/** One-frame text whose verdict depends on validity. */
const single = (id: string, payload: Buffer, valid: boolean): Case => ({
  id,
  what: `${valid ? 'valid' : 'invalid'} UTF-8 ${payload.toString('hex')}`,
  steps: [{ frame: { opcode: 1, payload } }],
  ok: valid ? [text(payload)] : [],
  close: valid ? echoThenClose : failUtf8,
})

/** Each byte its own frame. */
const bytewise = (payload: Buffer): Step[] =>
  [...payload].map((b, i) => ({ frame: { opcode: i === 0 ? 1 : 0, fin: i === payload.length - 1, payload: Buffer.from([b]) } }))

/** 6.4.x: three parts with a wait after the first and the second; the second holds the bad byte. */
function failFast(id: string, what: string, parts: Buffer[], asFrames: boolean): Case {
  let steps: Step[]
  if (asFrames) {
    steps = parts.map((payload, i) => ({ frame: { opcode: i === 0 ? 1 : 0, fin: i === 2, payload } }))
  } else {
    const frame = encodeFrame({ opcode: 1, payload: Buffer.concat(parts) })
    const head = frame.length - Buffer.concat(parts).length
    const cut1 = head + parts[0].length
    const cut2 = cut1 + parts[1].length
    steps = [{ raw: frame.subarray(0, cut1) }, { raw: frame.subarray(cut1, cut2) }, { raw: frame.subarray(cut2) }]
  }
  return {
    id,
    what,
    steps: [steps[0], { probe: 'A', ms: 100 }, steps[1], { probe: 'B', ms: 1000 }, steps[2]],
    ok: [['timeout', 'A']],
    nonStrict: [['timeout', 'A'], ['timeout', 'B']],
    close: failUtf8,
  }
}

// Markus Kuhn's vectors by Autobahn's subcategory (6.5 ... 6.23); '!' marks an invalid one.
const KOSME_PREFIXES = Array.from({ length: KOSME.length }, (_, i) => KOSME.subarray(0, i + 1).toString('hex'))
const nonCharacters = ['efbfbe', 'efbfbf']
for (const z1 of ['f0', 'f1', 'f2', 'f3', 'f4']) {
  for (const z2 of ['8f', '9f', 'af', 'bf']) {
    if (z1 === 'f4' && z2 !== '8f') continue // above U+10FFFF
    for (const z3 of ['be', 'bf']) if (!(z1 === 'f0' && z2 === '8f')) nonCharacters.push(`${z1}${z2}bf${z3}`)
  }
}
const range = (from: number, to: number, sep = '') => Array.from({ length: to - from }, (_, i) => (from + i).toString(16) + sep).join('')
const missing = ['c0', 'e080', 'f08080', 'f8808080', 'fc80808080', 'df', 'efbf', 'f7bfbf', 'fbbfbfbf', 'fdbfbfbfbf']
const VECTORS: string[][] = [
  ['68656c6c6f24776f726c64', '68656c6c6fc2a2776f726c64', '68656c6c6fe282ac776f726c64', '68656c6c6ff0a4ada2776f726c64', KOSME.toString('hex')],
  KOSME_PREFIXES, // validity decided below: a prefix cut inside a character is invalid
  ['00', 'c280', 'e0a080', 'f0908080'],
  ['!f888808080', '!fc8480808080'],
  ['7f', 'dfbf', 'efbfbf', 'f48fbfbf'],
  ['!f7bfbfbf', '!fbbfbfbfbf', '!fdbfbfbfbfbf'],
  ['ed9fbf', 'ee8080', 'efbfbd', 'f48fbfbf', '!f4908080'],
  ['!80', '!bf', '!80bf', '!80bf80', '!80bf80bf', '!80bf80bf80', '!80bf80bf80bf', `!${range(0x80, 0xbf)}`],
  [[0xc0, 0xdf], [0xe0, 0xef], [0xf0, 0xf7], [0xf8, 0xfb], [0xfc, 0xfd]].map(([a, b]) => `!${range(a, b, '20')}`),
  missing.map((m) => `!${m}`),
  [`!${missing.join('')}`],
  ['!fe', '!ff', '!fefeffff'],
  ['!c0af', '!e080af', '!f08080af', '!f8808080af', '!fc80808080af'],
  ['!c1bf', '!e09fbf', '!f08fbfbf', '!f887bfbfbf', '!fc83bfbfbfbf'],
  ['!c080', '!e08080', '!f0808080', '!f880808080', '!fc8080808080'],
  ['!eda080', '!edadbf', '!edae80', '!edafbf', '!edb080', '!edbe80', '!edbfbf'],
  ['!eda080edb080', '!eda080edbfbf', '!edadbfedb080', '!edadbfedbfbf', '!edae80edb080', '!edae80edbfbf', '!edafbfedb080', '!edafbfedbfbf'],
  nonCharacters,
  ['efbfb9', 'efbfba', 'efbfbb', 'efbfbc', 'efbfbd', 'efbfbe', 'efbfbf'],
]

const strictDecoder = new TextDecoder('utf-8', { fatal: true })
const isValid = (b: Buffer) => {
  try {
    strictDecoder.decode(b)
    return true
  } catch {
    return false
  }
}

const kuhn: Case[] = VECTORS.flatMap((list, g) =>
  list.map((v, i) => {
    const payload = hex(v.replace('!', ''))
    const valid = g === 1 ? isValid(payload) : !v.startsWith('!')
    // The data and the platform's strict decoder agree, so a typo in a vector cannot pass unnoticed.
    if (valid !== isValid(payload)) throw new Error(`UTF-8 vector 6.${g + 5}.${i + 1} (${v}) is marked wrongly`)
    return single(`6.${g + 5}.${i + 1}`, payload, valid)
  }),
)

const MIXED = Buffer.from('Hello-µ@ßöäüàá-UTF-8!!')
const INVALID = Buffer.concat([KOSME, hex('eda080'), BAD_TAIL]) // fails on its 13th byte
const TOO_HIGH = Buffer.concat([KOSME, hex('f4908080'), BAD_TAIL]) // U+110000, fails on its 13th byte

export const group6: Case[] = [
  { id: '6.1.1', what: 'empty text', steps: [{ frame: { opcode: 1 } }], ok: [text('')], close: echoThenClose },
  { id: '6.1.2', what: 'three empty fragments', steps: [{ frame: { opcode: 1, fin: false } }, { frame: { opcode: 0, fin: false } }, { frame: { opcode: 0 } }], ok: [text('')], close: echoThenClose },
  {
    id: '6.1.3',
    what: 'empty, non-empty, empty fragments',
    steps: [{ frame: { opcode: 1, fin: false } }, { frame: { opcode: 0, fin: false, payload: 'middle frame payload' } }, { frame: { opcode: 0 } }],
    ok: [text('middle frame payload')],
    close: echoThenClose,
  },
  { id: '6.2.1', what: 'valid multi-byte text in one frame', steps: [{ frame: { opcode: 1, payload: MIXED } }], ok: [text(MIXED)], close: echoThenClose },
  {
    id: '6.2.2',
    what: 'valid text in two fragments cut between characters',
    steps: [{ frame: { opcode: 1, fin: false, payload: 'Hello-µ@ßöä' } }, { frame: { opcode: 0, payload: 'üàá-UTF-8!!' } }],
    ok: [text(MIXED)],
    close: echoThenClose,
  },
  { id: '6.2.3', what: 'valid text, one byte per frame (frames end inside characters)', steps: bytewise(MIXED), ok: [text(MIXED)], close: echoThenClose },
  { id: '6.2.4', what: 'κόσμε, one byte per frame', steps: bytewise(KOSME), ok: [text(KOSME)], close: echoThenClose },
  { id: '6.3.1', what: 'a surrogate inside text, one frame', steps: [{ frame: { opcode: 1, payload: INVALID } }], ok: [], close: failUtf8 },
  { id: '6.3.2', what: 'a surrogate inside text, one byte per frame', steps: bytewise(INVALID), ok: [], close: failUtf8 },
  failFast('6.4.1', 'three frames; the second holds a code point above U+10FFFF', [KOSME, hex('f4908080'), BAD_TAIL], true),
  failFast('6.4.2', 'three frames; the second is only the byte that makes it invalid', [TOO_HIGH.subarray(0, 12), TOO_HIGH.subarray(12, 13), TOO_HIGH.subarray(13)], true),
  failFast('6.4.3', 'one frame written in three parts; the second holds the invalid code point', [KOSME, hex('f4908080'), BAD_TAIL], false),
  failFast('6.4.4', 'one frame in three parts; the second is only the byte that makes it invalid', [TOO_HIGH.subarray(0, 12), TOO_HIGH.subarray(12, 13), TOO_HIGH.subarray(13)], false),
  ...kuhn,
]
