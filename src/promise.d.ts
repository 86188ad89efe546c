export declare class ChannelPromise implements PromiseLike<void> {
    #private;
    /** True for a void promise (the silent one of promise-less writes, or `voidPromise()`). */
    get isVoid(): boolean;
    /**
     * A promise that can be listened to in place of this one (Netty's `unvoid()`): this one if
     * it is not void; for a void one a new promise, whose failure still goes to
     * `exceptionCaught` when this one's would have.
     */
    unvoid(): ChannelPromise;
    get isDone(): boolean;
    get isSuccess(): boolean;
    /** The failure, once failed. */
    get cause(): Error | undefined;
    /** A `Promise` of the outcome (created on first use). */
    get promise(): Promise<void>;
    then<A = void, B = never>(onfulfilled?: ((value: void) => A | PromiseLike<A>) | null, onrejected?: ((reason: any) => B | PromiseLike<B>) | null): Promise<A | B>;
    /** Runs `fn` once with the outcome (null on success), synchronously when it completes. */
    addListener(fn: (error: Error | null) => void): this;
    /** Marks the operation done; false if it already was. */
    trySuccess(): boolean;
    /** Marks the operation failed; false if it already was done. */
    tryFailure(error: Error): boolean;
}
