/**
 * The entry of a netloop worker thread (always this compiled file: Node 20 does not carry a
 * TypeScript loader into workers). It takes the group's first message and runs the worker
 * from the same kind of files as the thread that made the group: the compiled `.js`, or,
 * when that thread ran netloop from its TypeScript sources, the `.ts` sources through tsx.
 * So the user's module and this worker share one copy of netloop.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parentPort } from 'node:worker_threads'
import { registerTypeScript } from './tsx'
import type { ToWorker } from './workers'

parentPort!.once('message', async (init: ToWorker & { sources?: boolean }) => {
  try {
    if (init.sources) await registerTypeScript(pathToFileURL(__filename).href)
    const main = require(join(__dirname, init.sources ? 'worker-main.ts' : 'worker-main.js')) as { start(init: ToWorker): Promise<void> }
    await main.start(init)
  } catch (e) {
    const err = e as { name?: string; message?: string; stack?: string; code?: string }
    parentPort!.postMessage({ t: 'initError', error: { name: err?.name ?? 'Error', message: err?.message ?? String(e), stack: err?.stack, code: err?.code } })
    parentPort!.close()
  }
})
