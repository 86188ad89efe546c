import test from 'ava'
import { spawnSync } from 'node:child_process'
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
