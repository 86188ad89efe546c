declare module './channel' {
    interface ServerChannel {
        /** Stops listening (`await using`). */
        [Symbol.asyncDispose](): Promise<void>;
    }
    interface Channel {
        /** Closes the channel (`await using`); resolves once it is closed. */
        [Symbol.asyncDispose](): Promise<void>;
    }
}
export {};
