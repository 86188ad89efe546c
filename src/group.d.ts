import { EventLoop, type EventLoopOptions } from './loop';
/** Most loops in one group (each holds two fds and a libuv handle pair). */
export declare const MAX_GROUP_SIZE = 4096;
/** A fixed set of event loops handed out round robin by `next()`. */
export declare class EventLoopGroup {
    #private;
    /**
     * `nThreads` loops (default 1; 0: the available parallelism; at most 4096, else
     * `ERR_OUT_OF_RANGE`). All loops of a group made here are attached to the calling JS
     * thread; several cores are served by groups on worker threads. If making a loop fails
     * (e.g. out of file descriptors) the loops made so far are released and the error thrown.
     */
    constructor(nThreads?: number, options?: EventLoopOptions);
    get size(): number;
    get loops(): readonly EventLoop[];
    /** The next loop, round robin. */
    next(): EventLoop;
    /** Shuts every loop down (see `EventLoop.shutdownGracefully`; same defaults, 2 s / 15 s). */
    shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number): Promise<void>;
    terminationFuture(): Promise<void>;
    get isTerminated(): boolean;
}
