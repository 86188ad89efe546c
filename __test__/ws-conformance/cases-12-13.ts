// Autobahn groups 12 and 13, permessage-deflate (RFC 7692), in our own words: messages of
// 16 B to 128 KiB compressed by the client, sent whole or cut into frames of 256 B to 32 KiB
// after compression, each sent after the previous echo, which must inflate (under the agreed
// window and context rules, checked by the driver) to the exact payload. Group 12 varies the
// payload (JSON and HTML as text; an image, prose and random bytes as binary) under a browser's
// offer; group 13 varies the offer (context takeover off on either side, window bits 9..15 on
// either side, several offers in one header). Autobahn reads its payloads from files and sends
// 1000 messages per case; these are generated, and 4 per case.
import type { Case, Step } from './types'
import { echoThenClose } from './types'

const KiB = 1024
// [message size, frame size after compression (0: one frame)], Autobahn's table.
const SIZES: [number, number][] = [
  ...[16, 64, 256, 1, 4, 8, 16, 32, 64, 128].map((n, i): [number, number] => [i < 3 ? n : n * KiB, 0]),
  ...[8, 16, 32, 64, 128].map((n): [number, number] => [n * KiB, 256]),
  ...[1, 4, 32].map((f): [number, number] => [128 * KiB, f * KiB]),
]
const MESSAGES = 4

/** A small deterministic generator, so every run sends the same bytes. */
function prng(seed: number) {
  let x = seed
  return (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    return (x >>> 8) % n
  }
}

function json(size: number): Buffer {
  const r = prng(1)
  const names = ['alpha', 'beta', 'gamma', 'delta', 'netloop', 'socket', 'frame', 'window']
  const rows: string[] = []
  for (let i = 0; rows.join(',').length < size; i++) {
    rows.push(JSON.stringify({ id: i, name: names[r(8)], tags: [names[r(8)], names[r(8)]], score: r(100000) / 100, active: r(2) === 1 }))
  }
  return Buffer.from(`[${rows.join(',\n')}]`)
}

function html(size: number): Buffer {
  const r = prng(2)
  const words = ['the', 'event', 'loop', 'reads', 'frames', 'and', 'writes', 'messages', 'to', 'every', 'channel']
  let s = '<!doctype html><html><body>\n'
  while (s.length < size) {
    const line = Array.from({ length: 8 + r(12) }, () => words[r(words.length)]).join(' ')
    s += `<div class="row r${r(20)}"><p>${line}</p><a href="/item/${r(1000)}">more</a></div>\n`
  }
  return Buffer.from(s)
}

function bitmap(size: number): Buffer {
  const b = Buffer.alloc(size)
  for (let i = 0; i < size; i++) b[i] = ((i % 512) * 3 + Math.floor(i / 512) * 5) & 0xff & (i % 7 === 0 ? 0xf0 : 0xff)
  return b
}

function prose(size: number): Buffer {
  const r = prng(3)
  const words = ['Habe', 'nun,', 'ach!', 'Philosophie,', 'Juristerei', 'und', 'Medizin,', 'Größe', 'Übermut', 'heißt', 'Straße', 'schön']
  let s = ''
  while (Buffer.byteLength(s) < size) s += `${words[r(words.length)]} `
  return Buffer.from(s)
}

function random(size: number): Buffer {
  const r = prng(4)
  return Buffer.from(Array.from({ length: size }, () => r(256)))
}

const DATA = 256 * KiB
const KINDS: { name: string; data: Buffer; binary: boolean }[] = [
  { name: 'JSON (text)', data: json(DATA), binary: false },
  { name: 'a bitmap (binary)', data: bitmap(DATA), binary: true },
  { name: 'German prose (binary)', data: prose(DATA), binary: true },
  { name: 'HTML (text)', data: html(DATA), binary: false },
  { name: 'random bytes (binary)', data: random(DATA), binary: true },
]

/** Message i of `size` bytes: consecutive slices of `data`, wrapping around. */
const slice = (data: Buffer, size: number) => (i: number) => {
  const from = (i * size) % data.length
  return from + size <= data.length ? data.subarray(from, from + size) : Buffer.concat([data.subarray(from), data.subarray(0, size - (data.length - from))])
}

function cases(group: string, offer: string, kind: (typeof KINDS)[number], label: string, sizes = SIZES): Case[] {
  return sizes.map(([size, fragment], i) => {
    const step: Step = { roundTrips: { count: MESSAGES, binary: kind.binary, message: slice(kind.data, size), fragment, compress: true } }
    return {
      id: `${group}.${i + 1}`,
      what: `${MESSAGES} compressed messages of ${size} B${fragment ? ` in ${fragment}-byte frames` : ''}, ${label}`,
      offer,
      steps: [step],
      ok: [],
      close: echoThenClose,
      waitMs: 10_000,
    }
  })
}

const BROWSER = 'permessage-deflate; client_max_window_bits'
export const group12: Case[] = KINDS.flatMap((kind, k) => cases(`12.${k + 1}`, BROWSER, kind, kind.name))

const OFFERS = [
  // Autobahn's seven: its default offer, then server context takeover and window bits asked for.
  'permessage-deflate; client_no_context_takeover; client_max_window_bits',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_max_window_bits=9',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_max_window_bits=15',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover; server_max_window_bits=9',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover; server_max_window_bits=15',
  'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover; server_max_window_bits=9, ' +
    'permessage-deflate; client_no_context_takeover; client_max_window_bits; server_no_context_takeover, ' +
    'permessage-deflate; client_no_context_takeover; client_max_window_bits',
  // Ours: the client's own window small, both windows mid-size, a bare offer, an unknown extension first.
  'permessage-deflate; client_max_window_bits=9',
  'permessage-deflate; server_max_window_bits=12; client_max_window_bits=12',
  'permessage-deflate',
  'x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=10; client_max_window_bits',
]
/** For our own offers (13.8 on), a few sizes: small, one frame, many frames, large. */
const FEW_SIZES = SIZES.filter(([size, fragment]) => [64, 4 * KiB, 64 * KiB].includes(size) || (size === 128 * KiB && fragment !== 256))
export const group13: Case[] = OFFERS.flatMap((offer, o) => cases(`13.${o + 1}`, offer, KINDS[0], `offer "${offer}"`, o < 7 ? SIZES : FEW_SIZES))
