import { type ToWorker } from './workers';
/** Runs the worker: `init` is the group's first message (taken by the entry shim). */
export declare function start(init: ToWorker): Promise<void>;
