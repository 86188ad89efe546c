import type { Task } from './timers';
export declare class TaskQueue {
    #private;
    /** Tasks waiting. */
    get size(): number;
    /** Queues `fn` with the async context of this call. */
    push(fn: Task): void;
    /**
     * Runs up to `max` of the tasks queued now, in order, each in its context through `run`.
     * Tasks queued meanwhile wait for the next call.
     */
    run(max: number, run: (fn: Task) => void): void;
    /** Takes every queued task out; returns how many there were. */
    clear(): number;
}
