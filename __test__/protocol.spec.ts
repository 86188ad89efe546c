import test from 'ava'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import * as native from '../native'
import { PROTOCOL } from '../src/protocol'

const root = join(__dirname, '..')

test('every enum of the TypeScript protocol copy has exactly the values the addon exports', (t) => {
  const addon = native as unknown as Record<string, Record<string, number> | undefined>
  t.true(Object.keys(PROTOCOL).length >= 10)
  for (const [name, members] of Object.entries(PROTOCOL)) t.deepEqual({ ...addon[name] }, { ...members }, name)
})

test('the compiled hub compares wire kinds with integer literals, without loading the protocol module', (t) => {
  for (const f of ['hub.js', 'hub-delivery.js', 'op-stream.js', 'hub-refs.js']) {
    const js = readFileSync(join(root, 'src', f), 'utf8')
    t.notRegex(js, /require\("\.\/protocol"\)/, f)
    t.notRegex(js, /protocol_1\./, f)
  }
  t.regex(readFileSync(join(root, 'src', 'hub-delivery.js'), 'utf8'), /kind === 5 \/\* WireKind\.ReadBytes \*\//)
})

test('the TLS handshake event and the user event sub-codes come from the protocol definition', (t) => {
  // The Rust definition (crates/node/src/protocol/, the records module for wire kinds) is the
  // only place the codes are written.
  const rust = readFileSync(join(root, 'crates', 'node', 'src', 'protocol', 'records.rs'), 'utf8')
  t.regex(rust, /TlsHandshake = 36,/)
  t.is(PROTOCOL.WireKind.TlsHandshake, 36)
  t.deepEqual(Object.keys(PROTOCOL.UserEventKind), ['Token', 'Idle', 'InputShutdown', 'TlsHandshake', 'TlsClose', 'HAProxy', 'WebSocketHandshake'])
  for (const f of ['hub.ts', 'hub-delivery.ts', 'op-stream.ts', 'hub-refs.ts', 'wire.ts', 'loop.ts', 'timers.ts', 'codecs.ts', 'resp.ts', 'http.ts', 'http-wire.ts']) {
    const src = readFileSync(join(root, 'src', f), 'utf8')
    t.notRegex(src, /const enum (W|Dispatch|NativeKind|T)\b/, `${f} redefines a protocol enum`)
  }
})
