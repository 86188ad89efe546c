import test from 'ava'
import { once } from 'node:events'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'

import './helpers'

const fixture = join(__dirname, 'fixtures', 'loop-worker.cjs')

test('terminating a worker with busy loops does not crash the process', async (t) => {
  for (let i = 0; i < 3; i++) {
    const worker = new Worker(fixture)
    const [msg] = await once(worker, 'message')
    t.is(msg, 'running')
    const code = await worker.terminate()
    t.is(code, 1, 'terminate() reports the forced exit')
  }
})

test('terminating a worker in the middle of a loop iteration does not crash the process', async (t) => {
  for (let i = 0; i < 3; i++) {
    const worker = new Worker(fixture, { workerData: { mode: 'spin' } })
    const messages: string[] = []
    worker.on('message', (m) => messages.push(m))
    await once(worker, 'message')
    // The worker is inside a task, inside an iteration, inside the bridge's scopes.
    t.deepEqual(messages, ['spinning'])
    const code = await worker.terminate()
    t.is(code, 1)
    t.deepEqual(messages, ['spinning'], 'the task was interrupted, nothing ran after it')
  }
  // The parent's own loops still work after the workers went away mid-iteration.
  const { EventLoop } = await import('../index')
  const loop = new EventLoop()
  let ran = false
  loop.execute(() => (ran = true))
  await loop.shutdownGracefully(0, 100)
  t.true(ran)
})

test('a worker whose loops shut down exits on its own', async (t) => {
  const worker = new Worker(fixture, { workerData: { mode: 'finish' } })
  const messages: string[] = []
  worker.on('message', (m) => messages.push(m))
  const [code] = await once(worker, 'exit')
  t.is(code, 0)
  t.deepEqual(messages, ['running', 'terminated'])
})
