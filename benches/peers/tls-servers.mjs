// The TLS echo servers that benches/node/tls.mjs puts side by side, the load client and the test
// certificates, each built on demand (only when its sources are newer than what was built).
// Every server binds 127.0.0.1 on a port the kernel picks, prints it, and takes the certificate
// chain and key (PEM) on its command line.
//
//   netloop TS    benches/node/servers/tls-netloop-echo.mjs: SslHandler + JS echo handler
//                 (compiled index.js, the addon given with --addon), one loop on node's thread
//   netloop TS (autoRelease)  the same with `autoRelease: true` on the echo handler
//   node:tls      benches/node/servers/tls-node-echo.mjs: tls.createServer, each 'data' chunk
//                 written back; `(AES-128-GCM first)`: with --aes128, the suite netloop prefers
//                 (node:tls otherwise follows OpenSSL's client, AES-256-GCM first)
//   netloop Rust  crates/tls/examples/tls_echo_server.rs (the Rust core, no JS), one loop
//                 → target/bench-build/release/examples/tls_echo_server
//   tokio-rustls  benches/peers/tokio-rustls-echo (its own workspace), current_thread runtime
//                 → target/peers/release/tokio-rustls-echo
//
// and the HTTPS "Hello, World!" servers (the `https-hello` workload, wrk over TLS):
//   netloop http-hello.ts  examples/http-hello.ts --tls (SslHandler, the native HTTP codec, the
//                 example's JS handler), bundled with esbuild → target/bench-bin/http-hello.cjs
//   node:https    benches/node/servers/node-http.mjs --tls: https.createServer, same response
//
//   tls_load      benches/load/tls_load.c, `cc -O2 -lssl -lcrypto` → target/bench-bin/tls_load
//   certificates  scripts/make-certs.sh → target/bench-certs (server.pem: ECDSA P-256,
//                 server-rsa.pem: RSA-2048, both for localhost and 127.0.0.1, ca.pem)
//
// A server that cannot be built is left out with a `skipped: <reason>` line; the others go on.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { bundleExample } from '../node/bundle.mjs'
import { newer, root } from '../node/harness.mjs'

const out = join(root, 'target', 'peers')
const nodeServers = join(root, 'benches', 'node', 'servers')

function newest(paths) {
  let t = 0
  const walk = (p) => {
    if (!existsSync(p)) return
    const st = statSync(p)
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e))
    else t = Math.max(t, st.mtimeMs)
  }
  paths.forEach(walk)
  return t
}
const stale = (srcs, bin) => !existsSync(bin) || newest(srcs) > statSync(bin).mtimeMs
const have = (cmd, args = ['--version']) => spawnSync(cmd, args, { stdio: 'ignore' }).error === undefined

function run(cmd, args, what) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.error) throw new Error(`${what}: ${r.error.message}`)
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`)
}

/** Builds tls_load; throws a one-line reason (no compiler, no OpenSSL headers) if it cannot. */
export function buildTlsLoad() {
  const dir = join(root, 'target', 'bench-bin')
  mkdirSync(dir, { recursive: true })
  const src = join(root, 'benches', 'load', 'tls_load.c')
  const bin = join(dir, 'tls_load')
  if (!newer(src, bin)) return bin
  if (!have('cc')) throw new Error('no C compiler (cc)')
  const r = spawnSync('cc', ['-O2', '-Wall', '-o', bin, src, '-lssl', '-lcrypto'], { encoding: 'utf8' })
  if (r.status !== 0) {
    const err = `${r.stderr}`
    if (/openssl\/\w+\.h/.test(err) && /No such file|not found/.test(err)) throw new Error('OpenSSL 3 headers missing (install libssl-dev or openssl-devel)')
    if (/cannot find -lssl|cannot find -lcrypto/.test(err)) throw new Error('libssl/libcrypto missing (install libssl-dev or openssl-devel)')
    throw new Error(`cc tls_load.c failed: ${err.trim().split('\n').slice(-3).join(' | ')}`)
  }
  return bin
}

/** The test PKI in target/bench-certs (made by scripts/make-certs.sh if missing). */
export function benchCerts() {
  const dir = join(root, 'target', 'bench-certs')
  const files = ['ca.pem', 'server.pem', 'server.key', 'server-rsa.pem', 'server-rsa.key']
  if (!files.every((f) => existsSync(join(dir, f)))) {
    if (!have('openssl', ['version'])) throw new Error('the openssl command is missing (scripts/make-certs.sh needs it)')
    run('bash', [join(root, 'scripts', 'make-certs.sh'), dir], 'scripts/make-certs.sh')
  }
  return {
    ca: join(dir, 'ca.pem'),
    ecdsa: { name: 'ECDSA P-256', cert: join(dir, 'server.pem'), key: join(dir, 'server.key') },
    rsa: { name: 'RSA-2048', cert: join(dir, 'server-rsa.pem'), key: join(dir, 'server-rsa.key') },
  }
}

/** Builders: each returns its server (args: a function of the certificate), or throws why not. */
const BUILDERS = {
  'netloop TS'() {
    if (!existsSync(join(root, 'index.js'))) throw new Error('index.js not compiled (the netloop TS server loads it)')
    return { cmd: process.execPath, args: (c) => [join(nodeServers, 'tls-netloop-echo.mjs'), c.cert, c.key], portRe: /^(\d+)\s*$/m, node: true }
  },
  'netloop TS (autoRelease)'() {
    const ts = BUILDERS['netloop TS']()
    return { ...ts, args: (c) => [...ts.args(c), '--auto-release'] }
  },
  'node:tls'() {
    return { cmd: process.execPath, args: (c) => [join(nodeServers, 'tls-node-echo.mjs'), c.cert, c.key], portRe: /^(\d+)\s*$/m, node: true }
  },
  'node:tls (AES-128-GCM first)'() {
    return { cmd: process.execPath, args: (c) => [join(nodeServers, 'tls-node-echo.mjs'), c.cert, c.key, '--aes128'], portRe: /^(\d+)\s*$/m, node: true }
  },
  'netloop Rust'() {
    const bin = join(root, 'target', 'bench-build', 'release', 'examples', 'tls_echo_server')
    const srcs = ['crates/eventloop', 'crates/transport/src', 'crates/tls/src', 'crates/tls/examples/tls_echo_server.rs', 'Cargo.lock', 'Cargo.toml'].map((p) => join(root, p))
    if (stale(srcs, bin)) {
      if (!have('cargo')) throw new Error('cargo not found')
      run('cargo', ['build', '--release', '-q', '-p', 'netloop-tls', '--example', 'tls_echo_server', '--target-dir', join(root, 'target', 'bench-build')], 'cargo build tls_echo_server')
    }
    return { cmd: bin, args: (c) => [c.cert, c.key], portRe: /listening on [^\s]*:(\d+)\b/ }
  },
  'netloop http-hello.ts'() {
    if (!existsSync(join(root, 'index.js'))) throw new Error('index.js not compiled (the example loads it)')
    const bin = join(root, 'target', 'bench-bin', 'http-hello.cjs')
    bundleExample(root, join(root, 'examples', 'http-hello.ts'), bin)
    return { cmd: process.execPath, args: (c) => [bin, '--port', '0', '--tls', '--cert', c.cert, '--key', c.key], portRe: /listening on [^\s]*:(\d+)\b/, node: true }
  },
  'node:https'() {
    return { cmd: process.execPath, args: (c) => [join(nodeServers, 'node-http.mjs'), '--tls', c.cert, c.key], portRe: /^(\d+)\s*$/m, node: true }
  },
  'tokio-rustls'() {
    const dir = join(root, 'benches', 'peers', 'tokio-rustls-echo')
    const bin = join(out, 'release', 'tokio-rustls-echo')
    if (stale([join(dir, 'src'), join(dir, 'Cargo.toml'), join(dir, 'Cargo.lock')], bin)) {
      if (!have('cargo')) throw new Error('cargo not found')
      run('cargo', ['build', '--release', '-q', '--manifest-path', join(dir, 'Cargo.toml'), '--target-dir', out], 'cargo build tokio-rustls-echo')
    }
    return { cmd: bin, args: (c) => [c.cert, c.key], portRe: /^listening (\d+)\s*$/m }
  },
}

/** The TLS servers of `wanted` that could be built, and the ones skipped with their reasons. */
export function buildTlsServers(wanted = Object.keys(BUILDERS), log = (s) => process.stderr.write(`${s}\n`)) {
  const targets = {}
  const skipped = []
  for (const name of wanted) {
    const t0 = Date.now()
    try {
      targets[name] = BUILDERS[name]()
      const ms = Date.now() - t0
      if (ms > 1000) log(`  built ${name} (${(ms / 1000).toFixed(1)} s)`)
    } catch (e) {
      skipped.push({ name, reason: e.message })
      log(`skipped: ${name}: ${e.message}`)
    }
  }
  return { targets, skipped }
}

/** A server of buildTlsServers as startServer (servers.mjs) takes it, for certificate `cert`. */
export const withCert = (t, cert, extraNodeArgs = []) => ({ ...t, args: t.node ? [...extraNodeArgs, ...t.args(cert)] : t.args(cert) })
