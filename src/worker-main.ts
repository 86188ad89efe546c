/**
 * The body of a netloop worker thread (started by worker-entry.ts): one attached loop, the user's module, and the replies
 * to the group's requests (see workers.ts). The worker stays alive while its port is open and
 * exits once its loop has shut down.
 */
import { parentPort, threadId } from 'node:worker_threads'
import { ServerBootstrap } from './bootstrap'
import type { Channel } from './channel'
import { NetloopError } from './errors'
import { hubOf } from './hub'
import { EventLoop } from './loop'
import { loadModule } from './tsx'
import { type FromWorker, type ToWorker, serializeError } from './workers'

const port = parentPort!
const send = (m: FromWorker) => port.postMessage(m)

function initializerOf(mod: Record<string, unknown>, url: string): (ch: Channel) => void {
  const def = mod.default as Record<string, unknown> | ((ch: Channel) => void) | undefined
  const fn = mod.childHandler ?? (typeof def === 'function' ? def : def?.childHandler)
  if (typeof fn !== 'function') {
    throw new NetloopError('ERR_INVALID_ARG_VALUE', `the module ${url} exports no child initializer: export function childHandler(ch) { ... } (or a default function)`)
  }
  return fn as (ch: Channel) => void
}

/** Runs the worker: `init` is the group's first message (taken by the entry shim). */
export async function start(init: ToWorker): Promise<void> {
  if (init.t !== 'init') return
  let loop: EventLoop
  let childInit: (ch: Channel) => void
  try {
    loop = new EventLoop({
      ...init.loop,
      name: `${init.loop.name ?? 'netloop-worker'}-${threadId}`,
      onTaskError: (e) => send({ t: 'taskError', error: serializeError(e) }),
    })
    childInit = initializerOf(await loadModule(init.module), init.module)
    const hub = hubOf(loop)
    hub.remoteInit = childInit
    send({ t: 'ready', loopId: hub.native.loopId })
  } catch (e) {
    send({ t: 'initError', error: serializeError(e) })
    port.close()
    return
  }
  const servers: Array<{ close(): Promise<void> }> = []
  port.on('message', async (m: ToWorker) => {
    const reply = (value?: unknown, error?: unknown) =>
      send({ t: 'reply', id: (m as { id: number }).id, value, error: error === undefined ? undefined : serializeError(error) })
    try {
      switch (m.t) {
        case 'bind': {
          const b = new ServerBootstrap().group(loop).childHandler(childInit)
          for (const [k, v] of Object.entries(m.options)) b.option(k as never, v as never)
          for (const [k, v] of Object.entries(m.childOptions)) b.childOption(k as never, v as never)
          const server = await b.bind(m.port, m.host)
          servers.push(server)
          reply(server.localAddress!.port)
          return
        }
        case 'closeServers':
          await Promise.all(servers.splice(0).map((srv) => srv.close()))
          reply(true)
          return
        case 'metrics':
          reply(loop.metrics())
          return
        case 'expedite':
          // The group's shutdown was aborted: skip the rest of the quiet period and timeout.
          loop._expediteShutdown()
          reply(true)
          return
        case 'shutdown':
          await loop.shutdownGracefully(m.quiet, m.timeout)
          reply(true)
          port.close()
          return
      }
    } catch (e) {
      reply(undefined, e)
    }
  })
}
