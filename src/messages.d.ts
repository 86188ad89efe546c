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
declare module './channel' {
    interface Channel {
        /**
         * The channel's inbound messages as an async iterator (`for await (const m of ch.messages())`),
         * with backpressure: the channel stops reading while the consumer is `highWaterMark`
         * messages behind. Ends when the channel closes; an error in the pipeline rejects it. Make
         * it before data can arrive (in the initializer, or with `autoRead: false`): messages that
         * reached the end of the pipeline before it existed are gone.
         */
        messages<T = Buffer>(options?: ChannelMessagesOptions): ChannelMessages<T>;
    }
}
