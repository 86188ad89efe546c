declare module './loop' {
    interface EventLoop {
        /** `shutdownGracefully(0, 15000)` (`await using`); resolves once the loop terminated. */
        [Symbol.asyncDispose](): Promise<void>;
    }
}
declare module './group' {
    interface EventLoopGroup {
        /** `shutdownGracefully(0, 15000)` (`await using`); resolves once every loop terminated. */
        [Symbol.asyncDispose](): Promise<void>;
    }
}
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
