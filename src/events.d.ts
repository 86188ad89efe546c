/**
 * The events and operations a pipeline passes along, by the handler method they call. These
 * are the pipeline's own names: the hub (src/hub.ts) translates them to and from the wire
 * kinds of the boundary protocol (src/protocol.ts) where an event crosses into native code.
 * Inbound events come first; `Write` and the rest are outbound.
 */
export {};
