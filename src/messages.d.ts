/** Options of `channel.messages()`. */
export interface ChannelMessagesOptions {
    /** Messages the consumer may fall behind before the channel stops reading (default 16). */
    highWaterMark?: number;
    /** The handler's name in the pipeline (default: generated, `ChannelMessagesHandler#n`). */
    name?: string;
}
/** The async iterator `channel.messages()` returns. */
export declare class ChannelMessages<T = Buffer> implements AsyncIterableIterator<T> {
    #private;
    /** Messages received and not yet taken. */
    get queued(): number;
    next(): Promise<IteratorResult<T>>;
    /** Stops iterating (a `break` out of `for await`): removes the handler, the channel stays open. */
    return(): Promise<IteratorResult<T>>;
    [Symbol.asyncIterator](): this;
}
