import test from 'ava'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

test('without a loadable native binary, requiring netloop throws one clear error naming the platform and the supported ones', (t) => {
  const r = spawnSync(process.execPath, ['-e', `try { require(${JSON.stringify(join(__dirname, '..', 'index.js'))}) } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`], {
    encoding: 'utf8',
    // The napi-rs loader takes the binary from here instead of its usual places: a missing one.
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: join(__dirname, 'no-such-binary.node') },
  })
  const { code, message } = JSON.parse(r.stdout) as { code: string; message: string }
  t.is(code, 'ERR_NETLOOP_UNSUPPORTED_PLATFORM')
  t.regex(message, new RegExp(`no native binary for ${process.platform}-${process.arch}`))
  t.regex(message, /Prebuilt binaries exist for: linux-x64-gnu/)
  t.notRegex(message, /npm has a bug/)
})

// A machine without a prebuilt, simulated in a child process before netloop loads: Node's
// platform and arch overridden, and for musl the libc report too (no glibc in the report's
// header, `/usr/bin/ldd` saying musl: the two ways the napi-rs loader and netloop tell libcs).
const SIMULATED: Array<[name: string, platform: string, arch: string, musl: boolean]> = [
  ['darwin-arm64', 'darwin', 'arm64', false],
  ['win32-x64', 'win32', 'x64', false],
  ['linux-x64-musl', 'linux', 'x64', true],
]

for (const [name, platform, arch, musl] of SIMULATED) {
  test(`on ${name} (simulated), requiring netloop throws ERR_NETLOOP_UNSUPPORTED_PLATFORM naming ${name} and the supported platforms`, (t) => {
    const program = `
      Object.defineProperty(process, 'platform', { value: ${JSON.stringify(platform)} })
      Object.defineProperty(process, 'arch', { value: ${JSON.stringify(arch)} })
      if (${musl}) {
        const fs = require('node:fs')
        const readFileSync = fs.readFileSync
        fs.readFileSync = (path, ...rest) => (path === '/usr/bin/ldd' ? 'musl libc (x86_64)' : readFileSync(path, ...rest))
        const getReport = process.report.getReport.bind(process.report)
        process.report.getReport = () => { const r = getReport(); delete r.header.glibcVersionRuntime; return r }
      }
      try { require(${JSON.stringify(join(__dirname, '..', 'index.js'))}); console.log('{}') }
      catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    const r = spawnSync(process.execPath, ['-e', program], { encoding: 'utf8', env })
    const { code, message } = JSON.parse(r.stdout) as { code?: string; message?: string }
    t.is(code, 'ERR_NETLOOP_UNSUPPORTED_PLATFORM', r.stderr)
    t.true(message!.includes(`no native binary for ${name} (Node ${process.version})`), message)
    t.true(message!.includes('Prebuilt binaries exist for: linux-x64-gnu, linux-arm64-gnu.'), message)
    t.true(message!.includes(`optional dependency netloop-${name}`), message)
    t.notRegex(message!, /npm has a bug/)
  })
}

test('the supported platforms the error names are the targets package.json builds', async (t) => {
  const { SUPPORTED_PLATFORMS } = await import('../src/binding.js')
  const { parseTriple } = await import('@napi-rs/cli')
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { napi: { targets: string[] }; optionalDependencies: Record<string, string> }
  const targets = pkg.napi.targets.map((triple) => parseTriple(triple).platformArchABI)
  t.deepEqual(SUPPORTED_PLATFORMS, targets)
  t.deepEqual(Object.keys(pkg.optionalDependencies).sort(), targets.map((p) => `netloop-${p}`).sort())
})
