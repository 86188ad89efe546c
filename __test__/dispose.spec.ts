// Symbol.asyncDispose on channels: `await using` closes a channel at the end of its scope.
import test from 'ava'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import * as net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Bootstrap, ServerBootstrap, type Channel } from '../index'
import { withLoop } from './helpers'

const root = join(__dirname, '..')

test('channel[Symbol.asyncDispose]() closes the channel; a server channel stops listening', async (t) => {
  const loop = withLoop(t)
  const server = (await new ServerBootstrap().group(loop).childHandler(() => undefined).bind(0, '127.0.0.1')) as Channel
  const port = server.localAddress!.port
  const ch = await new Bootstrap().group(loop).handler(() => undefined).connect(port, '127.0.0.1')
  t.true(ch.isOpen)
  await ch[Symbol.asyncDispose]()
  t.false(ch.isOpen)
  await server[Symbol.asyncDispose]()
  t.false(server.isOpen)
  const refused = await new Promise<string | undefined>((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(undefined))
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code))
  })
  t.is(refused, 'ECONNREFUSED')
})

test('await using, compiled by the package tsc settings, closes a channel and a server, and shuts a loop and a group down, when their scopes end', (t) => {
  const out = mkdtempSync(join(tmpdir(), 'netloop-await-using-'))
  t.teardown(() => rmSync(out, { recursive: true, force: true }))
  // The package's own compiler options (tsconfig.json), this fixture as the program.
  const config = join(out, 'tsconfig.json')
  const compilerOptions = { outDir: out, rootDir: root, declaration: false, typeRoots: [join(root, 'node_modules', '@types')] }
  writeFileSync(config, JSON.stringify({ extends: join(root, 'tsconfig.json'), compilerOptions, files: [join(root, '__test__', 'fixtures', 'await-using.ts')] }))
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { cwd: root, encoding: 'utf8', timeout: 120_000 })
  t.is(tsc.status, 0, tsc.stdout + tsc.stderr)
  const env = { ...process.env, NETLOOP_INDEX: join(root, 'index.js') }
  delete env.NODE_OPTIONS
  const run = spawnSync(process.execPath, [join(out, '__test__', 'fixtures', 'await-using.js')], { encoding: 'utf8', timeout: 30_000, env })
  t.is(run.status, 0, run.stderr)
  t.deepEqual(run.stdout.trim().split('\n'), ['open in scope: true', 'open after scope: false', 'peer saw the close', 'listening in scope: true', 'listening after scope: false', 'loop in scope: started, group terminated: false', 'loop after scope: terminated, group terminated: true'])
})
