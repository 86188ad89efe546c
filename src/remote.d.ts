/**
 * Writes and flushes `data` to the channel with this `id`, wherever it lives in the process
 * (another worker's loop included): the write becomes a task of the channel's loop, so writes
 * from one thread arrive in order. Only bytes cross threads. Returns false if no open channel
 * has that id.
 */
export declare function writeToChannel(id: number, data: Buffer | Uint8Array | string): boolean;
