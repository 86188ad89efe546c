import test from 'ava'

import './helpers'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

const index = join(__dirname, '..', 'index.js')

/** Runs a script in a fresh Node process and returns what it printed. */
function run(script: string): string {
  return execFileSync(process.execPath, ['-e', `const { EventLoop } = require(${JSON.stringify(index)});\n${script}`], {
    encoding: 'utf8',
    timeout: 20_000,
  })
}

const waitForRemote = (ref: boolean) => `
  const loop = new EventLoop()
  ${ref ? 'loop.ref()' : ''}
  loop._onRemoteTask = () => { console.log('remote task ran'); loop.shutdownGracefully(0, 100).then(() => console.log('terminated')) }
  loop._postFromOtherThread(1, 100)
`

test('a ref()ed loop keeps the process alive until it terminates', (t) => {
  t.is(run(waitForRemote(true)), 'remote task ran\nterminated\n')
})

test('an idle loop does not keep the process alive', (t) => {
  t.is(run(waitForRemote(false)), '')
})

test('queued tasks and pending timers keep the process alive', (t) => {
  const out = run(`
    const loop = new EventLoop()
    loop.execute(() => console.log('task'))
    loop.schedule(() => { console.log('timer'); loop.shutdownGracefully(0, 100) }, 50)
  `)
  t.is(out, 'task\ntimer\n')
})
