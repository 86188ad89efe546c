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
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { NetloopError } from './errors';
import type { ChannelMetrics } from './hub';
import type { EventLoopOptions } from './loop';
import type { ChannelOptions } from './options';
/** What a worker tells the group. */
export type FromWorker = {
    t: 'ready';
    loopId: number;
} | {
    t: 'initError';
    error: SerializedError;
} | {
    t: 'reply';
    id: number;
    value?: unknown;
    error?: SerializedError;
} | {
    t: 'taskError';
    error: SerializedError;
};
/** What the group asks a worker. */
export type ToWorker = {
    t: 'init';
    module: string;
    loop: EventLoopOptions;
    sources?: boolean;
} | {
    t: 'bind';
    id: number;
    port: number;
    host: string;
    options: ChannelOptions;
    childOptions: ChannelOptions;
} | {
    t: 'metrics';
    id: number;
} | {
    t: 'closeServers';
    id: number;
} | {
    t: 'shutdown';
    id: number;
    quiet: number;
    timeout: number;
} | {
    t: 'expedite';
    id: number;
};
export interface SerializedError {
    name: string;
    message: string;
    code?: string;
    stack?: string;
}
export declare function serializeError(e: unknown): SerializedError;
export declare function deserializeError(s: SerializedError): NetloopError;
/** A file URL for the user's module (a path is taken relative to the working directory). */
export declare function moduleUrl(module: unknown): string;
/** Describes the end of a worker's loop: its thread and why it ended. */
export interface LoopTermination {
    /** Index of the worker in its group. */
    index: number;
    threadId: number;
    /** The error that ended it (a load failure, an uncaught exception, a non-zero exit). */
    cause?: Error;
}
/** One worker thread and its loop. */
export declare class WorkerLoop extends EventEmitter {
    #private;
    readonly index: number;
    readonly worker: Worker;
    /** The worker's thread id (kept: `worker.threadId` turns -1 once it exits). */
    readonly threadId: number;
    readonly ready: Promise<number>;
    readonly exited: Promise<void>;
    constructor(index: number, module: string, loopOptions: EventLoopOptions, workerData: unknown, onTaskError: (e: Error) => void);
    get loopId(): number | undefined;
    get alive(): boolean;
    /** Sends a request and resolves with the worker's reply. */
    request<T>(msg: {
        t: 'bind' | 'metrics' | 'shutdown' | 'closeServers' | 'expedite';
    } & Record<string, unknown>): Promise<T>;
    metrics(): Promise<ChannelMetrics>;
}
