import test from 'ava'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { basename, join } from 'node:path'
import ts from 'typescript'

import * as native from '../native'
import { PROTOCOL } from '../src/protocol'

const root = join(__dirname, '..')
const addon = native as unknown as Record<string, Record<string, number> | undefined>

test('every enum of the TypeScript protocol copy has exactly the values the addon exports', (t) => {
  t.true(Object.keys(PROTOCOL).length >= 10)
  for (const [name, members] of Object.entries(PROTOCOL)) t.deepEqual({ ...addon[name] }, { ...members }, name)
})

test('the compiled hub loads no protocol module: its wire kinds are inlined integers', (t) => {
  const hub = ['hub.js', 'hub-delivery.js', 'op-stream.js', 'hub-refs.js']
  if (!hub.every((f) => existsSync(join(root, 'src', f)))) return t.fail('the compiled modules are missing: run `npm run build:ts`')
  // Loads the package's CommonJS entry and records every module the hub's modules require.
  const program = `
    const Module = require('node:module')
    const { basename } = require('node:path')
    const hub = new Set(${JSON.stringify(hub)})
    const loads = []
    const load = Module._load
    Module._load = function (request, parent, isMain) {
      if (parent && parent.filename && hub.has(basename(parent.filename))) loads.push([basename(parent.filename), request])
      return load.apply(this, arguments)
    }
    require('./index.js')
    console.log(JSON.stringify(loads))
  `
  const r = spawnSync(process.execPath, ['-e', program], { cwd: root, encoding: 'utf8', timeout: 30_000 })
  t.is(r.status, 0, r.stderr)
  const loads = JSON.parse(r.stdout) as [string, string][]
  t.true(loads.some(([from]) => from === 'hub.js'), 'the hub was loaded')
  t.deepEqual(
    loads.filter(([, request]) => /^\.\/protocol(-\w+)?$/.test(request)),
    [],
  )
})

test('the TLS handshake event and the user event sub-codes are the addon\'s (the Rust definition)', (t) => {
  t.is(PROTOCOL.WireKind.TlsHandshake, addon.WireKind?.TlsHandshake)
  t.is(PROTOCOL.WireKind.TlsHandshake, 36)
  t.deepEqual(Object.keys(PROTOCOL.UserEventKind), ['Token', 'Idle', 'InputShutdown', 'TlsHandshake', 'TlsClose', 'HAProxy', 'WebSocketHandshake'])
  t.deepEqual(Object.keys(addon.UserEventKind ?? {}), Object.keys(PROTOCOL.UserEventKind))
})

test('no hand-written module declares an enum of the protocol\'s codes again', (t) => {
  // The program the package compiles, read by the TypeScript compiler: every enum declared
  // outside the generated protocol modules, compared with the protocol's enums by members.
  const program = ts.createProgram([join(root, 'index.ts')], { noEmit: true, allowJs: false })
  const generated = /^protocol(-\w+)?\.ts$/
  const protocolMembers = Object.entries(PROTOCOL).map(([name, members]) => [name, new Set(Object.keys(members))] as const)
  const found: string[] = []
  let enums = 0
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(join(root, 'src').replaceAll('\\', '/')) || sf.isDeclarationFile || generated.test(basename(sf.fileName))) continue
    const visit = (node: ts.Node): void => {
      if (ts.isEnumDeclaration(node)) {
        enums++
        const names = node.members.map((m) => m.name.getText(sf))
        for (const [protocolName, members] of protocolMembers) {
          const shared = names.filter((n) => members.has(n))
          if (node.name.text === protocolName || (shared.length >= 2 && shared.length >= names.length / 2)) {
            found.push(`${basename(sf.fileName)}: enum ${node.name.text} repeats ${protocolName} (${shared.join(', ')})`)
          }
        }
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  t.deepEqual(found, [])
  t.log(`${enums} hand-written enums checked`)
})
