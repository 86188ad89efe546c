/**
 * The body of a netloop worker thread: one attached loop, the user's module, and the replies
 * to the group's requests (see workers.ts). The worker stays alive while its port is open and
 * exits once its loop has shut down.
 * @internal
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parentPort, threadId } from 'node:worker_threads'
import { ServerBootstrap } from './bootstrap'
import type { Channel } from './channel'
import { NetloopError } from './errors'
import { hubOf } from './hub'
import { EventLoop } from './loop'
import { type FromWorker, type ToWorker, serializeError } from './workers'

// TypeScript would turn `import()` into `require()` in CommonJS output; ESM modules need the
// real dynamic import.
const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<Record<string, unknown>>

/**
 * Node 20 does not carry a TypeScript loader given with `--import` into workers: for a `.ts`
 * module, register tsx's hooks here (resolved from the module's own location).
 */
async function loadModule(url: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?tsx?$/.test(new URL(url).pathname)) {
    const req = createRequire(url)
    let pkgFile: string
    try {
      pkgFile = req.resolve('tsx/package.json')
    } catch {
      throw new NetloopError('ERR_UNKNOWN_FILE_EXTENSION', `the worker module ${url} is TypeScript: install tsx beside it (npm i -D tsx) or give a compiled .js module`)
    }
    // The ESM entry of `tsx/esm/api` (require.resolve would give its CommonJS variant).
    const exports = (JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> }).exports
    const esmApi = join(dirname(pkgFile), exports['./esm/api'].import.default)
    ;((await importModule(pathToFileURL(esmApi).href)) as { register(): void }).register()
    ;(req('tsx/cjs/api') as { register(): void }).register()
  }
  return importModule(url)
}

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

port.once('message', async (init: ToWorker) => {
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
})
