import { EventLoop, type EventLoopOptions } from './loop';
/** A fixed set of event loops handed out round robin by `next()`. */
export declare class EventLoopGroup {
    #private;
    /**
     * `nThreads` loops (default 1). All loops of a group made here are attached to the calling
     * JS thread; several cores are served by groups on worker threads.
     */
    constructor(nThreads?: number, options?: EventLoopOptions);
    get size(): number;
    get loops(): readonly EventLoop[];
    /** The next loop, round robin. */
    next(): EventLoop;
    shutdownGracefully(quietPeriodMs?: number, timeoutMs?: number): Promise<void>;
    terminationFuture(): Promise<void>;
    get isTerminated(): boolean;
}
