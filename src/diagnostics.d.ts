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
import dc from 'node:diagnostics_channel';
import type { Channel, ServerChannel } from './channel';
import type { EventLoop } from './loop';
/** What `netloop:server.socket` and `netloop:client.socket` publish. */
export interface SocketMessage {
    channel: Channel;
}
/** What `netloop:server.listen` publishes. */
export interface ListenMessage {
    server: ServerChannel;
    /** The port asked for (0: see `server.localAddress`). */
    port: number;
    host: string;
}
/** What `netloop:channel.close` publishes. */
export interface CloseMessage {
    channel: Channel;
    /** The error that closed the channel (a reset, a failed write), undefined for a plain close. */
    cause: unknown;
}
/** The context object of the `netloop:connect` TracingChannel. */
export interface ConnectContext {
    port: number;
    host: string;
    /** The connected channel (asyncStart/asyncEnd of a connect that succeeded). */
    result?: Channel;
    /** The failure (error, asyncStart/asyncEnd of a connect that failed). */
    error?: unknown;
}
/** What `netloop:loop.shutdown` publishes. */
export interface LoopShutdownMessage {
    loop: EventLoop;
    /** `'start'`: `shutdownGracefully` was called; `'end'`: the loop terminated. */
    phase: 'start' | 'end';
    /** The quiet period and timeout of the shutdown (0 at `'end'`). */
    quietPeriodMs: number;
    timeoutMs: number;
}
/** The context object of the `netloop:handler` TracingChannel. */
export interface HandlerTraceContext {
    channel: Channel;
    /** The handler's name in the pipeline. */
    handler: string;
    /** The method called: `channelRead`, `channelActive`, `write`, `close`, ... */
    method: string;
    /** The message (`channelRead`, `write`), event (`userEventTriggered`) or error (`exceptionCaught`), else undefined. */
    message: unknown;
    /** What the method threw (`error`). */
    error?: unknown;
    /** What the method returned (`end`). */
    result?: unknown;
}
/** The diagnostics channels, by name; `diagnostics_channel.channel(name)` gives the same objects. */
export declare const diagnostics: {
    readonly serverListen: dc.Channel<unknown, unknown>;
    readonly serverSocket: dc.Channel<unknown, unknown>;
    readonly clientSocket: dc.Channel<unknown, unknown>;
    readonly channelClose: dc.Channel<unknown, unknown>;
    readonly connect: dc.TracingChannel<unknown, ConnectContext>;
    readonly loopShutdown: dc.Channel<unknown, unknown>;
    readonly handler: dc.TracingChannel<unknown, HandlerTraceContext>;
};
