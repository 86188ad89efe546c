// Autobahn group 9, limits and throughput, in our own words and with bounded sizes so the
// spec stays fast: single-frame messages up to 4 MiB (Autobahn goes to 16 MiB), a 1 MiB
// message in fragments of 64 B to 1 MiB (Autobahn: 4 MiB), a 256 KiB frame written in pieces
// of 64 B to 2 KiB (Autobahn: 1 MiB), and 100 sequential round trips of 0 B to 4 KiB messages
// (Autobahn: 1000). Each echo must be the exact payload.
import { type Case, binary, echoThenClose, text } from './types'

const KiB = 1024
const MiB = 1024 * KiB
const SIZES = [64 * KiB, 256 * KiB, 1 * MiB, 4 * MiB]
const FRAGMENTS = [64, 256, 1 * KiB, 4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, 1 * MiB]
const CHOPS = [64, 128, 256, 512, 1024, 2048]
const ROUND_TRIP_SIZES = [0, 16, 64, 256, 1 * KiB, 4 * KiB]
const ROUND_TRIPS = 100

const body = (n: number, isBinary: boolean) => (isBinary ? Buffer.alloc(n, 0xfe) : Buffer.alloc(n, 'BAsd7&jh23'))
const echoOf = (b: Buffer, isBinary: boolean) => (isBinary ? binary(b) : text(b))
const kind = (isBinary: boolean) => (isBinary ? 'binary' : 'text')
const size = (n: number) => (n >= MiB ? `${n / MiB} MiB` : n >= KiB ? `${n / KiB} KiB` : `${n} B`)

export const group9: Case[] = [false, true].flatMap((isBinary) => {
  const g = isBinary ? 1 : 0
  const single = SIZES.map((n, i): Case => ({
    id: `9.${1 + g}.${i + 1}`,
    what: `one ${kind(isBinary)} frame of ${size(n)}`,
    steps: [{ frame: { opcode: isBinary ? 2 : 1, payload: body(n, isBinary) } }],
    ok: [echoOf(body(n, isBinary), isBinary)],
    close: echoThenClose,
    waitMs: 10_000,
  }))
  const fragmented = FRAGMENTS.map((f, i): Case => ({
    id: `9.${3 + g}.${i + 1}`,
    what: `a 1 MiB ${kind(isBinary)} message in fragments of ${size(f)}`,
    steps: [{ message: body(MiB, isBinary), binary: isBinary, fragment: f }],
    ok: [echoOf(body(MiB, isBinary), isBinary)],
    close: echoThenClose,
    waitMs: 10_000,
  }))
  const chopped = CHOPS.map((c, i): Case => ({
    id: `9.${5 + g}.${i + 1}`,
    what: `a 256 KiB ${kind(isBinary)} frame written in pieces of ${c} B`,
    steps: [{ frame: { opcode: isBinary ? 2 : 1, payload: body(256 * KiB, isBinary), chop: c } }],
    ok: [echoOf(body(256 * KiB, isBinary), isBinary)],
    close: echoThenClose,
    waitMs: 10_000,
  }))
  const roundTrips = ROUND_TRIP_SIZES.map((n, i): Case => ({
    id: `9.${7 + g}.${i + 1}`,
    what: `${ROUND_TRIPS} ${kind(isBinary)} messages of ${size(n)}, each sent after the previous echo`,
    steps: [{ roundTrips: { count: ROUND_TRIPS, binary: isBinary, message: () => body(n, isBinary) } }],
    ok: [],
    close: echoThenClose,
    waitMs: 10_000,
  }))
  return [...single, ...fragmented, ...chopped, ...roundTrips]
}).sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }))
