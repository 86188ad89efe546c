/**
 * `EventLoopGroup`: a fixed set of loops. Either all on the calling thread (handed out round
 * robin by `next()`), or each on its own worker thread (`{ threads, module }`): then the group
 * serves connections on several cores, see `ServerBootstrap.group(boss, workers)`.
 */
import { EventEmitter } from 'node:events';
import { EventLoop, type EventLoopOptions, type LoopMetrics } from './loop';
import { type LoopUtilization } from './utilization';
import { type AbortOptions } from './abort';
import { type LoopTermination } from './workers';
/** A group whose loops live on worker threads. */
export interface WorkerGroupOptions extends EventLoopOptions {
    /** Worker threads, one loop each (0: the available parallelism). */
    threads: number;
    /**
     * The module each worker imports (a path or a URL; ESM, CommonJS, or TypeScript under the
     * loader the main thread uses). It exports `childHandler(ch)` (or a default function): the
     * initializer of every channel that lands on that worker's loop.
     */
    module: string | URL;
    /** Given to each worker as `require('node:worker_threads').workerData`. */
    workerData?: unknown;
}
export interface EventLoopGroup {
    /** A worker's loop ended (load failure, uncaught exception, exit, termination). */
    on(event: 'loopTerminated', listener: (info: LoopTermination) => void): this;
    /** An error thrown by a task or timer on a worker's loop (when no `onTaskError` is given). */
    on(event: 'taskError', listener: (error: Error) => void): this;
}
/** Most loops in one group (each holds two fds and a libuv handle pair). */
export declare const MAX_GROUP_SIZE = 4096;
/** A fixed set of event loops: on this thread, or one per worker thread. */
export declare class EventLoopGroup extends EventEmitter {
    #private;
    /**
     * `nThreads` loops (default 1; 0: the available parallelism; at most 4096, else
     * `ERR_OUT_OF_RANGE`). All loops of a group made here are attached to the calling JS
     * thread; several cores are served by groups on worker threads. If making a loop fails
     * (e.g. out of file descriptors) the loops made so far are released and the error thrown.
     */
    constructor(nThreads?: number, options?: EventLoopOptions);
    constructor(options: WorkerGroupOptions);
    /** True for a group whose loops live on worker threads. */
    get isWorkerGroup(): boolean;
    /**
     * Resolves once every worker loaded its module and started its loop; rejects with
     * `ERR_WORKER_INIT_FAILED` (the cause attached) if one could not. Immediate for a group on
     * this thread.
     */
    ready(): Promise<void>;
    /** Per-loop counters (see `EventLoop.metrics()`), one entry per loop or live worker. */
    metrics(): Promise<LoopMetrics[]>;
    /**
     * How busy each loop is (see `EventLoop.utilization()`), one entry per loop, in the order of
     * `loops`; given an earlier reading, the difference since it, loop by loop; given two, the
     * difference between them (`group.utilization(later, earlier)`). A worker group reports each
     * worker thread's `performance.eventLoopUtilization()` (the thread runs only its loop), one
     * entry per worker, live or not.
     */
    utilization(prev?: readonly LoopUtilization[], prev2?: readonly LoopUtilization[]): LoopUtilization[];
    get size(): number;
    get loops(): readonly EventLoop[];
    /** The next loop, round robin (groups on this thread only). */
    next(): EventLoop;
    /**
     * Shuts every loop down (see `EventLoop.shutdownGracefully`; same defaults, 2 s / 15 s):
     * their channels close first (pending writes flushed or failed), then the loops terminate;
     * worker threads exit. Returns `terminationFuture()`: the same promise on every call
     * (Netty); a later call changes nothing.
     *
     * `{ signal }` as for `EventLoop.shutdownGracefully`: already aborted, it rejects at once
     * and starts nothing; aborted later, every loop of this thread skips the rest of its quiet
     * period and timeout, and the promise rejects with an `AbortError` at once; worker loops are
     * asked to do the same (they terminate soon after, on their own threads).
     */
    shutdownGracefully(options?: AbortOptions): Promise<void>;
    shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number, options?: AbortOptions): Promise<void>;
    /** `shutdownGracefully(0, 15000)` (`await using`); resolves once every loop terminated. */
    [Symbol.asyncDispose](): Promise<void>;
    /** Resolves once every loop has terminated (every worker exited); the same promise on every call. */
    terminationFuture(): Promise<void>;
    get isTerminated(): boolean;
}
