// KeyUpdates from an independent TLS 1.3 implementation (tlslite-ng, Python) against a netloop
// TLS echo server, with rustls's record layer (the default) and the experimental own layer:
// 1,000 rounds of KeyUpdate(update_requested) with data in flight both ways, fragmented
// KeyUpdates and records, zero-length records (issue 35's check). .ci/run installs tlslite-ng
// in a venv outside the repository; without it the spec skips, except in CI, where it fails.
import test, { type ExecutionContext } from 'ava'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { echoServer } from './tls-interop-helpers'

const venv = process.env.NETLOOP_TLSLITE_VENV ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'netloop', 'tlslite')
const python = join(venv, 'bin', 'python3')
const script = join(__dirname, 'tlslite', 'keyupdate_peer.py')

function tlsliteInstalled(t: ExecutionContext): boolean {
  if (existsSync(join(venv, '.installed'))) return true
  if (process.env.CI) {
    t.fail(`tlslite-ng is not installed in ${venv}; .ci/run installs it in CI`)
  } else {
    t.log(`skipped: tlslite-ng is not installed (python3 -m venv ${venv} && ${venv}/bin/pip install tlslite-ng==0.8.2 && touch ${venv}/.installed)`)
    t.pass()
  }
  return false
}

function peer(port: number, rounds: number): Promise<{ rounds: number; sent: number; received: number; fragmented: number; empty: number }> {
  return new Promise((resolve, reject) => {
    execFile(python, [script, String(port), String(rounds)], { timeout: 240_000 }, (e, stdout, stderr) => {
      if (e) reject(new Error(`tlslite peer failed: ${e.message}\n${stderr}`))
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!))
    })
  })
}

for (const own of [false, true]) {
  const layer = own ? 'the experimental own record layer' : "rustls's record layer (the default)"
  test(`1,000 KeyUpdate rounds from tlslite-ng with data in flight pass on ${layer}`, async (t) => {
    t.timeout(300_000)
    if (!tlsliteInstalled(t)) return
    const s = await echoServer(t, own ? { experimentalOwnRecords: true } : {})
    const got = await peer(s.port, 1000)
    t.is(got.rounds, 1000)
    t.is(got.received, got.sent)
    t.true(got.fragmented > 100 && got.empty > 100)
    t.is(s.sessions.length, 1)
    t.is(s.sessions[0].protocol, 'TLSv1.3')
  })
}
