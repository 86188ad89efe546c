import test from 'ava'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const root = join(__dirname, '..')

test("inside the repository, an .mjs file imports 'netloop' (self-reference through exports); internals stay private", (t) => {
  const r = spawnSync(process.execPath, [join(__dirname, 'fixtures', 'self-reference.mjs')], { cwd: root, encoding: 'utf8', timeout: 30_000 })
  t.is(r.status, 0, r.stderr)
  t.deepEqual(JSON.parse(r.stdout), { ran: true, state: 'terminated', sameInstance: true, blocked: ['netloop/native', 'netloop/src/loop.js'] })
})

test('index.mjs (the ESM entry) re-exports every name index.js exports', (t) => {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'esm-wrapper.mjs'), '--check'], { cwd: root, encoding: 'utf8' })
  t.is(r.status, 0, `${r.stdout}${r.stderr}`)
})
