/**
 * The events and operations a pipeline passes along, by the handler method they call. These
 * are the pipeline's own names: the hub (src/hub.ts) translates them to and from the wire
 * kinds of the boundary protocol (src/protocol.ts) where an event crosses into native code.
 * Inbound events come first; `Write` and the rest are outbound.
 */
/** Internal (not exported by the package's index): named in the hub's signatures. */
export declare const enum PipelineEvent {
    ChannelRegistered = 0,
    ChannelUnregistered = 1,
    ChannelActive = 2,
    ChannelInactive = 3,
    ChannelRead = 4,
    ChannelReadComplete = 5,
    UserEventTriggered = 6,
    ExceptionCaught = 7,
    ChannelWritabilityChanged = 8,
    Write = 9,
    Flush = 10,
    Read = 11,
    Close = 12
}
