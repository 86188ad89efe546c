/** @internal */
export type Settle = {
    ok: true;
} | {
    ok: false;
    error: Error;
};
/** Completes a promise lent by the native pipeline (a native handler's write). @internal */
export type NativeCompleter = (id: number, error: Error | null) => void;
export declare class ChannelPromise implements PromiseLike<void> {
    #private;
    /** @internal 0: void; > 0: registered with a hub; < 0: lent by native code; NaN: not yet. */
    _id: number;
    /** @internal */
    constructor(id: number, onVoidFailure?: (e: Error) => void, native?: NativeCompleter);
    /** True for a void promise: nobody awaits it; a failure goes to `exceptionCaught`. */
    get isVoid(): boolean;
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
    /** @internal Completes this side only (the native side already knows). */
    _complete(r: Settle): boolean;
}
