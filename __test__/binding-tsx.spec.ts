import test from 'ava'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(__dirname, '..')

/**
 * netloop laid out as an install puts it: the package's JavaScript in node_modules/netloop and
 * the binary in the platform package netloop-linux-x64-gnu (whose `main` is the `.node` file).
 */
function installedCopy(t: { teardown(fn: () => void): void }): string {
  const app = mkdtempSync(join(tmpdir(), 'netloop-cts-'))
  t.teardown(() => rmSync(app, { recursive: true, force: true }))
  const pkg = join(app, 'node_modules', 'netloop')
  mkdirSync(join(pkg, 'src'), { recursive: true })
  for (const f of ['package.json', 'index.js', 'index.mjs', 'native.js']) copyFileSync(join(root, f), join(pkg, f))
  for (const dir of ['src', join('src', 'generated')]) {
    mkdirSync(join(pkg, dir), { recursive: true })
    for (const f of readdirSync(join(root, dir)).filter((f) => f.endsWith('.js'))) copyFileSync(join(root, dir, f), join(pkg, dir, f))
  }
  // This machine's binary (the root may also hold other targets' builds, e.g. linux-arm64-gnu).
  const binary = readdirSync(root).find((f) => f.startsWith(`netloop.${process.platform}-${process.arch}`) && f.endsWith('.node'))!
  const platform = join(app, 'node_modules', `netloop-${binary.split('.')[1]}`)
  mkdirSync(platform)
  writeFileSync(join(platform, 'package.json'), JSON.stringify({ name: `netloop-${binary.split('.')[1]}`, version: require(join(root, 'package.json')).version, main: binary }))
  symlinkSync(join(root, binary), join(platform, binary))
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0' }))
  copyFileSync(join(__dirname, 'fixtures', 'require-from.cts'), join(app, 'program.cts'))
  return app
}

test('a .cts file run with tsx loads the installed package and its binary', (t) => {
  const app = installedCopy(t)
  const tsx = join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs')
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  const r = spawnSync(process.execPath, [tsx, 'program.cts'], { cwd: app, encoding: 'utf8', timeout: 60_000, env })
  t.is(r.status, 0, r.stderr)
  t.is(r.stdout.trim(), 'loaded started')
  t.notRegex(r.stderr, /no native binary/)
})
