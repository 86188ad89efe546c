/**
 * Loops on worker threads: each worker of a worker group runs one attached loop and imports
 * the user's module, whose `childHandler(ch)` (or default export) sets up every channel that
 * lands on that loop. Connections reach the workers either from an accepting loop on this
 * thread (Netty's boss hand-off: the accepted socket travels in a task of the worker's loop)
 * or from the workers' own `SO_REUSEPORT` listeners (the kernel spreads connections).
 *
 * Ground rules: the group lives on the thread that made it; workers talk to it by messages
 * only. A worker that fails to load, throws, exits or is terminated never takes the process
 * down: its loop is reported terminated (`loopTerminated`) and new connections go to the rest.
 */
import { EventEmitter } from 'node:events'
import { existsSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { NetloopError } from './errors'
import type { ChannelMetrics } from './hub'
import type { EventLoopOptions } from './loop'
import type { ChannelOptions } from './options'

/** What a worker tells the group. */
export type FromWorker =
  | { t: 'ready'; loopId: number }
  | { t: 'initError'; error: SerializedError }
  | { t: 'reply'; id: number; value?: unknown; error?: SerializedError }
  | { t: 'taskError'; error: SerializedError }

/** What the group asks a worker. */
export type ToWorker =
  | { t: 'init'; module: string; loop: EventLoopOptions; sources?: boolean }
  | { t: 'bind'; id: number; port: number; host: string; options: ChannelOptions; childOptions: ChannelOptions }
  | { t: 'metrics'; id: number }
  | { t: 'closeServers'; id: number }
  | { t: 'shutdown'; id: number; quiet: number; timeout: number }
  | { t: 'expedite'; id: number }

export interface SerializedError {
  name: string
  message: string
  code?: string
  stack?: string
}

export function serializeError(e: unknown): SerializedError {
  const err = e as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown } | null
  return {
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : String(e),
    code: typeof err?.code === 'string' ? err.code : undefined,
    stack: typeof err?.stack === 'string' ? err.stack : undefined,
  }
}

export function deserializeError(s: SerializedError): NetloopError {
  const e = new NetloopError(s.code ?? 'ERR_WORKER', s.message)
  if (s.stack) e.stack = s.stack
  return e
}

/** A file URL for the user's module (a path is taken relative to the working directory). */
export function moduleUrl(module: unknown): string {
  if (module instanceof URL) return module.href
  if (typeof module !== 'string' || module.length === 0) {
    throw new NetloopError('ERR_INVALID_ARG_TYPE', 'The "module" option must be a string path or a URL')
  }
  if (/^[a-z]+:/.test(module)) return module
  return pathToFileURL(isAbsolute(module) ? module : resolve(module)).href
}

/**
 * The worker entry: always the compiled `.js` (`npm run build:ts` makes it), because Node 20
 * does not carry a TypeScript loader into workers.
 */
function entryFile(): string {
  const compiled = join(__dirname, 'worker-entry.js')
  if (!existsSync(compiled)) {
    throw new NetloopError('ERR_INVALID_STATE', `netloop's worker entry ${compiled} is missing: run \`npm run build:ts\``)
  }
  return compiled
}

/** Describes the end of a worker's loop: its thread and why it ended. */
export interface LoopTermination {
  /** Index of the worker in its group. */
  index: number
  threadId: number
  /** The error that ended it (a load failure, an uncaught exception, a non-zero exit). */
  cause?: Error
}

/** One worker thread and its loop. */
export class WorkerLoop extends EventEmitter {
  readonly worker: Worker
  /** The worker's thread id (kept: `worker.threadId` turns -1 once it exits). */
  readonly threadId: number
  #loopId: number | undefined
  #alive = true
  #nextRequest = 1
  readonly #pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
  readonly ready: Promise<number>
  readonly exited: Promise<void>

  constructor(
    readonly index: number,
    module: string,
    loopOptions: EventLoopOptions,
    workerData: unknown,
    onTaskError: (e: Error) => void,
  ) {
    super()
    // execArgv is inherited (Node leaves out process-wide flags); a TypeScript loader is
    // registered by the worker itself when needed (worker-entry.ts).
    this.worker = new Worker(entryFile(), { workerData, stdout: false, stderr: false })
    this.threadId = this.worker.threadId
    let ready!: (id: number) => void
    let failed!: (e: Error) => void
    this.ready = new Promise<number>((res, rej) => {
      ready = res
      failed = rej
    })
    // A load failure is reported by the group; never an unhandled rejection here.
    this.ready.catch(() => undefined)
    this.worker.on('message', (m: FromWorker) => {
      switch (m.t) {
        case 'ready':
          this.#loopId = m.loopId
          ready(m.loopId)
          return
        case 'initError':
          failed(deserializeError(m.error))
          return
        case 'taskError':
          onTaskError(deserializeError(m.error))
          return
        case 'reply': {
          const p = this.#pending.get(m.id)
          this.#pending.delete(m.id)
          if (m.error) p?.reject(deserializeError(m.error))
          else p?.resolve(m.value)
        }
      }
    })
    let cause: Error | undefined
    this.worker.on('error', (e) => {
      cause = e instanceof Error ? e : new Error(String(e))
      failed(cause)
    })
    this.exited = new Promise((res) =>
      this.worker.once('exit', (code) => {
        this.#alive = false
        if (!cause && code !== 0) cause = new NetloopError('ERR_WORKER_EXITED', `worker ${index} exited with code ${code}`)
        failed(cause ?? new NetloopError('ERR_WORKER_EXITED', `worker ${index} exited before its loop was ready`))
        for (const p of this.#pending.values()) p.reject(new NetloopError('ERR_WORKER_EXITED', `worker ${index} exited`))
        this.#pending.clear()
        this.emit('terminated', { index, threadId: this.threadId, cause } satisfies LoopTermination)
        res()
      }),
    )
    // The worker runs netloop from the same kind of files as this thread (see worker-entry.ts).
    this.worker.postMessage({ t: 'init', module, loop: loopOptions, sources: __filename.endsWith('.ts') } satisfies ToWorker)
  }

  get loopId(): number | undefined {
    return this.#loopId
  }

  get alive(): boolean {
    return this.#alive
  }

  /** Sends a request and resolves with the worker's reply. */
  request<T>(msg: { t: 'bind' | 'metrics' | 'shutdown' | 'closeServers' | 'expedite' } & Record<string, unknown>): Promise<T> {
    if (!this.#alive) return Promise.reject(new NetloopError('ERR_WORKER_EXITED', `worker ${this.index} has exited`))
    const id = this.#nextRequest++
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      this.worker.postMessage({ ...msg, id })
    })
  }

  metrics(): Promise<ChannelMetrics> {
    return this.request<ChannelMetrics>({ t: 'metrics' })
  }
}
