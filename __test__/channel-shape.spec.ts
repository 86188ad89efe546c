// `Channel` declares its members itself: whichever module a program imports first, the
// prototype has the feature members (tls, haproxy, toDuplex, messages, asyncDispose), and no
// feature module adds to it.
import test from 'ava'
import { spawn } from 'node:child_process'
import { join } from 'node:path'

const root = join(__dirname, '..')

/** What `Channel.prototype` holds, seen by a fresh process that first imports `entry`. */
function shapeAfter(entry: string): Promise<string> {
  const program = `
    require(${JSON.stringify(`./src/${entry}`)})
    const { Channel } = require('./src/channel')
    const p = Channel.prototype
    const kind = (k) => {
      const d = Object.getOwnPropertyDescriptor(p, k)
      if (!d) return 'missing'
      return (d.get ? 'getter' : typeof d.value) + (d.enumerable ? '+enumerable' : '') + (d.configurable ? '' : '-configurable')
    }
    console.log(JSON.stringify({ tls: kind('tls'), haproxy: kind('haproxy'), toDuplex: kind('toDuplex'), messages: kind('messages'), asyncDispose: kind(Symbol.asyncDispose) }))
  `
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', program], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d: Buffer) => (out += d))
    child.stderr.on('data', (d: Buffer) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`importing ${entry} first failed (${code}): ${err}`))))
  })
}

const expected = JSON.stringify({ tls: 'getter', haproxy: 'getter', toDuplex: 'function', messages: 'function', asyncDispose: 'function' })

// The feature modules, the modules they import, and the front door: each loaded first.
for (const entry of ['channel', 'tls', 'tls-info', 'haproxy', 'duplex', 'messages', 'codecs', 'hub', 'bootstrap', '../index']) {
  test(`Channel has its feature members when ${entry} is imported first`, async (t) => {
    t.is(await shapeAfter(entry), expected)
  })
}

test('the feature members delegate to their modules: a channel made by no pipeline reads as no TLS and no PROXY header', async (t) => {
  const { Channel } = await import('../src/channel')
  // A channel the native side no longer knows (closed and forgotten) answers from its fields.
  const ch = Object.create(Channel.prototype) as InstanceType<typeof Channel>
  Object.assign(ch, { _known: false, _tlsInfo: undefined, _haproxy: undefined })
  t.is(ch.tls, undefined)
  t.is(ch.haproxy, undefined)
})
