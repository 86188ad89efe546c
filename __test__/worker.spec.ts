import test from 'ava'

import './helpers'
import { once } from 'node:events'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'

const fixture = join(__dirname, 'fixtures', 'loop-worker.cjs')

test('terminating a worker with busy loops does not crash the process', async (t) => {
  for (let i = 0; i < 3; i++) {
    const worker = new Worker(fixture)
    const [msg] = await once(worker, 'message')
    t.is(msg, 'running')
    const code = await worker.terminate()
    t.is(code, 1, 'terminate() reports the forced exit')
  }
  t.pass('the test process is still alive')
})

test('a worker whose loops shut down exits on its own', async (t) => {
  const worker = new Worker(fixture, { workerData: { finish: true } })
  const messages: string[] = []
  worker.on('message', (m) => messages.push(m))
  const [code] = await once(worker, 'exit')
  t.is(code, 0)
  t.deepEqual(messages, ['running', 'terminated'])
})
