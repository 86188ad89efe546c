// Every ```ts block of docs/guide.md and README.md runs as written from a user's project, or
// says why it cannot. A block is one of:
// - an example of examples/guide/ shown verbatim (guide.spec.ts runs those against clients);
// - marked on the line before its fence with `<!-- fragment: why -->`: a piece of a larger
//   program (an option, a method inside a handler), checked only to carry a reason;
// - otherwise a program: written into an empty project (node_modules/netloop linking this
//   package; the test PKI's server.pem, server.key, ca.pem and server.pfx beside it, as a
//   user's own files; PORT=0; a block whose first line names a file, `// main.ts`, is
//   written under that name, for the others of its program to import), run under tsx, and it must exit 0, or print `listening on` and
//   still be serving without an error a moment later (a server, stopped then).
import test from 'ava'
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { assertLibraryBuilt, root } from './example-helpers'
import { certsDir } from './tls-helpers'

interface Block {
  where: string
  code: string
  fragment: string | undefined
}

/** The ```ts blocks of `file`, dedented, with the fragment reason of the line before each. */
function blocks(file: string): Block[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n')
  const out: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```ts\s*$/.exec(lines[i])
    if (!open) continue
    const indent = open[1].length
    let j = i + 1
    while (!/^\s*```\s*$/.test(lines[j])) j++
    const code = lines
      .slice(i + 1, j)
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n')
    let k = i - 1
    while (k >= 0 && lines[k].trim() === '') k--
    const marker = /<!--\s*fragment:\s*(.*?)\s*-->/.exec(lines[k] ?? '')
    out.push({ where: `${file}:${i + 1}`, code: `${code}\n`, fragment: marker ? marker[1] : undefined })
    i = j
  }
  return out
}

const examples = readdirSync(join(root, 'examples', 'guide')).map((f) => readFileSync(join(root, 'examples', 'guide', f), 'utf8'))
const all = [...blocks('docs/guide.md'), ...blocks('README.md')]

let project: string | undefined
/** The user's project: an empty directory with netloop installed (linked) and their certificate files. */
function userProject(): string {
  if (project) return project
  project = mkdtempSync(join(tmpdir(), 'netloop-guide-'))
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(root, join(project, 'node_modules', 'netloop'), 'dir')
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'guide-user', private: true, type: 'module' }))
  // What the user installed besides netloop for the snippets that use it.
  for (const dep of ['undici', 'tsx']) symlinkSync(join(root, 'node_modules', dep), join(project, 'node_modules', dep), 'dir')
  for (const f of ['server.pem', 'server.key', 'ca.pem', 'server.pfx']) copyFileSync(join(certsDir(), f), join(project, f))
  // The files of a program shown in several blocks (`// main.ts`, `// handlers.ts`).
  for (const b of all) if (fileOf(b) !== undefined) writeFileSync(join(project, fileOf(b)!), b.code)
  return project
}

/** The file name a block gives itself in its first line (`// handlers.ts: ...`), if any. */
function fileOf(b: Block): string | undefined {
  return /^\/\/ ([\w-]+\.ts)\b/.exec(b.code)?.[1]
}
test.after.always(() => project && rmSync(project, { recursive: true, force: true }))

const DEADLINE_MS = 60_000
/** How long a server keeps running after it said it is listening, to show it serves without an error. */
const SERVING_MS = 500
const tsx = pathToFileURL(join(root, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href

/**
 * Runs `file` in the project until it exits, or until it printed `listening on` and ran
 * SERVING_MS more (then it is stopped: code null), or DEADLINE_MS passed (code undefined).
 */
function runSnippet(file: string): Promise<{ code: number | null | undefined; out: string; err: string }> {
  const dir = userProject()
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', tsx, file], {
      cwd: dir,
      env: { ...process.env, PORT: '0', PFX_PASSPHRASE: 'netloop', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    let stop: NodeJS.Timeout | undefined
    const deadline = setTimeout(() => {
      child.kill('SIGKILL')
      resolve({ code: undefined, out, err })
    }, DEADLINE_MS)
    child.stdout!.on('data', (d) => {
      out += d
      if (stop === undefined && /listening on/.test(out)) {
        stop = setTimeout(() => {
          clearTimeout(deadline)
          child.kill('SIGKILL')
          resolve({ code: null, out, err })
        }, SERVING_MS)
      }
    })
    child.stderr!.on('data', (d) => (err += d))
    child.on('exit', (code) => {
      clearTimeout(deadline)
      if (stop !== undefined) clearTimeout(stop)
      resolve({ code: code ?? -1, out, err })
    })
  })
}

test('every ts block of the guide and the README is an example, a program, or a fragment with a reason', (t) => {
  t.true(all.length >= 30, `found ${all.length} blocks`)
  for (const b of all) if (b.fragment !== undefined) t.true(b.fragment.length > 10, `${b.where}: a fragment says why it is one`)
})

for (const b of all) {
  if (b.fragment !== undefined || examples.some((e) => e === b.code || e.includes(b.code.trimEnd()))) continue
  test.serial(`${b.where} runs as written in a user's project`, async (t) => {
    assertLibraryBuilt()
    const dir = userProject()
    const file = fileOf(b) ?? `${b.where.replace(/[/.:]/g, '-')}.mts`
    writeFileSync(join(dir, file), b.code)
    const r = await runSnippet(file)
    t.log(r.out.trim())
    t.true(r.code === 0 || (r.code === null && !/\bError\b/.test(r.err)), `${r.code === undefined ? 'neither exited nor printed "listening on"' : `exit ${r.code}`}\n${r.out}\n${r.err}`)
    t.is(r.err.includes('    at '), false, `no stack trace on stderr:\n${r.err}`)
  })
}
