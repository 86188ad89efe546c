declare module './channel' {
    interface Channel {
        /** Closes the channel (`await using`); resolves once it is closed. */
        [Symbol.asyncDispose](): Promise<void>;
    }
}
export {};
