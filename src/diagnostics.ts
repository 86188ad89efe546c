/**
 * `diagnostics_channel` tracing, as node:net and undici publish it, for tracers and APM agents:
 *
 * | name                     | when                                          | payload                 |
 * | ------------------------ | --------------------------------------------- | ----------------------- |
 * | `netloop:server.listen`  | a server channel is bound and listening       | `{ server, port, host }`|
 * | `netloop:server.socket`  | a connection is accepted (before the child    | `{ channel }`           |
 * |                          | initializer runs)                             |                         |
 * | `netloop:client.socket`  | a client channel is made (before its          | `{ channel }`           |
 * |                          | initializer runs and it connects)             |                         |
 * | `netloop:channel.close`  | a channel (client, accepted or server) closed | `{ channel, cause }`    |
 * | `netloop:connect`        | `TracingChannel` around `Bootstrap.connect()`:| `{ port, host }`, then  |
 * |                          | start, end, asyncStart, asyncEnd, error       | `result` (the channel)  |
 * |                          |                                               | or `error`              |
 * | `netloop:loop.shutdown`  | a loop starts shutting down (`phase: 'start'`,| `{ loop, phase,         |
 * |                          | its channels not closed yet) and terminated   | quietPeriodMs,          |
 * |                          | (`phase: 'end'`)                              | timeoutMs }`            |
 * | `netloop:handler`        | `TracingChannel` around each call of a JS     | `{ channel, handler,    |
 * |                          | handler's method: start, end, error           | method, message }`      |
 *
 * Ground rules: publishing runs on the thread of the channel's loop, synchronously, where the
 * event happens; a subscriber that throws is reported by node:diagnostics_channel (on
 * `process.nextTick`) and never reaches netloop. Nothing is allocated or published while a
 * channel has no subscriber (each function checks `hasSubscribers` first). `server.socket` and
 * `client.socket` come before the channel's initializer (as node:net publishes
 * `net.server.socket` before the 'connection' listeners run), so a subscriber may add handlers
 * that see `channelRegistered` and `channelActive`. `netloop:connect`'s start runs its bound
 * stores (`start.bindStore(als, ...)`) around the whole connect, and the channel it makes keeps
 * that async context for its events (an APM's span reaches the channel's handlers).
 * `netloop:handler` is traced synchronously (`traceSync`): stores bound to its start are the
 * context of the handler's method; an `async` method's end comes when it returns its promise.
 */
import dc from 'node:diagnostics_channel'
import type { Channel, ServerChannel } from './channel'
import type { EventLoop } from './loop'
import { type ChannelHandlerContext, type HandlerMethod, METHOD_NAMES } from './context'

/** What `netloop:server.socket` and `netloop:client.socket` publish. */
export interface SocketMessage {
  channel: Channel
}

/** What `netloop:server.listen` publishes. */
export interface ListenMessage {
  server: ServerChannel
  /** The port asked for (0: see `server.localAddress`). */
  port: number
  host: string
}

/** What `netloop:channel.close` publishes. */
export interface CloseMessage {
  channel: Channel
  /** The error that closed the channel (a reset, a failed write), undefined for a plain close. */
  cause: unknown
}

/** The context object of the `netloop:connect` TracingChannel. */
export interface ConnectContext {
  port: number
  host: string
  /** The connected channel (asyncStart/asyncEnd of a connect that succeeded). */
  result?: Channel
  /** The failure (error, asyncStart/asyncEnd of a connect that failed). */
  error?: unknown
}

/** What `netloop:loop.shutdown` publishes. */
export interface LoopShutdownMessage {
  loop: EventLoop
  /** `'start'`: `shutdownGracefully` was called; `'end'`: the loop terminated. */
  phase: 'start' | 'end'
  /** The quiet period and timeout of the shutdown (0 at `'end'`). */
  quietPeriodMs: number
  timeoutMs: number
}

/** The context object of the `netloop:handler` TracingChannel. */
export interface HandlerTraceContext {
  channel: Channel
  /** The handler's name in the pipeline. */
  handler: string
  /** The method called: `channelRead`, `channelActive`, `write`, `close`, ... */
  method: string
  /** The message (`channelRead`, `write`), event (`userEventTriggered`) or error (`exceptionCaught`), else undefined. */
  message: unknown
  /** What the method threw (`error`). */
  error?: unknown
  /** What the method returned (`end`). */
  result?: unknown
}

/** The diagnostics channels, by name; `diagnostics_channel.channel(name)` gives the same objects. */
export const diagnostics = {
  serverListen: dc.channel('netloop:server.listen'),
  serverSocket: dc.channel('netloop:server.socket'),
  clientSocket: dc.channel('netloop:client.socket'),
  channelClose: dc.channel('netloop:channel.close'),
  connect: dc.tracingChannel<unknown, ConnectContext>('netloop:connect'),
  loopShutdown: dc.channel('netloop:loop.shutdown'),
  handler: dc.tracingChannel<unknown, HandlerTraceContext>('netloop:handler'),
} as const

const connect = diagnostics.connect
const handler = diagnostics.handler
const { start: hStart, end: hEnd, error: hError } = handler

/** True if any of the TracingChannel's channels has a subscriber (Node < 20.13 lacks `hasSubscribers`). */
function tracing(tc: dc.TracingChannel<unknown, object>): boolean {
  const has = (tc as { hasSubscribers?: boolean }).hasSubscribers
  if (has !== undefined) return has
  return tc.start.hasSubscribers || tc.end.hasSubscribers || tc.asyncStart.hasSubscribers || tc.asyncEnd.hasSubscribers || tc.error.hasSubscribers
}

/**
 * @internal True while `netloop:handler` has a subscriber (start, end or error: a handler call
 * is synchronous, asyncStart/asyncEnd never fire). Three property reads, no call or
 * allocation: the pipeline checks it before every handler call.
 */
export function tracingHandlers(): boolean {
  return hStart.hasSubscribers || hEnd.hasSubscribers || hError.hasSubscribers
}

/** Handler method names by wire kind (made on first use: context.ts may still be loading when this module is). */
let methodNames: string[] | undefined

function methodName(kind: number): string {
  if (methodNames === undefined) {
    methodNames = []
    for (const [k, name] of METHOD_NAMES) methodNames[k] = name
  }
  return methodNames[kind]
}

/**
 * @internal Calls handler method `fn` of `ctx` with `args` inside the `netloop:handler`
 * TracingChannel (the caller checked `tracingHandlers()`); what it throws is published on
 * `error` and rethrown.
 */
export function traceHandler(ctx: ChannelHandlerContext, fn: HandlerMethod, kind: number, message: unknown, ...args: unknown[]): unknown {
  const context: HandlerTraceContext = { channel: ctx.channel, handler: ctx.name, method: methodName(kind), message }
  return handler.traceSync(fn, context, ctx.handler, ...args)
}

/** @internal A loop starts shutting down, or terminated. */
export function publishLoopShutdown(loop: EventLoop, phase: 'start' | 'end', quietPeriodMs: number, timeoutMs: number): void {
  if (diagnostics.loopShutdown.hasSubscribers) diagnostics.loopShutdown.publish({ loop, phase, quietPeriodMs, timeoutMs } satisfies LoopShutdownMessage)
}

/** @internal A server channel listens. */
export function publishListen(server: ServerChannel, port: number, host: string): void {
  if (diagnostics.serverListen.hasSubscribers) diagnostics.serverListen.publish({ server, port, host } satisfies ListenMessage)
}

/** @internal A connection was accepted and set up. */
export function publishServerSocket(channel: Channel): void {
  if (diagnostics.serverSocket.hasSubscribers) diagnostics.serverSocket.publish({ channel } satisfies SocketMessage)
}

/** @internal A client channel was made and set up. */
export function publishClientSocket(channel: Channel): void {
  if (diagnostics.clientSocket.hasSubscribers) diagnostics.clientSocket.publish({ channel } satisfies SocketMessage)
}

/** @internal A channel closed. */
export function publishClose(channel: Channel, cause: unknown): void {
  if (diagnostics.channelClose.hasSubscribers) diagnostics.channelClose.publish({ channel, cause } satisfies CloseMessage)
}

/** @internal Runs `fn` (a connect) inside the `netloop:connect` TracingChannel when someone listens. */
export function traceConnect(fn: () => Promise<Channel>, port: number, host: string): Promise<Channel> {
  if (!tracing(connect)) return fn()
  return connect.tracePromise(fn, { port, host } satisfies ConnectContext)
}
